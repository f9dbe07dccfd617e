// Small readers for /proc and /sys files: the whole of a file, numbers as
// the kernel prints them, and CPU lists ("0-3,8").
//
//   std::optional<std::string> text = ReadSmallFile("/sys/.../type");
//   std::optional<uint64_t> type = ParseUnsigned(*text);        // "9\n" -> 9
//   std::optional<std::set<int>> cpus = ParseCpuList("0-3,8");  // 0,1,2,3,8
//
// Guarantees: never throw; whitespace around values is ignored.
#ifndef UNCORE_SDK_COMMON_SYSFS_H_
#define UNCORE_SDK_COMMON_SYSFS_H_

#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace uncore::common {

// The whole of a file, or nullopt (with errno in *error) when it cannot be
// read.  /proc and /sys files report size 0, so this reads until EOF.
std::optional<std::string> ReadSmallFile(const std::filesystem::path& path,
                                         int* error = nullptr);

// `text` as an unsigned number in `base` (16 accepts a 0x prefix; 0 means
// hexadecimal with a 0x prefix, decimal without).
std::optional<uint64_t> ParseUnsigned(std::string_view text, int base = 0);

// "0-3,8,10-11" -> {0,1,2,3,8,10,11}; nullopt when malformed.  The rules
// are ParseIdList's (sdk/common/id_list.h), which also says why.
std::optional<std::set<int>> ParseCpuList(std::string_view text);

}  // namespace uncore::common

#endif  // UNCORE_SDK_COMMON_SYSFS_H_
