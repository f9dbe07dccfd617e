// FdTable: a lazily filled table of open file descriptors keyed by CPU
// number or packed PCI address, read without a lock (LinuxRegisterSpace's
// msr and PCI config files).
//
//   FdTable fds(/*capacity_log2=*/12);
//   absl::StatusOr<int> entry = fds.FindOrOpen(cpu, [&]() -> StatusOr<int> {
//     ... return EncodeFdEntry(fd, /*msr_safe=*/false, /*read_only=*/false);
//   });
//   int fd = FdOfEntry(*entry);
//
// Entries hold fd * 4 + (msr_safe << 1) + read_only (EncodeFdEntry).
// Open addressing over a fixed array of 64-bit slots, each (key << 32) |
// (entry + 1), 0 when empty.  Slots only ever go from empty to full, under
// the table's mutex; readers probe without a lock.  Past 3/4 load, entries
// go to a mutex-guarded overflow map.
//
// Guarantees: thread-safe; Find takes no lock and allocates nothing unless
// the table overflowed.  The destructor closes every descriptor.
#ifndef UNCORE_SDK_REGISTERS_FD_TABLE_H_
#define UNCORE_SDK_REGISTERS_FD_TABLE_H_

#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"

namespace uncore::registers {

inline constexpr int kFdReadOnlyBit = 1;
inline constexpr int kFdMsrSafeBit = 2;
inline constexpr int kFdShift = 2;

inline int EncodeFdEntry(int fd, bool msr_safe, bool read_only) {
  return (fd << kFdShift) | (msr_safe ? kFdMsrSafeBit : 0) |
         (read_only ? kFdReadOnlyBit : 0);
}
inline int FdOfEntry(int entry) { return entry >> kFdShift; }
inline bool EntryIsReadOnly(int entry) { return (entry & kFdReadOnlyBit) != 0; }
inline bool EntryIsMsrSafe(int entry) { return (entry & kFdMsrSafeBit) != 0; }

class FdTable {
 public:
  explicit FdTable(int capacity_log2)
      : shift_(64 - capacity_log2),
        mask_((size_t{1} << capacity_log2) - 1),
        slots_(new std::atomic<uint64_t>[mask_ + 1]) {
    for (size_t i = 0; i <= mask_; ++i) {
      slots_[i].store(0, std::memory_order_relaxed);
    }
  }
  ~FdTable() {
    for (size_t i = 0; i <= mask_; ++i) {
      const uint64_t slot = slots_[i].load(std::memory_order_relaxed);
      if (slot != 0) ::close(FdOfEntry(DecodeEntry(slot)));
    }
    for (const auto& [key, entry] : overflow_) ::close(FdOfEntry(entry));
  }
  FdTable(const FdTable&) = delete;
  FdTable& operator=(const FdTable&) = delete;

  // The entry of `key`, or -1.  Lock-free unless the table overflowed.
  int Find(uint32_t key) const {
    const int entry = FindInSlots(key);
    if (entry >= 0 || !has_overflow_.load(std::memory_order_acquire)) {
      return entry;
    }
    std::lock_guard<std::mutex> lock(mu_);
    auto it = overflow_.find(key);
    return it == overflow_.end() ? -1 : it->second;
  }

  // The entry of `key`; when absent, `open()` (a StatusOr<int>) makes it,
  // under the table's lock so that a key is opened once.  Failures are not
  // remembered: a later call tries again.
  template <typename Open>
  absl::StatusOr<int> FindOrOpen(uint32_t key, Open&& open) {
    if (const int entry = Find(key); entry >= 0) return entry;
    std::lock_guard<std::mutex> lock(mu_);
    if (const int entry = FindInSlots(key); entry >= 0) return entry;
    if (auto it = overflow_.find(key); it != overflow_.end()) {
      return it->second;
    }
    absl::StatusOr<int> entry = open();
    if (!entry.ok()) return entry;
    InsertLocked(key, *entry);
    return entry;
  }

 private:
  static int DecodeEntry(uint64_t slot) {
    return static_cast<int>(static_cast<uint32_t>(slot) - 1);
  }
  size_t Home(uint32_t key) const {
    return static_cast<size_t>((key * uint64_t{0x9E3779B97F4A7C15}) >> shift_);
  }
  int FindInSlots(uint32_t key) const {
    for (size_t i = Home(key), probes = 0; probes <= mask_;
         i = (i + 1) & mask_, ++probes) {
      const uint64_t slot = slots_[i].load(std::memory_order_acquire);
      if (slot == 0) return -1;
      if (static_cast<uint32_t>(slot >> 32) == key) return DecodeEntry(slot);
    }
    return -1;
  }
  void InsertLocked(uint32_t key, int entry) {
    if (used_ + 1 > (mask_ + 1) / 4 * 3) {
      overflow_.emplace(key, entry);
      has_overflow_.store(true, std::memory_order_release);
      return;
    }
    size_t i = Home(key);
    while (slots_[i].load(std::memory_order_relaxed) != 0) i = (i + 1) & mask_;
    slots_[i].store((uint64_t{key} << 32) | (static_cast<uint32_t>(entry) + 1),
                    std::memory_order_release);
    ++used_;
  }

  const int shift_;
  const size_t mask_;
  const std::unique_ptr<std::atomic<uint64_t>[]> slots_;
  mutable std::mutex mu_;
  size_t used_ = 0;                              // guarded by mu_
  absl::flat_hash_map<uint32_t, int> overflow_;  // guarded by mu_
  std::atomic<bool> has_overflow_{false};
};

}  // namespace uncore::registers

#endif  // UNCORE_SDK_REGISTERS_FD_TABLE_H_
