// Test helper: one spec string per IvyTown catalog entry (each event without
// unit masks, each event.umask), with the filters the entry needs set to
// their lowest writable bit so that every one encodes.
//
//   for (const std::string& text : uncore::testing::EveryCatalogSpec()) {
//     ... ParseEventSpec(text) ...
//   }
#ifndef UNCORE_TESTS_TESTING_CATALOG_SPECS_H_
#define UNCORE_TESTS_TESTING_CATALOG_SPECS_H_

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fmt/format.h"
#include "sdk/platforms/ivytown/model/box_descriptors.h"
#include "sdk/platforms/ivytown/model/event_catalog.h"

namespace uncore::testing {

// "name=0x<lowest writable bit>" for every field named in `filter_lists`
// (catalog filter lists) that `box` has, without repeats.
inline std::vector<std::string> LowestBitSettings(
    const ivytown::BoxDescriptor& box,
    std::initializer_list<std::span<const std::string_view>> filter_lists) {
  std::vector<std::string> settings;
  for (std::span<const std::string_view> list : filter_lists) {
    for (std::string_view name : list) {
      const ivytown::FieldDescriptor* field = box.FindField(name);
      if (field == nullptr) continue;
      const uint64_t writable =
          field->bits.mask() & box.filters[field->filter].writable_mask;
      if (writable == 0) continue;
      const int bit = __builtin_ctzll(writable) - field->bits.lo;
      std::string setting = fmt::format("{}=0x{:x}", name, uint64_t{1} << bit);
      if (std::find(settings.begin(), settings.end(), setting) ==
          settings.end()) {
        settings.push_back(std::move(setting));
      }
    }
  }
  return settings;
}

// Every catalog entry as a spec: "cbo/LLC_LOOKUP.DATA_READ:filter_state=0x1".
inline std::vector<std::string> EveryCatalogSpec() {
  std::vector<std::string> specs;
  for (const ivytown::EventDescriptor& e : ivytown::AllEvents()) {
    const ivytown::BoxDescriptor& box = ivytown::Box(e.box);
    auto with_filters = [&](std::string text,
                            std::span<const std::string_view> filters) {
      const std::vector<std::string> settings =
          LowestBitSettings(box, {e.filters, filters});
      for (size_t i = 0; i < settings.size(); ++i) {
        text += (i == 0 ? ":" : ",") + settings[i];
      }
      return text;
    };
    const std::string base = fmt::format("{}/{}", box.name, e.name);
    if (!e.has_umasks()) specs.push_back(with_filters(base, {}));
    for (const auto& u : e.umasks) {
      specs.push_back(
          with_filters(fmt::format("{}.{}", base, u.name), u.filters));
    }
  }
  return specs;
}

}  // namespace uncore::testing

#endif  // UNCORE_TESTS_TESTING_CATALOG_SPECS_H_
