#include "sdk/trace/trace_collector.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "fmt/format.h"
#include "sdk/common/json.h"
#include "sdk/common/quiet_thread.h"
#include "sdk/common/status_macros.h"

namespace uncore::trace {

namespace {

// Written once the pending text reaches this size.
constexpr size_t kWriteChunk = size_t{1} << 20;
constexpr uint32_t kNoCounts = UINT32_MAX;

int64_t CurrentTid() { return static_cast<int64_t>(syscall(SYS_gettid)); }

// The pseudo-process of a socket's counter tracks: distinct from every
// real pid (which are below 2^22) and from other processes' sockets.
int64_t SocketPid(int64_t pid, size_t socket_index) {
  return (int64_t{1} << 30) | ((pid & 0x3FFFFF) << 8) |
         static_cast<int64_t>(socket_index & 0xFF);
}

// `value` in decimal, appended (fmt's format_to through a string's
// back_inserter parses its format and copies through a buffer: most of a
// trace writer's time).
template <typename Integer>
void AppendDecimal(Integer value, std::string& out) {
  char digits[24];
  const std::to_chars_result r =
      std::to_chars(digits, digits + sizeof(digits), value);
  out.append(digits, r.ptr);
}

// `text` as a JSON string: quoted, escaped (sdk/common/json.h).
std::string JsonString(std::string_view text) {
  common::JsonWriter w;
  w.String(text);
  return w.Take();
}

}  // namespace

struct TraceCollector::CallRecord {
  uint64_t begin_ns;
  uint64_t end_ns;
  int32_t path;
  uint32_t counts_at;  // index of the call's counts, or kNoCounts
  bool marker;
  bool open;
};

// A thread's calls, or snapshots, on their way to the writer.
struct TraceCollector::Buffer {
  int64_t tid = 0;
  std::vector<CallRecord> calls;
  std::vector<uint64_t> counts;  // num_values per call that read counters
  std::vector<uint64_t> snapshot_ns;
  std::vector<uint64_t> snapshot_values;  // num_values per snapshot
  void Clear() {
    calls.clear();
    counts.clear();
    snapshot_ns.clear();
    snapshot_values.clear();
  }
  bool empty() const { return calls.empty() && snapshot_ns.empty(); }
};

struct TraceCollector::ThreadLog {
  int64_t tid = 0;
  std::unique_ptr<Buffer> buffer;
};

TraceCollector::TraceCollector(TraceOptions options, TraceLayout layout)
    : options_(std::move(options)), layout_(std::move(layout)) {
  // The names and keys every record repeats, escaped once.
  for (const EventInfo& event : layout_.events) {
    event_keys_.push_back(
        JsonString(event.canonical.empty() ? event.spec : event.canonical));
    counter_names_.push_back(event_keys_.back());
    counter_keys_.push_back(JsonString(
        event.unit.empty() ? "per second" : fmt::format("{}/s", event.unit)));
  }
  for (const TraceLayout::Metric& metric : layout_.metrics) {
    counter_names_.push_back(JsonString(metric.info.name));
    counter_keys_.push_back(
        JsonString(metric.info.unit.empty() ? "value" : metric.info.unit));
  }
}

absl::StatusOr<std::unique_ptr<TraceCollector>> TraceCollector::Open(
    TraceOptions options, TraceLayout layout) {
  options.thread_buffer_calls =
      std::max<size_t>(options.thread_buffer_calls, 1);
  options.snapshot_buffer = std::max<size_t>(options.snapshot_buffer, 1);
  options.max_queued_buffers = std::max<size_t>(options.max_queued_buffers, 1);
  std::unique_ptr<TraceCollector> c(
      new TraceCollector(std::move(options), std::move(layout)));
  if (!c->options_.path.empty()) {
    UNCORE_ASSIGN_OR_RETURN(
        c->stream_, report::ReportFileStream::Open(c->options_.path, "trace"));
    std::string head = "{\"traceEvents\":[\n";
    // The process and its sockets' pseudo-processes, named first.
    common::JsonWriter w;
    w.BeginObject();
    w.Key("ph");
    w.String("M");
    w.Key("pid");
    w.Int(c->options_.pid);
    w.Key("name");
    w.String("process_name");
    w.Key("args");
    w.BeginObject();
    w.Key("name");
    w.String(c->options_.rank.has_value()
                 ? fmt::format("rank {} ({}, pid {})", *c->options_.rank,
                               c->options_.host, c->options_.pid)
                 : fmt::format("{} pid {}", c->options_.host, c->options_.pid));
    w.EndObject();
    w.EndObject();
    head += w.Take();
    for (size_t s = 0; s < c->layout_.sockets.size(); ++s) {
      common::JsonWriter m;
      m.BeginObject();
      m.Key("ph");
      m.String("M");
      m.Key("pid");
      m.Int(SocketPid(c->options_.pid, s));
      m.Key("name");
      m.String("process_name");
      m.Key("args");
      m.BeginObject();
      m.Key("name");
      m.String(c->options_.rank.has_value()
                   ? fmt::format("socket {} uncore (rank {})",
                                 c->layout_.sockets[s], *c->options_.rank)
                   : fmt::format("socket {} uncore", c->layout_.sockets[s]));
      m.EndObject();
      m.EndObject();
      head += ",\n" + m.Take();
    }
    c->pending_.reserve(2 * kWriteChunk);
    c->pending_.assign(head);  // keeps the capacity reserved
  }
  c->snapshots_ = c->FreshBuffer();
  c->writer_ = common::StartQuietThread([p = c.get()] { p->WriterLoop(); });
  return c;
}

TraceCollector::~TraceCollector() {
  StopSampling();
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    stopping_ = true;
  }
  queue_cv_.notify_all();
  if (writer_.joinable()) writer_.join();
  std::lock_guard<std::mutex> lock(write_mu_);
  if (stream_ != nullptr) stream_->Abort();
}

