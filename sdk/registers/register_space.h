// RegisterSpace: read and write uncore PMON registers, MSR (per CPU) and
// PCI-config (32-bit, per bus:device.function).  Knows nothing of boxes or
// events.
//
//   std::unique_ptr<RegisterSpace> space = ...;   // Linux, simulator, guard
//   uint64_t v = 0;
//   UNCORE_RETURN_IF_ERROR(space->ReadMsr(/*cpu=*/0, 0x0C00, &v));
//   UNCORE_RETURN_IF_ERROR(
//       space->WritePci({0, 0x7f, 16, 4}, 0xD8, 0x00400304));
//
// Implementations: LinuxRegisterSpace (/dev/cpu/N/msr and PCI config files)
// and RecordingRegisterSpace (tests) here; above this layer, IvyTownUncore
// (sdk/sim) and AllowListGuard (sdk/machine: refuses registers the box
// descriptors do not name).
//
// Guarantees: every call returns a Status; an implementation never prints,
// exits or throws.  Thread-safety is per implementation (see each).
#ifndef UNCORE_SDK_REGISTERS_REGISTER_SPACE_H_
#define UNCORE_SDK_REGISTERS_REGISTER_SPACE_H_

#include <compare>
#include <cstdint>
#include <span>
#include <string>
#include <utility>

#include "absl/status/status.h"

namespace uncore::registers {

// A PCI function: segment (domain), bus, device, function.
struct PciAddress {
  uint16_t segment = 0;
  uint8_t bus = 0;
  uint8_t device = 0;
  uint8_t function = 0;

  auto operator<=>(const PciAddress&) const = default;
  // "0000:7f:10.4" (the sysfs spelling).
  std::string ToString() const;

  // Lets PciAddress key absl hash containers.
  template <typename H>
  friend H AbslHashValue(H h, const PciAddress& a) {
    return H::combine(std::move(h), a.segment, a.bus, a.device, a.function);
  }
};

// One MSR read of a batch.
struct MsrRead {
  int cpu = 0;
  uint32_t msr = 0;
  uint64_t value = 0;   // out
  absl::Status status;  // out
};

class RegisterSpace {
 public:
  virtual ~RegisterSpace() = default;

  virtual absl::Status ReadMsr(int cpu, uint32_t msr, uint64_t* value) = 0;
  virtual absl::Status WriteMsr(int cpu, uint32_t msr, uint64_t value) = 0;
  virtual absl::Status ReadPci(const PciAddress& fn, uint32_t offset,
                               uint32_t* value) = 0;
  virtual absl::Status WritePci(const PciAddress& fn, uint32_t offset,
                                uint32_t value) = 0;

  // Reads several MSRs; where the platform allows (msr-safe's
  // /dev/cpu/msr_batch) this is one system call.  The default reads one by
  // one.  Returns the first error; each read's own status is in `reads`.
  virtual absl::Status ReadMsrBatch(std::span<MsrRead> reads);
};

}  // namespace uncore::registers

#endif  // UNCORE_SDK_REGISTERS_REGISTER_SPACE_H_
