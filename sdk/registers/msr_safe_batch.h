// MsrSafeBatch: msr-safe's batch device (<dev_cpu_root>/msr_batch), which
// reads up to kCapacity MSRs, on any CPUs, with one ioctl.
//
//   std::unique_ptr<MsrSafeBatch> batch = MsrSafeBatch::Open("/dev/cpu");
//   if (batch != nullptr && batch->ReadChunk(reads, &space)) { ... }
//
// The ABI (msr_safe.h of github.com/LLNL/msr-safe):
//   struct msr_batch_op { __u16 cpu; __u16 isrdmsr; __s32 err; __u32 msr;
//                         __u64 msrdata; __u64 wmask; };
//   struct msr_batch_array { __u32 numops; __u32 version; msr_batch_op* ops; };
//   #define X86_IOC_MSR_BATCH _IOWR('c', 0xA2, struct msr_batch_array)
// `version` sits where releases before 2.0 had padding: those ignore it,
// 2.0 and later refuse a batch whose version differs from the loaded
// module's (read from <dev_cpu_root>/msr_safe_version, "2.0.0").  `err` is a
// negative errno per operation: -ENXIO (no such CPU), -EACCES (MSR not in
// the allowlist), -EIO (the rdmsr faulted).
//
// Guarantees: allocates only in Open; not thread-safe (LinuxRegisterSpace
// serializes batches on a mutex); never prints.
#ifndef UNCORE_SDK_REGISTERS_MSR_SAFE_BATCH_H_
#define UNCORE_SDK_REGISTERS_MSR_SAFE_BATCH_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "sdk/registers/register_space.h"

namespace uncore::registers {

// One msr_batch_op.
struct MsrBatchOp {
  uint16_t cpu;
  uint16_t isrdmsr;
  int32_t err;
  uint32_t msr;
  uint64_t msrdata;
  uint64_t wmask;
};

// msr_batch_array.
struct MsrBatchArray {
  uint32_t numops;
  uint32_t version;
  MsrBatchOp* ops;
};

// X86_IOC_MSR_BATCH, _IOWR('c', 0xA2, struct msr_batch_array).
inline constexpr uint64_t kMsrBatchIoctl = 0xC01063A2;

// msr-safe's loaded version as (major << 16 | minor << 8 | patch), from a
// msr_safe_version file ("1.7.0"); nullopt when unreadable.
std::optional<uint32_t> ReadMsrSafeVersion(const std::string& path);

class MsrSafeBatch {
 public:
  // Operations per ioctl; larger batches take several.
  static constexpr size_t kCapacity = 256;

  // Opens <dev_cpu_root>/msr_batch; nullptr when it is absent or unusable,
  // or when msr_safe_version names a major release newer than the layout
  // above.
  static std::unique_ptr<MsrSafeBatch> Open(const std::string& dev_cpu_root);
  ~MsrSafeBatch();
  MsrSafeBatch(const MsrSafeBatch&) = delete;
  MsrSafeBatch& operator=(const MsrSafeBatch&) = delete;

  // Reads `reads` (at most kCapacity) with one ioctl and sets each read's
  // value and status; reads msr-safe cannot address or did not run go to
  // `fallback`->ReadMsr.  False, leaving `reads` untouched, when the ioctl
  // was refused as a whole.
  bool ReadChunk(std::span<MsrRead> reads, RegisterSpace* fallback);

  // Closes the device: later ReadChunk calls are refused.
  void Close();

 private:
  MsrSafeBatch() = default;

  int fd_ = -1;
  uint32_t version_ = 0;
  std::array<MsrBatchOp, kCapacity> ops_{};
  std::array<uint32_t, kCapacity> read_index_{};
};

}  // namespace uncore::registers

#endif  // UNCORE_SDK_REGISTERS_MSR_SAFE_BATCH_H_