void TraceCollector::SetPathNames(
    std::function<std::pair<std::string, std::string>(int)> names) {
  std::lock_guard<std::mutex> lock(write_mu_);
  path_names_ = std::move(names);
}

std::unique_ptr<TraceCollector::Buffer> TraceCollector::FreshBuffer() {
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    if (!free_.empty()) {
      std::unique_ptr<Buffer> b = std::move(free_.back());
      free_.pop_back();
      return b;
    }
  }
  auto b = std::make_unique<Buffer>();
  const size_t n = num_values();
  b->calls.reserve(options_.thread_buffer_calls);
  b->counts.reserve(options_.thread_buffer_calls * n);
  b->snapshot_ns.reserve(options_.snapshot_buffer);
  b->snapshot_values.reserve(options_.snapshot_buffer * n);
  return b;
}

TraceCollector::ThreadLog* TraceCollector::AttachThread() {
  const int64_t tid = CurrentTid();
  char name[64] = {};
  std::string thread_name;
  if (tid == options_.pid) {
    thread_name = "main";
  } else if (pthread_getname_np(pthread_self(), name, sizeof(name)) == 0 &&
             name[0] != '\0') {
    thread_name = fmt::format("{} ({})", name, tid);
  } else {
    thread_name = fmt::format("thread {}", tid);
  }
  std::unique_ptr<Buffer> buffer = FreshBuffer();
  buffer->tid = tid;
  std::lock_guard<std::mutex> lock(logs_mu_);
  thread_names_.emplace_back(tid, std::move(thread_name));
  ThreadLog* log = nullptr;
  if (!free_logs_.empty()) {
    log = free_logs_.back();
    free_logs_.pop_back();
  } else {
    logs_.push_back(std::make_unique<ThreadLog>());
    log = logs_.back().get();
  }
  log->tid = tid;
  log->buffer = std::move(buffer);
  return log;
}

