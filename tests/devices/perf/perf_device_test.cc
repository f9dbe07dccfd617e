// The perf backend: PMU discovery and encoding against fixture sysfs trees
// (tests/devices/perf/make_fixtures.py: the kernel ivbep driver's exact
// format strings), and real counting on this machine's `msr` PMU.
#include "sdk/devices/perf/perf_device.h"

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <x86intrin.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sdk/common/status_macros.h"
#include "sdk/devices/perf/pmu_discovery.h"
#include "sdk/spec/event_spec.h"
#include "uncore/region.h"
#include "uncore/session.h"

namespace uncore::devices::perf {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Fixture(std::string_view name) {
  return std::string(UNCORE_PERF_FIXTURES) + "/" + std::string(name);
}

const PmuCatalog& Ivt2s() {
  static const PmuCatalog* catalog = [] {
    absl::StatusOr<PmuCatalog> c = DiscoverPmus(Fixture("ivt2s"));
    EXPECT_TRUE(c.ok()) << common::StatusMessage(c.status());
    return new PmuCatalog(c.ok() ? *std::move(c) : PmuCatalog{});
  }();
  return *catalog;
}

absl::StatusOr<std::vector<PerfCounter>> Plan(
    std::initializer_list<std::string_view> specs, const PmuCatalog& pmus,
    std::vector<int> sockets = {}) {
  ProgramRequest request;
  for (std::string_view s : specs) {
    absl::StatusOr<spec::EventSpec> e = spec::ParseEventSpec(s);
    if (!e.ok()) return e.status();
    request.events.push_back(*e);
  }
  request.sockets = std::move(sockets);
  return PlanPerfCounters(request, pmus);
}

TEST(PmuDiscoveryTest, ReadsTypesCpumasksFormatsAndAliases) {
  const PmuCatalog& pmus = Ivt2s();
  EXPECT_EQ(pmus.num_sockets, 2);
  EXPECT_TRUE(pmus.HasUncorePmus());
  EXPECT_EQ(pmus.NamesStartingWith("uncore_cbox_").size(), 10u);
  const Pmu* imc = pmus.Find("uncore_imc_0");
  ASSERT_NE(imc, nullptr);
  EXPECT_TRUE(imc->has_cpumask);
  EXPECT_THAT(imc->cpus, ElementsAre(0, 4));
  EXPECT_THAT(imc->sockets, ElementsAre(0, 1));
  const EventAlias* read = imc->FindAlias("cas_count_read");
  ASSERT_NE(read, nullptr);
  EXPECT_EQ(read->terms, "event=0x04,umask=0x03");
  EXPECT_DOUBLE_EQ(read->scale, 6.103515625e-5);
  EXPECT_EQ(read->unit, "MiB");
  // The msr PMU has no cpumask: the first CPU of each socket.
  const Pmu* msr = pmus.Find("msr");
  ASSERT_NE(msr, nullptr);
  EXPECT_EQ(msr->type, 9u);
  EXPECT_FALSE(msr->has_cpumask);
  EXPECT_THAT(msr->cpus, ElementsAre(0, 4));
  const FormatField* ev = pmus.Find("uncore_qpi_1")->FindFormat("event");
  ASSERT_NE(ev, nullptr);
  EXPECT_EQ(ev->text, "config:0-7,21");
  EXPECT_EQ(ev->width(), 9);
  EXPECT_FALSE(DiscoverPmus(Fixture("no-such-tree")).ok());
}

TEST(PmuDiscoveryTest, FormatFieldsSplitValuesOverTheirRanges) {
  absl::StatusOr<FormatField> f = ParseFormatField("event", "config:0-7,21");
  ASSERT_TRUE(f.ok());
  PerfConfig c;
  ASSERT_TRUE(f->Insert(0x102, &c).ok());
  EXPECT_EQ(c.config, (uint64_t{1} << 21) | 0x02);
  EXPECT_FALSE(f->Insert(0x200, &c).ok());  // 10 bits into 9
  absl::StatusOr<FormatField> df =
      ParseFormatField("event", "config:0-7,32-35,59-60");
  ASSERT_TRUE(df.ok());
  PerfConfig d;
  // 0x1234: 0x34 into 0-7, then 0x2 into 32-35, then 0x1 into 59-60.
  ASSERT_TRUE(df->Insert(0x1234, &d).ok());
  EXPECT_EQ(d.config, (uint64_t{1} << 59) | (uint64_t{0x2} << 32) | 0x34);
  absl::StatusOr<FormatField> hi = ParseFormatField("mask1", "config2:32-63");
  ASSERT_TRUE(hi.ok());
  PerfConfig e;
  ASSERT_TRUE(hi->Insert(0xFFFFFFFF, &e).ok());
  EXPECT_EQ(e.config2, uint64_t{0xFFFFFFFF} << 32);
  for (const char* bad : {"config:", "conf:0-3", "config:7-3", "config:0-64",
                          "config3:1", "config:a"}) {
    EXPECT_FALSE(ParseFormatField("x", bad).ok()) << bad;
  }
}

TEST(PerfEncodingTest, IvyTownEventsOnTheKernelPmus) {
  struct Case {
    std::string_view spec;
    std::string_view pmu;
    PerfConfig config;
  };
  const Case cases[] = {
      {"imc[2]/CAS_COUNT.RD", "uncore_imc_2", {0x0304, 0, 0}},
      {"cbo[3]/LLC_VICTIMS.M_STATE", "uncore_cbox_3", {0x0137, 0, 0}},
      {"cbo[3]/LLC_LOOKUP.DATA_READ:filter_state=0x1f",
       "uncore_cbox_3",
       {0x0334, uint64_t{0x1f} << 17, 0}},
      {"cbo[0]/TOR_INSERTS.MISS_OPCODE:filter_opc=0x182",
       "uncore_cbox_0",
       {0x0335, uint64_t{0x182} << 52, 0}},
      {"pcu/FREQ_BAND0_CYCLES:filter_band0=20", "uncore_pcu", {0x0b, 20, 0}},
      {"qpi[1]/TxL_FLITS_G1.SNP", "uncore_qpi_1", {0x200100, 0, 0}},
      {"qpi[0]/CTO_COUNT:match0=0x8,mask0=0x8,match_rds=0x3",
       "uncore_qpi_0",
       {0x200038, (uint64_t{3} << 48) | 0x8, 0x8}},
      {"imc[0]/DCLK", "uncore_imc_0", {0xff, 0, 0}},
      {"ubox/UCLK", "uncore_ubox", {0xff, 0, 0}},
      {"cbo[1]/COUNTER0_OCCUPANCY:thresh=1,edge",
       "uncore_cbox_1",
       {0x0104001f, 0, 0}},
      {"uncore_imc_0/cas_count_read/", "uncore_imc_0", {0x0304, 0, 0}},
      {"uncore_imc_5/event=0x04,umask=0x0c/", "uncore_imc_5", {0x0c04, 0, 0}},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::vector<PerfCounter>> plan = Plan({c.spec}, Ivt2s());
    ASSERT_TRUE(plan.ok()) << c.spec << ": "
                           << common::StatusMessage(plan.status());
    ASSERT_EQ(plan->size(), 2u) << c.spec;  // one per socket
    const PerfCounter& s0 = (*plan)[0];
    EXPECT_EQ(s0.pmu->name, c.pmu) << c.spec;
    EXPECT_EQ(s0.pmu->type, Ivt2s().Find(c.pmu)->type) << c.spec;
    EXPECT_EQ(s0.config, c.config) << c.spec << ": " << s0.config.ToString()
                                   << " vs " << c.config.ToString();
    EXPECT_EQ(s0.cpu, 0);
    EXPECT_EQ((*plan)[1].cpu, 4);
    EXPECT_EQ((*plan)[1].socket, 1);
  }
}

TEST(PerfEncodingTest, InstancesSocketsAndReadPlanOrder) {
  absl::StatusOr<std::vector<PerfCounter>> plan =
      Plan({"imc/CAS_COUNT.RD", "cbo/CLOCKTICKS"}, Ivt2s());
  ASSERT_TRUE(plan.ok()) << common::StatusMessage(plan.status());
  // 8 iMC channels and the 10 CBos this part has, on 2 sockets.
  ASSERT_EQ(plan->size(), 2u * 8 + 2u * 10);
  EXPECT_EQ((*plan)[0].pmu->name, "uncore_imc_0");
  EXPECT_EQ((*plan)[7].pmu->name, "uncore_imc_7");
  EXPECT_EQ((*plan)[7].socket, 0);
  EXPECT_EQ((*plan)[8].socket, 1);
  EXPECT_EQ((*plan)[16].pmu->name, "uncore_cbox_0");
  EXPECT_EQ((*plan)[16].box_counters, 4);
  EXPECT_EQ((*plan)[0].box_counters, 5);  // 4 + the DCLK fixed counter
  absl::StatusOr<std::vector<PerfCounter>> one =
      Plan({"imc/CAS_COUNT.RD"}, Ivt2s(), {1});
  ASSERT_TRUE(one.ok());
  ASSERT_EQ(one->size(), 8u);
  for (const PerfCounter& c : *one) EXPECT_EQ(c.cpu, 4);
  // uncore_imc/ALIAS/ means every uncore_imc_N.
  absl::StatusOr<std::vector<PerfCounter>> all =
      Plan({"uncore_imc/cas_count_write/"}, Ivt2s());
  ASSERT_TRUE(all.ok()) << common::StatusMessage(all.status());
  EXPECT_EQ(all->size(), 16u);
  EXPECT_EQ((*all)[0].config.config, 0x0c04u);
  EXPECT_EQ((*all)[0].unit, "MiB");
}

TEST(PerfEncodingTest, SocketsTheMachineLacksAreRefused) {
  // ivt2s has sockets 0 and 1: UNCORE_SOCKETS=0-3 counted 0 and 1 and said
  // nothing of 2 and 3.
  absl::StatusOr<std::vector<PerfCounter>> plan =
      Plan({"imc/CAS_COUNT.RD"}, Ivt2s(), {0, 1, 2, 3});
  ASSERT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(common::StatusMessage(plan.status()),
              HasSubstr("sockets 2-3 do not exist: this machine has 2 "
                        "sockets (0-1)"));
  absl::StatusOr<std::vector<PerfCounter>> tsc =
      Plan({"msr/tsc/"}, Ivt2s(), {7, 5, -1, 4});
  EXPECT_THAT(common::StatusMessage(tsc.status()),
              HasSubstr("sockets -1, 4-5, 7 do not exist"));
  EXPECT_TRUE(Plan({"imc/CAS_COUNT.RD"}, Ivt2s(), {1, 0}).ok());
}

TEST(PerfEncodingTest, GenericPmusByFormatAndAlias) {
  absl::StatusOr<std::vector<PerfCounter>> tsc = Plan({"msr/tsc/"}, Ivt2s());
  ASSERT_TRUE(tsc.ok());
  ASSERT_EQ(tsc->size(), 2u);
  EXPECT_EQ((*tsc)[0].pmu->type, 9u);
  EXPECT_EQ((*tsc)[0].config.config, 0u);
  absl::StatusOr<std::vector<PerfCounter>> energy =
      Plan({"power/energy-pkg/"}, Ivt2s());
  ASSERT_TRUE(energy.ok());
  EXPECT_EQ((*energy)[0].config.config, 2u);
  EXPECT_DOUBLE_EQ((*energy)[0].scale, 2.3283064365386962890625e-10);
  EXPECT_EQ((*energy)[0].unit, "Joules");

  absl::StatusOr<PmuCatalog> epyc = DiscoverPmus(Fixture("epyc"));
  ASSERT_TRUE(epyc.ok());
  EXPECT_FALSE(epyc->HasUncorePmus());
  absl::StatusOr<std::vector<PerfCounter>> df =
      Plan({"amd_df/event=0x1f7,umask=0x38/"}, *epyc);
  ASSERT_TRUE(df.ok()) << common::StatusMessage(df.status());
  ASSERT_EQ(df->size(), 1u);
  EXPECT_EQ((*df)[0].pmu->type, 13u);
  EXPECT_EQ((*df)[0].config.config, (uint64_t{1} << 32) | 0x38f7);
}

TEST(PerfEncodingTest, ClearErrors) {
  auto error = [](std::initializer_list<std::string_view> specs,
                  const PmuCatalog& pmus) {
    absl::StatusOr<std::vector<PerfCounter>> p = Plan(specs, pmus);
    EXPECT_FALSE(p.ok());
    return p.ok() ? std::string() : common::StatusMessage(p.status());
  };
  EXPECT_THAT(error({"cbo[12]/CLOCKTICKS"}, Ivt2s()),
              AllOf(HasSubstr("uncore_cbox_12"), HasSubstr("CBo12"),
                    HasSubstr("uncore PMUs here: uncore_cbox_0")));
  EXPECT_THAT(error({"r3qpi[2]/CLOCKTICKS"}, Ivt2s()),
              HasSubstr("the kernel's driver registers 2 r3qpi PMUs"));
  EXPECT_THAT(error({"pcu/DELAYED_C_STATE_ABORT_CORE0"}, Ivt2s()),
              AllOf(HasSubstr("drop bits 0x200000 (ext)"),
                    HasSubstr("direct backend")));
  EXPECT_THAT(error({"ha/ADDR_OPC_MATCH.OPC:filter_opc=0x1"}, Ivt2s()),
              HasSubstr("exposes no filter register"));
  EXPECT_THAT(error({"qpi[2]/CTO_COUNT:match0=0x8,mask0=0x8"}, Ivt2s()),
              HasSubstr("no match/mask device for QPI port 2"));
  EXPECT_THAT(
      error({"msx/tsc/"}, Ivt2s()),
      AllOf(HasSubstr("no PMU named 'msx'"), HasSubstr("did you mean msr")));
  EXPECT_THAT(error({"msr/tsx/"}, Ivt2s()),
              AllOf(HasSubstr("no format field or event alias 'tsx'"),
                    HasSubstr("did you mean tsc"), HasSubstr("aperf")));
  EXPECT_THAT(error({"power/event=0x100/"}, Ivt2s()),
              HasSubstr("does not fit in field 'event'"));
  absl::StatusOr<PmuCatalog> epyc = DiscoverPmus(Fixture("epyc"));
  ASSERT_TRUE(epyc.ok());
  EXPECT_THAT(error({"imc/CAS_COUNT.RD"}, *epyc),
              AllOf(HasSubstr("uncore PMUs here: none"),
                    HasSubstr("uncore driver is not loaded")));
}

TEST(PerfDeviceTest, TooManyEventsForABoxIsRefusedBeforeOpening) {
  PerfDevice::Options options;
  options.sysfs_root = Fixture("ivt2s");
  absl::StatusOr<std::unique_ptr<PerfDevice>> dev = PerfDevice::Open(options);
  ASSERT_TRUE(dev.ok());
  ProgramRequest request;
  for (const char* s :
       {"cbo[0]/CLOCKTICKS", "cbo[0]/LLC_VICTIMS.M_STATE",
        "cbo[0]/LLC_VICTIMS.E_STATE", "cbo[0]/LLC_VICTIMS.S_STATE",
        "cbo[0]/LLC_VICTIMS.MISS"}) {
    request.events.push_back(*spec::ParseEventSpec(s));
  }
  const absl::Status s = (*dev)->Program(request);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(common::StatusMessage(s),
              AllOf(HasSubstr("5 events on uncore_cbox_0"),
                    HasSubstr("which has 4 counters"),
                    HasSubstr("UNCORE_MULTIPLEX=1")));
  EXPECT_EQ((*dev)->num_groups(), 0u);
}

// ---- real counting on this machine's msr PMU ----

// Skips the test (with the reason) when perf cannot count msr/tsc here.
bool PerfCanCountTsc(std::string* why) {
  absl::StatusOr<std::unique_ptr<PerfDevice>> dev = PerfDevice::Open({});
  if (!dev.ok()) {
    *why = common::StatusMessage(dev.status());
    return false;
  }
  ProgramRequest request;
  request.events.push_back(*spec::ParseEventSpec("msr/tsc/"));
  request.sockets = {0};
  const absl::Status s = (*dev)->Program(request);
  if (!s.ok()) *why = common::StatusMessage(s);
  return s.ok();
}

uint64_t MonotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u +
         static_cast<uint64_t>(ts.tv_nsec);
}

