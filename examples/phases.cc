// phases: four phases whose memory traffic differs by orders of magnitude
// (a streaming copy, a STREAM triad, a random pointer chase and a
// compute-bound loop), each in an UNCORE_REGION, and the report at the end.
//
//   phases                 # counts with UNCORE_BACKEND (default auto)
//   UNCORE_BACKEND=sim phases
//   UNCORE_EVENTS=... phases   # the environment's session instead
//   phases --quick         # smaller phases (CI)
//
// With no UNCORE_EVENTS, it starts its own session: the iMC's read and
// write CAS counts, LLC lookups, and the MEM_BW_TOTAL metric.
//
// On the `sim` backend nothing is measured: the simulator's traffic model
// makes the counts up (the report says SIMULATED).  To show what the
// hardware would report, this example tells the model, before each phase,
// the bandwidth that phase reached in unmeasured warm-up runs (bytes it
// moves by construction over its measured time; the best of three), so the
// simulated counts follow the program: Session::SetSimulatedActivity and
// AdvanceSimulation, which do nothing on real hardware (direct or perf),
// where that step is skipped.
#include <uncore/uncore.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

struct Buffers {
  explicit Buffers(size_t doubles)
      : a(doubles, 1.0), b(doubles, 2.0), c(doubles, 3.0), chain(doubles) {
    // A random cyclic permutation: every load depends on the previous one
    // and lands on a new cache line.
    std::vector<size_t> order(chain.size());
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), std::mt19937_64(42));
    for (size_t i = 0; i < order.size(); ++i) {
      chain[order[i]] = order[(i + 1) % order.size()];
    }
  }
  std::vector<double> a, b, c;
  std::vector<size_t> chain;
};

volatile double g_sink = 0;

// Each phase returns the DRAM bytes it moves by construction (reads and
// writes of arrays far larger than the LLC; 64 bytes per chased line).
uint64_t StreamingCopy(Buffers& buf, int repeats) {
  for (int r = 0; r < repeats; ++r) {
    std::memcpy(buf.a.data(), buf.b.data(), buf.a.size() * sizeof(double));
    g_sink = g_sink + buf.a[static_cast<size_t>(r)];
  }
  return uint64_t{2} * repeats * buf.a.size() * sizeof(double);
}

uint64_t Triad(Buffers& buf, int repeats) {
  const double s = 3.0;
  for (int r = 0; r < repeats; ++r) {
    double* a = buf.a.data();
    const double* b = buf.b.data();
    const double* c = buf.c.data();
    for (size_t i = 0; i < buf.a.size(); ++i) a[i] = b[i] + s * c[i];
    g_sink = g_sink + a[static_cast<size_t>(r)];
  }
  return uint64_t{3} * repeats * buf.a.size() * sizeof(double);
}

uint64_t PointerChase(Buffers& buf, size_t steps) {
  size_t at = 0;
  for (size_t i = 0; i < steps; ++i) at = buf.chain[at];
  g_sink = g_sink + static_cast<double>(at);
  return uint64_t{64} * steps;
}

uint64_t Compute(size_t steps) {
  double x = 0.5;
  for (size_t i = 0; i < steps; ++i) x = std::sin(x) * 1.0000001 + 0.1;
  g_sink = g_sink + x;
  return 0;
}

struct Phase {
  const char* name;
  uint64_t (*run)(Buffers&, bool quick);
};

const Phase kPhases[] = {
    {"streaming copy",
     [](Buffers& b, bool quick) { return StreamingCopy(b, quick ? 2 : 16); }},
    {"triad", [](Buffers& b, bool quick) { return Triad(b, quick ? 2 : 16); }},
    {"pointer chase",
     [](Buffers& b, bool quick) {
       return PointerChase(b, quick ? 1'000'000 : 2'000'000);
     }},
    {"compute",
     [](Buffers&, bool quick) {
       return Compute(quick ? 2'000'000 : 20'000'000);
     }},
};

double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::string_view(argv[1]) == "--quick";
  // 64 MiB arrays, larger than the LLCs of the machines we know.
  Buffers buffers(size_t{8} << 20);

  // The environment's session (UNCORE_EVENTS), or our own.
  std::unique_ptr<uncore::Session> own;
  if (uncore::Session::Active() == nullptr) {
    uncore::SessionOptions options;
    options.events = {"imc/CAS_COUNT.RD", "imc/CAS_COUNT.WR"};
    options.metrics = {"MEM_BW_TOTAL"};
    const char* backend = std::getenv("UNCORE_BACKEND");
    options.backend = backend != nullptr ? backend : "auto";
    const char* output = std::getenv("UNCORE_OUTPUT");
    options.output = output != nullptr ? output : "-";
    absl::StatusOr<std::unique_ptr<uncore::Session>> session =
        uncore::Session::Start(std::move(options));
    if (!session.ok()) {
      std::fprintf(stderr, "phases: %s\n",
                   std::string{session.status().message()}.c_str());
      return 1;
    }
    own = *std::move(session);
  }
  uncore::Session* session = uncore::Session::Active();
  // Only the simulator needs to be told each phase's rate.
  uncore::Session* sim =
      session != nullptr && session->simulated() ? session : nullptr;

  for (const Phase& phase : kPhases) {
    if (sim != nullptr) {
      // Simulator only: warm-up runs tell the model this phase's rate (the
      // best of three, so that a busy machine does not skew it).
      sim->AdvanceSimulation();  // what came before, at the previous rate
      double best = 0;
      for (int i = 0; i < 3; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        const uint64_t bytes = phase.run(buffers, quick);
        const double seconds = Seconds(std::chrono::steady_clock::now() - t0);
        best = std::max(best, static_cast<double>(bytes) / seconds);
      }
      sim->SetSimulatedActivity(best);
    }
    // Simulator only: bring its clock to now before and after the phase,
    // so the phase's counts come at the rate just set.
    if (sim != nullptr) sim->AdvanceSimulation();
    const auto t0 = std::chrono::steady_clock::now();
    uint64_t bytes = 0;
    {
      uncore::UncoreRegion region(phase.name);
      bytes = phase.run(buffers, quick);
      if (sim != nullptr) sim->AdvanceSimulation();
    }
    const double seconds = Seconds(std::chrono::steady_clock::now() - t0);
    std::fprintf(stderr,
                 "phases: %-15s %8.1f ms  %8.2f GB/s moved by "
                 "construction\n",
                 phase.name, seconds * 1e3,
                 static_cast<double>(bytes) / seconds / 1e9);
  }
  if (sim != nullptr) sim->SetSimulatedActivity(0);
  if (own != nullptr) {
    absl::Status s = own->Stop();  // writes the report
    if (!s.ok()) {
      std::fprintf(stderr, "phases: %s\n", std::string{s.message()}.c_str());
      return 1;
    }
  }
  return 0;
}
