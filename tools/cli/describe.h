// Human and JSON descriptions of resolved events and metrics, shared by the
// CLI's `describe` and `list`.
#ifndef UNCORE_TOOLS_CLI_DESCRIBE_H_
#define UNCORE_TOOLS_CLI_DESCRIBE_H_

#include <cstdint>
#include <string>

#include "sdk/common/json.h"
#include "sdk/platforms/ivytown/model/box_descriptors.h"
#include "sdk/spec/encoder.h"
#include "sdk/spec/event_spec.h"
#include "sdk/spec/metric_expression.h"

namespace uncore::cli {

// "MSR 0xd70" or "PCI 16:4 +0xd8 (8086:0eb4)".
std::string RegisterLocation(const ivytown::BoxDescriptor& box, int instance,
                             uint32_t offset, bool aux_function);

// "event=0x37 umask=0x1 en=1": the non-zero fields of a control value.
std::string ControlFields(const ivytown::BoxDescriptor& box, uint64_t control);

// "0-3", "0,2", "none".
std::string CounterList(uint8_t mask);

void DescribeEventText(const spec::EventSpec& spec, const spec::Encoding& enc,
                       std::string* out);
// One object; with `close` false the caller adds keys and ends it.
void DescribeEventJson(const spec::EventSpec& spec, const spec::Encoding& enc,
                       common::JsonWriter* json, bool close = true);
void DescribeGenericPerfText(const spec::EventSpec& spec, std::string* out);

}  // namespace uncore::cli

#endif  // UNCORE_TOOLS_CLI_DESCRIBE_H_
