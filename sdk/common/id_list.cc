#include "sdk/common/id_list.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "sdk/common/text.h"

namespace uncore::common {
namespace {

constexpr std::string_view kExample = "write e.g. 0, 0,2 or 0-3,8";

// A decimal number of at most 9 digits (no sign), or nullopt.
std::optional<int> ParseId(std::string_view text) {
  text = StripWhitespace(text);
  if (text.empty() || text.size() > 9) return std::nullopt;
  int value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

}  // namespace

absl::StatusOr<std::vector<int>> ParseIdList(std::string_view text,
                                             int max_id_exclusive,
                                             std::string_view what) {
  const int limit =
      max_id_exclusive < 0 ? kIdListDefaultLimit : max_id_exclusive;
  const std::string_view list = StripWhitespace(text);
  std::vector<int> ids;
  if (list.empty()) return ids;
  const std::vector<std::string_view> pieces = Split(list, ',');
  std::vector<std::pair<int, int>> ranges;  // each piece, first to last
  // `fix`: what to write instead (an example list when empty).
  auto error = [&](size_t index, std::string_view problem,
                   std::string_view fix = kExample) {
    const std::string where =
        pieces.size() == 1
            ? std::string("it")
            : fmt::format("piece {} of {}", index + 1, pieces.size());
    return absl::InvalidArgumentError(fmt::format("{}: '{}': {} {}; {}", what,
                                                  QuoteForMessage(list), where,
                                                  problem, fix));
  };
  for (size_t i = 0; i < pieces.size(); ++i) {
    const std::string_view piece = StripWhitespace(pieces[i]);
    if (piece.empty()) {
      return error(i, "is empty (two commas in a row, or one at an end)");
    }
    if (piece.front() == '-') {
      return error(i,
                   fmt::format("('{}') is negative", QuoteForMessage(piece)));
    }
    const size_t dash = piece.find('-');
    const std::optional<int> lo =
        ParseId(dash == std::string_view::npos ? piece : piece.substr(0, dash));
    const std::optional<int> hi =
        dash == std::string_view::npos ? lo : ParseId(piece.substr(dash + 1));
    if (!lo || !hi) {
      return error(i,
                   fmt::format("('{}') is not a number or a range FIRST-LAST",
                               QuoteForMessage(piece)));
    }
    if (*hi < *lo) {
      return error(
          i, fmt::format("('{}') is a reversed range", QuoteForMessage(piece)),
          fmt::format("write {}-{}", *hi, *lo));
    }
    if (*hi >= limit) {
      return error(i, fmt::format("('{}') goes past the largest id, {}",
                                  QuoteForMessage(piece), limit - 1));
    }
    ranges.emplace_back(*lo, *hi);
  }
  // In order, each id once: pieces that repeat or overlap ("0-999999"
  // three hundred times) make no more ids than the bound allows.
  std::sort(ranges.begin(), ranges.end());
  for (const auto& [lo, hi] : ranges) {
    const int first = ids.empty() ? lo : std::max(lo, ids.back() + 1);
    for (int id = first; id <= hi; ++id) ids.push_back(id);
  }
  return ids;
}

}  // namespace uncore::common
