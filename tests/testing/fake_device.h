// Devices made in tests: the Device boilerplate once.
//
//   class CountingDevice : public test_devices::FakeDevice {
//     absl::Status TakeSnapshot(devices::Snapshot* out) override { ... }
//   };
//
// FakeDevice::Program gives each requested event one read-plan entry (entry
// i counts event i, on box instance i), Release does nothing, nothing is
// ever frozen.  MemoryDevice's snapshots cost almost nothing: value i of
// the n-th snapshot is n * i.  BumpDevice's counters move only when a test
// says so (Bump, from any thread), its snapshots stamped CLOCK_MONOTONIC.
#ifndef UNCORE_TESTS_TESTING_FAKE_DEVICE_H_
#define UNCORE_TESTS_TESTING_FAKE_DEVICE_H_

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "sdk/devices/device.h"

namespace uncore::test_devices {

class FakeDevice : public devices::Device {
 public:
  explicit FakeDevice(std::string name = "fake") : name_(std::move(name)) {}
  std::string_view name() const override { return name_; }
  absl::Status Program(const devices::ProgramRequest& request) override {
    plan_.assign(request.events.size(), devices::CounterPlacement{});
    for (size_t e = 0; e < plan_.size(); ++e) {
      plan_[e].event = static_cast<int>(e);
      plan_[e].instance = static_cast<int>(e);
    }
    return absl::OkStatus();
  }
  const std::vector<devices::CounterPlacement>& read_plan() const override {
    return plan_;
  }
  absl::Status Release() override { return absl::OkStatus(); }
  uint64_t frozen_ns() const override { return 0; }

 protected:
  std::vector<devices::CounterPlacement> plan_;

 private:
  std::string name_;
};

class MemoryDevice : public FakeDevice {
 public:
  MemoryDevice() : FakeDevice("memory") {}
  absl::Status TakeSnapshot(devices::Snapshot* out) override {
    ++tick_;
    for (size_t i = 0; i < plan_.size(); ++i) out->values[i] = tick_ * i;
    out->timestamp_ns = tick_;
    out->valid = true;
    return absl::OkStatus();
  }

 private:
  uint64_t tick_ = 0;
};

// A snapshot of `n` counters that tests move (seq_cst loads), stamped
// with the steady clock.
inline absl::Status SnapshotOf(const std::atomic<uint64_t>* counters, size_t n,
                               devices::Snapshot* out) {
  for (size_t i = 0; i < n; ++i) {
    out->values[i] = counters[i].load(std::memory_order_seq_cst);
  }
  out->timestamp_ns = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::steady_clock::now().time_since_epoch())
          .count());
  out->valid = true;
  return absl::OkStatus();
}

class BumpDevice : public FakeDevice {
 public:
  static constexpr size_t kCounters = 8;
  BumpDevice() : FakeDevice("bump") {}
  absl::Status TakeSnapshot(devices::Snapshot* out) override {
    return SnapshotOf(counters_, std::min(plan_.size(), kCounters), out);
  }
  void Bump(size_t counter, uint64_t n) {
    counters_[counter].fetch_add(n, std::memory_order_seq_cst);
  }
  void Set(size_t counter, uint64_t v) {
    counters_[counter].store(v, std::memory_order_seq_cst);
  }
  uint64_t Value(size_t counter) const {
    return counters_[counter].load(std::memory_order_seq_cst);
  }

 private:
  std::atomic<uint64_t> counters_[kCounters] = {};
};

}  // namespace uncore::test_devices

#endif  // UNCORE_TESTS_TESTING_FAKE_DEVICE_H_
