// IvyTownDevice end to end against the simulator (sim::IvyTownUncore) and,
// for access counting and failure injection, RecordingRegisterSpace.
#include "sdk/platforms/ivytown/device/ivytown_device.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sdk/common/status_macros.h"
#include "sdk/machine/allowlist_guard.h"
#include "sdk/machine/topology.h"
#include "sdk/platforms/ivytown/device/counter_assignment.h"
#include "sdk/platforms/ivytown/device/ivytown_allowlist.h"
#include "sdk/platforms/ivytown/device/program_plan.h"
#include "sdk/platforms/ivytown/model/box_descriptors.h"
#include "sdk/platforms/ivytown/model/identity.h"
#include "sdk/platforms/ivytown/sim/ivytown_uncore.h"
#include "sdk/registers/recording_register_space.h"
#include "sdk/spec/event_spec.h"

namespace uncore::devices {
namespace {

using ivytown::BoxType;
using sim::IvyTownUncore;
using ::testing::AllOf;
using ::testing::HasSubstr;

spec::EventSpec Ev(std::string_view text) {
  absl::StatusOr<spec::EventSpec> e = spec::ParseEventSpec(text);
  EXPECT_TRUE(e.ok()) << text << ": " << common::StatusMessage(e.status());
  return e.ok() ? *e : spec::EventSpec{};
}

ProgramRequest Req(std::initializer_list<std::string_view> specs) {
  ProgramRequest r;
  for (std::string_view s : specs) r.events.push_back(Ev(s));
  return r;
}

IvyTownDevice::Options NoExtender() {
  IvyTownDevice::Options o;
  o.background_extender = false;
  return o;
}

// The read-plan index of (event, socket, instance), or -1.
int Entry(const Device& dev, int event, int socket, int instance) {
  const std::vector<CounterPlacement>& plan = dev.read_plan();
  for (size_t i = 0; i < plan.size(); ++i) {
    if (plan[i].event == event && plan[i].socket == socket &&
        plan[i].instance == instance) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

IvyTownUncore::Traffic TrafficOf(const spec::EventSpec& e, int instance) {
  IvyTownUncore::Traffic t;
  t.box = e.box->type;
  t.instance = instance;
  t.code = e.code;
  t.extended = e.extended;
  t.umask = e.umask;
  return t;
}

// Every PMON register of every box instance and the global control of
// `socket`, as the simulator holds them (no access counted).
std::map<std::string, uint64_t> Dump(const IvyTownUncore& sim, int socket) {
  std::map<std::string, uint64_t> out;
  const machine::SocketTopology& st = sim.topology().sockets[socket];
  out["global_ctl"] = sim.PeekMsr(socket, ivytown::kGlobal.global_control);
  for (const ivytown::BoxDescriptor& box : ivytown::AllBoxes()) {
    for (int i = 0; i < box.num_instances(); ++i) {
      if (!st.HasInstance(box.type, i)) continue;
      std::vector<uint32_t> offsets;
      for (int c = 0; c < box.num_counters; ++c) {
        offsets.push_back(box.control_offsets[c]);
        offsets.push_back(box.counter_offsets[c]);
      }
      if (box.box_control_offset) offsets.push_back(*box.box_control_offset);
      if (box.fixed_counter) {
        offsets.push_back(box.fixed_counter->control_offset);
        offsets.push_back(box.fixed_counter->counter_offset);
      }
      std::vector<std::pair<uint32_t, bool>> regs;  // offset, aux
      for (uint32_t o : offsets) regs.emplace_back(o, false);
      for (const auto& f : box.filters) {
        regs.emplace_back(f.offset, f.in_aux_function);
      }
      for (const auto& [offset, aux] : regs) {
        const std::string key = fmt::format("{} {:x}{}", box.instances[i].name,
                                            offset, aux ? " aux" : "");
        if (box.space == ivytown::AccessSpace::kMsr) {
          out[key] = sim.PeekMsr(socket, box.RegisterAddress(i, offset));
          continue;
        }
        const machine::SocketTopology::PciInstance* pci =
            st.FindPci(box.type, i);
        const std::optional<registers::PciAddress>& fn =
            aux ? pci->aux : pci->pmon;
        if (!fn) continue;
        out[key] = sim.PeekPci(socket, *fn, offset);
        out[key + " hi"] = sim.PeekPci(socket, *fn, offset + 4);
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------
// Counter assignment.

TEST(AssignCountersTest, MatchingSucceedsWhereFirstFitFails) {
  // LLC_VICTIMS (counters 0-1) then RxR_OCCUPANCY (counter 0 only).
  const uint8_t masks[] = {0x3, 0x1};
  // First fit puts the first event on counter 0 and strands the second.
  int first_fit_placed = 0;
  uint8_t used = 0;
  for (uint8_t m : masks) {
    for (int c = 0; c < 4; ++c) {
      if ((m & (1u << c)) && !(used & (1u << c))) {
        used |= static_cast<uint8_t>(1u << c);
        ++first_fit_placed;
        break;
      }
    }
  }
  EXPECT_EQ(first_fit_placed, 1);
  std::optional<std::vector<int>> c = direct::AssignCounters(masks, 4);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(*c, (std::vector<int>{1, 0}));
}

TEST(AssignCountersTest, RingAndOccupancyConstraints) {
  // Two ring events (2-3), a 0-1 event and an occupancy event (0): fits.
  const uint8_t ok[] = {0xC, 0x3, 0xC, 0x1};
  std::optional<std::vector<int>> c = direct::AssignCounters(ok, 4);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(*c, (std::vector<int>{2, 1, 3, 0}));
  // Three ring events on two ring counters: no assignment.
  const uint8_t bad[] = {0xC, 0xC, 0xC};
  EXPECT_FALSE(direct::AssignCounters(bad, 4).has_value());
  const uint8_t none[] = {0x10};  // a counter the box does not have
  EXPECT_FALSE(direct::AssignCounters(none, 4).has_value());
}

// ---------------------------------------------------------------------------
// Exact end-to-end counts, every box type.

struct BoxCase {
  const char* spec;
  int instance;  // the instance traffic is injected into
};

class EveryBoxTest : public ::testing::TestWithParam<BoxCase> {};

TEST_P(EveryBoxTest, InjectedIncrementsAreCountedExactly) {
  IvyTownUncore sim(/*sockets=*/2);
  IvyTownDevice dev(&sim, sim.topology(), NoExtender());
  const ProgramRequest req = Req({GetParam().spec});
  ASSERT_TRUE(dev.Program(req).ok());
  const int entry = Entry(dev, 0, /*socket=*/1, GetParam().instance);
  ASSERT_GE(entry, 0);
  Snapshot before(dev.read_plan().size()), after(dev.read_plan().size());
  ASSERT_TRUE(dev.TakeSnapshot(&before).ok());
  ASSERT_TRUE(before.valid);
  constexpr uint64_t kCycles = 4115;
  constexpr uint64_t kPerCycle = 3;
  ASSERT_TRUE(sim.Inject(/*socket=*/1,
                         TrafficOf(req.events[0], GetParam().instance),
                         kPerCycle, kCycles)
                  .ok());
  ASSERT_TRUE(dev.TakeSnapshot(&after).ok());
  ASSERT_TRUE(after.valid);
  EXPECT_EQ(after.values[entry] - before.values[entry], kPerCycle * kCycles);
  // Nothing else moved: other sockets and instances saw no traffic.
  for (size_t i = 0; i < dev.read_plan().size(); ++i) {
    if (static_cast<int>(i) == entry) continue;
    EXPECT_EQ(after.values[i] - before.values[i], 0u)
        << "entry " << i << " socket " << dev.read_plan()[i].socket
        << " instance " << dev.read_plan()[i].instance;
  }
  EXPECT_TRUE(dev.Release().ok());
}

INSTANTIATE_TEST_SUITE_P(
    IvyTownDevice, EveryBoxTest,
    ::testing::Values(BoxCase{"ubox/EVENT_MSG.DOORBELL_RCVD", 0},
                      BoxCase{"cbo/LLC_VICTIMS.M_STATE", 3},
                      BoxCase{"ha/REQUESTS.READS_LOCAL", 1},
                      BoxCase{"imc/CAS_COUNT.RD", 5},
                      BoxCase{"irp/RxR_BL_DRS_INSERTS", 0},
                      BoxCase{"pcu/VOLT_TRANS_CYCLES_INCREASE", 0},
                      BoxCase{"qpi/TxL_FLITS_G1.SNP", 1},
                      BoxCase{"r2pcie/RING_AD_USED.CW_VR0_EVEN", 0},
                      BoxCase{"r3qpi/RING_AD_USED.CW_VR0_EVEN", 2}));

TEST(DirectDeviceTest, FixedCountersCountClocks) {
  IvyTownUncore sim(1);
  IvyTownDevice dev(&sim, sim.topology(), NoExtender());
  ASSERT_TRUE(dev.Program(Req({"ubox/UCLK", "imc[2]/DCLK"})).ok());
  ASSERT_EQ(dev.read_plan().size(), 2u);
  EXPECT_EQ(dev.read_plan()[0].counter, kFixedCounter);
  EXPECT_EQ(dev.read_plan()[0].width, 44);
  EXPECT_EQ(dev.read_plan()[1].width, 48);
  Snapshot a(2), b(2);
  ASSERT_TRUE(dev.TakeSnapshot(&a).ok());
  sim.Tick(0, 100000);
  ASSERT_TRUE(dev.TakeSnapshot(&b).ok());
  EXPECT_EQ(b.values[0] - a.values[0], 100000u);
  EXPECT_EQ(b.values[1] - a.values[1], 100000u);
}

// ---------------------------------------------------------------------------
// The manual's worked examples.

TEST(DirectDeviceTest, ManualExampleLlcVictimsMState) {
  // §2.1.2 c: LLC_VICTIMS.M_STATE is ev_sel 0x37, umask 0x01 (the manual
  // prints 0x03, see the digest §8 item 10), enabled: 0x00400137 in a CBo CTL.
  IvyTownUncore sim(1);
  IvyTownDevice dev(&sim, sim.topology(), NoExtender());
  ASSERT_TRUE(dev.Program(Req({"cbo[0]/LLC_VICTIMS.M_STATE"})).ok());
  const std::vector<RegisterWrite>& w = dev.program_writes();
  auto it = std::find_if(w.begin(), w.end(), [](const RegisterWrite& x) {
    return x.reg.address == 0x0D10;  // C0_MSR_PMON_CTL0
  });
  ASSERT_NE(it, w.end());
  EXPECT_EQ(it->value, 0x00400137u);
  EXPECT_EQ(sim.PeekMsr(0, 0x0D10), 0x00400137u);
  // The setup order: freeze, reset first, then the control, then unfreeze.
  EXPECT_EQ(w.front().reg.address, 0x0C00u);
  EXPECT_EQ(w.front().value, 0x80000000u);
  EXPECT_EQ(w.back().reg.address, 0x0C00u);
  EXPECT_EQ(w.back().value, 0x20000000u);
  EXPECT_EQ(w[1].reg.address, 0x0D04u);  // C0_MSR_PMON_BOX_CTL
  EXPECT_EQ(w[1].value, 0x00030003u);    // rst_ctrl|rst_ctrs|must-write-1
  EXPECT_LT(1, it - w.begin());
  // Counting works.
  Snapshot a(1), b(1);
  ASSERT_TRUE(dev.TakeSnapshot(&a).ok());
  IvyTownUncore::Traffic t = TrafficOf(Ev("cbo/LLC_VICTIMS.M_STATE"), 0);
  ASSERT_TRUE(sim.Inject(0, t, 1, 777).ok());
  ASSERT_TRUE(dev.TakeSnapshot(&b).ok());
  EXPECT_EQ(b.values[0] - a.values[0], 777u);
  ASSERT_TRUE(dev.Release().ok());
  EXPECT_EQ(sim.PeekMsr(0, 0x0D10), 0u);
}

TEST(DirectDeviceTest, ManualExampleQpiSampleIntervalFreezesOnOverflow) {
  // §2.1.2 e: preload Q_P0_PCI_PMON_CTR1 with 2^48 - interval, set ov_en,
  // and the socket freezes when the interval's last flit is counted.
  IvyTownUncore sim(1);
  IvyTownDevice dev(&sim, sim.topology(), NoExtender());
  ProgramRequest req = Req({"qpi[0]/RxL_FLITS_G0.IDLE"});
  ProgramOptions opt;
  opt.samples.push_back({.event = 0, .interval = 1000});
  ASSERT_TRUE(dev.Program(req, opt).ok());
  const std::vector<RegisterWrite>& w = dev.program_writes();
  const uint64_t preload = (uint64_t{1} << 48) - 1000;
  const int counter = dev.read_plan()[0].counter;
  const uint32_t ctr = ivytown::Box(BoxType::kQpi).counter_offsets[counter];
  const uint32_t ctl = ivytown::Box(BoxType::kQpi).control_offsets[counter];
  bool saw_low = false, saw_high = false, saw_ctl = false;
  for (const RegisterWrite& x : w) {
    if (x.reg.space != ivytown::AccessSpace::kPci) continue;
    if (x.reg.address == ctr) {
      saw_low = true;
      EXPECT_EQ(x.value, preload & 0xFFFFFFFFu);
    }
    if (x.reg.address == ctr + 4) {
      saw_high = true;
      EXPECT_EQ(x.value, preload >> 32);
    }
    if (x.reg.address == ctl) {
      saw_ctl = true;
      EXPECT_EQ(x.value, 0x00500101u);  // ev_sel 1, umask 1, ov_en, en
    }
  }
  EXPECT_TRUE(saw_low && saw_high && saw_ctl);
  const registers::PciAddress fn =
      *sim.topology().sockets[0].FindPci(BoxType::kQpi, 0)->pmon;
  EXPECT_EQ(sim.PeekCounter(0, BoxType::kQpi, 0, counter), preload);
  (void)fn;

  IvyTownUncore::Traffic t = TrafficOf(req.events[0], 0);
  ASSERT_TRUE(sim.Inject(0, t, 1, 999).ok());
  EXPECT_FALSE(sim.GlobalFrozen(0));
  ASSERT_TRUE(sim.Inject(0, t, 1, 1).ok());
  EXPECT_TRUE(sim.GlobalFrozen(0));  // the 1000th flit overflowed
  const uint64_t raw_at_freeze = sim.PeekCounter(0, BoxType::kQpi, 0, counter);
  ASSERT_TRUE(sim.Inject(0, t, 1, 500).ok());  // frozen: not counted
  EXPECT_EQ(sim.PeekCounter(0, BoxType::kQpi, 0, counter), raw_at_freeze);
  // The snapshot reads the extended count since Program.
  Snapshot s(1);
  ASSERT_TRUE(dev.TakeSnapshot(&s).ok());
  EXPECT_EQ(s.values[0], 1000u + raw_at_freeze);
  ASSERT_TRUE(dev.Release().ok());
}

// decisions.md #34: L684 asks for q_occ_rst in each HA control register that
// measures an occupancy count; other events are written without it.
TEST(DirectDeviceTest, HaOccupancyControlsAreWrittenWithQOccRst) {
  IvyTownUncore sim(1);
  IvyTownDevice dev(&sim, sim.topology(), NoExtender());
  ASSERT_TRUE(
      dev.Program(Req({"ha[0]/BT_OCCUPANCY.LOCAL", "ha[0]/REQUESTS.READS"}))
          .ok());
  const uint64_t q_occ_rst = uint64_t{1} << 16;
  int controls = 0;
  for (const RegisterWrite& w : dev.program_writes()) {
    if (w.why.rfind("b/c: event [0]", 0) == 0) {
      ++controls;
      EXPECT_EQ(w.value & q_occ_rst, q_occ_rst) << w.name;
      EXPECT_NE(w.why.find("q_occ_rst"), std::string::npos) << w.why;
    }
    if (w.why.rfind("b/c: event [1]", 0) == 0) {
      ++controls;
      EXPECT_EQ(w.value & q_occ_rst, 0u) << w.name;
    }
  }
  EXPECT_EQ(controls, 2);
  ASSERT_TRUE(dev.Release().ok());
}

// decisions.md #37: UCLK is 44 or 48 bits; a preload cannot be placed.
TEST(DirectDeviceTest, UclkCannotBeSampledItsWidthIsDisputed) {
  IvyTownUncore sim(1);
  IvyTownDevice dev(&sim, sim.topology(), NoExtender());
  ProgramOptions opt;
  opt.samples.push_back({.event = 0, .interval = 1000});
  absl::Status s = dev.Program(Req({"ubox/UCLK"}), opt);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(common::StatusMessage(s), HasSubstr("both 44 and 48 bits wide"));
  // DCLK (48 bits, agreed) can.
  ASSERT_TRUE(dev.Program(Req({"imc[0]/DCLK"}), opt).ok());
  ASSERT_TRUE(dev.Release().ok());
}

TEST(DirectDeviceTest, SamplingNeedsOvEn) {
  IvyTownUncore sim(1);
  IvyTownDevice dev(&sim, sim.topology(), NoExtender());
  ProgramOptions opt;
  opt.samples.push_back({.event = 0, .interval = 10});
  absl::Status s = dev.Program(Req({"cbo[0]/LLC_VICTIMS.M_STATE"}), opt);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(common::StatusMessage(s), HasSubstr("ov_en"));
}

TEST(DirectDeviceTest, ThresholdAndEdgeOnOccupancy) {
  IvyTownUncore sim(1);
  IvyTownDevice dev(&sim, sim.topology(), NoExtender());
  // Counter 0 counts 0->1 transitions of (occupancy >= 1); a second box
  // instance counts cycles with occupancy >= 2.
  ASSERT_TRUE(dev.Program(Req({"cbo[0]/RxR_OCCUPANCY.IRQ:thresh=1,edge",
                               "cbo[1]/RxR_OCCUPANCY.IRQ:thresh=2"}))
                  .ok());
  const std::vector<uint64_t> occupancy = {0, 3, 3, 0, 5, 1, 0, 0, 1, 2};
  Snapshot a(2), b(2);
  ASSERT_TRUE(dev.TakeSnapshot(&a).ok());
  const spec::EventSpec e = Ev("cbo/RxR_OCCUPANCY.IRQ");
  ASSERT_TRUE(sim.Inject(0, TrafficOf(e, 0), occupancy).ok());
  ASSERT_TRUE(sim.Inject(0, TrafficOf(e, 1), occupancy).ok());
  ASSERT_TRUE(dev.TakeSnapshot(&b).ok());
  EXPECT_EQ(b.values[0] - a.values[0], 3u);  // rises at cycles 1, 4, 8
  EXPECT_EQ(b.values[1] - a.values[1], 4u);  // 3, 3, 5, 2
}

// ---------------------------------------------------------------------------
// Width extension.

TEST(DirectDeviceTest, RegionSpanningThreeWrapsOf44BitCounterIsExact) {
  IvyTownUncore sim(1);
  IvyTownDevice dev(&sim, sim.topology(), NoExtender());
  ASSERT_TRUE(dev.Program(Req({"cbo[0]/LLC_VICTIMS.M_STATE"})).ok());
  ASSERT_EQ(dev.read_plan()[0].width, 44);
  Snapshot begin(1), end(1);
  ASSERT_TRUE(dev.TakeSnapshot(&begin).ok());
  const IvyTownUncore::Traffic t = TrafficOf(Ev("cbo/LLC_VICTIMS.M_STATE"), 0);
  const uint64_t chunk = (uint64_t{1} << 42) + 12345;  // < 2^44 per chunk
  uint64_t injected = 0;
  for (int i = 0; i < 14; ++i) {
    ASSERT_TRUE(sim.Inject(0, t, chunk, 1).ok());
    injected += chunk;
    ASSERT_TRUE(dev.ExtendNow().ok());
  }
  ASSERT_GT(injected, 3 * (uint64_t{1} << 44));
  ASSERT_TRUE(dev.TakeSnapshot(&end).ok());
  EXPECT_EQ(end.values[0] - begin.values[0], injected);
}

TEST(DirectDeviceTest, BackgroundExtenderKeepsCountsExact) {
  IvyTownUncore sim(1);
  IvyTownDevice::Options o;
  o.assumed_max_clock_hz = 1e30;  // the period clamps to 1 ms
  IvyTownDevice dev(&sim, sim.topology(), o);
  ASSERT_TRUE(dev.Program(Req({"cbo[0]/LLC_VICTIMS.M_STATE"})).ok());
  EXPECT_EQ(dev.extender_period(), std::chrono::milliseconds(1));
  Snapshot begin(1), end(1);
  ASSERT_TRUE(dev.TakeSnapshot(&begin).ok());
  const IvyTownUncore::Traffic t = TrafficOf(Ev("cbo/LLC_VICTIMS.M_STATE"), 0);
  const uint64_t chunk = (uint64_t{1} << 43) + 1;
  for (int i = 0; i < 7; ++i) {  // 3.5 wraps, no explicit ExtendNow
    ASSERT_TRUE(sim.Inject(0, t, chunk, 1).ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
  }
  ASSERT_TRUE(dev.TakeSnapshot(&end).ok());
  EXPECT_EQ(end.values[0] - begin.values[0], 7 * chunk);
  EXPECT_TRUE(dev.extender_status().ok());
  ASSERT_TRUE(dev.Release().ok());
}

TEST(DirectDeviceTest, ExtenderPeriodFollowsTheFastestWrappingCounter) {
  IvyTownUncore sim(1);
  IvyTownDevice dev(&sim, sim.topology(), NoExtender());
  ASSERT_TRUE(dev.Program(Req({"irp/CLOCKTICKS", "ubox/UCLK"})).ok());
  // IRP: 2^44 / (255 per cycle * 5 GHz) = 13.8 s; a quarter of it.
  const double expected_s = std::ldexp(1.0, 44) / (255 * 5e9) / 4;
  EXPECT_NEAR(std::chrono::duration<double>(dev.extender_period()).count(),
              expected_s, 1e-3);
}

// ---------------------------------------------------------------------------
// Concurrency: many threads snapshot while traffic runs.

// Forwards to the simulator and tracks open snapshot windows (frz_all
// written, unfrz_all not yet), so the test can inject traffic only while no
// window is open: the hardware (and the simulator) count nothing while
// frozen, and this test is about software losing nothing.
class WindowGate : public registers::RegisterSpace {
 public:
  explicit WindowGate(IvyTownUncore* sim) : sim_(sim) {}

  absl::Status ReadMsr(int cpu, uint32_t msr, uint64_t* value) override {
    return sim_->ReadMsr(cpu, msr, value);
  }
  absl::Status WriteMsr(int cpu, uint32_t msr, uint64_t value) override {
    const bool global = msr == ivytown::kGlobal.global_control;
    if (global && ivytown::kGlobal.frz_all.Extract(value)) {
      std::lock_guard<std::mutex> lock(mu_);
      ++open_;
    }
    absl::Status s = sim_->WriteMsr(cpu, msr, value);
    if (global && ivytown::kGlobal.unfrz_all.Extract(value)) {
      std::lock_guard<std::mutex> lock(mu_);
      --open_;
      cv_.notify_all();
    }
    return s;
  }
  absl::Status ReadPci(const registers::PciAddress& fn, uint32_t offset,
                       uint32_t* value) override {
    return sim_->ReadPci(fn, offset, value);
  }
  absl::Status WritePci(const registers::PciAddress& fn, uint32_t offset,
                        uint32_t value) override {
    return sim_->WritePci(fn, offset, value);
  }
  // Injects with no window open (new windows wait meanwhile).
  absl::Status Inject(int socket, const IvyTownUncore::Traffic& t,
                      uint64_t per_cycle, uint64_t cycles) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return open_ == 0; });
    return sim_->Inject(socket, t, per_cycle, cycles);
  }

 private:
  IvyTownUncore* sim_;
  std::mutex mu_;
  std::condition_variable cv_;
  int open_ = 0;
};

TEST(DirectDeviceTest, EightThreadsSnapshottingDuringTrafficLoseNothing) {
  IvyTownUncore sim(2);
  WindowGate gate(&sim);
  IvyTownDevice dev(&gate, sim.topology(), NoExtender());
  ASSERT_TRUE(
      dev.Program(Req({"cbo[0]/LLC_VICTIMS.M_STATE", "imc[0]/CAS_COUNT.RD"}))
          .ok());
  const size_t n = dev.read_plan().size();
  ASSERT_EQ(n, 4u);  // event-major: cbo s0, cbo s1, imc s0, imc s1
  constexpr int kThreads = 8;
  std::atomic<bool> traffic_done{false};
  std::atomic<int> ready{0};
  std::atomic<int> failures{0};
  std::atomic<int> non_monotonic{0};
  std::vector<std::vector<uint64_t>> sums(kThreads,
                                          std::vector<uint64_t>(n, 0));
  std::vector<int> snapshots(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Snapshot prev(n), cur(n);
      if (!dev.TakeSnapshot(&prev).ok()) ++failures;
      ready.fetch_add(1);
      bool done = false;
      while (!done) {
        done = traffic_done.load();  // one more snapshot after the traffic
        if (!dev.TakeSnapshot(&cur).ok() || !cur.valid) {
          ++failures;
          continue;
        }
        ++snapshots[t];
        // Each thread accumulates the deltas of its own consecutive
        // snapshots.
        for (size_t i = 0; i < n; ++i) {
          if (cur.values[i] < prev.values[i]) ++non_monotonic;
          sums[t][i] += cur.values[i] - prev.values[i];
        }
        std::swap(prev, cur);
      }
    });
  }
  while (ready.load() < kThreads) std::this_thread::yield();
  const IvyTownUncore::Traffic cbo =
      TrafficOf(Ev("cbo/LLC_VICTIMS.M_STATE"), 0);
  const IvyTownUncore::Traffic imc = TrafficOf(Ev("imc/CAS_COUNT.RD"), 0);
  std::vector<uint64_t> injected(n, 0);
  for (int i = 0; i < 3000; ++i) {
    const int socket = i % 2;
    ASSERT_TRUE(gate.Inject(socket, cbo, 2, 5).ok());
    ASSERT_TRUE(gate.Inject(socket, imc, 3, 7).ok());
    injected[socket] += 10;
    injected[2 + socket] += 21;
  }
  traffic_done.store(true);
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(non_monotonic.load(), 0);
  // The first snapshots were taken before any traffic, the last ones after
  // all of it: every thread's deltas add up to exactly what was injected.
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_GT(snapshots[t], 0);
    for (size_t i = 0; i < n; ++i) {
      EXPECT_EQ(sums[t][i], injected[i]) << "thread " << t << " entry " << i;
    }
  }
  Snapshot final_snap(n);
  ASSERT_TRUE(dev.TakeSnapshot(&final_snap).ok());
  for (size_t i = 0; i < n; ++i) {
    EXPECT_EQ(final_snap.values[i], injected[i]);
  }
  EXPECT_GT(dev.frozen_ns(), 0u);
}

// ---------------------------------------------------------------------------
// Assignment and validation errors.

TEST(DirectDeviceTest, MatchingAssignmentOnRealEvents) {
  IvyTownUncore sim(1);
  IvyTownDevice dev(&sim, sim.topology(), NoExtender());
  // LLC_VICTIMS may use 0-1, RxR_OCCUPANCY only 0: first fit would fail.
  ASSERT_TRUE(
      dev.Program(Req({"cbo[0]/LLC_VICTIMS.M_STATE", "cbo[0]/RxR_OCCUPANCY.IRQ",
                       "cbo[0]/RING_AD_USED.CW", "cbo[0]/RING_AK_USED.CW"}))
          .ok());
  ASSERT_EQ(dev.read_plan().size(), 4u);
  EXPECT_EQ(dev.read_plan()[0].counter, 1);
  EXPECT_EQ(dev.read_plan()[1].counter, 0);
  EXPECT_EQ(dev.read_plan()[2].counter, 2);
  EXPECT_EQ(dev.read_plan()[3].counter, 3);
  EXPECT_EQ(sim.PeekMsr(0, 0x0D11), 0x00400137u);
  EXPECT_EQ(sim.PeekMsr(0, 0x0D10), 0x00400111u);
}

TEST(DirectDeviceTest, TooManyEventsIsAClearError) {
  IvyTownUncore sim(1);
  IvyTownDevice dev(&sim, sim.topology(), NoExtender());
  absl::Status s =
      dev.Program(Req({"cbo[2]/RxR_OCCUPANCY.IRQ", "cbo[2]/TOR_OCCUPANCY.ALL",
                       "cbo[2]/LLC_VICTIMS.M_STATE"}));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(common::StatusMessage(s),
              AllOf(HasSubstr("too many events"), HasSubstr("CBo2"),
                    HasSubstr("RxR_OCCUPANCY.IRQ may use counter 0"),
                    HasSubstr("TOR_OCCUPANCY.ALL may use counter 0"),
                    HasSubstr("LLC_VICTIMS.M_STATE may use counters 0,1")));
  EXPECT_EQ(sim.access_count(), 0u);  // refused before any access
  // Five events on a four-counter box.
  s = dev.Program(Req({"pcu/CLOCKTICKS", "pcu/CLOCKTICKS", "pcu/CLOCKTICKS",
                       "pcu/CLOCKTICKS", "pcu/CLOCKTICKS"}));
  EXPECT_THAT(common::StatusMessage(s), HasSubstr("PCU"));
  // Two events on one fixed counter.
  s = dev.Program(Req({"ubox/UCLK", "ubox/UCLK"}));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(common::StatusMessage(s), HasSubstr("fixed counter"));
}

TEST(DirectDeviceTest, FilterConflictNamesBothEvents) {
  IvyTownUncore sim(1);
  IvyTownDevice dev(&sim, sim.topology(), NoExtender());
  absl::Status s =
      dev.Program(Req({"cbo[0]/TOR_INSERTS.MISS_OPCODE:filter_opc=0x182",
                       "cbo[0]/TOR_INSERTS.OPCODE:filter_opc=0x181"}));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(common::StatusMessage(s),
              AllOf(HasSubstr("filter conflict"), HasSubstr("CBo0"),
                    HasSubstr("MISS_OPCODE"), HasSubstr("TOR_INSERTS.OPCODE"),
                    HasSubstr("Cn_MSR_PMON_BOX_FILTER1")));
  // The same value is shared fine, and lands in FILTER1 (0xD1A).
  ASSERT_TRUE(
      dev.Program(Req({"cbo[0]/TOR_INSERTS.MISS_OPCODE:filter_opc=0x182",
                       "cbo[0]/TOR_INSERTS.OPCODE:filter_opc=0x182"}))
          .ok());
  EXPECT_EQ(sim.PeekMsr(0, 0x0D1A), uint64_t{0x182} << 20);
}

TEST(DirectDeviceTest, PerfEventsBelongToThePerfBackend) {
  IvyTownUncore sim(1);
  IvyTownDevice dev(&sim, sim.topology(), NoExtender());
  absl::Status s = dev.Program(Req({"msr/tsc/"}));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(common::StatusMessage(s), HasSubstr("perf backend"));
}

TEST(DirectDeviceTest, UnknownSocketOrInstance) {
  IvyTownUncore sim(1);
  IvyTownDevice dev(&sim, sim.topology(), NoExtender());
  ProgramRequest r = Req({"cbo/CLOCKTICKS"});
  r.sockets = {1};
  EXPECT_EQ(dev.Program(r).code(), absl::StatusCode::kInvalidArgument);
  machine::Topology small = sim.topology();
  small.sockets[0].per_core_instances = 4;
  IvyTownDevice dev4(&sim, small, NoExtender());
  absl::Status s = dev4.Program(Req({"cbo[6]/CLOCKTICKS"}));
  EXPECT_THAT(common::StatusMessage(s), HasSubstr("CBo6 is not present"));
  ASSERT_TRUE(dev4.Program(Req({"cbo/CLOCKTICKS"})).ok());
  EXPECT_EQ(dev4.read_plan().size(), 4u);  // only the CBos present
}

// ---------------------------------------------------------------------------
// Another agent, rollback and release.

TEST(DirectDeviceTest, InUseIsRefusedUnlessForced) {
  IvyTownUncore sim(1);
  // Another agent counts on CBo0 counter 1 and has a value in counter 1.
  ASSERT_TRUE(sim.PresetMsr(0, 0x0D11, 0x00400137).ok());
  ASSERT_TRUE(sim.PresetMsr(0, 0x0D17, 0x123456).ok());
  const std::map<std::string, uint64_t> before = Dump(sim, 0);
  IvyTownDevice dev(&sim, sim.topology(), NoExtender());
  ProgramRequest req = Req({"cbo[0]/CLOCKTICKS"});
  absl::Status s = dev.Program(req);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(common::StatusMessage(s),
              AllOf(HasSubstr("in use by another agent"), HasSubstr("CBo0"),
                    HasSubstr("Cn_MSR_PMON_CTL1"), HasSubstr("MSR 0x0d11"),
                    HasSubstr("0x00400137"), HasSubstr("force")));
  EXPECT_EQ(Dump(sim, 0), before);  // nothing written
  // A frozen box counts as in use too.
  IvyTownUncore sim2(1);
  ASSERT_TRUE(
      sim2.PresetPci(0,
                     *sim2.topology().sockets[0].FindPci(BoxType::kHa, 0)->pmon,
                     0xF4, 0x00000100)
          .ok());
  IvyTownDevice dev2(&sim2, sim2.topology(), NoExtender());
  s = dev2.Program(Req({"ha[0]/CLOCKTICKS"}));
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(common::StatusMessage(s), HasSubstr("frz"));

  req.force = true;
  ASSERT_TRUE(dev.Program(req).ok());
  EXPECT_EQ(sim.PeekMsr(0, 0x0D11), 0u);  // the box reset cleared it
  ASSERT_TRUE(dev.Release().ok());
  EXPECT_EQ(Dump(sim, 0), before);  // the other agent's setup is back
}

TEST(DirectDeviceTest, ReleaseRestoresEveryRegisterAndIsIdempotent) {
  IvyTownUncore sim(1);
  // Leftovers of an earlier user: filters and counts, nothing enabled.
  ASSERT_TRUE(sim.PresetMsr(0, 0x0D14, 0x007E0001).ok());  // CBo0 FILTER0
  ASSERT_TRUE(sim.PresetMsr(0, 0x0D1A, 0x18200000).ok());  // CBo0 FILTER1
  ASSERT_TRUE(sim.PresetMsr(0, 0x0D16, 0xABCDEF).ok());    // CBo0 CTR0
  ASSERT_TRUE(sim.PresetMsr(0, 0x0D13, 0x00000137).ok());  // CTL3, en clear
  ASSERT_TRUE(sim.PresetMsr(0, 0x0C00, 0x00000003).ok());  // pmi_core_sel
  const registers::PciAddress imc =
      *sim.topology().sockets[0].FindPci(BoxType::kImc, 0)->pmon;
  ASSERT_TRUE(sim.PresetPci(0, imc, 0xA0, 0x55).ok());  // CTR0 low
  const std::map<std::string, uint64_t> before = Dump(sim, 0);
  IvyTownDevice dev(&sim, sim.topology(), NoExtender());
  ASSERT_TRUE(
      dev.Program(Req({"cbo[0]/LLC_VICTIMS.M_STATE", "imc[0]/CAS_COUNT.RD",
                       "imc[0]/DCLK", "ubox/UCLK"}))
          .ok());
  EXPECT_NE(Dump(sim, 0), before);
  // pmi_core_sel is kept in every global control write.
  for (const RegisterWrite& w : dev.program_writes()) {
    if (w.reg.address == 0x0C00) {
      EXPECT_EQ(w.value & 0x7FFF, 3u);
    }
  }
  ASSERT_TRUE(sim.Inject(0, TrafficOf(Ev("imc/CAS_COUNT.RD"), 0), 1, 10).ok());
  ASSERT_TRUE(dev.Release().ok());
  EXPECT_EQ(Dump(sim, 0), before);
  EXPECT_FALSE(sim.GlobalFrozen(0));
  EXPECT_TRUE(dev.Release().ok());  // idempotent
  EXPECT_EQ(Dump(sim, 0), before);
  Snapshot s(1);
  EXPECT_EQ(dev.TakeSnapshot(&s).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_FALSE(s.valid);
}

TEST(DirectDeviceTest, PlanWritesIsExactlyWhatProgramWrites) {
  IvyTownUncore sim(2);
  IvyTownDevice dev(&sim, sim.topology(), NoExtender());
  ProgramRequest req = Req({"cbo[1-2]/TOR_INSERTS.MISS_OPCODE:filter_opc=0x182",
                            "qpi/TxL_FLITS_G0.DATA", "imc[3]/DCLK",
                            "ubox/EVENT_MSG.DOORBELL_RCVD"});
  absl::StatusOr<std::vector<RegisterWrite>> plan = dev.PlanWrites(req);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(sim.access_count(), 0u);  // planning touches nothing
  ASSERT_TRUE(dev.Program(req).ok());
  ASSERT_EQ(plan->size(), dev.program_writes().size());
  for (size_t i = 0; i < plan->size(); ++i) {
    const RegisterWrite& a = (*plan)[i];
    const RegisterWrite& b = dev.program_writes()[i];
    EXPECT_EQ(a.reg.Location(), b.reg.Location()) << i;
    EXPECT_EQ(a.reg.socket, b.reg.socket) << i;
    EXPECT_EQ(a.value, b.value) << i;
    EXPECT_EQ(a.name, b.name) << i;
  }
  // Per socket: freeze first, unfreeze last, every box reset before any
  // filter or control of the socket.
  for (int socket = 0; socket < 2; ++socket) {
    std::vector<const RegisterWrite*> w;
    for (const RegisterWrite& x : *plan) {
      if (x.reg.socket == socket) w.push_back(&x);
    }
    ASSERT_FALSE(w.empty());
    EXPECT_THAT(w.front()->name, HasSubstr("GLOBAL_CTL"));
    EXPECT_THAT(w.front()->why, HasSubstr("frz_all"));
    EXPECT_THAT(w.back()->why, HasSubstr("unfrz_all"));
    size_t last_reset = 0, first_other = w.size();
    for (size_t i = 1; i + 1 < w.size(); ++i) {
      if (w[i]->name.find("BOX_CTL") != std::string::npos) {
        last_reset = i;
      } else {
        first_other = std::min(first_other, i);
      }
    }
    EXPECT_LT(last_reset, first_other);
  }
  // Names use the manual's spelling, PCI locations the device:function.
  EXPECT_TRUE(std::any_of(plan->begin(), plan->end(), [](const auto& w) {
    return w.name == "Cn_MSR_PMON_BOX_FILTER1 (CBo1)" &&
           w.reg.Location() == "MSR 0x0d3a" && w.value == 0x18200000;
  }));
  EXPECT_TRUE(std::any_of(plan->begin(), plan->end(), [](const auto& w) {
    return w.name == "MC_CHy_PCI_PMON_FIXED_CTL (iMC0 channel 3)" &&
           w.reg.Location().starts_with("PCI D16:F1 +0x0f0") &&
           w.value == 0x00400000;
  }));
}

TEST(DirectDeviceTest, RegisterPrefixesMatchTheDescriptorNames) {
  for (const ivytown::BoxDescriptor& box : ivytown::AllBoxes()) {
    const std::string_view prefix = direct::RegisterPrefix(box.type);
    for (const auto& f : box.filters) {
      EXPECT_TRUE(f.name.starts_with(prefix)) << f.name << " vs " << prefix;
    }
    if (box.fixed_counter) {
      EXPECT_TRUE(box.fixed_counter->manual_control_name.starts_with(prefix));
    }
  }
}

// ---------------------------------------------------------------------------
// Failures: rollback of a failed Program, invalid snapshots, access cost.

// A request over every kind of register: MSR and PCI boxes, filters (CBo,
// HA, PCU, QPI mask/match in the auxiliary function), fixed counters, on
// two sockets.
ProgramRequest EveryKindOfRegister() {
  return Req({"cbo[1]/TOR_INSERTS.MISS_OPCODE:filter_opc=0x182",
              "ha[0]/REQUESTS.READS", "imc[1]/CAS_COUNT.WR", "imc[1]/DCLK",
              "pcu/FREQ_BAND1_CYCLES:filter_band1=20", "ubox/UCLK",
              "qpi[0]/TxL_FLITS_G0.DATA:match0=0x8,mask0=0x8",
              "r3qpi[1]/CLOCKTICKS", "irp/CLOCKTICKS", "r2pcie/CLOCKTICKS"});
}

// Fills every allow-listed register of `topology` (MSRs on each socket's
// msr_cpu) with a distinct value inside its writable bits, with no enable or
// freeze bit set (so nothing looks in use), and returns what was set.
std::map<std::string, uint64_t> FillWithLeftovers(
    registers::RecordingRegisterSpace* space,
    const machine::Topology& topology) {
  registers::RecordingRegisterSpace scratch;
  machine::AllowListGuard guard(&scratch, ivytown::RegisterAllowList(topology));
  std::map<std::string, uint64_t> set;
  uint64_t pattern = 0x9E3779B97F4A7C15;
  for (const machine::AllowedRegister& r : guard.AllowedRegisters()) {
    if (r.role == machine::RegisterRole::kGlobalControl) continue;
    pattern = pattern * 6364136223846793005 + 1442695040888963407;
    uint64_t value = pattern & r.writable_mask;
    if (r.role == machine::RegisterRole::kCounterControl ||
        r.role == machine::RegisterRole::kFixedControl) {
      value &= ~(uint64_t{1} << 22);  // en
    }
    if (r.role == machine::RegisterRole::kBoxControl) value = 0;
    if (r.space == ivytown::AccessSpace::kMsr) {
      space->SetMsr(topology.sockets[r.socket].msr_cpu, r.address, value);
    } else {
      space->SetPci(r.function, r.address, static_cast<uint32_t>(value));
    }
    set[r.Describe()] = value;
  }
  return set;
}

std::map<std::string, uint64_t> ReadBack(
    const registers::RecordingRegisterSpace& space,
    const machine::Topology& topology) {
  registers::RecordingRegisterSpace scratch;
  machine::AllowListGuard guard(&scratch, ivytown::RegisterAllowList(topology));
  std::map<std::string, uint64_t> now;
  for (const machine::AllowedRegister& r : guard.AllowedRegisters()) {
    if (r.role == machine::RegisterRole::kGlobalControl) continue;
    now[r.Describe()] =
        r.space == ivytown::AccessSpace::kMsr
            ? space.PeekMsr(topology.sockets[r.socket].msr_cpu, r.address)
            : space.PeekPci(r.function, r.address);
  }
  return now;
}

TEST(DirectDeviceTest, AFailureAtAnyProgrammingStepRollsEverythingBack) {
  const machine::Topology topology =
      machine::SimulatedTopology(ivytown::Record(), 2);
  const ProgramRequest req = EveryKindOfRegister();
  absl::StatusOr<std::vector<RegisterWrite>> plan =
      direct::PlanWrites(req, topology);
  ASSERT_TRUE(plan.ok()) << common::StatusMessage(plan.status());
  const int steps = static_cast<int>(plan->size());
  ASSERT_GT(steps, 60);
  for (int k = 1; k <= steps; ++k) {
    registers::RecordingRegisterSpace space;
    const std::map<std::string, uint64_t> before =
        FillWithLeftovers(&space, topology);
    machine::AllowListGuard guard(&space, ivytown::RegisterAllowList(topology));
    IvyTownDevice dev(&guard, topology, NoExtender());
    space.FailNthWrite(k);
    const absl::Status s = dev.Program(req);
    ASSERT_EQ(s.code(), absl::StatusCode::kUnavailable) << "step " << k;
    EXPECT_THAT(common::StatusMessage(s),
                AllOf(HasSubstr(fmt::format("step {} of {}", k, steps)),
                      HasSubstr("every register written so far was restored")));
    EXPECT_FALSE(dev.programmed());
    EXPECT_EQ(ReadBack(space, topology), before) << "step " << k;
    // After a failed Program the device programs normally.
    ASSERT_TRUE(dev.Program(req).ok()) << "step " << k;
    ASSERT_TRUE(dev.Release().ok());
    EXPECT_EQ(ReadBack(space, topology), before) << "release, step " << k;
  }
}

TEST(DirectDeviceTest, AFailedSaveReadWritesNothing) {
  const machine::Topology topology =
      machine::SimulatedTopology(ivytown::Record(), 1);
  registers::RecordingRegisterSpace space;
  space.FailMsrReads(0x0D30);  // CBo1 box control, read to save it
  IvyTownDevice dev(&space, topology, NoExtender());
  const absl::Status s = dev.Program(EveryKindOfRegister());
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(common::StatusMessage(s), HasSubstr("0x0d30"));
  EXPECT_EQ(space.CountWrites(), 0);
}

TEST(DirectDeviceTest, AFailedReadMakesTheSnapshotInvalidAndStillUnfreezes) {
  const machine::Topology topology =
      machine::SimulatedTopology(ivytown::Record(), 1);
  registers::RecordingRegisterSpace space;
  IvyTownDevice dev(&space, topology, NoExtender());
  ASSERT_TRUE(dev.Program(Req({"cbo[0]/CLOCKTICKS", "cbo[1]/CLOCKTICKS",
                               "imc[0]/CAS_COUNT.RD"}))
                  .ok());
  Snapshot snap(dev.read_plan().size());
  ASSERT_TRUE(dev.TakeSnapshot(&snap).ok());
  EXPECT_TRUE(snap.valid);

  const registers::PciAddress imc0 =
      *topology.sockets[0].FindPci(BoxType::kImc, 0)->pmon;
  for (int which = 0; which < 2; ++which) {
    if (which == 0) {
      space.FailMsrReads(0x0D36);  // CBo1 CTR0
    } else {
      space.FailPciReads(imc0, 0xA0 + 4);  // iMC0 ch0 CTR0 high dword
    }
    space.Clear();
    snap.values.assign(snap.values.size(), 42);
    const absl::Status s = dev.TakeSnapshot(&snap);
    EXPECT_FALSE(s.ok());
    EXPECT_FALSE(snap.valid);
    EXPECT_THAT(snap.values, ::testing::Each(0u));
    const std::vector<registers::RegisterAccess> log = space.accesses();
    ASSERT_GE(log.size(), 2u);
    EXPECT_EQ(log.back().op, registers::RegisterAccess::Op::kWrite);
    EXPECT_EQ(log.back().address, ivytown::kGlobal.global_control);
    EXPECT_EQ(log.back().value & (uint64_t{1} << 29), uint64_t{1} << 29)
        << "the socket is unfrozen after a failed read";
    space.ClearFailures();
  }
  ASSERT_TRUE(dev.TakeSnapshot(&snap).ok());
  EXPECT_TRUE(snap.valid);
}

TEST(DirectDeviceTest, ASnapshotCostsTwoWritesPerSocketAndOneReadPerDword) {
  const machine::Topology topology =
      machine::SimulatedTopology(ivytown::Record(), 2);
  registers::RecordingRegisterSpace space;
  IvyTownDevice dev(&space, topology, NoExtender());
  // Per socket: 3 MSR counters (2 CBo + U-Box fixed) and 3 PCI counters
  // (iMC general + fixed, QPI).
  ASSERT_TRUE(dev.Program(Req({"cbo[0-1]/CLOCKTICKS", "ubox/UCLK",
                               "imc[2]/CAS_COUNT.RD", "imc[2]/DCLK",
                               "qpi[1]/TxL_FLITS_G0.DATA"}))
                  .ok());
  ASSERT_EQ(dev.read_plan().size(), 12u);
  Snapshot snap(dev.read_plan().size());
  space.Clear();
  ASSERT_TRUE(dev.TakeSnapshot(&snap).ok());
  const std::vector<registers::RegisterAccess> log = space.accesses();
  int writes = 0, msr_reads = 0, pci_reads = 0;
  for (const registers::RegisterAccess& a : log) {
    if (a.op == registers::RegisterAccess::Op::kWrite) {
      ++writes;
      EXPECT_EQ(a.address, ivytown::kGlobal.global_control);
    } else if (a.space == registers::RegisterAccess::Space::kMsr) {
      ++msr_reads;
    } else {
      ++pci_reads;
    }
  }
  EXPECT_EQ(writes, 2 * 2);
  EXPECT_EQ(msr_reads, 2 * 3);
  EXPECT_EQ(pci_reads, 2 * 3 * 2);
  EXPECT_EQ(log.size(), 4u + 6u + 12u);
  // Per socket the window is: freeze, every read, unfreeze.
  EXPECT_EQ(log[0].value & (uint64_t{1} << 31), uint64_t{1} << 31);
  EXPECT_EQ(log[10].value & (uint64_t{1} << 29), uint64_t{1} << 29);
}

}  // namespace
}  // namespace uncore::devices
