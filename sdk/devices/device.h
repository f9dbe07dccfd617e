// Device: the interface every counting backend implements (direct register
// access, the simulator through the direct engine, Linux perf).
//
//   std::unique_ptr<Device> dev = ...;
//   UNCORE_RETURN_IF_ERROR(dev->Program(request));
//   Snapshot begin(dev->read_plan().size()), end(dev->read_plan().size());
//   UNCORE_RETURN_IF_ERROR(dev->TakeSnapshot(&begin));
//   ... the measured phase ...
//   UNCORE_RETURN_IF_ERROR(dev->TakeSnapshot(&end));
//   uint64_t count = end.values[i] - begin.values[i];   // 64-bit, no wrap
//
// A Program is the resolved plan: every requested event placed on (socket,
// box instance, counter), filters chosen, and a flat read plan.  A snapshot is
// the read plan's values in order.  Snapshot values are 64-bit counts that
// never wrap: the device extends the hardware's 44/48-bit counters itself, so
// deltas are plain subtractions.  Uncore counters belong to a socket: a
// snapshot sees everything the socket did, whichever thread takes it.
//
// Guarantees: TakeSnapshot is safe from many threads at once and does not
// allocate when `out` already has read_plan().size() values.  Program and
// Release are not thread-safe with each other or with TakeSnapshot.
#ifndef UNCORE_SDK_DEVICES_DEVICE_H_
#define UNCORE_SDK_DEVICES_DEVICE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "sdk/spec/event_spec.h"

namespace uncore::devices {

inline constexpr int kFixedCounter = -1;

// Where one read-plan entry lives.
struct CounterPlacement {
  int event = 0;  // index into ProgramRequest::events
  int socket = 0;
  // The counting unit the entry is read from, as a report names it: a box
  // instance of the platform's register model ("CBo3", "iMC0 channel 1",
  // "uncore_sbox_1"), or the kernel PMU perf reads ("uncore_imc_3").  Set
  // by the device's planner; the generic layers never interpret it.
  std::string unit;
  int instance = 0;
  int counter = 0;  // general counter index, or kFixedCounter
  uint8_t width = 48;
};

struct ProgramRequest {
  std::vector<spec::EventSpec> events;
  std::vector<int> sockets;  // empty: every socket
  // Take registers that another agent appears to be using (direct).
  bool force = false;
  // More events than a box has counters: let the kernel rotate them and
  // scale the counts (perf), instead of refusing.
  bool allow_multiplexing = false;
};

struct Snapshot {
  Snapshot() = default;
  explicit Snapshot(size_t n) : values(n, 0) {}

  std::vector<uint64_t> values;  // read-plan order, extended to 64 bits
  bool valid = false;            // false: a read failed; do not use values
  uint64_t timestamp_ns = 0;     // CLOCK_MONOTONIC when taken
};

class Device {
 public:
  virtual ~Device() = default;

  virtual std::string_view name() const = 0;
  // Programs the events.  On failure nothing stays programmed: every write
  // made is rolled back.
  virtual absl::Status Program(const ProgramRequest& request) = 0;
  virtual const std::vector<CounterPlacement>& read_plan() const = 0;
  virtual absl::Status TakeSnapshot(Snapshot* out) = 0;
  // Stops counting and restores every register to what it held before
  // Program.  Safe to call twice.
  virtual absl::Status Release() = 0;
  // Total time the counters were held frozen by snapshots, in nanoseconds.
  virtual uint64_t frozen_ns() const = 0;
  // What one snapshot costs in reads: counter registers (the default), or
  // perf group read() calls.  Reports say it (RunInfo::reads_per_snapshot).
  virtual int reads_per_snapshot() const {
    return static_cast<int>(read_plan().size());
  }
};

// (end - begin) modulo 2^width: the count between two raw readings of a
// `width`-bit counter that wrapped at most once.
constexpr uint64_t WidthAwareDelta(uint64_t begin, uint64_t end,
                                   uint8_t width) {
  const uint64_t mask = width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
  return (end - begin) & mask;
}

}  // namespace uncore::devices

#endif  // UNCORE_SDK_DEVICES_DEVICE_H_