// One (CLOCK_MONOTONIC, rdtsc) pair taken close together: retried until the
// clock reads around the rdtsc are within 20 us (not preempted between).
std::pair<double, uint64_t> TimeAndTsc() {
  for (int attempt = 0;; ++attempt) {
    const uint64_t t0 = MonotonicNs();
    const uint64_t c = __rdtsc();
    const uint64_t t1 = MonotonicNs();
    if (t1 - t0 < 20000 || attempt == 1000) {
      return {(static_cast<double>(t0) + static_cast<double>(t1)) / 2, c};
    }
  }
}

// The TSC frequency, measured with rdtsc against CLOCK_MONOTONIC.
double MeasureTscHz() {
  const auto [t0, c0] = TimeAndTsc();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const auto [t1, c1] = TimeAndTsc();
  return static_cast<double>(c1 - c0) * 1e9 / (t1 - t0);
}

TEST(PerfRealCountingTest, TscRateOfASleepingRegionIsTheTscFrequency) {
  std::string why;
  if (!PerfCanCountTsc(&why))
    GTEST_SKIP() << "perf cannot count msr/tsc/ "
                    "here: "
                 << why;
  SessionOptions o;
  o.events = {"msr/tsc/"};
  o.backend = "perf";
  o.sockets = {0};
  absl::StatusOr<std::unique_ptr<Session>> session =
      Session::Start(std::move(o));
  ASSERT_TRUE(session.ok()) << common::StatusMessage(session.status());
  for (int i = 0; i < 3; ++i) {
    UNCORE_REGION("sleep");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const double tsc_hz = MeasureTscHz();
  const Results r = (*session)->Collect();
  EXPECT_EQ(r.run.backend, "perf");
  EXPECT_FALSE(r.run.simulated);
  ASSERT_EQ(r.regions.size(), 1u);
  const RegionResult& sleep = r.regions[0];
  EXPECT_EQ(sleep.calls, 3u);
  EXPECT_GE(sleep.wall_ns, 150'000'000u);
  const double rate = static_cast<double>(sleep.inclusive[0].total) * 1e9 /
                      static_cast<double>(sleep.wall_ns);
  EXPECT_NEAR(rate / tsc_hz, 1.0, 0.01)
      << "TSC delta rate " << rate << " Hz vs rdtsc " << tsc_hz << " Hz";
  EXPECT_FALSE(sleep.inclusive[0].estimated);
  EXPECT_EQ(sleep.inclusive[0].per_instance[0].instance, "msr");
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0].encoding.substr(0, 4), "msr:");
  EXPECT_TRUE((*session)->Stop().ok());
}

