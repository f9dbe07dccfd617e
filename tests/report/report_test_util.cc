#include "tests/report/report_test_util.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <utility>

#include "fmt/format.h"
#include "gtest/gtest.h"

namespace uncore::report {

// ---------------------------------------------------------------------------
// The results the tests format.

EventCounts Counts(uint64_t socket0, uint64_t socket1, bool estimated) {
  EventCounts c;
  c.total = socket0 + socket1;
  c.per_socket = {socket0, socket1};
  c.per_instance = {{0, "box0", socket0 - socket0 / 4},
                    {0, "box1", socket0 / 4},
                    {1, "box0", socket1}};
  c.estimated = estimated;
  return c;
}

RegionResult Region(std::string name, std::string path, int depth,
                    uint64_t calls, uint64_t wall_ns, uint64_t min_ns,
                    uint64_t max_ns) {
  RegionResult r;
  r.name = std::move(name);
  r.path = std::move(path);
  r.depth = depth;
  r.calls = calls;
  r.threads = 1;
  r.wall_ns = wall_ns;
  r.thread_ns = wall_ns;
  r.min_ns = min_ns;
  r.max_ns = max_ns;
  return r;
}

Results MakeResults(bool simulated) {
  Results results;
  RunInfo& run = results.run;
  run.backend = simulated ? "sim" : "direct";
  run.simulated = simulated;
  run.host = "node17";
  run.cpu = "GenuineIntel family 6 model 0x3e";
  run.sockets = {0, 1};
  run.start_unix_ns = 1'700'000'000'000'000'000;
  run.duration_ns = 2'500'000'000;
  run.frozen_ns = 12'345;
  run.platform = "ivytown";
  run.reads_per_snapshot = 6;
  run.errors = {"region \"io\" closed on another thread"};
  run.warnings = {
      "multiplexing: cbo/LLC_VICTIMS.M_STATE counted 50% of the "
      "time"};

  results.events = {
      {"imc/cas_count.rd", "imc/CAS_COUNT.RD", "ctl=0x00400304", "", 1.0,
       false},
      {"power/energy-pkg", "power/energy-pkg", "config=0x2", "Joules",
       6.103515625e-05, false},
      {"cbo/llc_victims.m_state", "cbo/LLC_VICTIMS.M_STATE", "ctl=0x00400137",
       "", 1.0, false},
      {"imc/CAS_COUNT.WR", "imc/CAS_COUNT.WR", "ctl=0x00400c04", "", 1.0, true},
  };
  results.metrics = {
      {"MEM_BW_READS", "{imc/CAS_COUNT.RD} * 64 / ELAPSED_SECONDS", "bytes/s"},
      {"PCT_WRITES", "100 * {imc/CAS_COUNT.WR} / {imc/CAS_COUNT.RD}", "%"},
  };

  auto add = [&](RegionResult r, std::vector<EventCounts> inclusive,
                 std::vector<EventCounts> exclusive,
                 std::vector<MetricValue> metrics) {
    // Every call measured, at a cost below the 1% that marks a region
    // read-latency dominated (about 1.5 us per call, 9 ns for the short
    // ones).
    r.sampled_calls = r.calls;
    r.overhead_ns = std::min(r.calls * 1'550, r.wall_ns / 128);
    r.inclusive = std::move(inclusive);
    r.exclusive = std::move(exclusive);
    r.metrics = std::move(metrics);
    results.regions.push_back(std::move(r));
  };
  add(Region("main", "main", 0, 1, 2'400'000'000, 2'400'000'000, 2'400'000'000),
      {Counts(30'000'000, 20'000'000), Counts(20'165, 19'000),
       Counts(1'200'000, 800'000), Counts(9'000'000, 6'000'000)},
      {Counts(10'000'000, 5'000'000), Counts(5'000, 4'000),
       Counts(200'000, 100'000), Counts(3'000'000, 2'000'000)},
      {{1'333'333'333.3, true}, {30.0, true}});
  add(Region("solve", "main/solve", 1, 10, 1'800'000'000, 150'000'000,
             210'000'000),
      {Counts(15'000'000, 12'000'000), Counts(10'000, 9'000),
       Counts(900'000, 650'000, true), Counts(5'000'000, 3'000'000)},
      {Counts(5'000'000, 4'000'000), Counts(4'000, 3'000),
       Counts(300'000, 250'000, true), Counts(2'000'000, 1'000'000)},
      {{960'000'000, true}, {0, false}});
  add(Region("assemble", "main/solve/assemble", 2, 100, 600'000'000, 5'000'000,
             7'500'000),
      {Counts(10'000'000, 8'000'000), Counts(6'000, 6'000),
       Counts(600'000, 400'000, true), Counts(3'000'000, 2'000'000)},
      {Counts(10'000'000, 8'000'000), Counts(6'000, 6'000),
       Counts(600'000, 400'000, true), Counts(3'000'000, 2'000'000)},
      {{1'920'000'000, true}, {27.78, true}});
  add(Region(kWeirdName, "main/" + kWeirdName, 1, 3, 1'234, 400, 434),
      {Counts(5, 0), Counts(0, 0), Counts(7, 1), Counts(0, 0)},
      {Counts(5, 0), Counts(0, 0), Counts(7, 1), Counts(0, 0)},
      {{259'319'286'871.96, true}, {0, true}});
  add(Region("io", "io", 0, 2, 45'600, 20'000, 25'600),
      {Counts(1'000, 24), Counts(1, 0), Counts(3, 3), Counts(1'024, 0)},
      {Counts(1'000, 24), Counts(1, 0), Counts(3, 3), Counts(1'024, 0)},
      {{1'437'192.98, true}, {100, true}});
  add(Region("late", "main/late", 1, 1, 999, 999, 999),
      {Counts(kHugeCount - 1, 1), Counts(0, 0), Counts(0, 0), Counts(0, 0)},
      {Counts(kHugeCount - 1, 1), Counts(0, 0), Counts(0, 0), Counts(0, 0)},
      {{0, false}, {0, false}});
  return results;
}

RegionResult* FindRegion(Results* results, std::string_view path) {
  for (RegionResult& region : results->regions) {
    if (region.path == path) return &region;
  }
  ADD_FAILURE() << "no region " << path;
  return nullptr;
}

Results MakeMergedResults(bool simulated) {
  Results results = MakeResults(simulated);
  MpiResults& mpi = results.mpi.emplace();
  mpi.ranks = 3;
  mpi.nodes = {{"node17", {0, 1}, {{0, 0, {0, 1}}}},
               {"node18", {2}, {{1, 2, {2}}}}};
  for (const RegionResult& region : results.regions) {
    MpiResults::Region& merged = mpi.regions.emplace_back();
    const bool io = region.name == "io";
    merged.ranks = io ? 2 : 3;
    merged.per_node_wall_ns = {region.wall_ns, region.wall_ns / 2};
    merged.wall_node_union = !io;
    merged.rank_mean_wall_ns = region.wall_ns * 2 / 3;
    merged.rank_wall_min_ns = region.wall_ns / 2;
    merged.rank_wall_max_ns = region.wall_ns;
    for (const EventCounts& counts : region.inclusive) {
      MpiResults::Event& event = merged.events.emplace_back();
      for (size_t s = 0; s < counts.per_socket.size(); ++s) {
        const uint64_t value = counts.per_socket[s];
        event.per_node.push_back(value);
        MpiResults::SocketCount count;
        count.node = static_cast<int>(s);
        count.socket = static_cast<int>(s);
        count.value = value;
        count.node_union = s == 0 || !io;
        count.wall_ns = count.node_union ? merged.per_node_wall_ns[s] : 0;
        count.from_rank = count.node_union ? -1 : 2;
        count.ranks = s == 0 ? 2 : 1;
        count.min = value / 2;
        count.max = value;
        count.estimated = counts.estimated;
        event.per_socket.push_back(count);
      }
    }
    merged.metrics = {{1.5e9, 1e9, 2e9, 3}, {}};
    for (int rank = 0; rank < merged.ranks; ++rank) {
      MpiResults::Rank& r = merged.per_rank.emplace_back();
      r.rank = rank;
      r.calls = region.calls / static_cast<uint64_t>(merged.ranks);
      r.wall_ns = merged.rank_wall_min_ns;
      for (const EventCounts& counts : region.inclusive) {
        r.totals.push_back(counts.total / 3);
      }
    }
  }
  return results;
}

Results MakeCostlyResults() {
  Results results = MakeResults(false);
  RegionResult* assemble = FindRegion(&results, "main/solve/assemble");
  RegionResult* weird = FindRegion(&results, "main/" + kWeirdName);
  RegionResult* io = FindRegion(&results, "io");
  RegionResult* late = FindRegion(&results, "main/late");
  if (!assemble || !weird || !io || !late) return results;
  assemble->sampled_calls = 10;  // its counts' own flags left as they are
  weird->overhead_ns = 300;      // 24.3% of 1,234 ns
  weird->open_calls = 1;         // still open when the session stopped
  io->overhead_ns = 2'280;       // 5% of 45,600 ns
  late->overhead_ns = 50;        // 5.005% of 999 ns
  // And one exactly at the 1% that marks a region: not marked.
  RegionResult* solve = FindRegion(&results, "main/solve");
  if (solve != nullptr) solve->overhead_ns = solve->wall_ns / 100;
  return results;
}

// ---------------------------------------------------------------------------
// Golden files and temporary files.

namespace {

bool UpdatingGoldens() {
  const char* update = std::getenv("UNCORE_UPDATE_GOLDEN");
  return update != nullptr && std::string_view(update) == "1";
}

}  // namespace

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

void ExpectMatchesGolden(const std::string& actual, std::string_view name) {
  const std::string path = fmt::format("{}/{}", UNCORE_GOLDEN_DIR, name);
  if (UpdatingGoldens()) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << actual;
    ASSERT_TRUE(out.good()) << "cannot write " << path;
    std::fprintf(stderr, "updated golden file %s\n", path.c_str());
    return;
  }
  std::ifstream probe(path);
  ASSERT_TRUE(probe.good())
      << path << " is missing: run with UNCORE_UPDATE_GOLDEN=1 to create it";
  const std::string expected = ReadFile(path);
  if (actual == expected) return;
  // Point at the first line that differs, then show the whole text.
  std::istringstream a(actual);
  std::istringstream e(expected);
  std::string line_a;
  std::string line_e;
  int line = 0;
  while (true) {
    ++line;
    const bool more_a = static_cast<bool>(std::getline(a, line_a));
    const bool more_e = static_cast<bool>(std::getline(e, line_e));
    if (!more_a && !more_e) break;
    if (line_a != line_e || more_a != more_e) break;
  }
  ADD_FAILURE() << name << " differs from the golden file at line " << line
                << "\n  expected: " << line_e << "\n  actual:   " << line_a
                << "\n(UNCORE_UPDATE_GOLDEN=1 regenerates it)\nactual text:\n"
                << actual;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

std::string TempPath(std::string_view name) {
  const ::testing::TestInfo* info =
      ::testing::UnitTest::GetInstance()->current_test_info();
  return fmt::format("{}/report_test_{}_{}_{}", ::testing::TempDir(), getpid(),
                     info->name(), name);
}

// ---------------------------------------------------------------------------
// A strict UTF-8 decoder, written for the tests.

size_t DecodeUtf8(std::string_view text, size_t i, uint32_t* code_point) {
  const auto b = [&](size_t k) -> uint32_t {
    return static_cast<unsigned char>(text[k]);
  };
  const uint32_t first = b(i);
  size_t len;
  uint32_t cp;
  if (first < 0x80) {
    *code_point = first;
    return 1;
  } else if (first >= 0xC2 && first <= 0xDF) {
    len = 2, cp = first & 0x1F;
  } else if (first >= 0xE0 && first <= 0xEF) {
    len = 3, cp = first & 0x0F;
  } else if (first >= 0xF0 && first <= 0xF4) {
    len = 4, cp = first & 0x07;
  } else {
    return 0;
  }
  if (i + len > text.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
      (cp >= 0xD800 && cp <= 0xDFFF)) {
    return 0;
  }
  *code_point = cp;
  return len;
}

bool IsValidUtf8(std::string_view text) {
  uint32_t cp = 0;
  for (size_t i = 0; i < text.size();) {
    const size_t len = DecodeUtf8(text, i, &cp);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

}  // namespace uncore::report
