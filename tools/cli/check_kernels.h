// The kernels of `uncore check` (docs/check.md): loops whose memory traffic
// is known from first principles, the LLC size they are sized from, and
// pinning the calling thread to a socket.
//
//   const uint64_t llc = cli::LlcBytes();          // sysfs, largest cache
//   cli::KernelSizes sizes = cli::SizesFor(llc, /*quick=*/false);
//   cli::KernelBuffers buffers(sizes);
//   cli::PinToCpu(cli::CpusOfSocket(0).front());
//   cli::KernelTraffic t = cli::RunKernel(cli::Kernel::kReadStream, buffers);
//   // t.read_bytes: what the loop reads by construction
//
// Guarantees: the kernels allocate nothing (the buffers are allocated and
// touched once, up front); each returns the bytes it moves by construction.
#ifndef UNCORE_TOOLS_CLI_CHECK_KERNELS_H_
#define UNCORE_TOOLS_CLI_CHECK_KERNELS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace uncore::cli {

enum class Kernel {
  kReadStream,    // sums a buffer many times the LLC
  kWriteStream,   // fills one (non-temporal stores where the CPU has them)
  kCopy,          // copies one buffer into another
  kLlcResident,   // reads a buffer a quarter of the LLC, many times
  kPointerChase,  // follows a random cycle through a large buffer
  kIdle,          // sleeps
};
inline constexpr Kernel kAllKernels[] = {
    Kernel::kReadStream,  Kernel::kWriteStream,  Kernel::kCopy,
    Kernel::kLlcResident, Kernel::kPointerChase, Kernel::kIdle};
std::string_view KernelName(Kernel k);  // "read stream", ...

// The LLC: the largest cache of /sys/devices/system/cpu/cpu0/cache/index*
// (its `size`, "32768K"); `fallback` when none can be read.
uint64_t LlcBytes(std::string_view cpu_dir = "/sys/devices/system/cpu/cpu0",
                  uint64_t fallback = uint64_t{32} << 20);

struct KernelSizes {
  uint64_t llc_bytes = 0;
  size_t stream_bytes = 0;    // each of the two stream buffers
  int stream_repeats = 0;     // passes of the stream kernels
  size_t resident_bytes = 0;  // the LLC-resident buffer
  int resident_repeats = 0;
  size_t chase_steps = 0;  // pointer-chase loads (one line each)
  uint64_t idle_ns = 0;
};
// Streams: 8x the LLC, at least 256 MiB, at most 1 GiB, 3 passes; --quick:
// 4x, at least 64 MiB, at most 512 MiB, 1 pass (and fewer of the rest).
KernelSizes SizesFor(uint64_t llc_bytes, bool quick);

// What a kernel moves between the sockets' memory and the CPU, by
// construction, and what it touched in the LLC.
struct KernelTraffic {
  uint64_t read_bytes = 0;        // DRAM reads the loop makes
  uint64_t write_bytes = 0;       // DRAM writes
  uint64_t extra_read_bytes = 0;  // reads it may add on top (RFO, prefetch)
  uint64_t lines = 0;             // cache lines it looks up in the LLC
  uint64_t resident_bytes = 0;    // LLC-resident: the buffer it reuses
  uint64_t wall_ns = 0;
  bool non_temporal = false;  // its stores bypass the caches
};

class KernelBuffers {
 public:
  explicit KernelBuffers(const KernelSizes& sizes);
  const KernelSizes& sizes() const { return sizes_; }
  KernelTraffic Run(Kernel k);

 private:
  KernelSizes sizes_;
  std::unique_ptr<uint64_t[]> a_, b_, resident_;
  bool chain_ready_ = false;
};

// The online CPUs whose physical_package_id is `socket` (sysfs).
std::vector<int> CpusOfSocket(
    int socket, std::string_view sysfs_cpu = "/sys/devices/system/cpu");
// Pins the calling thread to `cpu` (sched_setaffinity); false when it
// cannot.
bool PinToCpu(int cpu);

}  // namespace uncore::cli

#endif  // UNCORE_TOOLS_CLI_CHECK_KERNELS_H_
