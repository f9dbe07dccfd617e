// ProbeMsrAccess on temporary /dev/cpu trees: regular files stand in for the
// msr driver's devices (a read at offset N returns the file's bytes there).
#include "sdk/registers/msr_access_probe.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sdk/common/status_macros.h"
#include "sdk/registers/access_errors.h"

namespace uncore::registers {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

class MsrAccessProbeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern =
        (fs::temp_directory_path() / "uncore_msr_probe_XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr) << pattern;
    root_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  // <root>/<cpu>/<name> holding `bytes` bytes: the MSR at offset o reads
  // as o's bytes when the file is long enough.
  std::string MakeFile(int cpu, const std::string& name, size_t bytes) {
    const fs::path dir = fs::path(root_) / std::to_string(cpu);
    fs::create_directories(dir);
    const std::string path = (dir / name).string();
    std::ofstream out(path, std::ios::binary);
    for (size_t i = 0; i < bytes; ++i) out.put(static_cast<char>(i & 0xff));
    return path;
  }

  std::string root_;
};

TEST_F(MsrAccessProbeTest, NoCpuFoldersMeansNoDriver) {
  const MsrAccessProbe p = ProbeMsrAccess(root_);
  EXPECT_EQ(p.reason, MsrAccessReason::kNoDriver);
  EXPECT_FALSE(p.driver_loaded());
  EXPECT_EQ(p.msr_devices, 0);
  EXPECT_THAT(p.fix, HasSubstr("modprobe msr"));
  EXPECT_THAT(p.detail, HasSubstr("not loaded"));
  EXPECT_EQ(MsrAccessReasonName(p.reason), "no_driver");
}

TEST_F(MsrAccessProbeTest, CpuFoldersWithoutMsrFilesMeanNoDriver) {
  fs::create_directories(fs::path(root_) / "0");
  fs::create_directories(fs::path(root_) / "1");
  EXPECT_EQ(ProbeMsrAccess(root_).reason, MsrAccessReason::kNoDriver);
}

TEST_F(MsrAccessProbeTest, MissingRootMeansNoDriver) {
  EXPECT_EQ(ProbeMsrAccess(root_ + "/nowhere").reason,
            MsrAccessReason::kNoDriver);
}

TEST_F(MsrAccessProbeTest, ReadsTheMsrAtItsOffset) {
  MakeFile(0, "msr", 0x40);
  MakeFile(1, "msr", 0x40);
  const MsrAccessProbe p = ProbeMsrAccess(root_);
  ASSERT_EQ(p.reason, MsrAccessReason::kOk) << p.detail;
  EXPECT_TRUE(p.ok());
  EXPECT_EQ(p.msr_devices, 2);
  EXPECT_EQ(p.cpus, (std::vector<int>{0, 1}));
  EXPECT_EQ(p.cpu, 0);
  EXPECT_TRUE(p.opened_read_write);
  EXPECT_TRUE(p.read_ok);
  EXPECT_FALSE(p.msr_safe);
  EXPECT_EQ(p.value, 0x1716151413121110u);  // bytes 0x10..0x17
  EXPECT_THAT(p.fix, IsEmpty());
}

TEST_F(MsrAccessProbeTest, EmptyFileIsAShortRead) {
  MakeFile(0, "msr", 0);
  const MsrAccessProbe p = ProbeMsrAccess(root_);
  EXPECT_EQ(p.reason, MsrAccessReason::kShortRead);
  EXPECT_TRUE(p.opened_read_write);
  EXPECT_FALSE(p.read_ok);
  EXPECT_THAT(p.detail, HasSubstr("short read"));
  EXPECT_FALSE(p.fix.empty());
}

TEST_F(MsrAccessProbeTest, UsesMsrSafeWhenThereIsNoMsr) {
  MakeFile(3, "msr_safe", 0x40);
  const MsrAccessProbe p = ProbeMsrAccess(root_);
  ASSERT_EQ(p.reason, MsrAccessReason::kOk) << p.detail;
  EXPECT_TRUE(p.msr_safe);
  EXPECT_EQ(p.msr_devices, 0);
  EXPECT_EQ(p.msr_safe_devices, 1);
  EXPECT_EQ(p.cpu, 3);
  EXPECT_THAT(p.path, HasSubstr("msr_safe"));
}

TEST_F(MsrAccessProbeTest, AskedForACpuWithoutMsrFile) {
  MakeFile(0, "msr", 0x40);
  const MsrAccessProbe p = ProbeMsrAccess(root_, /*cpu=*/5);
  EXPECT_EQ(p.reason, MsrAccessReason::kNoSuchCpu);
  EXPECT_THAT(p.detail, HasSubstr("CPU 5"));
  EXPECT_FALSE(p.fix.empty());
}

TEST_F(MsrAccessProbeTest, FileWithoutPermissionIsNoPermission) {
  if (::geteuid() == 0) GTEST_SKIP() << "root opens files without permission";
  const std::string path = MakeFile(0, "msr", 0x40);
  ASSERT_EQ(::chmod(path.c_str(), 0), 0);
  const MsrAccessProbe p = ProbeMsrAccess(root_);
  EXPECT_EQ(p.reason, MsrAccessReason::kNoPermission);
  EXPECT_EQ(p.error, EACCES);
  EXPECT_THAT(p.fix, HasSubstr("CAP_SYS_RAWIO"));
}

TEST_F(MsrAccessProbeTest, ReadOnlyFileIsNoPermissionForAnUnprivilegedUser) {
  if (::geteuid() == 0) GTEST_SKIP() << "root opens read-only files";
  const std::string path = MakeFile(0, "msr", 0x40);
  ASSERT_EQ(::chmod(path.c_str(), 0444), 0);
  EXPECT_EQ(ProbeMsrAccess(root_).reason, MsrAccessReason::kNoPermission);
}

// As root, the same in a child that gives up root for nobody (65534).
TEST_F(MsrAccessProbeTest, FileWithoutPermissionIsNoPermissionForNobody) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to become nobody";
  const std::string path = MakeFile(0, "msr", 0x40);
  ASSERT_EQ(::chmod(path.c_str(), 0), 0);
  ASSERT_EQ(::chmod(root_.c_str(), 0755), 0);
  ASSERT_EQ(::chmod((fs::path(root_) / "0").c_str(), 0755), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(100);
    const MsrAccessProbe p = ProbeMsrAccess(root_);
    ::_exit(p.reason == MsrAccessReason::kNoPermission && p.error == EACCES &&
                    p.fix.find("CAP_SYS_RAWIO") != std::string::npos
                ? 0
                : 1 + static_cast<int>(p.reason));
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 100) GTEST_SKIP() << "cannot become nobody";
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "reason " << WEXITSTATUS(status) - 1 << " instead of kNoPermission";
}

