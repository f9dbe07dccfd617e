// The generic register engine, driven by a made-up platform that is
// neither IvyTown nor the Xeon 7500: a socket-wide enable (bit 0 of MSR
// 0x100, bits 15:8 owned by someone else), two 16-bit MSR counters with
// their controls, one 32-bit PCI counter read as two dwords, and a guard
// register that must be cleared before the counters' controls are
// written and restored last.  What the engine does is whatever the program
// says: these tests pin that contract (docs/direct-backend.md "The
// engine"); IvyTownDevice and NehalemExDevice have their own tests.
#include "sdk/devices/engine/register_engine.h"

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sdk/common/status_macros.h"
#include "sdk/common/text.h"
#include "sdk/registers/recording_register_space.h"

namespace uncore::devices::engine {

using ::uncore::platforms::AccessSpace;
namespace {

using registers::RecordingRegisterSpace;
using registers::RegisterAccess;
using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr int kCpu = 3;
constexpr uint32_t kGlobal = 0x100;
constexpr uint32_t kGuard = 0x101;
constexpr uint32_t kControl0 = 0x110;
constexpr uint32_t kCounter0 = 0x120;
constexpr uint64_t kEnableAll = 0x1;
constexpr uint64_t kOthers = 0xFF00;        // bits the platform keeps as found
constexpr uint64_t kTrigger = 0x8000'0000;  // write-one, never written back
constexpr registers::PciAddress kFn{0, 0x7f, 16, 1};
constexpr uint32_t kPciCounter = 0xA0;

SavedRegister Plain(const RegisterRef& reg, std::string name, int group) {
  return {.reg = reg,
          .name = std::move(name),
          .group = group,
          .restore_mask = ~uint64_t{0},
          .in_use_bits = 0,
          .in_use_reason = "",
          .owner = ""};
}

// The made-up platform's planner: two MSR counters (group 0 and 1), the
// PCI counter (group 2), the guard (group 3).
RegisterProgram ToyProgram() {
  RegisterProgram p;
  SocketProgram& s = p.sockets.emplace_back();
  s.socket = 0;
  s.cpu = kCpu;
  const RegisterRef global = Msr(0, kCpu, kGlobal);
  const RegisterRef guard = Msr(0, kCpu, kGuard);
  s.Save({.reg = global,
          .name = "GLOBAL",
          .group = -1,
          .restore_mask = ~kTrigger,
          .in_use_bits = 0,
          .in_use_reason = "",
          .owner = ""});
  for (int c = 0; c < 2; ++c) {
    s.Save({.reg = Msr(0, kCpu, kControl0 + c),
            .name = fmt::format("CTL{}", c),
            .group = c,
            .restore_mask = ~uint64_t{0},
            .in_use_bits = 0x1,
            .in_use_reason = "en is set",
            .owner = fmt::format("toy counter {}", c)});
    s.Save(Plain(Msr(0, kCpu, kCounter0 + c), fmt::format("CTR{}", c), c));
  }
  s.Save(Plain(Pci(0, kFn, kPciCounter), "PCI CTR low", 2));
  s.Save(Plain(Pci(0, kFn, kPciCounter + 4), "PCI CTR high", 2));
  const int guard_saved = s.Save(Plain(guard, "GUARD", 3));

  auto w = [](const RegisterRef& r, uint64_t set, uint64_t keep,
              std::string name, int group) {
    return ProgramWrite{.reg = r,
                        .set = set,
                        .keep = keep,
                        .name = std::move(name),
                        .why = "test",
                        .group = group};
  };
  s.setup = {
      w(global, 0, kOthers, "GLOBAL", -1),  // stop, keep the others' bits
      w(guard, 0, 0, "GUARD", 3),
      w(Msr(0, kCpu, kCounter0), 0, 0, "CTR0", 0),
      w(Msr(0, kCpu, kControl0), 0x41, 0, "CTL0", 0),
      w(Msr(0, kCpu, kCounter0 + 1), 0, 0, "CTR1", 1),
      w(Msr(0, kCpu, kControl0 + 1), 0x43, 0, "CTL1", 1),
      w(Pci(0, kFn, kPciCounter), 0, 0, "PCI CTR low", 2),
      w(Pci(0, kFn, kPciCounter + 4), 0, 0, "PCI CTR high", 2),
      w(guard, 0x80, 0, "GUARD", 3),
      w(global, kEnableAll, kOthers, "GLOBAL", -1),  // start
  };
  s.open_window = w(global, 0, kOthers, "GLOBAL", -1);
  s.close_window = w(global, kEnableAll, kOthers, "GLOBAL", -1);
  for (int c = 0; c < 2; ++c) {
    s.reads.push_back({.entry = c,
                       .reg = Msr(0, kCpu, kCounter0 + c),
                       .width = 16,
                       .initial = 0,
                       .max_increment_per_cycle = c == 0 ? 1.0 : 4.0});
  }
  s.reads.push_back({.entry = 2,
                     .reg = Pci(0, kFn, kPciCounter),
                     .width = 40,
                     .initial = 0,
                     .max_increment_per_cycle = 1});
  // Release: stop, clear the guard, everything back last-saved first, the
  // guard, the global control.
  s.ReleaseWrite(w(global, 0, kOthers, "GLOBAL", -1));
  s.ReleaseWrite(w(guard, 0, 0, "GUARD", 3));
  for (int k = static_cast<int>(s.saved.size()) - 1; k >= 1; --k) {
    if (k != guard_saved) s.Restore(k);
  }
  s.Restore(guard_saved);
  s.Restore(0);
  for (int e = 0; e < 3; ++e) {
    p.read_plan.push_back({.event = e,
                           .socket = 0,
                           .unit = "U-Box",
                           .instance = 0,
                           .counter = e,
                           .width = 16});
  }
  return p;
}

// "msr 0x111" / "pci 0xa4": where a register or an access is.
std::string Where(const RegisterRef& r) {
  return fmt::format("{} 0x{:x}", r.space == AccessSpace::kMsr ? "msr" : "pci",
                     r.address);
}
std::string Where(const RegisterAccess& a) {
  return fmt::format("{} 0x{:x}",
                     a.space == RegisterAccess::Space::kMsr ? "msr" : "pci",
                     a.address);
}

class ToyDevice : public RegisterEngine {
 public:
  explicit ToyDevice(registers::RegisterSpace* space,
                     Options options = {.background_extender = false,
                                        .assumed_max_clock_hz = 5e9,
                                        .wrap_fraction = 0.25})
      : RegisterEngine(space, options) {}
  std::string_view name() const override { return "toy"; }
  int plans = 0;

