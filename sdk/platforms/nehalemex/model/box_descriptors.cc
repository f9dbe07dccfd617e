#include "sdk/platforms/nehalemex/model/box_descriptors.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fmt/format.h"

namespace uncore::nehalemex {
namespace {

// ---------------------------------------------------------------------------
// The register list, generated at compile time so that its invariants are
// static_asserts.
enum class RegKind : uint8_t {
  kGlobalCtl,
  kStatus,
  kOvfCtl,
  kControl,
  kCounter,
  kMmCfg,
  kMatch,
  kMask,
  kMboxSub,
  kRIperf0,
  kRIperf1,
  kRQlx,
  kRXbrMmCfg,
  kRXbrMatch,
  kRXbrMask,
  kFixedCtr,
  kFixedCtl,
};

struct RawRegister {
  uint32_t address = 0;
  BoxType box = BoxType::kU;
  int8_t instance = 0;
  RegKind kind = RegKind::kGlobalCtl;
  int8_t index = 0;  // counter, sub-register, port*2+set ...
  uint64_t writable = 0;
};

constexpr int kMaxRegisters = 512;

struct RawList {
  std::array<RawRegister, kMaxRegisters> regs{};
  int size = 0;
  constexpr void Add(RawRegister r) { regs[size++] = r; }
};

constexpr RawList BuildRegisters(Variant v) {
  RawList out;
  for (const BoxDescriptor* box : kBoxes) {
    for (int i = 0; i < box->NumInstances(v); ++i) {
      const auto inst = static_cast<int8_t>(i);
      const uint64_t ctl_writable = box->type == BoxType::kU
                                        ? kGlobalCtl.writable_mask()
                                        : box->CtrEnMask();
      out.Add({box->GlobalCtlAddress(i), box->type, inst, RegKind::kGlobalCtl,
               0, ctl_writable});
      // DECISION: GLOBAL_STATUS is read-only (a write faults); GLOBAL_OVF_CTL
      // takes the clr_ov bits, one per counter (p. 2-14: ov / clr_ov 5:0 for
      // the six C-Box counters).
      out.Add({box->StatusAddress(i), box->type, inst, RegKind::kStatus, 0, 0});
      out.Add({box->OvfCtlAddress(i), box->type, inst, RegKind::kOvfCtl, 0,
               box->CtrEnMask()});
      for (int c = 0; c < box->num_counters; ++c) {
        const auto ci = static_cast<int8_t>(c);
        out.Add({box->ControlAddress(i, c), box->type, inst, RegKind::kControl,
                 ci, box->ControlWritable()});
        out.Add({box->CounterAddress(i, c), box->type, inst, RegKind::kCounter,
                 ci, BitRange{0, kCounterWidth}.mask()});
      }
      if (i < 2 && box->match_mask[i].present()) {
        const MatchMaskDescriptor& mm = box->match_mask[i];
        if (mm.mm_cfg != 0) {
          // Bits 62:0 ignore writes: writable in the sense that a write of
          // them does not fault.
          out.Add(
              {mm.mm_cfg, box->type, inst, RegKind::kMmCfg, 0, ~uint64_t{0}});
        }
        out.Add(
            {mm.match, box->type, inst, RegKind::kMatch, 0, mm.match_writable});
        out.Add(
            {mm.mask, box->type, inst, RegKind::kMask, 0, mm.mask_writable});
      }
      if (box->type == BoxType::kM) {
        for (int s = 0; s < kNumMboxSubRegisters; ++s) {
          const SubRegisterDescriptor& sub = kMboxSubRegisters[s];
          out.Add(
              {box->GlobalCtlAddress(i) + sub.offset, box->type, inst,
               RegKind::kMboxSub, static_cast<int8_t>(s),
               v == Variant::kNehalemEx ? sub.writable_nhm : sub.writable_wsm});
        }
      }
      if (box->type == BoxType::kR) {
        for (int p = i * kRboxPortsPerBox; p < (i + 1) * kRboxPortsPerBox;
             ++p) {
          const auto pi = static_cast<int8_t>(p);
          out.Add({RboxIperfCfg0(p), box->type, inst, RegKind::kRIperf0, pi,
                   kRboxIperfWritable});
          out.Add({RboxIperfCfg1(p), box->type, inst, RegKind::kRIperf1, pi,
                   kRboxIperfWritable});
          out.Add({RboxQlxCfg(p), box->type, inst, RegKind::kRQlx, pi,
                   kRboxQlxWritable});
          for (int set = 1; set <= 2; ++set) {
            const auto idx = static_cast<int8_t>(p * 2 + set - 1);
            out.Add({RboxXbrMmCfg(p, set), box->type, inst, RegKind::kRXbrMmCfg,
                     idx, kRboxXbrMmCfgWritable});
            out.Add({RboxXbrMmCfg(p, set) + 1, box->type, inst,
                     RegKind::kRXbrMatch, idx, ~uint64_t{0}});
            out.Add({RboxXbrMmCfg(p, set) + 2, box->type, inst,
                     RegKind::kRXbrMask, idx, ~uint64_t{0}});
          }
        }
      }
      if (box->has_fixed_counter) {
        out.Add({kWFixed.counter, box->type, inst, RegKind::kFixedCtr, 0,
                 BitRange{0, kCounterWidth}.mask()});
        out.Add({kWFixed.control, box->type, inst, RegKind::kFixedCtl, 0,
                 kWFixed.en.mask()});
      }
    }
  }
  return out;
}

constexpr RawList kNhmRegisters = BuildRegisters(Variant::kNehalemEx);
constexpr RawList kWsmRegisters = BuildRegisters(Variant::kWestmereEx);

constexpr bool AddressesUnique(const RawList& l) {
  for (int a = 0; a < l.size; ++a) {
    for (int b = a + 1; b < l.size; ++b) {
      if (l.regs[a].address == l.regs[b].address) return false;
    }
  }
  return true;
}
constexpr bool FieldsDisjointAndInside(std::span<const Field> fields) {
  uint64_t seen = 0;
  for (const Field& f : fields) {
    if (f.bits.width == 0 || f.bits.lo + f.bits.width > 64) return false;
    if ((seen & f.bits.mask()) != 0) return false;
    seen |= f.bits.mask();
  }
  return true;
}
constexpr bool FormatInside(std::span<const FormatField> format) {
  for (const FormatField& f : format) {
    if (f.word > 2 || f.bits.width == 0 || f.bits.lo + f.bits.width > 64) {
      return false;
    }
  }
  return true;
}
// Every config-word-0 format field lies within the kernel's event mask.
constexpr bool FormatWithinEventMask(const BoxDescriptor& box) {
  for (const FormatField& f : box.format) {
    if (f.word == 0 && (f.bits.mask() & ~box.kernel_event_mask) != 0) {
      return false;
    }
  }
  return true;
}
constexpr bool BoxesConsistent() {
  for (const BoxDescriptor* box : kBoxes) {
    if (!FieldsDisjointAndInside(box->control_fields)) return false;
    if (!FormatInside(box->format)) return false;
    if (!FormatWithinEventMask(*box)) return false;
    if (box->num_counters < 1 || box->num_counters > kMaxCounters) {
      return false;
    }
    if (box->instances_nhm > box->instances_wsm ||
        box->instances_wsm > kMaxInstances) {
      return false;
    }
    // The enable and event select the engine needs are present.
    if (!box->HasField("en") || !box->HasField("pmi_en")) {
      return false;
    }
    // The ctr_en bits fit below the W fixed bit and never reach en_all.
    if (box->CtrEnMask() & kGlobalCtl.en_all.mask()) return false;
  }
  return true;
}

static_assert(AddressesUnique(kNhmRegisters),
              "two Nehalem-EX registers share an address");
static_assert(AddressesUnique(kWsmRegisters),
              "two Westmere-EX registers share an address");
static_assert(BoxesConsistent(),
              "a control field overlaps another, leaves its register, or "
              "a format field falls outside the kernel's event mask");
static_assert(kWsmRegisters.size > kNhmRegisters.size);
static_assert(kCbox.base[0] == 0xD00 && kCbox.base[8] == 0xF40 &&
              kCbox.base[9] == 0xFC0);
static_assert(kCbox.ControlAddress(0, 0) == 0xD10 &&
              kCbox.CounterAddress(0, 5) == 0xD1B);
static_assert(kSbox.match_mask[0].mm_cfg == 0xE48 &&
              kSbox.match_mask[1].mm_cfg == 0xE58);
static_assert(kGlobalCtl.en_all.lo == 28 && kGlobalCtl.rst_all.lo == 29 &&
              kGlobalCtl.frz_all.lo == 31);
static_assert(Fvc(Variant::kNehalemEx).EventField(3).hi() == 22 &&
              Fvc(Variant::kWestmereEx).EventField(3).hi() == 23);
// The kernel's bbox_cmds_* values fit each variant's ZDP_CTL_FVC.
static_assert((MemoryEventFvc(Variant::kNehalemEx).write_fvc &
               ~kMboxSubRegisters[6].writable_nhm) == 0);
static_assert((MemoryEventFvc(Variant::kWestmereEx).write_fvc &
               ~kMboxSubRegisters[6].writable_wsm) == 0);

std::string RegisterName(const RawRegister& r) {
  const BoxDescriptor& box = Box(r.box);
  const std::string prefix = box.NumInstances(Variant::kWestmereEx) == 1
                                 ? std::string(box.letter)
                                 : fmt::format("{}{}", box.letter, r.instance);
  switch (r.kind) {
    case RegKind::kGlobalCtl:
      return fmt::format("{}_MSR_PMON_GLOBAL_CTL", prefix);
    case RegKind::kStatus:
      return fmt::format("{}_MSR_PMON_GLOBAL_STATUS", prefix);
    case RegKind::kOvfCtl:
      return fmt::format("{}_MSR_PMON_GLOBAL_OVF_CTL", prefix);
    case RegKind::kControl:
      return fmt::format("{}_MSR_PMON_CTL{}", prefix, r.index);
    case RegKind::kCounter:
      return fmt::format("{}_MSR_PMON_CTR{}", prefix, r.index);
    case RegKind::kMmCfg:
      return fmt::format("{}_MSR_MM_CFG", prefix);
    case RegKind::kMatch:
      return fmt::format("{}_MSR_MATCH", prefix);
    case RegKind::kMask:
      return fmt::format("{}_MSR_MASK", prefix);
    case RegKind::kMboxSub:
      return fmt::format("{}_MSR_PMU_{}", prefix,
                         kMboxSubRegisters[r.index].name);
    case RegKind::kRIperf0:
      return fmt::format("R_MSR_PORT{}_IPERF_CFG0", r.index);
    case RegKind::kRIperf1:
      return fmt::format("R_MSR_PORT{}_IPERF_CFG1", r.index);
    case RegKind::kRQlx:
      return fmt::format("R_MSR_PORT{}_QLX_CFG", r.index);
    case RegKind::kRXbrMmCfg:
      return fmt::format("R_MSR_PORT{}_XBR_SET{}_MM_CFG", r.index / 2,
                         r.index % 2 + 1);
    case RegKind::kRXbrMatch:
      return fmt::format("R_MSR_PORT{}_XBR_SET{}_MATCH", r.index / 2,
                         r.index % 2 + 1);
    case RegKind::kRXbrMask:
      return fmt::format("R_MSR_PORT{}_XBR_SET{}_MASK", r.index / 2,
                         r.index % 2 + 1);
    case RegKind::kFixedCtr:
      return "W_MSR_PMON_FIXED_CTR";
    case RegKind::kFixedCtl:
      return "W_MSR_PMON_FIXED_CTR_CTL";
  }
  return "?";
}

std::vector<RegisterInfo> MakeInfo(const RawList& l) {
  std::vector<RegisterInfo> out;
  out.reserve(l.size);
  for (int i = 0; i < l.size; ++i) {
    const RawRegister& r = l.regs[i];
    out.push_back({.address = r.address,
                   .name = RegisterName(r),
                   .writable = r.writable,
                   .box = r.box,
                   .instance = r.instance});
  }
  std::sort(out.begin(), out.end(),
            [](const RegisterInfo& a, const RegisterInfo& b) {
              return a.address < b.address;
            });
  return out;
}

}  // namespace

std::optional<Variant> VariantNamed(std::string_view name) {
  for (Variant v : {Variant::kNehalemEx, Variant::kWestmereEx}) {
    if (name == PlatformName(v)) return v;
  }
  return std::nullopt;
}

std::string_view PlatformName(Variant v) {
  return v == Variant::kNehalemEx ? "nehalemex" : "westmereex";
}

std::string_view VariantDisplayName(Variant v) {
  return v == Variant::kNehalemEx ? "Xeon 7500 (Nehalem-EX)"
                                  : "Xeon E7 (Westmere-EX)";
}

std::optional<Variant> VariantFromModel(int family, int model) {
  if (family != kCpuFamily) return std::nullopt;
  if (model == kModelNehalemEx) return Variant::kNehalemEx;
  if (model == kModelWestmereEx) return Variant::kWestmereEx;
  return std::nullopt;
}

const BoxDescriptor* FindBoxByKernelName(std::string_view pmu) {
  for (const BoxDescriptor* box : kBoxes) {
    if (box->kernel_pmu == pmu) return box;
  }
  return nullptr;
}

std::string KernelPmuName(const BoxDescriptor& box, int instance) {
  if (box.NumInstances(Variant::kWestmereEx) == 1) {
    return fmt::format("uncore_{}", box.kernel_pmu);
  }
  return fmt::format("uncore_{}_{}", box.kernel_pmu, instance);
}

std::span<const RegisterInfo> AllRegisters(Variant v) {
  static const std::vector<RegisterInfo>* const nhm =
      new std::vector<RegisterInfo>(MakeInfo(kNhmRegisters));
  static const std::vector<RegisterInfo>* const wsm =
      new std::vector<RegisterInfo>(MakeInfo(kWsmRegisters));
  return v == Variant::kNehalemEx ? *nhm : *wsm;
}

const RegisterInfo* FindRegister(Variant v, uint32_t address) {
  std::span<const RegisterInfo> all = AllRegisters(v);
  auto it = std::lower_bound(
      all.begin(), all.end(), address,
      [](const RegisterInfo& r, uint32_t a) { return r.address < a; });
  if (it == all.end() || it->address != address) return nullptr;
  return &*it;
}

}  // namespace uncore::nehalemex