TEST(PerfRealCountingTest, SnapshotsFromManyThreads) {
  std::string why;
  if (!PerfCanCountTsc(&why)) GTEST_SKIP() << why;
  absl::StatusOr<std::unique_ptr<PerfDevice>> dev = PerfDevice::Open({});
  ASSERT_TRUE(dev.ok());
  ProgramRequest request;
  request.events.push_back(*spec::ParseEventSpec("msr/tsc/"));
  request.events.push_back(*spec::ParseEventSpec("msr/event=0x0/"));
  request.allow_multiplexing = true;  // one group per event
  // msr/tsc/ counts here (checked above), so two of its events, one group
  // each, must program too: a failure is a failure, not a skip.
  const absl::Status programmed = (*dev)->Program(request);
  ASSERT_TRUE(programmed.ok()) << common::StatusMessage(programmed);
  EXPECT_EQ((*dev)->num_groups(), (*dev)->read_plan().size());
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      Snapshot a((*dev)->read_plan().size()), b((*dev)->read_plan().size());
      for (int i = 0; i < 200; ++i) {
        if (!(*dev)->TakeSnapshot(&a).ok() || !(*dev)->TakeSnapshot(&b).ok() ||
            b.values[0] < a.values[0] || b.timestamp_ns < a.timestamp_ns) {
          ++bad;
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_TRUE((*dev)->Release().ok());
  EXPECT_TRUE((*dev)->Release().ok());
  Snapshot s(2);
  EXPECT_FALSE((*dev)->TakeSnapshot(&s).ok());
}

}  // namespace
}  // namespace uncore::devices::perf