 protected:
  absl::StatusOr<RegisterProgram> Plan(const ProgramRequest&) override {
    ++plans;
    return ToyProgram();
  }
};

class RegisterEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // What another owner left: its bits of the global control, a trigger
    // that reads back set, stale values in every register.
    space_.SetMsr(kCpu, kGlobal, 0xAB00 | kTrigger);
    space_.SetMsr(kCpu, kGuard, 0x5);
    space_.SetMsr(kCpu, kControl0, 0x40);
    space_.SetMsr(kCpu, kControl0 + 1, 0x42);
    space_.SetMsr(kCpu, kCounter0, 0x1111);
    space_.SetMsr(kCpu, kCounter0 + 1, 0x2222);
    space_.SetPci(kFn, kPciCounter, 0x3333);
    space_.SetPci(kFn, kPciCounter + 4, 0x44);
  }

  std::vector<uint64_t> State() const {
    return {
        space_.PeekMsr(kCpu, kGlobal),    space_.PeekMsr(kCpu, kGuard),
        space_.PeekMsr(kCpu, kControl0),  space_.PeekMsr(kCpu, kControl0 + 1),
        space_.PeekMsr(kCpu, kCounter0),  space_.PeekMsr(kCpu, kCounter0 + 1),
        space_.PeekPci(kFn, kPciCounter), space_.PeekPci(kFn, kPciCounter + 4)};
  }

