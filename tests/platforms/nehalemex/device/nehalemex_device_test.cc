#include "sdk/platforms/nehalemex/device/nehalemex_device.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "sdk/platforms/nehalemex/model/box_descriptors.h"
#include "sdk/platforms/nehalemex/sim/nehalemex_uncore.h"
#include "sdk/registers/recording_register_space.h"

namespace uncore::devices {
namespace {

using nehalemex::BoxType;
using nehalemex::kCbox;
using nehalemex::kGlobalCtl;
using nehalemex::kMbox;
using nehalemex::kSbox;
using nehalemex::kWFixed;
using nehalemex::Variant;
using registers::RecordingRegisterSpace;
using registers::RegisterAccess;
using sim::NehalemExUncore;

spec::EventSpec Perf(std::string pmu,
                     std::vector<std::pair<std::string, uint64_t>> terms) {
  spec::EventSpec e;
  e.kind = spec::EventSpec::Kind::kGenericPerf;
  e.pmu = std::move(pmu);
  for (auto& [name, value] : terms) e.perf_terms.push_back({name, value});
  return e;
}

ProgramRequest Request(std::vector<spec::EventSpec> events) {
  ProgramRequest r;
  r.events = std::move(events);
  return r;
}

// Replays recorded writes and fails if a guarded MATCH/MASK was written
// while its MM_CFG[63] was 1 (the GP-fault rule of p. 2-49).
void ExpectNoGuardViolation(const std::vector<RegisterAccess>& accesses,
                            const RecordingRegisterSpace& initial_unused) {
  (void)initial_unused;
  std::vector<std::pair<uint32_t, bool>> mm_enabled;  // per mm_cfg
  auto enabled = [&](uint32_t mm) {
    for (auto& [a, on] : mm_enabled) {
      if (a == mm) return on;
    }
    return false;
  };
  auto set = [&](uint32_t mm, bool on) {
    for (auto& [a, e] : mm_enabled) {
      if (a == mm) {
        e = on;
        return;
      }
    }
    mm_enabled.push_back({mm, on});
  };
  for (const RegisterAccess& a : accesses) {
    if (a.op != RegisterAccess::Op::kWrite || a.failed) continue;
    for (const nehalemex::BoxDescriptor* box : {&kSbox, &kMbox}) {
      for (const auto& mm : box->match_mask) {
        if (a.address == mm.mm_cfg) set(mm.mm_cfg, (a.value >> 63) != 0);
        if ((a.address == mm.match || a.address == mm.mask) &&
            enabled(mm.mm_cfg)) {
          ADD_FAILURE() << "guarded write while MM_CFG[63]=1: " << a.ToString();
        }
      }
    }
  }
}

class NehalemExDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sim_ = NehalemExUncore::Create(Variant::kNehalemEx, 2);
    dev_ = std::make_unique<NehalemExDevice>(
        sim_.get(), Variant::kNehalemEx,
        NehalemExDevice::ConsecutiveSockets(2, 1));
  }
  uint64_t Delta(const Snapshot& a, const Snapshot& b, size_t i) {
    return b.values[i] - a.values[i];
  }

  std::unique_ptr<NehalemExUncore> sim_;
  std::unique_ptr<NehalemExDevice> dev_;
};

TEST_F(NehalemExDeviceTest, ASocketNamedTwiceIsProgrammedOnce) {
  ProgramRequest req = Request({Perf("uncore_wbox", {{"event", 0xff}})});
  req.sockets = {1, 0, 1};
  ASSERT_TRUE(dev_->Program(req).ok());
  // One entry per socket: a socket listed twice would be read under two
  // locks (a race with the background extender).
  ASSERT_EQ(dev_->read_plan().size(), 2u);
  EXPECT_EQ(dev_->read_plan()[0].socket, 0);
  EXPECT_EQ(dev_->read_plan()[1].socket, 1);
  Snapshot a(2);
  EXPECT_TRUE(dev_->TakeSnapshot(&a).ok());
  EXPECT_TRUE(dev_->ExtendNow().ok());
  ASSERT_TRUE(dev_->Release().ok());
}

