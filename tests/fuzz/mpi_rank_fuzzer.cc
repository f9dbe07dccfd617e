// libFuzzer target for the MPI wire format (integrations/mpi/merge.h): the
// bytes each rank sends rank 0 (DecodeRank, EncodeRank), and what rank 0
// does with them (Merge and the three report formats).
//
// Each input is used twice: as the bytes rank 0 receives from a rank, and
// as the makings of a rank's record (FuzzedDataProvider) that it encodes.
//
// Properties: decoding any bytes gives a record or DataLoss, never a crash;
// re-encoding a decoded record is a fixed point (decode, encode, decode,
// encode gives the same bytes); a record the encoder wrote decodes to
// itself and is refused cut short by a byte or with a byte more; merging
// any decoded records with a well-formed one and writing the merged
// report as a table, JSON and CSV never crashes.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "integrations/mpi/merge.h"
#include "tests/fuzz/fuzz_check.h"
#include "uncore/report_file.h"
#include "uncore/results.h"

namespace {

using uncore::mpi::DecodeRank;
using uncore::mpi::EncodeRank;
using uncore::mpi::RankRecord;

std::vector<int> Ints(FuzzedDataProvider& in, size_t max) {
  std::vector<int> v(in.ConsumeIntegralInRange<size_t>(0, max));
  for (int& x : v) x = in.ConsumeIntegralInRange<int>(-1, 4);
  return v;
}

std::vector<std::string> Strings(FuzzedDataProvider& in, size_t max) {
  std::vector<std::string> v(in.ConsumeIntegralInRange<size_t>(0, max));
  for (std::string& s : v) s = in.ConsumeRandomLengthString(24);
  return v;
}

// A record as a rank makes it: one view per socket, counts per event.
RankRecord MakeRecord(FuzzedDataProvider& in) {
  RankRecord r;
  r.rank = in.ConsumeIntegralInRange<int>(0, 7);
  r.node = in.ConsumeIntegralInRange<int>(0, 3);
  r.node_rank = in.ConsumeIntegralInRange<int>(0, 3);
  r.pid = in.ConsumeIntegral<int>();
  r.host = in.ConsumeRandomLengthString(16);
  r.leads = Ints(in, 3);
  r.reads = Ints(in, 3);
  r.error = in.ConsumeRandomLengthString(24);
  r.measured = in.ConsumeBool();
  uncore::Results& res = r.results;
  res.run.backend = in.ConsumeRandomLengthString(8);
  res.run.platform = in.ConsumeRandomLengthString(12);
  res.run.simulated = in.ConsumeBool();
  res.run.host = r.host;
  res.run.cpu = in.ConsumeRandomLengthString(24);
  res.run.sockets = Ints(in, 3);
  res.run.start_unix_ns = in.ConsumeIntegral<uint64_t>();
  res.run.duration_ns = in.ConsumeIntegral<uint64_t>();
  res.run.frozen_ns = in.ConsumeIntegral<uint64_t>();
  res.run.errors = Strings(in, 2);
  res.run.warnings = Strings(in, 2);
  res.events.resize(in.ConsumeIntegralInRange<size_t>(0, 4));
  for (uncore::EventInfo& e : res.events) {
    e.spec = in.ConsumeRandomLengthString(24);
    e.canonical = in.ConsumeRandomLengthString(24);
    e.encoding = in.ConsumeRandomLengthString(24);
    e.unit = in.ConsumeRandomLengthString(8);
    e.scale = in.ConsumeFloatingPoint<double>();
    e.from_metric = in.ConsumeBool();
  }
  res.metrics.resize(in.ConsumeIntegralInRange<size_t>(0, 3));
  for (uncore::MetricInfo& m : res.metrics) {
    m.name = in.ConsumeRandomLengthString(16);
    m.expression = in.ConsumeRandomLengthString(24);
    m.unit = in.ConsumeRandomLengthString(8);
    m.per_second = in.ConsumeBool();
  }
  res.regions.resize(in.ConsumeIntegralInRange<size_t>(0, 4));
  for (uncore::RegionResult& region : res.regions) {
    region.name = in.ConsumeRandomLengthString(12);
    region.path =
        in.ConsumeBool() ? region.name : in.ConsumeRandomLengthString(24);
    region.depth = in.ConsumeIntegralInRange<int>(0, 4);
    region.calls = in.ConsumeIntegral<uint64_t>();
    region.threads = in.ConsumeIntegral<uint64_t>();
    region.wall_ns = in.ConsumeIntegral<uint64_t>();
    region.thread_ns = in.ConsumeIntegral<uint64_t>();
    region.min_ns = in.ConsumeIntegral<uint64_t>();
    region.max_ns = in.ConsumeIntegral<uint64_t>();
    region.overhead_ns = in.ConsumeIntegral<uint64_t>();
    region.sampled_calls = in.ConsumeIntegral<uint64_t>();
    region.inclusive.resize(res.events.size());
    for (uncore::EventCounts& c : region.inclusive) {
      c.per_socket.resize(res.run.sockets.size());
      for (uint64_t& v : c.per_socket) {
        v = in.ConsumeIntegral<uint64_t>();
        c.total += v;
      }
      c.estimated = in.ConsumeBool();
    }
    region.metrics.resize(res.metrics.size());
    for (uncore::MetricValue& m : region.metrics) {
      m.value = in.ConsumeFloatingPoint<double>();
      m.valid = in.ConsumeBool();
    }
  }
  return r;
}

void MergeAndFormat(const std::vector<RankRecord>& ranks) {
  const uncore::mpi::MergedReport merged = uncore::mpi::Merge(ranks);
  FUZZ_CHECK(merged.ranks == static_cast<int>(ranks.size()));
  for (const uncore::mpi::MergedRegion& region : merged.regions) {
    FUZZ_CHECK(region.events.size() == merged.events.size());
    FUZZ_CHECK(region.metrics.size() == merged.metrics.size());
  }
  const uncore::Results results = uncore::mpi::MergedResults(merged);
  for (const char* output : {"merged.json", "merged.csv", "-"}) {
    (void)uncore::FormatReportText(results, output);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);

  // What rank 0 receives.
  absl::StatusOr<RankRecord> decoded = DecodeRank(bytes);
  if (decoded.ok()) {
    const std::string once = EncodeRank(*decoded);
    absl::StatusOr<RankRecord> again = DecodeRank(once);
    FUZZ_CHECK(again.ok() && EncodeRank(*again) == once);
  } else {
    FUZZ_CHECK(decoded.status().code() == absl::StatusCode::kDataLoss);
  }

  // What a rank sends.
  FuzzedDataProvider in(data, size);
  const RankRecord made = MakeRecord(in);
  const std::string encoded = EncodeRank(made);
  absl::StatusOr<RankRecord> back = DecodeRank(encoded);
  FUZZ_CHECK(back.ok() && EncodeRank(*back) == encoded);
  FUZZ_CHECK(back->rank == made.rank && back->host == made.host &&
             back->results.regions.size() == made.results.regions.size());
  FUZZ_CHECK(!DecodeRank(encoded.substr(0, encoded.size() - 1)).ok());
  FUZZ_CHECK(!DecodeRank(encoded + '\0').ok());

  // Rank 0 merges what it received.
  std::vector<RankRecord> ranks = {made};
  if (decoded.ok()) {
    ranks.push_back(*decoded);
    ranks.push_back(*std::move(decoded));
    ranks.back().rank = made.rank + 100;  // another rank of its node
  }
  MergeAndFormat(ranks);
  return 0;
}
