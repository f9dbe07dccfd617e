// What a perf snapshot costs in reads and which reads cross CPUs
// (read_locality.h): the classification by PMU name, the cost of plans on
// fixture sysfs trees written from the kernels' format attributes
// (tests/devices/perf/make_fixtures.py: ivt2s, Intel's uncore on two
// sockets; zen4x2, AMD's amd_l3/amd_df/amd_umc_N on two sockets), and, on
// this machine, msr/tsc/ read from its own CPU and from another, with the
// function-call interrupts (IPIs) the kernel counts in /proc/interrupts.
#include "sdk/devices/perf/read_locality.h"

#include <pthread.h>
#include <sched.h>

#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sdk/common/status_macros.h"
#include "sdk/devices/perf/perf_device.h"
#include "sdk/devices/perf/pmu_discovery.h"
#include "sdk/spec/event_spec.h"

namespace uncore::devices::perf {
namespace {

using ::testing::ElementsAre;

std::string Fixture(std::string_view name) {
  return std::string(UNCORE_PERF_FIXTURES) + "/" + std::string(name);
}

PmuCatalog Catalog(std::string_view name) {
  absl::StatusOr<PmuCatalog> c = DiscoverPmus(Fixture(name));
  EXPECT_TRUE(c.ok()) << common::StatusMessage(c.status());
  return c.ok() ? *std::move(c) : PmuCatalog{};
}

struct Planned {
  std::vector<PerfCounter> counters;
  std::vector<PerfGroupPlan> groups;
};

Planned Plan(std::initializer_list<std::string_view> specs,
             const PmuCatalog& pmus, std::vector<int> sockets = {}) {
  ProgramRequest request;
  for (std::string_view s : specs) {
    absl::StatusOr<spec::EventSpec> e = spec::ParseEventSpec(s);
    EXPECT_TRUE(e.ok()) << s << ": " << common::StatusMessage(e.status());
    if (e.ok()) request.events.push_back(*e);
  }
  request.sockets = std::move(sockets);
  absl::StatusOr<std::vector<PerfCounter>> c = PlanPerfCounters(request, pmus);
  EXPECT_TRUE(c.ok()) << common::StatusMessage(c.status());
  Planned p;
  if (c.ok()) p.counters = *std::move(c);
  p.groups = GroupPerfCounters(p.counters, /*allow_multiplexing=*/false);
  return p;
}

SnapshotReadCost Cost(const Planned& p, const PmuCatalog& pmus,
                      std::set<int> readers) {
  return CostOfSnapshot(p.groups, p.counters, pmus, readers);
}

TEST(PmuReadLocalityTest, ClassifiesByTheDriverBehindTheName) {
  for (std::string_view intel :
       {"uncore_imc_0", "uncore_cha_12", "uncore_cbox_3", "uncore_ubox",
        "uncore_imc_free_running_0", "uncore_type_0_1"}) {
    EXPECT_EQ(PmuReadLocality(intel), ReadLocality::kPackage) << intel;
  }
  for (std::string_view per_cpu : {"amd_l3", "amd_df", "amd_umc_0",
                                   "amd_umc_11", "amd_nb", "amd_l2", "msr"}) {
    EXPECT_EQ(PmuReadLocality(per_cpu), ReadLocality::kEventCpu) << per_cpu;
  }
  for (std::string_view other :
       {"power", "cstate_pkg", "software", "cpu", "amd_l3x", "msrx", "amd_umc_",
        "amd_umc_x", "ibs_op", "uncore"}) {
    EXPECT_EQ(PmuReadLocality(other), ReadLocality::kUnknown) << other;
  }
  EXPECT_EQ(ReadLocalityName(ReadLocality::kPackage), "package");
  EXPECT_EQ(ReadLocalityName(ReadLocality::kEventCpu), "event_cpu");
  EXPECT_EQ(ReadLocalityName(ReadLocality::kUnknown), "unknown");
}

TEST(PmuReadLocalityTest, EveryPmuOfTheFixturesIsClassified) {
  const PmuCatalog ivt = Catalog("ivt2s");
  ASSERT_FALSE(ivt.pmus.empty());
  for (const Pmu& p : ivt.pmus) {
    const ReadLocality want = p.name.starts_with("uncore_")
                                  ? ReadLocality::kPackage
                              : p.name == "msr" ? ReadLocality::kEventCpu
                                                : ReadLocality::kUnknown;
    EXPECT_EQ(PmuReadLocality(p.name), want) << p.name;
  }
  const PmuCatalog zen = Catalog("zen4x2");
  std::vector<std::string> names;
  for (const Pmu& p : zen.pmus) {
    names.push_back(p.name);
    EXPECT_EQ(PmuReadLocality(p.name), ReadLocality::kEventCpu) << p.name;
  }
  EXPECT_THAT(names,
              ElementsAre("amd_df", "amd_l3", "amd_umc_0", "amd_umc_1", "msr"));
}

TEST(ReadCrossesCpusTest, PackageScopeIsLocalOnTheEventsSocketOnly) {
  EXPECT_FALSE(ReadCrossesCpus(ReadLocality::kPackage, 4, 1, 4, 1));
  EXPECT_FALSE(ReadCrossesCpus(ReadLocality::kPackage, 4, 1, 7, 1));
  EXPECT_TRUE(ReadCrossesCpus(ReadLocality::kPackage, 4, 1, 0, 0));
  // A reader whose socket is unknown (offline CPU) is not on the event's.
  EXPECT_TRUE(ReadCrossesCpus(ReadLocality::kPackage, 4, 1, 9, -1));
  for (ReadLocality l : {ReadLocality::kEventCpu, ReadLocality::kUnknown}) {
    EXPECT_FALSE(ReadCrossesCpus(l, 4, 1, 4, 1));
    EXPECT_TRUE(ReadCrossesCpus(l, 4, 1, 5, 1));
    EXPECT_TRUE(ReadCrossesCpus(l, 4, 1, 0, 0));
  }
}

TEST(CpuListTextTest, WritesTheKernelsSyntax) {
  EXPECT_EQ(CpuListText({}), "none");
  EXPECT_EQ(CpuListText({3}), "3");
  EXPECT_EQ(CpuListText({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
}

// Intel's uncore on two sockets: the cpumask "0,4" binds socket 0's events
// to CPU 0 and socket 1's to CPU 4; msr (no cpumask) goes to each socket's
// first CPU.
TEST(CostOfSnapshotTest, IntelUncoreIsLocalOnItsSocketMsrOnItsCpu) {
  const PmuCatalog pmus = Catalog("ivt2s");
  ASSERT_EQ(pmus.num_sockets, 2);
  const Planned p = Plan({"uncore_imc_0/cas_count_read/",
                          "uncore_imc_0/cas_count_write/", "msr/tsc/"},
                         pmus);
  // Two imc_0 groups (one per socket, both events in each) and two msr.
  ASSERT_EQ(p.groups.size(), 4u);

  const SnapshotReadCost on_cpu1 = Cost(p, pmus, {1});
  EXPECT_EQ(on_cpu1.reads, 4);
  ASSERT_EQ(on_cpu1.groups.size(), 4u);
  const GroupReadCost& imc0 = on_cpu1.groups[0];
  EXPECT_EQ(imc0.pmu, "uncore_imc_0");
  EXPECT_EQ(imc0.socket, 0);
  EXPECT_EQ(imc0.cpu, 0);
  EXPECT_EQ(imc0.locality, ReadLocality::kPackage);
  EXPECT_THAT(imc0.events, ElementsAre("uncore_imc_0/cas_count_read/",
                                       "uncore_imc_0/cas_count_write/"));
  EXPECT_EQ(imc0.verdict,
            "local on any CPU of socket 0 (CPUs 0-3); IPI from other sockets");
  EXPECT_EQ(imc0.crossing, Crossing::kNever);
  EXPECT_EQ(on_cpu1.groups[1].pmu, "uncore_imc_0");
  EXPECT_EQ(on_cpu1.groups[1].cpu, 4);
  EXPECT_EQ(on_cpu1.groups[1].crossing, Crossing::kAlways);
  EXPECT_EQ(on_cpu1.groups[2].pmu, "msr");
  EXPECT_EQ(on_cpu1.groups[2].cpu, 0);
  EXPECT_EQ(on_cpu1.groups[2].verdict, "IPI unless the reader runs on CPU 0");
  EXPECT_EQ(on_cpu1.groups[2].crossing, Crossing::kAlways);
  EXPECT_EQ(on_cpu1.groups[3].cpu, 4);
  EXPECT_EQ(on_cpu1.always_cross, 3);
  EXPECT_EQ(on_cpu1.never_cross, 1);
  EXPECT_EQ(on_cpu1.sometimes_cross, 0);

  // On CPU 0, socket 0's imc and CPU 0's msr are local.
  const SnapshotReadCost on_cpu0 = Cost(p, pmus, {0});
  EXPECT_EQ(on_cpu0.always_cross, 2);
  EXPECT_EQ(on_cpu0.never_cross, 2);

  // Free to run anywhere: every read is local from some CPUs only.
  const SnapshotReadCost anywhere = Cost(p, pmus, {0, 1, 2, 3, 4, 5, 6, 7});
  EXPECT_EQ(anywhere.sometimes_cross, 4);
  EXPECT_EQ(anywhere.groups[0].local_cpus, (std::set<int>{0, 1, 2, 3}));
  EXPECT_EQ(anywhere.groups[1].local_cpus, (std::set<int>{4, 5, 6, 7}));
  EXPECT_EQ(anywhere.groups[2].local_cpus, (std::set<int>{0}));
  EXPECT_EQ(anywhere.groups[3].local_cpus, (std::set<int>{4}));

  // One socket asked: half the reads.
  const Planned s1 = Plan({"uncore_imc_0/cas_count_read/"}, pmus, {1});
  const SnapshotReadCost on_socket1 = Cost(s1, pmus, {5, 6});
  EXPECT_EQ(on_socket1.reads, 1);
  EXPECT_EQ(on_socket1.never_cross, 1);

  // A PMU the SDK does not know: counted as needing its CPU, and says so.
  const Planned power = Plan({"power/energy-pkg/"}, pmus);
  const SnapshotReadCost pw = Cost(power, pmus, {1});
  ASSERT_EQ(pw.groups.size(), 2u);
  EXPECT_EQ(pw.groups[0].locality, ReadLocality::kUnknown);
  EXPECT_EQ(pw.groups[0].verdict,
            "PMU not classified: assumed IPI unless the reader runs on CPU 0");
  EXPECT_EQ(pw.always_cross, 2);
}

// AMD Zen 4 on two sockets: amd_l3 is bound to one CPU per L3 complex
// (0, 2, 4, 6), amd_umc_N to its socket's CPU; every read from another CPU
// is an IPI, even from the same socket.
TEST(CostOfSnapshotTest, AmdUncoreIsLocalOnlyOnTheEventsCpu) {
  const PmuCatalog pmus = Catalog("zen4x2");
  ASSERT_EQ(pmus.num_sockets, 2);
  const Planned p = Plan({"amd_l3/event=0x4,umask=0xff/", "amd_umc/event=0x1/",
                          "amd_df/event=0x7,umask=0x38/"},
                         pmus);
  // 4 L3 complexes + 2 UMC PMUs + amd_df on 2 sockets.
  ASSERT_EQ(p.groups.size(), 8u);
  const SnapshotReadCost on_cpu2 = Cost(p, pmus, {2});
  EXPECT_EQ(on_cpu2.reads, 8);
  std::vector<int> cpus;
  for (const GroupReadCost& g : on_cpu2.groups) {
    cpus.push_back(g.cpu);
    EXPECT_EQ(g.locality, ReadLocality::kEventCpu) << g.pmu;
    EXPECT_EQ(g.verdict,
              fmt::format("IPI unless the reader runs on CPU {}", g.cpu));
  }
  EXPECT_THAT(cpus, ElementsAre(0, 2, 4, 6, 0, 4, 0, 4));
  EXPECT_EQ(on_cpu2.groups[4].pmu, "amd_umc_0");
  EXPECT_EQ(on_cpu2.groups[5].pmu, "amd_umc_1");
  EXPECT_EQ(on_cpu2.groups[5].socket, 1);
  EXPECT_EQ(on_cpu2.never_cross, 1);  // CPU 2's L3 complex
  EXPECT_EQ(on_cpu2.always_cross, 7);

  const SnapshotReadCost on_cpu0 = Cost(p, pmus, {0});
  EXPECT_EQ(on_cpu0.never_cross, 3);  // L3 of CPUs 0-1, umc_0, df socket 0
  EXPECT_EQ(on_cpu0.always_cross, 5);

  const SnapshotReadCost on_0_or_1 = Cost(p, pmus, {0, 1});
  EXPECT_EQ(on_0_or_1.sometimes_cross, 3);
  EXPECT_EQ(on_0_or_1.always_cross, 5);
}

// ---- this machine: msr/tsc/ read from its CPU and from another ----

// Function-call interrupts (the "CAL" line of /proc/interrupts) per CPU:
// what smp_call_function_single, which carries a cross-CPU perf read,
// raises on the target CPU.
absl::StatusOr<std::map<int, uint64_t>> CallInterrupts() {
  std::ifstream in("/proc/interrupts");
  std::string header;
  if (!std::getline(in, header)) {
    return absl::NotFoundError("/proc/interrupts is not readable");
  }
  std::vector<int> cpus;
  std::istringstream h(header);
  for (std::string word; h >> word;) {
    if (word.starts_with("CPU")) cpus.push_back(std::stoi(word.substr(3)));
  }
  for (std::string line; std::getline(in, line);) {
    std::istringstream l(line);
    std::string label;
    l >> label;
    if (label != "CAL:") continue;
    std::map<int, uint64_t> counts;
    for (int cpu : cpus) {
      uint64_t n = 0;
      if (!(l >> n)) break;
      counts[cpu] = n;
    }
    return counts;
  }
  return absl::NotFoundError("/proc/interrupts has no CAL line");
}

struct PinnedReads {
  absl::Status status;
  SnapshotReadCost cost;
  uint64_t interrupts_on_event_cpu = 0;
};

// On a thread pinned to `reader`: the cost CostOfSnapshot gives for the
// thread's own affinity, then `n` snapshots, counting the function-call
// interrupts the event's CPU takes meanwhile.
PinnedReads ReadPinned(PerfDevice* dev,
                       const std::vector<PerfCounter>& counters, int reader,
                       int n) {
  PinnedReads out;
  std::thread t([&] {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(reader, &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0) {
      out.status = absl::InternalError("pthread_setaffinity_np failed");
      return;
    }
    absl::StatusOr<std::set<int>> affinity = ThisThreadAffinity();
    if (!affinity.ok()) {
      out.status = affinity.status();
      return;
    }
    out.cost = CostOfSnapshot(GroupPerfCounters(counters, false), counters,
                              dev->pmus(), *affinity);
    const int event_cpu = counters.front().cpu;
    absl::StatusOr<std::map<int, uint64_t>> before = CallInterrupts();
    Snapshot s(dev->read_plan().size());
    for (int i = 0; i < n && out.status.ok(); ++i) {
      out.status = dev->TakeSnapshot(&s);
    }
    absl::StatusOr<std::map<int, uint64_t>> after = CallInterrupts();
    if (!before.ok() || !after.ok()) {
      out.status = before.ok() ? after.status() : before.status();
      return;
    }
    out.interrupts_on_event_cpu = (*after)[event_cpu] - (*before)[event_cpu];
  });
  t.join();
  return out;
}

TEST(ReadLocalityOnThisMachineTest, MsrTscCrossesCpusExactlyAsClassified) {
  absl::StatusOr<std::unique_ptr<PerfDevice>> dev = PerfDevice::Open({});
  if (!dev.ok()) GTEST_SKIP() << common::StatusMessage(dev.status());
  ProgramRequest request;
  request.events.push_back(*spec::ParseEventSpec("msr/tsc/"));
  request.sockets = {0};
  if (absl::Status s = (*dev)->Program(request); !s.ok()) {
    GTEST_SKIP() << "perf cannot count msr/tsc/ here: "
                 << common::StatusMessage(s);
  }
  const std::vector<PerfCounter>& counters = (*dev)->counters();
  ASSERT_EQ(counters.size(), 1u);
  const int event_cpu = counters.front().cpu;
  int other_cpu = -1;
  for (const auto& [cpu, socket] : (*dev)->pmus().socket_of_cpu) {
    if (cpu != event_cpu) {
      other_cpu = cpu;
      break;
    }
  }
  if (other_cpu < 0) GTEST_SKIP() << "one CPU only: no other CPU to read from";
  if (!CallInterrupts().ok()) GTEST_SKIP() << "no CAL line in /proc/interrupts";

  // The device's own count of reads and the plan's agree: one group.
  EXPECT_EQ((*dev)->reads_per_snapshot(), 1);
  EXPECT_EQ(GroupPerfCounters(counters, false).size(), 1u);

  constexpr int kReads = 2000;
  const PinnedReads local = ReadPinned(dev->get(), counters, event_cpu, kReads);
  ASSERT_TRUE(local.status.ok()) << common::StatusMessage(local.status);
  EXPECT_EQ(local.cost.reads, 1);
  EXPECT_EQ(local.cost.reader_cpus, (std::set<int>{event_cpu}));
  EXPECT_EQ(local.cost.never_cross, 1);
  EXPECT_EQ(local.cost.always_cross, 0);

  const PinnedReads remote =
      ReadPinned(dev->get(), counters, other_cpu, kReads);
  ASSERT_TRUE(remote.status.ok()) << common::StatusMessage(remote.status);
  EXPECT_EQ(remote.cost.reads, 1);
  EXPECT_EQ(remote.cost.always_cross, 1);
  EXPECT_EQ(remote.cost.never_cross, 0);
  EXPECT_EQ(remote.cost.groups.front().verdict,
            fmt::format("IPI unless the reader runs on CPU {}", event_cpu));

  // What the kernel did: an interrupt on the event's CPU for (nearly) every
  // read from the other CPU, and (other activity aside, a few a second
  // here) none for reads from the event's own CPU.  Not exactly one per
  // read: a target CPU that polls in idle takes the call without an
  // interrupt (1,999 of 2,000 in one run here).
  EXPECT_GE(remote.interrupts_on_event_cpu, static_cast<uint64_t>(kReads / 2));
  EXPECT_LT(local.interrupts_on_event_cpu, static_cast<uint64_t>(kReads / 10));
  ASSERT_TRUE((*dev)->Release().ok());
}

}  // namespace
}  // namespace uncore::devices::perf
