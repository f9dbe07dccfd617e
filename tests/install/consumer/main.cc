// A tiny program built against the installed Uncore SDK (CMake package and
// pkg-config): it must find the headers, link, and encode an event.
#include <uncore/uncore.h>

#include <cstdio>

int main() {
  absl::StatusOr<uncore::EventSpec> spec =
      uncore::ParseEventSpec("cbo/LLC_VICTIMS.M_STATE");
  if (!spec.ok()) return 1;
  absl::StatusOr<uncore::Encoding> enc = uncore::EncodeEvent(*spec);
  if (!enc.ok() || enc->control != 0x00400137u) return 2;
  std::printf("consumer ok: %s -> 0x%08llx\n", spec->Canonical().c_str(),
              static_cast<unsigned long long>(enc->control));
  return 0;
}
