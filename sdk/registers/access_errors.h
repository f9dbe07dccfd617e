// The register layer's error texts, in one place: what an errno from opening,
// reading or writing an MSR or PCI config file means, as an absl::Status that
// says what is wrong and what to do.  LinuxRegisterSpace, the msr-safe batch
// path and the MSR access probe (msr_access_probe.h) all use these.
//
//   if (n < 0) return MsrReadError(errno, cpu, msr, path, /*msr_safe=*/false);
//
// Status codes: no privilege PermissionDenied; the msr driver not loaded, an
// MSR the CPU does not have or a faulting write FailedPrecondition; no such
// CPU or PCI function NotFound; a short transfer DataLoss; anything else the
// errno's code.
#ifndef UNCORE_SDK_REGISTERS_ACCESS_ERRORS_H_
#define UNCORE_SDK_REGISTERS_ACCESS_ERRORS_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace uncore::registers {

// EACCES, EPERM, EROFS.
bool IsPermissionError(int error);
// strerror's text, thread-safe.
std::string ErrnoText(int error);
bool IsDirectory(const std::string& path);
// The numeric subdirectories (CPU numbers) of `root`, ascending.
std::vector<int> ListCpuDirs(const std::string& root);
// "0-3" style summary of a sorted CPU list, for messages.
std::string DescribeCpus(const std::vector<int>& cpus);

// What to do when the msr driver is not loaded.
inline constexpr std::string_view kMsrDriverFix =
    "run `modprobe msr` as root (or load msr-safe)";
// What to do when `msr_path` (/dev/cpu/N/msr) cannot be opened for lack of
// privilege.
std::string MsrPrivilegeFix(std::string_view msr_path);
// What to do when reading an MSR faults (EIO).
inline constexpr std::string_view kMsrReadFaultFix =
    "the CPU or the hypervisor refuses MSR reads: run on bare metal, on an "
    "IvyTown Xeon (E5 v2 / E7 v2)";

// Neither <root>/<cpu>/msr nor .../msr_safe could be opened: `msr_error`
// and `safe_error` are the errnos of the two attempts (ENOENT: missing).
absl::Status MsrOpenError(const std::string& dev_cpu_root, int cpu,
                          const std::string& msr_path, int msr_error,
                          const std::string& safe_path, int safe_error);
// pread of `msr` through `path` returned -1 with `error`.
absl::Status MsrReadError(int error, int cpu, uint32_t msr,
                          const std::string& path, bool msr_safe);
// pread of `msr` through `path` returned `n` (0..7) bytes.
absl::Status MsrShortReadError(ssize_t n, int cpu, uint32_t msr,
                               const std::string& path);
// pwrite of `value` to `msr` returned -1 with `error`.
absl::Status MsrWriteError(int error, int cpu, uint32_t msr, uint64_t value,
                           const std::string& path, bool msr_safe);
// One msr-safe batch operation's `err` (a negative errno).
absl::Status MsrBatchOpError(int32_t err, int cpu, uint32_t msr);
// A PCI config read or write (`verb`) that returned -1 with `error`.
absl::Status PciIoError(int error, std::string_view verb, uint32_t offset,
                        const std::string& path);

}  // namespace uncore::registers

#endif  // UNCORE_SDK_REGISTERS_ACCESS_ERRORS_H_
