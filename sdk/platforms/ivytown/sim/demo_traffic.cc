#include "sdk/platforms/ivytown/sim/demo_traffic.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "sdk/common/quiet_thread.h"
#include "sdk/platforms/ivytown/model/box_descriptors.h"
#include "sdk/platforms/ivytown/model/event_catalog.h"

namespace uncore::sim {
namespace {

using ivytown::BoxType;
using Traffic = IvyTownUncore::Traffic;

constexpr double kLineBytes = 64;     // CAS_COUNT * 64 = bytes (§1.6)
constexpr double kFlitDataBytes = 8;  // QPI data bytes per flit
constexpr double kMissLatencySeconds = 100e-9;
constexpr double kQpiShareOfMemory = 0.1;  // SetActivity(bytes, lookups)
constexpr uint32_t kDrdOpcode = 0x182;     // IDI DRd (Table 2-18)
constexpr uint32_t kStateI = 1u << 0;      // LLC_LOOKUP state bits (L1242)
constexpr uint32_t kStateE = 1u << 2;
// Absorbs binary rounding (2e9 Hz * 1e-4 s is not exactly 200000).
constexpr double kEpsilon = 1e-6;

// The event's (code, ext) and the named unit mask's value, from the
// catalog; nullopt when the catalog lacks either.
std::optional<Traffic> EventTraffic(BoxType box, std::string_view event,
                                    std::string_view umask) {
  const ivytown::EventDescriptor* e = ivytown::FindEvent(box, event);
  if (e == nullptr) return std::nullopt;
  Traffic t;
  t.box = box;
  t.code = e->code;
  t.extended = e->extended;
  if (!umask.empty()) {
    const ivytown::UmaskDescriptor* u = e->FindUmask(umask);
    if (u == nullptr) return std::nullopt;
    t.umask = u->value;
  }
  return t;
}

// The rate of the box's clock domain (BoxDescriptor::clock).  The IRP's
// IO clock has no rate of its own in the model: it ticks with UCLK.
double ClockOf(const ivytown::BoxDescriptor& box,
               const DemoTrafficModel::ClockRates& r) {
  switch (box.clock) {
    case ivytown::ClockDomain::kDclk:
      return r.dclk_hz;
    case ivytown::ClockDomain::kQfclk:
      return r.qpi_hz;
    case ivytown::ClockDomain::kPclk:
      return r.pcu_hz;
    case ivytown::ClockDomain::kUclk:
    case ivytown::ClockDomain::kIoClk:
      return r.uclk_hz;
  }
  return r.uclk_hz;
}

}  // namespace

DemoTrafficModel::DemoTrafficModel(IvyTownUncore* sim)
    : DemoTrafficModel(sim, ClockRates{}) {}

DemoTrafficModel::DemoTrafficModel(IvyTownUncore* sim, ClockRates rates)
    : sim_(sim), rates_(rates), last_(std::chrono::steady_clock::now()) {
  const int sockets = sim_->num_sockets();
  carry_.assign(sockets,
                std::vector<std::vector<double>>(ivytown::kNumBoxTypes));
  cycles_issued_.assign(sockets,
                        std::vector<uint64_t>(ivytown::kNumBoxTypes, 0));
}

DemoTrafficModel::~DemoTrafficModel() { Stop(); }

void DemoTrafficModel::SetActivity(double memory_bytes_per_second,
                                   double llc_lookups_per_second) {
  Activity a = activity();
  a.memory_read_bytes_per_second =
      memory_bytes_per_second * SimulatedActivity::kReadShare;
  a.memory_write_bytes_per_second =
      memory_bytes_per_second * (1 - SimulatedActivity::kReadShare);
  a.llc_lookups_per_second = llc_lookups_per_second;
  a.qpi_data_bytes_per_second = memory_bytes_per_second * kQpiShareOfMemory;
  SetActivity(a);
}

absl::Status DemoTrafficModel::SetMemoryActivity(double bytes_per_second) {
  // What came before, at the previous rate.
  absl::Status advanced = Advance();
  const double rate = std::max(bytes_per_second, 0.0);
  SetActivity(rate, rate / 64);
  return advanced;
}

void DemoTrafficModel::SetActivity(const Activity& activity) {
  std::lock_guard<std::mutex> lock(mu_);
  activity_ = activity;
  streams_by_box_.clear();  // recomputed at the next advance
}

DemoTrafficModel::Activity DemoTrafficModel::activity() const {
  std::lock_guard<std::mutex> lock(mu_);
  return activity_;
}

std::chrono::nanoseconds DemoTrafficModel::simulated_time() const {
  std::lock_guard<std::mutex> lock(mu_);
  return simulated_;
}

// The streams of one box type, per instance, each with its rate per second.
// The order and number do not depend on the activity (carry_ indexes them).
std::vector<DemoTrafficModel::StreamRate> DemoTrafficModel::RatesFor(
    BoxType box) const {
  const Activity& a = activity_;
  const int n = ivytown::Box(box).num_instances();
  std::vector<StreamRate> out;
  auto add = [&](std::optional<Traffic> t, double per_second_total) {
    if (!t) return;
    for (int i = 0; i < n; ++i) {
      Traffic x = *t;
      x.instance = i;
      out.push_back({x, std::max(per_second_total, 0.0) / n});
    }
  };
  const double read_lines = a.memory_read_bytes_per_second / kLineBytes;
  const double write_lines = a.memory_write_bytes_per_second / kLineBytes;
  const double misses = a.llc_lookups_per_second * a.llc_miss_ratio;
  const double hits = a.llc_lookups_per_second - misses;
  switch (box) {
    case BoxType::kImc:
      add(EventTraffic(box, "CAS_COUNT", "RD"), read_lines);
      add(EventTraffic(box, "CAS_COUNT", "WR"), write_lines);
      break;
    case BoxType::kHa:
      add(EventTraffic(box, "REQUESTS", "READS"), read_lines);
      add(EventTraffic(box, "REQUESTS", "WRITES"), write_lines);
      break;
    case BoxType::kCbo: {
      std::optional<Traffic> hit = EventTraffic(box, "LLC_LOOKUP", "DATA_READ");
      std::optional<Traffic> miss = hit;
      if (hit) hit->state_mask = kStateE;
      if (miss) miss->state_mask = kStateI;
      add(hit, hits);
      add(miss, misses);
      for (std::string_view name : {"TOR_INSERTS", "TOR_OCCUPANCY"}) {
        std::optional<Traffic> t = EventTraffic(box, name, "MISS_OPCODE");
        if (t) {
          t->opcode = kDrdOpcode;
          t->nid_mask = 0xFFFF;
        }
        // Little's law: occupancy summed over cycles = inserts * latency.
        add(t, name == "TOR_INSERTS"
                   ? misses
                   : misses * kMissLatencySeconds * rates_.uclk_hz);
      }
      break;
    }
    case BoxType::kQpi: {
      const double flits = a.qpi_data_bytes_per_second / kFlitDataBytes;
      add(EventTraffic(box, "TxL_FLITS_G0", "DATA"), flits);
      add(EventTraffic(box, "RxL_FLITS_G0", "DATA"), flits);
      add(EventTraffic(box, "RxL_FLITS_G0", "IDLE"), rates_.qpi_hz * n - flits);
      break;
    }
    case BoxType::kPcu:
      for (std::string_view name : {"FREQ_BAND0_CYCLES", "FREQ_BAND1_CYCLES",
                                    "FREQ_BAND2_CYCLES", "FREQ_BAND3_CYCLES"}) {
        std::optional<Traffic> t = EventTraffic(box, name, "");
        if (t) {
          t->band_frequency = static_cast<uint32_t>(
              std::max(a.uncore_frequency_mhz, 0.0) / 100.0);
        }
        add(t, rates_.pcu_hz);  // one occurrence per cycle
      }
      break;
    default:
      break;
  }
  return out;
}

absl::Status DemoTrafficModel::AdvanceLocked(std::chrono::nanoseconds elapsed) {
  if (elapsed.count() <= 0) return absl::OkStatus();
  const double seconds = std::chrono::duration<double>(elapsed).count();
  const long double total_ns =
      static_cast<long double>((simulated_ + elapsed).count());
  for (int socket = 0; socket < sim_->num_sockets(); ++socket) {
    for (const ivytown::BoxDescriptor& box : ivytown::AllBoxes()) {
      const int b = static_cast<int>(box.type);
      // Clocks: floor(rate * simulated time), so that no rounding drifts.
      uint64_t& issued = cycles_issued_[socket][b];
      const uint64_t target = static_cast<uint64_t>(std::floor(
          static_cast<long double>(ClockOf(box, rates_)) * total_ns / 1e9L +
          kEpsilon));
      const uint64_t cycles = target > issued ? target - issued : 0;
      issued = std::max(issued, target);
      // A box that counts nothing sees nothing (a snapshot advances the
      // model: it must cost little).
      if (!sim_->AnyCounterEnabled(socket, box.type)) {
        carry_[socket][b].clear();
        continue;
      }
      // Computed once per activity: an advance allocates nothing.
      if (streams_by_box_.empty()) {
        streams_by_box_.resize(ivytown::kNumBoxTypes);
        for (const ivytown::BoxDescriptor& any : ivytown::AllBoxes()) {
          streams_by_box_[static_cast<int>(any.type)] = RatesFor(any.type);
        }
      }
      const std::vector<StreamRate>& rates = streams_by_box_[b];
      std::vector<double>& carry = carry_[socket][b];
      carry.resize(rates.size(), 0.0);
      std::vector<IvyTownUncore::SpreadStream>& streams = streams_;
      streams.clear();
      for (size_t i = 0; i < rates.size(); ++i) {
        const double exact = carry[i] + rates[i].per_second * seconds;
        uint64_t total = static_cast<uint64_t>(std::floor(exact + kEpsilon));
        // No more than the box can increment per cycle (20 for a CBo,
        // L947): rates above it are clipped.
        const uint64_t cap =
            cycles * std::max<uint64_t>(box.max_increment_per_cycle, 1);
        total = std::min(total, cap);
        carry[i] = exact - static_cast<double>(total);
        if (total == cap) carry[i] = 0;  // clipped: the excess is dropped
        if (total != 0 && cycles != 0) {
          streams.push_back({rates[i].traffic, total});
        }
      }
      if (cycles == 0) continue;
      if (absl::Status s =
              sim_->InjectSpread(socket, box.type, streams, cycles);
          !s.ok()) {
        return s;
      }
    }
  }
  simulated_ += elapsed;
  return absl::OkStatus();
}

absl::Status DemoTrafficModel::Advance(uint64_t* now_ns) {
  std::lock_guard<std::mutex> lock(mu_);
  // steady_clock is CLOCK_MONOTONIC (libstdc++ and libc++ on Linux).
  const auto now = std::chrono::steady_clock::now();
  const auto elapsed =
      std::chrono::duration_cast<std::chrono::nanoseconds>(now - last_);
  last_ = now;
  if (now_ns != nullptr) {
    *now_ns = static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(
            now.time_since_epoch())
            .count());
  }
  return AdvanceLocked(elapsed);
}

absl::Status DemoTrafficModel::AdvanceBy(std::chrono::nanoseconds elapsed) {
  std::lock_guard<std::mutex> lock(mu_);
  return AdvanceLocked(elapsed);
}

void DemoTrafficModel::Start(std::chrono::milliseconds period) {
  if (thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(thread_mu_);
    stop_ = false;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    last_ = std::chrono::steady_clock::now();
    last_error_ = absl::OkStatus();
  }
  thread_ = common::StartQuietThread([this, period] {
    std::unique_lock<std::mutex> lock(thread_mu_);
    while (!stop_) {
      wake_.wait_for(lock, period, [this] { return stop_; });
      if (stop_) break;
      lock.unlock();
      absl::Status s = Advance();
      lock.lock();
      if (!s.ok()) {
        std::lock_guard<std::mutex> guard(mu_);
        last_error_ = s;
        break;
      }
    }
  });
}

void DemoTrafficModel::Stop() {
  {
    std::lock_guard<std::mutex> lock(thread_mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool DemoTrafficModel::running() const { return thread_.joinable(); }

absl::Status DemoTrafficModel::last_error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_error_;
}

}  // namespace uncore::sim
