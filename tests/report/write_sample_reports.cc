// Writes the sample reports the Python checks read (report_views_test.py):
// a hand-made run with nested regions, two sockets, two events, a
// bandwidth metric and two threads, whose names hold quotes, commas, '<',
// '&', UTF-8 and an invalid byte, and its timeline.
//
//   write_sample_reports DIR
//   -> DIR/sample.json, sample.csv, sample.hatchet.json, sample.html,
//      sample-no-timeline.html, sample-20000-calls.html,
//      sample-prototype-names.html (the regions named as members of
//      Object.prototype: constructor > __proto__ > toString, and valueOf),
//      sample-long-name.html (io named with 300 characters)
//
// Each goes through report::WriteReport, so its name picks the format.
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "sdk/report/report.h"
#include "sdk/report/timeline.h"

namespace uncore::report {
namespace {

constexpr uint64_t kMs = 1'000'000;

EventCounts Counts(uint64_t socket0, uint64_t socket1) {
  EventCounts c;
  c.total = socket0 + socket1;
  c.per_socket = {socket0, socket1};
  c.per_instance = {{0, "iMC0", socket0 / 2},
                    {0, "iMC1", socket0 - socket0 / 2},
                    {1, "iMC0", socket1}};
  return c;
}

RegionResult Region(std::string name, std::string path, int depth,
                    uint64_t calls, uint64_t threads, uint64_t wall_ns,
                    std::vector<EventCounts> inclusive,
                    std::vector<EventCounts> exclusive) {
  RegionResult r;
  r.name = std::move(name);
  r.path = std::move(path);
  r.depth = depth;
  r.calls = calls;
  r.threads = threads;
  r.wall_ns = wall_ns;
  r.thread_ns = wall_ns * threads;
  r.min_ns = wall_ns / calls / 2;
  r.max_ns = wall_ns / calls;
  r.overhead_ns = calls * 1'500;
  r.sampled_calls = calls;
  r.inclusive = std::move(inclusive);
  r.exclusive = std::move(exclusive);
  // MEM_BW: 64 bytes per CAS over the wall time.
  const double seconds = static_cast<double>(wall_ns) * 1e-9;
  r.metrics = {
      {static_cast<double>(r.inclusive[0].total) * 64 / seconds, true}};
  return r;
}

Results SampleResults() {
  Results results;
  RunInfo& run = results.run;
  run.backend = "sim";
  run.platform = "ivytown";
  run.simulated = true;
  run.host = "node <7> & \"co\"";
  run.cpu = "GenuineIntel family 6 model 0x3e";
  run.sockets = {0, 1};
  run.start_unix_ns = 1'700'000'000'000'000'000;
  run.duration_ns = 120 * kMs;
  run.reads_per_snapshot = 4;
  run.warnings = {"a warning with <markup> & \"quotes\""};
  results.events = {
      {"imc/cas_count.rd", "imc/CAS_COUNT.RD", "ctl=0x00400304", "", 1.0,
       false},
      {"power/energy-pkg", "power/energy-pkg", "config=0x2", "Joules",
       6.103515625e-05, false},
  };
  results.metrics = {
      {"MEM_BW_READS", "{imc/CAS_COUNT.RD} * 64 / seconds", "bytes/s", true}};
  // main > solve, "quoted" > café ☕ <&>; and io\xff at the top.
  const std::string solve = "solve, \"quoted\"";
  const std::string cafe = "caf\xC3\xA9 \xE2\x98\x95 <&>";
  results.regions = {
      Region("main", "main", 0, 1, 1, 100 * kMs,
             {Counts(6'000'000, 4'000'000), Counts(200'000, 150'000)},
             {Counts(1'000'000, 500'000), Counts(50'000, 40'000)}),
      Region(solve, "main/" + solve, 1, 4, 2, 60 * kMs,
             {Counts(4'000'000, 3'000'000), Counts(120'000, 90'000)},
             {Counts(2'500'000, 2'000'000), Counts(80'000, 60'000)}),
      Region(cafe, "main/" + solve + "/" + cafe, 2, 8, 2, 20 * kMs,
             {Counts(1'500'000, 1'000'000), Counts(40'000, 30'000)},
             {Counts(1'500'000, 1'000'000), Counts(40'000, 30'000)}),
      Region("io\xff", "io\xff", 0, 2, 1, 10 * kMs,
             {Counts(100'000, 0), Counts(5'000, 4'000)},
             {Counts(100'000, 0), Counts(5'000, 4'000)}),
  };
  return results;
}

Timeline SampleTimeline() {
  Timeline t;
  t.threads = {{1000, "main"}, {1001, "worker \"1\""}};
  auto call = [&](int region, int thread, uint64_t begin, uint64_t end) {
    t.calls.push_back({region, thread, begin * kMs / 2, end * kMs / 2});
  };
  // Half-milliseconds: main 0-200; solve twice on each thread, each with
  // two calls of café inside; io after main.
  for (int thread = 0; thread < 2; ++thread) {
    for (uint64_t start : {20, 110}) {
      call(2, thread, start + 5, start + 15);
      call(2, thread, start + 25, start + 35);
      call(1, thread, start, start + 60);
    }
  }
  call(0, 0, 0, 200);
  call(3, 0, 210, 230);
  for (uint64_t k = 0; k < 24; ++k) {
    TimelineRates r;
    r.begin_ns = k * 5 * kMs;
    r.end_ns = (k + 1) * 5 * kMs;
    const double busy = (k % 6 < 4) ? 1.0 : 0.2;
    r.event_rates = {{busy * 1.2e8, busy * 30.0}, {busy * 0.9e8, busy * 25.0}};
    r.metrics = {{{busy * 1.2e8 * 64, true}}, {{busy * 0.9e8 * 64, k != 7}}};
    t.rates.push_back(std::move(r));
  }
  return t;
}

// 20,000 calls on 8 threads over 2 s (the collector keeps about that many):
// the page must stay quick to draw.
Timeline BigTimeline(const Results& results) {
  Timeline t;
  for (int thread = 0; thread < 8; ++thread) {
    t.threads.push_back({2000 + thread, ""});
  }
  const int regions = static_cast<int>(results.regions.size());
  for (int k = 0; k < 20'000; ++k) {
    const uint64_t begin = static_cast<uint64_t>(k / 8) * 800'000;
    t.calls.push_back({k % regions, k % 8, begin, begin + 700'000});
  }
  for (uint64_t k = 0; k < 2'000; ++k) {
    TimelineRates r;
    r.begin_ns = k * kMs;
    r.end_ns = (k + 1) * kMs;
    const double v = static_cast<double>(k % 100);
    r.event_rates = {{v * 1e6, v}, {v * 2e6, v}};
    r.metrics = {{{v * 64e6, true}}, {{v * 128e6, true}}};
    t.rates.push_back(std::move(r));
  }
  return t;
}

// SampleResults with its regions named as members of Object.prototype
// (issue 36, R9): the page's script must not take them for its own keys.
Results PrototypeNameResults() {
  Results results = SampleResults();
  results.regions[0].name = "constructor";
  results.regions[0].path = "constructor";
  results.regions[1].name = "__proto__";
  results.regions[1].path = "constructor/__proto__";
  results.regions[2].name = "toString";
  results.regions[2].path = "constructor/__proto__/toString";
  results.regions[3].name = "valueOf";
  results.regions[3].path = "valueOf";
  return results;
}

// SampleResults with io named with 300 characters (issue 36): the page's
// name column wraps it rather than widening.
Results LongNameResults() {
  Results results = SampleResults();
  results.regions[3].name = "long_" + std::string(290, 'x') + "_name";
  results.regions[3].path = results.regions[3].name;
  return results;
}

int Write(const Results& results, const std::string& path,
          const Timeline* timeline) {
  const absl::Status status = WriteReport(results, path, stderr, timeline);
  if (status.ok()) return 0;
  std::fprintf(stderr, "write_sample_reports: %s\n",
               std::string(status.message()).c_str());
  return 1;
}

}  // namespace
}  // namespace uncore::report

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: write_sample_reports DIR\n");
    return 2;
  }
  using uncore::report::Write;
  const std::string dir = argv[1];
  const uncore::Results results = uncore::report::SampleResults();
  const uncore::report::Timeline timeline = uncore::report::SampleTimeline();
  int failures = 0;
  failures += Write(results, dir + "/sample.json", nullptr);
  failures += Write(results, dir + "/sample.csv", nullptr);
  failures += Write(results, dir + "/sample.hatchet.json", nullptr);
  failures += Write(results, dir + "/sample.html", &timeline);
  failures += Write(results, dir + "/sample-no-timeline.html", nullptr);
  const uncore::report::Timeline big = uncore::report::BigTimeline(results);
  failures += Write(results, dir + "/sample-20000-calls.html", &big);
  failures += Write(uncore::report::PrototypeNameResults(),
                    dir + "/sample-prototype-names.html", &timeline);
  failures += Write(uncore::report::LongNameResults(),
                    dir + "/sample-long-name.html", &timeline);
  return failures == 0 ? 0 : 1;
}
