// PerfDevice: counts through Linux perf_event: the kernel's uncore PMUs for
// IvyTown's named events (uncore_cbox_N, uncore_imc_N, ...), and any PMU
// found in sysfs for raw specs (`msr/tsc/`, `power/energy-pkg/`,
// `uncore_imc_0/cas_count_read/`, `amd_df/event=0x7,umask=0x38/`).
//
//   absl::StatusOr<std::unique_ptr<PerfDevice>> dev = PerfDevice::Open({});
//   UNCORE_RETURN_IF_ERROR((*dev)->Program(request));
//   Snapshot s((*dev)->read_plan().size());
//   UNCORE_RETURN_IF_ERROR((*dev)->TakeSnapshot(&s));   // one read() a group
//
// Program plans one perf group per (PMU, socket CPU): the events of a PMU
// instance on a socket are read together (PERF_FORMAT_GROUP, with the
// enabled and running times), so a snapshot is one read() per group.  A
// group larger than the box has counters is an error unless
// ProgramRequest::allow_multiplexing, which opens one group per event and
// lets the kernel rotate them; then counts that ran for part of the time are
// scaled by enabled/running and marked as estimates (estimated()).
//
// IvyTown events are encoded as the kernel's ivbep driver expects: config is
// the counter control value without the enable bit (bits outside the
// driver's event mask are refused: it drops them), config1 and config2 carry
// the CBo filters (FILTER0 | FILTER1 << 32), the PCU band filter, and QPI
// match and mask.  Fixed counters are event 0xff.  A filter the driver would
// not program for the event is refused, and so is a group the driver would
// schedule onto a counter the manual forbids; a counter restriction the
// driver does not know but that the group honours is a warning
// (kernel_ivbep.h, warnings()).
//
// Errors say what to do: EACCES/EPERM name perf_event_paranoid's value and
// CAP_PERFMON; EINVAL/ENOENT name the PMU and the config and list the
// PMU's fields; EBUSY says another agent holds the counters.
//
// A snapshot's timestamp is the kernel's enabled time of the first group at
// the read (plus the CLOCK_MONOTONIC time of enabling), so a region's wall
// time and its counts cover the same interval.
//
// Guarantees: TakeSnapshot is safe from many threads at once and does not
// allocate.  Release closes every file descriptor; safe twice.  The kernel
// extends counters to 64 bits.
#ifndef UNCORE_SDK_DEVICES_PERF_PERF_DEVICE_H_
#define UNCORE_SDK_DEVICES_PERF_PERF_DEVICE_H_

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sdk/devices/device.h"
#include "sdk/devices/perf/pmu_discovery.h"

namespace uncore::devices::perf {

// One counter to open: an event on one PMU instance on one socket.
struct PerfCounter {
  int event = 0;     // index into ProgramRequest::events
  std::string spec;  // the event as the request wrote it, for messages
  int socket = 0;
  int cpu = 0;
  const Pmu* pmu = nullptr;
  PerfConfig config;
  ivytown::BoxType box = ivytown::BoxType::kUbox;  // IvyTown events
  int instance = 0;
  double scale = 1.0;  // from an alias's .scale
  std::string unit;
  int box_counters = 0;  // counters of the PMU (0: unknown)
  // IvyTown general-counter events (0 otherwise): the counters the manual
  // allows, and those the kernel's driver may schedule it on.
  uint8_t manual_counter_mask = 0;
  uint8_t kernel_counter_mask = 0;
};

// Resolves the events of `request` into counters (pure; no perf call).
// InvalidArgument / NotFound with the reason and what exists.
absl::StatusOr<std::vector<PerfCounter>> PlanPerfCounters(
    const ProgramRequest& request, const PmuCatalog& pmus);

// One perf group: the counters of one PMU instance opened on one CPU, read
// together with one read().  Without multiplexing, one group per (PMU, CPU)
// in read-plan order; with it, one group per counter.
struct PerfGroupPlan {
  const Pmu* pmu = nullptr;
  int cpu = 0;
  int socket = 0;
  std::vector<int> entries;  // indexes into the counters given
};

// The groups PerfDevice::Program opens for `counters` (pure).
std::vector<PerfGroupPlan> GroupPerfCounters(
    const std::vector<PerfCounter>& counters, bool allow_multiplexing);

class PerfDevice : public Device {
 public:
  struct Options {
    std::string sysfs_root = "/sys";
    // Where perf_event_paranoid is read for messages.
    std::string paranoid_path = "/proc/sys/kernel/perf_event_paranoid";
  };
  static absl::StatusOr<std::unique_ptr<PerfDevice>> Open(
      const Options& options);

  ~PerfDevice() override;
  PerfDevice(const PerfDevice&) = delete;
  PerfDevice& operator=(const PerfDevice&) = delete;

  std::string_view name() const override { return "perf"; }
  absl::Status Program(const ProgramRequest& request) override;
  const std::vector<CounterPlacement>& read_plan() const override {
    return read_plan_;
  }
  absl::Status TakeSnapshot(Snapshot* out) override;
  absl::Status Release() override;
  uint64_t frozen_ns() const override { return 0; }

  const PmuCatalog& pmus() const { return pmus_; }
  // What the report should say about the programmed events: counter
  // restrictions the kernel's driver does not know (kernel_ivbep.h).
  const std::vector<std::string>& warnings() const { return warnings_; }
  // Per read-plan entry: the counter behind it.
  const std::vector<PerfCounter>& counters() const { return counters_; }
  // Whether entry `i` was ever scaled from a partial (multiplexed) count.
  bool estimated(size_t i) const;
  size_t num_groups() const { return groups_.size(); }
  // One read() per group.
  int reads_per_snapshot() const override {
    return static_cast<int>(groups_.size());
  }

 private:
  struct Group {
    int leader_fd = -1;
    std::vector<int> fds;      // leader first
    std::vector<int> entries;  // read-plan index per member
    // What its read() returns: the members' count, enabled and running
    // times, then the members' values (PERF_FORMAT_GROUP).
    uint64_t members = 0;
    size_t read_bytes = 0;
  };
  PerfDevice(Options options, PmuCatalog pmus);
  absl::Status OpenCounter(const PerfCounter& c, int group_fd, int* fd) const;
  // TakeSnapshot's cold paths: a failed read(), and a multiplexed group's
  // values scaled to its enabled time.
  ABSL_ATTRIBUTE_COLD absl::Status ReadFailed(const Group& g, ssize_t got,
                                              int err, Snapshot* out) const;
  void Multiplexed(const Group& g, const uint64_t* buffer, uint64_t enabled,
                   uint64_t running, Snapshot* out);
  void CloseAll();

  Options options_;
  PmuCatalog pmus_;
  std::vector<CounterPlacement> read_plan_;
  std::vector<PerfCounter> counters_;
  std::vector<Group> groups_;
  std::unique_ptr<std::atomic<bool>[]> estimated_;
  std::vector<std::string> warnings_;
  // CLOCK_MONOTONIC when the groups were enabled: a snapshot's timestamp
  // is this plus the first group's enabled time as read.
  uint64_t enabled_at_ns_ = 0;
};

// perf_event_paranoid as a number, or nullopt when unreadable.
std::optional<int> ReadParanoid(std::string_view path);

}  // namespace uncore::devices::perf

#endif  // UNCORE_SDK_DEVICES_PERF_PERF_DEVICE_H_
