// libFuzzer target for /proc/cpuinfo: ParseCpuIdentity (what
// ReadCpuIdentity makes of the file) and the platform lookups that take its
// identity (PlatformForCpu, PlatformsForModel).
//
// Properties: any text gives an identity; the vendor is never empty;
// family, model and stepping stay within the bounds the parser clamps to;
// strings hold no line break and no surrounding blanks; only the first
// CPU's block counts (a second block appended after a blank line changes
// nothing); a platform found for the identity matches its vendor and
// family.
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sdk/machine/topology.h"
#include "sdk/platforms/ivytown/model/identity.h"
#include "sdk/platforms/perfmon/perfmon_tables.h"
#include "sdk/spec/platform_catalog.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using uncore::machine::CpuIdentity;

bool Trimmed(std::string_view s) {
  if (s.find('\n') != std::string_view::npos) return false;
  if (s.empty()) return true;
  auto blank = [](char c) {
    return std::isspace(static_cast<unsigned char>(c)) != 0;
  };
  return !blank(s.front()) && !blank(s.back());
}

bool Same(const CpuIdentity& a, const CpuIdentity& b) {
  return a.vendor == b.vendor && a.family == b.family && a.model == b.model &&
         a.stepping == b.stepping && a.model_name == b.model_name &&
         a.hypervisor == b.hypervisor;
}

// Whether one of `p`'s CPU ranges holds `id`.
bool Matches(const uncore::perfmon::Platform& p, const CpuIdentity& id,
             bool stepping) {
  for (const uncore::perfmon::CpuMatch& m : p.cpus) {
    if (m.vendor == id.vendor && m.family == id.family &&
        id.model >= m.model_lo && id.model <= m.model_hi &&
        (!stepping ||
         (id.stepping >= m.stepping_lo && id.stepping <= m.stepping_hi))) {
      return true;
    }
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const CpuIdentity id = uncore::machine::ParseCpuIdentity(text);
  constexpr int kMax = 1 << 20;
  FUZZ_CHECK(!id.vendor.empty());
  FUZZ_CHECK(Trimmed(id.vendor));
  FUZZ_CHECK(Trimmed(id.model_name));
  FUZZ_CHECK(id.family >= 0 && id.family <= kMax);
  FUZZ_CHECK(id.model >= 0 && id.model <= kMax);
  FUZZ_CHECK(id.stepping >= -1 && id.stepping <= kMax);
  FUZZ_CHECK(
      id.IsOf(uncore::ivytown::Identity()) ==
      (id.vendor == "GenuineIntel" && id.family == 6 && id.model == 0x3e));
  (void)id.ToString();

  // Only the first CPU's block is read: it ends at the first blank line
  // after a "key: value" line, so a block appended after a blank line
  // changes nothing (when the text has such a line at all; before one,
  // blank lines are skipped).
  if (text.find(':') != std::string::npos) {
    const CpuIdentity two = uncore::machine::ParseCpuIdentity(
        text +
        "\n\nprocessor\t: 1\nvendor_id\t: AuthenticAMD\ncpu family\t: "
        "25\nmodel\t\t: 17\nstepping\t: 1\nmodel name\t: other\n");
    FUZZ_CHECK(Same(id, two));
  }

  if (const uncore::perfmon::Platform* p = uncore::spec::PlatformForCpu(
          id.vendor, id.family, id.model, id.stepping)) {
    FUZZ_CHECK(Matches(*p, id, /*stepping=*/true));
  }
  for (const uncore::perfmon::Platform* p :
       uncore::spec::PlatformsForModel(id.vendor, id.family, id.model)) {
    FUZZ_CHECK(p != nullptr && Matches(*p, id, /*stepping=*/false));
  }
  return 0;
}
