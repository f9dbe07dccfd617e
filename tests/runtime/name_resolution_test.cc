// runtime::ResolveNames (sdk/runtime/name_resolution.h): one function turns
// the names a user writes into what a session programs, on IvyTown's model
// and on the tabled platforms (the Xeon 7500 here); and Session's
// simulator interface (SetSimulatedActivity) drives every simulator.
#include "sdk/runtime/name_resolution.h"

#include <unistd.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sdk/common/status_macros.h"
#include "sdk/runtime/session_internal.h"
#include "sdk/runtime/session_platform.h"
#include "uncore/region.h"
#include "uncore/session.h"

namespace uncore::runtime {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

SessionPlatform PlatformNamed(std::string_view name) {
  absl::StatusOr<SessionMachine> m =
      ReadSessionMachine(name, "sim", /*on_hardware=*/true);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? m->platform : SessionPlatform{};
}

TEST(ResolveNamesTest, IvyTownEventsAndMetricsDeduplicated) {
  NameRequest r;
  r.events = {"imc/CAS_COUNT.RD", "IMC/cas_count.rd", "metric/MEM_BW_TOTAL"};
  r.metrics = {"MEM_BW_TOTAL", "MEM_BW_READS"};
  absl::StatusOr<ResolvedNames> n =
      ResolveNames(PlatformNamed("ivytown"), r, nullptr);
  ASSERT_TRUE(n.ok()) << n.status();
  ASSERT_EQ(n->events.size(), n->event_infos.size());
  EXPECT_EQ(n->event_infos[0].canonical, "imc/CAS_COUNT.RD");
  EXPECT_FALSE(n->event_infos[0].from_metric);
  EXPECT_EQ(n->metrics.size(), 2u);  // MEM_BW_TOTAL once
  ASSERT_EQ(n->inputs.size(), 5u);
  EXPECT_EQ(n->inputs[1].canonical, "imc/CAS_COUNT.RD");
  EXPECT_EQ(n->inputs[1].index, 0);
  EXPECT_TRUE(n->inputs[2].is_metric);
  EXPECT_EQ(n->inputs[2].canonical, n->inputs[3].canonical);
  EXPECT_EQ(n->inputs[2].index, n->inputs[3].index);
  for (const ResolvedMetric& m : n->metrics) {
    EXPECT_EQ(m.event_index.size(), m.compiled.events.size());
    EXPECT_FALSE(m.resolution.has_value());
  }
}

TEST(ResolveNamesTest, ErrorsNameTheirList) {
  NameRequest r;
  r.events = {"wbox/UNCORE_CLOCK"};
  absl::StatusOr<ResolvedNames> n =
      ResolveNames(PlatformNamed("ivytown"), r, nullptr);
  ASSERT_FALSE(n.ok());
  EXPECT_THAT(common::StatusMessage(n.status()),
              AllOf(HasSubstr("events (UNCORE_EVENTS): "),
                    HasSubstr("unknown box 'wbox'")));
  r.events.clear();
  r.metrics = {"NO_SUCH_METRIC"};
  r.metrics_list = "-M";
  n = ResolveNames(PlatformNamed("nehalemex"), r, nullptr);
  ASSERT_FALSE(n.ok());
  EXPECT_THAT(common::StatusMessage(n.status()),
              AllOf(HasSubstr("-M: "), HasSubstr("NO_SUCH_METRIC")));
}

// The Xeon 7500's names: a vendor name with or without its box, the
// kernel's syntax, and the SDK's metric (its events by vendor names).
TEST(ResolveNamesTest, Xeon7500NamesOnBothVariants) {
  for (const char* platform : {"nehalemex", "westmereex"}) {
    SCOPED_TRACE(platform);
    NameRequest r;
    r.events = {"wbox/UNCORE_CLOCK", "UNCORE_CLOCK"};
    r.metrics = {"MEM_BW_TOTAL"};
    r.backend = "sim";
    absl::StatusOr<ResolvedNames> n =
        ResolveNames(PlatformNamed(platform), r, nullptr);
    ASSERT_TRUE(n.ok()) << n.status();
    EXPECT_EQ(n->event_infos[0].canonical, "UNCORE_CLOCK");
    EXPECT_EQ(n->event_infos[0].spec, "wbox/UNCORE_CLOCK");
    EXPECT_EQ(n->inputs[1].index, 0);  // the same event
    ASSERT_EQ(n->metrics.size(), 1u);
    EXPECT_TRUE(n->metrics[0].resolution.has_value());
    EXPECT_EQ(n->inputs[2].canonical, "metric/MEM_BW_TOTAL");
    EXPECT_GE(n->events.size(), 3u);  // the clock and the memory events
    for (size_t i = 1; i < n->event_infos.size(); ++i) {
      EXPECT_TRUE(n->event_infos[i].from_metric);
    }
  }
}

// Session::SetSimulatedActivity drives the Xeon 7500 / E7 simulators as it
// does IvyTown's: each phase its own bandwidth, a compute phase ~0.
TEST(SimulatedActivityTest, EverySimulatorFollowsTheProgram) {
  for (const char* platform : {"ivytown", "nehalemex", "westmereex"}) {
    SCOPED_TRACE(platform);
    SessionOptions o;
    o.platform = platform;
    o.backend = "sim";
    o.metrics = {"MEM_BW_TOTAL"};
    o.output = "";
    absl::StatusOr<std::unique_ptr<Session>> s = Session::Start(o);
    ASSERT_TRUE(s.ok()) << s.status();
    ASSERT_NE(SimulatedActivityOf(**s), nullptr);
    const double rates[] = {12e9, 3e9, 0};
    const char* names[] = {"fast", "slow", "compute"};
    for (int i = 0; i < 3; ++i) {
      (*s)->SetSimulatedActivity(rates[i]);
      (*s)->AdvanceSimulation();
      UNCORE_REGION(names[i]);
      usleep(20'000);
    }
    const Results r = (*s)->Collect();
    ASSERT_TRUE((*s)->Stop().ok());
    ASSERT_EQ(r.regions.size(), 3u);
    for (int i = 0; i < 3; ++i) {
      SCOPED_TRACE(names[i]);
      ASSERT_EQ(r.regions[i].metrics.size(), 1u);
      const double bw = r.regions[i].metrics[0].value;
      if (rates[i] == 0) {
        EXPECT_LT(bw, 1e6);
      } else {
        EXPECT_NEAR(bw, rates[i], rates[i] * 0.1);
      }
    }
  }
}

// A session that serves its counters to other processes (node sharing)
// still takes the program's activity.
TEST(SimulatedActivityTest, ASharingSessionFollowsTheProgram) {
  SessionOptions o;
  o.platform = "nehalemex";
  o.backend = "sim";
  o.metrics = {"MEM_BW_TOTAL"};
  o.output = "";
  o.share_counters_as = "activity-test-" + std::to_string(getpid());
  absl::StatusOr<std::unique_ptr<Session>> s = Session::Start(o);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_NE(SimulatedActivityOf(**s), nullptr);
  (*s)->SetSimulatedActivity(0);
  {
    UNCORE_REGION("compute");
    usleep(20'000);
  }
  const Results r = (*s)->Collect();
  ASSERT_TRUE((*s)->Stop().ok());
  ASSERT_EQ(r.regions.size(), 1u);
  ASSERT_EQ(r.regions[0].metrics.size(), 1u);
  EXPECT_LT(r.regions[0].metrics[0].value, 1e6);
}

// Without demo traffic nothing moves by itself: no activity to drive.
TEST(SimulatedActivityTest, NoneWithoutDemoTraffic) {
  SessionOptions o;
  o.platform = "nehalemex";
  o.backend = "sim";
  o.sim_demo_traffic = false;
  o.metrics = {"MEM_BW_TOTAL"};
  o.output = "";
  absl::StatusOr<std::unique_ptr<Session>> s = Session::Start(o);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(SimulatedActivityOf(**s), nullptr);
  (*s)->SetSimulatedActivity(1e9);  // does nothing
  ASSERT_TRUE((*s)->Stop().ok());
}

}  // namespace
}  // namespace uncore::runtime
