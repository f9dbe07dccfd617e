#include "sdk/registers/linux_register_space.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sdk/common/status_macros.h"
#include "sdk/registers/register_space.h"

namespace uncore::registers {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;

// ---- a stand-in for msr-safe's /dev/cpu/msr_batch ---------------------------
//
// The test binary defines ioctl() (below, outside the namespace), which the
// SDK's call resolves to.  Batch requests on the fake msr_batch file are
// served the way msr-safe's msrbatch_ioctl does: the allowlist and CPU
// checks first for every operation, nothing run if any fails; then every
// operation run, each recording its own error.  Everything else goes to
// the real system call.

// _IOWR('c', 0xA2, struct msr_batch_array), msr-safe's X86_IOC_MSR_BATCH.
struct BatchArrayLayout {
  uint32_t numops;
  uint32_t version;
  void* ops;
};
constexpr unsigned long kMsrBatchRequest = 0xC01063A2;
static_assert(_IOWR('c', 0xA2, BatchArrayLayout) == kMsrBatchRequest);

struct BatchOpLayout {
  uint16_t cpu;
  uint16_t isrdmsr;
  int32_t err;
  uint32_t msr;
  uint64_t msrdata;
  uint64_t wmask;
};

struct FakeMsrSafe {
  std::string dev_cpu_root;  // where the msr_batch file is
  std::string data_root;     // <data_root>/<cpu>/msr: what the CPUs hold
  bool serve = false;        // false: pass to the kernel (ENOTTY on a file)
  int batch_requests = 0;    // ioctls with kMsrBatchRequest
  std::vector<uint32_t> versions_seen;
  std::optional<uint32_t> module_version;  // 2.0+: refuses other versions
  std::set<int> cpus;                      // others: ENXIO
  std::set<uint32_t> not_allowed;          // EACCES
  std::set<uint32_t> faulting;             // EIO

  bool IsBatchFile(int fd) const {
    struct stat a {
    }, b{};
    return ::fstat(fd, &a) == 0 &&
           ::stat((dev_cpu_root + "/msr_batch").c_str(), &b) == 0 &&
           a.st_dev == b.st_dev && a.st_ino == b.st_ino;
  }

  int Serve(BatchArrayLayout* array) {
    versions_seen.push_back(array->version);
    if (module_version && array->version != *module_version) {
      errno = EPROTO;
      return -1;
    }
    auto* ops = static_cast<BatchOpLayout*>(array->ops);
    int error = 0;
    for (uint32_t i = 0; i < array->numops; ++i) {
      BatchOpLayout& op = ops[i];
      op.err = 0;
      if (!cpus.contains(op.cpu)) {
        op.err = error = -ENXIO;
      } else if (not_allowed.contains(op.msr)) {
        op.err = error = -EACCES;
      } else {
        op.wmask = ~uint64_t{0};
      }
    }
    if (error != 0) {
      errno = -error;
      return -1;
    }
    for (uint32_t i = 0; i < array->numops; ++i) {
      BatchOpLayout& op = ops[i];
      if (faulting.contains(op.msr)) {
        op.err = -EIO;
        if (error == 0) error = -EIO;
        continue;
      }
      const std::string path =
          data_root + "/" + std::to_string(op.cpu) + "/msr";
      const int fd = ::open(path.c_str(), O_RDONLY);
      if (fd < 0 || ::pread(fd, &op.msrdata, 8, op.msr) != 8) {
        op.err = -EIO;
        if (error == 0) error = -EIO;
      }
      if (fd >= 0) ::close(fd);
    }
    if (error != 0) {
      errno = -error;
      return -1;
    }
    return 0;
  }
};

std::atomic<FakeMsrSafe*> g_fake_msr_safe{nullptr};

}  // namespace
}  // namespace uncore::registers

extern "C" int ioctl(int fd, unsigned long request, ...) noexcept {
  va_list args;
  va_start(args, request);
  void* arg = va_arg(args, void*);
  va_end(args);
  using uncore::registers::BatchArrayLayout;
  using uncore::registers::FakeMsrSafe;
  if (request == uncore::registers::kMsrBatchRequest) {
    FakeMsrSafe* fake = uncore::registers::g_fake_msr_safe.load();
    if (fake != nullptr) {
      ++fake->batch_requests;
      if (fake->serve && fake->IsBatchFile(fd)) {
        return fake->Serve(static_cast<BatchArrayLayout*>(arg));
      }
    }
  }
  return static_cast<int>(::syscall(SYS_ioctl, fd, request, arg));
}