  std::vector<std::string> Writes() const {
    std::vector<std::string> out;
    for (const RegisterAccess& a : space_.accesses()) {
      if (a.op == RegisterAccess::Op::kWrite) out.push_back(a.ToString());
    }
    return out;
  }

  RecordingRegisterSpace space_;
};

TEST_F(RegisterEngineTest, SetupResolvesKeptBitsAndRunsInOrder) {
  ToyDevice dev(&space_);
  ASSERT_TRUE(dev.Program({}).ok());
  EXPECT_EQ(dev.plans, 1);
  const std::vector<RegisterWrite>& w = dev.program_writes();
  ASSERT_EQ(w.size(), 10u);
  EXPECT_EQ(w[0].value, 0xAB00u);  // the others' bits kept, the trigger not
  EXPECT_EQ(w[3].value, 0x41u);
  EXPECT_EQ(w[9].value, 0xAB01u);
  EXPECT_EQ(w[9].name, "GLOBAL");
  EXPECT_EQ(space_.PeekMsr(kCpu, kGlobal), 0xAB01u);
  EXPECT_EQ(space_.PeekMsr(kCpu, kGuard), 0x80u);
  // Every saved register was read before the first write.
  const std::vector<RegisterAccess> all = space_.accesses();
  ASSERT_GE(all.size(), 8u);
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(all[i].op, RegisterAccess::Op::kRead) << all[i].ToString();
  }
  EXPECT_EQ(all[8].op, RegisterAccess::Op::kWrite);
}

