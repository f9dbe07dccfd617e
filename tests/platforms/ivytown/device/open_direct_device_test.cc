#include "sdk/platforms/ivytown/device/open_direct_device.h"

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sdk/common/status_macros.h"

namespace uncore::devices {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// tests/machine/fixtures: the cpuinfo of an IvyTown, a Haswell-EP and an
// EPYC machine.
std::string Fixture(std::string_view relative) {
  return std::string(UNCORE_MACHINE_FIXTURES) + "/" + std::string(relative);
}

TEST(CheckIvyTownCpuTest, IvyTownIsAccepted) {
  const absl::Status s = CheckIvyTownCpu(Fixture("ivt2s/cpuinfo"));
  EXPECT_TRUE(s.ok()) << s;
}

TEST(CheckIvyTownCpuTest, OtherCpusAreRefusedNamingWhatWasFound) {
  const absl::Status epyc = CheckIvyTownCpu(Fixture("epyc/cpuinfo"));
  EXPECT_EQ(epyc.code(), absl::StatusCode::kFailedPrecondition) << epyc;
  EXPECT_THAT(common::StatusMessage(epyc),
              AllOf(HasSubstr("not an IvyTown CPU"),
                    HasSubstr("AuthenticAMD family 23 model 0x31"),
                    HasSubstr("model 0x3e"), HasSubstr("UNCORE_BACKEND=perf")));
  const absl::Status hsx = CheckIvyTownCpu(Fixture("haswell_ep/cpuinfo"));
  EXPECT_EQ(hsx.code(), absl::StatusCode::kFailedPrecondition) << hsx;
  EXPECT_THAT(common::StatusMessage(hsx),
              HasSubstr("GenuineIntel family 6 model 0x3f"));
}

TEST(CheckIvyTownCpuTest, UnreadableCpuinfoIsNotFound) {
  const absl::Status s = CheckIvyTownCpu("/nonexistent/cpuinfo");
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
}

TEST(CheckIvyTownCpuTest, ThisMachineGivesAnAnswer) {
  const absl::Status cpu = CheckIvyTownCpu();
  if (!cpu.ok()) {
    EXPECT_EQ(cpu.code(), absl::StatusCode::kFailedPrecondition) << cpu;
    EXPECT_THAT(common::StatusMessage(cpu), HasSubstr("UNCORE_BACKEND=perf"));
  }
}

}  // namespace
}  // namespace uncore::devices
