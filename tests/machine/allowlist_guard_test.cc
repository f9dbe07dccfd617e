// AllowListGuard: refusals never reach the wrapped space, and the direct
// backend, programming every catalog event and thousands of random specs
// through the guard onto a recording space, never writes outside the
// allow-list.
#include "sdk/machine/allowlist_guard.h"

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sdk/common/status_macros.h"
#include "sdk/machine/topology.h"
#include "sdk/platforms/ivytown/device/ivytown_allowlist.h"
#include "sdk/platforms/ivytown/device/ivytown_device.h"
#include "sdk/platforms/ivytown/model/box_descriptors.h"
#include "sdk/platforms/ivytown/model/event_catalog.h"
#include "sdk/platforms/ivytown/model/identity.h"
#include "sdk/platforms/ivytown/sim/ivytown_uncore.h"
#include "sdk/platforms/nehalemex/device/nehalemex_allowlist.h"
#include "sdk/platforms/nehalemex/device/nehalemex_device.h"
#include "sdk/platforms/nehalemex/model/box_descriptors.h"
#include "sdk/platforms/nehalemex/sim/nehalemex_uncore.h"
#include "sdk/registers/recording_register_space.h"
#include "sdk/spec/event_spec.h"
#include "sdk/spec/platform_catalog.h"
#include "tests/testing/catalog_specs.h"

namespace uncore::machine {

using registers::MsrRead;
using registers::PciAddress;
using registers::RecordingRegisterSpace;
using registers::RegisterAccess;
using registers::RegisterSpace;
namespace {

using ivytown::AccessSpace;
using ivytown::BoxType;
using ::testing::HasSubstr;

constexpr uint32_t kTsc = 0x10;
constexpr uint32_t kCbo0Ctl0 = 0xD10;  // C0_MSR_PMON_CTL0
const PciAddress kImc0Channel0{0, 0x7f, 16, 4};

// The allow-list as an independent lookup: (socket, space, function,
// address) -> writable mask, built from AllowedRegisters().
class AllowedSet {
 public:
  AllowedSet(const AllowListGuard& guard, const Topology& topology) {
    for (const AllowedRegister& r : guard.AllowedRegisters()) {
      masks_[Key(r.socket, r.space, r.function, r.address)] = r.writable_mask;
    }
    for (size_t s = 0; s < topology.sockets.size(); ++s) {
      for (int cpu : topology.sockets[s].cpus) {
        socket_of_cpu_[cpu] = static_cast<int>(s);
      }
      for (const SocketTopology::PciInstance& p : topology.sockets[s].pci) {
        for (const std::optional<PciAddress>& fn : {p.pmon, p.aux}) {
          if (fn) socket_of_fn_[*fn] = static_cast<int>(s);
        }
      }
    }
  }

  // Empty when `w` is a write the allow-list permits; why not otherwise.
  std::string Violation(const RegisterAccess& w) const {
    const bool msr = w.space == RegisterAccess::Space::kMsr;
    int socket = -1;
    if (msr) {
      auto it = socket_of_cpu_.find(w.cpu);
      if (it != socket_of_cpu_.end()) socket = it->second;
    } else {
      auto it = socket_of_fn_.find(w.pci);
      if (it != socket_of_fn_.end()) socket = it->second;
    }
    if (socket < 0) return "on no socket: " + w.ToString();
    auto it =
        masks_.find(Key(socket, msr ? AccessSpace::kMsr : AccessSpace::kPci,
                        msr ? PciAddress{} : w.pci, w.address));
    if (it == masks_.end()) return "not on the list: " + w.ToString();
    if ((w.value & ~it->second) != 0) {
      return fmt::format("reserved bits 0x{:x}: {}", w.value & ~it->second,
                         w.ToString());
    }
    return "";
  }

  size_t size() const { return masks_.size(); }

