// encode_events: turn event specs into the register values that program them,
// using only the public API (<uncore/events.h>).
//
//   ./encode_events imc/CAS_COUNT.RD
//   ./encode_events 'cbo/TOR_INSERTS.MISS_OPCODE:filter_opc=0x182'
//   ./encode_events metric/MEM_BW_TOTAL
//
// With no arguments it encodes a few events from the manual.  Exit status 2
// if any spec is invalid (the error says where and why).
#include <uncore/events.h>

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace {

void PrintError(const absl::Status& status) {
  std::fprintf(stderr, "%s\n", std::string{status.message()}.c_str());
}

bool PrintEvent(std::string_view spec) {
  absl::StatusOr<uncore::EventEncoding> enc = uncore::EncodeEvent(spec);
  if (!enc.ok()) {
    PrintError(enc.status());
    return false;
  }
  if (enc->kind == uncore::EventKind::kPerfEvent) {
    std::printf("%-52s  perf PMU '%s' (counted by the perf backend)\n",
                enc->canonical.c_str(), enc->pmu.c_str());
    return true;
  }
  std::printf("%-52s  control 0x%08llx", enc->canonical.c_str(),
              static_cast<unsigned long long>(enc->control));
  for (const uncore::FilterSetting& f : enc->filters) {
    std::printf("  %s=0x%08llx", f.register_name.c_str(),
                static_cast<unsigned long long>(f.value));
  }
  std::printf("\n");
  return true;
}

bool PrintSpec(std::string_view text) {
  absl::StatusOr<uncore::SpecKind> kind = uncore::ClassifySpec(text);
  if (!kind.ok()) {
    PrintError(kind.status());
    return false;
  }
  if (*kind == uncore::SpecKind::kEvent) return PrintEvent(text);
  absl::StatusOr<uncore::MetricDefinition> metric =
      uncore::DescribeMetric(text);
  if (!metric.ok()) {
    PrintError(metric.status());
    return false;
  }
  std::printf("%s = %s  [%s]\n", metric->spec.c_str(),
              metric->expression.c_str(), metric->unit.c_str());
  bool ok = true;
  for (const std::string& event : metric->events) {
    std::printf("  ");
    ok = PrintEvent(event) && ok;
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string_view> specs(argv + 1, argv + argc);
  if (specs.empty()) {
    specs = {"cbo/LLC_VICTIMS.M_STATE",
             "imc/CAS_COUNT.RD",
             "cbo/LLC_LOOKUP.DATA_READ:filter_state=0x1f",
             "pcu/FREQ_BAND0_CYCLES:filter_band0=20",
             "ubox/UCLK",
             "metric/MEM_BW_TOTAL"};
  }
  bool ok = true;
  for (std::string_view s : specs) ok = PrintSpec(s) && ok;
  return ok ? 0 : 2;
}
