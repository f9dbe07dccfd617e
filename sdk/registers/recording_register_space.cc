#include "sdk/registers/recording_register_space.h"

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "fmt/format.h"

namespace uncore::registers {

std::string RegisterAccess::ToString() const {
  const char* verb = op == Op::kRead ? "read" : "write";
  const std::string where =
      space == Space::kMsr
          ? fmt::format("msr cpu{} 0x{:x}", cpu, address)
          : fmt::format("pci {}+0x{:x}", pci.ToString(), address);
  return fmt::format("{} {} = 0x{:x}{}", verb, where, value,
                     failed ? " (failed)" : "");
}

absl::Status RecordingRegisterSpace::InjectedFailure(
    const RegisterAccess& access) {
  const bool write = access.op == RegisterAccess::Op::kWrite;
  if (write && writes_until_failure_ > 0 && --writes_until_failure_ == 0) {
    return nth_write_failure_;
  }
  if (access.space == RegisterAccess::Space::kMsr) {
    const auto& failures = write ? msr_write_failures_ : msr_read_failures_;
    auto it = failures.find(access.address);
    if (it != failures.end()) return it->second;
  } else {
    const auto& failures = write ? pci_write_failures_ : pci_read_failures_;
    auto it = failures.find(PciKey{access.pci, access.address});
    if (it != failures.end()) return it->second;
  }
  return absl::OkStatus();
}

absl::Status RecordingRegisterSpace::ReadMsr(int cpu, uint32_t msr,
                                             uint64_t* value) {
  std::lock_guard<std::mutex> lock(mu_);
  RegisterAccess access{.op = RegisterAccess::Op::kRead,
                        .space = RegisterAccess::Space::kMsr,
                        .cpu = cpu,
                        .pci = {},
                        .address = msr};
  absl::Status status = InjectedFailure(access);
  if (status.ok()) {
    auto it = msrs_.find(MsrKey{cpu, msr});
    access.value = it == msrs_.end() ? 0 : it->second;
    *value = access.value;
  }
  access.failed = !status.ok();
  accesses_.push_back(access);
  return status;
}

absl::Status RecordingRegisterSpace::WriteMsr(int cpu, uint32_t msr,
                                              uint64_t value) {
  std::lock_guard<std::mutex> lock(mu_);
  RegisterAccess access{.op = RegisterAccess::Op::kWrite,
                        .space = RegisterAccess::Space::kMsr,
                        .cpu = cpu,
                        .pci = {},
                        .address = msr,
                        .value = value};
  absl::Status status = InjectedFailure(access);
  if (status.ok()) msrs_[MsrKey{cpu, msr}] = value;
  access.failed = !status.ok();
  accesses_.push_back(access);
  return status;
}

absl::Status RecordingRegisterSpace::ReadPci(const PciAddress& fn,
                                             uint32_t offset, uint32_t* value) {
  std::lock_guard<std::mutex> lock(mu_);
  RegisterAccess access{.op = RegisterAccess::Op::kRead,
                        .space = RegisterAccess::Space::kPci,
                        .pci = fn,
                        .address = offset};
  absl::Status status = InjectedFailure(access);
  if (status.ok()) {
    auto it = pci_.find(PciKey{fn, offset});
    const uint32_t v = it == pci_.end() ? 0 : it->second;
    access.value = v;
    *value = v;
  }
  access.failed = !status.ok();
  accesses_.push_back(access);
  return status;
}

absl::Status RecordingRegisterSpace::WritePci(const PciAddress& fn,
                                              uint32_t offset, uint32_t value) {
  std::lock_guard<std::mutex> lock(mu_);
  RegisterAccess access{.op = RegisterAccess::Op::kWrite,
                        .space = RegisterAccess::Space::kPci,
                        .pci = fn,
                        .address = offset,
                        .value = value};
  absl::Status status = InjectedFailure(access);
  if (status.ok()) pci_[PciKey{fn, offset}] = value;
  access.failed = !status.ok();
  accesses_.push_back(access);
  return status;
}

std::vector<RegisterAccess> RecordingRegisterSpace::accesses() const {
  std::lock_guard<std::mutex> lock(mu_);
  return accesses_;
}

void RecordingRegisterSpace::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  accesses_.clear();
}

int RecordingRegisterSpace::CountWrites() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(std::count_if(
      accesses_.begin(), accesses_.end(), [](const RegisterAccess& a) {
        return a.op == RegisterAccess::Op::kWrite;
      }));
}

int RecordingRegisterSpace::CountReads() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(std::count_if(
      accesses_.begin(), accesses_.end(), [](const RegisterAccess& a) {
        return a.op == RegisterAccess::Op::kRead;
      }));
}

void RecordingRegisterSpace::SetMsr(int cpu, uint32_t msr, uint64_t value) {
  std::lock_guard<std::mutex> lock(mu_);
  msrs_[MsrKey{cpu, msr}] = value;
}

void RecordingRegisterSpace::SetPci(const PciAddress& fn, uint32_t offset,
                                    uint32_t value) {
  std::lock_guard<std::mutex> lock(mu_);
  pci_[PciKey{fn, offset}] = value;
}

uint64_t RecordingRegisterSpace::PeekMsr(int cpu, uint32_t msr) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = msrs_.find(MsrKey{cpu, msr});
  return it == msrs_.end() ? 0 : it->second;
}

uint32_t RecordingRegisterSpace::PeekPci(const PciAddress& fn,
                                         uint32_t offset) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = pci_.find(PciKey{fn, offset});
  return it == pci_.end() ? 0 : it->second;
}

void RecordingRegisterSpace::FailNthWrite(int n, absl::Status status) {
  std::lock_guard<std::mutex> lock(mu_);
  writes_until_failure_ = std::max(n, 0);
  nth_write_failure_ = std::move(status);
}

void RecordingRegisterSpace::FailMsrWrites(uint32_t msr, absl::Status status) {
  std::lock_guard<std::mutex> lock(mu_);
  msr_write_failures_[msr] = std::move(status);
}

void RecordingRegisterSpace::FailMsrReads(uint32_t msr, absl::Status status) {
  std::lock_guard<std::mutex> lock(mu_);
  msr_read_failures_[msr] = std::move(status);
}

void RecordingRegisterSpace::FailPciWrites(const PciAddress& fn,
                                           uint32_t offset,
                                           absl::Status status) {
  std::lock_guard<std::mutex> lock(mu_);
  pci_write_failures_[PciKey{fn, offset}] = std::move(status);
}

void RecordingRegisterSpace::FailPciReads(const PciAddress& fn, uint32_t offset,
                                          absl::Status status) {
  std::lock_guard<std::mutex> lock(mu_);
  pci_read_failures_[PciKey{fn, offset}] = std::move(status);
}

void RecordingRegisterSpace::ClearFailures() {
  std::lock_guard<std::mutex> lock(mu_);
  writes_until_failure_ = 0;
  nth_write_failure_ = absl::OkStatus();
  msr_write_failures_.clear();
  msr_read_failures_.clear();
  pci_write_failures_.clear();
  pci_read_failures_.clear();
}

}  // namespace uncore::registers
