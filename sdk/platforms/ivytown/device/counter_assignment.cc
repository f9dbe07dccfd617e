#include "sdk/platforms/ivytown/device/counter_assignment.h"

#include <array>

#include "sdk/platforms/ivytown/model/box_descriptors.h"

namespace uncore::devices::direct {
namespace {

constexpr int kMaxCounters = 8;  // masks are 8 bits wide
static_assert(ivytown::kMaxCounters <= kMaxCounters);

struct Matcher {
  std::span<const uint8_t> masks;
  int num_counters = 0;
  std::array<int, kMaxCounters> event_of_counter{};
  std::array<bool, kMaxCounters> visited{};

  // Kuhn's augmenting path from `event`: take a free allowed counter, or
  // else move the holder of an allowed counter elsewhere.  Free counters are
  // tried first so that events that fit in order stay in order.
  bool Augment(int event) {
    for (int c = 0; c < num_counters; ++c) {
      if ((masks[event] & (1u << c)) != 0 && !visited[c] &&
          event_of_counter[c] < 0) {
        visited[c] = true;
        event_of_counter[c] = event;
        return true;
      }
    }
    for (int c = 0; c < num_counters; ++c) {
      if ((masks[event] & (1u << c)) == 0 || visited[c]) continue;
      visited[c] = true;
      if (event_of_counter[c] < 0 || Augment(event_of_counter[c])) {
        event_of_counter[c] = event;
        return true;
      }
    }
    return false;
  }
};

}  // namespace

std::optional<std::vector<int>> AssignCounters(std::span<const uint8_t> masks,
                                               int num_counters) {
  if (num_counters < 0 || num_counters > kMaxCounters ||
      static_cast<int>(masks.size()) > num_counters) {
    return std::nullopt;
  }
  Matcher m{.masks = masks, .num_counters = num_counters};
  m.event_of_counter.fill(-1);
  for (int e = 0; e < static_cast<int>(masks.size()); ++e) {
    m.visited.fill(false);
    if (!m.Augment(e)) return std::nullopt;
  }
  std::vector<int> counter_of_event(masks.size(), -1);
  for (int c = 0; c < num_counters; ++c) {
    if (m.event_of_counter[c] >= 0) counter_of_event[m.event_of_counter[c]] = c;
  }
  return counter_of_event;
}

}  // namespace uncore::devices::direct
