// Timeline: what happened when during a session, as plain data for the
// pictures (the HTML report's timeline; sdk/trace/ builds it while the
// session runs and streams the same records to a Chrome trace).
//
//   const report::Timeline* timeline = ...;  // may be nullptr: no timeline
//   std::string page = report::FormatHtml(results, timeline);
//
// Times are nanoseconds since the session started (RunInfo::start_unix_ns
// is that instant in wall-clock time).  Region indices are indices into
// Results::regions; sockets are indices into RunInfo::sockets.
//
// Guarantees: plain values, bounded in size by the collector (calls and
// rate samples past its limits are counted in `dropped_*`, not kept).
#ifndef UNCORE_SDK_REPORT_TIMELINE_H_
#define UNCORE_SDK_REPORT_TIMELINE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "uncore/results.h"

namespace uncore::report {

struct TimelineThread {
  int64_t tid = 0;   // the operating system's thread id
  std::string name;  // "main", "thread 2", or the name the thread set
};

// One call of a region on one thread.
struct TimelineCall {
  int region = -1;  // index into Results::regions
  int thread = -1;  // index into Timeline::threads
  uint64_t begin_ns = 0;
  uint64_t end_ns = 0;
};

// Rates between two consecutive snapshots of the counters.
struct TimelineRates {
  uint64_t begin_ns = 0;
  uint64_t end_ns = 0;
  // [socket][event]: the event's count over the stretch per second, with
  // EventInfo::scale applied (bytes/s where the unit is bytes).
  std::vector<std::vector<double>> event_rates;
  // [socket][metric]: the metric over the stretch (per second where
  // MetricInfo::per_second; the ratio itself otherwise).
  std::vector<std::vector<MetricValue>> metrics;
};

struct Timeline {
  std::vector<TimelineThread> threads;
  std::vector<TimelineCall> calls;   // in order of their end
  std::vector<TimelineRates> rates;  // in time order
  // Records the collector did not keep (its memory limit): the page says
  // how many.
  uint64_t dropped_calls = 0;
  uint64_t dropped_rates = 0;
};

}  // namespace uncore::report

#endif  // UNCORE_SDK_REPORT_TIMELINE_H_
