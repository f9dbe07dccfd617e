// A model test of the recorder's attribution rule (docs/concurrency.md,
// "Teams of threads"; docs/testing.md, "The model test of the recorder").
//
// A deterministic scheduler drives a few real threads, one at a time,
// through random region boundaries: nested begins and ends (names from a
// small set, so paths collide across threads), ends of enclosing regions,
// LIKWID-style markers, a team's workers opening their first region under
// another thread's open region, and threads that exit with regions open.
// Between two steps (never inside a boundary) a logical clock advances by
// a random amount, and the device's counters are a known function of it:
// value i of a snapshot is the time times kRates[i], its timestamp_ns the
// time.  A plain model of the rule measures, over the same step times, the
// set of times each path was open (any thread inside it) and open with no
// child path open; every count the recorder reports must equal the rate
// times those measures, exactly, for every path of every seed.
//
// UNCORE_MODEL_SEEDS=N runs N seeds (2,000 by default, 200 under a
// sanitizer); UNCORE_MODEL_FIRST_SEED=S starts at seed S (to rerun one
// that failed).  Built twice: regions_model_test (the fast path where it
// applies) and regions_model_general_test (every boundary on the general
// path, regions/general_boundaries.cc).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <semaphore>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "sdk/devices/device.h"
#include "sdk/regions/recorder.h"
#include "tests/testing/fake_device.h"
#include "tests/testing/sanitized.h"
#include "uncore/region.h"

namespace uncore::regions {
namespace {

// Counts per unit of logical time of the device's read-plan entries.
constexpr uint64_t kRates[] = {1, 7, 1000};
constexpr size_t kValues = sizeof(kRates) / sizeof(kRates[0]);
constexpr int kMaxThreads = 4;
constexpr int kMaxDepth = 4;    // of a thread's stack of regions
constexpr int kMaxMarkers = 3;  // running at once on a thread
const char* const kNames[] = {"a", "b", "c"};
constexpr int kNumNames = 3;

// The logical clock: written by the scheduler between steps only.
std::atomic<uint64_t> g_time{0};

class ClockDevice : public test_devices::FakeDevice {
 public:
  ClockDevice() : FakeDevice("logical-clock") {}
  absl::Status TakeSnapshot(devices::Snapshot* out) override {
    const uint64_t t = g_time.load(std::memory_order_acquire);
    for (size_t i = 0; i < plan_.size(); ++i) out->values[i] = t * kRates[i];
    out->timestamp_ns = t;
    out->valid = true;
    return absl::OkStatus();
  }
};

// Draws with no library-defined distribution: the schedule is a function
// of the seed on every standard library.
class Rng {
 public:
  explicit Rng(uint64_t seed) : g_(seed) {}
  uint64_t Below(uint64_t n) { return g_() % n; }
  bool Chance(int percent) {
    return Below(100) < static_cast<uint64_t>(percent);
  }

 private:
  std::mt19937_64 g_;
};

// One real thread that runs a boundary only when the scheduler hands it
// the turn (Do), and waits for the next turn otherwise.
class Worker {
 public:
  enum class Op { kBegin, kBeginUnder, kEnd, kBeginMarker, kEndMarker, kExit };
  struct Command {
    Op op = Op::kBegin;
    int name_id = -1;
    internal::RegionParent under;
  };

  explicit Worker(Recorder* recorder)
      : thread_([this, recorder] { Run(recorder); }) {}
  ~Worker() {
    if (thread_.joinable()) Exit();
  }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Runs `c` on the thread and returns once it is done.
  void Do(const Command& c) {
    command_ = c;
    go_.release();
    done_.acquire();
  }
  // The thread returns; its exit (the recorder retires its state, closing
  // what it left open) is over when this returns.
  void Exit() {
    command_ = {.op = Op::kExit, .name_id = -1, .under = {}};
    go_.release();
    thread_.join();
  }
  // Read between turns: the thread's innermost open region, and the
  // result of its last marker call.
  const internal::RegionParent& parent() const { return parent_; }
  int marker_result() const { return marker_result_; }

