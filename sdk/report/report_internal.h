// What the report formats share beyond report.h's building blocks: the
// region tree (a region's parent is the region whose path is its own
// without "/name", one level up), event names and unique keys.  Internal to
// sdk/report: not part of the layer's interface.
//
//   const internal::RegionTree tree = internal::BuildRegionTree(regions);
//   for (size_t i : tree.order) { ... regions[i] ..., tree.parent[i] ... }
//
// Guarantees: pure; any input (duplicate paths, missing parents, depths
// that do not match the paths) gives a tree in which every region appears
// exactly once.
#ifndef UNCORE_SDK_REPORT_REPORT_INTERNAL_H_
#define UNCORE_SDK_REPORT_REPORT_INTERNAL_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "uncore/results.h"

namespace uncore::report::internal {

// The path of `region`'s parent as its own path names it ("main/solve" for
// "main/solve/assemble" named "assemble"; common::ParentRegionPath), or
// nullopt for an outermost region and for a path that does not end in "/"
// and the escaped name.
std::optional<std::string_view> ParentPath(const RegionResult& region);

struct RegionTree {
  // Index of each region's parent in the regions, or -1: an outermost
  // region, or one whose parent (ParentPath, at depth - 1; the first region
  // of that path) is not in the results.
  std::vector<int> parent;
  std::vector<std::vector<size_t>> children;  // in results order
  std::vector<size_t> roots;                  // in results order
  // Depth first: each region right after its parent, siblings in results
  // order (the table's order).
  std::vector<size_t> order;
};

RegionTree BuildRegionTree(const std::vector<RegionResult>& regions);

// The event's name in reports: its canonical spec, or the spec as written.
const std::string& EventName(const EventInfo& event);

// `names` made unique: the second "x" becomes "x#2", the third "x#3"...
std::vector<std::string> UniqueKeys(std::vector<std::string> names);

// The unique names of the events (EventName) and of the metrics.
std::vector<std::string> EventKeys(const Results& results);
std::vector<std::string> MetricKeys(const Results& results);

// Socket `s` of the per_socket vectors: its id from `sockets`, or "#s"
// when the vector is shorter.
std::string SocketLabel(const std::vector<int>& sockets, size_t s);

// RunInfo::platform as the table and the page show it: "none" says what it
// means (no supported uncore: only generic perf PMUs counted).
std::string PlatformText(const std::string& platform);

// `count` in the event's unit (count * scale).
double ScaledCount(uint64_t count, double scale);

}  // namespace uncore::report::internal

#endif  // UNCORE_SDK_REPORT_REPORT_INTERNAL_H_
