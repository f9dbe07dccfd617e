#include "sdk/devices/perf/perf_device.h"

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "fmt/ranges.h"
#include "sdk/common/clock.h"
#include "sdk/common/fd.h"
#include "sdk/common/status_macros.h"
#include "sdk/common/text.h"
#include "sdk/devices/perf/perfmon_plan.h"
#include "sdk/platforms/ivytown/device/kernel_ivbep.h"
#include "sdk/platforms/ivytown/model/box_descriptors.h"
#include "sdk/spec/encoder.h"

namespace uncore::devices::perf {
namespace {

constexpr uint64_t kFixedEvent = 0xff;  // UNCORE_FIXED_EVENT
constexpr size_t kMaxGroupSize = 32;

// "cbox" for uncore_cbox: the driver's name of the box type.
std::string_view KernelShortName(const ivytown::KernelView& k) {
  std::string_view name = k.pmu;
  if (name.starts_with("uncore_")) name.remove_prefix(7);
  return name;
}

// The kernel's PMU of `instance` (BoxDescriptor::kernel).
std::string KernelPmuName(const ivytown::KernelView& k, int instance) {
  return k.boxes == 1 ? std::string(k.pmu)
                      : fmt::format("{}_{}", k.pmu, instance);
}

std::string UncorePmuList(const PmuCatalog& pmus) {
  const std::vector<std::string> names = pmus.NamesStartingWith("uncore_");
  return names.empty() ? std::string("none") : common::Join(names, ", ");
}

// config/config1/config2 of an IvyTown event on the kernel's driver.
absl::StatusOr<PerfConfig> KernelConfig(const spec::EventSpec& e,
                                        const spec::Encoding& enc,
                                        const ivytown::KernelView& k,
                                        int instance) {
  PerfConfig c;
  const ivytown::BoxDescriptor& box = *enc.box;
  if (enc.fixed_counter) {
    c.config = kFixedEvent;
    return c;
  }
  c.config = enc.control & ~EngineBits(box);
  if (const uint64_t dropped = c.config & ~k.event_mask; dropped != 0) {
    std::vector<std::string> fields;
    for (const ivytown::FieldDescriptor& f : box.fields) {
      if (f.reg == ivytown::FieldRegister::kControl &&
          (f.bits.mask() & dropped) != 0) {
        fields.push_back(std::string(f.name));
      }
    }
    return absl::InvalidArgumentError(fmt::format(
        "{}: the kernel's uncore driver would drop bits 0x{:x} ({}) of this "
        "event (its event mask for {} is 0x{:x}); count it with the direct "
        "backend (UNCORE_BACKEND=direct)",
        e.text, dropped, common::Join(fields, ", "), KernelShortName(k),
        k.event_mask));
  }
  if (const std::vector<std::string> lost = DroppedFilters(e, c.config);
      !lost.empty()) {
    return absl::InvalidArgumentError(fmt::format(
        "{}: Linux's ivbep driver would count this event without {}, so "
        "perf cannot count it as asked; count it with the direct backend "
        "(UNCORE_BACKEND=direct)",
        e.text, common::Join(lost, " and ")));
  }
  for (const spec::FilterValue& f : enc.filters) {
    if (f.value == 0) continue;
    const std::string_view reg = box.filters[f.filter].name;
    const ivytown::KernelFilterPacking& packing = k.packing[f.filter];
    if (packing.config == 0) {
      return absl::InvalidArgumentError(fmt::format(
          "{}: the kernel's {} driver exposes no filter register, so {} "
          "cannot be set through perf; use the direct backend",
          e.text, KernelShortName(k), reg));
    }
    if (instance >= k.filter_instances) {
      return absl::InvalidArgumentError(fmt::format(
          "{}: the kernel's driver has no match/mask device for {} (only "
          "for the first {} instances), so {} cannot be set through perf; "
          "use the direct backend or another instance",
          e.text, box.instances[instance].name, k.filter_instances, reg));
    }
    (packing.config == 1 ? c.config1 : c.config2) |= f.value << packing.shift;
  }
  return c;
}

}  // namespace

absl::StatusOr<std::vector<PerfCounter>> PlanPerfCounters(
    const ProgramRequest& request, const PmuCatalog& pmus) {
  // Sockets this machine does not have are an error, as with direct: none
  // of them would be counted, and the report would say nothing of it.
  if (pmus.num_sockets > 0) {
    std::vector<int> missing;
    for (int s : request.sockets) {
      if ((s < 0 || s >= pmus.num_sockets) &&
          std::find(missing.begin(), missing.end(), s) == missing.end()) {
        missing.push_back(s);
      }
    }
    if (!missing.empty()) {
      // "2, 5-63"
      std::sort(missing.begin(), missing.end());
      std::vector<std::string> ranges;
      for (size_t i = 0; i < missing.size();) {
        size_t j = i;
        while (j + 1 < missing.size() && missing[j + 1] == missing[j] + 1) ++j;
        ranges.push_back(j == i ? fmt::format("{}", missing[i])
                                : fmt::format("{}-{}", missing[i], missing[j]));
        i = j + 1;
      }
      return absl::InvalidArgumentError(fmt::format(
          "socket{} {} {} not exist: this machine has {} socket{} ({}); "
          "UNCORE_SOCKETS (SessionOptions::sockets) names sockets among them",
          missing.size() == 1 ? "" : "s", fmt::join(ranges, ", "),
          missing.size() == 1 ? "does" : "do", pmus.num_sockets,
          pmus.num_sockets == 1 ? "" : "s",
          pmus.num_sockets == 1 ? std::string("0")
                                : fmt::format("0-{}", pmus.num_sockets - 1)));
    }
  }
  std::vector<PerfCounter> out;
  auto wanted = [&](int socket) {
    return request.sockets.empty() ||
           std::find(request.sockets.begin(), request.sockets.end(), socket) !=
               request.sockets.end();
  };
  auto add_on_sockets = [&](PerfCounter c) {
    for (size_t i = 0; i < c.pmu->cpus.size(); ++i) {
      if (c.pmu->sockets[i] < 0 || !wanted(c.pmu->sockets[i])) continue;
      c.cpu = c.pmu->cpus[i];
      c.socket = c.pmu->sockets[i];
      out.push_back(c);
    }
  };
  for (size_t e = 0; e < request.events.size(); ++e) {
    const spec::EventSpec& spec = request.events[e];
    PerfCounter c;
    c.event = static_cast<int>(e);
    c.spec = spec.text;
    if (spec.kind == spec::EventSpec::Kind::kGenericPerf) {
      // `uncore_imc/...` means every uncore_imc_N, as with perf.
      // In numeric order (uncore_imc_2 before uncore_imc_10); a counter's
      // instance is its PMU's place in that order, and reports name it by
      // its PMU (CounterPlacement::unit).
      std::vector<const Pmu*> targets;
      if (const Pmu* exact = pmus.Find(spec.pmu)) {
        targets.push_back(exact);
      } else {
        targets = PmuInstances(pmus, spec.pmu, std::nullopt);
      }
      if (targets.empty()) {
        std::vector<std::string> all;
        for (const Pmu& p : pmus.pmus) all.push_back(p.name);
        const std::vector<std::string> close =
            common::ClosestNames(spec.pmu, all);
        return absl::NotFoundError(fmt::format(
            "{}: no PMU named '{}' under /sys/bus/event_source/devices{}; "
            "PMUs here: {}",
            spec.text, spec.pmu,
            close.empty()
                ? ""
                : "; did you mean " + common::JoinAlternatives(close) + "?",
            common::Join(all, ", ")));
      }
      std::vector<std::pair<std::string, std::optional<uint64_t>>> terms;
      for (const spec::PerfTerm& t : spec.perf_terms) {
        terms.emplace_back(t.name, t.value);
      }
      for (size_t i = 0; i < targets.size(); ++i) {
        const Pmu* pmu = targets[i];
        absl::StatusOr<Pmu::Encoded> enc = pmu->Encode(terms);
        if (!enc.ok()) {
          return absl::Status(enc.status().code(),
                              fmt::format("{}: {}", spec.text,
                                          common::StatusMessage(enc.status())));
        }
        if (pmu->cpus.empty()) {
          return absl::NotFoundError(fmt::format(
              "{}: PMU {} lists no CPU to open it on", spec.text, pmu->name));
        }
        c.pmu = pmu;
        c.config = enc->config;
        c.scale = enc->scale;
        c.unit = enc->unit;
        c.instance = static_cast<int>(i);
        add_on_sockets(c);
      }
      continue;
    }
    if (spec.box == nullptr) {
      return absl::InvalidArgumentError(
          fmt::format("{}: not a countable event", spec.text));
    }
    UNCORE_ASSIGN_OR_RETURN(spec::Encoding enc, spec::EncodeEvent(spec));
    const ivytown::KernelView& k = spec.box->kernel;
    const int instances = spec.box->num_instances();
    for (int i = 0; i < instances; ++i) {
      if (!spec.instances.all() && !spec.instances.Contains(i)) continue;
      const std::string name = KernelPmuName(k, i);
      const Pmu* pmu = i < k.boxes ? pmus.Find(name) : nullptr;
      if (pmu == nullptr) {
        if (spec.instances.all() && i > 0 &&
            !pmus.NamesStartingWith(KernelPmuName(k, 0)).empty()) {
          continue;  // fewer boxes on this part (CBos: one per core)
        }
        return absl::NotFoundError(fmt::format(
            "{}: the perf PMU {} for {} is not here{}; uncore PMUs here: {} "
            "(without any, the kernel's uncore driver is not loaded or does "
            "not know this CPU; try UNCORE_BACKEND=direct on IvyTown)",
            spec.text, name, spec.box->instances[i].name,
            i >= k.boxes
                ? fmt::format(" (the kernel's driver registers {} {} PMUs)",
                              k.boxes, KernelShortName(k))
                : "",
            UncorePmuList(pmus)));
      }
      UNCORE_ASSIGN_OR_RETURN(c.config, KernelConfig(spec, enc, k, i));
      c.pmu = pmu;
      c.box = spec.box->type;
      c.instance = i;
      c.box_counters = std::min<int>(k.counters, spec.box->num_counters) +
                       (spec.box->fixed_counter ? 1 : 0);
      if (!enc.fixed_counter) {
        c.manual_counter_mask = enc.counter_mask;
        c.kernel_counter_mask =
            KernelCounterMask(spec.box->type, c.config.config, k.counters);
      }
      add_on_sockets(c);
    }
  }
  // Read-plan order: event, then socket, then instance.
  std::stable_sort(
      out.begin(), out.end(), [](const PerfCounter& a, const PerfCounter& b) {
        return std::tie(a.event, a.socket) < std::tie(b.event, b.socket);
      });
  return out;
}

std::vector<PerfGroupPlan> GroupPerfCounters(
    const std::vector<PerfCounter>& counters, bool allow_multiplexing) {
  std::vector<PerfGroupPlan> planned;
  for (size_t i = 0; i < counters.size(); ++i) {
    const PerfCounter& c = counters[i];
    PerfGroupPlan* g = nullptr;
    if (!allow_multiplexing) {
      for (PerfGroupPlan& p : planned) {
        if (p.pmu == c.pmu && p.cpu == c.cpu) g = &p;
      }
    }
    if (g == nullptr) {
      planned.push_back({c.pmu, c.cpu, c.socket, {}});
      g = &planned.back();
    }
    g->entries.push_back(static_cast<int>(i));
  }
  return planned;
}

std::optional<int> ReadParanoid(std::string_view path) {
  std::ifstream in{std::string(path)};
  int v = 0;
  if (in >> v) return v;
  return std::nullopt;
}

absl::StatusOr<std::unique_ptr<PerfDevice>> PerfDevice::Open(
    const Options& options) {
  UNCORE_ASSIGN_OR_RETURN(PmuCatalog pmus, DiscoverPmus(options.sysfs_root));
  return std::unique_ptr<PerfDevice>(new PerfDevice(options, std::move(pmus)));
}

PerfDevice::PerfDevice(Options options, PmuCatalog pmus)
    : options_(std::move(options)), pmus_(std::move(pmus)) {}

PerfDevice::~PerfDevice() { CloseAll(); }

void PerfDevice::CloseAll() {
  for (Group& g : groups_) {
    for (int fd : g.fds) close(fd);
  }
  groups_.clear();
}

absl::Status PerfDevice::OpenCounter(const PerfCounter& c, int group_fd,
                                     int* fd) const {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  attr.size = sizeof(attr);
  attr.type = c.pmu->type;
  attr.config = c.config.config;
  attr.config1 = c.config.config1;
  attr.config2 = c.config.config2;
  attr.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
                     PERF_FORMAT_TOTAL_TIME_RUNNING;
  attr.disabled = group_fd < 0 ? 1 : 0;
  const int64_t r = syscall(SYS_perf_event_open, &attr, /*pid=*/-1, c.cpu,
                            group_fd, PERF_FLAG_FD_CLOEXEC);
  if (r >= 0) {
    *fd = common::KeepAboveStdio(static_cast<int>(r));
    if (*fd >= 0) return absl::OkStatus();
  }
  const int err = errno;
  const std::string what =
      fmt::format("perf_event_open of {} on {} ({}) on CPU {}", c.spec,
                  c.pmu->name, c.config.ToString(), c.cpu);
  switch (err) {
    case EACCES:
    case EPERM: {
      const std::optional<int> paranoid = ReadParanoid(options_.paranoid_path);
      return absl::PermissionDeniedError(fmt::format(
          "{} was refused ({}): counting a socket's uncore system-wide needs "
          "CAP_PERFMON (or CAP_SYS_ADMIN, i.e. root) or "
          "kernel.perf_event_paranoid <= 0, and it is {}; run as root, "
          "`sudo setcap cap_perfmon+ep PROGRAM`, or "
          "`sudo sysctl kernel.perf_event_paranoid=0`",
          what, std::strerror(err),
          paranoid ? std::to_string(*paranoid) : "unreadable"));
    }
    case ENOENT:
    case EINVAL:
    case EOPNOTSUPP:
      return absl::InvalidArgumentError(fmt::format(
          "{} was rejected ({}): the PMU does not accept this config; its "
          "format fields are {}",
          what, std::strerror(err), c.pmu->FormatNames()));
    case EBUSY:
      return absl::UnavailableError(fmt::format(
          "{}: the counters are busy ({}): another agent holds them; stop it "
          "and retry",
          what, std::strerror(err)));
    case ENODEV:
      return absl::FailedPreconditionError(fmt::format(
          "{}: CPU {} is offline or the PMU cannot count there ({})", what,
          c.cpu, std::strerror(err)));
    case EMFILE:
    case ENFILE:
      return absl::ResourceExhaustedError(
          fmt::format("{}: out of file descriptors ({}); raise `ulimit -n`",
                      what, std::strerror(err)));
    default:
      return absl::UnknownError(
          fmt::format("{} failed: {}", what, std::strerror(err)));
  }
}

absl::Status PerfDevice::Program(const ProgramRequest& request) {
  if (!groups_.empty()) {
    return absl::FailedPreconditionError(
        "the perf device is already programmed: Release it first");
  }
  UNCORE_ASSIGN_OR_RETURN(std::vector<PerfCounter> counters,
                          PlanPerfCounters(request, pmus_));
  UNCORE_ASSIGN_OR_RETURN(std::vector<std::string> warnings,
                          ReviewKernelPlacement(request, counters));
  if (counters.empty()) {
    return absl::InvalidArgumentError(
        "no counter to open: no event was requested, or none is on the "
        "sockets asked for");
  }
  // Groups: one per (PMU, CPU), in read-plan order.
  const std::vector<PerfGroupPlan> planned =
      GroupPerfCounters(counters, request.allow_multiplexing);
  for (const PerfGroupPlan& g : planned) {
    const PerfCounter& first = counters[g.entries.front()];
    const size_t limit = first.box_counters > 0
                             ? static_cast<size_t>(first.box_counters)
                             : kMaxGroupSize;
    if (g.entries.size() > limit) {
      std::vector<std::string> names;
      for (int i : g.entries) {
        names.push_back(request.events[counters[i].event].text);
      }
      return absl::InvalidArgumentError(fmt::format(
          "{} events on {} ({}), which has {} counters: count fewer at once, "
          "or allow multiplexing (SessionOptions::allow_multiplexing, "
          "UNCORE_MULTIPLEX=1) to have the kernel rotate them and scale the "
          "counts",
          g.entries.size(), g.pmu->name, common::Join(names, ", "), limit));
    }
  }
  // Open, leader first; on any failure close everything.
  std::vector<Group> groups;
  auto close_all = [&] {
    for (Group& g : groups) {
      for (int fd : g.fds) close(fd);
    }
  };
  for (const PerfGroupPlan& p : planned) {
    Group g;
    for (int i : p.entries) {
      int fd = -1;
      absl::Status s = OpenCounter(counters[i], g.leader_fd, &fd);
      if (!s.ok()) {
        for (int f : g.fds) close(f);
        close_all();
        return s;
      }
      if (g.leader_fd < 0) g.leader_fd = fd;
      g.fds.push_back(fd);
      g.entries.push_back(i);
    }
    g.members = g.fds.size();
    g.read_bytes = (3 + g.fds.size()) * sizeof(uint64_t);
    groups.push_back(std::move(g));
  }
  for (const Group& g : groups) {
    if (ioctl(g.leader_fd, PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP) != 0 ||
        ioctl(g.leader_fd, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP) != 0) {
      const int err = errno;
      close_all();
      return absl::UnknownError(
          fmt::format("enabling a perf group failed: {}", std::strerror(err)));
    }
  }
  enabled_at_ns_ = common::MonotonicNowNs();
  groups_ = std::move(groups);
  counters_ = std::move(counters);
  warnings_ = std::move(warnings);
  read_plan_.clear();
  for (size_t i = 0; i < counters_.size(); ++i) {
    const PerfCounter& c = counters_[i];
    CounterPlacement p;
    p.event = c.event;
    p.socket = c.socket;
    p.unit = c.pmu->name;
    p.instance = c.instance;
    p.counter = 0;
    p.width = 64;
    read_plan_.push_back(p);
  }
  estimated_ = std::make_unique<std::atomic<bool>[]>(counters_.size());
  for (size_t i = 0; i < counters_.size(); ++i) estimated_[i] = false;
  return absl::OkStatus();
}

absl::Status PerfDevice::TakeSnapshot(Snapshot* out) {
  out->valid = false;
  if (groups_.empty()) {
    return absl::FailedPreconditionError(
        "TakeSnapshot before Program: nothing is programmed");
  }
  if (out->values.size() != counters_.size()) {
    out->values.assign(counters_.size(), 0);
  }
  uint64_t buffer[3 + kMaxGroupSize];
  for (size_t gi = 0; gi < groups_.size(); ++gi) {
    const Group& g = groups_[gi];
    const ssize_t got = read(g.leader_fd, buffer, g.read_bytes);
    if (got != static_cast<ssize_t>(g.read_bytes) || buffer[0] != g.members)
        [[unlikely]] {
      return ReadFailed(g, got, errno, out);
    }
    const uint64_t enabled = buffer[1];
    const uint64_t running = buffer[2];
    if (gi == 0) {
      // The kernel's enabled time at the moment it read the counters: the
      // time that goes with these counts, however long read() took (a
      // cross-CPU read can take tens of microseconds, more under load).
      out->timestamp_ns = enabled_at_ns_ + enabled;
    }
    if (running < enabled) [[unlikely]] {
      Multiplexed(g, buffer, enabled, running, out);
      continue;
    }
    for (size_t k = 0; k < g.members; ++k) {
      out->values[g.entries[k]] = buffer[3 + k];
    }
  }
  out->valid = true;
  return absl::OkStatus();
}

absl::Status PerfDevice::ReadFailed(const Group& g, ssize_t got, int err,
                                    Snapshot* out) const {
  std::fill(out->values.begin(), out->values.end(), 0);
  return absl::DataLossError(
      fmt::format("reading a perf group of {} failed: {}",
                  counters_[g.entries.front()].pmu->name,
                  got < 0 ? std::strerror(err) : "short read"));
}

void PerfDevice::Multiplexed(const Group& g, const uint64_t* buffer,
                             uint64_t enabled, uint64_t running,
                             Snapshot* out) {
  // Multiplexed: scaled to the whole enabled time.
  for (size_t k = 0; k < g.members; ++k) {
    const int entry = g.entries[k];
    out->values[entry] =
        running == 0
            ? 0
            : static_cast<uint64_t>(static_cast<long double>(buffer[3 + k]) *
                                    static_cast<long double>(enabled) /
                                    static_cast<long double>(running));
    if (!estimated_[entry].load(std::memory_order_relaxed)) {
      estimated_[entry].store(true, std::memory_order_relaxed);
    }
  }
}

absl::Status PerfDevice::Release() {
  CloseAll();
  return absl::OkStatus();
}

bool PerfDevice::estimated(size_t i) const {
  return estimated_ != nullptr && i < counters_.size() &&
         estimated_[i].load(std::memory_order_relaxed);
}

}  // namespace uncore::devices::perf
