#include "tools/cli/check_kernels.h"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "sdk/common/clock.h"
#include "sdk/common/sysfs.h"
#include "sdk/common/text.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace uncore::cli {
namespace {

constexpr size_t kLine = 64;
constexpr size_t kWordsPerLine = kLine / sizeof(uint64_t);
volatile uint64_t g_sink = 0;

std::optional<std::string> ReadText(const std::string& path) {
  std::optional<std::string> text = common::ReadSmallFile(path);
  if (!text) return std::nullopt;
  return std::string(common::StripWhitespace(*text));
}

// "32768K", "1M", "512": bytes.
std::optional<uint64_t> ParseCacheSize(std::string_view text) {
  uint64_t unit = 1;
  if (!text.empty() && (text.back() == 'K' || text.back() == 'k')) unit = 1024;
  if (!text.empty() && (text.back() == 'M' || text.back() == 'm')) {
    unit = uint64_t{1024} * 1024;
  }
  if (unit != 1) text.remove_suffix(1);
  std::optional<uint64_t> n = common::ParseUnsigned(text, 10);
  if (!n) return std::nullopt;
  return *n * unit;
}

size_t Clamp(uint64_t v, uint64_t lo, uint64_t hi) {
  return static_cast<size_t>(std::clamp(v, lo, hi));
}

}  // namespace

std::string_view KernelName(Kernel k) {
  switch (k) {
    case Kernel::kReadStream:
      return "read stream";
    case Kernel::kWriteStream:
      return "write stream";
    case Kernel::kCopy:
      return "copy";
    case Kernel::kLlcResident:
      return "LLC-resident";
    case Kernel::kPointerChase:
      return "pointer chase";
    case Kernel::kIdle:
      return "idle";
  }
  return "?";
}

uint64_t LlcBytes(std::string_view cpu_dir, uint64_t fallback) {
  uint64_t largest = 0;
  for (int index = 0; index < 8; ++index) {
    std::optional<std::string> size =
        ReadText(std::string(cpu_dir) + "/cache/index" + std::to_string(index) +
                 "/size");
    if (!size) continue;
    if (std::optional<uint64_t> bytes = ParseCacheSize(*size)) {
      largest = std::max(largest, *bytes);
    }
  }
  return largest > 0 ? largest : fallback;
}

KernelSizes SizesFor(uint64_t llc_bytes, bool quick) {
  KernelSizes s;
  s.llc_bytes = llc_bytes;
  constexpr uint64_t kMiB = uint64_t{1} << 20;
  s.stream_bytes = quick ? Clamp(4 * llc_bytes, 64 * kMiB, 512 * kMiB)
                         : Clamp(8 * llc_bytes, 256 * kMiB, 1024 * kMiB);
  s.stream_bytes -= s.stream_bytes % kLine;
  s.stream_repeats = quick ? 1 : 3;
  s.resident_bytes = Clamp(llc_bytes / 4, uint64_t{64} * 1024, 64 * kMiB);
  s.resident_bytes -= s.resident_bytes % kLine;
  s.resident_repeats = quick ? 16 : 64;
  s.chase_steps = quick ? 200'000 : 2'000'000;
  s.idle_ns = quick ? 50'000'000 : 200'000'000;
  return s;
}

KernelBuffers::KernelBuffers(const KernelSizes& sizes)
    : sizes_(sizes),
      a_(new uint64_t[sizes.stream_bytes / sizeof(uint64_t)]),
      b_(new uint64_t[sizes.stream_bytes / sizeof(uint64_t)]),
      resident_(new uint64_t[sizes.resident_bytes / sizeof(uint64_t)]) {
  // Touched once here, so that no kernel takes a page fault.
  const size_t words = sizes.stream_bytes / sizeof(uint64_t);
  for (size_t i = 0; i < words; ++i) {
    a_[i] = i;
    b_[i] = ~i;
  }
  std::fill_n(resident_.get(), sizes.resident_bytes / sizeof(uint64_t), 1);
}

