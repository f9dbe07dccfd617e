#include "sdk/platforms/ivytown/device/ivytown_allowlist.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "fmt/format.h"
#include "sdk/machine/allowlist_guard.h"
#include "sdk/machine/topology.h"
#include "sdk/platforms/ivytown/model/box_descriptors.h"

namespace uncore::ivytown {
namespace {

using machine::AllowedRegister;
using machine::RegisterRole;
using machine::SocketTopology;
using registers::PciAddress;

constexpr uint64_t kLow32 = 0xFFFFFFFF;

uint64_t WidthMask(int width) {
  return width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
}

// The counter control bits software may set: the descriptor's mask plus the
// bits of the engine-owned fields (en, rst, ov_en, q_occ_rst).
uint64_t ControlMask(const BoxDescriptor& box) {
  uint64_t mask = box.control_writable_mask;
  for (const FieldDescriptor& f : box.fields) {
    if (f.reg == FieldRegister::kControl && f.use == FieldUse::kEngine) {
      mask |= f.bits.mask();
    }
  }
  return mask;
}

uint64_t BoxControlMask(const BoxDescriptor& box) {
  const BoxControlLayout& c = box.box_control;
  return c.frz.mask() | c.rst_ctrs.mask() | c.rst_ctrl.mask() |
         c.must_write_one;
}

// The IvyTown name of a register: "CBo3 counter control 0".
std::string IvyTownName(RegisterRole role, BoxType box, int instance, int index,
                        bool pci) {
  switch (role) {
    case RegisterRole::kGlobalControl:
      return "U_MSR_PMON_GLOBAL_CTL";
    case RegisterRole::kGlobalStatus:
      return "U_MSR_PMON_GLOBAL_STATUS";
    case RegisterRole::kGlobalConfig:
      return "U_MSR_PMON_GLOBAL_CONFIG";
    default:
      break;
  }
  const BoxDescriptor& desc = Box(box);
  const std::string_view in = desc.instances[instance].name;
  switch (role) {
    case RegisterRole::kBoxControl:
      return fmt::format("{} box control", in);
    case RegisterRole::kBoxStatus:
      return fmt::format("{} box status", in);
    case RegisterRole::kCounterControl:
      return fmt::format("{} counter control {}", in, index);
    case RegisterRole::kCounter:
      return fmt::format("{} counter {}{}", in, index,
                         pci ? " (low dword)" : "");
    case RegisterRole::kCounterHigh:
      return fmt::format("{} counter {} (high dword)", in, index);
    case RegisterRole::kFilter:
      return fmt::format("{} filter {}", in, desc.filters[index].name);
    case RegisterRole::kFixedControl:
      return fmt::format("{} fixed counter control {}", in,
                         desc.fixed_counter->manual_control_name);
    case RegisterRole::kFixedCounter:
      return fmt::format("{} fixed counter {}{}", in,
                         desc.fixed_counter->manual_counter_name,
                         pci ? " (low dword)" : "");
    case RegisterRole::kFixedCounterHigh:
      return fmt::format("{} fixed counter {} (high dword)", in,
                         desc.fixed_counter->manual_counter_name);
    default:
      return std::string(in);
  }
}

}  // namespace

machine::AllowList RegisterAllowList(const machine::Topology& topology) {
  machine::AllowList list;
  list.source = "the IvyTown box descriptors name";
  list.socket_cpus = machine::SocketCpus(topology);
  auto push = [&](machine::AllowedRegister reg) {
    list.registers.push_back(std::move(reg));
  };
  for (int s = 0; s < static_cast<int>(topology.sockets.size()); ++s) {
    const SocketTopology& socket = topology.sockets[s];

    auto global = [&](RegisterRole role, uint32_t msr, uint64_t mask) {
      AllowedRegister reg;
      reg.space = AccessSpace::kMsr;
      reg.socket = s;
      reg.address = msr;
      reg.role = role;
      reg.writable_mask = mask;
      reg.name = IvyTownName(role, BoxType::kUbox, 0, 0, false);
      push(std::move(reg));
    };
    global(RegisterRole::kGlobalControl, kGlobal.global_control,
           kGlobal.global_control_writable_mask);
    global(RegisterRole::kGlobalStatus, kGlobal.global_status,
           kGlobal.global_status_writable_mask);
    // The manual's U_MSR_PMON_GLOBAL_CONFIG field table is missing: any
    // 32-bit value (the register is 32 bits wide, Table 2-2).
    global(RegisterRole::kGlobalConfig, kGlobal.global_config, kLow32);

    for (const BoxDescriptor& box : AllBoxes()) {
      for (int n = 0; n < box.num_instances(); ++n) {
        const bool pci = box.space == AccessSpace::kPci;
        std::optional<PciAddress> pmon;
        std::optional<PciAddress> aux;
        if (pci) {
          const SocketTopology::PciInstance* p = socket.FindPci(box.type, n);
          if (p == nullptr || !p->pmon) continue;
          pmon = p->pmon;
          aux = p->aux;
        } else if (!socket.HasInstance(box.type, n)) {
          continue;
        }
        auto add = [&](RegisterRole role, uint32_t address, uint64_t mask,
                       int index = 0, bool in_aux = false) {
          AllowedRegister reg;
          reg.space = box.space;
          reg.socket = s;
          reg.address = address;
          reg.role = role;
          reg.writable_mask = mask;
          reg.name = IvyTownName(role, box.type, n, index, pci);
          if (pci) {
            if (in_aux && !aux) return;  // the function was not identified
            reg.function = in_aux ? *aux : *pmon;
          }
          push(std::move(reg));
        };
        // A counter: one MSR, or two PCI dwords.
        auto add_counter = [&](RegisterRole low, RegisterRole high,
                               uint32_t address, int width, int index) {
          const uint64_t mask = WidthMask(width);
          if (!pci) {
            add(low, address, mask, index);
            return;
          }
          add(low, address, mask & kLow32, index);
          add(high, address + 4, mask >> 32, index);
        };

        if (auto a = box.BoxControlAddress(n)) {
          add(RegisterRole::kBoxControl, *a, BoxControlMask(box));
        }
        if (auto a = box.BoxStatusAddress(n)) {
          add(RegisterRole::kBoxStatus, *a, box.box_status_writable_mask);
        }
        for (int i = 0; i < box.num_counters; ++i) {
          add(RegisterRole::kCounterControl, box.CounterControlAddress(n, i),
              ControlMask(box), i);
          add_counter(RegisterRole::kCounter, RegisterRole::kCounterHigh,
                      box.CounterAddress(n, i), box.counter_width, i);
        }
        for (int f = 0; f < static_cast<int>(box.filters.size()); ++f) {
          const FilterRegisterDescriptor& filter = box.filters[f];
          if (filter.in_aux_function) {
            add(RegisterRole::kFilter, filter.offset, filter.writable_mask, f,
                /*in_aux=*/true);
          } else {
            add(RegisterRole::kFilter, box.FilterAddress(n, f),
                filter.writable_mask, f);
          }
        }
        if (box.fixed_counter) {
          const FixedCounterDescriptor& x = *box.fixed_counter;
          add(RegisterRole::kFixedControl,
              box.RegisterAddress(n, x.control_offset),
              x.control_writable_mask);
          add_counter(RegisterRole::kFixedCounter,
                      RegisterRole::kFixedCounterHigh,
                      box.RegisterAddress(n, x.counter_offset), x.width, 0);
        }
      }
    }
  }
  return list;
}

}  // namespace uncore::ivytown