 private:
  void Run(Recorder* recorder) {
    for (;;) {
      go_.acquire();
      const Command c = command_;
      switch (c.op) {
        case Op::kExit:
          return;
        case Op::kBegin:
          internal::BeginRegion(recorder, c.name_id);
          break;
        case Op::kBeginUnder:
          internal::BeginRegionUnder(recorder, c.under, c.name_id);
          break;
        case Op::kEnd:
          internal::EndRegion(recorder, c.name_id, false);
          break;
        case Op::kBeginMarker:
          marker_result_ = internal::BeginMarker(recorder, c.name_id);
          break;
        case Op::kEndMarker:
          marker_result_ = internal::EndMarker(recorder, c.name_id);
          break;
      }
      parent_ = internal::CurrentRegionParent(recorder);
      done_.release();
    }
  }

  std::binary_semaphore go_{0};
  std::binary_semaphore done_{0};
  Command command_;
  internal::RegionParent parent_;
  int marker_result_ = 0;
  std::thread thread_;  // last: starts once the rest is made
};

// The rule, plainly: for each path, the logical time during which at least
// one thread was inside it (inclusive) and during which, besides, no child
// path of it had a thread inside (exclusive); counts are rate x time.
struct ModelPath {
  std::string name;
  std::string parent;  // "" at the top level
  int depth = 0;
  int inside = 0;  // threads' entries open now (a thread may hold it twice)
  uint64_t calls = 0;
  uint64_t open_calls = 0;
  uint64_t intervals = 0;  // times it went from no thread inside to one
  std::set<int> threads;   // serial numbers of the threads that ended calls
  uint64_t inclusive_time = 0;
  uint64_t exclusive_time = 0;
  uint64_t overlap_time = 0;  // exclusive while another path was exclusive
  bool overlap_may_follow = false;  // Model::RealOverlapMayFollow
};

struct Model {
  std::map<std::string, ModelPath> paths;
  std::vector<std::string> order;  // of first entry
  uint64_t any_open = 0;
  uint64_t overcount = 0;
  bool overcount_may_follow = false;

  void Enter(const std::string& path, const std::string& name,
             const std::string& parent) {
    auto [it, added] = paths.try_emplace(path);
    ModelPath& p = it->second;
    if (added) {
      order.push_back(path);
      p.name = name;
      p.parent = parent;
      p.depth = static_cast<int>(std::count(path.begin(), path.end(), '/'));
    }
    if (p.inside++ == 0) ++p.intervals;
  }
  void Leave(const std::string& path, int thread, bool open) {
    ModelPath& p = paths.at(path);
    --p.inside;
    ++p.calls;
    if (open) ++p.open_calls;
    p.threads.insert(thread);
  }
  // Boundaries at one logical time follow each other in real time in an
  // order the model does not know (a thread's exit): the paths open now may
  // share real time there (RegionTotals::overlap_ns, RegionsTime).
  void RealOverlapMayFollow() {
    for (auto& [path, p] : paths) {
      if (p.inside > 0) p.overlap_may_follow = true;
    }
    overcount_may_follow = true;
  }
  // `d` units of logical time pass with the paths as they are.
  void Advance(uint64_t d) {
    std::set<std::string> has_open_child;
    for (const auto& [path, p] : paths) {
      if (p.inside > 0 && !p.parent.empty()) has_open_child.insert(p.parent);
    }
    std::vector<ModelPath*> exclusive;
    for (auto& [path, p] : paths) {
      if (p.inside == 0) continue;
      p.inclusive_time += d;
      if (!has_open_child.contains(path)) exclusive.push_back(&p);
    }
    for (ModelPath* p : exclusive) {
      p->exclusive_time += d;
      if (exclusive.size() >= 2) p->overlap_time += d;
    }
    if (!exclusive.empty()) {
      any_open += d;
      overcount += d * (exclusive.size() - 1);
    }
  }
};

// One logical thread: the model of its stack and markers, and the real
// thread (replaced by a new one when it exits).
struct LogicalThread {
  int serial = 0;
  std::unique_ptr<Worker> worker;
  std::vector<std::string> stack;  // paths, outermost first
  std::vector<int> stack_names;
  std::vector<int> markers;  // name indexes running
};

struct SeedResult {
  std::vector<std::string> mismatches;
  std::vector<std::string> log;
  uint64_t steps = 0;
};

class ModelRun {
 public:
  ModelRun(uint64_t seed, ClockDevice* device)
      : rng_(seed * 0x9E3779B97F4A7C15ull + 1), device_(device) {
    for (int i = 0; i < kNumNames; ++i) {
      name_ids_[i] = InternRegionName(kNames[i]).value;
    }
  }

