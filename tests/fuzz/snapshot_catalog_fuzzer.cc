// libFuzzer target for the node-sharing wire format
// (sdk/devices/snapshot_server.h): the catalog a leader writes into the
// shared segment and every follower decodes (DecodeCatalog, EncodeCatalog).
//
// Each input is used twice: as bytes a follower finds in a segment, and as
// the makings of a catalog (FuzzedDataProvider) that a leader encodes.
//
// Properties: decoding any bytes gives a catalog or DataLoss, never a
// crash; a decoded catalog's plan names its events and has one instance
// name per entry; re-encoding a decoded catalog is a fixed point (decode,
// encode, decode, encode gives the same bytes); a catalog the encoder
// wrote decodes to itself; cut short by a byte, or with a byte more, it
// is refused.
#include <fuzzer/FuzzedDataProvider.h>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "sdk/devices/device.h"
#include "sdk/devices/snapshot_server.h"
#include "sdk/platforms/ivytown/model/box_descriptors.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using uncore::devices::CounterPlacement;
using uncore::devices::DecodeCatalog;
using uncore::devices::EncodeCatalog;
using uncore::devices::ServedCatalog;

bool SameBits(double a, double b) {
  return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b);
}

bool Same(const ServedCatalog& a, const ServedCatalog& b) {
  if (a.backend != b.backend || a.simulated != b.simulated ||
      a.events.size() != b.events.size() || a.plan.size() != b.plan.size() ||
      a.instance_names != b.instance_names) {
    return false;
  }
  for (size_t i = 0; i < a.events.size(); ++i) {
    const ServedCatalog::Event& x = a.events[i];
    const ServedCatalog::Event& y = b.events[i];
    if (x.canonical != y.canonical || x.unit != y.unit ||
        x.encoding != y.encoding || !SameBits(x.scale, y.scale)) {
      return false;
    }
  }
  for (size_t i = 0; i < a.plan.size(); ++i) {
    const CounterPlacement& x = a.plan[i];
    const CounterPlacement& y = b.plan[i];
    if (x.event != y.event || x.socket != y.socket || x.unit != y.unit ||
        x.instance != y.instance || x.counter != y.counter ||
        x.width != y.width) {
      return false;
    }
  }
  return true;
}

void CheckDecoded(const ServedCatalog& c) {
  FUZZ_CHECK(c.instance_names.size() == c.plan.size());
  for (const CounterPlacement& p : c.plan) {
    FUZZ_CHECK(p.event >= 0 && static_cast<size_t>(p.event) < c.events.size());
    FUZZ_CHECK(p.width >= 1 && p.width <= 64);
  }
}

ServedCatalog MakeCatalog(FuzzedDataProvider& in) {
  ServedCatalog c;
  c.backend = in.ConsumeRandomLengthString(16);
  c.simulated = in.ConsumeBool();
  const size_t events = in.ConsumeIntegralInRange<size_t>(0, 8);
  for (size_t i = 0; i < events; ++i) {
    ServedCatalog::Event e;
    e.canonical = in.ConsumeRandomLengthString(40);
    e.unit = in.ConsumeRandomLengthString(8);
    e.encoding = in.ConsumeRandomLengthString(40);
    e.scale = in.ConsumeFloatingPoint<double>();
    c.events.push_back(std::move(e));
  }
  const size_t entries =
      events == 0 ? 0 : in.ConsumeIntegralInRange<size_t>(0, 32);
  for (size_t i = 0; i < entries; ++i) {
    CounterPlacement p;
    p.event = in.ConsumeIntegralInRange<int>(0, static_cast<int>(events) - 1);
    p.socket = in.ConsumeIntegral<int>();
    p.unit = in.ConsumeRandomLengthString(16);
    p.instance = in.ConsumeIntegral<int>();
    p.counter = in.ConsumeIntegral<int>();
    p.width = in.ConsumeIntegralInRange<uint8_t>(1, 64);
    c.plan.push_back(p);
    c.instance_names.push_back(in.ConsumeRandomLengthString(16));
  }
  return c;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);

  // What a follower reads.
  absl::StatusOr<ServedCatalog> decoded = DecodeCatalog(bytes);
  if (decoded.ok()) {
    CheckDecoded(*decoded);
    const std::string once = EncodeCatalog(*decoded);
    absl::StatusOr<ServedCatalog> again = DecodeCatalog(once);
    FUZZ_CHECK(again.ok() && Same(*again, *decoded));
    FUZZ_CHECK(EncodeCatalog(*again) == once);
  } else {
    FUZZ_CHECK(decoded.status().code() == absl::StatusCode::kDataLoss);
  }

  // What a leader writes.
  FuzzedDataProvider in(data, size);
  const ServedCatalog made = MakeCatalog(in);
  const std::string encoded = EncodeCatalog(made);
  absl::StatusOr<ServedCatalog> back = DecodeCatalog(encoded);
  FUZZ_CHECK(back.ok() && Same(*back, made));
  FUZZ_CHECK(!DecodeCatalog(encoded.substr(0, encoded.size() - 1)).ok());
  FUZZ_CHECK(!DecodeCatalog(encoded + '\0').ok());
  return 0;
}
