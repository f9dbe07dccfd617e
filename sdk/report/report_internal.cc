#include "sdk/report/report_internal.h"

#include <utility>

#include "absl/container/flat_hash_map.h"
#include "fmt/format.h"
#include "sdk/common/region_path.h"

namespace uncore::report::internal {

std::optional<std::string_view> ParentPath(const RegionResult& region) {
  if (region.depth <= 0) return std::nullopt;
  return common::ParentRegionPath(region.path, region.name);
}

RegionTree BuildRegionTree(const std::vector<RegionResult>& regions) {
  const size_t n = regions.size();
  RegionTree tree;
  tree.parent.assign(n, -1);
  tree.children.resize(n);
  absl::flat_hash_map<std::string_view, size_t> first_with_path;
  for (size_t i = 0; i < n; ++i) {
    first_with_path.try_emplace(regions[i].path, i);
  }
  for (size_t i = 0; i < n; ++i) {
    const std::optional<std::string_view> up = ParentPath(regions[i]);
    const auto found = up ? first_with_path.find(*up) : first_with_path.end();
    // The parent's path is shorter than the child's: no cycles.
    if (found != first_with_path.end() &&
        regions[found->second].depth + 1 == regions[i].depth) {
      tree.parent[i] = static_cast<int>(found->second);
      tree.children[found->second].push_back(i);
    } else {
      tree.roots.push_back(i);
    }
  }
  // Pre-order walk with a cursor per open level: no recursion, however deep.
  tree.order.reserve(n);
  std::vector<std::pair<size_t, size_t>> open;  // (region, next child)
  for (const size_t root : tree.roots) {
    tree.order.push_back(root);
    open.emplace_back(root, 0);
    while (!open.empty()) {
      const size_t node = open.back().first;
      const size_t next = open.back().second++;
      if (next >= tree.children[node].size()) {
        open.pop_back();
        continue;
      }
      const size_t child = tree.children[node][next];
      tree.order.push_back(child);
      open.emplace_back(child, 0);
    }
  }
  return tree;
}

const std::string& EventName(const EventInfo& event) {
  return event.canonical.empty() ? event.spec : event.canonical;
}

std::vector<std::string> UniqueKeys(std::vector<std::string> names) {
  absl::flat_hash_map<std::string, int> seen;
  for (const std::string& name : names) seen[name] = 0;
  for (std::string& name : names) {
    int& count = seen[name];
    if (++count == 1) continue;
    std::string key;
    do {  // "x#2" may itself be a name already in use
      key = fmt::format("{}#{}", name, count++);
    } while (seen.contains(key));
    seen[key] = 1;
    name = std::move(key);
  }
  return names;
}

std::vector<std::string> EventKeys(const Results& results) {
  std::vector<std::string> keys;
  keys.reserve(results.events.size());
  for (const EventInfo& event : results.events) {
    keys.push_back(EventName(event));
  }
  return UniqueKeys(std::move(keys));
}

std::vector<std::string> MetricKeys(const Results& results) {
  std::vector<std::string> keys;
  keys.reserve(results.metrics.size());
  for (const MetricInfo& metric : results.metrics) keys.push_back(metric.name);
  return UniqueKeys(std::move(keys));
}

std::string SocketLabel(const std::vector<int>& sockets, size_t s) {
  return s < sockets.size() ? fmt::format("{}", sockets[s])
                            : fmt::format("#{}", s);
}

double ScaledCount(uint64_t count, double scale) {
  return static_cast<double>(count) * scale;
}

std::string PlatformText(const std::string& platform) {
  if (platform == "none") {
    return "none (no supported uncore: generic perf PMUs)";
  }
  return platform;
}

}  // namespace uncore::report::internal