 private:
  using K = std::tuple<int, AccessSpace, PciAddress, uint32_t>;
  static K Key(int socket, AccessSpace space, PciAddress fn, uint32_t a) {
    return {socket, space, fn, a};
  }
  std::map<K, uint64_t> masks_;
  std::map<int, int> socket_of_cpu_;
  std::map<PciAddress, int> socket_of_fn_;
};

// A recording space behind a guard behind a direct device, on 2 sockets.
class GuardedDevice {
 public:
  GuardedDevice()
      : topology_(SimulatedTopology(ivytown::Record(), 2)),
        guard_(&space_, ivytown::RegisterAllowList(topology_)),
        allowed_(guard_, topology_) {}

  // Programs `request` (with `options`) on a new device, releases it, and
  // checks every write the space saw.  Returns Program's status.
  absl::Status ProgramAndRelease(const devices::ProgramRequest& request,
                                 const devices::ProgramOptions& options,
                                 std::string* context) {
    space_.Clear();
    devices::IvyTownDevice::Options o;
    o.background_extender = false;
    absl::Status status;
    {
      devices::IvyTownDevice dev(&guard_, topology_, o);
      status = dev.Program(request, options);
      if (status.ok()) {
        devices::Snapshot snap(dev.read_plan().size());
        EXPECT_TRUE(dev.TakeSnapshot(&snap).ok()) << *context;
        EXPECT_TRUE(dev.Release().ok()) << *context;
      }
    }
    for (const RegisterAccess& a : space_.accesses()) {
      EXPECT_FALSE(a.failed) << *context;
      if (a.op != RegisterAccess::Op::kWrite) continue;
      ++writes_checked_;
      const std::string why = allowed_.Violation(a);
      EXPECT_EQ(why, "") << *context;
    }
    return status;
  }

  int writes_checked() const { return writes_checked_; }
  const AllowedSet& allowed() const { return allowed_; }

