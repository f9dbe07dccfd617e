// IvyTown's allow-list, per socket: U_MSR_PMON_GLOBAL_CTL/STATUS/CONFIG; for
// every present box instance its box control and box status, counter
// controls, counter data (PCI: both dwords), filter registers (QPI: in the
// mask/match function, when the topology has it) and fixed counter control
// and data.  MSRs are allowed on every CPU of the socket (and its msr_cpu);
// PCI registers only in the socket's own functions.  The one
// machine::AllowListGuard enforces it for the direct backend.  Writable bits:
//   counter control      BoxDescriptor::control_writable_mask (engine bits
//                        en, rst, ov_en, q_occ_rst included)
//   filter               FilterRegisterDescriptor::writable_mask
//   box control          frz | rst_ctrs | rst_ctrl | must_write_one
//   box status           box_status_writable_mask (RW1C overflow bits)
//   global control       kGlobal.global_control_writable_mask
//   global status        kGlobal.global_status_writable_mask
//   global config        bits 31:0 (the manual's field table is missing)
//   fixed control        FixedCounterDescriptor::control_writable_mask
//   counter data         any value below 2^width (PCI: low dword any 32-bit
//                        value, high dword the bits above 32 of the width)
//
//   machine::AllowListGuard guard(
//       &linux_space, ivytown::RegisterAllowList(topology));
//   guard.WriteMsr(0, 0x0D10, 0x00400137);          // CBo0 CTL0: ok
//   guard.WriteMsr(0, 0x0010, 0);                   // TSC: PermissionDenied
//
// Guarantees: pure; the list depends only on the topology.
#ifndef UNCORE_SDK_PLATFORMS_IVYTOWN_DEVICE_IVYTOWN_ALLOWLIST_H_
#define UNCORE_SDK_PLATFORMS_IVYTOWN_DEVICE_IVYTOWN_ALLOWLIST_H_

#include "sdk/machine/allowlist_guard.h"
#include "sdk/machine/topology.h"

namespace uncore::ivytown {

// The list for the sockets, boxes and PCI functions of `topology`.
machine::AllowList RegisterAllowList(const machine::Topology& topology);

}  // namespace uncore::ivytown

#endif  // UNCORE_SDK_PLATFORMS_IVYTOWN_DEVICE_IVYTOWN_ALLOWLIST_H_
