// TraceCollector: a session's timeline while it runs: every region call on
// its thread, and the counters' rates between snapshots, streamed to a
// Chrome Trace Event file (UNCORE_TRACE; ui.perfetto.dev and
// chrome://tracing open it) and kept, bounded, for the HTML report.
//
//   TraceOptions o;  o.path = "/abs/t-42.json";  // PrepareOutput'ed
//   auto collector = TraceCollector::Open(o, layout);    // file opened
//   runtime::TraceHook hook(collector->get());           // regions record
//   RecorderOptions r;  r.hooks.push_back(&hook);        // (runtime/trace_hook.h)
//   ...                                                  // the run
//   collector->StopSampling();  // before the recorder is deactivated
//   ...                         // the recorder deactivated and quiet
//   absl::Status s = collector->Finish();  // whole file, or none
//
// What the file holds (docs/report-format.md, "Trace"):
// - one `X` slice per region call on its thread's track (pid: the process,
//   tid: the OS thread), named after the region, `args.path` its path and,
//   where the call read the counters at both ends (it opened and closed its
//   region: no other thread was inside), the call's count of each event;
//   LIKWID-style marker regions, which need not nest, as async `b`/`e` pairs;
// - per socket a pseudo-process "socket N uncore" with one counter track
//   (`C`) per event ("EVENT per second", scaled to its unit) and per metric,
//   a point per stretch between snapshots at least `min_rate_ns` long
//   (shorter ones are merged into the next);
// - `M` events naming the process (host, pid, MPI rank), the socket
//   pseudo-processes and the threads.
//
// Costs: a call adds one record to its thread's buffer (no lock, no
// allocation); a full buffer (thread_buffer_calls) is handed to the
// collector's writer thread, which formats and writes it.  A snapshot adds
// one record under a short lock.  Memory is bounded: when the writer falls
// behind by max_queued_buffers, the thread whose buffer is full formats it
// itself (it waits for the disk instead of the memory growing).  Nothing is
// dropped silently: records that could not be written (a write error) or
// kept (the HTML timeline's limits) are counted, and the report says so.
//
// Guarantees: the file is replaced only by a complete trace
// (report::ReportFileStream); after a write error the rest is counted as
// dropped, the partial file removed, and Finish returns the error.
#ifndef UNCORE_SDK_TRACE_TRACE_COLLECTOR_H_
#define UNCORE_SDK_TRACE_TRACE_COLLECTOR_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sdk/devices/device.h"
#include "sdk/devices/shared_snapshots.h"
#include "sdk/report/output.h"
#include "sdk/report/timeline.h"
#include "uncore/results.h"

namespace uncore::trace {

// What the snapshots' values are: which event and socket each read-plan
// entry counts, and how to turn counts into rates and metrics.
struct TraceLayout {
  std::vector<int> sockets;       // socket ids, sorted (RunInfo::sockets)
  std::vector<int> value_event;   // per read-plan entry: its event
  std::vector<int> value_socket;  // per entry: index into `sockets`
  std::vector<EventInfo> events;
  struct Metric {
    MetricInfo info;
    // The metric from the events' scaled counts over `seconds` (already
    // divided by the seconds where info.per_second).
    std::function<double(const std::vector<double>& scaled_counts,
                         double seconds)>
        evaluate;
  };
  std::vector<Metric> metrics;
};

struct TraceOptions {
  std::string path;             // the trace file (absolute), "" for none
  bool keep_timeline = false;   // for an HTML report
  uint64_t origin_ns = 0;       // CLOCK_MONOTONIC of ts 0
  uint64_t origin_unix_ns = 0;  // the same instant in wall-clock time
  std::string host;
  int64_t pid = 0;
  std::optional<int64_t> rank;
  uint64_t min_rate_ns = 1'000'000;
  uint64_t sample_interval_ns = 0;  // background snapshots; 0: none
  size_t thread_buffer_calls = 4096;
  size_t snapshot_buffer = 1024;
  size_t max_queued_buffers = 64;
  size_t timeline_calls = 50'000;
  size_t timeline_rates = 20'000;
};

class TraceCollector final : public devices::SnapshotObserver {
 public:
  // Opens the file (ReportFileStream) and starts the writer thread.
  static absl::StatusOr<std::unique_ptr<TraceCollector>> Open(
      TraceOptions options, TraceLayout layout);
  ~TraceCollector() override;
  TraceCollector(const TraceCollector&) = delete;
  TraceCollector& operator=(const TraceCollector&) = delete;

  // A region path's name and full path, by the recorder's path id (the
  // writer asks once per path).  Set before any call is recorded.
  void SetPathNames(
      std::function<std::pair<std::string, std::string>(int path)> names);