 private:
  Topology topology_;
  RecordingRegisterSpace space_;
  AllowListGuard guard_;
  AllowedSet allowed_;
  int writes_checked_ = 0;
};

TEST(AllowListGuardTest, RefusedWritesNeverReachTheSpace) {
  RecordingRegisterSpace space;
  AllowListGuard guard(&space, ivytown::RegisterAllowList(
                                   SimulatedTopology(ivytown::Record(), 2)));
  // The TSC is not an uncore PMON register.
  absl::Status s = guard.WriteMsr(0, kTsc, 0);
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(common::StatusMessage(s), HasSubstr("MSR 0x10"));
  // A CPU of no socket.
  s = guard.WriteMsr(99, kCbo0Ctl0, 0x00400000);
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(common::StatusMessage(s),
              HasSubstr("CPU 99 belongs to no socket"));
  // Reserved bit 20 of a CBo counter control.
  s = guard.WriteMsr(0, kCbo0Ctl0, 0x00500000);
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(common::StatusMessage(s),
              HasSubstr("bits 0x100000 are reserved"));
  // A CBo counter is 44 bits wide.
  s = guard.WriteMsr(0, 0xD16, uint64_t{1} << 44);
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  // A PCI function that holds no PMON box, and an offset outside the box.
  s = guard.WritePci({0, 0x7f, 0, 0}, 0xD8, 0);
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  s = guard.WritePci(kImc0Channel0, 0x04, 0);  // the command register
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(common::StatusMessage(s), HasSubstr("0000:7f:10.4 offset 0x4"));
  // A PCI counter's high dword holds bits 47:32 only.
  s = guard.WritePci(kImc0Channel0, 0xA0 + 4, 0x10000);
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(space.accesses().empty());

  // The same registers with legal values go through.
  EXPECT_TRUE(guard.WriteMsr(0, kCbo0Ctl0, 0x00400137).ok());
  EXPECT_TRUE(guard.WriteMsr(3, kCbo0Ctl0, 0x00400137).ok());  // socket 1
  EXPECT_TRUE(guard.WritePci(kImc0Channel0, 0xD8, 0x00400304).ok());
  EXPECT_TRUE(guard.WritePci(kImc0Channel0, 0xA0 + 4, 0xFFFF).ok());
  EXPECT_EQ(space.CountWrites(), 4);
}

TEST(AllowListGuardTest, ReadsAreCheckedUnlessUnlistedReadsAreAllowed) {
  RecordingRegisterSpace space;
  uint64_t v = 0;
  uint32_t d = 0;
  {
    AllowListGuard strict(&space, ivytown::RegisterAllowList(
                                      SimulatedTopology(ivytown::Record(), 1)));
    EXPECT_EQ(strict.ReadMsr(0, kTsc, &v).code(),
              absl::StatusCode::kPermissionDenied);
    EXPECT_EQ(strict.ReadPci(kImc0Channel0, 0x00, &d).code(),
              absl::StatusCode::kPermissionDenied);
    EXPECT_TRUE(strict.ReadMsr(1, kCbo0Ctl0, &v).ok());
    EXPECT_EQ(space.CountReads(), 1);
  }
  AllowListGuard::Options options;
  options.allow_unlisted_reads = true;
  AllowListGuard lenient(
      &space,
      ivytown::RegisterAllowList(SimulatedTopology(ivytown::Record(), 1)),
      options);
  EXPECT_TRUE(lenient.ReadMsr(0, kTsc, &v).ok());
  EXPECT_TRUE(lenient.ReadPci(kImc0Channel0, 0x00, &d).ok());
  // Writes stay strict.
  EXPECT_EQ(lenient.WriteMsr(0, kTsc, 0).code(),
            absl::StatusCode::kPermissionDenied);
}

TEST(AllowListGuardTest, BatchReadsPassTheAllowedOnesAndReportTheRest) {
  RecordingRegisterSpace space;
  space.SetMsr(0, kCbo0Ctl0, 0x1234);
  space.SetMsr(0, 0xD16, 0x5678);
  AllowListGuard guard(&space, ivytown::RegisterAllowList(
                                   SimulatedTopology(ivytown::Record(), 1)));
  std::vector<MsrRead> reads(3);
  reads[0].cpu = 0;
  reads[0].msr = kCbo0Ctl0;
  reads[1].cpu = 0;
  reads[1].msr = kTsc;
  reads[2].cpu = 0;
  reads[2].msr = 0xD16;
  absl::Status s = guard.ReadMsrBatch(reads);
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(reads[0].status.ok());
  EXPECT_EQ(reads[0].value, 0x1234u);
  EXPECT_EQ(reads[1].status.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(reads[2].status.ok());
  EXPECT_EQ(reads[2].value, 0x5678u);
  EXPECT_EQ(space.CountReads(), 2);  // the TSC was never read
}

TEST(AllowListGuardTest, ListCoversEveryBoxInstanceOfEverySocket) {
  RecordingRegisterSpace space;
  const Topology topology = SimulatedTopology(ivytown::Record(), 2);
  AllowListGuard guard(&space, ivytown::RegisterAllowList(topology));
  const std::vector<AllowedRegister> list = guard.AllowedRegisters();
  // Per socket: the 3 global registers, then per instance its box control,
  // status, counters (PCI: two dwords), filters and fixed counter.
  size_t expected = 0;
  for (const SocketTopology& socket : topology.sockets) {
    expected += 3;
    for (const ivytown::BoxDescriptor& box : ivytown::AllBoxes()) {
      for (int n = 0; n < box.num_instances(); ++n) {
        if (!socket.HasInstance(box.type, n)) continue;
        const size_t dwords = box.space == AccessSpace::kPci ? 2 : 1;
        expected += box.BoxControlAddress(n) ? 1 : 0;
        expected += box.BoxStatusAddress(n) ? 1 : 0;
        expected += box.num_counters * (1 + dwords);
        for (const auto& f : box.filters) {
          if (!f.in_aux_function || socket.FindPci(box.type, n)->aux) {
            ++expected;
          }
        }
        if (box.fixed_counter) expected += 1 + dwords;
      }
    }
  }
  EXPECT_EQ(list.size(), expected);
  // Names say what and where.
  bool saw_cbo3 = false;
  for (const AllowedRegister& r : list) {
    if (r.Describe() == "CBo3 counter control 0 (MSR 0xd70, socket 0)") {
      saw_cbo3 = true;
    }
  }
  EXPECT_TRUE(saw_cbo3);
}

TEST(AllowListGuardTest, TheProductionStackCountsOnTheSimulator) {
  sim::IvyTownUncore sim(1);
  AllowListGuard guard(&sim, ivytown::RegisterAllowList(sim.topology()));
  devices::IvyTownDevice::Options o;
  o.background_extender = false;
  devices::IvyTownDevice dev(&guard, sim.topology(), o);
  devices::ProgramRequest req;
  req.events.push_back(*spec::ParseEventSpec("imc[0]/CAS_COUNT.RD"));
  req.events.push_back(*spec::ParseEventSpec("cbo[2]/LLC_VICTIMS.M_STATE"));
  ASSERT_TRUE(dev.Program(req).ok());
  devices::Snapshot a(dev.read_plan().size()), b(dev.read_plan().size());
  ASSERT_TRUE(dev.TakeSnapshot(&a).ok());
  sim::IvyTownUncore::Traffic imc{
      .box = BoxType::kImc, .instance = 0, .code = 0x04, .umask = 0x03};
  sim::IvyTownUncore::Traffic cbo{
      .box = BoxType::kCbo, .instance = 2, .code = 0x37, .umask = 0x01};
  ASSERT_TRUE(sim.Inject(0, imc, 3, 1000).ok());
  ASSERT_TRUE(sim.Inject(0, cbo, 1, 77).ok());
  ASSERT_TRUE(dev.TakeSnapshot(&b).ok());
  EXPECT_EQ(b.values[0] - a.values[0], 3000u);
  EXPECT_EQ(b.values[1] - a.values[1], 77u);
  EXPECT_TRUE(dev.Release().ok());
}

TEST(AllowListGuardTest, EveryCatalogEventProgramsInsideTheAllowList) {
  GuardedDevice stack;
  int programmed = 0;
  for (const std::string& text : testing::EveryCatalogSpec()) {
    absl::StatusOr<spec::EventSpec> e = spec::ParseEventSpec(text);
    ASSERT_TRUE(e.ok()) << text;
    devices::ProgramRequest req;
    req.events.push_back(*e);
    std::string context = text;
    const absl::Status s = stack.ProgramAndRelease(req, {}, &context);
    EXPECT_TRUE(s.ok()) << text << ": " << common::StatusMessage(s);
    programmed += s.ok() ? 1 : 0;
  }
  EXPECT_GT(programmed, 1000);
  EXPECT_GT(stack.writes_checked(), 100000);
}

// A random spec in the spec language: a box, an instance set, a catalog
// event or a raw event code, and random modifiers (any value of any user
// field, reserved bits included).
class RandomSpecs {
 public:
  explicit RandomSpecs(uint32_t seed) : rng_(seed) {}

  std::string Next() {
    const std::span<const ivytown::BoxDescriptor> boxes = ivytown::AllBoxes();
    const ivytown::BoxDescriptor& box = boxes[Pick(boxes.size())];
    std::string text(box.name);
    if (Chance(0.5)) {
      text += fmt::format("[{}]", Pick(box.num_instances() + 1));  // may be bad
    }
    std::vector<std::string> terms;
    const std::span<const ivytown::EventDescriptor> events =
        ivytown::EventsOf(box.type);
    if (!events.empty() && Chance(0.7)) {
      const ivytown::EventDescriptor& e = events[Pick(events.size())];
      text += fmt::format("/{}", e.name);
      if (!e.umasks.empty()) {
        text += fmt::format(".{}", e.umasks[Pick(e.umasks.size())].name);
      }
    } else {
      text += "/";
      terms.push_back(fmt::format("event=0x{:x}", Pick(256)));
      terms.push_back(fmt::format("umask=0x{:x}", Pick(256)));
    }
    for (const ivytown::FieldDescriptor& f : box.fields) {
      if (f.use != ivytown::FieldUse::kModifier || !Chance(0.15)) continue;
      const int width = f.bits.width;
      const uint64_t all = f.bits.max_value();
      uint64_t value = 0;
      switch (Pick(4)) {
        case 0:
          value = 1;
          break;
        case 1:
          value = all;
          break;
        case 2:
          value = rng_() & all;
          break;
        default:
          value = uint64_t{1} << Pick(width);
          break;
      }
      terms.push_back(fmt::format("{}=0x{:x}", f.name, value));
    }
    if (text.back() == '/') {
      for (size_t i = 0; i < terms.size(); ++i) {
        text += (i ? "," : "") + terms[i];
      }
      return text + "/";
    }
    for (size_t i = 0; i < terms.size(); ++i) {
      text += (i ? "," : ":") + terms[i];
    }
    return text;
  }

  size_t Pick(size_t n) {
    return std::uniform_int_distribution<size_t>(0, n - 1)(rng_);
  }
  bool Chance(double p) { return std::bernoulli_distribution(p)(rng_); }

 private:
  std::mt19937_64 rng_;
};

TEST(AllowListGuardTest, ThousandsOfRandomSpecsNeverLeaveTheAllowList) {
  GuardedDevice stack;
  RandomSpecs random(20261123);
  int parsed = 0;
  int programmed = 0;
  int refused_by_plan = 0;
  for (int i = 0; i < 4000; ++i) {
    devices::ProgramRequest req;
    std::string context;
    const size_t n = 1 + random.Pick(4);
    for (size_t k = 0; k < n; ++k) {
      const std::string text = random.Next();
      absl::StatusOr<spec::EventSpec> e = spec::ParseEventSpec(text);
      if (!e.ok()) continue;
      ++parsed;
      context += text + " ";
      req.events.push_back(*e);
    }
    if (req.events.empty()) continue;
    if (random.Chance(0.2)) req.sockets = {static_cast<int>(random.Pick(3))};
    devices::ProgramOptions options;
    if (random.Chance(0.2)) {
      options.samples.push_back(
          {.event = 0, .interval = 1 + random.Pick(uint64_t{1} << 40)});
    }
    const absl::Status s = stack.ProgramAndRelease(req, options, &context);
    if (s.ok()) {
      ++programmed;
    } else {
      // A bad request is refused by planning, before any register access;
      // never by the guard.
      EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument)
          << context << ": " << common::StatusMessage(s);
      ++refused_by_plan;
    }
  }
  EXPECT_GT(parsed, 2000);
  EXPECT_GT(programmed, 1000);
  EXPECT_GT(refused_by_plan, 100);
  EXPECT_GT(stack.writes_checked(), 50000);
}

// The checker itself catches what it must (so the two tests above can fail).
TEST(AllowListGuardTest, TheIndependentCheckerFlagsBadWrites) {
  RecordingRegisterSpace space;
  const Topology topology = SimulatedTopology(ivytown::Record(), 2);
  AllowListGuard guard(&space, ivytown::RegisterAllowList(topology));
  AllowedSet allowed(guard, topology);
  RegisterAccess w;
  w.op = RegisterAccess::Op::kWrite;
  w.space = RegisterAccess::Space::kMsr;
  w.cpu = 0;
  w.address = kCbo0Ctl0;
  w.value = 0x00400137;
  EXPECT_EQ(allowed.Violation(w), "");
  w.value = 0x00500137;
  EXPECT_THAT(allowed.Violation(w), HasSubstr("reserved bits 0x100000"));
  w.address = kTsc;
  EXPECT_THAT(allowed.Violation(w), HasSubstr("not on the list"));
  w.cpu = 64;
  EXPECT_THAT(allowed.Violation(w), HasSubstr("on no socket"));
  w.space = RegisterAccess::Space::kPci;
  w.pci = kImc0Channel0;
  w.address = 0xD8;
  w.value = 0x00400304;
  EXPECT_EQ(allowed.Violation(w), "");
  w.pci.bus = 0x7e;
  EXPECT_THAT(allowed.Violation(w), HasSubstr("on no socket"));
}

// The guard takes any platform's list as data: a hand-made one.
TEST(AllowListGuardTest, AHandMadeListIsAllItLetsThrough) {
  RecordingRegisterSpace space;
  AllowList list;
  list.source = "the test's list names";
  list.socket_cpus = {{0, 1}, {2}};
  list.registers.push_back({.space = AccessSpace::kMsr,
                            .socket = 1,
                            .function = {},
                            .address = 0x700,
                            .role = RegisterRole::kOther,
                            .writable_mask = 0xFF,
                            .name = "TEST_CTL"});
  list.registers.push_back({.space = AccessSpace::kMsr,
                            .socket = 1,
                            .function = {},
                            .address = 0x701,
                            .role = RegisterRole::kOther,
                            .writable_mask = 0,
                            .name = "TEST_STATUS"});
  AllowListGuard guard(&space, list);
  // A read-only register takes no write, not even of 0.
  const absl::Status read_only = guard.WriteMsr(2, 0x701, 0);
  EXPECT_EQ(read_only.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(read_only.message(), HasSubstr("read-only"));
  EXPECT_TRUE(guard.WriteMsr(2, 0x700, 0x12).ok());
  // Socket 0 does not have it; bit 8 is not writable; CPU 3 is on no
  // socket; no PCI register is listed.
  const absl::Status other_socket = guard.WriteMsr(0, 0x700, 0x12);
  EXPECT_EQ(other_socket.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(other_socket.message(), HasSubstr("the test's list names"));
  const absl::Status reserved = guard.WriteMsr(2, 0x700, 0x100);
  EXPECT_EQ(reserved.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(reserved.message(), HasSubstr("TEST_CTL (MSR 0x700, socket 1)"));
  EXPECT_EQ(guard.WriteMsr(3, 0x700, 0).code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(guard.WritePci(kImc0Channel0, 0xD8, 0).code(),
            absl::StatusCode::kPermissionDenied);
  uint64_t v = 0;
  EXPECT_EQ(guard.ReadMsr(1, 0x700, &v).code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(space.CountWrites(), 1);
  ASSERT_EQ(guard.AllowedRegisters().size(), 2u);
}

TEST(AllowListGuardTest, TheXeon7500ListIsEveryModelRegisterOnEverySocket) {
  const Topology topology =
      SimulatedTopology(ivytown::Record(), 2, /*cpus_per_socket=*/1);
  for (nehalemex::Variant v :
       {nehalemex::Variant::kNehalemEx, nehalemex::Variant::kWestmereEx}) {
    const AllowList list = nehalemex::RegisterAllowList(v, topology);
    const std::span<const nehalemex::RegisterInfo> model =
        nehalemex::AllRegisters(v);
    EXPECT_EQ(list.registers.size(), 2 * model.size());
    EXPECT_EQ(list.socket_cpus, (std::vector<std::vector<int>>{{0}, {1}}));
    RecordingRegisterSpace space;
    AllowListGuard guard(&space, list);
    for (const nehalemex::RegisterInfo& r : model) {
      for (int cpu : {0, 1}) {
        // A read-only register (a status) takes no write at all.
        EXPECT_EQ(guard.CheckMsrWrite(cpu, r.address, r.writable).ok(),
                  r.writable != 0)
            << r.name;
        EXPECT_TRUE(guard.CheckMsrRead(cpu, r.address).ok()) << r.name;
        if (r.writable != ~uint64_t{0}) {
          EXPECT_EQ(guard.CheckMsrWrite(cpu, r.address, ~r.writable).code(),
                    absl::StatusCode::kPermissionDenied)
              << r.name;
        }
      }
    }
    // The S-Box match/mask registers are filters, the U-Box global control
    // is the global control.
    int filters = 0;
    for (const AllowedRegister& r : list.registers) {
      if (r.name == "S0_MSR_MM_CFG") {
        EXPECT_EQ(r.role, RegisterRole::kFilter);
        ++filters;
      }
      if (r.name == "U_MSR_PMON_GLOBAL_CTL") {
        EXPECT_EQ(r.role, RegisterRole::kGlobalControl);
      }
    }
    EXPECT_EQ(filters, 2);  // one per socket
    // Nothing else: the TSC, IA32_MISC_ENABLE, any PCI register, a CPU of
    // no socket.
    const absl::Status tsc = guard.CheckMsrWrite(0, kTsc, 0);
    EXPECT_EQ(tsc.code(), absl::StatusCode::kPermissionDenied);
    EXPECT_THAT(tsc.message(), HasSubstr(nehalemex::VariantDisplayName(v)));
    constexpr uint32_t kMiscEnable = 0x1A0;  // IA32_MISC_ENABLE
    ASSERT_EQ(nehalemex::FindRegister(v, kMiscEnable), nullptr);
    EXPECT_EQ(guard.CheckMsrRead(0, kMiscEnable).code(),
              absl::StatusCode::kPermissionDenied);
    EXPECT_EQ(guard.CheckPciRead(kImc0Channel0, 0xD8).code(),
              absl::StatusCode::kPermissionDenied);
    EXPECT_EQ(guard.CheckMsrWrite(7, nehalemex::kGlobalCtl.address, 0).code(),
              absl::StatusCode::kPermissionDenied);
  }
}

// The Xeon 7500 engine programs, counts and releases through the guard, and
// every write it makes is on the list.
TEST(AllowListGuardTest, TheXeon7500EngineRunsInsideItsList) {
  for (nehalemex::Variant v :
       {nehalemex::Variant::kNehalemEx, nehalemex::Variant::kWestmereEx}) {
    const Topology topology =
        SimulatedTopology(ivytown::Record(), 2, /*cpus_per_socket=*/1);
    std::unique_ptr<sim::NehalemExUncore> sim =
        sim::NehalemExUncore::Create(v, 2);
    registers::RecordingRegisterSpace recording;
    AllowListGuard guard(sim.get(), nehalemex::RegisterAllowList(v, topology));
    AllowListGuard checker(&recording,
                           nehalemex::RegisterAllowList(v, topology));
    devices::NehalemExDevice dev(
        &guard, v, devices::NehalemExDevice::ConsecutiveSockets(2, 1));
    devices::ProgramRequest req;
    for (const char* text :
         {"uncore_sbox_0/event=0x0,match=0x1,mask=0x3/",
          "uncore_cbox_3/event=0x1/", "uncore_wbox/event=0xff/"}) {
      std::optional<spec::EventSpec> e = spec::KernelSyntaxEvent(text);
      ASSERT_TRUE(e.has_value()) << text;
      req.events.push_back(*e);
    }
    ASSERT_TRUE(dev.Program(req).ok());
    devices::Snapshot snap(dev.read_plan().size());
    EXPECT_TRUE(dev.TakeSnapshot(&snap).ok());
    const std::vector<devices::engine::RegisterWrite> writes =
        dev.program_writes();
    EXPECT_TRUE(dev.Release().ok());
    ASSERT_FALSE(writes.empty());
    for (const devices::engine::RegisterWrite& w : writes) {
      EXPECT_TRUE(checker.CheckMsrWrite(w.reg.cpu, w.reg.address, w.value).ok())
          << w.name;
    }
  }
}

}  // namespace
}  // namespace uncore::machine