  SeedResult Run() {
    SeedResult r;
    Recorder rec(device_);
    recorder_ = &rec;
    Activate(&rec);
    g_time.store(1 + rng_.Below(1 << 20), std::memory_order_release);
    const int n = 1 + static_cast<int>(rng_.Below(kMaxThreads));
    threads_.resize(n);
    for (LogicalThread& t : threads_) Spawn(t);
    const uint64_t steps = 5 + rng_.Below(60);
    for (uint64_t s = 0; s < steps; ++s) {
      Tick();
      RandomStep(static_cast<int>(rng_.Below(n)), /*draining=*/false);
    }
    // Drain: close what is open, by ends or by thread exits.
    for (;;) {
      std::vector<int> busy;
      for (int k = 0; k < n; ++k) {
        if (!threads_[k].stack.empty() || !threads_[k].markers.empty()) {
          busy.push_back(k);
        }
      }
      if (busy.empty()) break;
      Tick();
      RandomStep(busy[rng_.Below(busy.size())], /*draining=*/true);
    }
    Tick();
    for (LogicalThread& t : threads_) t.worker->Exit();
    const Quiescence q = Deactivate(&rec, std::chrono::seconds(10));
    r.mismatches = std::move(mismatches_);
    if (q != Quiescence::kQuiet) {
      r.mismatches.push_back("Deactivate: not quiet");
    }
    Compare(rec, r);
    r.log = std::move(log_);
    r.steps = steps;
    return r;
  }

 private:
  void Spawn(LogicalThread& t) {
    t.serial = next_serial_++;
    t.worker = std::make_unique<Worker>(recorder_);
    t.stack.clear();
    t.stack_names.clear();
    t.markers.clear();
  }

  // Logical time passes between two steps, with the state the last step
  // left: the model first, then the device's clock.
  void Tick() {
    const uint64_t d =
        1 + (rng_.Chance(10) ? rng_.Below(100000) : rng_.Below(100));
    model_.Advance(d);
    g_time.fetch_add(d, std::memory_order_acq_rel);
  }

  std::string Now() const {
    return absl::StrCat("t=", g_time.load(std::memory_order_acquire));
  }

  static std::string Join(const std::string& parent, const char* name) {
    return parent.empty() ? std::string(name) : absl::StrCat(parent, "/", name);
  }

