// Writes the seed corpora of the two wire-format fuzzers: catalogs as a
// leader encodes them (corpus/snapshot_catalog/) and rank records as an MPI
// rank encodes them (corpus/mpi_rank/), each made by the real encoder.
//
//   build-fuzz/tests/fuzz/make_wire_seeds tests/fuzz/corpus
//
// Run it again (and commit the files) when either encoding changes.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "integrations/mpi/merge.h"
#include "sdk/devices/device.h"
#include "sdk/devices/snapshot_server.h"
#include "uncore/results.h"

namespace {

namespace fs = std::filesystem;
using uncore::devices::CounterPlacement;
using uncore::devices::ServedCatalog;

bool Write(const fs::path& dir, const std::string& name,
           const std::string& bytes) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  std::ofstream out(dir / name, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(out);
}

CounterPlacement Place(int event, int socket, std::string unit, int instance,
                       int counter, uint8_t width) {
  CounterPlacement p;
  p.event = event;
  p.socket = socket;
  p.unit = std::move(unit);
  p.instance = instance;
  p.counter = counter;
  p.width = width;
  return p;
}

std::vector<ServedCatalog> Catalogs() {
  std::vector<ServedCatalog> out;
  out.push_back(ServedCatalog{});  // nothing counted
  {
    // The simulator: iMC reads and writes on two sockets, two channels.
    ServedCatalog c;
    c.backend = "sim";
    c.simulated = true;
    c.events = {{"imc/CAS_COUNT.RD", "", "ctl=0x00400304", 1.0},
                {"imc/CAS_COUNT.WR", "", "ctl=0x00400c04", 1.0}};
    for (int socket = 0; socket < 2; ++socket) {
      for (int channel = 0; channel < 2; ++channel) {
        for (int event = 0; event < 2; ++event) {
          c.plan.push_back(Place(event, socket,
                                 "iMC0 channel " + std::to_string(channel),
                                 channel, event, 48));
          c.instance_names.push_back("iMC" + std::to_string(channel));
        }
      }
    }
    out.push_back(c);
  }
  {
    // perf: a U-Box fixed counter and an aliased iMC event with a scale.
    ServedCatalog c;
    c.backend = "perf";
    c.events = {
        {"ubox/UCLK", "cycles", "config=0xff,config1=0x0,config2=0x0", 1.0},
        {"uncore_imc/cas_count_read/", "MiB",
         "config=0x304,config1=0x0,config2=0x0", 6.103515625e-5}};
    c.plan = {Place(0, 0, "U-Box", 0, -1, 48),
              Place(1, 0, "iMC0 channel 0", 0, 0, 48),
              Place(1, 0, "iMC0 channel 1", 1, 0, 48)};
    c.instance_names = {"U-Box", "uncore_imc_0", "uncore_imc_1"};
    out.push_back(c);
  }
  {
    // The direct backend: a filtered CBo event on every CBo of one socket.
    ServedCatalog c;
    c.backend = "direct";
    c.events = {{"cbo/LLC_LOOKUP.DATA_READ:filter_state=0x1f", "",
                 "ctl=0x00400334,filter0=0x7c0000", 1.0}};
    for (int cbo = 0; cbo < 12; ++cbo) {
      c.plan.push_back(Place(0, 1, "CBo" + std::to_string(cbo), cbo, 0, 44));
      c.instance_names.push_back("CBo" + std::to_string(cbo));
    }
    out.push_back(c);
  }
  return out;
}

uncore::RegionResult Region(const std::string& name, const std::string& path,
                            int depth, std::vector<uint64_t> per_socket) {
  uncore::RegionResult r;
  r.name = name;
  r.path = path;
  r.depth = depth;
  r.calls = 10;
  r.threads = 4;
  r.wall_ns = 1'500'000;
  r.thread_ns = 5'800'000;
  r.min_ns = 140'000;
  r.max_ns = 160'000;
  r.overhead_ns = 30'000;
  r.sampled_calls = 10;
  uncore::EventCounts c;
  for (uint64_t v : per_socket) c.total += v;
  c.per_socket = std::move(per_socket);
  r.inclusive.push_back(c);
  r.metrics.push_back({static_cast<double>(c.total) * 64 / 1.5e-3, true});
  return r;
}

std::vector<uncore::mpi::RankRecord> Ranks() {
  std::vector<uncore::mpi::RankRecord> out;
  for (int rank = 0; rank < 2; ++rank) {
    uncore::mpi::RankRecord r;
    r.rank = rank;
    r.node = 0;
    r.node_rank = rank;
    r.pid = 4242 + rank;
    r.host = "node17";
    if (rank == 0) r.leads = {0, 1};
    r.reads = {0};
    r.measured = true;
    uncore::Results& res = r.results;
    res.run.backend = "sim";
    res.run.platform = "ivytown";
    res.run.simulated = true;
    res.run.host = "node17";
    res.run.cpu = "GenuineIntel family 6 model 0x3e";
    res.run.sockets = {0, 1};
    res.run.start_unix_ns = 1'764'000'000'000'000'000;
    res.run.duration_ns = 2'000'000'000;
    res.run.warnings = {"SIMULATED: the counts are made up"};
    uncore::EventInfo e;
    e.spec = e.canonical = "imc/CAS_COUNT.RD";
    e.encoding = "ctl=0x00400304";
    res.events.push_back(e);
    res.metrics.push_back(
        {"MEM_BW_READS", "{imc/CAS_COUNT.RD} * 64", "bytes/s", true});
    res.regions.push_back(Region("solve", "solve", 0, {1000, 2000}));
    res.regions.push_back(
        Region("assemble", "solve/assemble", 1, {300, 400 + 10u * rank}));
    out.push_back(r);
  }
  uncore::mpi::RankRecord failed;  // a rank that could not measure
  failed.rank = 2;
  failed.node = 2;
  failed.pid = 99;
  failed.host = "node18";
  failed.error = "UNCORE_EVENTS: no PMU named 'uncore_imc'";
  failed.results.run.backend = "off";
  out.push_back(failed);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR (tests/fuzz/corpus)\n", argv[0]);
    return 2;
  }
  const fs::path root = argv[1];
  bool ok = true;
  int n = 0;
  for (const ServedCatalog& c : Catalogs()) {
    ok = ok && Write(root / "snapshot_catalog", "catalog" + std::to_string(n++),
                     uncore::devices::EncodeCatalog(c));
  }
  n = 0;
  for (const uncore::mpi::RankRecord& r : Ranks()) {
    ok = ok && Write(root / "mpi_rank", "rank" + std::to_string(n++),
                     uncore::mpi::EncodeRank(r));
  }
  if (!ok) std::fprintf(stderr, "cannot write under %s\n", argv[1]);
  return ok ? 0 : 1;
}
