// encode_events: turn event specs into the register values that program them,
// using only the public API (<uncore/events.h>).
//
//   ./encode_events imc/CAS_COUNT.RD 'cbo/TOR_INSERTS.MISS_OPCODE:filter_opc=0x182'
//   ./encode_events metric/MEM_BW_TOTAL
//
// With no arguments it encodes a few events from the manual.  Exit status 2
// if any spec is invalid (the error says where and why).
#include <cstdio>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <uncore/events.h>

namespace {

bool PrintEvent(const uncore::EventSpec& event) {
  if (event.kind == uncore::EventSpec::Kind::kGenericPerf) {
    std::printf("%-52s  perf PMU '%s' (counted by the perf backend)\n",
                event.Canonical().c_str(), event.pmu.c_str());
    return true;
  }
  absl::StatusOr<uncore::Encoding> enc = uncore::EncodeEvent(event);
  if (!enc.ok()) {
    std::fprintf(stderr, "%s\n", std::string(enc.status().message()).c_str());
    return false;
  }
  std::printf("%-52s  control 0x%08llx", event.Canonical().c_str(),
              static_cast<unsigned long long>(enc->control));
  for (const uncore::FilterValue& f : enc->filters) {
    std::printf("  %s=0x%08llx",
                std::string(enc->box->filters[f.filter].name).c_str(),
                static_cast<unsigned long long>(f.value));
  }
  std::printf("\n");
  return true;
}

bool PrintSpec(std::string_view text) {
  absl::StatusOr<uncore::Spec> spec = uncore::ParseSpec(text);
  if (!spec.ok()) {
    std::fprintf(stderr, "%s\n", std::string(spec.status().message()).c_str());
    return false;
  }
  if (const auto* event = std::get_if<uncore::EventSpec>(&spec->value)) {
    return PrintEvent(*event);
  }
  const auto& metric = std::get<uncore::MetricSpec>(spec->value);
  absl::StatusOr<uncore::CompiledMetric> compiled =
      uncore::CompileMetric(metric);
  if (!compiled.ok()) {
    std::fprintf(stderr, "%s\n",
                 std::string(compiled.status().message()).c_str());
    return false;
  }
  std::printf("%s = %s  [%s]\n", metric.Canonical().c_str(),
              compiled->expression.c_str(), compiled->unit.c_str());
  bool ok = true;
  for (const uncore::EventSpec& e : compiled->events) {
    std::printf("  ");
    ok = PrintEvent(e) && ok;
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string_view> specs(argv + 1, argv + argc);
  if (specs.empty()) {
    specs = {"cbo/LLC_VICTIMS.M_STATE", "imc/CAS_COUNT.RD",
             "cbo/LLC_LOOKUP.DATA_READ:filter_state=0x1f",
             "pcu/FREQ_BAND0_CYCLES:filter_band0=20", "ubox/UCLK",
             "metric/MEM_BW_TOTAL"};
  }
  bool ok = true;
  for (std::string_view s : specs) ok = PrintSpec(s) && ok;
  return ok ? 0 : 2;
}
