// Sessions on the platforms generated from vendor data: names resolve on
// the chosen platform, composites are summed, formulas evaluated with the
// planned counters, free-running memory counters used where the kernel has
// them, and the report names the platform and what a snapshot costs.
//
// Two ways without the hardware: a device given in code (exact values), and
// perf for real, on a recorded sysfs tree whose "uncore" PMUs are the
// kernel's `msr` PMU (event 0 is its TSC), so every open, group read and
// alias scale goes through the kernel.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sdk/common/status_macros.h"
#include "sdk/runtime/session_platform.h"
#include "sdk/runtime/session_testing.h"
#include "tests/testing/fake_device.h"
#include "uncore/region.h"
#include "uncore/report_file.h"
#include "uncore/session.h"

namespace uncore {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const EventCounts& CountsOf(const Results& r, const RegionResult& region,
                            std::string_view spec) {
  for (size_t i = 0; i < r.events.size(); ++i) {
    if (r.events[i].spec == spec) return region.inclusive[i];
  }
  ADD_FAILURE() << "no event " << spec;
  static const EventCounts kNone;
  return kNone;
}

size_t MetricIndex(const Results& r, std::string_view name) {
  for (size_t i = 0; i < r.metrics.size(); ++i) {
    if (r.metrics[i].name == name) return i;
  }
  ADD_FAILURE() << "no metric " << name;
  return 0;
}

absl::StatusOr<std::unique_ptr<Session>> StartOnMemoryDevice(
    std::string platform, std::vector<std::string> events,
    std::vector<std::string> metrics = {}) {
  SessionOptions o;
  o.platform = std::move(platform);
  o.events = std::move(events);
  o.metrics = std::move(metrics);
  o.output = "";
  runtime::InjectedDevice d;
  d.device = std::make_unique<test_devices::MemoryDevice>();
  d.name = "memory";
  return runtime::StartSessionOnDevice(std::move(o), std::move(d));
}

TEST(PlatformSessionTest, GraniteRapidsSumsItsTwoSchedulers) {
  absl::StatusOr<std::unique_ptr<Session>> s =
      StartOnMemoryDevice("gnr", {"imc/CAS_COUNT.RD"}, {"MEM_BW_TOTAL"});
  ASSERT_TRUE(s.ok()) << s.status();
  { UNCORE_REGION("phase"); }
  const Results r = (*s)->Collect();
  ASSERT_TRUE((*s)->Stop().ok());
  EXPECT_EQ(r.run.platform, "graniterapids");
  ASSERT_EQ(r.regions.size(), 1u);
  const RegionResult& region = r.regions[0];
  // The composite's parts are the session's events; the name is a sum.
  const EventCounts& sch0 = CountsOf(r, region, "UNC_M_CAS_COUNT_SCH0.RD");
  const EventCounts& sch1 = CountsOf(r, region, "UNC_M_CAS_COUNT_SCH1.RD");
  EXPECT_GT(sch1.total, 0u);
  const size_t sum = MetricIndex(r, "UNC_M_CAS_COUNT.RD");
  EXPECT_EQ(r.metrics[sum].expression,
            "UNC_M_CAS_COUNT_SCH0.RD + UNC_M_CAS_COUNT_SCH1.RD");
  EXPECT_DOUBLE_EQ(region.metrics[sum].value,
                   static_cast<double>(sch0.total + sch1.total));
  // MEM_BW_TOTAL: four CAS events times 64 bytes, per second.
  const size_t bw = MetricIndex(r, "MEM_BW_TOTAL");
  EXPECT_EQ(r.metrics[bw].unit, "bytes/s");
  EXPECT_TRUE(r.metrics[bw].per_second);
  uint64_t cas = 0;
  for (const char* e : {"UNC_M_CAS_COUNT_SCH0.RD", "UNC_M_CAS_COUNT_SCH1.RD",
                        "UNC_M_CAS_COUNT_SCH0.WR", "UNC_M_CAS_COUNT_SCH1.WR"}) {
    cas += CountsOf(r, region, e).total;
  }
  EXPECT_GT(cas, 0u);
  const double seconds = static_cast<double>(region.rate_window_ns()) * 1e-9;
  EXPECT_NEAR(region.metrics[bw].value, static_cast<double>(cas) * 64 / seconds,
              1e-9 * static_cast<double>(cas) * 64 / seconds);
}

TEST(PlatformSessionTest, VendorFormulasUseThePlannedCounters) {
  // uncore_frequency divides CHA clockticks by source_count * #num_packages
  // and by duration_time, then scales by its unit (1GHz).
  absl::StatusOr<std::unique_ptr<Session>> s = StartOnMemoryDevice(
      "sapphirerapids", {"cha/CLOCKTICKS"}, {"uncore_frequency"});
  ASSERT_TRUE(s.ok()) << s.status();
  { UNCORE_REGION("phase"); }
  const Results r = (*s)->Collect();
  ASSERT_TRUE((*s)->Stop().ok());
  ASSERT_EQ(r.regions.size(), 1u);
  const RegionResult& region = r.regions[0];
  const size_t m = MetricIndex(r, "uncore_frequency");
  EXPECT_EQ(r.metrics[m].unit, "GHz");
  EXPECT_FALSE(r.metrics[m].per_second);
  const double ticks =
      static_cast<double>(CountsOf(r, region, "cha/CLOCKTICKS").total);
  const double seconds = static_cast<double>(region.rate_window_ns()) * 1e-9;
  // The device given in code has one entry per event on one socket.
  EXPECT_NEAR(region.metrics[m].value, ticks / 1e9 / seconds,
              1e-9 * ticks / 1e9 / seconds);
}

TEST(PlatformSessionTest, ErrorsNameThePlatform) {
  absl::StatusOr<std::unique_ptr<Session>> s =
      StartOnMemoryDevice("spr", {"imc/CAS_COUNT.RDX"});
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("sapphirerapids"));
  EXPECT_THAT(s.status().message(), HasSubstr("CAS_COUNT.RD"));
  // A metric that also reads core events says so.
  s = StartOnMemoryDevice("spr", {},
                          {"llc_data_read_mpi_demand_plus_prefetch"});
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("core events"));
  s = StartOnMemoryDevice("no-such-cpu", {"imc/CAS_COUNT.RD"});
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("ivytown"));
  // The simulator simulates IvyTown only.
  SessionOptions o;
  o.platform = "sapphirerapids";
  o.backend = "sim";
  o.events = {"imc/CAS_COUNT.RD"};
  o.output = "";
  s = Session::Start(std::move(o));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("no simulator"));
}