TEST_F(NehalemExDeviceTest, CountsExactUnderInjectedTraffic) {
  ASSERT_TRUE(
      dev_
          ->Program(Request({
              Perf("uncore_cbox", {{"event", 0x01}, {"umask", 0x03}}),
              Perf("uncore_wbox", {{"event", 0xff}}),
              Perf("uncore_mbox_1", {{"inc_sel", 0xd}, {"fvc", 0x2800}}),
              Perf("uncore_bbox_0", {{"event", 0x5}, {"counter", 2}}),
          }))
          .ok());
  const auto& plan = dev_->read_plan();
  ASSERT_EQ(plan.size(), 2u * 8 + 2 + 2 + 2);
  EXPECT_EQ(dev_->EntryName(3), "uncore_cbox_3");
  EXPECT_EQ(plan[3].instance, 3);
  EXPECT_EQ(plan[3].width, 48);
  EXPECT_EQ(plan[16].counter, kFixedCounter);
  EXPECT_EQ(dev_->EntryName(16), "uncore_wbox");
  EXPECT_EQ(dev_->EntryName(18), "uncore_mbox_1");
  EXPECT_EQ(plan[20].counter, 2);  // the B-Box event's own counter

  // A C-Box counter about to wrap: the device extends it.
  sim_->Poke(1, kCbox.CounterAddress(5, 0), (uint64_t{1} << 48) - 10);
  Snapshot a(plan.size()), b(plan.size());
  ASSERT_TRUE(dev_->TakeSnapshot(&a).ok());
  for (int s = 0; s < 2; ++s) {
    for (int i = 0; i < 8; ++i) {
      ASSERT_TRUE(
          sim_->AddEvents(s, BoxType::kC, i, 0x0301, 100 * s + i + 1).ok());
      // Other events and instances do not leak in.
      ASSERT_TRUE(sim_->AddEvents(s, BoxType::kC, i, 0x0302, 999).ok());
    }
    ASSERT_TRUE(sim_->AddFixedCounts(s, 5000 + s).ok());
    ASSERT_TRUE(sim_->AddEvents(s, BoxType::kM, 1, 0xD << 9, 77 + s).ok());
    ASSERT_TRUE(sim_->AddEvents(s, BoxType::kM, 0, 0xD << 9, 1000).ok());
    ASSERT_TRUE(sim_->AddEvents(s, BoxType::kB, 0, 0x5 << 1, 3 + s).ok());
  }
  ASSERT_TRUE(dev_->TakeSnapshot(&b).ok());
  ASSERT_TRUE(b.valid);
  for (size_t e = 0; e < plan.size(); ++e) {
    const int s = plan[e].socket;
    uint64_t want = 0;
    if (plan[e].event == 0) want = 100 * s + plan[e].instance + 1;
    if (plan[e].event == 1) want = 5000 + s;
    if (plan[e].event == 2) want = 77 + s;
    if (plan[e].event == 3) want = 3 + s;
    EXPECT_EQ(Delta(a, b, e), want) << dev_->EntryName(e) << " socket " << s;
  }
  EXPECT_GT(dev_->frozen_ns(), 0u);
  EXPECT_EQ(sim_->gp_faults(), 0);
}

