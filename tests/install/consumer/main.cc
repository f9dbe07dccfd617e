// A tiny program built against the installed Uncore SDK (CMake package and
// pkg-config): it must find the headers, link, encode an event, list the
// catalog, describe a metric and count a region on the simulator.
#include <uncore/uncore.h>

#include <cstdio>
#include <utility>

int main() {
  absl::StatusOr<uncore::EventEncoding> enc =
      uncore::EncodeEvent("cbo/LLC_VICTIMS.M_STATE");
  if (!enc.ok() || enc->control != 0x00400137u) return 1;
  if (uncore::EncodeEvent("imc/CAS_COUNT.READ").ok()) return 2;
  if (uncore::ListEvents("imc").empty()) return 5;
  absl::StatusOr<uncore::MetricDefinition> metric =
      uncore::DescribeMetric("MEM_BW_TOTAL");
  if (!metric.ok() || metric->events.size() != 2) return 6;
  // A region on the simulated backend.
  uncore::SessionOptions options;
  options.events = {"imc[0]/CAS_COUNT.RD"};
  options.backend = "sim";
  auto session = uncore::Session::Start(std::move(options));
  if (!session.ok()) return 3;
  { UNCORE_REGION("consumer"); }
  const uncore::Results results = (*session)->Collect();
  if (results.regions.size() != 1 || results.regions[0].calls != 1) return 4;
  std::printf("consumer ok: %s -> 0x%08llx\n", enc->canonical.c_str(),
              static_cast<unsigned long long>(enc->control));
  return 0;
}
