// Lists of small non-negative ids (CPUs, sockets) in the kernel's cpulist
// syntax, parsed by one set of rules everywhere: sysfs files
// (/sys/devices/system/cpu/online, a PMU's cpumask), UNCORE_SOCKETS and
// `uncore stat --sockets`.
//
//   absl::StatusOr<std::vector<int>> ids = ParseIdList("0-3,8\n", 16, "CPU");
//   // ids == {0, 1, 2, 3, 8}
//
// The rules: pieces separated by ',' are a number ("8") or an inclusive
// range ("0-3"); whitespace around the whole text and around each number is
// ignored; an empty (or all-blank) text is an empty list; an empty piece
// ("0,,1", "0,"), a negative number, a reversed range ("3-1"), anything but
// decimal digits, and an id at or above the bound are errors.  The result is
// sorted and free of duplicates.
//
// Guarantees: never throws; error messages name `what`, the text, the piece
// at fault and its position, and say what to write instead.
#ifndef UNCORE_SDK_COMMON_ID_LIST_H_
#define UNCORE_SDK_COMMON_ID_LIST_H_

#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace uncore::common {

// The bound used when a caller gives none (max_id_exclusive < 0): enough for
// any CPU number Linux supports, small enough that "0-999999999" is refused
// rather than allocated.
inline constexpr int kIdListDefaultLimit = 1 << 20;

// The bound on socket ids, shared by UNCORE_SOCKETS and `uncore stat
// --sockets` so that both accept the same lists.
inline constexpr int kSocketIdLimit = 1024;

// Parses `text` by the rules above.  Every id must be below
// `max_id_exclusive` (kIdListDefaultLimit when negative).  `what` names the
// source in messages ("UNCORE_SOCKETS", "--sockets", "cpulist").
absl::StatusOr<std::vector<int>> ParseIdList(std::string_view text,
                                             int max_id_exclusive,
                                             std::string_view what);

}  // namespace uncore::common

#endif  // UNCORE_SDK_COMMON_ID_LIST_H_