namespace uncore::registers {
namespace {

// ---- a fake /dev/cpu and /sys/bus/pci/devices in a temporary directory ------

class LinuxRegisterSpaceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern =
        (fs::temp_directory_path() / "linux_register_space_XXXXXX");
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr) << pattern;
    root_ = pattern;
    dev_cpu_ = root_ / "dev/cpu";
    pci_ = root_ / "pci";
    fs::create_directories(dev_cpu_);
    fs::create_directories(pci_);
  }
  void TearDown() override {
    g_fake_msr_safe.store(nullptr);
    std::error_code ec;
    fs::permissions(root_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(root_, ec);
  }

  LinuxRegisterSpace MakeSpace() const {
    return LinuxRegisterSpace(dev_cpu_.string(), pci_.string());
  }

  // <dev/cpu>/<cpu>/<name>, a sparse file covering the uncore MSRs.
  fs::path MakeMsrFile(int cpu, std::string_view name = "msr",
                       off_t size = 0x10000) {
    const fs::path path = dev_cpu_ / std::to_string(cpu) / std::string(name);
    fs::create_directories(path.parent_path());
    std::ofstream(path).close();
    fs::resize_file(path, static_cast<uintmax_t>(size));
    return path;
  }

  // <pci>/<fn>/config.
  fs::path MakePciFunction(std::string_view fn, off_t size = 4096) {
    const fs::path path = pci_ / std::string(fn) / "config";
    fs::create_directories(path.parent_path());
    std::ofstream(path).close();
    fs::resize_file(path, static_cast<uintmax_t>(size));
    return path;
  }

  template <typename T>
  static void PutRaw(const fs::path& path, off_t offset, T value) {
    const int fd = ::open(path.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0) << path;
    EXPECT_EQ(::pwrite(fd, &value, sizeof(value), offset),
              static_cast<ssize_t>(sizeof(value)));
    ::close(fd);
  }

  template <typename T>
  static T GetRaw(const fs::path& path, off_t offset) {
    T value{};
    const int fd = ::open(path.c_str(), O_RDONLY);
    EXPECT_GE(fd, 0) << path;
    if (fd < 0) return value;
    EXPECT_EQ(::pread(fd, &value, sizeof(value), offset),
              static_cast<ssize_t>(sizeof(value)));
    ::close(fd);
    return value;
  }

  fs::path root_;
  fs::path dev_cpu_;
  fs::path pci_;
};

// Whether this process can open `path` for writing (root can, whatever the
// file's mode, except where the file system refuses).
bool CanOpenForWriting(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDWR);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

// A read-only file that this process, even as root, cannot open read-write:
// sysfs refuses FMODE_WRITE on attributes without a store method.
constexpr const char* kReadOnlySysfsFile = "/sys/devices/system/cpu/online";

// Makes `path` a file this process can only read: mode 0444 where that
// binds (not root), else a symbolic link to a read-only sysfs attribute.
// Returns false when neither is possible here.
bool MakeReadOnly(const fs::path& path) {
  fs::permissions(path, fs::perms::owner_read | fs::perms::group_read |
                            fs::perms::others_read);
  if (!CanOpenForWriting(path)) return true;
  const int fd = ::open(kReadOnlySysfsFile, O_RDONLY);
  if (fd < 0 || CanOpenForWriting(kReadOnlySysfsFile)) {
    if (fd >= 0) ::close(fd);
    return false;
  }
  ::close(fd);
  fs::remove(path);
  fs::create_symlink(kReadOnlySysfsFile, path);
  return true;
}

// ---- MSRs -------------------------------------------------------------------

TEST_F(LinuxRegisterSpaceTest, MsrReadWriteRoundTrip) {
  const fs::path cpu0 = MakeMsrFile(0);
  const fs::path cpu1 = MakeMsrFile(1);
  LinuxRegisterSpace space = MakeSpace();

  // U_MSR_PMON_GLOBAL_CTL (0x0C00) and CBo 3's first control (0x0D70).
  ASSERT_TRUE(space.WriteMsr(0, 0x0C00, 0x20000000).ok());
  ASSERT_TRUE(space.WriteMsr(1, 0x0C00, 0x80000000).ok());
  ASSERT_TRUE(space.WriteMsr(0, 0x0D70, 0x0040ff37).ok());
  EXPECT_EQ(GetRaw<uint64_t>(cpu0, 0x0C00), 0x20000000u);
  EXPECT_EQ(GetRaw<uint64_t>(cpu1, 0x0C00), 0x80000000u);
  EXPECT_EQ(GetRaw<uint64_t>(cpu0, 0x0D70), 0x0040ff37u);
  EXPECT_EQ(GetRaw<uint64_t>(cpu0, 0x0D68), 0u);  // neighbours untouched
  EXPECT_EQ(GetRaw<uint64_t>(cpu0, 0x0D78), 0u);

  // CBo 0's counter 0 (0x0D16), 44 bits wide.
  PutRaw<uint64_t>(cpu1, 0x0D16, 0x00000fedcba98765);
  uint64_t value = 0;
  ASSERT_TRUE(space.ReadMsr(1, 0x0D16, &value).ok());
  EXPECT_EQ(value, 0x00000fedcba98765u);
  ASSERT_TRUE(space.ReadMsr(0, 0x0C00, &value).ok());
  EXPECT_EQ(value, 0x20000000u);
  ASSERT_TRUE(space.ReadMsr(1, 0x0C00, &value).ok());
  EXPECT_EQ(value, 0x80000000u);
  // The whole 64 bits.
  ASSERT_TRUE(space.WriteMsr(0, 0x0C20, 0xfedcba9876543210).ok());
  ASSERT_TRUE(space.ReadMsr(0, 0x0C20, &value).ok());
  EXPECT_EQ(value, 0xfedcba9876543210u);
}

