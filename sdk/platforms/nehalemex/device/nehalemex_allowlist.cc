#include "sdk/platforms/nehalemex/device/nehalemex_allowlist.h"

#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "fmt/format.h"

namespace uncore::nehalemex {

using ::uncore::platforms::AccessSpace;
namespace {

using machine::AllowedRegister;
using machine::AllowList;
using machine::RegisterRole;

// The role of a Xeon 7500 register, from the manual's name.
RegisterRole NehalemExRole(std::string_view name) {
  auto has = [&](std::string_view part) {
    return name.find(part) != std::string_view::npos;
  };
  if (name == "U_MSR_PMON_GLOBAL_CTL") return RegisterRole::kGlobalControl;
  if (name == "U_MSR_PMON_GLOBAL_STATUS") return RegisterRole::kGlobalStatus;
  if (has("FIXED_CTR_CTL")) return RegisterRole::kFixedControl;
  if (has("FIXED_CTR")) return RegisterRole::kFixedCounter;
  if (has("_PMON_GLOBAL_CTL")) return RegisterRole::kBoxControl;
  if (has("_PMON_GLOBAL_STATUS")) return RegisterRole::kBoxStatus;
  if (has("_PMON_CTL")) return RegisterRole::kCounterControl;
  if (has("_PMON_CTR")) return RegisterRole::kCounter;
  if (has("MM_CFG") || has("MATCH") || has("MASK")) {
    return RegisterRole::kFilter;
  }
  return RegisterRole::kOther;
}

}  // namespace

AllowList RegisterAllowList(Variant variant,
                            const machine::Topology& topology) {
  AllowList list;
  list.source = fmt::format("the {} register model names",
                            nehalemex::VariantDisplayName(variant));
  list.socket_cpus = machine::SocketCpus(topology);
  const std::span<const nehalemex::RegisterInfo> all =
      nehalemex::AllRegisters(variant);
  for (int s = 0; s < static_cast<int>(topology.sockets.size()); ++s) {
    for (const nehalemex::RegisterInfo& r : all) {
      AllowedRegister reg;
      reg.space = AccessSpace::kMsr;
      reg.socket = s;
      reg.address = r.address;
      reg.role = NehalemExRole(r.name);
      reg.writable_mask = r.writable;
      reg.name = r.name;
      list.registers.push_back(std::move(reg));
    }
  }
  return list;
}

}  // namespace uncore::nehalemex
