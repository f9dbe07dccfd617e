// Encoder: turns a parsed event spec into the exact register values of its
// box, and back.
//
//   auto spec = ParseEventSpec("cbo/LLC_VICTIMS.M_STATE");
//   absl::StatusOr<Encoding> enc = EncodeEvent(*spec);
//   // enc->control == 0x00400137: ev_sel 0x37, umask 0x01, en (bit 22)
//
// The control value is what the counter control register holds while the
// event counts (enable bit set, reset/overflow bits clear).  Filter values
// are per filter register, with the mask of the bits this event owns, so a
// programmer can detect two events that need the same filter register set
// differently.  Counter assignment and the write sequence belong to the
// device layer; `counter_mask` says which counters may hold the event.
//
// Guarantees: pure functions; allocation only in the results.
#ifndef UNCORE_SDK_SPEC_ENCODER_H_
#define UNCORE_SDK_SPEC_ENCODER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sdk/platforms/ivytown/model/box_descriptors.h"
#include "sdk/spec/event_spec.h"

namespace uncore::spec {

struct FilterValue {
  int filter = 0;      // index into BoxDescriptor::filters
  uint64_t value = 0;  // the register value (bits outside `mask` are 0)
  uint64_t mask = 0;   // the bits this event sets

  bool operator==(const FilterValue&) const = default;
};

struct Encoding {
  const ivytown::BoxDescriptor* box = nullptr;
  bool fixed_counter = false;
  // General counter: the counter control register value.  Fixed counter:
  // the fixed control register value.
  uint64_t control = 0;
  uint8_t counter_mask = 0;  // general counters allowed; 0 for fixed
  std::vector<FilterValue> filters;
  // Facts worth telling the user (a raw code not in the catalog, a filter
  // the SDK cannot program, ...).
  std::vector<std::string> notes;
};

// Encodes a kBoxEvent or kFixedCounter spec.  Generic perf events are
// encoded by the perf backend: they give FailedPrecondition here.
absl::StatusOr<Encoding> EncodeEvent(const EventSpec& spec);

// The inverse: the spec that `control` and `filters` program on `box`
// (instances: all).  Fails on reserved bits or a missing enable bit.
absl::StatusOr<EventSpec> DecodeEvent(const ivytown::BoxDescriptor& box,
                                      bool fixed_counter, uint64_t control,
                                      const std::vector<FilterValue>& filters);

}  // namespace uncore::spec

#endif  // UNCORE_SDK_SPEC_ENCODER_H_