TEST_F(LinuxRegisterSpaceTest, FallsBackToMsrSafe) {
  const fs::path safe = MakeMsrFile(0, "msr_safe");
  LinuxRegisterSpace space = MakeSpace();
  ASSERT_TRUE(space.WriteMsr(0, 0x0C00, 0x1234).ok());
  EXPECT_EQ(GetRaw<uint64_t>(safe, 0x0C00), 0x1234u);
  PutRaw<uint64_t>(safe, 0x0C16, 77);
  uint64_t value = 0;
  ASSERT_TRUE(space.ReadMsr(0, 0x0C16, &value).ok());
  EXPECT_EQ(value, 77u);
}

TEST_F(LinuxRegisterSpaceTest, PrefersTheMsrDriverOverMsrSafe) {
  const fs::path msr = MakeMsrFile(0);
  const fs::path safe = MakeMsrFile(0, "msr_safe");
  LinuxRegisterSpace space = MakeSpace();
  ASSERT_TRUE(space.WriteMsr(0, 0x0C00, 0x55).ok());
  EXPECT_EQ(GetRaw<uint64_t>(msr, 0x0C00), 0x55u);
  EXPECT_EQ(GetRaw<uint64_t>(safe, 0x0C00), 0u);
}

TEST_F(LinuxRegisterSpaceTest, ReadOnlyMsrFileRefusesWrites) {
  const fs::path msr = MakeMsrFile(0);
  PutRaw<uint64_t>(msr, 0x0C00, 0x42);
  if (!MakeReadOnly(msr)) {
    GTEST_SKIP() << "running with the privilege to write any file, and "
                 << kReadOnlySysfsFile << " is not there to stand in for a "
                 << "read-only msr device";
  }
  const bool is_symlink = fs::is_symlink(msr);
  LinuxRegisterSpace space = MakeSpace();
  // Opened read-only: reads work (where the file has the data).
  uint64_t value = 0;
  const absl::Status read = space.ReadMsr(0, 0x0C00, &value);
  if (is_symlink) {
    // The sysfs file is a few bytes long: a short read, not a refusal.
    EXPECT_EQ(read.code(), absl::StatusCode::kDataLoss) << read;
  } else {
    ASSERT_TRUE(read.ok()) << read;
    EXPECT_EQ(value, 0x42u);
  }
  const absl::Status write = space.WriteMsr(0, 0x0C00, 0x99);
  EXPECT_EQ(write.code(), absl::StatusCode::kPermissionDenied) << write;
  EXPECT_THAT(common::StatusMessage(write),
              AllOf(HasSubstr("CAP_SYS_RAWIO"), HasSubstr("read-only"),
                    HasSubstr("MSR 0xc00"), HasSubstr(msr.string())));
  if (!is_symlink) {
    EXPECT_EQ(GetRaw<uint64_t>(msr, 0x0C00), 0x42u);
  }
}

TEST_F(LinuxRegisterSpaceTest, NoCpuDevicesMeansTheDriverIsNotLoaded) {
  LinuxRegisterSpace space = MakeSpace();  // dev/cpu exists, empty
  uint64_t value = 0;
  const absl::Status s = space.ReadMsr(0, 0x0C00, &value);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_THAT(common::StatusMessage(s), HasSubstr("modprobe msr"));
  EXPECT_EQ(space.WriteMsr(0, 0x0C00, 1).code(),
            absl::StatusCode::kFailedPrecondition);

  LinuxRegisterSpace absent((root_ / "no/such/dev/cpu").string(),
                            pci_.string());
  const absl::Status t = absent.ReadMsr(0, 0x0C00, &value);
  EXPECT_EQ(t.code(), absl::StatusCode::kFailedPrecondition) << t;
  EXPECT_THAT(common::StatusMessage(t), HasSubstr("modprobe msr"));
}

TEST_F(LinuxRegisterSpaceTest, CpuDirectoryWithoutMsrFileMeansNoDriver) {
  // What a machine with only the cpuid driver loaded has.
  fs::create_directories(dev_cpu_ / "0");
  std::ofstream(dev_cpu_ / "0" / "cpuid").close();
  LinuxRegisterSpace space = MakeSpace();
  uint64_t value = 0;
  const absl::Status s = space.ReadMsr(0, 0x0C00, &value);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_THAT(common::StatusMessage(s), HasSubstr("modprobe msr"));
}

TEST_F(LinuxRegisterSpaceTest, NonexistentCpuIsNotFound) {
  MakeMsrFile(0);
  MakeMsrFile(1);
  LinuxRegisterSpace space = MakeSpace();
  uint64_t value = 0;
  const absl::Status s = space.ReadMsr(7, 0x0C00, &value);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  EXPECT_THAT(common::StatusMessage(s),
              AllOf(HasSubstr("CPU 7"), HasSubstr("0-1")));
  EXPECT_EQ(space.ReadMsr(-1, 0x0C00, &value).code(),
            absl::StatusCode::kInvalidArgument);
  // The good CPUs still work.
  EXPECT_TRUE(space.ReadMsr(1, 0x0C00, &value).ok());
}

