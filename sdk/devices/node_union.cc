#include "sdk/devices/node_union.h"

#include <chrono>
#include <thread>

#include "sdk/common/cpu_relax.h"

namespace uncore::devices {
namespace {

constexpr uint64_t kNodeBusy = uint64_t{1} << 63;
constexpr uint64_t kNodeCountMask = (uint64_t{1} << 32) - 1;

}  // namespace

uint64_t NodeUnionTable::KeyOf(std::string_view path) {
  // FNV-1a, 64 bits; 0 marks a free slot.
  uint64_t h = 0xcbf29ce484222325ULL;
  for (const char c : path) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h == 0 ? 1 : h;
}

std::atomic<uint64_t>* NodeUnionTable::WordOf(std::string_view path) const {
  if (slots_ == nullptr) return nullptr;
  const uint64_t key = KeyOf(path);
  for (size_t probe = 0; probe < kNodeUnionSlots; ++probe) {
    NodeUnionSlot& slot = slots_[(key + probe) % kNodeUnionSlots];
    uint64_t seen = slot.key.load(std::memory_order_acquire);
    if (seen == 0 &&
        slot.key.compare_exchange_strong(seen, key, std::memory_order_acq_rel,
                                         std::memory_order_acquire)) {
      return &slot.word;
    }
    if (seen == key) return &slot.word;
  }
  return nullptr;
}

NodeStep StepNodeWord(std::atomic<uint64_t>& word, bool enter,
                      std::chrono::nanoseconds timeout,
                      const std::atomic<bool>* cancel) {
  uint64_t w = word.load(std::memory_order_acquire);
  int waited = 0;
  std::chrono::steady_clock::time_point deadline{};
  for (;;) {
    if ((w & kNodeBusy) != 0) {
      // Another process takes its snapshot: spin through a short one, then
      // yield, then nap in 20 us steps until the deadline.
      if (waited < 64) {
        common::CpuRelax();
      } else if (waited < 80) {
        std::this_thread::yield();
      } else {
        if (cancel != nullptr && cancel->load(std::memory_order_acquire)) {
          return NodeStep::kTimedOut;
        }
        const auto now = std::chrono::steady_clock::now();
        if (deadline == std::chrono::steady_clock::time_point{}) {
          deadline = now + timeout;
        } else if (now >= deadline) {
          return NodeStep::kTimedOut;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(20));
      }
      ++waited;
      w = word.load(std::memory_order_acquire);
      continue;
    }
    const uint64_t count = w & kNodeCountMask;
    if (!enter && count == 0) return NodeStep::kBroken;
    const uint64_t next = enter ? w + 1 : w - 1;
    const bool transition = enter ? count == 0 : count == 1;
    if (word.compare_exchange_weak(w, transition ? next | kNodeBusy : next,
                                   std::memory_order_acq_rel,
                                   std::memory_order_acquire)) {
      if (!transition) return NodeStep::kJoined;
      return enter ? NodeStep::kOpened : NodeStep::kClosed;
    }
  }
}

void ReleaseNodeWord(std::atomic<uint64_t>& word) {
  // Only the holder changes a busy word (the others' compare-and-swaps
  // expect it not busy).
  word.store(word.load(std::memory_order_relaxed) & ~kNodeBusy,
             std::memory_order_release);
}

}  // namespace uncore::devices
