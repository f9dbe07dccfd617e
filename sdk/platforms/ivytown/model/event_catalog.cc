#include "sdk/platforms/ivytown/model/event_catalog.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <tuple>

#include "sdk/common/text.h"
#include "sdk/platforms/ivytown/model/box_descriptors.h"

// AllEvents() is defined in the generated event_catalog_data.cc.

namespace uncore::ivytown {
namespace {

// The ordering the generated table is sorted by (a static_assert there
// checks it).
bool MatchesAny(std::string_view name, std::span<const std::string_view> list) {
  for (std::string_view n : list) {
    if (common::EqualsIgnoreCase(name, n)) return true;
  }
  return false;
}

auto Key(const EventDescriptor& e) {
  return std::make_tuple(e.box, e.code, e.extended);
}

}  // namespace

const UmaskDescriptor* EventDescriptor::FindUmask(
    std::string_view umask_name) const {
  for (const UmaskDescriptor& u : umasks) {
    if (common::EqualsIgnoreCase(u.name, umask_name)) return &u;
  }
  for (const UmaskDescriptor& u : umasks) {
    if (MatchesAny(umask_name, u.aliases)) return &u;
  }
  return nullptr;
}

std::span<const EventDescriptor> EventsOf(BoxType box) {
  const std::span<const EventDescriptor> all = AllEvents();
  const auto first = std::partition_point(
      all.begin(), all.end(),
      [box](const EventDescriptor& e) { return e.box < box; });
  const auto last = std::partition_point(
      first, all.end(),
      [box](const EventDescriptor& e) { return e.box == box; });
  return all.subspan(static_cast<size_t>(first - all.begin()),
                     static_cast<size_t>(last - first));
}

const EventDescriptor* FindEvent(BoxType box, std::string_view name) {
  const std::span<const EventDescriptor> events = EventsOf(box);
  // Names first, so an alias can never shadow another event's own name.
  for (const EventDescriptor& e : events) {
    if (common::EqualsIgnoreCase(e.name, name)) return &e;
  }
  for (const EventDescriptor& e : events) {
    if (MatchesAny(name, e.aliases)) return &e;
  }
  return nullptr;
}

const EventDescriptor* FindEventByCode(BoxType box, uint8_t code,
                                       bool extended) {
  const std::span<const EventDescriptor> all = AllEvents();
  const auto wanted = std::make_tuple(box, code, extended);
  const auto it = std::lower_bound(
      all.begin(), all.end(), wanted,
      [](const EventDescriptor& e, const auto& k) { return Key(e) < k; });
  if (it == all.end() || Key(*it) != wanted) return nullptr;
  return &*it;
}

bool NeedsQueueOccupancyReset(const EventDescriptor& event) {
  return event.box == BoxType::kHa && event.name.ends_with("OCCUPANCY");
}

}  // namespace uncore::ivytown
