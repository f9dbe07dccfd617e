#include "sdk/devices/engine/register_program.h"

#include <string>
#include <utility>

#include "fmt/format.h"

namespace uncore::devices::engine {

using ::uncore::platforms::AccessSpace;

std::string RegisterRef::Location() const {
  if (space == AccessSpace::kMsr) return fmt::format("MSR 0x{:04x}", address);
  return fmt::format("PCI D{}:F{} +0x{:03x} ({})", pci.device, pci.function,
                     address, pci.ToString());
}

bool RegisterRef::SameRegister(const RegisterRef& other) const {
  if (socket != other.socket || space != other.space ||
      address != other.address) {
    return false;
  }
  if (space == AccessSpace::kMsr) return true;
  return pci == other.pci;
}

RegisterRef Msr(int socket, int cpu, uint32_t address) {
  return RegisterRef{.socket = socket,
                     .space = AccessSpace::kMsr,
                     .cpu = cpu,
                     .pci = {},
                     .address = address};
}

RegisterRef Pci(int socket, const registers::PciAddress& fn, uint32_t offset) {
  return RegisterRef{.socket = socket,
                     .space = AccessSpace::kPci,
                     .cpu = 0,
                     .pci = fn,
                     .address = offset};
}

int SocketProgram::FindSaved(const RegisterRef& reg) const {
  for (size_t k = 0; k < saved.size(); ++k) {
    if (saved[k].reg.SameRegister(reg)) return static_cast<int>(k);
  }
  return -1;
}

int SocketProgram::Save(SavedRegister r) {
  if (const int k = FindSaved(r.reg); k >= 0) return k;
  saved.push_back(std::move(r));
  return static_cast<int>(saved.size()) - 1;
}

ReleaseStep& SocketProgram::Restore(int saved_index) {
  release.push_back(ReleaseStep{
      .kind = ReleaseStep::Kind::kRestore, .write = {}, .saved = saved_index});
  return release.back();
}

ReleaseStep& SocketProgram::ReleaseWrite(ProgramWrite w) {
  release.push_back(ReleaseStep{
      .kind = ReleaseStep::Kind::kWrite, .write = std::move(w), .saved = -1});
  return release.back();
}

}  // namespace uncore::devices::engine
