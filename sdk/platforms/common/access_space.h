// AccessSpace: how software reaches an uncore register, for every
// platform's register model: a model-specific register on a CPU of the
// socket, or a dword of a PCI function's configuration space.
//
//   if (box.space == AccessSpace::kPci) { /* 32-bit halves */ }
//
// Guarantees: a plain enum, no allocation.
#ifndef UNCORE_SDK_PLATFORMS_COMMON_ACCESS_SPACE_H_
#define UNCORE_SDK_PLATFORMS_COMMON_ACCESS_SPACE_H_

#include <cstdint>

namespace uncore::platforms {

enum class AccessSpace : uint8_t { kMsr, kPci };

}  // namespace uncore::platforms

#endif  // UNCORE_SDK_PLATFORMS_COMMON_ACCESS_SPACE_H_