void TraceCollector::DetachThread(ThreadLog* log) {
  std::unique_ptr<Buffer> buffer;
  {
    std::lock_guard<std::mutex> lock(logs_mu_);
    buffer = std::move(log->buffer);
    free_logs_.push_back(log);
  }
  if (buffer != nullptr && !buffer->empty()) Hand(std::move(buffer));
}

void TraceCollector::RecordCall(ThreadLog* log, int path, uint64_t begin_ns,
                                uint64_t end_ns, bool marker, bool open,
                                const uint64_t* counts) {
  Buffer& b = *log->buffer;
  uint32_t at = kNoCounts;
  const size_t n = num_values();
  if (counts != nullptr && n > 0) {
    at = static_cast<uint32_t>(b.counts.size() / n);
    b.counts.insert(b.counts.end(), counts, counts + n);
  }
  b.calls.push_back({begin_ns, end_ns, path, at, marker, open});
  if (b.calls.size() >= options_.thread_buffer_calls) {
    std::unique_ptr<Buffer> full = std::move(log->buffer);
    log->buffer = FreshBuffer();
    log->buffer->tid = log->tid;
    Hand(std::move(full));
  }
}

void TraceCollector::OnSnapshot(const devices::Snapshot& snapshot) {
  std::unique_ptr<Buffer> full;
  {
    std::lock_guard<std::mutex> lock(snapshot_mu_);
    if (snapshots_ == nullptr) return;  // finished
    Buffer& b = *snapshots_;
    if (snapshot.values.size() != num_values()) return;
    b.snapshot_ns.push_back(snapshot.timestamp_ns);
    b.snapshot_values.insert(b.snapshot_values.end(), snapshot.values.begin(),
                             snapshot.values.end());
    snapshot_count_.store(snapshot_count_.load(std::memory_order_relaxed) + 1,
                          std::memory_order_relaxed);
    if (b.snapshot_ns.size() < options_.snapshot_buffer) return;
    full = std::move(snapshots_);
    {
      // The writer keeps its buffers in order: handed under this lock.
      std::lock_guard<std::mutex> queue_lock(queue_mu_);
      if (queue_.size() >= 2 * options_.max_queued_buffers) {
        // The writer is hopelessly behind (a stalled disk): these rate
        // points are lost, and counted; a snapshot taker never waits for
        // the disk.
        dropped_snapshots_.fetch_add(full->snapshot_ns.size(),
                                     std::memory_order_relaxed);
        full->Clear();
        snapshots_ = std::move(full);
        return;
      }
      queue_.push_back(std::move(full));
    }
    queue_cv_.notify_one();
    snapshots_ = FreshBuffer();
  }
}

void TraceCollector::Hand(std::unique_ptr<Buffer> buffer) {
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    if (queue_.size() < options_.max_queued_buffers || stopping_) {
      queue_.push_back(std::move(buffer));
      queue_cv_.notify_one();
      return;
    }
  }
  // The writer is behind: write this one here (the thread waits for the
  // disk; memory stays bounded).
  {
    std::lock_guard<std::mutex> lock(write_mu_);
    Consume(*buffer);
  }
  buffer->Clear();
  std::lock_guard<std::mutex> lock(queue_mu_);
  free_.push_back(std::move(buffer));
}

void TraceCollector::WriterLoop() {
  for (;;) {
    std::unique_ptr<Buffer> buffer;
    {
      std::unique_lock<std::mutex> lock(queue_mu_);
      queue_cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and nothing left
      buffer = std::move(queue_.front());
      queue_.pop_front();
    }
    {
      std::lock_guard<std::mutex> lock(write_mu_);
      Consume(*buffer);
    }
    buffer->Clear();
    std::lock_guard<std::mutex> lock(queue_mu_);
    if (free_.size() < options_.max_queued_buffers) {
      free_.push_back(std::move(buffer));
    }
  }
}

void TraceCollector::StartSampling(devices::SharedSnapshots* snapshots) {
  if (options_.sample_interval_ns == 0 || snapshots == nullptr) return;
  sampler_ =
      common::StartQuietThread([this, snapshots] { SamplerLoop(snapshots); });
}

