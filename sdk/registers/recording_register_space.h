// RecordingRegisterSpace: an in-memory RegisterSpace for tests.  Every
// register reads 0 until written; every access is recorded in order, and
// failures can be injected to test rollback.
//
//   RecordingRegisterSpace space;
//   UNCORE_RETURN_IF_ERROR(space.WriteMsr(0, 0x0D70, 0x00400137));
//   // space.accesses()[0] == {kWrite, kMsr, cpu 0, 0x0D70, 0x00400137}
//   space.FailNthWrite(2);          // the second write from now fails
//   space.FailMsrWrites(0x0C00);    // every write to MSR 0xC00 fails
//
// A failed access is recorded (with `failed` set) and changes nothing.
// ReadMsrBatch is the default one-by-one loop, so each read is recorded.
//
// Guarantees: thread-safe (one mutex); never prints.  A test tool: it
// allocates on every access.
#ifndef UNCORE_SDK_REGISTERS_RECORDING_REGISTER_SPACE_H_
#define UNCORE_SDK_REGISTERS_RECORDING_REGISTER_SPACE_H_

#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "sdk/registers/register_space.h"

namespace uncore::registers {

struct RegisterAccess {
  enum class Op : uint8_t { kRead, kWrite };
  enum class Space : uint8_t { kMsr, kPci };

  Op op = Op::kRead;
  Space space = Space::kMsr;
  int cpu = -1;          // MSR accesses
  PciAddress pci;        // PCI accesses
  uint32_t address = 0;  // MSR number or PCI config offset
  uint64_t value = 0;    // written, or read back
  bool failed = false;   // an injected failure: the register is unchanged

  bool operator==(const RegisterAccess&) const = default;
  // "write msr cpu0 0xd70 = 0x400137", "read pci 0000:7f:10.4+0xd8 = 0x0".
  std::string ToString() const;
};

class RecordingRegisterSpace : public RegisterSpace {
 public:
  RecordingRegisterSpace() = default;
  RecordingRegisterSpace(const RecordingRegisterSpace&) = delete;
  RecordingRegisterSpace& operator=(const RecordingRegisterSpace&) = delete;

  absl::Status ReadMsr(int cpu, uint32_t msr, uint64_t* value) override;
  absl::Status WriteMsr(int cpu, uint32_t msr, uint64_t value) override;
  absl::Status ReadPci(const PciAddress& fn, uint32_t offset,
                       uint32_t* value) override;
  absl::Status WritePci(const PciAddress& fn, uint32_t offset,
                        uint32_t value) override;

  // The accesses so far, in order (a copy).
  std::vector<RegisterAccess> accesses() const;
  // Forgets the recorded accesses (register values stay).
  void Clear();
  int CountWrites() const;
  int CountReads() const;

  // Register values, without recording an access.
  void SetMsr(int cpu, uint32_t msr, uint64_t value);
  void SetPci(const PciAddress& fn, uint32_t offset, uint32_t value);
  uint64_t PeekMsr(int cpu, uint32_t msr) const;
  uint32_t PeekPci(const PciAddress& fn, uint32_t offset) const;

  // Failure injection.  The n-th write from now on (1: the next one) fails
  // with `status`; one pending FailNthWrite at a time.
  void FailNthWrite(int n, absl::Status status = DefaultFailure());
  // Every write (or read) of MSR `msr` on any CPU, or of `offset` in `fn`,
  // fails with `status` until ClearFailures().
  void FailMsrWrites(uint32_t msr, absl::Status status = DefaultFailure());
  void FailMsrReads(uint32_t msr, absl::Status status = DefaultFailure());
  void FailPciWrites(const PciAddress& fn, uint32_t offset,
                     absl::Status status = DefaultFailure());
  void FailPciReads(const PciAddress& fn, uint32_t offset,
                    absl::Status status = DefaultFailure());
  void ClearFailures();

  static absl::Status DefaultFailure() {
    return absl::UnavailableError("injected register failure");
  }

 private:
  using PciKey = std::pair<PciAddress, uint32_t>;
  using MsrKey = std::pair<int, uint32_t>;

  // Checks the injected failures for one access; mu_ held.
  absl::Status InjectedFailure(const RegisterAccess& access);

  mutable std::mutex mu_;
  std::vector<RegisterAccess> accesses_;
  absl::flat_hash_map<MsrKey, uint64_t> msrs_;
  absl::flat_hash_map<PciKey, uint32_t> pci_;
  int writes_until_failure_ = 0;  // 0: none pending
  absl::Status nth_write_failure_;
  absl::flat_hash_map<uint32_t, absl::Status> msr_write_failures_;
  absl::flat_hash_map<uint32_t, absl::Status> msr_read_failures_;
  absl::flat_hash_map<PciKey, absl::Status> pci_write_failures_;
  absl::flat_hash_map<PciKey, absl::Status> pci_read_failures_;
};

}  // namespace uncore::registers

#endif  // UNCORE_SDK_REGISTERS_RECORDING_REGISTER_SPACE_H_