TEST(PlatformSessionTest, TheCpuDecidesOnHardware) {
  machine::CpuIdentity spr;
  spr.vendor = "GenuineIntel";
  spr.family = 6;
  spr.model = 0x8f;
  spr.stepping = 8;
  EXPECT_EQ(runtime::PlatformOfCpu(spr), "sapphirerapids");
  devices::perf::PmuCatalog with_imc;
  with_imc.pmus.emplace_back();
  with_imc.pmus.back().name = "uncore_imc_0";
  const devices::perf::PmuCatalog without_uncore;
  absl::StatusOr<runtime::SessionPlatform> p =
      runtime::ChooseSessionPlatform("", "auto", true, spr, &with_imc);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->name, "sapphirerapids");
  // IvyTown names on the simulator whatever the CPU.
  p = runtime::ChooseSessionPlatform("", "sim", true, spr, &with_imc);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->name, "ivytown");
  EXPECT_EQ(p->generated, nullptr);
  // Another platform than the CPU's is an error on hardware only.
  p = runtime::ChooseSessionPlatform("icelakex", "perf", true, spr, &with_imc);
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(p.status().message(), HasSubstr("sapphirerapids"));
  p = runtime::ChooseSessionPlatform("icelakex", "perf", false, spr, &with_imc);
  EXPECT_TRUE(p.ok());
  // Where the kernel shows none of the CPU's PMUs (a virtual machine),
  // nothing counts its uncore: IvyTown's names, and no mismatch.
  // Reports say "platform none" there, not "ivytown".
  p = runtime::ChooseSessionPlatform("", "auto", true, spr, &without_uncore);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->name, "ivytown");
  EXPECT_FALSE(p->uncore_supported);
  EXPECT_EQ(p->RunLabel(), "none");
  // The CPU's own platform, the simulator and a platform named off the
  // hardware keep their names.
  p = runtime::ChooseSessionPlatform("", "auto", true, spr, &with_imc);
  EXPECT_EQ(p->RunLabel(), "sapphirerapids");
  p = runtime::ChooseSessionPlatform("", "sim", true, spr, &without_uncore);
  EXPECT_EQ(p->RunLabel(), "ivytown");
  p = runtime::ChooseSessionPlatform("icelakex", "perf", false, spr, nullptr);
  EXPECT_EQ(p->RunLabel(), "icelakex");
  p = runtime::ChooseSessionPlatform("icelakex", "perf", true, spr, nullptr);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->name, "icelakex");
  // Skylake-SP and Cascade Lake share a model: the stepping decides.
  machine::CpuIdentity clx = spr;
  clx.model = 0x55;
  clx.stepping = 7;
  EXPECT_EQ(runtime::PlatformOfCpu(clx), "cascadelakex");
  clx.stepping = 4;
  EXPECT_EQ(runtime::PlatformOfCpu(clx), "skylakex");
  clx.model = 0x3e;
  EXPECT_EQ(runtime::PlatformOfCpu(clx), "ivytown");
}