void TraceCollector::SamplerLoop(devices::SharedSnapshots* snapshots) {
  devices::Snapshot snapshot(num_values());
  const auto interval = std::chrono::nanoseconds(options_.sample_interval_ns);
  auto next = std::chrono::steady_clock::now() + interval;
  std::unique_lock<std::mutex> lock(sampler_mu_);
  for (;;) {
    if (sampler_cv_.wait_until(lock, next, [this] { return sampler_stop_; })) {
      return;
    }
    lock.unlock();
    (void)snapshots->Take(&snapshot);  // the observer records it
    lock.lock();
    next += interval;
    const auto now = std::chrono::steady_clock::now();
    if (next < now) next = now + interval;  // fell behind: no burst
  }
}

void TraceCollector::StopSampling() {
  {
    std::lock_guard<std::mutex> lock(sampler_mu_);
    sampler_stop_ = true;
  }
  sampler_cv_.notify_all();
  if (sampler_.joinable()) sampler_.join();
}

void TraceCollector::AppendMicros(uint64_t ns, std::string& out) const {
  // Microseconds since the origin, exact to the nanosecond: "12.345".
  const bool before = ns < options_.origin_ns;
  const uint64_t since =
      before ? options_.origin_ns - ns : ns - options_.origin_ns;
  if (before) out += '-';
  AppendDecimal(since / 1000, out);
  const uint64_t fraction = since % 1000;
  const char digits[4] = {'.', static_cast<char>('0' + fraction / 100),
                          static_cast<char>('0' + fraction / 10 % 10),
                          static_cast<char>('0' + fraction % 10)};
  out.append(digits, 4);
}
void TraceCollector::Emit(std::string& out, bool force) {
  if (out.empty()) return;
  if (stream_ != nullptr && write_status_.ok()) {
    pending_ += out;
    if (pending_.size() >= kWriteChunk || force) {
      write_status_ = stream_->Write(pending_);
      pending_.clear();
    }
  }
  out.clear();
}

void TraceCollector::Consume(Buffer& buffer) {
  // Formatted straight into the pending text (no copy of each piece).
  const bool writing = stream_ != nullptr && write_status_.ok();
  std::string discarded;
  std::string& out = writing ? pending_ : discarded;
  if (!buffer.calls.empty()) WriteCalls(buffer, out);
  if (!buffer.snapshot_ns.empty()) WriteRates(buffer, out);
  if (!writing) {
    if (!options_.path.empty()) dropped_calls_ += buffer.calls.size();
    return;
  }
  written_calls_ += buffer.calls.size();
  if (pending_.size() >= kWriteChunk) {
    write_status_ = stream_->Write(pending_);
    pending_.clear();
  }
}