TEST_F(NehalemExDeviceTest, SnapshotsFromManyThreads) {
  ASSERT_TRUE(
      dev_->Program(Request({Perf("uncore_cbox_2", {{"event", 0x07}})})).ok());
  // Snapshots run concurrently with each other; an event injected while
  // another thread's snapshot has en_all cleared would (as on the
  // hardware) not be counted, so injections wait for snapshots to finish.
  std::shared_mutex window;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      Snapshot prev(dev_->read_plan().size());
      for (int k = 0; k < 200; ++k) {
        Snapshot cur(dev_->read_plan().size());
        {
          std::shared_lock<std::shared_mutex> lock(window);
          ASSERT_TRUE(dev_->TakeSnapshot(&cur).ok());
        }
        for (size_t e = 0; e < cur.values.size(); ++e) {
          EXPECT_GE(cur.values[e], prev.values[e]);
        }
        prev = cur;
        std::unique_lock<std::shared_mutex> lock(window);
        ASSERT_TRUE(sim_->AddEvents(0, BoxType::kC, 2, 0x07, 1).ok());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  Snapshot end(dev_->read_plan().size());
  ASSERT_TRUE(dev_->TakeSnapshot(&end).ok());
  EXPECT_EQ(end.values[0], 800u);  // socket 0
  EXPECT_EQ(end.values[1], 0u);    // socket 1
}

TEST(NehalemExDeviceSequence, SboxMatchMaskStepsAToD) {
  RecordingRegisterSpace space;
  NehalemExDevice dev(&space, Variant::kNehalemEx, {{.socket = 0, .cpu = 0}});
  ASSERT_TRUE(dev.Program(Request({Perf("uncore_sbox_1", {{"event", 0x0},
                                                          {"match", 0x1234},
                                                          {"mask", 0xff00}})}))
                  .ok());
  const auto& mm = kSbox.match_mask[1];
  const uint32_t ctl = kSbox.ControlAddress(1, 0);
  std::vector<std::pair<uint32_t, uint64_t>> relevant;
  for (const RegisterAccess& a : space.accesses()) {
    if (a.op != RegisterAccess::Op::kWrite) continue;
    if (a.address == mm.mm_cfg || a.address == mm.match ||
        a.address == mm.mask || (a.address == ctl && a.value != 0)) {
      relevant.push_back({a.address, a.value});
    }
  }
  const std::vector<std::pair<uint32_t, uint64_t>> want = {
      {mm.mm_cfg, 0},                   // a) MM_CFG[63] = 0
      {mm.match, 0x1234},               // b) MATCH
      {mm.mask, 0xff00},                // b) MASK
      {ctl, uint64_t{1} << 22},         // c) event select 0x0, en
      {mm.mm_cfg, uint64_t{1} << 63}};  // d) MM_CFG[63] = 1
  EXPECT_EQ(relevant, want);
  ExpectNoGuardViolation(space.accesses(), space);
  // Release restores MM_CFG last, after MATCH/MASK.
  space.Clear();
  ASSERT_TRUE(dev.Release().ok());
  ExpectNoGuardViolation(space.accesses(), space);
  EXPECT_EQ(space.PeekMsr(0, mm.mm_cfg), 0u);
  EXPECT_EQ(space.PeekMsr(0, mm.match), 0u);
}

TEST_F(NehalemExDeviceTest, NeverFaultsWithMatchingAlreadyEnabled) {
  // Another configuration left S0 and M0 matching on.
  const auto& s0 = kSbox.match_mask[0];
  const auto& m0 = kMbox.match_mask[0];
  for (int s = 0; s < 2; ++s) {
    sim_->Poke(s, s0.match, 0xAAAA);
    sim_->Poke(s, s0.mm_cfg, uint64_t{1} << 63);
    sim_->Poke(s, m0.match, 0x55);
    sim_->Poke(s, m0.mm_cfg, uint64_t{1} << 63);
  }
  ASSERT_TRUE(
      dev_->Program(Request({
                        Perf("uncore_sbox_0",
                             {{"event", 0x0}, {"match", 0x1}, {"mask", 0x2}}),
                        Perf("uncore_mbox_0", {{"inc_sel", 0xa},
                                               {"iss", 0x3},
                                               {"pld", 0x4},
                                               {"filter_cfg_en", 1},
                                               {"filter_match", 0x1000},
                                               {"filter_mask", 0x3f}}),
                    }))
          .ok());
  EXPECT_EQ(sim_->Peek(0, s0.match), 0x1u);
  EXPECT_EQ(sim_->Peek(0, m0.match), 0x1000u);
  EXPECT_EQ(sim_->Peek(0, m0.mask), 0x3Fu);
  EXPECT_EQ(sim_->Peek(1, kMbox.GlobalCtlAddress(0) + 0x6), 0x3u);  // ISS
  EXPECT_EQ(sim_->Peek(1, kMbox.GlobalCtlAddress(0) + 0xA), 0x4u);  // PLD
  Snapshot snap(dev_->read_plan().size());
  ASSERT_TRUE(dev_->TakeSnapshot(&snap).ok());
  ASSERT_TRUE(dev_->Release().ok());
  EXPECT_EQ(sim_->gp_faults(), 0);
  EXPECT_EQ(sim_->Peek(0, s0.match), 0xAAAAu);
  EXPECT_EQ(sim_->Peek(0, s0.mm_cfg), uint64_t{1} << 63);
  EXPECT_EQ(sim_->Peek(1, m0.match), 0x55u);
}

TEST_F(NehalemExDeviceTest, ReleaseRestoresEveryRegister) {
  // State another agent left: frz_all, some ctr_en bits, counter values.
  std::vector<std::pair<uint32_t, uint64_t>> before = {
      {kGlobalCtl.address, uint64_t{1} << 31},
      {kCbox.GlobalCtlAddress(4), 0x30},
      {kCbox.CounterAddress(4, 0), 12345},
      {kCbox.ControlAddress(4, 0), 0x0101},  // en clear: not in use
      {nehalemex::kWbox.GlobalCtlAddress(0), 0x1},
      {kWFixed.counter, 99},
  };
  for (auto& [msr, v] : before) sim_->Poke(0, msr, v);
  ASSERT_TRUE(dev_->Program(Request({Perf("uncore_cbox_4", {{"event", 0x2}}),
                                     Perf("uncore_wbox", {{"event", 0xff}}),
                                     Perf("uncore_ubox", {{"event", 0x1}})}))
                  .ok());
  EXPECT_EQ(sim_->Peek(0, kGlobalCtl.address),
            (uint64_t{1} << 31) | (uint64_t{1} << 28) | 1);
  ASSERT_TRUE(sim_->AddEvents(0, BoxType::kC, 4, 0x2, 50).ok());
  ASSERT_TRUE(dev_->Release().ok());
  ASSERT_TRUE(dev_->Release().ok());  // twice is fine
  for (auto& [msr, v] : before) {
    EXPECT_EQ(sim_->Peek(0, msr), v) << std::hex << msr;
  }
  EXPECT_EQ(sim_->Peek(1, kGlobalCtl.address), 0u);
  EXPECT_EQ(sim_->gp_faults(), 0);
}

TEST(NehalemExDeviceRollback, EveryFailedWriteRollsBack) {
  const std::vector<spec::EventSpec> events = {
      Perf("uncore_sbox_0", {{"event", 0x0}, {"match", 0x9}, {"mask", 0x6}}),
      Perf("uncore_cbox_1", {{"event", 0x3}}),
      Perf("uncore_rbox_1", {{"event", 0x4},
                             {"xbr_match", 0x7},
                             {"xbr_mask", 0x8},
                             {"xbr_mm_cfg", 0x1}}),
      Perf("uncore_wbox", {{"event", 0xff}}),
  };
  std::vector<std::pair<uint32_t, uint64_t>> before = {
      {kGlobalCtl.address, uint64_t{1} << 31},
      {kSbox.match_mask[0].mm_cfg, uint64_t{1} << 63},
      {kSbox.match_mask[0].match, 0x44},
      {kCbox.GlobalCtlAddress(1), 0x20},
      {kCbox.CounterAddress(1, 0), 777},
  };
  int total_writes = 0;
  {
    RecordingRegisterSpace space;
    NehalemExDevice dev(&space, Variant::kWestmereEx,
                        {{.socket = 0, .cpu = 0}});
    ASSERT_TRUE(dev.Program(Request(events)).ok());
    total_writes = space.CountWrites();
  }
  ASSERT_GT(total_writes, 10);
  for (int n = 1; n <= total_writes; ++n) {
    SCOPED_TRACE(n);
    RecordingRegisterSpace space;
    for (auto& [msr, v] : before) space.SetMsr(0, msr, v);
    NehalemExDevice dev(&space, Variant::kWestmereEx,
                        {{.socket = 0, .cpu = 0}});
    space.FailNthWrite(n);
    const absl::Status st = dev.Program(Request(events));
    EXPECT_FALSE(st.ok());
    EXPECT_FALSE(dev.programmed());
    ExpectNoGuardViolation(space.accesses(), space);
    for (const RegisterAccess& a : space.accesses()) {
      if (a.op != RegisterAccess::Op::kWrite) continue;
      uint64_t want = 0;
      for (auto& [msr, v] : before) {
        if (msr == a.address) want = v;
      }
      EXPECT_EQ(space.PeekMsr(0, a.address), want) << std::hex << a.address;
    }
  }
}

TEST_F(NehalemExDeviceTest, TooManyEventsIsAClearError) {
  std::vector<spec::EventSpec> events;
  for (int i = 0; i < 7; ++i) {
    events.push_back(Perf("uncore_cbox_0", {{"event", 0x10 + i}}));
  }
  const absl::Status st = dev_->Program(Request(events));
  EXPECT_EQ(st.code(), absl::StatusCode::kResourceExhausted) << st;
  EXPECT_NE(std::string(st.message()).find("only 6 counters"),
            std::string::npos)
      << st;
  EXPECT_FALSE(dev_->programmed());
  EXPECT_EQ(sim_->Peek(0, kGlobalCtl.address), 0u);  // nothing written
  events.pop_back();
  EXPECT_TRUE(dev_->Program(Request(events)).ok());
}

TEST_F(NehalemExDeviceTest, CounterSpecificBboxEvents) {
  const absl::Status st = dev_->Program(
      Request({Perf("uncore_bbox_1", {{"event", 0x1}, {"counter", 1}}),
               Perf("uncore_bbox_1", {{"event", 0x2}, {"counter", 1}})}));
  EXPECT_EQ(st.code(), absl::StatusCode::kResourceExhausted) << st;
  EXPECT_NE(std::string(st.message()).find("counter-specific"),
            std::string::npos)
      << st;
  // On distinct counters they fit, and each lands on its own counter.
  ASSERT_TRUE(
      dev_
          ->Program(Request(
              {Perf("uncore_bbox_1", {{"event", 0x1}, {"counter", 3}}),
               Perf("uncore_bbox_1", {{"event", 0x2}, {"counter", 1}})}))
          .ok());
  EXPECT_EQ(dev_->read_plan()[0].counter, 3);
  EXPECT_EQ(dev_->read_plan()[2].counter, 1);
  EXPECT_EQ(sim_->Peek(0, nehalemex::kBbox.ControlAddress(1, 3)), 0x3u);
}

TEST_F(NehalemExDeviceTest, RefusesBadEvents) {
  EXPECT_FALSE(dev_->Program(Request({Perf("uncore_qbox", {})})).ok());
  EXPECT_FALSE(dev_->Program(Request({Perf("uncore_cbox_8", {})})).ok());
  const absl::Status term =
      dev_->Program(Request({Perf("uncore_cbox", {{"tid", 1}})}));
  EXPECT_NE(std::string(term.message()).find("thresh"), std::string::npos)
      << term;
  EXPECT_FALSE(
      dev_->Program(Request({Perf("uncore_cbox", {{"event", 0x100}})})).ok());
  spec::EventSpec box_event;
  EXPECT_FALSE(dev_->Program(Request({box_event})).ok());
  // Two M-Box events that need different ZDP_CTL_FVC shared bits.
  const absl::Status fvc = dev_->Program(
      Request({Perf("uncore_mbox_0", {{"inc_sel", 0xd}, {"fvc", 0x2800}}),
               Perf("uncore_mbox_0", {{"inc_sel", 0xd}, {"fvc", 0x2820}})}));
  EXPECT_EQ(fvc.code(), absl::StatusCode::kFailedPrecondition) << fvc;
  EXPECT_EQ(sim_->gp_faults(), 0);
  // thresh8 is accepted as the kernel's thresh.
  const absl::Status thresh8 = dev_->Program(
      Request({Perf("uncore_cbox_0", {{"event", 0x1}, {"thresh8", 2}})}));
  ASSERT_TRUE(thresh8.ok()) << thresh8;
  EXPECT_EQ(sim_->Peek(0, kCbox.ControlAddress(0, 0)),
            (uint64_t{2} << 24) | (uint64_t{1} << 22) | 1);
}

TEST_F(NehalemExDeviceTest, MboxFvcFieldsShareOneRegister) {
  // Two FVC events on different event fields with the same shared bits
  // share ZDP_CTL_FVC (the kernel's rule); 0x14020 would need other shared
  // bits than 0x2800.
  ASSERT_TRUE(
      dev_
          ->Program(Request({
              Perf("uncore_mbox_1", {{"inc_sel", 0xd}, {"fvc", 0x2800}}),
              Perf("uncore_mbox_1", {{"inc_sel", 0xe}, {"fvc", 0xc000}}),
          }))
          .ok());
  EXPECT_EQ(sim_->Peek(0, kMbox.GlobalCtlAddress(1) + 0xB), 0xE800u);
  EXPECT_EQ(sim_->Peek(1, kMbox.ControlAddress(1, 1)), (0xEu << 9) | 1);
  ASSERT_TRUE(dev_->Release().ok());
  const absl::Status st = dev_->Program(
      Request({Perf("uncore_mbox_1", {{"inc_sel", 0xd}, {"fvc", 0x2800}}),
               Perf("uncore_mbox_1", {{"inc_sel", 0xe}, {"fvc", 0x14020}})}));
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition) << st;
}

TEST_F(NehalemExDeviceTest, InUseCountersNeedForce) {
  sim_->Poke(0, kCbox.ControlAddress(0, 0), (uint64_t{1} << 22) | 0x5);
  ProgramRequest req = Request({Perf("uncore_cbox_0", {{"event", 0x1}})});
  const absl::Status st = dev_->Program(req);
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition) << st;
  EXPECT_NE(std::string(st.message()).find("in use"), std::string::npos);
  req.force = true;
  EXPECT_TRUE(dev_->Program(req).ok());
}

}  // namespace
}  // namespace uncore::devices
