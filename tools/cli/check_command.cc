// `uncore check`: proves the counts on this machine (docs/check.md).  Runs
// kernels whose memory traffic is known from first principles
// (check_kernels.h) on each socket, each in its own region, and compares
// what the platform's memory, LLC, clock and TSC events counted with it.
//
//   uncore check [--quick] [--json] [--save] [--backend B] [--platform P]
//
// On the simulator each kernel also declares its traffic to the simulator
// (Session::SetSimulatedActivity) over a timed window inside its region;
// the expectation is what the simulator's model makes of that declaration
// (reads 2/3 and writes 1/3 of the bytes, one LLC lookup per 64 bytes, a
// fifth of them misses), within the window's measured bounds.
//
// Exit status: 0 when every check that ran passed; 1 when one failed or is
// suspicious; 2 for bad arguments; 3 when nothing could be checked; 4
// when --save could not write its file.
#include <sched.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "fmt/ranges.h"
#include "sdk/common/clock.h"
#include "sdk/common/json.h"
#include "sdk/common/status_macros.h"
#include "sdk/common/text.h"
#include "sdk/report/text_table.h"
#include "sdk/runtime/check_record.h"
#include "sdk/runtime/name_resolution.h"
#include "sdk/sim/simulated_activity.h"
#include "tools/cli/check_kernels.h"
#include "tools/cli/commands.h"
#include "uncore/region.h"
#include "uncore/results.h"
#include "uncore/session.h"