void TraceCollector::WriteCalls(Buffer& buffer, std::string& out) {
  const size_t n = num_values();
  // The thread's index in the timeline.
  int thread_index = -1;
  if (options_.keep_timeline) {
    for (size_t i = 0; i < timeline_tids_.size(); ++i) {
      if (timeline_tids_[i] == buffer.tid) thread_index = static_cast<int>(i);
    }
    if (thread_index < 0) {
      std::string name = fmt::format("thread {}", buffer.tid);
      {
        std::lock_guard<std::mutex> lock(logs_mu_);
        for (const auto& [tid, thread_name] : thread_names_) {
          if (tid == buffer.tid) name = thread_name;
        }
      }
      thread_index = static_cast<int>(timeline_tids_.size());
      timeline_tids_.push_back(buffer.tid);
      timeline_.threads.push_back({buffer.tid, std::move(name)});
    }
  }
  std::vector<uint64_t> totals(layout_.events.size());
  for (const CallRecord& call : buffer.calls) {
    if (call.path >= static_cast<int>(path_known_.size())) {
      path_known_.resize(call.path + 1, false);
      names_by_path_.resize(call.path + 1);
      paths_by_path_.resize(call.path + 1);
    }
    if (call.path >= 0 && !path_known_[call.path]) {
      std::pair<std::string, std::string> names =
          path_names_ ? path_names_(call.path)
                      : std::make_pair(fmt::format("path {}", call.path),
                                       fmt::format("path {}", call.path));
      // Kept as JSON strings (quoted, escaped): written as they are.
      names_by_path_[call.path] = JsonString(names.first);
      paths_by_path_[call.path] = JsonString(names.second);
      path_known_[call.path] = true;
    }
    if (options_.keep_timeline) {
      if (timeline_.calls.size() < options_.timeline_calls) {
        timeline_.calls.push_back(
            {-1, thread_index,
             call.begin_ns - std::min(call.begin_ns, options_.origin_ns),
             call.end_ns - std::min(call.end_ns, options_.origin_ns)});
        timeline_paths_.push_back(call.path);
      } else {
        ++timeline_dropped_calls_;
      }
    }
    if (stream_ == nullptr) continue;
    // Formatted by hand from cached pieces: the writer must keep up with
    // millions of calls a second.
    const std::string& name = names_by_path_[call.path];
    const std::string& path = paths_by_path_[call.path];
    auto head = [&](const char* ph, uint64_t ts_ns) {
      out += ",\n{\"ph\":\"";
      out += ph;
      out += "\",\"pid\":";
      AppendDecimal(options_.pid, out);
      out += ",\"tid\":";
      AppendDecimal(buffer.tid, out);
      out += ",\"ts\":";
      AppendMicros(ts_ns, out);
      out += ",\"name\":";
      out += name;
    };
    auto args = [&] {
      out += ",\"args\":{\"path\":";
      out += path;
      if (call.open) out += ",\"open\":true";
      if (call.counts_at != kNoCounts) {
        std::fill(totals.begin(), totals.end(), 0);
        const uint64_t* c = &buffer.counts[size_t{call.counts_at} * n];
        for (size_t i = 0; i < n; ++i) totals[layout_.value_event[i]] += c[i];
        for (size_t e = 0; e < event_keys_.size(); ++e) {
          out += ',';
          out += event_keys_[e];
          out += ':';
          AppendDecimal(totals[e], out);
        }
      }
      out += '}';
    };
    if (!call.marker) {
      head("X", call.begin_ns);
      out += ",\"cat\":\"region\",\"dur\":";
      AppendMicros(options_.origin_ns + (call.end_ns - call.begin_ns), out);
      args();
      out += '}';
    } else {
      // Marker regions need not nest: an async pair of their own.
      const uint64_t id = next_async_id_++;
      head("b", call.begin_ns);
      fmt::format_to(std::back_inserter(out),
                     ",\"cat\":\"marker\",\"id\":\"0x{:x}\"", id);
      args();
      out += '}';
      head("e", call.end_ns);
      fmt::format_to(std::back_inserter(out),
                     ",\"cat\":\"marker\",\"id\":\"0x{:x}\"}}", id);
    }
  }
}

