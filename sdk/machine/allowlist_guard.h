// AllowListGuard: a registers::RegisterSpace that lets through only the
// registers of a platform's allow-list (data: an AllowList), on the CPUs and
// PCI functions the list gives each socket.  It wraps the Linux register
// space, so every access of a direct backend passes through it: IvyTown's
// (platforms/ivytown/device/open_direct_device.cc) and the Xeon 7500 / E7's
// (runtime/backends.cc) use this one guard with their platform's list
// (docs/architecture.md).
//
//   RecordingRegisterSpace raw;                     // or LinuxRegisterSpace
//   AllowListGuard guard(&raw, ivytown::RegisterAllowList(
//       SimulatedTopology(ivytown::Record(), 2)));
//   guard.WriteMsr(0, 0x0D10, 0x00400137);          // CBo0 CTL0: ok
//   guard.WriteMsr(0, 0x0010, 0);                   // TSC: PermissionDenied
//   guard.WriteMsr(0, 0x0D10, 0x00100000);          // rsv bit 20: refused
//
//   AllowListGuard xeon7500(&raw, nehalemex::RegisterAllowList(
//       nehalemex::Variant::kNehalemEx, topology));
//
// Each platform builds its list in its own folder: IvyTown's
// ivytown::RegisterAllowList (platforms/ivytown/device/ivytown_allowlist.h),
// the Xeon 7500 / E7's nehalemex::RegisterAllowList
// (platforms/nehalemex/device/nehalemex_allowlist.h).
//
// A write outside the list, or setting a bit outside the register's
// writable mask, returns PermissionDenied and never reaches the wrapped
// space.  Reads of registers not on the list are refused too (strict by
// default: nothing the SDK needs lies outside it); Options::
// allow_unlisted_reads lets them through.
//
// Guarantees: the guard indexes the list once, at construction; every check
// is an O(1) hash lookup, with no allocation and no lock unless it fails.
// Thread-safe when the wrapped space is.  The list builders are pure.
#ifndef UNCORE_SDK_MACHINE_ALLOWLIST_GUARD_H_
#define UNCORE_SDK_MACHINE_ALLOWLIST_GUARD_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "sdk/machine/topology.h"
#include "sdk/platforms/common/access_space.h"
#include "sdk/registers/register_space.h"

namespace uncore::machine {

// What an allowed register is.
enum class RegisterRole : uint8_t {
  kGlobalControl,
  kGlobalStatus,
  kGlobalConfig,
  kBoxControl,
  kBoxStatus,
  kCounterControl,
  kCounter,      // MSR counter, or the low dword of a PCI counter
  kCounterHigh,  // the high dword of a PCI counter
  kFilter,       // filters, match/mask and their configuration
  kFixedControl,
  kFixedCounter,      // MSR fixed counter, or the low dword of a PCI one
  kFixedCounterHigh,  // the high dword of a PCI fixed counter
  kOther,             // another PMON register of the platform
};

struct AllowedRegister {
  platforms::AccessSpace space = platforms::AccessSpace::kMsr;
  int socket = 0;                  // index into AllowList::socket_cpus
  registers::PciAddress function;  // PCI registers: the function holding it
  uint32_t address = 0;            // MSR number or PCI config offset
  RegisterRole role = RegisterRole::kCounter;
  uint64_t writable_mask = 0;  // bits a write may set
  // "CBo3 counter control 0", "U_MSR_PMON_GLOBAL_CTL",
  // "QPI port 0 filter Q_Py_PCI_PMON_PKT_MATCH0", "S1_MSR_MM_CFG".
  std::string name;

  // The name plus where: "CBo3 counter control 0 (MSR 0xd70, socket 0)".
  std::string Describe() const;
};

// A platform's allow-list: plain data, built by the platform's function
// below (or by hand, in tests).
struct AllowList {
  // For messages: "the IvyTown box descriptors name".
  std::string source;
  // Per socket (the index AllowedRegister::socket refers to): the CPUs
  // through which its MSRs may be reached.
  std::vector<std::vector<int>> socket_cpus;
  std::vector<AllowedRegister> registers;
};

// The CPUs through which each socket of `topology` may be reached (its
// msr_cpu first), as AllowList::socket_cpus lists them: every platform's
// builder starts from these.
std::vector<std::vector<int>> SocketCpus(const Topology& topology);

// Every platform builds its own in its folder (ivytown::RegisterAllowList,
// nehalemex::RegisterAllowList: platforms/<platform>/device/).

class AllowListGuard : public registers::RegisterSpace {
 public:
  struct Options {
    // Let reads of registers not on the allow-list through.
    bool allow_unlisted_reads = false;
  };

  // `wrapped` must outlive the guard.
  AllowListGuard(registers::RegisterSpace* wrapped, const AllowList& list);
  AllowListGuard(registers::RegisterSpace* wrapped, const AllowList& list,
                 Options options);
  // The guard owns `wrapped`.
  AllowListGuard(std::unique_ptr<registers::RegisterSpace> wrapped,
                 const AllowList& list, Options options);
  AllowListGuard(std::unique_ptr<registers::RegisterSpace> wrapped,
                 const AllowList& list);
  AllowListGuard(const AllowListGuard&) = delete;
  AllowListGuard& operator=(const AllowListGuard&) = delete;

  absl::Status ReadMsr(int cpu, uint32_t msr, uint64_t* value) override;
  absl::Status WriteMsr(int cpu, uint32_t msr, uint64_t value) override;
  absl::Status ReadPci(const registers::PciAddress& fn, uint32_t offset,
                       uint32_t* value) override;
  absl::Status WritePci(const registers::PciAddress& fn, uint32_t offset,
                        uint32_t value) override;
  // Checks every read, then hands the allowed ones to the wrapped space's
  // ReadMsrBatch (one system call where it has one).
  absl::Status ReadMsrBatch(std::span<registers::MsrRead> reads) override;

  // The verdicts, without touching the wrapped space.
  absl::Status CheckMsrWrite(int cpu, uint32_t msr, uint64_t value) const;
  absl::Status CheckPciWrite(const registers::PciAddress& fn, uint32_t offset,
                             uint32_t value) const;
  absl::Status CheckMsrRead(int cpu, uint32_t msr) const;
  absl::Status CheckPciRead(const registers::PciAddress& fn,
                            uint32_t offset) const;

  // The allow-list: MSRs once per socket (they hold on every CPU of it),
  // sorted by socket, space, function and address.
  std::vector<AllowedRegister> AllowedRegisters() const;

  registers::RegisterSpace* wrapped() const { return wrapped_; }

 private:
  using PciKey = std::pair<registers::PciAddress, uint32_t>;
  using MsrKey = std::pair<int, uint32_t>;  // (socket, msr)

  void Index(const AllowList& list);
  const AllowedRegister* FindMsr(int cpu, uint32_t msr) const;
  const AllowedRegister* FindPci(const registers::PciAddress& fn,
                                 uint32_t offset) const;

  std::unique_ptr<registers::RegisterSpace> owned_;
  registers::RegisterSpace* wrapped_;
  Options options_;
  std::string source_;
  absl::flat_hash_map<int, int> socket_of_cpu_;
  absl::flat_hash_map<MsrKey, AllowedRegister> msrs_;
  absl::flat_hash_map<PciKey, AllowedRegister> pci_;
};

}  // namespace uncore::machine

#endif  // UNCORE_SDK_MACHINE_ALLOWLIST_GUARD_H_
