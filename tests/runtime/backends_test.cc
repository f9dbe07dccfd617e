// The platforms the register engine serves (runtime::RegisterPlatforms):
// names, how sim and direct choose one, and that each opens the one engine
// on its simulator.
#include "sdk/runtime/backends.h"

#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sdk/common/status_macros.h"
#include "sdk/common/text.h"
#include "sdk/devices/device.h"
#include "sdk/devices/engine/register_engine.h"
#include "sdk/machine/topology.h"
#include "sdk/platforms/ivytown/backend/ivytown_platform.h"
#include "sdk/platforms/ivytown/model/identity.h"
#include "sdk/platforms/ivytown/sim/ivytown_uncore.h"
#include "sdk/platforms/nehalemex/model/box_descriptors.h"
#include "sdk/runtime/node_sharing.h"
#include "sdk/spec/event_spec.h"
#include "sdk/spec/platform_catalog.h"
#include "uncore/region.h"
#include "uncore/results.h"
#include "uncore/session.h"

namespace uncore::runtime {
namespace {

using ::testing::HasSubstr;

TEST(RegisterPlatformsTest, NamesAndAliasesAgreeWithTheCatalogs) {
  ASSERT_EQ(RegisterPlatforms().size(), 3u);
  EXPECT_EQ(FindRegisterPlatform(""), &RegisterPlatforms()[0]);
  EXPECT_EQ(FindRegisterPlatform("IVBEP")->name(), "ivytown");
  EXPECT_EQ(FindRegisterPlatform("xeon7500")->name(), "nehalemex");
  EXPECT_EQ(FindRegisterPlatform("nehalem-ex")->name(), "nehalemex");
  EXPECT_EQ(FindRegisterPlatform(" wsmex ")->name(), "westmereex");
  EXPECT_EQ(FindRegisterPlatform("xeone7")->name(), "westmereex");
  EXPECT_EQ(FindRegisterPlatform("sapphirerapids"), nullptr);
  for (const RegisterPlatform& p : RegisterPlatforms()) {
    const perfmon::Platform& id = p.identity();
    EXPECT_FALSE(id.title.empty());
    EXPECT_FALSE(p.snapshot_window.empty());
    EXPECT_NE(p.simulate, nullptr);
    EXPECT_NE(p.open_direct, nullptr);
    ASSERT_NE(p.describe_writes, nullptr);
    // describe --registers SPEC goes through the entry: the writes that
    // program one event of the platform, on one simulated socket.
    const absl::StatusOr<DescribedWrites> writes = p.describe_writes(
        p.name() == "ivytown" ? "ubox/UCLK" : "wbox/UNCORE_CLOCK");
    ASSERT_TRUE(writes.ok()) << p.name() << ": " << writes.status();
    EXPECT_FALSE(writes->writes.empty()) << p.name();
    EXPECT_FALSE(writes->header.empty()) << p.name();
    EXPECT_FALSE(p.describe_writes("no/SUCH_EVENT").ok()) << p.name();
    // The identity's CPUs are the ones open_direct accepts.
    ASSERT_EQ(id.cpus.size(), 1u) << id.name;
    machine::CpuIdentity cpu;
    cpu.vendor = std::string(id.cpus[0].vendor);
    cpu.family = id.cpus[0].family;
    cpu.model = id.cpus[0].model_lo;
    if (p.name() == "ivytown") {
      EXPECT_TRUE(cpu.IsOf(uncore::ivytown::Identity()));
      EXPECT_EQ(spec::FindPlatform("ivytown"), nullptr);  // no vendor table
      continue;
    }
    ASSERT_TRUE(nehalemex::VariantFromModel(cpu.family, cpu.model).has_value())
        << id.name;
    EXPECT_EQ(nehalemex::PlatformName(
                  *nehalemex::VariantFromModel(cpu.family, cpu.model)),
              p.name());
    // One identity: sessions (spec::FindPlatform) and the register
    // platforms answer to the same names.
    EXPECT_EQ(spec::FindPlatform(p.name()), &id);
    for (std::string_view alias : common::Split(id.aliases, ' ')) {
      EXPECT_EQ(FindRegisterPlatform(alias), &p) << alias;
      EXPECT_EQ(spec::FindPlatform(alias), &id) << alias;
    }
    EXPECT_EQ(nehalemex::VariantNamed(p.name()),
              nehalemex::VariantFromModel(cpu.family, cpu.model));
  }
}

spec::EventSpec Generic(std::string pmu, std::string event) {
  spec::EventSpec e;
  e.kind = spec::EventSpec::Kind::kGenericPerf;
  e.pmu = std::move(pmu);
  e.perf_terms = {{"event", 0xFF}};
  e.text = std::move(event);
  return e;
}

TEST(RegisterPlatformsTest, EachSimulatorRunsTheOneEngine) {
  for (const RegisterPlatform& p : RegisterPlatforms()) {
    BackendRequest request;
    request.name = "sim";
    request.platform = std::string(p.name());
    request.sim_sockets = 2;
    request.sim_demo_traffic = false;  // the engine itself is the device
    if (p.name() == "ivytown") {
      absl::StatusOr<spec::EventSpec> e = spec::ParseEventSpec("ubox/UCLK");
      ASSERT_TRUE(e.ok()) << e.status();
      request.program.events.push_back(*e);
    } else {
      request.program.events.push_back(
          Generic("uncore_wbox", "uncore_wbox/event=0xff/"));
    }
    absl::StatusOr<OpenedBackend> b = OpenBackend(std::move(request));
    ASSERT_TRUE(b.ok()) << p.name() << ": " << b.status();
    EXPECT_TRUE(b->backend->simulated());
    ASSERT_EQ(b->warnings.size(), 1u);
    EXPECT_THAT(b->warnings[0], HasSubstr("SIMULATED"));
    auto* engine =
        dynamic_cast<devices::engine::RegisterEngine*>(b->backend->device());
    ASSERT_NE(engine, nullptr) << p.name();
    EXPECT_TRUE(engine->programmed());
    EXPECT_EQ(engine->read_plan().size(), 2u) << p.name();  // one per socket
    devices::Snapshot s(engine->read_plan().size());
    EXPECT_TRUE(engine->TakeSnapshot(&s).ok());
    EXPECT_TRUE(b->backend->Stop().ok());
    EXPECT_FALSE(engine->programmed());
  }
}

TEST(RegisterPlatformsTest, APerfOnlyPlatformHasNoRegisterModel) {
  for (const char* backend : {"sim", "direct"}) {
    BackendRequest request;
    request.name = backend;
    request.platform = "sapphirerapids";
    request.program.events.push_back(
        Generic("uncore_imc", "uncore_imc/event=0x5/"));
    absl::StatusOr<OpenedBackend> b = OpenBackend(std::move(request));
    ASSERT_FALSE(b.ok());
    EXPECT_EQ(b.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(common::StatusMessage(b.status()),
                HasSubstr("register model of ivytown, nehalemex, westmereex "
                          "only; platform sapphirerapids is counted through "
                          "perf"));
  }
}

// The IvyTown simulator tests inject traffic into is reached through the
// platform's entry (ivytown::SimulatorOf), not the generic Backend: only
// IvyTown's `sim` backend has one, also while node sharing serves it.
TEST(RegisterPlatformsTest, OnlyIvyTownsSimBackendHasItsSimulator) {
  for (const RegisterPlatform& p : RegisterPlatforms()) {
    BackendRequest request;
    request.name = "sim";
    request.platform = std::string(p.name());
    request.sim_demo_traffic = false;
    request.program.events.push_back(
        p.name() == "ivytown"
            ? *spec::ParseEventSpec("ubox/UCLK")
            : Generic("uncore_wbox", "uncore_wbox/event=0xff/"));
    absl::StatusOr<OpenedBackend> b = OpenBackend(std::move(request));
    ASSERT_TRUE(b.ok()) << p.name() << ": " << b.status();
    sim::IvyTownUncore* simulator = ivytown::SimulatorOf(*b->backend);
    EXPECT_EQ(simulator != nullptr, p.name() == "ivytown") << p.name();
    if (p.name() != "ivytown") continue;
    absl::StatusOr<std::unique_ptr<Backend>> served = ServeBackend(
        std::move(b->backend), "backends-test-" + std::to_string(getpid()),
        {"ubox/UCLK"});
    ASSERT_TRUE(served.ok()) << served.status();
    EXPECT_EQ(ivytown::SimulatorOf(**served), simulator);
    EXPECT_TRUE((*served)->Stop().ok());
  }
  BackendRequest off;
  off.name = "off";
  absl::StatusOr<OpenedBackend> b = OpenBackend(std::move(off));
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(ivytown::SimulatorOf(*b->backend), nullptr);
}

// The sim backend's demo traffic (10 GB/s per socket, 2/3 reads) is brought
// up to each snapshot, to the nanosecond, and the snapshot's timestamp says
// when: the counts between two snapshots are the rate times the time
// between them, however short.  (The model moved in 1 ms steps on its own
// thread: a region of 167 us read 0, and 10 ms intervals read from 7.8 to
// 12.9 GB/s.)
constexpr double kDemoReadLinesPerNs = 10e9 * 2.0 / 3.0 / 64.0 / 1e9;

void Spin(std::chrono::microseconds d) {
  const auto end = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < end) {
  }
}

TEST(SimDemoTrafficTest, SnapshotsCountTheTrafficUpToTheirTimestamps) {
  BackendRequest request;
  request.name = "sim";
  request.sim_sockets = 1;
  absl::StatusOr<spec::EventSpec> e = spec::ParseEventSpec("imc/CAS_COUNT.RD");
  ASSERT_TRUE(e.ok()) << e.status();
  request.program.events.push_back(*e);
  absl::StatusOr<OpenedBackend> b = OpenBackend(std::move(request));
  ASSERT_TRUE(b.ok()) << b.status();
  devices::Device* device = b->backend->device();
  const size_t n = device->read_plan().size();  // the 8 channels
  auto lines = [&](const devices::Snapshot& s) {
    uint64_t sum = 0;
    for (size_t i = 0; i < n; ++i) sum += s.values[i];
    return static_cast<double>(sum);
  };
  devices::Snapshot before(n);
  devices::Snapshot after(n);
  for (const auto length :
       {std::chrono::microseconds(20), std::chrono::microseconds(167),
        std::chrono::microseconds(10000)}) {
    for (int i = 0; i < 5; ++i) {
      ASSERT_TRUE(device->TakeSnapshot(&before).ok());
      Spin(length);
      ASSERT_TRUE(device->TakeSnapshot(&after).ok());
      const double ns =
          static_cast<double>(after.timestamp_ns - before.timestamp_ns);
      ASSERT_GE(ns,
                static_cast<double>(std::chrono::nanoseconds(length).count()));
      // Whole lines per channel: each of the 8 may be one short or over.
      EXPECT_NEAR(lines(after) - lines(before), kDemoReadLinesPerNs * ns,
                  8.0 + 1e-6 * kDemoReadLinesPerNs * ns)
          << length.count() << " us spin, " << ns << " ns between snapshots";
    }
  }
  EXPECT_TRUE(b->backend->Stop().ok());
}

// Through a session: every region counts at least its own time's traffic
// (and its boundaries' snapshots: they are taken outside its wall time).
TEST(SimDemoTrafficTest, ShortRegionsAndEqualIntervalsSeeTheirOwnTraffic) {
  SessionOptions o;
  o.events = {"imc/CAS_COUNT.RD"};
  o.backend = "sim";
  absl::StatusOr<std::unique_ptr<Session>> session = Session::Start(o);
  ASSERT_TRUE(session.ok()) << session.status();
  for (int i = 0; i < 20; ++i) {
    {
      UncoreRegion r("short");
      Spin(std::chrono::microseconds(167));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  for (int i = 0; i < 10; ++i) {
    UncoreRegion r("interval" + std::to_string(i));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const Results results = (*session)->Collect();
  ASSERT_TRUE((*session)->Stop().ok());
  int intervals = 0;
  for (const RegionResult& r : results.regions) {
    // Per socket: every simulated socket has the same traffic.
    const double lines = static_cast<double>(r.inclusive[0].per_socket.at(0));
    const double own = kDemoReadLinesPerNs * static_cast<double>(r.wall_ns);
    EXPECT_GE(lines, 0.99 * own)
        << r.name << ": " << lines << " lines in " << r.wall_ns << " ns";
    if (r.name != "short") {
      ++intervals;
      // A snapshot's own time (under a sanitizer, on a loaded machine)
      // adds to the wall time's traffic, never half of it.
      EXPECT_LE(lines, 1.5 * own) << r.name;
    }
  }
  EXPECT_EQ(intervals, 10);
}

}  // namespace
}  // namespace uncore::runtime