KernelTraffic KernelBuffers::Run(Kernel k) {
  KernelTraffic t;
  const size_t words = sizes_.stream_bytes / sizeof(uint64_t);
  const uint64_t bytes = sizes_.stream_bytes;
  const int reps = sizes_.stream_repeats;
  if (k == Kernel::kPointerChase && !chain_ready_) {
    // A random cycle through every line of `a` (its first word holds the
    // next line's index): each load depends on the last, on a new line.
    const size_t lines = words / kWordsPerLine;
    std::vector<uint32_t> order(lines);
    std::iota(order.begin(), order.end(), 0u);
    std::shuffle(order.begin(), order.end(), std::mt19937_64(42));
    for (size_t i = 0; i < lines; ++i) {
      a_[order[i] * kWordsPerLine] = order[(i + 1) % lines];
    }
    chain_ready_ = true;
  }
  if (k == Kernel::kLlcResident) {
    // Warm: the buffer is in the LLC before the measured passes.
    uint64_t sum = 0;
    for (size_t i = 0; i < sizes_.resident_bytes / sizeof(uint64_t); ++i) {
      sum += resident_[i];
    }
    g_sink = g_sink + sum;
  }
  const uint64_t start = common::MonotonicNowNs();
  switch (k) {
    case Kernel::kReadStream: {
      uint64_t sum = 0;
      for (int r = 0; r < reps; ++r) {
        for (size_t i = 0; i < words; i += kWordsPerLine) sum += b_[i];
      }
      g_sink = g_sink + sum;
      t.read_bytes = bytes * reps;
      t.lines = t.read_bytes / kLine;
      break;
    }
    case Kernel::kWriteStream:
      for (int r = 0; r < reps; ++r) {
#if defined(__SSE2__)
        auto* p = reinterpret_cast<__m128i*>(a_.get());
        const __m128i v = _mm_set1_epi64x(r);
        for (size_t i = 0; i < bytes / sizeof(__m128i); ++i) {
          _mm_stream_si128(p + i, v);
        }
        _mm_sfence();
        t.non_temporal = true;
#else
        std::memset(a_.get(), r, bytes);
        t.extra_read_bytes += bytes;  // read for ownership
#endif
      }
      t.write_bytes = bytes * reps;
      break;
    case Kernel::kCopy:
      for (int r = 0; r < reps; ++r) {
        std::memcpy(a_.get(), b_.get(), bytes);
        g_sink = g_sink + a_[static_cast<size_t>(r)];
      }
      t.read_bytes = bytes * reps;
      t.write_bytes = bytes * reps;
      // memcpy's stores may read the destination for ownership.
      t.extra_read_bytes = bytes * reps;
      break;
    case Kernel::kLlcResident: {
      uint64_t sum = 0;
      const size_t n = sizes_.resident_bytes / sizeof(uint64_t);
      for (int r = 0; r < sizes_.resident_repeats; ++r) {
        for (size_t i = 0; i < n; i += kWordsPerLine) sum += resident_[i];
      }
      g_sink = g_sink + sum;
      t.resident_bytes = sizes_.resident_bytes;
      t.lines = uint64_t{sizes_.resident_bytes / kLine} *
                static_cast<uint64_t>(sizes_.resident_repeats);
      break;
    }
    case Kernel::kPointerChase: {
      uint64_t at = 0;
      for (size_t i = 0; i < sizes_.chase_steps; ++i) {
        at = a_[at * kWordsPerLine];
      }
      g_sink = g_sink + at;
      t.read_bytes = uint64_t{kLine} * sizes_.chase_steps;
      t.lines = sizes_.chase_steps;
      break;
    }
    case Kernel::kIdle:
      std::this_thread::sleep_for(std::chrono::nanoseconds(sizes_.idle_ns));
      break;
  }
  t.wall_ns = common::MonotonicNowNs() - start;
  return t;
}

std::vector<int> CpusOfSocket(int socket, std::string_view sysfs_cpu) {
  std::vector<int> cpus;
  std::optional<std::string> online =
      ReadText(std::string(sysfs_cpu) + "/online");
  if (!online) return cpus;
  std::optional<std::set<int>> ids = common::ParseCpuList(*online);
  if (!ids) return cpus;
  for (const int cpu : *ids) {
    std::optional<std::string> package =
        ReadText(std::string(sysfs_cpu) + "/cpu" + std::to_string(cpu) +
                 "/topology/physical_package_id");
    if (package && common::ParseUnsigned(*package, 10) ==
                       std::optional<uint64_t>(static_cast<uint64_t>(socket))) {
      cpus.push_back(cpu);
    }
  }
  return cpus;
}

bool PinToCpu(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return sched_setaffinity(0, sizeof(set), &set) == 0;
}

}  // namespace uncore::cli