namespace uncore::cli {

// check_hook.cc: the spec to program for `spec` (a test build may plant an
// encoding error).
std::string CheckSpecToProgram(const std::string& spec);

namespace {

constexpr int kExitCheckFailed = 1;
constexpr int kExitNothingChecked = 3;
constexpr int kExitSaveFailed = 4;
// Other traffic a real machine makes meanwhile (the OS, other programs).
constexpr double kBackgroundBytesPerSecond = 1e9;
constexpr double kMinUncoreHz = 0.8e9;
constexpr double kMaxUncoreHz = 4.5e9;
constexpr double kTscTolerance = 0.02;
constexpr double kSimMissRatio = 0.2;  // the IvyTown simulator's model

enum class Quantity {
  kMemRead,
  kMemWrite,
  kLlcLookups,
  kLlcMisses,
  kClock,
  kTsc
};

std::string_view QuantityName(Quantity q) {
  switch (q) {
    case Quantity::kMemRead:
      return "memory read bytes";
    case Quantity::kMemWrite:
      return "memory write bytes";
    case Quantity::kLlcLookups:
      return "LLC lookups";
    case Quantity::kLlcMisses:
      return "LLC misses";
    case Quantity::kClock:
      return "uncore clock cycles";
    case Quantity::kTsc:
      return "TSC ticks";
  }
  return "?";
}

// An event that measures one quantity; `scale` turns counts into it.
struct Probe {
  Quantity quantity;
  std::string spec;  // as the platform names it
  double scale = 1;
  std::string programmed;  // CheckSpecToProgram(spec)
  std::string encoding;    // from the session
};

Probe MakeProbe(Quantity q, std::string spec, double scale) {
  Probe p;
  p.quantity = q;
  p.spec = std::move(spec);
  p.scale = scale;
  return p;
}

struct Skip {
  std::string what;
  std::string why;
};

// What check reads for each quantity, in order of preference: the first
// spelling the machine's platform resolves is the probe (ResolveNames
// below); a quantity none of them names is skipped with the resolver's
// reason.  Data, not a branch per platform: a platform record that names
// one of these events is checked with it.
struct Candidate {
  Quantity quantity;
  std::string_view spec;
  double scale;  // bytes per count for memory; 1 otherwise
};
constexpr Candidate kCandidates[] = {
    // Intel's iMC (IvyTown, and every perf platform from Haswell-EP to
    // Sapphire Rapids): one 64-byte line per CAS.
    {Quantity::kMemRead, "imc/CAS_COUNT.RD", 64},
    // The Xeon 7500's memory controllers and home agent.
    {Quantity::kMemRead, "mbox/FVC_EV0_BBOX_CMDS_READS", 64},
    // AMD's UMC (Zen 4 and 5): one 64-byte burst per CAS command.
    {Quantity::kMemRead, "umc/umc_cas_cmd.rd", 64},
    {Quantity::kMemWrite, "imc/CAS_COUNT.WR", 64},
    {Quantity::kMemWrite, "bbox/IMT_INSERTS_WR", 64},
    {Quantity::kMemWrite, "umc/umc_cas_cmd.wr", 64},
    {Quantity::kLlcLookups, "cbo/LLC_LOOKUP.DATA_READ:filter_state=0x1f", 1},
    {Quantity::kLlcMisses, "cbo/TOR_INSERTS.MISS_OPCODE:filter_opc=0x182", 1},
    {Quantity::kClock, "ubox/UCLK", 1},
    {Quantity::kClock, "wbox/UNCORE_CLOCK", 1},
};

// The probes the platform resolves, and what does not apply there.
std::vector<Probe> ProbesOf(const runtime::SessionMachine& machine,
                            const std::string& backend, bool simulated,
                            std::vector<Skip>* skipped) {
  std::vector<Probe> probes;
  const runtime::SessionPlatform& platform = machine.platform;
  if (!platform.uncore_supported) {
    skipped->push_back(
        {"memory, LLC and uncore clock checks",
         "no uncore this SDK counts here (platform none: a virtual machine "
         "without uncore PMUs, or a CPU no platform knows); `uncore doctor` "
         "says why"});
  } else {
    for (const Quantity q :
         {Quantity::kMemRead, Quantity::kMemWrite, Quantity::kLlcLookups,
          Quantity::kLlcMisses, Quantity::kClock}) {
      std::vector<std::string> tried;
      bool found = false;
      for (const Candidate& c : kCandidates) {
        if (c.quantity != q || found) continue;
        Probe probe = MakeProbe(q, std::string(c.spec), c.scale);
        probe.programmed = CheckSpecToProgram(probe.spec);
        runtime::NameRequest request;
        request.events = {probe.programmed};
        request.backend = backend;
        if (runtime::ResolveNames(platform, request, machine.pmus_or()).ok()) {
          probes.push_back(std::move(probe));
          found = true;
        } else {
          tried.emplace_back(c.spec);
        }
      }
      if (!found) {
        skipped->push_back(
            {std::string(QuantityName(q)),
             fmt::format("platform {} names none of the events check reads "
                         "for it ({}); `uncore list` shows its events",
                         platform.name, fmt::join(tried, ", "))});
      }
    }
  }
  if (!simulated) {
    if (std::filesystem::exists(
            "/sys/bus/event_source/devices/msr/events/tsc")) {
      Probe probe = MakeProbe(Quantity::kTsc, "msr/tsc/", 1);
      probe.programmed = CheckSpecToProgram(probe.spec);
      runtime::NameRequest request;
      request.events = {probe.programmed};
      request.backend = backend;
      absl::StatusOr<runtime::ResolvedNames> names =
          runtime::ResolveNames(platform, request, machine.pmus_or());
      if (names.ok()) {
        probes.push_back(std::move(probe));
      } else {
        skipped->push_back(
            {"TSC ticks", common::StatusMessage(names.status())});
      }
    } else {
      skipped->push_back({"TSC ticks",
                          "no perf msr PMU with a tsc event "
                          "(/sys/bus/event_source/devices/msr/events/tsc): "
                          "the kernel lacks CONFIG_X86 msr PMU support or "
                          "this is not x86"});
    }
  } else {
    skipped->push_back({"TSC ticks",
                        "the simulator has no TSC event (msr/tsc/ is a perf "
                        "event; the sim backend counts the simulator only)"});
  }
  return probes;
}

// What a kernel should have made a quantity count, [lo, hi].
struct Expectation {
  double lo = 0;
  double hi = 0;
  bool near_zero = false;  // "at most hi"
  bool exact = false;      // the simulator: out of range is a failure
  std::string basis;       // where the numbers come from
};

// The simulator's declaration window: the memory bytes declared at rate
// `rate` for between `min_ns` and `max_ns`.
struct Declared {
  double bytes = 0;
  double rate = 0;
  uint64_t min_ns = 0;
  uint64_t max_ns = 0;
};

std::optional<Expectation> Expect(Quantity q, Kernel k, const KernelTraffic& t,
                                  const Declared& d, bool simulated,
                                  uint64_t wall_ns, double tsc_hz) {
  const double wall = static_cast<double>(wall_ns) * 1e-9;
  Expectation e;
  if (q == Quantity::kClock) {
    e.lo = k == Kernel::kIdle ? 0 : kMinUncoreHz * wall;
    e.hi = kMaxUncoreHz * wall;
    e.basis = fmt::format("{:.1f} to {:.1f} GHz x {:.3f} s",
                          e.lo / std::max(wall, 1e-9) * 1e-9,
                          kMaxUncoreHz * 1e-9, wall);
    return e;
  }
  if (q == Quantity::kTsc) {
    if (tsc_hz <= 0) return std::nullopt;
    e.lo = tsc_hz * wall * (1 - kTscTolerance);
    e.hi = tsc_hz * wall * (1 + kTscTolerance);
    e.basis = fmt::format("{:.3f} s x TSC {:.4f} GHz, +-{:.0f}%", wall,
                          tsc_hz * 1e-9, kTscTolerance * 100);
    return e;
  }
  if (simulated) {
    const double lo_bytes = d.rate * static_cast<double>(d.min_ns) * 1e-9;
    const double hi_bytes = d.rate * static_cast<double>(d.max_ns) * 1e-9;
    double share = 1;
    std::string what;
    switch (q) {
      case Quantity::kMemRead:
        share = sim::SimulatedActivity::kReadShare;
        what = "2/3 of";
        break;
      case Quantity::kMemWrite:
        share = 1 - sim::SimulatedActivity::kReadShare;
        what = "1/3 of";
        break;
      case Quantity::kLlcLookups:
        share = 1.0 / 64;
        what = "one lookup per 64 bytes of";
        break;
      case Quantity::kLlcMisses:
        share = kSimMissRatio / 64;
        what = "a fifth of the lookups of";
        break;
      default:
        break;
    }
    // The simulator carries fractions across calls: a few counts of slack.
    e.lo = std::max(0.0, share * lo_bytes * 0.99 - 16 * 64 * share);
    e.hi = share * hi_bytes * 1.01 + 16 * 64 * share;
    e.exact = true;
    e.near_zero = d.bytes == 0;
    e.basis = fmt::format("{} the {:.0f} bytes declared to the simulator", what,
                          d.bytes);
    return e;
  }
  const double bg = kBackgroundBytesPerSecond * wall;
  const double r = static_cast<double>(t.read_bytes);
  const double w = static_cast<double>(t.write_bytes);
  const double lines = static_cast<double>(t.lines);
  auto range = [&](double lo, double hi, std::string basis) {
    e.lo = lo;
    e.hi = hi;
    e.basis = std::move(basis);
    return e;
  };
  auto at_most = [&](double hi, std::string basis) {
    e.near_zero = true;
    return range(0, hi, std::move(basis));
  };
  switch (q) {
    case Quantity::kMemRead:
      if (k == Kernel::kReadStream) {
        return range(r, 1.25 * r + bg, "bytes read, +25% prefetch, +1 GB/s");
      }
      if (k == Kernel::kWriteStream) {
        if (t.non_temporal) {
          return at_most(0.05 * w + bg, "non-temporal stores read nothing");
        }
        return range(w, 1.25 * w + bg, "stores read each line for ownership");
      }
      if (k == Kernel::kCopy) {
        return range(
            r, r + static_cast<double>(t.extra_read_bytes) + 0.25 * r + bg,
            "source bytes, and the destination's if read for "
            "ownership");
      }
      if (k == Kernel::kPointerChase) {
        return range(0.75 * r, 2.2 * r + bg,
                     "64 bytes per step (the adjacent-line prefetcher may "
                     "double it)");
      }
      if (k == Kernel::kLlcResident) {
        return at_most(
            static_cast<double>(t.resident_bytes) + 0.02 * lines * 64 + bg,
            "the buffer fits in the LLC");
      }
      return at_most(bg, "nothing runs; 1 GB/s of others' traffic allowed");
    case Quantity::kMemWrite:
      if (k == Kernel::kWriteStream || k == Kernel::kCopy) {
        return range(w, 1.25 * w + bg, "bytes written, +25%, +1 GB/s");
      }
      return at_most(0.05 * r + bg, "the kernel writes nothing to memory");
    case Quantity::kLlcLookups:
      if (k == Kernel::kReadStream || k == Kernel::kPointerChase) {
        return range(0.8 * lines, 3 * lines + bg / 64,
                     "one lookup per line read, up to 3 with prefetches");
      }
      return std::nullopt;
    case Quantity::kLlcMisses:
      if (k == Kernel::kReadStream) {
        return range(0.8 * lines, 1.5 * lines + bg / 64,
                     "every line read misses");
      }
      if (k == Kernel::kPointerChase) {
        return range(0.7 * lines, 2.2 * lines + bg / 64,
                     "every step misses (prefetch may add)");
      }
      if (k == Kernel::kLlcResident) {
        return at_most(
            static_cast<double>(t.resident_bytes) / 64 + 0.02 * lines + bg / 64,
            "the buffer fits in the LLC");
      }
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

enum class Verdict { kPass, kSuspicious, kFail };
std::string_view VerdictName(Verdict v) {
  return v == Verdict::kPass         ? "pass"
         : v == Verdict::kSuspicious ? "suspicious"
                                     : "fail";
}

Verdict Judge(const Expectation& e, double m, std::string* tolerance) {
  if (e.exact) {
    *tolerance =
        "exact within the declaration window (+-1%): the simulator counts "
        "what it is told";
  } else if (e.near_zero) {
    *tolerance = "pass at most the bound, suspicious up to 4x it";
  } else {
    *tolerance = "pass in range, suspicious within 2x of it";
  }
  if (m >= e.lo && m <= e.hi) return Verdict::kPass;
  if (e.exact) return Verdict::kFail;
  if (e.near_zero) return m <= 4 * e.hi ? Verdict::kSuspicious : Verdict::kFail;
  return m >= e.lo / 2 && m <= 2 * e.hi ? Verdict::kSuspicious : Verdict::kFail;
}

std::string Advice(const Probe& p, double ratio, double measured,
                   bool simulated) {
  const std::string describe =
      fmt::format("`uncore describe {}` shows how it is encoded", p.spec);
  switch (p.quantity) {
    case Quantity::kMemRead:
    case Quantity::kMemWrite:
    case Quantity::kLlcLookups:
    case Quantity::kLlcMisses:
      if (measured == 0 && !simulated) {
        return fmt::format(
            "{} counted nothing: the box may not count here (a VM without "
            "uncore PMUs, a BIOS hiding the devices) or the kernel driver "
            "programs another event; `uncore doctor`, and compare with "
            "`perf stat -a`",
            p.programmed);
      }
      return fmt::format(
          "the {} count is off by {:.2f}x: the event encoding of {} ({}) is "
          "suspect; {}{}",
          QuantityName(p.quantity), ratio, p.programmed, p.encoding, describe,
          simulated ? ""
                    : "; try another event of the same traffic, run on an "
                      "idle machine (others' traffic adds), and compare "
                      "with `perf stat -a`");
    case Quantity::kClock:
      return fmt::format(
          "the uncore clock ran at {:.2f}x the expected range's middle: the "
          "clock event may be the wrong one, or the uncore halts while "
          "idle (package C-states); {}",
          ratio, describe);
    case Quantity::kTsc:
      return fmt::format(
          "msr/tsc/ counted {:.3f}x elapsed time x the TSC frequency: the "
          "perf msr driver, or a hypervisor's TSC offsetting or scaling, "
          "is suspect",
          ratio);
  }
  return "";
}

struct Row {
  int socket = 0;
  Kernel kernel = Kernel::kIdle;
  const Probe* probe = nullptr;
  Expectation expect;
  double measured = 0;
  double ratio = 0;
  Verdict verdict = Verdict::kPass;
  std::string tolerance;
  std::string advice;
};

std::string Human(double v, std::string_view quantity) {
  const bool bytes = quantity.find("bytes") != std::string_view::npos;
  const char* suffix[] = {"", "k", "M", "G", "T"};
  int i = 0;
  double x = v;
  while (std::fabs(x) >= 1000 && i < 4) {
    x /= 1000;
    ++i;
  }
  return fmt::format("{:.3g}{}{}", x, suffix[i], bytes ? "B" : "");
}

std::string ExpectedText(const Expectation& e, std::string_view q) {
  if (e.near_zero) return "<= " + Human(e.hi, q);
  if (e.hi <= e.lo * 1.05) return "~" + Human((e.lo + e.hi) / 2, q);
  return Human(e.lo, q) + ".." + Human(e.hi, q);
}

std::string UtcNow() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

}  // namespace

int RunCheck(const CheckOptions& o, std::FILE* out, std::FILE* err) {
  const uint64_t run_start = common::MonotonicNowNs();
  const std::string backend = common::ToLower(o.backend);
  absl::StatusOr<runtime::SessionMachine> machine =
      runtime::ReadSessionMachine(o.platform, backend, /*on_hardware=*/true);
  if (!machine.ok()) {
    fmt::print(err, "uncore check: {}\n",
               common::StatusMessage(machine.status()));
    return kExitUsage;
  }
  const bool simulated = backend == "sim";
  std::vector<Skip> skipped;
  std::vector<Probe> kept = ProbesOf(*machine, backend, simulated, &skipped);

  std::unique_ptr<Session> session;
  if (!kept.empty()) {
    SessionOptions options;
    for (const Probe& p : kept) options.events.push_back(p.programmed);
    options.backend = o.backend;
    options.platform = o.platform;
    absl::StatusOr<std::unique_ptr<Session>> started =
        Session::Start(std::move(options));
    if (!started.ok()) {
      skipped.push_back({"every check",
                         fmt::format("the counters cannot be opened: {} "
                                     "(`uncore doctor` says what fixes it)",
                                     common::StatusMessage(started.status()))});
      kept.clear();
    } else {
      session = *std::move(started);
    }
  }

  std::vector<Row> rows;
  std::vector<int> exercised;
  Results results;
  const bool sim_session = session != nullptr && session->simulated();
  if (session != nullptr) {
    Results first = session->Collect();
    for (Probe& p : kept) {
      for (const EventInfo& info : first.events) {
        if (info.spec == p.programmed) p.encoding = info.encoding;
      }
    }
    const KernelSizes sizes = SizesFor(LlcBytes(), o.quick);
    KernelBuffers buffers(sizes);
    cpu_set_t original;
    const bool have_original =
        sched_getaffinity(0, sizeof(original), &original) == 0;
    const common::TickClock clock;
    struct Ran {
      int socket;
      Kernel kernel;
      std::string region;
      KernelTraffic traffic;
      Declared declared;
    };
    std::vector<Ran> ran;
    if (sim_session) session->SetSimulatedActivity(0);
    for (const int socket : first.run.sockets) {
      std::vector<int> cpus = CpusOfSocket(socket);
      if (cpus.empty() && sim_session) cpus = CpusOfSocket(0);
      if (cpus.empty() || !PinToCpu(cpus.front())) {
        skipped.push_back({fmt::format("socket {}", socket),
                           cpus.empty()
                               ? "no online CPU of this socket to run on"
                               : "sched_setaffinity refused to pin to it"});
        continue;
      }
      exercised.push_back(socket);
      for (const Kernel k : kAllKernels) {
        Ran r{socket,
              k,
              fmt::format("socket {} {}", socket, KernelName(k)),
              {},
              {}};
        RegionBegin(r.region);
        r.traffic = buffers.Run(k);
        if (sim_session) {
          r.declared.bytes =
              static_cast<double>(r.traffic.read_bytes + r.traffic.write_bytes);
          if (r.declared.bytes > 0) {
            // The traffic, declared over a window of measured bounds.
            const uint64_t window = o.quick ? 20'000'000 : 50'000'000;
            r.declared.rate =
                r.declared.bytes * 1e9 / static_cast<double>(window);
            const uint64_t t0 = common::MonotonicNowNs();
            session->SetSimulatedActivity(r.declared.rate);
            const uint64_t on = common::MonotonicNowNs();
            uint64_t off = on;
            while ((off = common::MonotonicNowNs()) < t0 + window) {
            }
            session->SetSimulatedActivity(0);
            const uint64_t t1 = common::MonotonicNowNs();
            r.declared.min_ns = off - on;
            r.declared.max_ns = t1 - t0;
          }
        }
        RegionEnd(r.region);
        ran.push_back(std::move(r));
      }
    }
    if (have_original) sched_setaffinity(0, sizeof(original), &original);
    const double tsc_hz = clock.counts_tsc() ? 1e9 / clock.NsPerTick() : 0.0;
    if (!clock.counts_tsc()) {
      for (const Probe& p : kept) {
        if (p.quantity == Quantity::kTsc) {
          skipped.push_back({"TSC ticks",
                             "the TSC is not a constant-rate clock source "
                             "here, so its frequency is unknown"});
        }
      }
    }
    results = session->Collect();
    (void)session->Stop();
    for (const Ran& r : ran) {
      const RegionResult* region = nullptr;
      for (const RegionResult& candidate : results.regions) {
        if (candidate.path == r.region) region = &candidate;
      }
      size_t si = 0;
      while (si < results.run.sockets.size() &&
             results.run.sockets[si] != r.socket) {
        ++si;
      }
      if (region == nullptr) continue;
      for (const Probe& p : kept) {
        std::optional<Expectation> e =
            Expect(p.quantity, r.kernel, r.traffic, r.declared, sim_session,
                   region->rate_window_ns(), tsc_hz);
        if (!e) continue;
        size_t ei = 0;
        while (ei < results.events.size() &&
               results.events[ei].spec != p.programmed) {
          ++ei;
        }
        if (ei >= region->inclusive.size() ||
            si >= region->inclusive[ei].per_socket.size()) {
          continue;
        }
        Row row;
        row.socket = r.socket;
        row.kernel = r.kernel;
        row.probe = &p;
        row.expect = *e;
        row.measured =
            static_cast<double>(region->inclusive[ei].per_socket[si]) * p.scale;
        const double mid = e->near_zero ? e->hi : (e->lo + e->hi) / 2;
        row.ratio = mid > 0 ? row.measured / mid : 0;
        row.verdict = Judge(*e, row.measured, &row.tolerance);
        if (row.verdict != Verdict::kPass) {
          row.advice = Advice(p, row.ratio, row.measured, sim_session);
        }
        rows.push_back(std::move(row));
      }
    }
  }

  // The verdict of the whole check.
  int failed = 0;
  int suspicious = 0;
  for (const Row& r : rows) {
    failed += r.verdict == Verdict::kFail ? 1 : 0;
    suspicious += r.verdict == Verdict::kSuspicious ? 1 : 0;
  }
  const std::string verdict = rows.empty()     ? "nothing checked"
                              : failed > 0     ? "fail"
                              : suspicious > 0 ? "suspicious"
                                               : "pass";
  const int exit_code = rows.empty()              ? kExitNothingChecked
                        : failed + suspicious > 0 ? kExitCheckFailed
                                                  : kExitOk;
  const std::string platform = machine->platform.RunLabel();
  const std::string backend_used =
      results.run.backend.empty() ? backend : results.run.backend;
  const std::string date = UtcNow();
  const std::string summary = fmt::format(
      "{} {} platform {} backend {}{} ({} checks, {} socket(s), {} skipped)",
      date, verdict, platform, backend_used, sim_session ? " SIMULATED" : "",
      rows.size(), exercised.size(), skipped.size());
  const double elapsed =
      static_cast<double>(common::MonotonicNowNs() - run_start) * 1e-9;

  common::JsonWriter json(/*pretty=*/true);
  json.BeginObject();
  json.Key("summary");
  json.String(summary);
  json.Key("verdict");
  json.String(verdict);
  json.Key("exit_code");
  json.Int(exit_code);
  json.Key("date");
  json.String(date);
  json.Key("platform");
  json.String(platform);
  json.Key("backend");
  json.String(backend_used);
  json.Key("simulated");
  json.Bool(sim_session);
  json.Key("host");
  json.String(results.run.host);
  json.Key("cpu");
  json.String(results.run.cpu);
  json.Key("quick");
  json.Bool(o.quick);
  json.Key("elapsed_s");
  json.Double(elapsed);
  json.Key("sockets_exercised");
  json.BeginArray();
  for (const int s : exercised) json.Int(s);
  json.EndArray();
  json.Key("checks");
  json.BeginArray();
  for (const Row& r : rows) {
    json.BeginObject();
    json.Key("socket");
    json.Int(r.socket);
    json.Key("kernel");
    json.String(KernelName(r.kernel));
    json.Key("quantity");
    json.String(QuantityName(r.probe->quantity));
    json.Key("event");
    json.String(r.probe->programmed);
    json.Key("encoding");
    json.String(r.probe->encoding);
    json.Key("expected_min");
    json.Double(r.expect.lo);
    json.Key("expected_max");
    json.Double(r.expect.hi);
    json.Key("basis");
    json.String(r.expect.basis);
    json.Key("measured");
    json.Double(r.measured);
    json.Key("ratio");
    json.Double(r.ratio);
    json.Key("verdict");
    json.String(VerdictName(r.verdict));
    json.Key("tolerance");
    json.String(r.tolerance);
    json.Key("advice");
    json.String(r.advice);
    json.EndObject();
  }
  json.EndArray();
  json.Key("skipped");
  json.BeginArray();
  for (const Skip& s : skipped) {
    json.BeginObject();
    json.Key("what");
    json.String(s.what);
    json.Key("why");
    json.String(s.why);
    json.EndObject();
  }
  json.EndArray();
  json.EndObject();
  const std::string json_text = json.Take() + "\n";

  if (o.json) {
    fmt::print(out, "{}", json_text);
  } else {
    fmt::print(out,
               "uncore check: platform {}, backend {}, {} socket(s) "
               "exercised{}\n",
               platform, backend_used, exercised.size(),
               exercised.empty() ? ""
                                 : fmt::format(" ({}, kernels pinned to "
                                               "one CPU of each)",
                                               fmt::join(exercised, ",")));
    if (sim_session) {
      fmt::print(out,
                 "### SIMULATED: every count below is the simulator's, made "
                 "from the traffic each kernel declared to it ###\n");
    }
    report::TextTable table;
    table.AddColumn("socket", report::Align::kRight, 6);
    table.AddColumn("kernel", report::Align::kLeft, 13);
    table.AddColumn("check", report::Align::kLeft, 19);
    table.AddColumn("expected", report::Align::kRight, 16);
    table.AddColumn("measured", report::Align::kRight, 9);
    table.AddColumn("ratio", report::Align::kRight, 6);
    table.AddColumn("verdict", report::Align::kLeft, 10);
    if (!rows.empty()) fmt::print(out, "\n{}\n", table.FormatHeader());
    for (const Row& r : rows) {
      const std::string_view q = QuantityName(r.probe->quantity);
      fmt::print(
          out, "{}\n",
          table.FormatRow({std::to_string(r.socket),
                           std::string(KernelName(r.kernel)), std::string(q),
                           ExpectedText(r.expect, q), Human(r.measured, q),
                           fmt::format("{:.2f}", r.ratio),
                           std::string(VerdictName(r.verdict))}));
    }
    for (const Row& r : rows) {
      if (r.verdict == Verdict::kPass) continue;
      fmt::print(out,
                 "\n{}: socket {} {}, {} ({}): expected {} ({}), "
                 "measured {}; {}.\n  what to do: {}\n",
                 VerdictName(r.verdict), r.socket, KernelName(r.kernel),
                 QuantityName(r.probe->quantity), r.probe->programmed,
                 ExpectedText(r.expect, QuantityName(r.probe->quantity)),
                 r.expect.basis,
                 Human(r.measured, QuantityName(r.probe->quantity)),
                 r.tolerance, r.advice);
    }
    for (const Skip& s : skipped) {
      fmt::print(out, "\nskipped: {}: {}\n", s.what, s.why);
    }
    fmt::print(out,
               "\nverdict: {} ({} checks: {} failed, {} suspicious; "
               "{:.1f} s)\n",
               verdict, rows.size(), failed, suspicious, elapsed);
  }

  if (o.save) {
    const std::string path = runtime::CheckFilePath();
    std::error_code ec;
    if (!path.empty()) {
      std::filesystem::create_directories(
          std::filesystem::path(path).parent_path(), ec);
    }
    std::ofstream file(path, std::ios::trunc);
    file << json_text;
    file.close();
    if (path.empty() || !file) {
      fmt::print(err,
                 "uncore check: cannot save the result to '{}': set "
                 "UNCORE_CHECK_FILE to a writable file\n",
                 path);
      return kExitSaveFailed;
    }
    fmt::print(err, "uncore check: saved to {}\n", path);
  }
  return exit_code;
}

}  // namespace uncore::cli
