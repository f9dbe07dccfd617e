// A region's path: the names of the regions that enclose it, outermost
// first, and its own, joined by '/'.  A name's own '/' and '\' are escaped
// ("\/" and "\\"), so that a path identifies its region: the region named
// "a/b" has the path "a\/b", the region "b" inside "a" has the path "a/b".
// A region's `name` stays as the program gave it.
//
//   std::string top = TopRegionPath("io/read");          // io\/read
//   std::string path = JoinRegionPath(top, "step");       // io\/read/step
//   std::optional<std::string_view> up = ParentRegionPath(path, "step");
//
// Guarantees: pure; two different sequences of names never give one path.
#ifndef UNCORE_SDK_COMMON_REGION_PATH_H_
#define UNCORE_SDK_COMMON_REGION_PATH_H_

#include <optional>
#include <string>
#include <string_view>

namespace uncore::common {

// `name` as it stands in a path: '\' as "\\", '/' as "\/".
inline std::string EscapeRegionName(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (const char c : name) {
    if (c == '/' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

// The path of the region `name` at the top (no enclosing region).
inline std::string TopRegionPath(std::string_view name) {
  return EscapeRegionName(name);
}

// The path of the region `name` inside the region whose path is
// `parent_path` (which may be "": a region named "" at the top).
inline std::string JoinRegionPath(std::string_view parent_path,
                                  std::string_view name) {
  std::string path(parent_path);
  path.push_back('/');
  path += EscapeRegionName(name);
  return path;
}

// The path of the enclosing region of the region `name` whose path is
// `path`, when `path` is the escaped `name` after a '/'; nullopt otherwise
// (a region at the top, or a path that does not end with its name).
inline std::optional<std::string_view> ParentRegionPath(std::string_view path,
                                                        std::string_view name) {
  const std::string escaped = EscapeRegionName(name);
  if (path.size() <= escaped.size() || !path.ends_with(escaped)) {
    return std::nullopt;
  }
  const size_t slash = path.size() - escaped.size() - 1;
  if (path[slash] != '/') return std::nullopt;
  return path.substr(0, slash);
}

}  // namespace uncore::common

#endif  // UNCORE_SDK_COMMON_REGION_PATH_H_