  void RandomStep(int k, bool draining) {
    LogicalThread& t = threads_[k];
    const int depth = static_cast<int>(t.stack.size());
    std::vector<int> under_candidates;
    for (int j = 0; j < static_cast<int>(threads_.size()); ++j) {
      if (j != k && !threads_[j].stack.empty()) under_candidates.push_back(j);
    }
    enum Action { kBegin, kUnder, kEnd, kEndOuter, kMarkOn, kMarkOff, kExit };
    std::vector<Action> choices;
    auto add = [&](Action a, int weight) {
      for (int i = 0; i < weight; ++i) choices.push_back(a);
    };
    if (!draining && depth < kMaxDepth) add(kBegin, 4);
    if (!draining && depth == 0 && !under_candidates.empty()) add(kUnder, 3);
    if (depth > 0) add(kEnd, 4);
    if (depth > 1) add(kEndOuter, 1);
    if (!draining && static_cast<int>(t.markers.size()) < kMaxMarkers) {
      add(kMarkOn, 2);
    }
    if (!t.markers.empty()) add(kMarkOff, 2);
    if (depth > 0 || !t.markers.empty()) add(kExit, draining ? 2 : 1);
    if (choices.empty()) return;  // nothing to do: time passes
    const Action action = choices[rng_.Below(choices.size())];
    const int name = static_cast<int>(rng_.Below(kNumNames));
    const std::string who =
        absl::StrCat(Now(), " thread ", k, " (#", t.serial, ")");
    switch (action) {
      case kBegin:
      case kUnder: {
        std::string parent = depth > 0 ? t.stack.back() : "";
        Worker::Command c{
            .op = Worker::Op::kBegin, .name_id = name_ids_[name], .under = {}};
        std::string how;
        if (action == kUnder) {
          const int j = under_candidates[rng_.Below(under_candidates.size())];
          parent = threads_[j].stack.back();
          c.op = Worker::Op::kBeginUnder;
          c.under = threads_[j].worker->parent();
          how = absl::StrCat(" under thread ", j, "'s ", parent);
        }
        const std::string path = Join(parent, kNames[name]);
        log_.push_back(
            absl::StrCat(who, " begin ", kNames[name], how, " -> ", path));
        t.worker->Do(c);
        model_.Enter(path, kNames[name], parent);
        t.stack.push_back(path);
        t.stack_names.push_back(name);
        break;
      }
      case kEnd:
      case kEndOuter: {
        // kEndOuter names an enclosing region, which closes the regions
        // inside it: the recorder closes from the innermost level of that
        // name.
        const int named = action == kEnd
                              ? depth - 1
                              : static_cast<int>(rng_.Below(depth - 1));
        const int end_name = t.stack_names[named];
        int level = depth - 1;
        while (t.stack_names[level] != end_name) --level;
        log_.push_back(absl::StrCat(
            who, " end ", kNames[end_name], " -> closes ",
            absl::StrJoin(t.stack.begin() + level, t.stack.end(), ", ")));
        t.worker->Do({.op = Worker::Op::kEnd,
                      .name_id = name_ids_[end_name],
                      .under = {}});
        CloseStack(t, level, /*open=*/false);
        break;
      }
      case kMarkOn:
      case kMarkOff: {
        int marker = name;
        if (action == kMarkOff) {
          marker = t.markers[rng_.Below(t.markers.size())];
        } else {
          while (std::find(t.markers.begin(), t.markers.end(), marker) !=
                 t.markers.end()) {
            marker = (marker + 1) % kNumNames;
          }
        }
        const bool on = action == kMarkOn;
        log_.push_back(absl::StrCat(who, on ? " start" : " stop", " marker ",
                                    kNames[marker]));
        t.worker->Do(
            {.op = on ? Worker::Op::kBeginMarker : Worker::Op::kEndMarker,
             .name_id = name_ids_[marker],
             .under = {}});
        if (t.worker->marker_result() != 0) {
          mismatches_.push_back(absl::StrCat(log_.back(), ": returned ",
                                             t.worker->marker_result()));
        }
        if (on) {
          model_.Enter(kNames[marker], kNames[marker], "");
          t.markers.push_back(marker);
        } else {
          model_.Leave(kNames[marker], t.serial, /*open=*/false);
          t.markers.erase(
              std::find(t.markers.begin(), t.markers.end(), marker));
        }
        break;
      }
      case kExit: {
        // The thread exits with regions open: they are closed at its exit
        // (open calls), all at this step's time.
        log_.push_back(absl::StrCat(
            who, " exits with ", absl::StrJoin(t.stack, ", "), " and markers ",
            absl::StrJoin(
                t.markers, ", ",
                [](std::string* out, int m) { out->append(kNames[m]); }),
            " open"));
        // Its exit closes the stack with one boundary and each marker with
        // one of its own, in an order of the recorder's: the same logical
        // time, but the recorder's real clock moves between them, so
        // exclusive stretches may share a little real time there that the
        // model cannot place.
        if ((t.stack.empty() ? 0 : 1) + t.markers.size() >= 2) {
          model_.RealOverlapMayFollow();
        }
        t.worker->Exit();
        CloseStack(t, 0, /*open=*/true);
        for (int m : t.markers)
          model_.Leave(kNames[m], t.serial, /*open=*/true);
        t.markers.clear();
        Spawn(t);
        break;
      }
    }
  }

