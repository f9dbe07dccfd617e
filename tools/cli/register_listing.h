// The one `uncore describe --registers SPEC` listing, for every platform
// with a register model (IvyTown's direct plan, the Xeon 7500 / E7 engine):
// the ordered writes (devices/engine's RegisterWrite) that program SPEC, as
// a text table or as JSON.
//
//   std::vector<devices::engine::RegisterWrite> writes = ...;
//   std::string text = RegisterWritesText(
//       "register writes that program X on ..., in order\n", writes);
//   std::string json = RegisterWritesJson(writes);  // json.loads-able
//
// Text: `header`, then one table with the columns
//   step  register  location  value  why
// JSON: an array with one object per write:
//   {"step": 1, "register": "...", "socket": 0, "space": "MSR"|"PCI",
//    "address": "0x0c00", "location": "MSR 0x0c00", "value": "0x80000000",
//    "why": "..."}
// Guarantees: one number format for both: the location is
// RegisterRef::Location() ("MSR 0x0c50", "PCI D16:F4 +0x0d8 (0000:7f:10.4)"),
// an address is 0x and at least 4 lowercase hex digits, a value 0x and at
// least 8 (a 64-bit value in full, as a string: JSON numbers lose bits
// above 2^53).  Pure: formats only, never prints.
#ifndef UNCORE_TOOLS_CLI_REGISTER_LISTING_H_
#define UNCORE_TOOLS_CLI_REGISTER_LISTING_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "sdk/devices/engine/register_program.h"

namespace uncore::cli {

// "0x00400137", "0x8000000000000000".
std::string RegisterValue(uint64_t value);
// "0x0c50", "0x00d8".
std::string RegisterAddress(uint32_t address);

std::string RegisterWritesText(
    std::string_view header,
    std::span<const devices::engine::RegisterWrite> writes);
std::string RegisterWritesJson(
    std::span<const devices::engine::RegisterWrite> writes);

}  // namespace uncore::cli

#endif  // UNCORE_TOOLS_CLI_REGISTER_LISTING_H_