TEST_F(RegisterEngineTest, ASnapshotIsOneWindowAndFoldsEachCountersWidth) {
  ToyDevice dev(&space_);
  ASSERT_TRUE(dev.Program({}).ok());
  space_.SetMsr(kCpu, kCounter0, 0xFFF0);
  space_.SetPci(kFn, kPciCounter, 0xFFFF'FFFF);
  space_.SetPci(kFn, kPciCounter + 4, 0x1);
  Snapshot a(3);
  space_.Clear();
  ASSERT_TRUE(dev.TakeSnapshot(&a).ok());
  // open, the MSR reads, the PCI low and high dwords, close.
  std::vector<std::string> trace;
  for (const RegisterAccess& x : space_.accesses()) {
    trace.push_back(x.ToString());
  }
  ASSERT_EQ(trace.size(), 6u) << common::Join(trace, "\n");
  EXPECT_THAT(trace.front(), HasSubstr("write"));
  EXPECT_THAT(trace.front(), HasSubstr("0xab00"));
  EXPECT_THAT(trace[3], HasSubstr("+0xa0"));
  EXPECT_THAT(trace[4], HasSubstr("+0xa4"));
  EXPECT_THAT(trace.back(), HasSubstr("0xab01"));
  EXPECT_TRUE(a.valid);
  EXPECT_EQ(a.values[0], 0xFFF0u);
  EXPECT_EQ(a.values[2], 0x1'FFFF'FFFFu);
  // 0xFFF0 -> 0x0010 wraps the 16-bit counter once: 0x20 more.
  space_.SetMsr(kCpu, kCounter0, 0x0010);
  Snapshot b(3);
  ASSERT_TRUE(dev.TakeSnapshot(&b).ok());
  EXPECT_EQ(b.values[0] - a.values[0], 0x20u);
  EXPECT_GT(dev.frozen_ns(), 0u);
}

TEST_F(RegisterEngineTest, ExtendNowKeepsWrapsBetweenSnapshots) {
  ToyDevice dev(&space_);
  ASSERT_TRUE(dev.Program({}).ok());
  Snapshot a(3);
  ASSERT_TRUE(dev.TakeSnapshot(&a).ok());
  // Two wraps of counter 0 between snapshots, seen by the extender only.
  for (uint64_t raw : {0x8000, 0x0000, 0x8000}) {
    space_.SetMsr(kCpu, kCounter0, raw);
    ASSERT_TRUE(dev.ExtendNow().ok());
  }
  Snapshot b(3);
  ASSERT_TRUE(dev.TakeSnapshot(&b).ok());
  EXPECT_EQ(b.values[0] - a.values[0], 0x18000u);
}

TEST_F(RegisterEngineTest, TheExtenderPeriodComesFromWidthAndIncrement) {
  ToyDevice dev(&space_, {.background_extender = false,
                          .assumed_max_clock_hz = 1e6,
                          .wrap_fraction = 0.25});
  ASSERT_TRUE(dev.Program({}).ok());
  // Counter 1: 16 bits at 4 per clock of 1 MHz wraps in 16.384 ms.
  EXPECT_EQ(dev.extender_period().count(), 4'096'000);
  ASSERT_TRUE(dev.Release().ok());
  EXPECT_EQ(dev.extender_period().count(), 0);
}

TEST_F(RegisterEngineTest, InUseRegistersRefuseUnlessForcedAndWriteNothing) {
  space_.SetMsr(kCpu, kControl0 + 1, 0x43);  // en set: someone counts
  ToyDevice dev(&space_);
  space_.Clear();
  const absl::Status s = dev.Program({});
  ASSERT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(common::StatusMessage(s),
              AllOf(HasSubstr("in use by another agent"),
                    HasSubstr("toy counter 1: CTL1 at MSR 0x0111"),
                    HasSubstr("en is set"), HasSubstr("force")));
  EXPECT_EQ(space_.CountWrites(), 0);
  EXPECT_FALSE(dev.programmed());
  ProgramRequest forced;
  forced.force = true;
  EXPECT_TRUE(dev.Program(forced).ok());
}

TEST_F(RegisterEngineTest, AFailedSaveReadWritesNothing) {
  space_.FailPciReads(kFn, kPciCounter + 4);
  ToyDevice dev(&space_);
  const absl::Status s = dev.Program({});
  EXPECT_THAT(common::StatusMessage(s),
              HasSubstr("reading PCI CTR high at PCI D16:F1 +0x0a4"));
  EXPECT_EQ(space_.CountWrites(), 0);
}

TEST_F(RegisterEngineTest, AFailureRestoresTheTouchedGroupsOnly) {
  const std::vector<uint64_t> before = State();
  const size_t steps = ToyProgram().sockets[0].setup.size();
  for (size_t k = 1; k <= steps; ++k) {
    SetUp();
    space_.Clear();
    ToyDevice dev(&space_);
    space_.FailNthWrite(static_cast<int>(k));
    const absl::Status s = dev.Program({});
    ASSERT_EQ(s.code(), absl::StatusCode::kUnavailable) << k;
    EXPECT_THAT(common::StatusMessage(s),
                AllOf(HasSubstr(fmt::format("step {} of {}", k, steps)),
                      HasSubstr("every register written so far was restored")));
    EXPECT_FALSE(dev.programmed());
    std::vector<uint64_t> now = State();
    now[0] &= ~kTrigger;  // the trigger is never written back
    std::vector<uint64_t> want = before;
    want[0] &= ~kTrigger;
    EXPECT_EQ(now, want) << "step " << k;
    // The rollback writes exactly the registers of the groups setup steps
    // 1..k touched, the failed step's included (a failed write may have
    // landed), and the socket-wide global control; no other group's.
    const RegisterProgram program = ToyProgram();
    const SocketProgram& sp = program.sockets[0];
    std::set<int> touched;
    for (size_t i = 0; i < k; ++i) touched.insert(sp.setup[i].group);
    std::set<std::string> want_written = {"msr 0x100"};
    for (const SavedRegister& r : sp.saved) {
      if (touched.contains(r.group)) want_written.insert(Where(r.reg));
    }
    std::set<std::string> written;
    const std::vector<RegisterAccess> all = space_.accesses();
    bool after_failure = false;
    for (const RegisterAccess& a : all) {
      if (a.op != RegisterAccess::Op::kWrite) continue;
      if (after_failure) written.insert(Where(a));
      after_failure = after_failure || a.failed;
    }
    EXPECT_EQ(written, want_written) << "step " << k;
  }
}

TEST_F(RegisterEngineTest, AMalformedProgramIsRefusedBeforeAnyAccess) {
  ToyDevice dev(&space_);
  space_.Clear();
  std::vector<RegisterProgram> broken(4, ToyProgram());
  broken[0].sockets[0].reads[1].entry = 0;  // entry 0 twice, 1 never
  broken[1].sockets[0].Restore(99);         // no such saved register
  broken[2].sockets[0].setup[0].reg = Msr(0, kCpu, 0x555);  // keeps, unsaved
  broken[3].sockets[0].open_window.reg = Msr(0, kCpu, 0x555);
  for (size_t i = 0; i < broken.size(); ++i) {
    const absl::Status s = dev.Load(broken[i], false);
    EXPECT_EQ(s.code(), absl::StatusCode::kInternal) << i;
    EXPECT_THAT(common::StatusMessage(s), HasSubstr("malformed program")) << i;
  }
  EXPECT_TRUE(space_.accesses().empty());
  EXPECT_FALSE(dev.programmed());
  EXPECT_TRUE(dev.Load(ToyProgram(), false).ok());
}

TEST_F(RegisterEngineTest, ReleaseRunsTheProgramsStepsAndCanRunTwice) {
  const std::vector<uint64_t> before = State();
  ToyDevice dev(&space_);
  ASSERT_TRUE(dev.Program({}).ok());
  space_.Clear();
  ASSERT_TRUE(dev.Release().ok());
  const std::vector<std::string> w = Writes();
  ASSERT_EQ(w.size(), 10u);
  EXPECT_THAT(w[0], AllOf(HasSubstr("0x100"), HasSubstr("0xab00")));  // stop
  EXPECT_THAT(w[1], AllOf(HasSubstr("0x101"), HasSubstr("= 0x0")));   // guard
  EXPECT_THAT(w[8], AllOf(HasSubstr("0x101"), HasSubstr("0x5")));
  EXPECT_THAT(w[9], AllOf(HasSubstr("0x100"), HasSubstr("0xab00")));
  std::vector<uint64_t> now = State();
  EXPECT_EQ(now[0], 0xAB00u);  // the trigger masked off
  now[0] = before[0];
  EXPECT_EQ(now, before);
  EXPECT_FALSE(dev.programmed());
  space_.Clear();
  EXPECT_TRUE(dev.Release().ok());
  EXPECT_EQ(space_.CountWrites(), 0);
  Snapshot s(3);
  EXPECT_EQ(dev.TakeSnapshot(&s).code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(RegisterEngineTest, ASnapshotWhoseReadFailsStillClosesTheWindow) {
  ToyDevice dev(&space_);
  ASSERT_TRUE(dev.Program({}).ok());
  space_.FailMsrReads(kCounter0 + 1);
  Snapshot s(3);
  const absl::Status st = dev.TakeSnapshot(&s);
  EXPECT_FALSE(st.ok());
  EXPECT_FALSE(s.valid);
  EXPECT_THAT(common::StatusMessage(st), HasSubstr("reading MSR 0x0121"));
  EXPECT_EQ(space_.PeekMsr(kCpu, kGlobal), 0xAB01u);  // counting again
  space_.ClearFailures();
  EXPECT_TRUE(dev.TakeSnapshot(&s).ok());
}

TEST_F(RegisterEngineTest, LoadingTwiceIsRefused) {
  ToyDevice dev(&space_);
  ASSERT_TRUE(dev.Program({}).ok());
  EXPECT_EQ(dev.Load(ToyProgram(), false).code(),
            absl::StatusCode::kFailedPrecondition);
  ToyDevice none(nullptr);
  EXPECT_EQ(none.Program({}).code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace uncore::devices::engine