  // The model's side of closing levels [level, depth) of `t`.
  void CloseStack(LogicalThread& t, int level, bool open) {
    while (static_cast<int>(t.stack.size()) > level) {
      model_.Leave(t.stack.back(), t.serial, open);
      t.stack.pop_back();
      t.stack_names.pop_back();
    }
  }

  void Compare(Recorder& rec, SeedResult& r);

  Rng rng_;
  ClockDevice* const device_;
  Recorder* recorder_ = nullptr;
  int name_ids_[kNumNames] = {};
  std::vector<LogicalThread> threads_;
  int next_serial_ = 0;
  Model model_;
  std::vector<std::string> log_;
  std::vector<std::string> mismatches_;
};

void ModelRun::Compare(Recorder& rec, SeedResult& r) {
  const std::vector<Recorder::RegionTotals> got = rec.Collect();
  const Recorder::RegionTime time = rec.RegionsTime();
  auto bad = [&r](const std::string& path, const char* what, const auto& want,
                  const auto& have) {
    r.mismatches.push_back(
        absl::StrCat(path, ": ", what, " expected ", want, ", got ", have));
  };
  std::vector<std::string> got_order;
  for (const Recorder::RegionTotals& t : got) got_order.push_back(t.path);
  if (got_order != model_.order) {
    bad("*", "paths in order of first entry", absl::StrJoin(model_.order, " "),
        absl::StrJoin(got_order, " "));
  }
  for (const Recorder::RegionTotals& t : got) {
    const auto it = model_.paths.find(t.path);
    if (it == model_.paths.end()) continue;  // reported above
    const ModelPath& m = it->second;
    if (t.name != m.name) bad(t.path, "name", m.name, t.name);
    if (t.depth != m.depth) bad(t.path, "depth", m.depth, t.depth);
    if (t.calls != m.calls) bad(t.path, "calls", m.calls, t.calls);
    if (t.threads != m.threads.size()) {
      bad(t.path, "threads", m.threads.size(), t.threads);
    }
    if (t.sampled_calls != m.calls) {
      bad(t.path, "sampled_calls", m.calls, t.sampled_calls);
    }
    if (t.open_calls != m.open_calls) {
      bad(t.path, "open_calls", m.open_calls, t.open_calls);
    }
    if (t.intervals != m.intervals) {
      bad(t.path, "intervals", m.intervals, t.intervals);
    }
    if (t.measured_intervals != m.intervals) {
      bad(t.path, "measured_intervals", m.intervals, t.measured_intervals);
    }
    if (t.counted_ns != m.inclusive_time) {
      bad(t.path, "counted_ns", m.inclusive_time, t.counted_ns);
    }
    if (t.estimated) bad(t.path, "estimated", false, true);
    if (t.inclusive.size() != kValues || t.exclusive.size() != kValues) {
      bad(t.path, "values", kValues, t.inclusive.size());
      continue;
    }
    for (size_t i = 0; i < kValues; ++i) {
      if (t.inclusive[i] != kRates[i] * m.inclusive_time) {
        bad(t.path, absl::StrCat("inclusive[", i, "]").c_str(),
            kRates[i] * m.inclusive_time, t.inclusive[i]);
      }
      if (t.exclusive[i] != kRates[i] * m.exclusive_time) {
        bad(t.path, absl::StrCat("exclusive[", i, "]").c_str(),
            kRates[i] * m.exclusive_time, t.exclusive[i]);
      }
    }
    // Real time (the recorder's clock): every step is later than the one
    // before, so a stretch of logical time is a stretch of real time and
    // none is none.
    if ((t.wall_ns > 0) != (m.inclusive_time > 0)) {
      bad(t.path, "wall_ns > 0", m.inclusive_time > 0, t.wall_ns);
    }
    if ((t.overlap_ns > 0) != (m.overlap_time > 0) &&
        !(t.overlap_ns > 0 && m.overlap_may_follow)) {
      bad(t.path, "overlap_ns > 0 (logical overlap)", m.overlap_time,
          t.overlap_ns);
    }
  }
  if ((time.any_open_ns > 0) != (model_.any_open > 0)) {
    bad("RegionsTime", "any_open_ns > 0 (logical)", model_.any_open,
        time.any_open_ns);
  }
  if ((time.overcount_ns > 0) != (model_.overcount > 0) &&
      !(time.overcount_ns > 0 && model_.overcount_may_follow)) {
    bad("RegionsTime", "overcount_ns > 0 (logical)", model_.overcount,
        time.overcount_ns);
  }
  // The model's own summing rule (docs/report-format.md): the exclusive
  // stretches sum to the time any path was open plus the overcount.
  uint64_t exclusive_sum = 0;
  for (const auto& [path, m] : model_.paths) exclusive_sum += m.exclusive_time;
  if (exclusive_sum != model_.any_open + model_.overcount) {
    bad("model", "exclusive sum", model_.any_open + model_.overcount,
        exclusive_sum);
  }
}

uint64_t EnvOr(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const unsigned long long n = std::strtoull(v, &end, 10);
  if (*end != '\0') {
    ADD_FAILURE() << name << "=" << v << " is not a number of seeds";
    return fallback;
  }
  return n;
}

TEST(RecorderModelTest, EveryPathFollowsTheRuleOverRandomSchedules) {
  ClockDevice device;
  devices::ProgramRequest request;
  request.events.resize(kValues);
  ASSERT_TRUE(device.Program(request).ok());
  EXPECT_EQ(Recorder(&device).fast_boundaries(),
            !GeneralBoundariesOnlyForTesting());
  const uint64_t seeds =
      EnvOr("UNCORE_MODEL_SEEDS", test_support::kSanitized ? 200 : 2000);
  const uint64_t first = EnvOr("UNCORE_MODEL_FIRST_SEED", 1);
  const char* const path_name =
      GeneralBoundariesOnlyForTesting() ? "general path" : "fast path";
  uint64_t steps = 0;
  std::vector<uint64_t> failed;
  for (uint64_t seed = first; seed < first + seeds; ++seed) {
    SeedResult r = ModelRun(seed, &device).Run();
    steps += r.steps;
    if (r.mismatches.empty()) continue;
    failed.push_back(seed);
    if (failed.size() <= 3) {
      ADD_FAILURE() << "seed " << seed << " (" << path_name
                    << ") disagrees with the model:\n  "
                    << absl::StrJoin(r.mismatches, "\n  ") << "\nsteps:\n  "
                    << absl::StrJoin(r.log, "\n  ");
    }
  }
  EXPECT_TRUE(failed.empty())
      << failed.size() << " of " << seeds << " seeds disagree (" << path_name
      << "); the first: "
      << absl::StrJoin(failed.begin(),
                       failed.begin() + std::min<size_t>(failed.size(), 20),
                       " ");
  std::printf("%llu seeds (%s), %llu random steps, %zu failed\n",
              static_cast<unsigned long long>(seeds), path_name,
              static_cast<unsigned long long>(steps), failed.size());
}

}  // namespace
}  // namespace uncore::regions
