// The Xeon 7500 / E7 allow-list: per socket, every PMON MSR of the
// variant's register model (nehalemex::AllRegisters: U, box GLOBAL_CTL/
// STATUS/OVF_CTL, counter controls and data, match/mask, M-Box sub-control,
// R-Box port and W fixed registers) with its writable bits
// (RegisterInfo::writable; 0 for a read-only status, which takes no write),
// on every CPU of the socket; no PCI.  The one machine::AllowListGuard
// enforces it for the direct backend.
//
//   machine::AllowListGuard guard(
//       &linux_space, nehalemex::RegisterAllowList(Variant::kNehalemEx,
//                                                  topology));
//
// Guarantees: pure; the list depends only on the variant and the topology.
#ifndef UNCORE_SDK_PLATFORMS_NEHALEMEX_DEVICE_NEHALEMEX_ALLOWLIST_H_
#define UNCORE_SDK_PLATFORMS_NEHALEMEX_DEVICE_NEHALEMEX_ALLOWLIST_H_

#include "sdk/machine/allowlist_guard.h"
#include "sdk/machine/topology.h"
#include "sdk/platforms/nehalemex/model/box_descriptors.h"

namespace uncore::nehalemex {

machine::AllowList RegisterAllowList(Variant variant,
                                     const machine::Topology& topology);

}  // namespace uncore::nehalemex

#endif  // UNCORE_SDK_PLATFORMS_NEHALEMEX_DEVICE_NEHALEMEX_ALLOWLIST_H_