void TraceCollector::WriteRates(Buffer& buffer, std::string& out) {
  const size_t n = num_values();
  const size_t sockets = layout_.sockets.size();
  const size_t events = layout_.events.size();
  std::vector<std::vector<double>> deltas(sockets,
                                          std::vector<double>(events, 0.0));
  for (size_t k = 0; k < buffer.snapshot_ns.size(); ++k) {
    const uint64_t ts = buffer.snapshot_ns[k];
    const uint64_t* values = &buffer.snapshot_values[k * n];
    if (!have_base_) {
      base_values_.assign(values, values + n);
      base_ns_ = ts;
      have_base_ = true;
      continue;
    }
    if (ts <= base_ns_ || ts - base_ns_ < options_.min_rate_ns) continue;
    const double seconds = static_cast<double>(ts - base_ns_) * 1e-9;
    for (auto& row : deltas) std::fill(row.begin(), row.end(), 0.0);
    for (size_t i = 0; i < n; ++i) {
      const uint64_t d =
          values[i] >= base_values_[i] ? values[i] - base_values_[i] : 0;
      deltas[layout_.value_socket[i]][layout_.value_event[i]] +=
          static_cast<double>(d) * layout_.events[layout_.value_event[i]].scale;
    }
    report::TimelineRates rates;
    rates.begin_ns = base_ns_ - std::min(base_ns_, options_.origin_ns);
    rates.end_ns = ts - std::min(ts, options_.origin_ns);
    rates.event_rates.assign(sockets, std::vector<double>(events, 0.0));
    rates.metrics.assign(sockets,
                         std::vector<MetricValue>(layout_.metrics.size()));
    for (size_t s = 0; s < sockets; ++s) {
      for (size_t e = 0; e < events; ++e) {
        rates.event_rates[s][e] = deltas[s][e] / seconds;
      }
      for (size_t m = 0; m < layout_.metrics.size(); ++m) {
        const double v = layout_.metrics[m].evaluate(deltas[s], seconds);
        rates.metrics[s][m] = {v, std::isfinite(v)};
      }
    }
    ++rate_points_;
    if (stream_ != nullptr) {
      std::string ts_us;
      AppendMicros(base_ns_, ts_us);
      // name and key: JSON strings (counter_names_, counter_keys_).
      auto counter = [&](size_t s, const std::string& name,
                         const std::string& key, double value) {
        fmt::format_to(std::back_inserter(out),
                       ",\n{{\"ph\":\"C\",\"pid\":{},\"ts\":{},\"name\":{},"
                       "\"args\":{{{}:{}}}}}",
                       SocketPid(options_.pid, s), ts_us, name, key, value);
      };
      for (size_t s = 0; s < sockets; ++s) {
        for (size_t e = 0; e < events; ++e) {
          counter(s, event_keys_[e], counter_keys_[e], rates.event_rates[s][e]);
        }
        for (size_t m = 0; m < layout_.metrics.size(); ++m) {
          if (!rates.metrics[s][m].valid) continue;  // C args are numbers
          counter(s, counter_names_[events + m], counter_keys_[events + m],
                  rates.metrics[s][m].value);
        }
      }
    }
    if (options_.keep_timeline) {
      if (timeline_.rates.size() < options_.timeline_rates) {
        timeline_.rates.push_back(std::move(rates));
      } else {
        ++timeline_dropped_rates_;
      }
    }
    base_values_.assign(values, values + n);
    base_ns_ = ts;
  }
}

absl::Status TraceCollector::Finish() {
  {
    std::lock_guard<std::mutex> lock(write_mu_);
    if (finished_) return finish_status_;
  }
  StopSampling();
  // Every thread's buffer and the last snapshots, then the writer drains.
  std::vector<std::unique_ptr<Buffer>> rest;
  {
    std::lock_guard<std::mutex> lock(logs_mu_);
    for (const std::unique_ptr<ThreadLog>& log : logs_) {
      if (log->buffer != nullptr && !log->buffer->empty()) {
        rest.push_back(std::move(log->buffer));
      }
    }
  }
  {
    std::lock_guard<std::mutex> lock(snapshot_mu_);
    if (snapshots_ != nullptr && !snapshots_->empty()) {
      rest.push_back(std::move(snapshots_));
    }
    snapshots_.reset();
  }
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    for (std::unique_ptr<Buffer>& b : rest) queue_.push_back(std::move(b));
    stopping_ = true;
  }
  queue_cv_.notify_all();
  if (writer_.joinable()) writer_.join();

  std::lock_guard<std::mutex> lock(write_mu_);
  finished_ = true;
  if (stream_ == nullptr) return finish_status_;
  std::string out;
  {
    std::lock_guard<std::mutex> names_lock(logs_mu_);
    absl::flat_hash_map<int64_t, bool> named;
    for (const auto& [tid, name] : thread_names_) {
      if (named.contains(tid)) continue;
      named[tid] = true;
      common::JsonWriter w;
      w.BeginObject();
      w.Key("ph");
      w.String("M");
      w.Key("pid");
      w.Int(options_.pid);
      w.Key("tid");
      w.Int(tid);
      w.Key("name");
      w.String("thread_name");
      w.Key("args");
      w.BeginObject();
      w.Key("name");
      w.String(name);
      w.EndObject();
      w.EndObject();
      out += ",\n";
      out += w.Take();
    }
  }
  common::JsonWriter tail;
  tail.BeginObject();
  tail.Key("producer");
  tail.String("Uncore SDK");
  tail.Key("host");
  tail.String(options_.host);
  tail.Key("pid");
  tail.Int(options_.pid);
  if (options_.rank.has_value()) {
    tail.Key("rank");
    tail.Int(*options_.rank);
  }
  tail.Key("start_unix_ns");
  tail.Uint(options_.origin_unix_ns);
  // ts 0 on CLOCK_MONOTONIC: what aligns the ranks' traces (MPI).
  tail.Key("origin_monotonic_ns");
  tail.Uint(options_.origin_ns);
  tail.Key("calls");
  tail.Uint(written_calls_);
  tail.Key("rate_points");
  tail.Uint(rate_points_);
  tail.Key("dropped_rate_points");
  tail.Uint(dropped_snapshots_.load(std::memory_order_relaxed));
  tail.EndObject();
  out +=
      "\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":" + tail.Take() + "}\n";
  Emit(out, true);
  if (write_status_.ok() && !pending_.empty()) {
    write_status_ = stream_->Write(pending_);
    pending_.clear();
  }
  if (write_status_.ok()) {
    write_status_ = stream_->Commit();
  } else {
    stream_->Abort();
  }
  finish_status_ = write_status_;
  return finish_status_;
}

