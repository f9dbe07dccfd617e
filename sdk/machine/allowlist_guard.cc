#include "sdk/machine/allowlist_guard.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "fmt/format.h"

namespace uncore::machine {

using registers::MsrRead;
using registers::PciAddress;
using registers::RegisterSpace;
namespace {

using platforms::AccessSpace;

std::string MsrWhere(int cpu, uint32_t msr) {
  return fmt::format("MSR 0x{:x} on CPU {}", msr, cpu);
}

std::string PciWhere(const PciAddress& fn, uint32_t offset) {
  return fmt::format("PCI {} offset 0x{:x}", fn.ToString(), offset);
}

constexpr const char* kReadHint =
    " (reads of unlisted registers are refused too; set "
    "AllowListGuard::Options::allow_unlisted_reads to let them through)";

}  // namespace

std::string AllowedRegister::Describe() const {
  if (space == AccessSpace::kMsr) {
    return fmt::format("{} (MSR 0x{:x}, socket {})", name, address, socket);
  }
  return fmt::format("{} (PCI {} offset 0x{:x}, socket {})", name,
                     function.ToString(), address, socket);
}

std::vector<std::vector<int>> SocketCpus(const Topology& topology) {
  std::vector<std::vector<int>> all;
  for (const SocketTopology& socket : topology.sockets) {
    std::vector<int>& cpus = all.emplace_back();
    cpus.push_back(socket.msr_cpu);
    for (int cpu : socket.cpus) {
      if (cpu != socket.msr_cpu) cpus.push_back(cpu);
    }
  }
  return all;
}

AllowListGuard::AllowListGuard(RegisterSpace* wrapped, const AllowList& list)
    : AllowListGuard(wrapped, list, Options{}) {}

AllowListGuard::AllowListGuard(RegisterSpace* wrapped, const AllowList& list,
                               Options options)
    : wrapped_(wrapped), options_(options) {
  Index(list);
}

AllowListGuard::AllowListGuard(std::unique_ptr<RegisterSpace> wrapped,
                               const AllowList& list)
    : AllowListGuard(std::move(wrapped), list, Options{}) {}

AllowListGuard::AllowListGuard(std::unique_ptr<RegisterSpace> wrapped,
                               const AllowList& list, Options options)
    : owned_(std::move(wrapped)), wrapped_(owned_.get()), options_(options) {
  Index(list);
}

void AllowListGuard::Index(const AllowList& list) {
  source_ = list.source;
  for (int s = 0; s < static_cast<int>(list.socket_cpus.size()); ++s) {
    for (int cpu : list.socket_cpus[s]) socket_of_cpu_.emplace(cpu, s);
  }
  for (const AllowedRegister& reg : list.registers) {
    if (reg.space == AccessSpace::kMsr) {
      msrs_.emplace(MsrKey{reg.socket, reg.address}, reg);
    } else {
      pci_.emplace(PciKey{reg.function, reg.address}, reg);
    }
  }
}

const AllowedRegister* AllowListGuard::FindMsr(int cpu, uint32_t msr) const {
  auto socket = socket_of_cpu_.find(cpu);
  if (socket == socket_of_cpu_.end()) return nullptr;
  auto it = msrs_.find(MsrKey{socket->second, msr});
  return it == msrs_.end() ? nullptr : &it->second;
}

const AllowedRegister* AllowListGuard::FindPci(const PciAddress& fn,
                                               uint32_t offset) const {
  auto it = pci_.find(PciKey{fn, offset});
  return it == pci_.end() ? nullptr : &it->second;
}

absl::Status AllowListGuard::CheckMsrWrite(int cpu, uint32_t msr,
                                           uint64_t value) const {
  const AllowedRegister* reg = FindMsr(cpu, msr);
  if (reg == nullptr) {
    if (!socket_of_cpu_.contains(cpu)) {
      return absl::PermissionDeniedError(fmt::format(
          "allow-list guard refused writing 0x{:x} to {}: CPU {} belongs to "
          "no socket of the topology; address a socket's MSRs through one of "
          "its CPUs (Topology::sockets[].cpus)",
          value, MsrWhere(cpu, msr), cpu));
    }
    return absl::PermissionDeniedError(fmt::format(
        "allow-list guard refused writing 0x{:x} to {}: not an uncore PMON "
        "register {} for socket {}; only those can be written",
        value, MsrWhere(cpu, msr), source_, socket_of_cpu_.at(cpu)));
  }
  if (reg->writable_mask == 0) {
    return absl::PermissionDeniedError(fmt::format(
        "allow-list guard refused writing 0x{:x} to {} on CPU {}: the "
        "register is read-only (a write faults on some generations)",
        value, reg->Describe(), cpu));
  }
  if ((value & ~reg->writable_mask) != 0) {
    return absl::PermissionDeniedError(fmt::format(
        "allow-list guard refused writing 0x{:x} to {} on CPU {}: bits 0x{:x} "
        "are reserved or beyond the register (writable bits 0x{:x}); write "
        "them as 0",
        value, reg->Describe(), cpu, value & ~reg->writable_mask,
        reg->writable_mask));
  }
  return absl::OkStatus();
}

absl::Status AllowListGuard::CheckPciWrite(const PciAddress& fn,
                                           uint32_t offset,
                                           uint32_t value) const {
  const AllowedRegister* reg = FindPci(fn, offset);
  if (reg == nullptr) {
    return absl::PermissionDeniedError(fmt::format(
        "allow-list guard refused writing 0x{:x} to {}: not an uncore PMON "
        "register {} in a PCI function of the topology; only those can be "
        "written",
        value, PciWhere(fn, offset), source_));
  }
  if (reg->writable_mask == 0) {
    return absl::PermissionDeniedError(fmt::format(
        "allow-list guard refused writing 0x{:x} to {}: the register is "
        "read-only",
        value, reg->Describe()));
  }
  if ((value & ~reg->writable_mask) != 0) {
    return absl::PermissionDeniedError(fmt::format(
        "allow-list guard refused writing 0x{:x} to {}: bits 0x{:x} are "
        "reserved or beyond the register (writable bits 0x{:x}); write them "
        "as 0",
        value, reg->Describe(), value & ~reg->writable_mask,
        reg->writable_mask));
  }
  return absl::OkStatus();
}

absl::Status AllowListGuard::CheckMsrRead(int cpu, uint32_t msr) const {
  if (options_.allow_unlisted_reads || FindMsr(cpu, msr) != nullptr) {
    return absl::OkStatus();
  }
  return absl::PermissionDeniedError(fmt::format(
      "allow-list guard refused reading {}: not an uncore PMON register {} "
      "for a socket of the topology{}",
      MsrWhere(cpu, msr), source_, kReadHint));
}

absl::Status AllowListGuard::CheckPciRead(const PciAddress& fn,
                                          uint32_t offset) const {
  if (options_.allow_unlisted_reads || FindPci(fn, offset) != nullptr) {
    return absl::OkStatus();
  }
  return absl::PermissionDeniedError(fmt::format(
      "allow-list guard refused reading {}: not an uncore PMON register {} "
      "in a PCI function of the topology{}",
      PciWhere(fn, offset), source_, kReadHint));
}

absl::Status AllowListGuard::ReadMsr(int cpu, uint32_t msr, uint64_t* value) {
  absl::Status status = CheckMsrRead(cpu, msr);
  if (!status.ok()) return status;
  return wrapped_->ReadMsr(cpu, msr, value);
}

absl::Status AllowListGuard::WriteMsr(int cpu, uint32_t msr, uint64_t value) {
  absl::Status status = CheckMsrWrite(cpu, msr, value);
  if (!status.ok()) return status;
  return wrapped_->WriteMsr(cpu, msr, value);
}

absl::Status AllowListGuard::ReadPci(const PciAddress& fn, uint32_t offset,
                                     uint32_t* value) {
  absl::Status status = CheckPciRead(fn, offset);
  if (!status.ok()) return status;
  return wrapped_->ReadPci(fn, offset, value);
}

absl::Status AllowListGuard::WritePci(const PciAddress& fn, uint32_t offset,
                                      uint32_t value) {
  absl::Status status = CheckPciWrite(fn, offset, value);
  if (!status.ok()) return status;
  return wrapped_->WritePci(fn, offset, value);
}

absl::Status AllowListGuard::ReadMsrBatch(std::span<MsrRead> reads) {
  bool all_allowed = true;
  for (const MsrRead& read : reads) {
    if (!CheckMsrRead(read.cpu, read.msr).ok()) {
      all_allowed = false;
      break;
    }
  }
  if (all_allowed) return wrapped_->ReadMsrBatch(reads);

  // Some are refused: pass the others on, then report in the caller's order.
  std::vector<MsrRead> allowed;
  std::vector<size_t> where;
  for (size_t i = 0; i < reads.size(); ++i) {
    reads[i].status = CheckMsrRead(reads[i].cpu, reads[i].msr);
    if (reads[i].status.ok()) {
      allowed.push_back(reads[i]);
      where.push_back(i);
    }
  }
  if (!allowed.empty()) {
    (void)wrapped_->ReadMsrBatch(std::span<MsrRead>(allowed));
    for (size_t k = 0; k < allowed.size(); ++k) {
      reads[where[k]].value = allowed[k].value;
      reads[where[k]].status = allowed[k].status;
    }
  }
  for (const MsrRead& read : reads) {
    if (!read.status.ok()) return read.status;
  }
  return absl::OkStatus();
}

std::vector<AllowedRegister> AllowListGuard::AllowedRegisters() const {
  std::vector<AllowedRegister> out;
  out.reserve(msrs_.size() + pci_.size());
  for (const auto& [key, reg] : msrs_) out.push_back(reg);
  for (const auto& [key, reg] : pci_) out.push_back(reg);
  std::sort(out.begin(), out.end(),
            [](const AllowedRegister& a, const AllowedRegister& b) {
              return std::tie(a.socket, a.space, a.function, a.address) <
                     std::tie(b.socket, b.space, b.function, b.address);
            });
  return out;
}

}  // namespace uncore::machine