// Session::EvaluateMetrics (what the MPI merged report computes a region's
// metrics with, from its merged counts and time) gives what Collect gives
// for a region's own counts and time; a rate per second is of that time;
// a count it lacks leaves the metric without a value.
TEST(PlatformSessionTest, EvaluateMetricsIsCollectsFormula) {
  SessionOptions o;
  o.backend = "sim";
  o.events = {"ubox/UCLK"};
  o.metrics = {"MEM_BW_TOTAL"};
  o.output = "";
  absl::StatusOr<std::unique_ptr<Session>> s = Session::Start(o);
  ASSERT_TRUE(s.ok()) << s.status();
  (*s)->SetSimulatedActivity(1e9);
  {
    UNCORE_REGION("phase");
    usleep(20'000);
  }
  const Results r = (*s)->Collect();
  ASSERT_TRUE((*s)->Stop().ok());
  ASSERT_EQ(r.regions.size(), 1u);
  const RegionResult& region = r.regions[0];
  const size_t bw = MetricIndex(r, "MEM_BW_TOTAL");
  ASSERT_TRUE(r.metrics[bw].per_second);
  ASSERT_TRUE(region.metrics[bw].valid);
  ASSERT_GT(region.metrics[bw].value, 0);
  std::vector<uint64_t> totals;
  for (const EventCounts& c : region.inclusive) totals.push_back(c.total);
  // Stopped, as the MPI integration's rank 0 calls it.
  const std::vector<MetricValue> same =
      (*s)->EvaluateMetrics(totals, region.rate_window_ns());
  ASSERT_EQ(same.size(), r.metrics.size());
  EXPECT_TRUE(same[bw].valid);
  EXPECT_DOUBLE_EQ(same[bw].value, region.metrics[bw].value);
  const std::vector<MetricValue> longer =
      (*s)->EvaluateMetrics(totals, 2 * region.rate_window_ns());
  EXPECT_NEAR(longer[bw].value, region.metrics[bw].value / 2,
              1e-9 * region.metrics[bw].value);
  const std::vector<MetricValue> none = (*s)->EvaluateMetrics({}, 1000);
  ASSERT_EQ(none.size(), r.metrics.size());
  EXPECT_FALSE(none[bw].valid);
}

TEST(PlatformSessionTest, TheXeon7500CountsOnItsSimulator) {
  SessionOptions o;
  o.platform = "nehalemex";
  o.backend = "sim";
  o.events = {"wbox/UNCORE_CLOCK", "sbox/TO_R_PROG_EV:match=0x1,mask=0x1"};
  o.metrics = {"MEM_BW_TOTAL"};
  o.output = "";
  absl::StatusOr<std::unique_ptr<Session>> s = Session::Start(o);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE((*s)->simulated());
  {
    UNCORE_REGION("phase");
    usleep(20'000);
  }
  const Results r = (*s)->Collect();
  ASSERT_TRUE((*s)->Stop().ok());
  EXPECT_EQ(r.run.platform, "nehalemex");
  EXPECT_EQ(r.run.backend, "sim");
  EXPECT_TRUE(r.run.simulated);
  ASSERT_EQ(r.regions.size(), 1u);
  const RegionResult& region = r.regions[0];
  // The W-Box fixed counter: the simulated uncore clock ran in the region.
  ASSERT_FALSE(region.inclusive[0].per_instance.empty());
  EXPECT_EQ(region.inclusive[0].per_instance[0].instance, "uncore_wbox");
  EXPECT_GT(region.inclusive[0].total, 0u);
  const size_t bw = MetricIndex(r, "MEM_BW_TOTAL");
  EXPECT_TRUE(region.metrics[bw].valid);
  EXPECT_GT(region.metrics[bw].value, 0);

  // Direct programs the CPU's own registers: not on another CPU.
  o.backend = "direct";
  s = Session::Start(o);
  if (absl::StatusOr<machine::CpuIdentity> here = machine::ReadCpuIdentity();
      here.ok() && here->family == 6 && here->model == 0x2e) {
    GTEST_SKIP() << "this is a Xeon 7500";
  }
  ASSERT_FALSE(s.ok());
}

// Memory bandwidth on the Xeon 7500 / E7 simulators (demo traffic: 4 GB/s
// of reads and 2 GB/s of writes per socket).  nehalemex's MEM_BW_WRITES is
// the B-Box's IMT_INSERTS_WR, which counted a fixed 1e6/s on the simulator;
// westmereex's MEM_BW_TOTAL, M-Box reads with M-Box writes, was refused
// (one command-type field per M-Box): now M-Box reads plus IMT_INSERTS_WR
// (notes/decisions-xeon7500.md 24).
TEST(PlatformSessionTest, TheXeon7500sMemoryBandwidthOnItsSimulators) {
  for (const char* platform : {"nehalemex", "westmereex"}) {
    SCOPED_TRACE(platform);
    SessionOptions o;
    o.platform = platform;
    o.backend = "sim";
    o.metrics = {"MEM_BW_TOTAL"};
    if (std::string_view(platform) == "nehalemex") {
      o.metrics = {"MEM_BW_READS", "MEM_BW_WRITES", "MEM_BW_TOTAL"};
    }
    o.output = "";
    absl::StatusOr<std::unique_ptr<Session>> s = Session::Start(o);
    ASSERT_TRUE(s.ok()) << s.status();
    {
      UNCORE_REGION("phase");
      usleep(20'000);
    }
    const Results r = (*s)->Collect();
    ASSERT_TRUE((*s)->Stop().ok());
    ASSERT_EQ(r.regions.size(), 1u);
    const RegionResult& region = r.regions[0];
    const double sockets = static_cast<double>(r.run.sockets.size());
    auto rate = [&](std::string_view name) {
      const size_t m = MetricIndex(r, name);
      EXPECT_TRUE(region.metrics[m].valid) << name;
      return region.metrics[m].value / sockets;  // bytes/s per socket
    };
    EXPECT_NEAR(rate("MEM_BW_TOTAL"), 6e9, 1.5e9);
    if (std::string_view(platform) == "nehalemex") {
      EXPECT_NEAR(rate("MEM_BW_READS"), 4e9, 1e9);
      EXPECT_NEAR(rate("MEM_BW_WRITES"), 2e9, 0.5e9);
    }
  }
  // Westmere-EX reads and writes of the M-Box in one run: refused, saying
  // why and what to use.
  SessionOptions both;
  both.platform = "westmereex";
  both.backend = "sim";
  both.metrics = {"MEM_BW_READS", "MEM_BW_WRITES"};
  both.output = "";
  absl::StatusOr<std::unique_ptr<Session>> refused = Session::Start(both);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(common::StatusMessage(refused.status()),
              AllOf(HasSubstr("ZDP_CTL_FVC"),
                    HasSubstr("B-Box reads or writes, never both at once"),
                    HasSubstr("use MEM_BW_TOTAL")));
}

// Two entries of one parameterised metric are two metrics named with their
// parameters, in every output (they had the same header and rows); the
// same metric or event twice in the lists is counted and reported once.
TEST(PlatformSessionTest, ParameterisedEntriesAreNamedAndDuplicatesMerged) {
  SessionOptions o;
  o.backend = "sim";
  o.events = {"imc/CAS_COUNT.RD", "imc/CAS_COUNT.RD",
              "metric/PCT_CYCLES_DRAM_RANKx_IN_CKE:x=3"};
  o.metrics = {"PCT_CYCLES_DRAM_RANKx_IN_CKE:x=1",
               "PCT_CYCLES_DRAM_RANKx_IN_CKE:x=3", "MEM_BW_TOTAL",
               "MEM_BW_TOTAL"};
  o.output = "";
  absl::StatusOr<std::unique_ptr<Session>> s = Session::Start(o);
  ASSERT_TRUE(s.ok()) << s.status();
  {
    UNCORE_REGION("phase");
    usleep(2'000);
  }
  const Results r = (*s)->Collect();
  ASSERT_TRUE((*s)->Stop().ok());
  std::vector<std::string> metrics;
  for (const auto& m : r.metrics) metrics.push_back(m.name);
  EXPECT_THAT(metrics,
              ElementsAre("PCT_CYCLES_DRAM_RANKx_IN_CKE:x=3",
                          "PCT_CYCLES_DRAM_RANKx_IN_CKE:x=1", "MEM_BW_TOTAL"));
  int cas = 0;
  for (const auto& e : r.events) cas += e.canonical == "imc/CAS_COUNT.RD";
  EXPECT_EQ(cas, 1);
  const std::string csv = FormatReportText(r, "r.csv");
  const std::string table = FormatReportText(r, "r.txt");
  for (const char* name : {"PCT_CYCLES_DRAM_RANKx_IN_CKE:x=1",
                           "PCT_CYCLES_DRAM_RANKx_IN_CKE:x=3"}) {
    EXPECT_THAT(csv, HasSubstr(name));
    EXPECT_THAT(table, HasSubstr(name));
  }
  // Each a row of its own: no two CSV lines alike.
  std::vector<std::string> lines;
  std::istringstream in(csv);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::sort(lines.begin(), lines.end());
  EXPECT_EQ(std::adjacent_find(lines.begin(), lines.end()), lines.end());
}

// A recorded machine whose uncore PMUs are the kernel's msr PMU.
class MsrBackedMachine {
 public:
  static std::optional<std::string> MsrType() {
    std::ifstream in("/sys/bus/event_source/devices/msr/type");
    std::string type;
    if (!(in >> type)) return std::nullopt;
    return type;
  }

  MsrBackedMachine(const std::string& dir, const std::string& type,
                   std::string_view cpuinfo)
      : dir_(dir) {
    Write("cpuinfo", std::string(cpuinfo));
    Write("sys/devices/system/cpu/cpu0/topology/physical_package_id", "0");
    for (const char* pmu :
         {"uncore_imc_0", "uncore_imc_1", "uncore_imc_free_running_0"}) {
      const std::string base =
          fmt::format("sys/bus/event_source/devices/{}", pmu);
      Write(base + "/type", type);
      Write(base + "/cpumask", "0");
      Write(base + "/format/event", "config:0-7");
      Write(base + "/format/umask", "config:8-15");
    }
    // The kernel's free-running read/write aliases (64 bytes per count, in
    // MiB), here on event 0: the TSC.
    for (const char* alias : {"read", "write"}) {
      const std::string base = fmt::format(
          "sys/bus/event_source/devices/uncore_imc_free_running_0/events/{}",
          alias);
      Write(base, "event=0x00");
      Write(base + ".scale", "6.103515625e-5");
      Write(base + ".unit", "MiB");
    }
  }
  runtime::MachineFiles files() const {
    return {dir_ + "/sys", dir_ + "/cpuinfo"};
  }

 private:
  void Write(const std::string& relative, const std::string& text) {
    const std::string path = dir_ + "/" + relative;
    for (size_t slash = path.find('/', 1); slash != std::string::npos;
         slash = path.find('/', slash + 1)) {
      mkdir(path.substr(0, slash).c_str(), 0755);
    }
    std::ofstream(path) << text << "\n";
  }
  std::string dir_;
};

std::string TempDir(std::string_view name) {
  return fmt::format("{}/platform_session_{}_{}", ::testing::TempDir(),
                     getpid(), name);
}

constexpr std::string_view kSkylakeCpuinfo =
    "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\n"
    "model\t\t: 85\nstepping\t: 4\n";
constexpr std::string_view kSapphireCpuinfo =
    "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\n"
    "model\t\t: 143\nstepping\t: 8\n";

// Starts `o` on perf over the msr-backed machine, counts one region and
// stops: the results, or why not (PermissionDenied / Unavailable: perf or
// its msr PMU cannot be used here).
absl::StatusOr<Results> CountOneRegion(std::string_view name,
                                       std::string_view cpuinfo,
                                       SessionOptions o) {
  const std::optional<std::string> type = MsrBackedMachine::MsrType();
  if (!type) return absl::UnavailableError("no msr PMU here");
  MsrBackedMachine machine(TempDir(name), *type, cpuinfo);
  o.backend = "perf";
  o.output = "";
  UNCORE_ASSIGN_OR_RETURN(
      std::unique_ptr<Session> s,
      runtime::StartSessionOnMachine(std::move(o), machine.files()));
  { UNCORE_REGION("phase"); }
  Results r = s->Collect();
  UNCORE_RETURN_IF_ERROR(s->Stop());
  return r;
}

bool CannotCountHere(const absl::Status& s) {
  return absl::IsPermissionDenied(s) || absl::IsUnavailable(s);
}

TEST(PlatformSessionPerfTest, CountsThroughPerfOneGroupReadPerPmu) {
  SessionOptions o;
  o.events = {"imc/event=0x0/"};
  absl::StatusOr<Results> r = CountOneRegion("skx", kSkylakeCpuinfo, o);
  if (CannotCountHere(r.status())) GTEST_SKIP() << r.status();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->run.platform, "skylakex");  // from the recorded cpuinfo
  EXPECT_EQ(r->run.backend, "perf");
  // Two PMU instances with one event each, one socket: two group reads.
  EXPECT_EQ(r->run.reads_per_snapshot, 2);
  ASSERT_EQ(r->regions.size(), 1u);
  const EventCounts& c = r->regions[0].inclusive[0];
  ASSERT_EQ(c.per_instance.size(), 2u);
  EXPECT_EQ(c.per_instance[0].instance, "uncore_imc_0");
  EXPECT_EQ(c.per_instance[1].instance, "uncore_imc_1");
  EXPECT_GT(c.per_instance[0].value, 0u);  // TSC ticks inside the region
  EXPECT_GT(c.per_instance[1].value, 0u);
}

TEST(PlatformSessionPerfTest, BandwidthUsesTheFreeRunningCounters) {
  SessionOptions o;
  o.metrics = {"MEM_BW_TOTAL"};
  absl::StatusOr<Results> r = CountOneRegion("spr", kSapphireCpuinfo, o);
  if (CannotCountHere(r.status())) GTEST_SKIP() << r.status();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->run.platform, "sapphirerapids");
  // The report says which counters were used.
  ASSERT_FALSE(r->run.warnings.empty());
  EXPECT_THAT(r->run.warnings[0], HasSubstr("uncore_imc_free_running_0"));
  ASSERT_EQ(r->events.size(), 2u);
  EXPECT_EQ(r->events[0].unit, "MiB");
  ASSERT_EQ(r->regions.size(), 1u);
  const RegionResult& region = r->regions[0];
  const double counts = static_cast<double>(region.inclusive[0].total +
                                            region.inclusive[1].total);
  EXPECT_GT(counts, 0);
  // 6.103515625e-5 MiB is 64 bytes a count.
  const double seconds = static_cast<double>(region.rate_window_ns()) * 1e-9;
  EXPECT_NEAR(region.metrics[0].value, counts * 64 / seconds,
              1e-6 * counts * 64 / seconds);

  // UNCORE_FREE_RUNNING=0: the CAS events instead (which these recorded
  // PMUs cannot count: the TSC PMU refuses their config).
  o.use_free_running = false;
  r = CountOneRegion("spr-cas", kSapphireCpuinfo, o);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("UNC_M_CAS_COUNT"));
}

}  // namespace
}  // namespace uncore
