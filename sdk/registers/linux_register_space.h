// LinuxRegisterSpace: MSRs through the msr driver (/dev/cpu/N/msr, pread and
// pwrite of 8 bytes at offset = MSR number) and PCI config registers through
// sysfs (/sys/bus/pci/devices/SSSS:BB:DD.F/config, 4 bytes at the offset).
//
//   LinuxRegisterSpace space;    // or ("/tmp/fake/dev/cpu", "/tmp/fake/pci")
//   uint64_t ctl = 0;
//   UNCORE_RETURN_IF_ERROR(space.ReadMsr(/*cpu=*/0, 0x0C00, &ctl));
//
// The pieces: fd_table.h (the lock-free table of open files),
// msr_safe_batch.h (msr-safe's batch ioctl), access_errors.h (what each
// errno means and what to do about it).
//
// Files are opened on first use (read-write, or read-only when only that is
// permitted) and kept open until destruction.  Where /dev/cpu/N/msr cannot be
// opened but msr-safe's /dev/cpu/N/msr_safe can, that is used instead.  When
// <dev_cpu_root>/msr_batch exists (msr-safe), ReadMsrBatch reads the batch
// with one ioctl per 256 reads; otherwise, or when the ioctl is refused as a
// whole, it reads one by one.
//
// Errors say what is wrong and what to do: the msr driver not loaded
// (FailedPrecondition, "modprobe msr"), no such CPU or PCI function
// (NotFound), no privilege (PermissionDenied, root or CAP_SYS_RAWIO), an MSR
// the CPU does not have (FailedPrecondition), a short read or write
// (DataLoss).
//
// Guarantees: thread-safe; after a file's first use, accesses take no lock
// and allocate nothing (pread/pwrite are positional; beyond 3072 CPUs or 384
// PCI functions, lookups take a lock).  ReadMsrBatch through msr-safe
// serializes batches on one mutex and allocates only on its first call.
// Never prints.
#ifndef UNCORE_SDK_REGISTERS_LINUX_REGISTER_SPACE_H_
#define UNCORE_SDK_REGISTERS_LINUX_REGISTER_SPACE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sdk/registers/register_space.h"

namespace uncore::registers {

class FdTable;       // fd_table.h
class MsrSafeBatch;  // msr_safe_batch.h

class LinuxRegisterSpace : public RegisterSpace {
 public:
  explicit LinuxRegisterSpace(std::string dev_cpu_root = "/dev/cpu",
                              std::string pci_root = "/sys/bus/pci/devices");
  ~LinuxRegisterSpace() override;
  LinuxRegisterSpace(const LinuxRegisterSpace&) = delete;
  LinuxRegisterSpace& operator=(const LinuxRegisterSpace&) = delete;

  absl::Status ReadMsr(int cpu, uint32_t msr, uint64_t* value) override;
  absl::Status WriteMsr(int cpu, uint32_t msr, uint64_t value) override;
  absl::Status ReadPci(const PciAddress& fn, uint32_t offset,
                       uint32_t* value) override;
  absl::Status WritePci(const PciAddress& fn, uint32_t offset,
                        uint32_t value) override;
  absl::Status ReadMsrBatch(std::span<MsrRead> reads) override;

  // Whether ReadMsrBatch uses msr-safe's batch ioctl (decided on its first
  // call; false before).
  bool uses_msr_batch() const;

  const std::string& dev_cpu_root() const { return dev_cpu_root_; }
  const std::string& pci_root() const { return pci_root_; }

 private:
  // An open msr (or msr_safe) or PCI config file.
  struct OpenFile {
    int fd = -1;
    bool read_only = false;
    bool msr_safe = false;  // /dev/cpu/N/msr_safe rather than .../msr
  };

  // CPU `cpu`'s msr file, opened on first use.
  absl::StatusOr<OpenFile> MsrFile(int cpu);
  absl::StatusOr<OpenFile> PciFile(const PciAddress& fn);
  std::string MsrPath(int cpu, bool msr_safe) const;
  std::string PciConfigPath(const PciAddress& fn) const;

  const std::string dev_cpu_root_;
  const std::string pci_root_;
  std::unique_ptr<FdTable> msr_fds_;
  std::unique_ptr<FdTable> pci_fds_;

  // msr-safe batch device: state 0 undecided, 1 batch, 2 loop.
  std::mutex batch_mu_;
  std::atomic<int> batch_state_{0};
  std::unique_ptr<MsrSafeBatch> batch_;  // guarded by batch_mu_
};

}  // namespace uncore::registers

#endif  // UNCORE_SDK_REGISTERS_LINUX_REGISTER_SPACE_H_
