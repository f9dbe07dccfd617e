#include "sdk/registers/linux_register_space.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "sdk/common/text.h"

namespace uncore::registers {
namespace {

// ---- msr-safe's batch ABI (msr_safe.h of github.com/LLNL/msr-safe) ----
//
// struct msr_batch_op { __u16 cpu; __u16 isrdmsr; __s32 err; __u32 msr;
//                       __u64 msrdata; __u64 wmask; };
// struct msr_batch_array { __u32 numops; __u32 version; msr_batch_op* ops; };
// #define X86_IOC_MSR_BATCH _IOWR('c', 0xA2, struct msr_batch_array)
//
// `version` sits where releases before 2.0 had padding: those ignore it,
// 2.0 and later refuse a batch whose version differs from the loaded
// module's (read from /dev/cpu/msr_safe_version, "2.0.0").  `err` is a
// negative errno per operation: -ENXIO (no such CPU), -EACCES (MSR not in
// the allowlist), -EIO (the rdmsr faulted).
struct MsrBatchOp {
  uint16_t cpu;
  uint16_t isrdmsr;
  int32_t err;
  uint32_t msr;
  uint64_t msrdata;
  uint64_t wmask;
};
static_assert(sizeof(MsrBatchOp) == 32 && offsetof(MsrBatchOp, msr) == 8 &&
              offsetof(MsrBatchOp, msrdata) == 16);

struct MsrBatchArray {
  uint32_t numops;
  uint32_t version;
  MsrBatchOp* ops;
};
static_assert(sizeof(MsrBatchArray) == 16 && offsetof(MsrBatchArray, ops) == 8);

constexpr unsigned long kMsrBatchIoctl = _IOWR('c', 0xA2, MsrBatchArray);
static_assert(kMsrBatchIoctl == 0xC01063A2);

// Operations per ioctl; larger batches take several.
constexpr size_t kMsrBatchCapacity = 256;
// `err` before the ioctl: the kernel writes 0 or a negative errno into
// every operation it looks at, so this survives only where it did not.
constexpr int32_t kErrUntouched = 0x7fffffff;
// msr-safe releases whose batch layout is the one above.
constexpr int kMaxKnownMsrSafeMajor = 2;

// FdTable entries.
constexpr int kReadOnlyBit = 1;
constexpr int kMsrSafeBit = 2;
constexpr int kFdShift = 2;

int OpenRetry(const std::string& path, int flags) {
  int fd;
  do {
    fd = ::open(path.c_str(), flags | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

ssize_t PreadRetry(int fd, void* buffer, size_t size, off_t offset) {
  ssize_t n;
  do {
    n = ::pread(fd, buffer, size, offset);
  } while (n < 0 && errno == EINTR);
  return n;
}

ssize_t PwriteRetry(int fd, const void* buffer, size_t size, off_t offset) {
  ssize_t n;
  do {
    n = ::pwrite(fd, buffer, size, offset);
  } while (n < 0 && errno == EINTR);
  return n;
}

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

// The numeric subdirectories (CPU numbers) of `root`, ascending.
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
    if (it->is_directory(ec)) cpus.push_back(cpu);
  }
  std::sort(cpus.begin(), cpus.end());
  return cpus;
}

// "0-3" style summary of a sorted CPU list, for messages.
std::string DescribeCpus(const std::vector<int>& cpus) {
  if (cpus.empty()) return "none";
  if (static_cast<int>(cpus.size()) == cpus.back() - cpus.front() + 1) {
    return cpus.size() == 1 ? fmt::format("{}", cpus.front())
                            : fmt::format("{}-{}", cpus.front(), cpus.back());
  }
  return fmt::format("{} CPUs, {} to {}", cpus.size(), cpus.front(),
                     cpus.back());
}

// msr-safe's loaded version as (major << 16 | minor << 8 | patch), from
// <dev_cpu_root>/msr_safe_version ("1.7.0"); nullopt when unreadable.
std::optional<uint32_t> ReadMsrSafeVersion(const std::string& path) {
  const int fd = OpenRetry(path, O_RDONLY);
  if (fd < 0) return std::nullopt;
  char buffer[64] = {};
  const ssize_t n = PreadRetry(fd, buffer, sizeof(buffer) - 1, 0);
  ::close(fd);
  if (n <= 0) return std::nullopt;
  std::string_view text =
      common::StripWhitespace(std::string_view(buffer, std::strlen(buffer)));
  std::vector<std::string_view> parts = common::Split(text, '.');
  if (parts.size() != 3) return std::nullopt;
  uint32_t version = 0;
  for (std::string_view part : parts) {
    unsigned value = 0;
    auto [ptr, ec] =
        std::from_chars(part.data(), part.data() + part.size(), value);
    if (ec != std::errc() || ptr != part.data() + part.size() || value > 255) {
      return std::nullopt;
    }
    version = (version << 8) | value;
  }
  return version;
}

// One batch operation's error as a Status (err is a negative errno).
absl::Status BatchOpError(int32_t err, int cpu, uint32_t msr) {
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

}  // namespace

// ---- FdTable ----------------------------------------------------------------

// Open addressing over a fixed array of 64-bit slots, each (key << 32) |
// (entry + 1), 0 when empty.  Slots only ever go from empty to full, under
// `mu_`; readers probe without a lock.  Past 3/4 load, entries go to a
// mutex-guarded overflow map.
class LinuxRegisterSpace::FdTable {
 public:
  explicit FdTable(int capacity_log2)
      : shift_(64 - capacity_log2),
        mask_((size_t{1} << capacity_log2) - 1),
        slots_(new std::atomic<uint64_t>[mask_ + 1]) {
    for (size_t i = 0; i <= mask_; ++i) {
      slots_[i].store(0, std::memory_order_relaxed);
    }
  }
  ~FdTable() {
    for (size_t i = 0; i <= mask_; ++i) {
      const uint64_t slot = slots_[i].load(std::memory_order_relaxed);
      if (slot != 0) ::close(DecodeEntry(slot) >> kFdShift);
    }
    for (const auto& [key, entry] : overflow_) ::close(entry >> kFdShift);
  }
  FdTable(const FdTable&) = delete;
  FdTable& operator=(const FdTable&) = delete;

  // The entry of `key`, or -1.  Lock-free unless the table overflowed.
  int Find(uint32_t key) const {
    const int entry = FindInSlots(key);
    if (entry >= 0 || !has_overflow_.load(std::memory_order_acquire)) {
      return entry;
    }
    std::lock_guard<std::mutex> lock(mu_);
    auto it = overflow_.find(key);
    return it == overflow_.end() ? -1 : it->second;
  }

  // The entry of `key`; when absent, `open()` (a StatusOr<int>) makes it,
  // under the table's lock so that a key is opened once.  Failures are not
  // remembered: a later call tries again.
  template <typename Open>
  absl::StatusOr<int> FindOrOpen(uint32_t key, Open&& open) {
    if (const int entry = Find(key); entry >= 0) return entry;
    std::lock_guard<std::mutex> lock(mu_);
    if (const int entry = FindInSlots(key); entry >= 0) return entry;
    if (auto it = overflow_.find(key); it != overflow_.end()) {
      return it->second;
    }
    absl::StatusOr<int> entry = open();
    if (!entry.ok()) return entry;
    InsertLocked(key, *entry);
    return entry;
  }

 private:
  static int DecodeEntry(uint64_t slot) {
    return static_cast<int>(static_cast<uint32_t>(slot) - 1);
  }
  size_t Home(uint32_t key) const {
    return static_cast<size_t>((key * uint64_t{0x9E3779B97F4A7C15}) >> shift_);
  }
  int FindInSlots(uint32_t key) const {
    for (size_t i = Home(key), probes = 0; probes <= mask_;
         i = (i + 1) & mask_, ++probes) {
      const uint64_t slot = slots_[i].load(std::memory_order_acquire);
      if (slot == 0) return -1;
      if (static_cast<uint32_t>(slot >> 32) == key) return DecodeEntry(slot);
    }
    return -1;
  }
  void InsertLocked(uint32_t key, int entry) {
    if (used_ + 1 > (mask_ + 1) / 4 * 3) {
      overflow_.emplace(key, entry);
      has_overflow_.store(true, std::memory_order_release);
      return;
    }
    size_t i = Home(key);
    while (slots_[i].load(std::memory_order_relaxed) != 0) i = (i + 1) & mask_;
    slots_[i].store((uint64_t{key} << 32) | (static_cast<uint32_t>(entry) + 1),
                    std::memory_order_release);
    ++used_;
  }

  const int shift_;
  const size_t mask_;
  const std::unique_ptr<std::atomic<uint64_t>[]> slots_;
  mutable std::mutex mu_;
  size_t used_ = 0;                              // guarded by mu_
  absl::flat_hash_map<uint32_t, int> overflow_;  // guarded by mu_
  std::atomic<bool> has_overflow_{false};
};

struct LinuxRegisterSpace::MsrBatch {
  int fd = -1;
  uint32_t version = 0;
  std::array<MsrBatchOp, kMsrBatchCapacity> ops{};
  std::array<uint32_t, kMsrBatchCapacity> read_index{};
};

// ---- LinuxRegisterSpace -----------------------------------------------------

LinuxRegisterSpace::LinuxRegisterSpace(std::string dev_cpu_root,
                                       std::string pci_root)
    : dev_cpu_root_(std::move(dev_cpu_root)),
      pci_root_(std::move(pci_root)),
      msr_fds_(std::make_unique<FdTable>(/*capacity_log2=*/12)),
      pci_fds_(std::make_unique<FdTable>(/*capacity_log2=*/9)) {}

LinuxRegisterSpace::~LinuxRegisterSpace() {
  if (batch_ != nullptr && batch_->fd >= 0) ::close(batch_->fd);
}

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
        return (fd << kFdShift) | (a.safe ? kMsrSafeBit : 0) |
               (read_only ? kReadOnlyBit : 0);
      }
      *a.error = errno;
    }
    const std::string how_to = fmt::format(
        "reading and writing MSRs needs root or CAP_SYS_RAWIO "
        "(and write access to {}), or msr-safe with the uncore "
        "MSRs in /dev/cpu/msr_allowlist",
        msr);
    if (IsPermissionError(msr_error)) {
      return absl::PermissionDeniedError(fmt::format(
          "cannot open {}: {}; {}", msr, ErrnoText(msr_error), how_to));
    }
    if (IsPermissionError(safe_error)) {
      return absl::PermissionDeniedError(fmt::format(
          "cannot open {}: {}; {}", safe, ErrnoText(safe_error), how_to));
    }
    if (msr_error == ENOENT && safe_error == ENOENT) {
      const std::string dir = fmt::format("{}/{}", dev_cpu_root_, cpu);
      if (IsDirectory(dir)) {
        return absl::FailedPreconditionError(fmt::format(
            "{} has no msr file: the msr driver is not loaded: run `modprobe "
            "msr` as root (or load msr-safe)",
            dir));
      }
      const std::vector<int> cpus = ListCpuDirs(dev_cpu_root_);
      if (cpus.empty()) {
        return absl::FailedPreconditionError(fmt::format(
            "no CPU devices in {}: the msr driver is not loaded: run "
            "`modprobe msr` as root (or load msr-safe)",
            dev_cpu_root_));
      }
      return absl::NotFoundError(fmt::format(
          "CPU {} does not exist: there is no {} (CPUs there: {}); use a CPU "
          "of the socket from the topology",
          cpu, dir, DescribeCpus(cpus)));
    }
    const int error = msr_error != ENOENT ? msr_error : safe_error;
    const std::string& path = msr_error != ENOENT ? msr : safe;
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
  };
  absl::StatusOr<int> entry =
      msr_fds_->FindOrOpen(static_cast<uint32_t>(cpu), open);
  if (!entry.ok()) return entry.status();
  return OpenFile{.fd = *entry >> kFdShift,
                  .read_only = (*entry & kReadOnlyBit) != 0,
                  .msr_safe = (*entry & kMsrSafeBit) != 0};
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
  if (n >= 0) {
    return absl::DataLossError(
        fmt::format("short read of MSR 0x{:x} on CPU {}: {} of 8 bytes from {}",
                    msr, cpu, n, path));
  }
  const int error = errno;
  switch (error) {
    case EIO:
      return absl::FailedPreconditionError(fmt::format(
          "CPU {} does not have MSR 0x{:x} (reading {} failed: the rdmsr "
          "faulted); is this an IvyTown Xeon (E5 v2 / E7 v2)?",
          cpu, msr, path));
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(
          file->msr_safe
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
  const int error = errno;
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
          file->msr_safe
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
    if (fd >= 0) return (fd << kFdShift) | (read_only ? kReadOnlyBit : 0);
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
  return OpenFile{.fd = *entry >> kFdShift,
                  .read_only = (*entry & kReadOnlyBit) != 0,
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

namespace {
constexpr int kBatchUndecided = 0;
constexpr int kBatchIoctl = 1;
constexpr int kBatchLoop = 2;
}  // namespace

bool LinuxRegisterSpace::uses_msr_batch() const {
  return batch_state_.load(std::memory_order_acquire) == kBatchIoctl;
}

bool LinuxRegisterSpace::OpenMsrBatchLocked() {
  std::optional<uint32_t> version =
      ReadMsrSafeVersion(dev_cpu_root_ + "/msr_safe_version");
  // A later major release may change the operation layout: read one by one.
  if (version && (*version >> 16) > kMaxKnownMsrSafeMajor) return false;
  const int fd = OpenRetry(dev_cpu_root_ + "/msr_batch", O_RDONLY);
  if (fd < 0) return false;
  batch_ = std::make_unique<MsrBatch>();
  batch_->fd = fd;
  // Unknown (the version device is root-only): 0, which releases before
  // 2.0 ignore and later ones refuse, sending us to the loop.
  batch_->version = version.value_or(0);
  return true;
}

bool LinuxRegisterSpace::BatchChunkLocked(std::span<MsrRead> reads) {
  MsrBatch& b = *batch_;
  uint32_t numops = 0;
  for (size_t i = 0; i < reads.size(); ++i) {
    MsrRead& r = reads[i];
    if (r.cpu < 0 || r.cpu > 0xffff) continue;  // the loop below reports it
    b.ops[numops] = MsrBatchOp{.cpu = static_cast<uint16_t>(r.cpu),
                               .isrdmsr = 1,
                               .err = kErrUntouched,
                               .msr = r.msr,
                               .msrdata = 0,
                               .wmask = 0};
    b.read_index[numops] = static_cast<uint32_t>(i);
    ++numops;
  }
  int rc = 0;
  if (numops > 0) {
    MsrBatchArray array{
        .numops = numops, .version = b.version, .ops = b.ops.data()};
    do {
      rc = ::ioctl(b.fd, kMsrBatchIoctl, &array);
    } while (rc < 0 && errno == EINTR);
    if (rc < 0) {
      bool touched = false;
      for (uint32_t k = 0; k < numops; ++k) {
        touched = touched || b.ops[k].err != kErrUntouched;
      }
      if (!touched) return false;  // refused as a whole: the loop reads all
    }
  }
  // CPUs msr-safe cannot address: ReadMsr explains.
  for (MsrRead& r : reads) {
    if (r.cpu < 0 || r.cpu > 0xffff) r.status = ReadMsr(r.cpu, r.msr, &r.value);
  }
  for (uint32_t k = 0; k < numops; ++k) {
    const MsrBatchOp& op = b.ops[k];
    MsrRead& r = reads[b.read_index[k]];
    if (rc == 0 && op.err == 0) {
      r.value = op.msrdata;
      r.status = absl::OkStatus();
    } else if (op.err != 0 && op.err != kErrUntouched) {
      r.status = BatchOpError(op.err, r.cpu, r.msr);
    } else {
      // The batch failed on another operation: msr-safe may not have run
      // this one (it checks the allowlist of all before running any).
      r.status = ReadMsr(r.cpu, r.msr, &r.value);
    }
  }
  return true;
}

absl::Status LinuxRegisterSpace::ReadMsrBatch(std::span<MsrRead> reads) {
  if (reads.empty() ||
      batch_state_.load(std::memory_order_acquire) == kBatchLoop) {
    return RegisterSpace::ReadMsrBatch(reads);
  }
  std::unique_lock<std::mutex> lock(batch_mu_);
  int state = batch_state_.load(std::memory_order_relaxed);
  if (state == kBatchUndecided && batch_ == nullptr && !OpenMsrBatchLocked()) {
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
    std::span<MsrRead> chunk =
        reads.subspan(done, std::min(kMsrBatchCapacity, reads.size() - done));
    if (!BatchChunkLocked(chunk)) break;
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
    ::close(batch_->fd);
    batch_->fd = -1;
    batch_state_.store(kBatchLoop, std::memory_order_release);
  }
  lock.unlock();
  absl::Status rest = RegisterSpace::ReadMsrBatch(reads.subspan(done));
  return first.ok() ? rest : first;
}

}  // namespace uncore::registers
