// libFuzzer target for id lists in the kernel's cpulist syntax
// (sdk/common/id_list.h): ParseIdList, as UNCORE_SOCKETS, `--sockets` and
// sysfs cpulists use it, and ParseCpuList (sysfs.h).
//
// The first byte picks the bound (the default for sysfs, the socket
// limit, or a small one); the rest is the list ("0-3,8,10-11").
//
// Properties: an accepted list is sorted, free of duplicates and below
// the bound; written back as ranges it parses to the same ids;
// ParseCpuList accepts exactly what ParseIdList accepts under the default
// bound, with the same ids; ids are never more than the bound (a list of
// many wide ranges must not make a vector of their total length).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "sdk/common/id_list.h"
#include "sdk/common/sysfs.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

// {0, 1, 2, 3, 8} -> "0-3,8".
std::string AsRanges(const std::vector<int>& ids) {
  std::string out;
  for (size_t i = 0; i < ids.size();) {
    size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(ids[i]);
    if (j > i) out += "-" + std::to_string(ids[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static constexpr int kBounds[] = {-1, uncore::common::kSocketIdLimit, 16, 1,
                                    0};
  const int bound = kBounds[data[0] % (sizeof(kBounds) / sizeof(kBounds[0]))];
  const int limit = bound < 0 ? uncore::common::kIdListDefaultLimit : bound;
  const std::string_view text(reinterpret_cast<const char*>(data + 1),
                              size - 1);

  absl::StatusOr<std::vector<int>> ids =
      uncore::common::ParseIdList(text, bound, "fuzz");
  if (ids.ok()) {
    FUZZ_CHECK(ids->size() <= static_cast<size_t>(limit));
    for (size_t i = 0; i < ids->size(); ++i) {
      FUZZ_CHECK((*ids)[i] >= 0 && (*ids)[i] < limit);
      if (i > 0) FUZZ_CHECK((*ids)[i - 1] < (*ids)[i]);
    }
    absl::StatusOr<std::vector<int>> again =
        uncore::common::ParseIdList(AsRanges(*ids), bound, "fuzz");
    FUZZ_CHECK(again.ok() && *again == *ids);
  } else {
    FUZZ_CHECK(!ids.status().message().empty());
  }

  // (A set of a million ids takes a while: small lists are enough here.)
  if (bound < 0 && (!ids.ok() || ids->size() <= 4096)) {
    const std::optional<std::set<int>> cpus =
        uncore::common::ParseCpuList(text);
    FUZZ_CHECK(cpus.has_value() == ids.ok());
    if (cpus.has_value()) {
      FUZZ_CHECK(std::vector<int>(cpus->begin(), cpus->end()) == *ids);
    }
  }
  return 0;
}