  // The calling thread's buffer (the recorder keeps it with the thread's
  // state).  The slow path: takes a lock, allocates, reads the thread's id
  // and name.
  struct ThreadLog;
  ThreadLog* AttachThread();
  // The thread that owned `log` exits: what it recorded goes to the writer;
  // the next AttachThread may reuse it.
  void DetachThread(ThreadLog* log);
  // A region call that ended; `counts`: its read-plan deltas (num values)
  // when the call read the counters at both ends, else nullptr.
  void RecordCall(ThreadLog* log, int path, uint64_t begin_ns, uint64_t end_ns,
                  bool marker, bool open, const uint64_t* counts);

  // From SharedSnapshots: every snapshot taken.
  void OnSnapshot(const devices::Snapshot& snapshot) override;

  // Background snapshots every options.sample_interval_ns through
  // `snapshots` (the recorder's), until StopSampling.
  void StartSampling(devices::SharedSnapshots* snapshots);
  void StopSampling();

  // Once no thread records any more (the recorder deactivated and quiet):
  // writes everything, the metadata and the end of the file, and makes the
  // file whole.  Safe to call twice (the second returns the first's status).
  absl::Status Finish();

  // The timeline kept for the HTML report (after Finish), its calls'
  // paths mapped to regions by `region_of(path)` (-1: left out).
  report::Timeline TakeTimeline(const std::function<int(int path)>& region_of);

  // What could not be written or kept, as report lines ("" when nothing).
  std::vector<std::string> Notes() const;
  uint64_t snapshots_recorded() const;
  size_t num_values() const { return layout_.value_event.size(); }

 private:
  struct CallRecord;
  struct Buffer;
  TraceCollector(TraceOptions options, TraceLayout layout);
  void Hand(std::unique_ptr<Buffer> buffer);  // to the writer
  std::unique_ptr<Buffer> FreshBuffer();
  void WriterLoop();
  void SamplerLoop(devices::SharedSnapshots* snapshots);
  // Formats and writes `buffer` (holding write_mu_).
  void Consume(Buffer& buffer);
  void WriteCalls(Buffer& buffer, std::string& out);
  void WriteRates(Buffer& buffer, std::string& out);
  void Emit(std::string& out, bool force);
  // Microseconds since the origin, exact to the nanosecond ("12.345").
  void AppendMicros(uint64_t ns, std::string& out) const;

  const TraceOptions options_;
  const TraceLayout layout_;
  std::function<std::pair<std::string, std::string>(int)> path_names_;
  // JSON strings, escaped once: the events' names as args keys, the
  // counter tracks' names (events, then metrics) and their args keys.
  std::vector<std::string> event_keys_;
  std::vector<std::string> counter_names_;
  std::vector<std::string> counter_keys_;

  // Buffers waiting for the writer, and recycled ones.
  std::mutex queue_mu_;
  std::condition_variable queue_cv_;
  std::deque<std::unique_ptr<Buffer>> queue_;  // guarded by queue_mu_
  std::vector<std::unique_ptr<Buffer>> free_;  // guarded by queue_mu_
  bool stopping_ = false;                      // guarded by queue_mu_
  std::thread writer_;

  std::mutex logs_mu_;
  std::vector<std::unique_ptr<ThreadLog>> logs_;  // guarded by logs_mu_
  std::vector<ThreadLog*> free_logs_;             // guarded by logs_mu_
  std::vector<std::pair<int64_t, std::string>> thread_names_;  // guarded

  std::mutex snapshot_mu_;
  std::unique_ptr<Buffer> snapshots_;  // guarded by snapshot_mu_

  std::mutex sampler_mu_;
  std::condition_variable sampler_cv_;
  bool sampler_stop_ = false;  // guarded by sampler_mu_
  std::thread sampler_;

  // The writer's state (write_mu_).
  mutable std::mutex write_mu_;
  std::unique_ptr<report::ReportFileStream> stream_;
  absl::Status write_status_;
  std::string pending_;
  std::vector<std::string> names_by_path_;
  std::vector<std::string> paths_by_path_;
  std::vector<bool> path_known_;
  std::vector<uint64_t> base_values_;  // the last rate point's snapshot
  uint64_t base_ns_ = 0;
  bool have_base_ = false;
  uint64_t next_async_id_ = 1;
  report::Timeline timeline_;
  std::vector<int> timeline_paths_;  // per timeline_.calls entry
  std::vector<int64_t> timeline_tids_;
  uint64_t written_calls_ = 0;  // formatted for the file (lost if it fails)
  uint64_t dropped_calls_ = 0;
  uint64_t timeline_dropped_calls_ = 0;
  uint64_t timeline_dropped_rates_ = 0;
  std::atomic<uint64_t> dropped_snapshots_{0};
  uint64_t rate_points_ = 0;
  bool finished_ = false;
  absl::Status finish_status_;

  std::atomic<uint64_t> snapshot_count_{0};
};

}  // namespace uncore::trace

#endif  // UNCORE_SDK_TRACE_TRACE_COLLECTOR_H_
