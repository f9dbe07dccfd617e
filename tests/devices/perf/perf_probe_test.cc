// ProbePerf on the fixture sysfs trees (tests/devices/perf/fixtures) with
// temporary perf_event_paranoid and /proc/self/status files.  The trials
// (real perf_event_open calls) are left off: run_trials = false.
#include "sdk/devices/perf/perf_probe.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sdk/devices/perf/pmu_discovery.h"

namespace uncore::devices::perf {
namespace {

namespace fs = std::filesystem;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::string Fixture(std::string_view name) {
  return std::string(UNCORE_PERF_FIXTURES) + "/" + std::string(name);
}

class PerfProbeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern =
        (fs::temp_directory_path() / "uncore_perf_probe_XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr) << pattern;
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }

  // A process with uid `uid` and CapEff `cap_eff` (hex).
  ProcessPrivileges Privileges(int uid, const std::string& cap_eff) {
    return ReadProcessPrivileges(
        Write("status", "Name:\tx\nUid:\t" + std::to_string(uid) + "\t" +
                            std::to_string(uid) + "\t0\t0\nCapEff:\t" +
                            cap_eff + "\n"));
  }

  PerfProbeOptions Options(std::string_view fixture, int paranoid,
                           ProcessPrivileges privileges) {
    PerfProbeOptions o;
    o.sysfs_root = Fixture(fixture);
    o.paranoid_path = Write("paranoid", std::to_string(paranoid) + "\n");
    o.privileges = privileges;
    o.run_trials = false;
    return o;
  }

