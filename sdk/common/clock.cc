#include "sdk/common/clock.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "sdk/common/sysfs.h"
#include "sdk/common/text.h"

namespace uncore::common {
namespace {

bool ReadTscIsUsableClock() {
#if defined(__x86_64__) || defined(__i386__)
  const std::optional<std::string> cpuinfo = ReadSmallFile("/proc/cpuinfo");
  if (!cpuinfo.has_value()) return false;
  for (std::string_view line : Split(*cpuinfo, '\n')) {
    if (!line.starts_with("flags")) continue;
    // The first CPU's flags: every CPU has the same.
    const std::vector<std::string_view> flags =
        Split(line, ' ', /*skip_empty=*/true);
    auto has = [&](std::string_view flag) {
      return std::find(flags.begin(), flags.end(), flag) != flags.end();
    };
    if (!has("constant_tsc") || !has("nonstop_tsc")) return false;
    // The kernel keeps the TSC as its clock source only while it finds the
    // CPUs' counters synchronised and stable: then threads on different
    // CPUs can subtract one another's ticks.
    const std::optional<std::string> source = ReadSmallFile(
        "/sys/devices/system/clocksource/clocksource0/current_clocksource");
    return source.has_value() && StripWhitespace(*source) == "tsc";
  }
#endif
  return false;
}

constexpr uint64_t kMinCalibrationNs = 1'000'000;
constexpr int kPairAttempts = 5;

}  // namespace

bool TscIsUsableClock() {
  static const bool usable = ReadTscIsUsableClock();
  return usable;
}

TickClock::TickClock(bool use_tsc) : tsc_(use_tsc) {
#if !defined(__x86_64__) && !defined(__i386__)
  tsc_ = false;
#endif
  Pair(&start_ns_, &start_ticks_);
}

void TickClock::Pair(uint64_t* ns, uint64_t* ticks) const {
  if (!tsc_) {
    *ns = MonotonicNowNs();
    *ticks = *ns;
    return;
  }
  // CLOCK_MONOTONIC between two ticks, the tightest of a few tries: a
  // preemption or an interrupt between the reads widens that try only.
  uint64_t best_width = UINT64_MAX;
  for (int attempt = 0; attempt < kPairAttempts; ++attempt) {
    const uint64_t before = Now();
    const uint64_t mono = MonotonicNowNs();
    const uint64_t after = Now();
    if (after >= before && after - before < best_width) {
      best_width = after - before;
      *ns = mono;
      *ticks = before + (after - before) / 2;
    }
  }
  if (best_width == UINT64_MAX) {  // the counter went backwards every time
    *ns = MonotonicNowNs();
    *ticks = Now();
  }
}

double TickClock::NsPerTick() const {
  if (!tsc_) return 1.0;
  uint64_t ns = 0;
  uint64_t ticks = 0;
  Pair(&ns, &ticks);
  if (ns - start_ns_ < kMinCalibrationNs) {
    std::this_thread::sleep_for(
        std::chrono::nanoseconds(kMinCalibrationNs - (ns - start_ns_)));
    Pair(&ns, &ticks);
  }
  // A counter that did not advance (it cannot, where it was found usable):
  // ticks are then taken as nanoseconds rather than dividing by zero.
  if (ticks <= start_ticks_) return 1.0;
  return static_cast<double>(ns - start_ns_) /
         static_cast<double>(ticks - start_ticks_);
}

}  // namespace uncore::common
