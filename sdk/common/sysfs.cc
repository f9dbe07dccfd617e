#include "sdk/common/sysfs.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "absl/status/statusor.h"
#include "sdk/common/fd.h"
#include "sdk/common/id_list.h"
#include "sdk/common/text.h"

namespace uncore::common {

std::optional<std::string> ReadSmallFile(const std::filesystem::path& path,
                                         int* error) {
  const int fd = KeepAboveStdio(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd < 0) {
    if (error != nullptr) *error = errno;
    return std::nullopt;
  }
  std::string text;
  char buffer[4096];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      if (error != nullptr) *error = errno;
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    text.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return text;
}

std::optional<uint64_t> ParseUnsigned(std::string_view text, int base) {
  text = StripWhitespace(text);
  const bool prefixed =
      text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  if (base == 0) base = prefixed ? 16 : 10;
  if (base == 16 && prefixed) text.remove_prefix(2);
  if (text.empty()) return std::nullopt;
  uint64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value, base);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

std::optional<std::set<int>> ParseCpuList(std::string_view text) {
  absl::StatusOr<std::vector<int>> ids = ParseIdList(text, -1, "cpulist");
  if (!ids.ok()) return std::nullopt;
  return std::set<int>(ids->begin(), ids->end());
}

}  // namespace uncore::common