  std::string dir_;
};

TEST_F(PerfProbeTest, ReadsUidAndCapabilities) {
  const ProcessPrivileges p = Privileges(1000, "0000004000000000");
  EXPECT_EQ(p.uid, 1000);
  EXPECT_FALSE(p.root());
  EXPECT_TRUE(p.Cap(kCapPerfmon));
  EXPECT_FALSE(p.Cap(kCapSysAdmin));
  EXPECT_EQ(p.perfmon_capable(), p.kernel_knows_perfmon);
  EXPECT_FALSE(p.kernel.empty());

  const ProcessPrivileges root = Privileges(0, "000001ffffffffff");
  EXPECT_TRUE(root.root());
  EXPECT_TRUE(root.perfmon_capable());
}

TEST_F(PerfProbeTest, MissingStatusFileFallsBackToTheEffectiveUid) {
  const ProcessPrivileges p = ReadProcessPrivileges(dir_ + "/missing");
  EXPECT_EQ(p.uid, static_cast<int>(::geteuid()));
  EXPECT_FALSE(p.cap_eff.has_value());
  EXPECT_FALSE(p.perfmon_capable());
}

TEST_F(PerfProbeTest, IvyTownWithoutPrivilege) {
  const PerfProbe p =
      ProbePerf(Options("ivt2s", 2, Privileges(1000, "0000000000000000")));
  EXPECT_TRUE(p.pmu_folder);
  EXPECT_THAT(p.uncore_pmus, Contains("uncore_imc_0"));
  EXPECT_THAT(p.uncore_pmus, Contains("uncore_ubox"));
  std::vector<std::string> others;
  for (const OtherPmu& o : p.other_pmus) others.push_back(o.name);
  EXPECT_THAT(others, Contains("msr"));
  EXPECT_THAT(others, ::testing::Not(Contains("software")));
  EXPECT_EQ(p.paranoid, 2);
  EXPECT_EQ(p.permission, PerfReason::kNoPermission);
  EXPECT_THAT(p.permission_fix, HasSubstr("cap_perfmon"));
  EXPECT_THAT(p.permission_fix, HasSubstr("perf_event_paranoid=0"));
  // No trial was run: the uncore's reason is the trial's, not tried.
  EXPECT_FALSE(p.uncore_trial.tried());
  EXPECT_EQ(p.uncore_reason, PerfReason::kNotTried);
  EXPECT_FALSE(p.uncore_usable());
  EXPECT_FALSE(p.other_usable());
}

TEST_F(PerfProbeTest, ParanoidZeroAllowsAnyone) {
  const PerfProbe p =
      ProbePerf(Options("ivt2s", 0, Privileges(1000, "0000000000000000")));
  EXPECT_EQ(p.permission, PerfReason::kOk);
  EXPECT_THAT(p.permission_fix, IsEmpty());
  EXPECT_THAT(p.permission_detail, HasSubstr("any user"));
}

TEST_F(PerfProbeTest, CapPerfmonOrSysAdminAllows) {
  const PerfProbe admin =
      ProbePerf(Options("ivt2s", 2, Privileges(1000, "0000000000200000")));
  EXPECT_EQ(admin.permission, PerfReason::kOk);
  EXPECT_THAT(admin.permission_detail, HasSubstr("CAP_SYS_ADMIN"));
}

TEST_F(PerfProbeTest, EpycHasNoUncorePmus) {
  const PerfProbe p =
      ProbePerf(Options("epyc", 0, Privileges(0, "000001ffffffffff")));
  EXPECT_TRUE(p.pmu_folder);
  EXPECT_THAT(p.uncore_pmus, IsEmpty());
  EXPECT_EQ(p.uncore_reason, PerfReason::kNoUncorePmus);
  EXPECT_EQ(PerfReasonName(p.uncore_reason), "no_uncore_pmus");
}

TEST_F(PerfProbeTest, NoPmuFolder) {
  PerfProbeOptions o = Options("ivt2s", 0, Privileges(0, "0"));
  o.sysfs_root = dir_ + "/no-sysfs";
  o.paranoid_path = dir_ + "/no-paranoid";
  const PerfProbe p = ProbePerf(o);
  EXPECT_FALSE(p.pmu_folder);
  EXPECT_FALSE(p.pmu_folder_error.empty());
  EXPECT_EQ(p.uncore_reason, PerfReason::kNoPmuFolder);
  EXPECT_EQ(p.permission, PerfReason::kParanoidUnreadable);
  EXPECT_FALSE(p.permission_fix.empty());
  EXPECT_THAT(PerfFix(PerfReason::kNoPmuFolder, "", o.sysfs_root),
              HasSubstr("CONFIG_PERF_EVENTS"));
}

TEST_F(PerfProbeTest, TheUncoreTrialEventIsTheImcClockticks) {
  absl::StatusOr<PmuCatalog> ivt = DiscoverPmus(Fixture("ivt2s"));
  ASSERT_TRUE(ivt.ok()) << ivt.status();
  EXPECT_EQ(UncoreTrialSpec(*ivt), "uncore_imc_0/clockticks/");
  absl::StatusOr<PmuCatalog> epyc = DiscoverPmus(Fixture("epyc"));
  ASSERT_TRUE(epyc.ok()) << epyc.status();
  EXPECT_EQ(UncoreTrialSpec(*epyc), "");
}

TEST(PerfReasonTest, FromStatusCodes) {
  EXPECT_EQ(PerfReasonFromStatus(absl::OkStatus()), PerfReason::kOk);
  EXPECT_EQ(PerfReasonFromStatus(absl::PermissionDeniedError("x")),
            PerfReason::kNoPermission);
  EXPECT_EQ(PerfReasonFromStatus(absl::UnavailableError("x")),
            PerfReason::kBusy);
  EXPECT_EQ(PerfReasonFromStatus(absl::ResourceExhaustedError("x")),
            PerfReason::kTooManyFiles);
  EXPECT_EQ(PerfReasonFromStatus(absl::FailedPreconditionError("x")),
            PerfReason::kCpuOffline);
  EXPECT_EQ(PerfReasonFromStatus(absl::InvalidArgumentError("x")),
            PerfReason::kRefused);
}

TEST(PerfReasonTest, EveryFailureHasAFix) {
  for (PerfReason r :
       {PerfReason::kNoPmuFolder, PerfReason::kNoUncorePmus,
        PerfReason::kParanoidUnreadable, PerfReason::kNoPermission,
        PerfReason::kBusy, PerfReason::kTooManyFiles, PerfReason::kCpuOffline,
        PerfReason::kRefused}) {
    EXPECT_FALSE(PerfFix(r, "msr/tsc/").empty()) << PerfReasonName(r);
  }
  EXPECT_THAT(PerfFix(PerfReason::kRefused, "msr/tsc/"), HasSubstr("msr/tsc/"));
  EXPECT_TRUE(PerfFix(PerfReason::kOk, "msr/tsc/").empty());
}

}  // namespace
}  // namespace uncore::devices::perf
