// ProbeMsrAccess: can this process read and write MSRs through the msr
// driver (or msr-safe) here, and if not, why not, as a code and a fix.
//
//   MsrAccessProbe p = ProbeMsrAccess("/dev/cpu");
//   if (p.reason == MsrAccessReason::kNoDriver) { /* p.fix: modprobe msr */ }
//
// What it does: counts <dev_cpu_root>/N/msr and .../N/msr_safe files, then
// on the first CPU that has one (or `cpu`) opens msr read-write (msr_safe
// where msr cannot be opened) and reads one MSR (IA32_TIME_STAMP_COUNTER by
// default).  It writes nothing.
//
// Reasons, in the order they are checked:
//   kNoDriver      no N/msr nor N/msr_safe file: the driver is not loaded
//   kNoSuchCpu     `cpu` was asked for and has no msr file (others do)
//   kNoPermission  the file exists but cannot be opened read-write
//   kOpenFailed    opening failed for another reason (errno in `error`)
//   kReadFaulted   the read failed with EIO: the CPU or hypervisor refuses
//   kReadRefused   the read failed with EACCES/EPERM (msr-safe's allowlist)
//   kShortRead     the read returned fewer than 8 bytes
//   kReadFailed    the read failed for another reason
//   kOk            opened read-write and read
// `detail` says what happened, `fix` what to do (empty for kOk); both come
// from access_errors.h, the texts LinuxRegisterSpace uses.
//
// Guarantees: reads only; closes what it opens; never prints.
#ifndef UNCORE_SDK_REGISTERS_MSR_ACCESS_PROBE_H_
#define UNCORE_SDK_REGISTERS_MSR_ACCESS_PROBE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace uncore::registers {

enum class MsrAccessReason {
  kOk,
  kNoDriver,
  kNoSuchCpu,
  kNoPermission,
  kOpenFailed,
  kReadFaulted,
  kReadRefused,
  kShortRead,
  kReadFailed,
};

// "ok", "no_driver", "no_such_cpu", "no_permission", ...: for JSON.
std::string_view MsrAccessReasonName(MsrAccessReason reason);

struct MsrAccessProbe {
  std::string dev_cpu_root;
  int msr_devices = 0;       // CPUs with N/msr
  int msr_safe_devices = 0;  // CPUs with N/msr_safe
  std::vector<int> cpus;     // CPUs with either, ascending

  int cpu = -1;      // the CPU tried (-1: none)
  std::string path;  // the file tried
  bool msr_safe = false;
  bool opened_read_write = false;
  bool read_ok = false;
  uint32_t msr = 0;
  uint64_t value = 0;  // what was read
  int error = 0;       // errno of the failing call, 0 when none

  MsrAccessReason reason = MsrAccessReason::kNoDriver;
  std::string detail;  // what happened, one sentence
  std::string fix;     // what to do; empty for kOk

  bool driver_loaded() const { return !cpus.empty(); }
  bool ok() const { return reason == MsrAccessReason::kOk; }
};

inline constexpr uint32_t kProbeMsr = 0x10;  // IA32_TIME_STAMP_COUNTER

MsrAccessProbe ProbeMsrAccess(std::string_view dev_cpu_root = "/dev/cpu",
                              std::optional<int> cpu = std::nullopt,
                              uint32_t msr = kProbeMsr);

}  // namespace uncore::registers

#endif  // UNCORE_SDK_REGISTERS_MSR_ACCESS_PROBE_H_