report::Timeline TraceCollector::TakeTimeline(
    const std::function<int(int path)>& region_of) {
  std::lock_guard<std::mutex> lock(write_mu_);
  report::Timeline out = std::move(timeline_);
  timeline_ = {};
  out.dropped_calls = timeline_dropped_calls_;
  out.dropped_rates = timeline_dropped_rates_;
  std::vector<report::TimelineCall> kept;
  kept.reserve(out.calls.size());
  for (size_t i = 0; i < out.calls.size(); ++i) {
    report::TimelineCall call = out.calls[i];
    call.region = region_of(timeline_paths_[i]);
    if (call.region >= 0) kept.push_back(call);
  }
  out.calls = std::move(kept);
  timeline_paths_.clear();
  return out;
}

std::vector<std::string> TraceCollector::Notes() const {
  std::vector<std::string> notes;
  std::lock_guard<std::mutex> lock(write_mu_);
  if (!options_.path.empty() && !finish_status_.ok()) {
    // Written whole or not at all: every call recorded for it is lost,
    // those formatted before the write failed too.
    const uint64_t lost = written_calls_ + dropped_calls_;
    notes.push_back(fmt::format(
        "trace: not written ({}); {} region call{} recorded for it {} lost",
        common::StatusMessage(finish_status_), lost, lost == 1 ? "" : "s",
        lost == 1 ? "is" : "are"));
  }
  if (const uint64_t dropped =
          dropped_snapshots_.load(std::memory_order_relaxed);
      dropped > 0) {
    notes.push_back(fmt::format(
        "trace: {} counter snapshots were left out of the rate tracks (the "
        "trace writer fell behind the disk)",
        dropped));
  }
  if (timeline_dropped_calls_ > 0 || timeline_dropped_rates_ > 0) {
    notes.push_back(fmt::format(
        "timeline: the HTML page shows the first {} region calls and {} rate "
        "points; {} calls and {} rate points later in the run are left out{}",
        options_.timeline_calls, options_.timeline_rates,
        timeline_dropped_calls_, timeline_dropped_rates_,
        options_.path.empty() ? " (UNCORE_TRACE writes them all)"
                              : " (the trace file has them all)"));
  }
  return notes;
}

uint64_t TraceCollector::snapshots_recorded() const {
  return snapshot_count_.load(std::memory_order_relaxed);
}

}  // namespace uncore::trace
