#include "sdk/registers/access_errors.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "absl/status/status.h"
#include "fmt/format.h"

namespace uncore::registers {

bool IsPermissionError(int error) {
  return error == EACCES || error == EPERM || error == EROFS;
}

std::string ErrnoText(int error) {
  return std::error_code(error, std::generic_category()).message();
}

bool IsDirectory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::vector<int> ListCpuDirs(const std::string& root) {
  std::vector<int> cpus;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(root, ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    int cpu = 0;
    const char* last = name.data() + name.size();
    auto [ptr, parse_ec] = std::from_chars(name.data(), last, cpu);
    if (parse_ec != std::errc() || ptr != last || cpu < 0) continue;
    std::error_code entry_ec;  // one unreadable entry does not end the list
    if (it->is_directory(entry_ec)) cpus.push_back(cpu);
  }
  std::sort(cpus.begin(), cpus.end());
  return cpus;
}

std::string DescribeCpus(const std::vector<int>& cpus) {
  if (cpus.empty()) return "none";
  if (static_cast<int>(cpus.size()) == cpus.back() - cpus.front() + 1) {
    return cpus.size() == 1 ? fmt::format("{}", cpus.front())
                            : fmt::format("{}-{}", cpus.front(), cpus.back());
  }
  return fmt::format("{} CPUs, {} to {}", cpus.size(), cpus.front(),
                     cpus.back());
}

std::string MsrPrivilegeFix(std::string_view msr_path) {
  return fmt::format(
      "reading and writing MSRs needs root or CAP_SYS_RAWIO "
      "(and write access to {}), or msr-safe with the uncore "
      "MSRs in /dev/cpu/msr_allowlist",
      msr_path);
}

absl::Status MsrOpenError(const std::string& dev_cpu_root, int cpu,
                          const std::string& msr_path, int msr_error,
                          const std::string& safe_path, int safe_error) {
  if (IsPermissionError(msr_error)) {
    return absl::PermissionDeniedError(
        fmt::format("cannot open {}: {}; {}", msr_path, ErrnoText(msr_error),
                    MsrPrivilegeFix(msr_path)));
  }
  if (IsPermissionError(safe_error)) {
    return absl::PermissionDeniedError(
        fmt::format("cannot open {}: {}; {}", safe_path, ErrnoText(safe_error),
                    MsrPrivilegeFix(msr_path)));
  }
  if (msr_error == ENOENT && safe_error == ENOENT) {
    const std::string dir = fmt::format("{}/{}", dev_cpu_root, cpu);
    if (IsDirectory(dir)) {
      return absl::FailedPreconditionError(
          fmt::format("{} has no msr file: the msr driver is not loaded: {}",
                      dir, kMsrDriverFix));
    }
    const std::vector<int> cpus = ListCpuDirs(dev_cpu_root);
    if (cpus.empty()) {
      return absl::FailedPreconditionError(
          fmt::format("no CPU devices in {}: the msr driver is not loaded: {}",
                      dev_cpu_root, kMsrDriverFix));
    }
    return absl::NotFoundError(fmt::format(
        "CPU {} does not exist: there is no {} (CPUs there: {}); use a CPU "
        "of the socket from the topology",
        cpu, dir, DescribeCpus(cpus)));
  }
  const int error = msr_error != ENOENT ? msr_error : safe_error;
  const std::string& path = msr_error != ENOENT ? msr_path : safe_path;
  switch (error) {
    case ENXIO:
    case ENODEV:
      return absl::NotFoundError(fmt::format(
          "cannot open {}: CPU {} does not exist or is offline", path, cpu));
    case EIO:
      return absl::FailedPreconditionError(fmt::format(
          "cannot open {}: CPU {} does not support MSRs", path, cpu));
    default:
      return absl::Status(
          absl::ErrnoToStatusCode(error),
          fmt::format("cannot open {}: {}", path, ErrnoText(error)));
  }
}

absl::Status MsrReadError(int error, int cpu, uint32_t msr,
                          const std::string& path, bool msr_safe) {
  switch (error) {
    case EIO:
      return absl::FailedPreconditionError(fmt::format(
          "CPU {} does not have MSR 0x{:x} (reading {} failed: the rdmsr "
          "faulted); is this an IvyTown Xeon (E5 v2 / E7 v2)?",
          cpu, msr, path));
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(
          msr_safe
              ? fmt::format("cannot read MSR 0x{:x} through {}: it is not in "
                            "msr-safe's allowlist: add it to "
                            "/dev/cpu/msr_allowlist as root",
                            msr, path)
              : fmt::format("cannot read MSR 0x{:x} through {}: {}; reading "
                            "MSRs needs root or CAP_SYS_RAWIO",
                            msr, path, ErrnoText(error)));
    case ENXIO:
      return absl::NotFoundError(
          fmt::format("cannot read MSR 0x{:x}: CPU {} is offline", msr, cpu));
    default:
      return absl::Status(absl::ErrnoToStatusCode(error),
                          fmt::format("cannot read MSR 0x{:x} from {}: {}", msr,
                                      path, ErrnoText(error)));
  }
}

absl::Status MsrShortReadError(ssize_t n, int cpu, uint32_t msr,
                               const std::string& path) {
  return absl::DataLossError(
      fmt::format("short read of MSR 0x{:x} on CPU {}: {} of 8 bytes from {}",
                  msr, cpu, n, path));
}

absl::Status MsrWriteError(int error, int cpu, uint32_t msr, uint64_t value,
                           const std::string& path, bool msr_safe) {
  switch (error) {
    case EIO:
      return absl::FailedPreconditionError(fmt::format(
          "CPU {} refused 0x{:x} in MSR 0x{:x} (writing {} failed: the wrmsr "
          "faulted): the CPU does not have MSR 0x{:x}, or the value sets "
          "reserved bits",
          cpu, value, msr, path, msr));
    case EACCES:
    case EPERM:
    case EROFS:
      return absl::PermissionDeniedError(
          msr_safe
              ? fmt::format("cannot write MSR 0x{:x} through {}: msr-safe's "
                            "allowlist does not let it be written: add it "
                            "with a write mask to /dev/cpu/msr_allowlist as "
                            "root",
                            msr, path)
              : fmt::format("cannot write MSR 0x{:x} through {}: {}; writing "
                            "MSRs needs root or CAP_SYS_RAWIO (and write "
                            "access to {}), and a kernel that allows MSR "
                            "writes (msr.allow_writes=on, no lockdown)",
                            msr, path, ErrnoText(error), path));
    case ENXIO:
      return absl::NotFoundError(
          fmt::format("cannot write MSR 0x{:x}: CPU {} is offline", msr, cpu));
    default:
      return absl::Status(absl::ErrnoToStatusCode(error),
                          fmt::format("cannot write MSR 0x{:x} to {}: {}", msr,
                                      path, ErrnoText(error)));
  }
}

absl::Status MsrBatchOpError(int32_t err, int cpu, uint32_t msr) {
  const int error = -err;
  switch (error) {
    case ENXIO:
      return absl::NotFoundError(fmt::format(
          "CPU {} does not exist or is offline (msr-safe batch read of MSR "
          "0x{:x})",
          cpu, msr));
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(fmt::format(
          "MSR 0x{:x} is not in msr-safe's allowlist (batch read on CPU {}): "
          "add it to /dev/cpu/msr_allowlist as root",
          msr, cpu));
    case EIO:
      return absl::FailedPreconditionError(fmt::format(
          "CPU {} does not have MSR 0x{:x} (the rdmsr faulted in msr-safe's "
          "batch): is this an IvyTown Xeon (E5 v2 / E7 v2)?",
          cpu, msr));
    default:
      return absl::Status(
          absl::ErrnoToStatusCode(error),
          fmt::format("msr-safe batch read of MSR 0x{:x} on CPU {}: {}", msr,
                      cpu, ErrnoText(error)));
  }
}

absl::Status PciIoError(int error, std::string_view verb, uint32_t offset,
                        const std::string& path) {
  if (IsPermissionError(error)) {
    return absl::PermissionDeniedError(fmt::format(
        "cannot {} PCI config offset 0x{:x} in {}: {}; PCI config space "
        "beyond its first 64 bytes needs root (CAP_SYS_ADMIN)",
        verb, offset, path, ErrnoText(error)));
  }
  if (error == ENODEV || error == ENXIO) {
    return absl::NotFoundError(fmt::format(
        "cannot {} PCI config offset 0x{:x} in {}: the device is gone ({})",
        verb, offset, path, ErrnoText(error)));
  }
  return absl::Status(
      absl::ErrnoToStatusCode(error),
      fmt::format("cannot {} PCI config offset 0x{:x} in {}: {}", verb, offset,
                  path, ErrnoText(error)));
}

}  // namespace uncore::registers
