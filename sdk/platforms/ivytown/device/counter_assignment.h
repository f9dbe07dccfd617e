// Counter assignment: places a box instance's events on its general counters
// honouring each event's allowed-counter mask, by maximum bipartite matching
// (augmenting paths), so an order-dependent first fit never refuses a set
// that fits.
//
//   // CBo: LLC_VICTIMS (counters 0-1), then RxR_OCCUPANCY (counter 0 only).
//   const uint8_t masks[] = {0x3, 0x1};
//   std::optional<std::vector<int>> c = AssignCounters(masks, 4);
//   // *c == {1, 0}: first fit would have put LLC_VICTIMS on 0 and failed.
//
// Guarantees: pure function; deterministic (lowest counters first, events in
// the order given); allocation only in the result.
#ifndef UNCORE_SDK_PLATFORMS_IVYTOWN_DEVICE_COUNTER_ASSIGNMENT_H_
#define UNCORE_SDK_PLATFORMS_IVYTOWN_DEVICE_COUNTER_ASSIGNMENT_H_

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace uncore::devices::direct {

// `masks[i]`: bit c set when event i may use counter c (bits at or above
// `num_counters` are ignored).  Returns the counter of each event, or
// nullopt when no assignment exists (too many events, or a mask with no
// usable counter).
std::optional<std::vector<int>> AssignCounters(std::span<const uint8_t> masks,
                                               int num_counters);

}  // namespace uncore::devices::direct

#endif  // UNCORE_SDK_PLATFORMS_IVYTOWN_DEVICE_COUNTER_ASSIGNMENT_H_
