// A tiny program built against the installed Uncore SDK (CMake package and
// pkg-config): it must find the headers, link, and encode an event.
#include <uncore/uncore.h>

#include <cstdio>
#include <utility>

int main() {
  absl::StatusOr<uncore::EventSpec> spec =
      uncore::ParseEventSpec("cbo/LLC_VICTIMS.M_STATE");
  if (!spec.ok()) return 1;
  absl::StatusOr<uncore::Encoding> enc = uncore::EncodeEvent(*spec);
  if (!enc.ok() || enc->control != 0x00400137u) return 2;
  // A region on the simulated backend.
  uncore::SessionOptions options;
  options.events = {"imc[0]/CAS_COUNT.RD"};
  options.backend = "sim";
  auto session = uncore::Session::Start(std::move(options));
  if (!session.ok()) return 3;
  { UNCORE_REGION("consumer"); }
  const uncore::Results results = (*session)->Collect();
  if (results.regions.size() != 1 || results.regions[0].calls != 1) return 4;
  std::printf("consumer ok: %s -> 0x%08llx\n", spec->Canonical().c_str(),
              static_cast<unsigned long long>(enc->control));
  return 0;
}
