// What Linux's ivbep uncore driver does with an IvyTown event beyond its
// event masks: which filter fields it actually programs, and which counters
// it may schedule the event on.  The facts (from arch/x86/events/intel/
// uncore_snbep.c, notes/kernel-ivbep-facts.md; no kernel code) are data in
// each box's descriptor, ivytown::BoxDescriptor::kernel; this file applies
// them.
//
//   std::vector<std::string> lost = DroppedFilters(spec, enc, config);
//   // non-empty: the driver would count without these filters: refuse
//   uint8_t may = KernelCounterMask(BoxType::kR2pcie, 0x13);  // 0xf
//   std::vector<int> placed = PredictKernelCounters({0x3, 0xf, 0x3});
//   // {0, 2, 1}: constrained events first, each on its lowest free counter
//
// The driver programs the CBo filter fields only for the events of its
// extra-register table, the PCU band filter only for FREQ_BAND0..3_CYCLES
// (event 0x0b-0x0e, each its own byte) and the QPI match/mask only for event
// 0x38 (CTO_COUNT); everything else in config1/config2 is silently ignored.
// Its constraint tables (CBo, R2PCIe, R3QPI) differ from the manual's counter
// restrictions for a few events, and it has none for the other boxes
// (notes/decisions.md #32, #33).
//
// Guarantees: pure functions; allocation only in the results.
#ifndef UNCORE_SDK_PLATFORMS_IVYTOWN_DEVICE_KERNEL_IVBEP_H_
#define UNCORE_SDK_PLATFORMS_IVYTOWN_DEVICE_KERNEL_IVBEP_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sdk/devices/device.h"
#include "sdk/devices/perf/perf_device.h"
#include "sdk/platforms/ivytown/model/box_descriptors.h"
#include "sdk/spec/encoder.h"
#include "sdk/spec/event_spec.h"

namespace uncore::devices::perf {

// The filter modifiers of `spec` that the driver would not program for the
// event whose perf config (the counter control without the enable bit) is
// `config`, each as "filter_nid (the driver programs ... only for ...)".
// Empty when every filter reaches the hardware.
std::vector<std::string> DroppedFilters(const spec::EventSpec& spec,
                                        uint64_t config);

// The counters the driver may schedule an event of `box` with perf config
// `config` on (bit i: counter i): its constraint table, or every counter of
// the box.  `counters`: the driver's counter count for the box.
uint8_t KernelCounterMask(ivytown::BoxType box, uint64_t config, int counters);

// The counter the driver's scheduler gives each event of one group, when the
// group is alone on its PMU: events in order of increasing constraint weight
// (then group order), each on the lowest free counter of its mask; -1 where
// none is free.
std::vector<int> PredictKernelCounters(std::span<const uint8_t> masks);

// Checks where the driver will place the IvyTown events of `counters` (as
// planned for `request`: one group per PMU and CPU, or one per event when
// multiplexing).  InvalidArgument when a group puts an event on a counter
// the manual forbids for it; otherwise one warning per event whose manual
// restriction the driver does not know (it lands on an allowed counter when
// the group is alone on its PMU; another perf user, or multiplexing, could
// move it).
absl::StatusOr<std::vector<std::string>> ReviewKernelPlacement(
    const ProgramRequest& request, std::span<const PerfCounter> counters);

// "0-1", "0,2": a counter mask as a list.
std::string CounterMaskText(uint8_t mask);

// The counter-control bits the kernel's driver sets itself (enable, reset),
// which an event's perf config must leave out.
uint64_t EngineBits(const ivytown::BoxDescriptor& box);

// What `uncore describe` and the perf backend tell about `spec` on perf:
// dropped filters (refused) and a counter restriction the driver does not
// know (placement checked per group).  Empty when perf counts it as asked.
std::vector<std::string> PerfCaveats(const spec::EventSpec& spec,
                                     const spec::Encoding& enc);

}  // namespace uncore::devices::perf

#endif  // UNCORE_SDK_PLATFORMS_IVYTOWN_DEVICE_KERNEL_IVBEP_H_
