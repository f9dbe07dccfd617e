#include "tools/cli/register_listing.h"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "fmt/format.h"
#include "sdk/common/json.h"
#include "sdk/platforms/common/access_space.h"
#include "sdk/report/text_table.h"

namespace uncore::cli {

using ::uncore::platforms::AccessSpace;

using devices::engine::RegisterWrite;

std::string RegisterValue(uint64_t value) {
  return fmt::format("0x{:08x}", value);
}

std::string RegisterAddress(uint32_t address) {
  return fmt::format("0x{:04x}", address);
}

std::string RegisterWritesText(std::string_view header,
                               std::span<const RegisterWrite> writes) {
  std::string text(header);
  report::TextTable table;
  table.AddColumn("step", report::Align::kRight);
  table.AddColumn("register", report::Align::kLeft);
  table.AddColumn("location", report::Align::kLeft);
  table.AddColumn("value", report::Align::kLeft);
  table.AddColumn("why", report::Align::kLeft);
  for (size_t i = 0; i < writes.size(); ++i) {
    const RegisterWrite& w = writes[i];
    table.AddRow({fmt::format("{}", i + 1), w.name, w.reg.Location(),
                  RegisterValue(w.value), w.why});
  }
  table.Render(&text);
  return text;
}

std::string RegisterWritesJson(std::span<const RegisterWrite> writes) {
  common::JsonWriter json(/*pretty=*/true);
  json.BeginArray();
  for (size_t i = 0; i < writes.size(); ++i) {
    const RegisterWrite& w = writes[i];
    json.BeginObject();
    json.Key("step");
    json.Int(static_cast<int64_t>(i + 1));
    json.Key("register");
    json.String(w.name);
    json.Key("socket");
    json.Int(w.reg.socket);
    json.Key("space");
    json.String(w.reg.space == AccessSpace::kMsr ? "MSR" : "PCI");
    json.Key("address");
    json.String(RegisterAddress(w.reg.address));
    json.Key("location");
    json.String(w.reg.Location());
    json.Key("value");
    json.String(RegisterValue(w.value));
    json.Key("why");
    json.String(w.why);
    json.EndObject();
  }
  json.EndArray();
  return json.str() + "\n";
}

}  // namespace uncore::cli
