#include "sdk/registers/linux_register_space.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "sdk/registers/access_errors.h"
#include "sdk/registers/fd_table.h"
#include "sdk/registers/msr_safe_batch.h"
#include "sdk/registers/posix_io.h"

namespace uncore::registers {
namespace {

constexpr int kBatchUndecided = 0;
constexpr int kBatchIoctl = 1;
constexpr int kBatchLoop = 2;

}  // namespace

// ---- LinuxRegisterSpace -----------------------------------------------------

LinuxRegisterSpace::LinuxRegisterSpace(std::string dev_cpu_root,
                                       std::string pci_root)
    : dev_cpu_root_(std::move(dev_cpu_root)),
      pci_root_(std::move(pci_root)),
      msr_fds_(std::make_unique<FdTable>(/*capacity_log2=*/12)),
      pci_fds_(std::make_unique<FdTable>(/*capacity_log2=*/9)) {}

// The tables and the batch device close their files.
LinuxRegisterSpace::~LinuxRegisterSpace() = default;

std::string LinuxRegisterSpace::MsrPath(int cpu, bool msr_safe) const {
  return fmt::format("{}/{}/{}", dev_cpu_root_, cpu,
                     msr_safe ? "msr_safe" : "msr");
}

std::string LinuxRegisterSpace::PciConfigPath(const PciAddress& fn) const {
  return fmt::format("{}/{}/config", pci_root_, fn.ToString());
}

absl::StatusOr<LinuxRegisterSpace::OpenFile> LinuxRegisterSpace::MsrFile(
    int cpu) {
  if (cpu < 0) {
    return absl::InvalidArgumentError(
        fmt::format("CPU {} is not a CPU number", cpu));
  }
  auto open = [&]() -> absl::StatusOr<int> {
    const std::string msr = MsrPath(cpu, false);
    const std::string safe = MsrPath(cpu, true);
    int msr_error = 0;
    int safe_error = 0;
    // Read-write first (msr, then msr-safe), then read-only where read-write
    // was refused for lack of permission.
    struct Attempt {
      const std::string* path;
      int flags;
      bool safe;
      int* error;
    };
    const Attempt attempts[] = {{&msr, O_RDWR, false, &msr_error},
                                {&safe, O_RDWR, true, &safe_error},
                                {&msr, O_RDONLY, false, &msr_error},
                                {&safe, O_RDONLY, true, &safe_error}};
    for (const Attempt& a : attempts) {
      const bool read_only = a.flags == O_RDONLY;
      if (read_only && !IsPermissionError(*a.error)) continue;
      const int fd = OpenRetry(*a.path, a.flags);
      if (fd >= 0) {
        return EncodeFdEntry(fd, a.safe, read_only);
      }
      *a.error = errno;
    }
    return MsrOpenError(dev_cpu_root_, cpu, msr, msr_error, safe, safe_error);
  };
  absl::StatusOr<int> entry =
      msr_fds_->FindOrOpen(static_cast<uint32_t>(cpu), open);
  if (!entry.ok()) return entry.status();
  return OpenFile{.fd = FdOfEntry(*entry),
                  .read_only = EntryIsReadOnly(*entry),
                  .msr_safe = EntryIsMsrSafe(*entry)};
}

absl::Status LinuxRegisterSpace::ReadMsr(int cpu, uint32_t msr,
                                         uint64_t* value) {
  absl::StatusOr<OpenFile> file = MsrFile(cpu);
  if (!file.ok()) return file.status();
  uint64_t data = 0;
  const ssize_t n = PreadRetry(file->fd, &data, sizeof(data), off_t{msr});
  if (n == static_cast<ssize_t>(sizeof(data))) {
    *value = data;
    return absl::OkStatus();
  }
  const std::string path = MsrPath(cpu, file->msr_safe);
  if (n >= 0) return MsrShortReadError(n, cpu, msr, path);
  return MsrReadError(errno, cpu, msr, path, file->msr_safe);
}

absl::Status LinuxRegisterSpace::WriteMsr(int cpu, uint32_t msr,
                                          uint64_t value) {
  absl::StatusOr<OpenFile> file = MsrFile(cpu);
  if (!file.ok()) return file.status();
  if (file->read_only) {
    const std::string path = MsrPath(cpu, file->msr_safe);
    return absl::PermissionDeniedError(fmt::format(
        "cannot write MSR 0x{:x} on CPU {}: {} could only be opened "
        "read-only; writing MSRs needs root or CAP_SYS_RAWIO (and write "
        "access to {})",
        msr, cpu, path, path));
  }
  const ssize_t n = PwriteRetry(file->fd, &value, sizeof(value), off_t{msr});
  if (n == static_cast<ssize_t>(sizeof(value))) return absl::OkStatus();
  const std::string path = MsrPath(cpu, file->msr_safe);
  if (n >= 0) {
    return absl::DataLossError(
        fmt::format("short write of MSR 0x{:x} on CPU {}: {} of 8 bytes to {}",
                    msr, cpu, n, path));
  }
  return MsrWriteError(errno, cpu, msr, value, path, file->msr_safe);
}

absl::StatusOr<LinuxRegisterSpace::OpenFile> LinuxRegisterSpace::PciFile(
    const PciAddress& fn) {
  if (fn.device > 31 || fn.function > 7) {
    return absl::InvalidArgumentError(fmt::format(
        "{} is not a PCI function (device 0-31, function 0-7)", fn.ToString()));
  }
  const uint32_t key = (uint32_t{fn.segment} << 16) | (uint32_t{fn.bus} << 8) |
                       (uint32_t{fn.device} << 3) | fn.function;
  auto open = [&]() -> absl::StatusOr<int> {
    const std::string path = PciConfigPath(fn);
    int fd = OpenRetry(path, O_RDWR);
    bool read_only = false;
    if (fd < 0 && IsPermissionError(errno)) {
      fd = OpenRetry(path, O_RDONLY);
      read_only = true;
    }
    if (fd >= 0) return EncodeFdEntry(fd, /*msr_safe=*/false, read_only);
    const int error = errno;
    if (error == ENOENT) {
      const std::string dir = fmt::format("{}/{}", pci_root_, fn.ToString());
      if (!IsDirectory(dir)) {
        return absl::NotFoundError(fmt::format(
            "PCI function {} not found (no {}): check that `lspci -d 8086:` "
            "lists it; the BIOS may hide the uncore PCI devices (enable them "
            "in its setup), or the socket's uncore is on another bus (see "
            "DiscoverTopology)",
            fn.ToString(), dir));
      }
      return absl::NotFoundError(
          fmt::format("PCI function {} has no config file ({} is missing)",
                      fn.ToString(), path));
    }
    if (IsPermissionError(error)) {
      return absl::PermissionDeniedError(fmt::format(
          "cannot open {}: {}; PCI config space needs read access to it, and "
          "root (CAP_SYS_ADMIN) beyond its first 64 bytes",
          path, ErrnoText(error)));
    }
    return absl::Status(
        absl::ErrnoToStatusCode(error),
        fmt::format("cannot open {}: {}", path, ErrnoText(error)));
  };
  absl::StatusOr<int> entry = pci_fds_->FindOrOpen(key, open);
  if (!entry.ok()) return entry.status();
  return OpenFile{.fd = FdOfEntry(*entry),
                  .read_only = EntryIsReadOnly(*entry),
                  .msr_safe = false};
}

namespace {

absl::Status CheckPciOffset(const PciAddress& fn, uint32_t offset) {
  if (offset % 4 != 0 || offset > 4092) {
    return absl::InvalidArgumentError(fmt::format(
        "PCI config offset 0x{:x} of {} is not a dword offset in 0-0xffc",
        offset, fn.ToString()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status LinuxRegisterSpace::ReadPci(const PciAddress& fn, uint32_t offset,
                                         uint32_t* value) {
  if (absl::Status s = CheckPciOffset(fn, offset); !s.ok()) return s;
  absl::StatusOr<OpenFile> file = PciFile(fn);
  if (!file.ok()) return file.status();
  uint32_t data = 0;
  const ssize_t n = PreadRetry(file->fd, &data, sizeof(data), off_t{offset});
  if (n == static_cast<ssize_t>(sizeof(data))) {
    *value = data;
    return absl::OkStatus();
  }
  const std::string path = PciConfigPath(fn);
  if (n < 0) return PciIoError(errno, "read", offset, path);
  if (n == 0 && offset >= 64 && file->read_only) {
    // sysfs gives unprivileged readers only the standard header.
    return absl::PermissionDeniedError(
        fmt::format("cannot read PCI config offset 0x{:x} of {}: without root "
                    "(CAP_SYS_ADMIN) only its first 64 bytes are readable",
                    offset, fn.ToString()));
  }
  return absl::DataLossError(
      fmt::format("short read of PCI config offset 0x{:x}: {} of 4 bytes "
                  "from {}",
                  offset, n, path));
}

absl::Status LinuxRegisterSpace::WritePci(const PciAddress& fn, uint32_t offset,
                                          uint32_t value) {
  if (absl::Status s = CheckPciOffset(fn, offset); !s.ok()) return s;
  absl::StatusOr<OpenFile> file = PciFile(fn);
  if (!file.ok()) return file.status();
  if (file->read_only) {
    return absl::PermissionDeniedError(fmt::format(
        "cannot write PCI config offset 0x{:x} of {}: {} could only be "
        "opened read-only; writing PCI config space needs root "
        "(CAP_SYS_ADMIN)",
        offset, fn.ToString(), PciConfigPath(fn)));
  }
  const ssize_t n = PwriteRetry(file->fd, &value, sizeof(value), off_t{offset});
  if (n == static_cast<ssize_t>(sizeof(value))) return absl::OkStatus();
  const std::string path = PciConfigPath(fn);
  if (n < 0) return PciIoError(errno, "write", offset, path);
  return absl::DataLossError(
      fmt::format("short write of PCI config offset 0x{:x}: {} of 4 bytes "
                  "to {}",
                  offset, n, path));
}

// ---- ReadMsrBatch -----------------------------------------------------------

bool LinuxRegisterSpace::uses_msr_batch() const {
  return batch_state_.load(std::memory_order_acquire) == kBatchIoctl;
}

absl::Status LinuxRegisterSpace::ReadMsrBatch(std::span<MsrRead> reads) {
  if (reads.empty() ||
      batch_state_.load(std::memory_order_acquire) == kBatchLoop) {
    return RegisterSpace::ReadMsrBatch(reads);
  }
  std::unique_lock<std::mutex> lock(batch_mu_);
  int state = batch_state_.load(std::memory_order_relaxed);
  if (state == kBatchUndecided && batch_ == nullptr &&
      (batch_ = MsrSafeBatch::Open(dev_cpu_root_)) == nullptr) {
    batch_state_.store(kBatchLoop, std::memory_order_release);
    state = kBatchLoop;
  }
  if (state == kBatchLoop) {
    lock.unlock();
    return RegisterSpace::ReadMsrBatch(reads);
  }
  absl::Status first;
  size_t done = 0;
  while (done < reads.size()) {
    std::span<MsrRead> chunk = reads.subspan(
        done, std::min(MsrSafeBatch::kCapacity, reads.size() - done));
    if (!batch_->ReadChunk(chunk, this)) break;
    for (const MsrRead& r : chunk) {
      if (!r.status.ok() && first.ok()) first = r.status;
    }
    done += chunk.size();
  }
  if (done == reads.size()) {
    if (state == kBatchUndecided) {
      batch_state_.store(kBatchIoctl, std::memory_order_release);
    }
    return first;
  }
  // msr-safe refused the ioctl itself (an older or newer ABI, no read
  // access): on the first batch, give it up for good.
  if (state == kBatchUndecided) {
    batch_->Close();
    batch_state_.store(kBatchLoop, std::memory_order_release);
  }
  lock.unlock();
  absl::Status rest = RegisterSpace::ReadMsrBatch(reads.subspan(done));
  return first.ok() ? rest : first;
}

}  // namespace uncore::registers
