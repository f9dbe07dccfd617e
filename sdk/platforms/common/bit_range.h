// BitRange: a contiguous bit field of a 64-bit register value, as every
// platform's register model (sdk/platforms/ivytown, sdk/platforms/nehalemex)
// describes its control, filter and global registers.
//
//   constexpr BitRange umask{8, 8};              // bits 15:8
//   uint64_t ctl = umask.Insert(0, 0x03);       // 0x300
//   uint64_t back = umask.Extract(ctl);         // 0x03
//
// Guarantees: constexpr, no allocation; a value wider than the range is
// cut to it by Insert (callers check max_value() first when that matters).
#ifndef UNCORE_SDK_PLATFORMS_COMMON_BIT_RANGE_H_
#define UNCORE_SDK_PLATFORMS_COMMON_BIT_RANGE_H_

#include <cstdint>

namespace uncore::platforms {

struct BitRange {
  uint8_t lo = 0;
  uint8_t width = 0;

  constexpr bool empty() const { return width == 0; }
  constexpr uint8_t hi() const { return lo + width - 1; }
  constexpr uint64_t mask() const {
    return width == 0    ? 0
           : width >= 64 ? ~uint64_t{0}
                         : ((uint64_t{1} << width) - 1) << lo;
  }
  constexpr uint64_t max_value() const {
    return width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
  }
  constexpr uint64_t Insert(uint64_t reg, uint64_t value) const {
    return (reg & ~mask()) | ((value << lo) & mask());
  }
  constexpr uint64_t Extract(uint64_t reg) const {
    return (reg & mask()) >> lo;
  }
};

}  // namespace uncore::platforms

#endif  // UNCORE_SDK_PLATFORMS_COMMON_BIT_RANGE_H_