TEST_F(LinuxRegisterSpaceTest, FailedOpensAreRetried) {
  LinuxRegisterSpace space = MakeSpace();
  uint64_t value = 0;
  EXPECT_FALSE(space.ReadMsr(0, 0x0C00, &value).ok());
  uint32_t dword = 0;
  EXPECT_FALSE(space.ReadPci({0, 0x7f, 16, 4}, 0xD8, &dword).ok());
  // `modprobe msr` later, the BIOS shows the function: now it works.
  PutRaw<uint64_t>(MakeMsrFile(0), 0x0C00, 5);
  PutRaw<uint32_t>(MakePciFunction("0000:7f:10.4"), 0xD8, 6);
  ASSERT_TRUE(space.ReadMsr(0, 0x0C00, &value).ok());
  EXPECT_EQ(value, 5u);
  ASSERT_TRUE(space.ReadPci({0, 0x7f, 16, 4}, 0xD8, &dword).ok());
  EXPECT_EQ(dword, 6u);
}

TEST_F(LinuxRegisterSpaceTest, FilesStayOpenAfterFirstUse) {
  const fs::path msr = MakeMsrFile(0);
  const fs::path config = MakePciFunction("0000:7f:10.4");
  PutRaw<uint64_t>(msr, 0x0C00, 11);
  PutRaw<uint32_t>(config, 0xD8, 12);
  LinuxRegisterSpace space = MakeSpace();
  uint64_t value = 0;
  uint32_t dword = 0;
  ASSERT_TRUE(space.ReadMsr(0, 0x0C00, &value).ok());
  ASSERT_TRUE(space.ReadPci({0, 0x7f, 16, 4}, 0xD8, &dword).ok());
  // Opened once and kept: the names no longer matter.
  fs::remove(msr);
  fs::remove(config);
  value = 0;
  dword = 0;
  ASSERT_TRUE(space.ReadMsr(0, 0x0C00, &value).ok());
  ASSERT_TRUE(space.ReadPci({0, 0x7f, 16, 4}, 0xD8, &dword).ok());
  EXPECT_EQ(value, 11u);
  EXPECT_EQ(dword, 12u);
  ASSERT_TRUE(space.WriteMsr(0, 0x0C00, 13).ok());
  ASSERT_TRUE(space.ReadMsr(0, 0x0C00, &value).ok());
  EXPECT_EQ(value, 13u);
  // A new space opens afresh, and finds nothing.
  LinuxRegisterSpace fresh = MakeSpace();
  EXPECT_EQ(fresh.ReadMsr(0, 0x0C00, &value).code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(LinuxRegisterSpaceTest, ShortMsrReadIsDataLoss) {
  // The file ends 4 bytes into MSR 0x0C00.
  MakeMsrFile(0, "msr", 0x0C04);
  LinuxRegisterSpace space = MakeSpace();
  uint64_t value = 0xdead;
  const absl::Status partial = space.ReadMsr(0, 0x0C00, &value);
  EXPECT_EQ(partial.code(), absl::StatusCode::kDataLoss) << partial;
  EXPECT_THAT(common::StatusMessage(partial),
              AllOf(HasSubstr("MSR 0xc00"), HasSubstr("4 of 8")));
  const absl::Status beyond = space.ReadMsr(0, 0x0D00, &value);
  EXPECT_EQ(beyond.code(), absl::StatusCode::kDataLoss) << beyond;
  EXPECT_THAT(common::StatusMessage(beyond), HasSubstr("0 of 8"));
  EXPECT_EQ(value, 0xdeadu);  // untouched on error
}

// ---- PCI config -------------------------------------------------------------

TEST_F(LinuxRegisterSpaceTest, PciReadWriteRoundTrip) {
  const fs::path imc = MakePciFunction("0000:7f:10.4");
  const fs::path ha = MakePciFunction("0000:ff:0e.1");
  LinuxRegisterSpace space = MakeSpace();
  const PciAddress imc_fn{
      .segment = 0, .bus = 0x7f, .device = 16, .function = 4};
  const PciAddress ha_fn{
      .segment = 0, .bus = 0xff, .device = 14, .function = 1};
  // iMC channel 0's counter control 0 (0xD8).
  ASSERT_TRUE(space.WritePci(imc_fn, 0xD8, 0x00400304).ok());
  ASSERT_TRUE(space.WritePci(ha_fn, 0xD8, 0x00400101).ok());
  EXPECT_EQ(GetRaw<uint32_t>(imc, 0xD8), 0x00400304u);
  EXPECT_EQ(GetRaw<uint32_t>(ha, 0xD8), 0x00400101u);
  EXPECT_EQ(GetRaw<uint32_t>(imc, 0xD4), 0u);
  EXPECT_EQ(GetRaw<uint32_t>(imc, 0xDC), 0u);
  // Counter 0, low and high dwords (0xA0, 0xA4).
  PutRaw<uint32_t>(imc, 0xA0, 0x89abcdef);
  PutRaw<uint32_t>(imc, 0xA4, 0x00001234);
  uint32_t lo = 0;
  uint32_t hi = 0;
  ASSERT_TRUE(space.ReadPci(imc_fn, 0xA0, &lo).ok());
  ASSERT_TRUE(space.ReadPci(imc_fn, 0xA4, &hi).ok());
  EXPECT_EQ(lo, 0x89abcdefu);
  EXPECT_EQ(hi, 0x00001234u);
  ASSERT_TRUE(space.ReadPci(ha_fn, 0xD8, &lo).ok());
  EXPECT_EQ(lo, 0x00400101u);
  // The last dword of extended config space.
  ASSERT_TRUE(space.WritePci(imc_fn, 0xFFC, 0xa5a5a5a5).ok());
  ASSERT_TRUE(space.ReadPci(imc_fn, 0xFFC, &lo).ok());
  EXPECT_EQ(lo, 0xa5a5a5a5u);
}

TEST_F(LinuxRegisterSpaceTest, MissingPciFunctionIsNotFound) {
  MakePciFunction("0000:7f:10.4");
  LinuxRegisterSpace space = MakeSpace();
  uint32_t value = 0;
  const absl::Status s = space.ReadPci({0, 0x7f, 30, 4}, 0xD8, &value);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  EXPECT_THAT(common::StatusMessage(s),
              AllOf(HasSubstr("0000:7f:1e.4"), HasSubstr("lspci -d 8086:"),
                    HasSubstr("BIOS")));
  EXPECT_EQ(space.WritePci({0, 0x7f, 30, 4}, 0xD8, 1).code(),
            absl::StatusCode::kNotFound);
  // A function directory without a config file.
  fs::create_directories(pci_ / "0000:7f:10.5");
  const absl::Status t = space.ReadPci({0, 0x7f, 16, 5}, 0xD8, &value);
  EXPECT_EQ(t.code(), absl::StatusCode::kNotFound) << t;
  EXPECT_THAT(common::StatusMessage(t), HasSubstr("config"));
}

TEST_F(LinuxRegisterSpaceTest, BadPciArgumentsAreInvalid) {
  MakePciFunction("0000:7f:10.4");
  LinuxRegisterSpace space = MakeSpace();
  uint32_t value = 0;
  EXPECT_EQ(space.ReadPci({0, 0x7f, 16, 4}, 0xD9, &value).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(space.WritePci({0, 0x7f, 16, 4}, 0x1000, 0).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(space.ReadPci({0, 0x7f, 32, 0}, 0xD8, &value).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(space.ReadPci({0, 0x7f, 16, 8}, 0xD8, &value).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(LinuxRegisterSpaceTest, ShortPciReadIsDataLoss) {
  MakePciFunction("0000:7f:10.4", 256);  // legacy-sized config space
  LinuxRegisterSpace space = MakeSpace();
  uint32_t value = 0;
  EXPECT_TRUE(space.ReadPci({0, 0x7f, 16, 4}, 0xFC, &value).ok());
  const absl::Status s = space.ReadPci({0, 0x7f, 16, 4}, 0x100, &value);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_THAT(common::StatusMessage(s), HasSubstr("0 of 4"));
}

TEST_F(LinuxRegisterSpaceTest, ReadOnlyPciConfigBehavesLikeNonRootSysfs) {
  // sysfs lets a non-root reader see the first 64 bytes and nothing more.
  const fs::path config = MakePciFunction("0000:7f:10.4", 64);
  PutRaw<uint32_t>(config, 0, 0x0eb48086);
  if (!MakeReadOnly(config)) {
    GTEST_SKIP() << "running with the privilege to write any file, and "
                 << kReadOnlySysfsFile << " is not there to stand in for a "
                 << "read-only config file";
  }
  LinuxRegisterSpace space = MakeSpace();
  const PciAddress fn{.segment = 0, .bus = 0x7f, .device = 16, .function = 4};
  uint32_t value = 0;
  EXPECT_TRUE(space.ReadPci(fn, 0, &value).ok());
  if (!fs::is_symlink(config)) {
    EXPECT_EQ(value, 0x0eb48086u);
  }
  const absl::Status read = space.ReadPci(fn, 0xD8, &value);
  EXPECT_EQ(read.code(), absl::StatusCode::kPermissionDenied) << read;
  EXPECT_THAT(common::StatusMessage(read), HasSubstr("64 bytes"));
  const absl::Status write = space.WritePci(fn, 0xD8, 0x00400304);
  EXPECT_EQ(write.code(), absl::StatusCode::kPermissionDenied) << write;
  EXPECT_THAT(common::StatusMessage(write),
              AllOf(HasSubstr("CAP_SYS_ADMIN"), HasSubstr("0000:7f:10.4")));
}

TEST_F(LinuxRegisterSpaceTest, ManyPciFunctionsStayOpenAndCorrect) {
  // More functions than the lock-free table holds: the rest overflow into
  // the locked map and must read the same.
  constexpr int kFunctions = 400;
  std::vector<PciAddress> fns;
  for (int i = 0; i < kFunctions; ++i) {
    const PciAddress fn{.segment = static_cast<uint16_t>(i / 256),
                        .bus = static_cast<uint8_t>(i % 256),
                        .device = static_cast<uint8_t>(i % 32),
                        .function = static_cast<uint8_t>(i % 8)};
    PutRaw<uint32_t>(MakePciFunction(fn.ToString(), 8), 4,
                     0x1000u + static_cast<uint32_t>(i));
    fns.push_back(fn);
  }
  LinuxRegisterSpace space = MakeSpace();
  for (int pass = 0; pass < 2; ++pass) {
    for (int i = 0; i < kFunctions; ++i) {
      uint32_t value = 0;
      ASSERT_TRUE(space.ReadPci(fns[i], 4, &value).ok()) << fns[i].ToString();
      EXPECT_EQ(value, 0x1000u + static_cast<uint32_t>(i));
    }
  }
}

// ---- ReadMsrBatch -----------------------------------------------------------

class MsrBatchTest : public LinuxRegisterSpaceTest {
 protected:
  static constexpr int kMsrs = 320;

  void SetUp() override {
    LinuxRegisterSpaceTest::SetUp();
    // What CPUs 0 and 1 hold, both behind dev/cpu/N/msr and where the fake
    // msr-safe reads them.
    for (int cpu = 0; cpu < 2; ++cpu) {
      const fs::path msr = MakeMsrFile(cpu);
      const fs::path data = root_ / "data" / std::to_string(cpu) / "msr";
      fs::create_directories(data.parent_path());
      fs::copy_file(msr, data);
      for (int i = 0; i < kMsrs; ++i) {
        PutRaw<uint64_t>(msr, Msr(i), Expected(cpu, Msr(i)));
        PutRaw<uint64_t>(data, Msr(i), Expected(cpu, Msr(i)));
      }
    }
    fake_.dev_cpu_root = dev_cpu_.string();
    fake_.data_root = (root_ / "data").string();
    fake_.cpus = {0, 1};
    g_fake_msr_safe.store(&fake_);
  }

  // MSRs 8 apart, so that the 8-byte values do not overlap in the files.
  static uint32_t Msr(int i) { return 0x0C00 + 8 * static_cast<uint32_t>(i); }
  static uint64_t Expected(int cpu, uint32_t msr) {
    return 0x5a00000000000000 | (uint64_t{static_cast<uint32_t>(cpu)} << 32) |
           msr;
  }

  std::vector<MsrRead> Reads(int count) const {
    std::vector<MsrRead> reads;
    for (int i = 0; i < count; ++i) {
      reads.push_back(MsrRead{.cpu = i % 2,
                              .msr = Msr(i),
                              .value = 0,
                              .status = absl::UnknownError("not read")});
    }
    return reads;
  }

  void ExpectValues(const std::vector<MsrRead>& reads) const {
    for (const MsrRead& r : reads) {
      ASSERT_TRUE(r.status.ok())
          << "cpu " << r.cpu << " msr " << r.msr << ": " << r.status;
      EXPECT_EQ(r.value, Expected(r.cpu, r.msr))
          << "cpu " << r.cpu << " msr " << r.msr;
    }
  }

  void MakeBatchDevice() { std::ofstream(dev_cpu_ / "msr_batch").close(); }
  void WriteVersion(std::string_view text) {
    std::ofstream(dev_cpu_ / "msr_safe_version") << text;
  }

  FakeMsrSafe fake_;
};

TEST_F(MsrBatchTest, ExpectedMatchesTheFiles) {
  LinuxRegisterSpace space = MakeSpace();
  uint64_t value = 0;
  ASSERT_TRUE(space.ReadMsr(1, Msr(3), &value).ok());
  EXPECT_EQ(value, Expected(1, Msr(3)));
  EXPECT_NE(Expected(0, Msr(3)), Expected(1, Msr(3)));
}

TEST_F(MsrBatchTest, WithoutMsrSafeReadsOneByOne) {
  LinuxRegisterSpace space = MakeSpace();
  EXPECT_FALSE(space.uses_msr_batch());
  std::vector<MsrRead> reads = Reads(5);
  ASSERT_TRUE(space.ReadMsrBatch(reads).ok());
  ExpectValues(reads);
  EXPECT_FALSE(space.uses_msr_batch());
  EXPECT_EQ(fake_.batch_requests, 0);
}

TEST_F(MsrBatchTest, EachReadHasItsOwnStatusAndTheFirstErrorIsReturned) {
  LinuxRegisterSpace space = MakeSpace();
  std::vector<MsrRead> reads = Reads(4);
  reads[1].cpu = 9;  // no such CPU
  reads[3].cpu = 8;
  const absl::Status s = space.ReadMsrBatch(reads);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  EXPECT_THAT(common::StatusMessage(s), HasSubstr("CPU 9"));
  EXPECT_TRUE(reads[0].status.ok());
  EXPECT_EQ(reads[0].value, Expected(0, Msr(0)));
  EXPECT_EQ(reads[1].status.code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(reads[2].status.ok());
  EXPECT_EQ(reads[2].value, Expected(0, Msr(2)));
  EXPECT_THAT(common::StatusMessage(reads[3].status), HasSubstr("CPU 8"));
}

TEST_F(MsrBatchTest, BatchDeviceThatRefusesTheIoctlFallsBackForGood) {
  // A plain file where msr_batch should be: the kernel says ENOTTY.
  MakeBatchDevice();
  LinuxRegisterSpace space = MakeSpace();
  std::vector<MsrRead> reads = Reads(6);
  ASSERT_TRUE(space.ReadMsrBatch(reads).ok());
  ExpectValues(reads);
  EXPECT_FALSE(space.uses_msr_batch());
  EXPECT_EQ(fake_.batch_requests, 1);
  // Not tried again.
  reads = Reads(6);
  ASSERT_TRUE(space.ReadMsrBatch(reads).ok());
  ExpectValues(reads);
  EXPECT_EQ(fake_.batch_requests, 1);
}

TEST_F(MsrBatchTest, ReadsThroughMsrSafeInChunks) {
  MakeBatchDevice();
  WriteVersion("1.7.0\n");
  fake_.serve = true;
  // Only msr-safe's batch device can answer: no per-CPU files.
  fs::remove(dev_cpu_ / "0" / "msr");
  fs::remove(dev_cpu_ / "1" / "msr");
  LinuxRegisterSpace space = MakeSpace();
  EXPECT_FALSE(space.uses_msr_batch());
  std::vector<MsrRead> reads = Reads(300);
  ASSERT_TRUE(space.ReadMsrBatch(reads).ok());
  ExpectValues(reads);
  EXPECT_TRUE(space.uses_msr_batch());
  EXPECT_EQ(fake_.batch_requests, 2);  // 256 + 44
  EXPECT_THAT(fake_.versions_seen,
              ::testing::Each((1u << 16) | (7u << 8) | 0u));
  // Again, with the device already open.
  reads = Reads(kMsrs);
  ASSERT_TRUE(space.ReadMsrBatch(reads).ok());
  ExpectValues(reads);
  EXPECT_EQ(fake_.batch_requests, 4);
  std::vector<MsrRead> none;
  EXPECT_TRUE(space.ReadMsrBatch(none).ok());
  EXPECT_EQ(fake_.batch_requests, 4);
}

TEST_F(MsrBatchTest, PassesTheLoadedMsrSafeVersion) {
  MakeBatchDevice();
  WriteVersion("2.0.0");
  fake_.serve = true;
  fake_.module_version = 2u << 16;
  LinuxRegisterSpace space = MakeSpace();
  std::vector<MsrRead> reads = Reads(3);
  ASSERT_TRUE(space.ReadMsrBatch(reads).ok());
  ExpectValues(reads);
  EXPECT_TRUE(space.uses_msr_batch());
  EXPECT_THAT(fake_.versions_seen, ::testing::ElementsAre(2u << 16));
}

TEST_F(MsrBatchTest, VersionRefusedFallsBackToOneByOne) {
  // msr_safe_version unreadable (it is root-only): version 0 is sent, which
  // msr-safe 2.0 refuses as a whole.
  MakeBatchDevice();
  fake_.serve = true;
  fake_.module_version = 2u << 16;
  LinuxRegisterSpace space = MakeSpace();
  std::vector<MsrRead> reads = Reads(3);
  ASSERT_TRUE(space.ReadMsrBatch(reads).ok());
  ExpectValues(reads);
  EXPECT_FALSE(space.uses_msr_batch());
  EXPECT_THAT(fake_.versions_seen, ::testing::ElementsAre(0u));
}

TEST_F(MsrBatchTest, UnknownMsrSafeMajorVersionIsNotUsed) {
  MakeBatchDevice();
  WriteVersion("3.0.0\n");
  fake_.serve = true;
  LinuxRegisterSpace space = MakeSpace();
  std::vector<MsrRead> reads = Reads(3);
  ASSERT_TRUE(space.ReadMsrBatch(reads).ok());
  ExpectValues(reads);
  EXPECT_FALSE(space.uses_msr_batch());
  EXPECT_EQ(fake_.batch_requests, 0);
}

TEST_F(MsrBatchTest, AllowlistRefusalFailsOnlyThatRead) {
  MakeBatchDevice();
  fake_.serve = true;
  fake_.not_allowed = {Msr(2)};
  LinuxRegisterSpace space = MakeSpace();
  std::vector<MsrRead> reads = Reads(5);
  const absl::Status s = space.ReadMsrBatch(reads);
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied) << s;
  EXPECT_THAT(common::StatusMessage(s),
              AllOf(HasSubstr("0xc10"), HasSubstr("msr_allowlist")));
  EXPECT_TRUE(space.uses_msr_batch());
  // msr-safe ran none of them; the others were read one by one.
  for (int i : {0, 1, 3, 4}) {
    ASSERT_TRUE(reads[i].status.ok()) << i << ": " << reads[i].status;
    EXPECT_EQ(reads[i].value, Expected(reads[i].cpu, reads[i].msr));
  }
  EXPECT_EQ(reads[2].status.code(), absl::StatusCode::kPermissionDenied);
}

TEST_F(MsrBatchTest, PerOperationErrorsMapToStatuses) {
  MakeBatchDevice();
  fake_.serve = true;
  fake_.faulting = {Msr(3)};
  LinuxRegisterSpace space = MakeSpace();
  std::vector<MsrRead> reads = Reads(5);
  const absl::Status s = space.ReadMsrBatch(reads);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_THAT(common::StatusMessage(s), HasSubstr("does not have MSR 0xc18"));
  for (int i : {0, 1, 2, 4}) {
    ASSERT_TRUE(reads[i].status.ok()) << i << ": " << reads[i].status;
    EXPECT_EQ(reads[i].value, Expected(reads[i].cpu, reads[i].msr));
  }
  EXPECT_EQ(reads[3].status.code(), absl::StatusCode::kFailedPrecondition);

  // A CPU msr-safe does not know: the whole batch is refused by its checks.
  fake_.faulting.clear();
  reads = Reads(3);
  reads[2].cpu = 5;
  const absl::Status t = space.ReadMsrBatch(reads);
  EXPECT_EQ(t.code(), absl::StatusCode::kNotFound) << t;
  EXPECT_THAT(common::StatusMessage(t), HasSubstr("CPU 5"));
  EXPECT_TRUE(reads[0].status.ok());
  EXPECT_EQ(reads[0].value, Expected(0, Msr(0)));
  EXPECT_TRUE(reads[1].status.ok());
}

// ---- threads ----------------------------------------------------------------

TEST_F(LinuxRegisterSpaceTest, ConcurrentAccessIsConsistent) {
  constexpr int kCpus = 4;
  constexpr int kThreads = 8;
  std::vector<fs::path> msr;
  for (int cpu = 0; cpu < kCpus; ++cpu) {
    msr.push_back(MakeMsrFile(cpu));
    for (uint32_t m = 0x0D00; m < 0x0D00 + 0x20 * 15; m += 8) {
      PutRaw<uint64_t>(msr[cpu], m, (uint64_t{m} << 16) | cpu);
    }
  }
  const fs::path config = MakePciFunction("0000:7f:10.4");
  for (uint32_t off = 0; off < 0x100; off += 4) {
    PutRaw<uint32_t>(config, off, 0xc0de0000u | off);
  }
  LinuxRegisterSpace space = MakeSpace();  // fresh: threads race to open
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const PciAddress fn{
          .segment = 0, .bus = 0x7f, .device = 16, .function = 4};
      for (int i = 0; i < 2000; ++i) {
        const int cpu = (t + i) % kCpus;
        const uint32_t m = 0x0D00 + 8 * static_cast<uint32_t>(i % 60);
        uint64_t value = 0;
        if (!space.ReadMsr(cpu, m, &value).ok() ||
            value != ((uint64_t{m} << 16) | static_cast<uint64_t>(cpu))) {
          ++failures;
        }
        const uint32_t off = 4 * static_cast<uint32_t>(i % 64);
        uint32_t dword = 0;
        if (!space.ReadPci(fn, off, &dword).ok() ||
            dword != (0xc0de0000u | off)) {
          ++failures;
        }
        // Each thread owns one MSR (0x1000 + 8t) on each CPU.
        const uint32_t own = 0x1000 + 8 * static_cast<uint32_t>(t);
        const uint64_t stamp = (uint64_t{static_cast<uint32_t>(t)} << 32) |
                               static_cast<uint32_t>(i);
        if (!space.WriteMsr(cpu, own, stamp).ok() ||
            !space.ReadMsr(cpu, own, &value).ok() || value != stamp) {
          ++failures;
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

// ---- this machine -----------------------------------------------------------

TEST(LinuxRegisterSpaceThisMachineTest, DefaultPathsGiveAnswersNotCrashes) {
  LinuxRegisterSpace space;
  EXPECT_EQ(space.dev_cpu_root(), "/dev/cpu");
  EXPECT_EQ(space.pci_root(), "/sys/bus/pci/devices");
  uint64_t value = 0;
  const absl::Status s = space.ReadMsr(0, 0x0C00, &value);
  std::error_code ec;
  const bool has_msr =
      fs::exists("/dev/cpu/0/msr", ec) || fs::exists("/dev/cpu/0/msr_safe", ec);
  if (!has_msr) {
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
    EXPECT_THAT(common::StatusMessage(s), HasSubstr("modprobe msr"));
  } else if (!s.ok()) {
    // No privilege, or not an IvyTown (the MSR faults).
    EXPECT_THAT(s.code(),
                ::testing::AnyOf(absl::StatusCode::kPermissionDenied,
                                 absl::StatusCode::kFailedPrecondition))
        << s;
    EXPECT_THAT(common::StatusMessage(s), HasSubstr("/dev/cpu/0/msr"));
  }
  std::vector<MsrRead> reads(2);
  reads[0].msr = reads[1].msr = 0x0C00;
  reads[1].cpu = 1;
  const absl::Status batch = space.ReadMsrBatch(reads);
  EXPECT_EQ(batch.ok(), reads[0].status.ok() && reads[1].status.ok());
  EXPECT_EQ(reads[0].status.code(), s.code());

  // A PCI function no machine has.
  uint32_t dword = 0;
  const absl::Status pci = space.ReadPci({0xfffe, 0xfe, 31, 7}, 0xD8, &dword);
  EXPECT_EQ(pci.code(), absl::StatusCode::kNotFound) << pci;
  EXPECT_THAT(common::StatusMessage(pci),
              HasSubstr("/sys/bus/pci/devices/fffe:fe:1f.7"));
}

}  // namespace
}  // namespace uncore::registers