TEST_F(MsrAccessProbeTest, AnMsrFolderCannotBeOpened) {
  fs::create_directories(fs::path(root_) / "0" / "msr");  // EISDIR
  const MsrAccessProbe p = ProbeMsrAccess(root_);
  EXPECT_EQ(p.reason, MsrAccessReason::kOpenFailed);
  EXPECT_EQ(p.error, EISDIR);
  EXPECT_FALSE(p.opened_read_write);
  EXPECT_FALSE(p.fix.empty());
}

TEST(AccessErrorsTest, StatusCodesOfTheErrnos) {
  EXPECT_EQ(MsrReadError(EIO, 0, 0x10, "/dev/cpu/0/msr", false).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(MsrReadError(EACCES, 0, 0x10, "/dev/cpu/0/msr", false).code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(MsrReadError(ENXIO, 0, 0x10, "/dev/cpu/0/msr", false).code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(MsrWriteError(EROFS, 0, 0x10, 1, "/dev/cpu/0/msr", false).code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(MsrBatchOpError(-EACCES, 0, 0xc00).code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(MsrBatchOpError(-EIO, 0, 0xc00).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(MsrShortReadError(3, 0, 0x10, "x").code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(PciIoError(EPERM, "read", 0xa0, "cfg").code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(PciIoError(ENODEV, "read", 0xa0, "cfg").code(),
            absl::StatusCode::kNotFound);
}

TEST(AccessErrorsTest, MessagesSayWhatToDo) {
  EXPECT_THAT(common::StatusMessage(
                  MsrOpenError("/nowhere", 0, "/nowhere/0/msr", ENOENT,
                               "/nowhere/0/msr_safe", ENOENT)),
              HasSubstr("modprobe msr"));
  EXPECT_THAT(common::StatusMessage(
                  MsrOpenError("/nowhere", 0, "/nowhere/0/msr", EACCES,
                               "/nowhere/0/msr_safe", ENOENT)),
              HasSubstr("CAP_SYS_RAWIO"));
  EXPECT_THAT(MsrPrivilegeFix("/dev/cpu/0/msr"), HasSubstr("/dev/cpu/0/msr"));
  EXPECT_EQ(DescribeCpus({0, 1, 2, 3}), "0-3");
  EXPECT_EQ(DescribeCpus({}), "none");
}

}  // namespace
}  // namespace uncore::registers
