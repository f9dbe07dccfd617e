#include "sdk/registers/msr_access_probe.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fmt/format.h"
#include "sdk/common/status_macros.h"
#include "sdk/registers/access_errors.h"
#include "sdk/registers/posix_io.h"

namespace uncore::registers {
namespace {

bool Exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace

std::string_view MsrAccessReasonName(MsrAccessReason reason) {
  switch (reason) {
    case MsrAccessReason::kOk:
      return "ok";
    case MsrAccessReason::kNoDriver:
      return "no_driver";
    case MsrAccessReason::kNoSuchCpu:
      return "no_such_cpu";
    case MsrAccessReason::kNoPermission:
      return "no_permission";
    case MsrAccessReason::kOpenFailed:
      return "open_failed";
    case MsrAccessReason::kReadFaulted:
      return "read_faulted";
    case MsrAccessReason::kReadRefused:
      return "read_refused";
    case MsrAccessReason::kShortRead:
      return "short_read";
    case MsrAccessReason::kReadFailed:
      return "read_failed";
  }
  return "unknown";
}

MsrAccessProbe ProbeMsrAccess(std::string_view dev_cpu_root,
                              std::optional<int> cpu, uint32_t msr) {
  MsrAccessProbe p;
  p.dev_cpu_root = std::string(dev_cpu_root);
  p.msr = msr;
  for (int c : ListCpuDirs(p.dev_cpu_root)) {
    const std::string base = fmt::format("{}/{}/", p.dev_cpu_root, c);
    const bool has_msr = Exists(base + "msr");
    const bool has_safe = Exists(base + "msr_safe");
    p.msr_devices += has_msr ? 1 : 0;
    p.msr_safe_devices += has_safe ? 1 : 0;
    if (has_msr || has_safe) p.cpus.push_back(c);
  }
  if (p.cpus.empty()) {
    p.reason = MsrAccessReason::kNoDriver;
    p.detail =
        fmt::format("no {}/*/msr (nor msr_safe): the msr driver is not loaded",
                    p.dev_cpu_root);
    p.fix = fmt::format(
        "{}; add msr to /etc/modules-load.d/ to load it at every boot",
        kMsrDriverFix);
    return p;
  }
  p.cpu = cpu.value_or(p.cpus.front());
  if (std::find(p.cpus.begin(), p.cpus.end(), p.cpu) == p.cpus.end()) {
    p.reason = MsrAccessReason::kNoSuchCpu;
    p.detail = fmt::format("CPU {} has no msr file in {} (CPUs with one: {})",
                           p.cpu, p.dev_cpu_root, DescribeCpus(p.cpus));
    p.fix = fmt::format("use one of CPUs {}, or bring CPU {} online",
                        DescribeCpus(p.cpus), p.cpu);
    return p;
  }

  // Open read-write: msr, else msr_safe.
  const std::string base = fmt::format("{}/{}/", p.dev_cpu_root, p.cpu);
  const std::string msr_path = base + "msr";
  const std::string safe_path = base + "msr_safe";
  int msr_error = ENOENT;
  int safe_error = ENOENT;
  int fd = -1;
  if (Exists(msr_path)) {
    fd = OpenRetry(msr_path, O_RDWR);
    if (fd < 0) msr_error = errno;
    p.path = msr_path;
  }
  if (fd < 0 && Exists(safe_path)) {
    fd = OpenRetry(safe_path, O_RDWR);
    if (fd < 0) {
      safe_error = errno;
    } else {
      p.msr_safe = true;
    }
    if (fd >= 0 || msr_error == ENOENT) p.path = safe_path;
  }
  if (fd < 0) {
    p.error = msr_error != ENOENT ? msr_error : safe_error;
    if (IsPermissionError(msr_error) || IsPermissionError(safe_error)) {
      p.reason = MsrAccessReason::kNoPermission;
      if (!IsPermissionError(msr_error)) {  // msr_safe refused: say so
        p.error = safe_error;
        p.path = safe_path;
      }
      p.detail =
          fmt::format("opening {} read-write: {}", p.path, ErrnoText(p.error));
      p.fix = MsrPrivilegeFix(msr_path);
    } else {
      p.reason = MsrAccessReason::kOpenFailed;
      p.detail = common::StatusMessage(MsrOpenError(
          p.dev_cpu_root, p.cpu, msr_path, msr_error, safe_path, safe_error));
      p.fix = fmt::format(
          "check that CPU {} is online and supports MSRs, and `dmesg` for "
          "the msr driver's complaints",
          p.cpu);
    }
    return p;
  }
  p.opened_read_write = true;

  // Read one MSR.
  uint64_t value = 0;
  const ssize_t n = PreadRetry(fd, &value, sizeof(value), off_t{msr});
  p.error = n < 0 ? errno : 0;
  ::close(fd);
  if (n == static_cast<ssize_t>(sizeof(value))) {
    p.read_ok = true;
    p.value = value;
    p.reason = MsrAccessReason::kOk;
    p.detail =
        fmt::format("opened {} read-write and read MSR 0x{:x}", p.path, msr);
    return p;
  }
  if (n >= 0) {
    p.reason = MsrAccessReason::kShortRead;
    p.detail = common::StatusMessage(MsrShortReadError(n, p.cpu, msr, p.path));
    p.fix = fmt::format(
        "{} does not behave like the msr driver's device: reload the driver "
        "(`sudo rmmod msr && sudo modprobe msr`) or check what {} holds",
        p.path, p.dev_cpu_root);
    return p;
  }
  p.detail = common::StatusMessage(
      MsrReadError(p.error, p.cpu, msr, p.path, p.msr_safe));
  if (p.error == EIO) {
    p.reason = MsrAccessReason::kReadFaulted;
    p.fix = std::string(kMsrReadFaultFix);
  } else if (IsPermissionError(p.error)) {
    p.reason = MsrAccessReason::kReadRefused;
    p.fix = p.msr_safe ? fmt::format(
                             "add MSR 0x{:x} and the uncore MSRs to "
                             "/dev/cpu/msr_allowlist as root",
                             msr)
                       : MsrPrivilegeFix(msr_path);
  } else {
    p.reason = MsrAccessReason::kReadFailed;
    p.fix = fmt::format("check that CPU {} is online, and `dmesg`", p.cpu);
  }
  return p;
}

}  // namespace uncore::registers
