// The trace collector on its own (calls and snapshots fed by hand) and
// under a recorder with a simulated device: what the Chrome trace holds,
// that memory stays bounded while nothing is lost, and that a trace that
// cannot be written leaves no file.
#include "sdk/trace/trace_collector.h"

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "sdk/devices/device.h"
#include "sdk/regions/recorder.h"
#include "sdk/runtime/trace_hook.h"
#include "uncore/region.h"

namespace uncore::trace {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using Json = nlohmann::json;

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          (name + "-" + std::to_string(getpid()) + ".json"))
      .string();
}

Json ReadJson(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return Json::parse(text.str());
}

// Two sockets, one event counted on two boxes of each.
TraceLayout TwoSocketLayout() {
  TraceLayout layout;
  layout.sockets = {0, 1};
  layout.value_event = {0, 0, 0, 0};
  layout.value_socket = {0, 0, 1, 1};
  EventInfo event;
  event.spec = "imc/CAS_COUNT.RD";
  event.canonical = "imc/CAS_COUNT.RD";
  event.unit = "bytes";
  event.scale = 64;
  layout.events = {event};
  TraceLayout::Metric metric;
  metric.info = {"READ_BW", "imc/CAS_COUNT.RD * 64", "bytes/s", true};
  metric.evaluate = [](const std::vector<double>& counts, double seconds) {
    return counts[0] / seconds;
  };
  layout.metrics = {metric};
  return layout;
}

devices::Snapshot SnapshotAt(uint64_t ns, std::vector<uint64_t> values) {
  devices::Snapshot s;
  s.values = std::move(values);
  s.valid = true;
  s.timestamp_ns = ns;
  return s;
}

std::vector<Json> EventsOf(const Json& trace, const std::string& ph) {
  std::vector<Json> out;
  for (const Json& e : trace["traceEvents"]) {
    if (e["ph"] == ph) out.push_back(e);
  }
  return out;
}

