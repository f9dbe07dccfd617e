#include "sdk/registers/register_space.h"

#include <span>
#include <string>

#include "absl/status/status.h"
#include "fmt/format.h"

namespace uncore::registers {

std::string PciAddress::ToString() const {
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", segment, bus, device,
                     function);
}

absl::Status RegisterSpace::ReadMsrBatch(std::span<MsrRead> reads) {
  absl::Status first;
  for (MsrRead& read : reads) {
    read.status = ReadMsr(read.cpu, read.msr, &read.value);
    if (!read.status.ok() && first.ok()) first = read.status;
  }
  return first;
}

}  // namespace uncore::registers