TEST(TraceCollectorTest, SlicesCountersAndNames) {
  const std::string path = TempPath("trace-basic");
  TraceOptions options;
  options.path = path;
  options.origin_ns = 1'000'000'000;
  options.pid = 4242;
  options.host = "node7";
  options.rank = 3;
  options.keep_timeline = true;
  auto collector = TraceCollector::Open(options, TwoSocketLayout());
  ASSERT_TRUE(collector.ok()) << collector.status();
  TraceCollector& c = **collector;
  c.SetPathNames([](int path) {
    return path == 0
               ? std::make_pair(std::string("solve"), std::string("solve"))
               : std::make_pair(std::string("inner \"q\""),
                                std::string("solve/inner \"q\""));
  });
  TraceCollector::ThreadLog* log = c.AttachThread();
  // Snapshots 10 ms apart: socket 0 reads 1000 + 1000 lines, socket 1 500.
  c.OnSnapshot(SnapshotAt(1'000'000'000, {0, 0, 0, 0}));
  c.OnSnapshot(SnapshotAt(1'010'000'000, {1000, 1000, 500, 0}));
  // Shorter than min_rate_ns after the last point: merged into the next.
  c.OnSnapshot(SnapshotAt(1'010'100'000, {1000, 1000, 500, 0}));
  c.OnSnapshot(SnapshotAt(1'020'000'000, {1000, 1000, 500, 0}));
  const std::vector<uint64_t> counts = {7, 8, 9, 10};
  c.RecordCall(log, 1, 1'002'000'001, 1'004'000'000, false, false,
               counts.data());
  c.RecordCall(log, 0, 1'001'000'000, 1'009'000'000, false, false, nullptr);
  c.RecordCall(log, 0, 1'011'000'000, 1'012'000'000, true, true, nullptr);
  ASSERT_TRUE(c.Finish().ok());
  EXPECT_TRUE(c.Notes().empty());

  const Json trace = ReadJson(path);
  std::remove(path.c_str());
  const std::vector<Json> slices = EventsOf(trace, "X");
  ASSERT_EQ(slices.size(), 2u);
  EXPECT_EQ(slices[0]["name"], "inner \"q\"");
  EXPECT_EQ(slices[0]["args"]["path"], "solve/inner \"q\"");
  EXPECT_EQ(slices[0]["args"]["imc/CAS_COUNT.RD"], 34);
  EXPECT_EQ(slices[0]["ts"].get<double>(), 2000.001);  // us, to the ns
  EXPECT_EQ(slices[0]["dur"].get<double>(), 1999.999);
  EXPECT_EQ(slices[0]["pid"], 4242);
  EXPECT_FALSE(slices[1]["args"].contains("imc/CAS_COUNT.RD"));
  // The marker: an async pair with one id.
  const std::vector<Json> begins = EventsOf(trace, "b");
  const std::vector<Json> ends = EventsOf(trace, "e");
  ASSERT_EQ(begins.size(), 1u);
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_EQ(begins[0]["id"], ends[0]["id"]);
  EXPECT_EQ(begins[0]["args"]["open"], true);
  EXPECT_EQ(ends[0]["ts"].get<double>(), 12000.0);

  // Counter tracks: two rate points per socket (the 0.1 ms stretch merged).
  std::map<std::pair<int64_t, std::string>, std::vector<double>> tracks;
  for (const Json& e : EventsOf(trace, "C")) {
    for (auto& [key, value] : e["args"].items()) {
      ASSERT_TRUE(value.is_number()) << e;
      tracks[{e["pid"].get<int64_t>(),
              e["name"].get<std::string>() + " " + key}]
          .push_back(value.get<double>());
    }
  }
  ASSERT_EQ(tracks.size(), 4u);  // 2 sockets x (event, metric)
  std::vector<double> socket0;
  std::vector<double> socket1;
  for (const auto& [key, values] : tracks) {
    if (key.second == "imc/CAS_COUNT.RD bytes/s") {
      (socket0.empty() ? socket0 : socket1) = values;
    }
  }
  // 2000 lines x 64 bytes in 10 ms; then nothing.
  EXPECT_THAT(socket0, ::testing::ElementsAre(12'800'000.0, 0.0));
  EXPECT_THAT(socket1, ::testing::ElementsAre(3'200'000.0, 0.0));
  // Metadata: the process, two sockets and the thread.
  std::vector<std::string> names;
  for (const Json& m : EventsOf(trace, "M")) {
    EXPECT_TRUE(m["name"] == "process_name" || m["name"] == "thread_name");
    names.push_back(m["args"]["name"]);
  }
  EXPECT_THAT(names, ::testing::Contains("rank 3 (node7, pid 4242)"));
  EXPECT_THAT(names, ::testing::Contains("socket 1 uncore (rank 3)"));
  EXPECT_EQ(trace["otherData"]["calls"], 3);

  const report::Timeline timeline =
      c.TakeTimeline([](int path) { return path; });
  EXPECT_EQ(timeline.calls.size(), 3u);
  ASSERT_EQ(timeline.rates.size(), 2u);
  EXPECT_EQ(timeline.rates[0].begin_ns, 0u);
  EXPECT_EQ(timeline.rates[0].end_ns, 10'000'000u);
  EXPECT_DOUBLE_EQ(timeline.rates[0].metrics[1][0].value, 3'200'000.0);
  ASSERT_EQ(timeline.threads.size(), 1u);
}

TEST(TraceCollectorTest, SmallBuffersLoseNothingFromManyThreads) {
  const std::string path = TempPath("trace-many");
  TraceOptions options;
  options.path = path;
  options.pid = getpid();
  options.thread_buffer_calls = 8;
  options.max_queued_buffers = 2;  // threads often write their own
  options.keep_timeline = true;
  options.timeline_calls = 100;
  TraceLayout layout;
  auto collector = TraceCollector::Open(options, layout);
  ASSERT_TRUE(collector.ok());
  TraceCollector& c = **collector;
  c.SetPathNames(
      [](int) { return std::make_pair(std::string("r"), std::string("r")); });
  constexpr int kThreads = 8;
  constexpr int kCalls = 5000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&c] {
      TraceCollector::ThreadLog* log = c.AttachThread();
      for (int i = 0; i < kCalls; ++i) {
        c.RecordCall(log, 0, 10 + i * 2, 11 + i * 2, false, false, nullptr);
      }
      c.DetachThread(log);
    });
  }
  for (std::thread& t : threads) t.join();
  ASSERT_TRUE(c.Finish().ok());
  const Json trace = ReadJson(path);
  std::remove(path.c_str());
  EXPECT_EQ(EventsOf(trace, "X").size(), size_t{kThreads} * kCalls);
  EXPECT_EQ(trace["otherData"]["calls"], kThreads * kCalls);
  // The HTML timeline keeps its limit and says what it left out.
  EXPECT_THAT(c.Notes(), ::testing::ElementsAre(
                             HasSubstr("39900 calls and 0 rate points later")));
  EXPECT_EQ(c.TakeTimeline([](int) { return 0; }).calls.size(), 100u);
}

TEST(TraceCollectorTest, AWriteErrorLeavesNoFileAndSaysSo) {
  // /dev/full takes the bytes in place and fails every write.
  TraceOptions options;
  options.path = "/dev/full";
  options.pid = getpid();
  auto collector = TraceCollector::Open(options, TraceLayout{});
  ASSERT_TRUE(collector.ok());
  TraceCollector& c = **collector;
  TraceCollector::ThreadLog* log = c.AttachThread();
  c.RecordCall(log, 0, 1, 2, false, false, nullptr);
  const absl::Status s = c.Finish();
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("/dev/full"));
  EXPECT_THAT(c.Notes(),
              ::testing::ElementsAre(HasSubstr("trace: not written")));

  // A regular file that cannot be completed keeps its old content.
  const std::string kept = TempPath("trace-kept");
  { std::ofstream(kept) << "old"; }
  options.path = kept;
  auto second = TraceCollector::Open(options, TraceLayout{});
  ASSERT_TRUE(second.ok());
  (*second).reset();  // destroyed unfinished: the temporary file goes
  std::ifstream in(kept);
  std::string text;
  std::getline(in, text);
  EXPECT_EQ(text, "old");
  std::remove(kept.c_str());
  for (const auto& entry : std::filesystem::directory_iterator(
           std::filesystem::path(kept).parent_path())) {
    EXPECT_EQ(
        entry.path().filename().string().find(
            "." + std::filesystem::path(kept).filename().string() + ".tmp"),
        std::string::npos);
  }
}

// Issue 36, R10: UNCORE_TRACE=/dev/full said "0 region calls could not be
// written" (the calls formatted before the failed write counted as
// written) and "cannot write the report": the note names the trace and
// counts every call it lost.
TEST(TraceCollectorTest, AFailedTraceNamesItselfAndCountsEveryLostCall) {
  for (const uint64_t calls : {uint64_t{1}, uint64_t{40000}}) {
    TraceOptions options;
    options.path = "/dev/full";
    options.pid = getpid();
    options.thread_buffer_calls = 64;
    auto collector = TraceCollector::Open(options, TraceLayout{});
    ASSERT_TRUE(collector.ok());
    TraceCollector& c = **collector;
    c.SetPathNames(
        [](int) { return std::make_pair(std::string("r"), std::string("r")); });
    TraceCollector::ThreadLog* log = c.AttachThread();
    for (uint64_t i = 0; i < calls; ++i) {
      c.RecordCall(log, 0, 10 + i * 2, 11 + i * 2, false, false, nullptr);
    }
    c.DetachThread(log);
    const absl::Status s = c.Finish();
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(std::string(s.message()), HasSubstr("trace"));
    EXPECT_THAT(std::string(s.message()), Not(HasSubstr("report")));
    const std::vector<std::string> notes = c.Notes();
    ASSERT_EQ(notes.size(), 1u) << calls;
    EXPECT_THAT(notes[0], HasSubstr("trace: not written"));
    EXPECT_THAT(notes[0], Not(HasSubstr("report")));
    EXPECT_THAT(notes[0],
                HasSubstr(fmt::format(
                    "{} region call{} recorded for it {} lost", calls,
                    calls == 1 ? "" : "s", calls == 1 ? "is" : "are")))
        << notes[0];
  }
}

// A device whose counter advances 1000 per snapshot.
class CountingDevice : public devices::Device {
 public:
  CountingDevice() {
    devices::CounterPlacement p;
    p.event = 0;
    p.socket = 0;
    plan_.push_back(p);
  }
  std::string_view name() const override { return "counting"; }
  absl::Status Program(const devices::ProgramRequest&) override {
    return absl::OkStatus();
  }
  const std::vector<devices::CounterPlacement>& read_plan() const override {
    return plan_;
  }
  absl::Status TakeSnapshot(devices::Snapshot* out) override {
    out->values.assign(1, value_ += 1000);
    out->valid = true;
    out->timestamp_ns = ++now_ * 1'000'000;
    return absl::OkStatus();
  }
  absl::Status Release() override { return absl::OkStatus(); }
  uint64_t frozen_ns() const override { return 0; }

 private:
  std::vector<devices::CounterPlacement> plan_;
  uint64_t value_ = 0;
  uint64_t now_ = 0;
};

TEST(TraceCollectorTest, RecorderHandsItCallsWithTheirOwnCounts) {
  const std::string path = TempPath("trace-recorder");
  CountingDevice device;
  TraceOptions options;
  options.path = path;
  options.pid = getpid();
  TraceLayout layout;
  layout.sockets = {0};
  layout.value_event = {0};
  layout.value_socket = {0};
  EventInfo event;
  event.spec = "x";
  layout.events = {event};
  auto collector = TraceCollector::Open(options, layout);
  ASSERT_TRUE(collector.ok());
  {
    runtime::TraceHook hook(collector->get());
    regions::RecorderOptions recorder_options;
    recorder_options.hooks.push_back(&hook);
    regions::Recorder recorder(&device, recorder_options);
    regions::Activate(&recorder);
    {
      UNCORE_REGION("outer");
      { UNCORE_REGION("inner"); }
    }
    std::thread([] { UNCORE_REGION("worker"); }).join();
    regions::Deactivate(&recorder, std::chrono::seconds(5));
    ASSERT_TRUE((*collector)->Finish().ok());
  }
  const Json trace = ReadJson(path);
  std::remove(path.c_str());
  std::map<std::string, Json> by_path;
  for (const Json& x : EventsOf(trace, "X")) {
    by_path[x["args"]["path"].get<std::string>()] = x;
  }
  ASSERT_EQ(by_path.size(), 3u);
  // Each call opened and closed its path alone: its counts are its own
  // snapshots' difference (outer: 4 snapshots, 3 stretches of 1000).
  EXPECT_EQ(by_path["outer/inner"]["args"]["x"], 1000);
  EXPECT_EQ(by_path["outer"]["args"]["x"], 3000);
  EXPECT_EQ(by_path["worker"]["args"]["x"], 1000);
  EXPECT_NE(by_path["worker"]["tid"], by_path["outer"]["tid"]);
  // The inner slice lies inside the outer one.
  const double outer_begin = by_path["outer"]["ts"];
  const double outer_end = outer_begin + by_path["outer"]["dur"].get<double>();
  const double inner_begin = by_path["outer/inner"]["ts"];
  EXPECT_GE(inner_begin, outer_begin);
  EXPECT_LE(inner_begin + by_path["outer/inner"]["dur"].get<double>(),
            outer_end);
  // Every snapshot reached the collector: 6 taken.
  EXPECT_EQ((*collector)->snapshots_recorded(), 6u);
}

}  // namespace
}  // namespace uncore::trace
