#include "sdk/machine/topology.h"

#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sdk/common/status_macros.h"
#include "sdk/platforms/common/platform_records.h"
#include "sdk/platforms/common/register_units.h"
#include "sdk/platforms/ivytown/model/box_descriptors.h"
#include "sdk/platforms/ivytown/model/identity.h"
#include "sdk/platforms/perfmon/perfmon_tables.h"
#include "sdk/registers/register_space.h"

namespace uncore::machine {

using registers::MsrRead;
using registers::PciAddress;
using registers::RegisterSpace;
namespace {

namespace fs = std::filesystem;
using ivytown::BoxType;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Fixture(std::string_view relative) {
  return std::string(UNCORE_TEST_FIXTURES) + "/" + std::string(relative);
}

// A fresh directory, removed with everything in it at destruction.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "topology_XXXXXX");
    const char* made = ::mkdtemp(pattern.data());
    if (made == nullptr) ADD_FAILURE() << "mkdtemp failed for " << pattern;
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

PciAddress Pci(uint8_t bus, uint8_t device, uint8_t function) {
  return PciAddress{
      .segment = 0, .bus = bus, .device = device, .function = function};
}

// Every PCI box instance of an IvyTown socket, as the fixture lays them
// out: device:function on the socket's uncore bus (the IRP on its IIO bus),
// and the auxiliary function where there is one.
struct ExpectedInstance {
  BoxType box;
  int instance;
  uint8_t device;
  uint8_t function;
  bool on_iio_bus;
  std::optional<std::pair<uint8_t, uint8_t>> aux;
};

const std::vector<ExpectedInstance>& ExpectedInstances() {
  static const std::vector<ExpectedInstance> kInstances = {
      {BoxType::kHa, 0, 0x0e, 1, false, std::nullopt},
      {BoxType::kHa, 1, 0x1c, 1, false, std::nullopt},
      {BoxType::kImc, 0, 0x10, 4, false, std::nullopt},
      {BoxType::kImc, 1, 0x10, 5, false, std::nullopt},
      {BoxType::kImc, 2, 0x10, 0, false, std::nullopt},
      {BoxType::kImc, 3, 0x10, 1, false, std::nullopt},
      {BoxType::kImc, 4, 0x1e, 4, false, std::nullopt},
      {BoxType::kImc, 5, 0x1e, 5, false, std::nullopt},
      {BoxType::kImc, 6, 0x1e, 0, false, std::nullopt},
      {BoxType::kImc, 7, 0x1e, 1, false, std::nullopt},
      {BoxType::kIrp, 0, 0x05, 6, true, std::nullopt},
      {BoxType::kQpi, 0, 0x08, 2, false, std::make_pair(0x08, 6)},
      {BoxType::kQpi, 1, 0x09, 2, false, std::make_pair(0x09, 6)},
      // QPI port 2's mask/match function has no known device id.
      {BoxType::kQpi, 2, 0x18, 2, false, std::nullopt},
      {BoxType::kR2pcie, 0, 0x13, 1, false, std::nullopt},
      {BoxType::kR3qpi, 0, 0x13, 5, false, std::nullopt},
      {BoxType::kR3qpi, 1, 0x13, 6, false, std::nullopt},
      {BoxType::kR3qpi, 2, 0x12, 5, false, std::nullopt},
  };
  return kInstances;
}

int NumPciInstancesInDescriptors() {
  int n = 0;
  for (const ivytown::BoxDescriptor& box : ivytown::AllBoxes()) {
    if (box.space == ivytown::AccessSpace::kPci) n += box.num_instances();
  }
  return n;
}

// Checks that `socket` holds every PCI instance on `uncore_bus` (and the
// IRP on `iio_bus`).
void ExpectPciOnBuses(const SocketTopology& socket, uint8_t uncore_bus,
                      uint8_t iio_bus) {
  SCOPED_TRACE(::testing::Message() << "socket " << socket.socket);
  EXPECT_EQ(static_cast<int>(socket.pci.size()),
            NumPciInstancesInDescriptors());
  for (const ExpectedInstance& e : ExpectedInstances()) {
    SCOPED_TRACE(::testing::Message()
                 << ivytown::Box(e.box).name << " " << e.instance);
    const SocketTopology::PciInstance* p = socket.FindPci(e.box, e.instance);
    ASSERT_NE(p, nullptr);
    const uint8_t bus = e.on_iio_bus ? iio_bus : uncore_bus;
    ASSERT_TRUE(p->pmon.has_value());
    EXPECT_EQ(p->pmon->ToString(), Pci(bus, e.device, e.function).ToString());
    if (e.aux) {
      ASSERT_TRUE(p->aux.has_value());
      EXPECT_EQ(*p->aux, Pci(bus, e.aux->first, e.aux->second));
    } else {
      EXPECT_FALSE(p->aux.has_value()) << p->aux->ToString();
    }
    EXPECT_TRUE(socket.HasInstance(e.box, e.instance));
  }
}

absl::StatusOr<Topology> DiscoverIvt(const fs::path& root) {
  return DiscoverTopology((root / "sys").string(), (root / "cpuinfo").string());
}

// A copy of the ivt2s fixture that a test may change.
fs::path CopyIvt2s(const TempDir& dir) {
  const fs::path copy = dir.path() / "ivt2s";
  fs::copy(Fixture("ivt2s"), copy, fs::copy_options::recursive);
  return copy;
}

fs::path UboxConfig(const fs::path& root, std::string_view function) {
  return root / "sys/bus/pci/devices" / std::string(function) / "config";
}

void WriteDword(const fs::path& file, uint32_t offset, uint32_t value) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  ASSERT_TRUE(f.good()) << file;
  f.seekp(offset);
  f.write(reinterpret_cast<const char*>(&value), sizeof(value));
  ASSERT_TRUE(f.good()) << file;
}

// ---- the ivt2s fixture: two IvyTown sockets --------------------------------

TEST(DiscoverTopologyTest, FindsTheSocketsAndTheirOnlineCpus) {
  absl::StatusOr<Topology> t = DiscoverIvt(Fixture("ivt2s"));
  ASSERT_TRUE(t.ok()) << common::StatusMessage(t.status());
  EXPECT_EQ(t->platform, "ivytown");
  EXPECT_EQ(t->cpu_model, "GenuineIntel family 6 model 0x3e");
  ASSERT_EQ(t->sockets.size(), 2u);

  EXPECT_EQ(t->sockets[0].socket, 0);
  EXPECT_EQ(t->sockets[0].msr_cpu, 0);
  EXPECT_THAT(t->sockets[0].cpus, ElementsAre(0, 1, 2, 6, 7, 8));
  EXPECT_EQ(t->sockets[0].per_core_instances, 3);  // core ids 0, 1, 4

  EXPECT_EQ(t->sockets[1].socket, 1);
  EXPECT_EQ(t->sockets[1].msr_cpu, 3);
  // cpu12 (package 1, core 5) is offline: neither a CPU nor a CBo.
  EXPECT_THAT(t->sockets[1].cpus, ElementsAre(3, 4, 5, 9, 10, 11));
  EXPECT_EQ(t->sockets[1].per_core_instances, 3);  // core ids 0, 2, 3
}

TEST(DiscoverTopologyTest, FindsEveryPciBoxInstanceAtItsAddress) {
  ASSERT_EQ(static_cast<int>(ExpectedInstances().size()),
            NumPciInstancesInDescriptors());
  absl::StatusOr<Topology> t = DiscoverIvt(Fixture("ivt2s"));
  ASSERT_TRUE(t.ok()) << common::StatusMessage(t.status());
  ASSERT_EQ(t->sockets.size(), 2u);
  // The U-Boxes say: bus 0x7f is package 0, bus 0xff package 1; the IIO
  // buses 0x00 and 0x80 (IRP) go with the U-Box bus above them.
  ExpectPciOnBuses(t->sockets[0], 0x7f, 0x00);
  ExpectPciOnBuses(t->sockets[1], 0xff, 0x80);
}

TEST(DiscoverTopologyTest, IgnoresOtherDevices) {
  // The fixture also has a host bridge, a NIC, a GPU and another vendor's
  // device whose id is an iMC channel's (0000:03:00.0, 0x1af4:0x0eb4).
  absl::StatusOr<Topology> t = DiscoverIvt(Fixture("ivt2s"));
  ASSERT_TRUE(t.ok()) << common::StatusMessage(t.status());
  std::set<int> buses;
  for (const SocketTopology& s : t->sockets) {
    for (const SocketTopology::PciInstance& p : s.pci) {
      if (p.pmon) buses.insert(p.pmon->bus);
      if (p.aux) buses.insert(p.aux->bus);
    }
  }
  EXPECT_THAT(buses, ElementsAre(0x00, 0x7f, 0x80, 0xff));
}

TEST(DiscoverTopologyTest, MsrBoxesComeFromTheDescriptorsAndCoreCount) {
  absl::StatusOr<Topology> t = DiscoverIvt(Fixture("ivt2s"));
  ASSERT_TRUE(t.ok()) << common::StatusMessage(t.status());
  const SocketTopology& s = t->sockets[0];
  EXPECT_TRUE(s.HasInstance(BoxType::kUbox, 0));
  EXPECT_TRUE(s.HasInstance(BoxType::kPcu, 0));
  EXPECT_TRUE(s.HasInstance(BoxType::kCbo, 2));
  EXPECT_FALSE(s.HasInstance(BoxType::kCbo, 3));
  EXPECT_FALSE(s.HasInstance(BoxType::kCbo, -1));
  EXPECT_FALSE(s.HasInstance(BoxType::kImc, 8));
  EXPECT_EQ(s.FindPci(BoxType::kCbo, 0), nullptr);
}

TEST(DiscoverTopologyTest, UboxNodeIdsDecideTheSocketOfEachBus) {
  TempDir dir;
  const fs::path root = CopyIvt2s(dir);
  // Swap the node ids: bus 0x7f is now node 2 (package 1) and bus 0xff
  // node 0 (package 0).  Ascending bus order would say the opposite.
  WriteDword(UboxConfig(root, "0000:7f:0b.0"), 0x40, 2);
  WriteDword(UboxConfig(root, "0000:ff:0b.0"), 0x40, 0);
  absl::StatusOr<Topology> t = DiscoverIvt(root);
  ASSERT_TRUE(t.ok()) << common::StatusMessage(t.status());
  ASSERT_EQ(t->sockets.size(), 2u);
  ExpectPciOnBuses(t->sockets[0], 0xff, 0x80);
  ExpectPciOnBuses(t->sockets[1], 0x7f, 0x00);
}

TEST(DiscoverTopologyTest, NodeMapOnlyLowThreeBitsOfTheNodeIdCount) {
  TempDir dir;
  const fs::path root = CopyIvt2s(dir);
  // Bits above LclNodeID[2:0] (e.g. the lock master's node id) are ignored.
  WriteDword(UboxConfig(root, "0000:7f:0b.0"), 0x40, 0x40 | 2);
  WriteDword(UboxConfig(root, "0000:ff:0b.0"), 0x40, 0x40 | 0);
  absl::StatusOr<Topology> t = DiscoverIvt(root);
  ASSERT_TRUE(t.ok()) << common::StatusMessage(t.status());
  ExpectPciOnBuses(t->sockets[0], 0xff, 0x80);
  ExpectPciOnBuses(t->sockets[1], 0x7f, 0x00);
}

TEST(DiscoverTopologyTest, WithoutReadableNodeIdsBusesGoInAscendingOrder) {
  TempDir dir;
  const fs::path root = CopyIvt2s(dir);
  // Swapped node ids would put bus 0xff on socket 0, but one U-Box's
  // registers cannot be read (a non-root reader sees 64 bytes of config):
  // the node ids are not used at all.
  WriteDword(UboxConfig(root, "0000:7f:0b.0"), 0x40, 2);
  WriteDword(UboxConfig(root, "0000:ff:0b.0"), 0x40, 0);
  fs::resize_file(UboxConfig(root, "0000:ff:0b.0"), 64);
  absl::StatusOr<Topology> t = DiscoverIvt(root);
  ASSERT_TRUE(t.ok()) << common::StatusMessage(t.status());
  ASSERT_EQ(t->sockets.size(), 2u);
  ExpectPciOnBuses(t->sockets[0], 0x7f, 0x00);
  ExpectPciOnBuses(t->sockets[1], 0xff, 0x80);
}

TEST(DiscoverTopologyTest, NoConfigFilesAtAllAlsoGiveAscendingOrder) {
  TempDir dir;
  const fs::path root = CopyIvt2s(dir);
  fs::remove(UboxConfig(root, "0000:7f:0b.0"));
  fs::remove(UboxConfig(root, "0000:ff:0b.0"));
  absl::StatusOr<Topology> t = DiscoverIvt(root);
  ASSERT_TRUE(t.ok()) << common::StatusMessage(t.status());
  ExpectPciOnBuses(t->sockets[0], 0x7f, 0x00);
  ExpectPciOnBuses(t->sockets[1], 0xff, 0x80);
}

TEST(DiscoverTopologyTest, DuplicateNodeIdsFallBackToAscendingOrder) {
  TempDir dir;
  const fs::path root = CopyIvt2s(dir);
  // Both U-Boxes claim node 2: the registers are not trusted.
  WriteDword(UboxConfig(root, "0000:7f:0b.0"), 0x40, 2);
  WriteDword(UboxConfig(root, "0000:ff:0b.0"), 0x40, 2);
  absl::StatusOr<Topology> t = DiscoverIvt(root);
  ASSERT_TRUE(t.ok()) << common::StatusMessage(t.status());
  ExpectPciOnBuses(t->sockets[0], 0x7f, 0x00);
  ExpectPciOnBuses(t->sockets[1], 0xff, 0x80);
}

TEST(DiscoverTopologyTest, AbsentFunctionsAreAbsentInstances) {
  TempDir dir;
  const fs::path root = CopyIvt2s(dir);
  // Socket 1 without HA1 and iMC1 channel 3.
  fs::remove_all(root / "sys/bus/pci/devices/0000:ff:1c.1");
  fs::remove_all(root / "sys/bus/pci/devices/0000:ff:1e.1");
  absl::StatusOr<Topology> t = DiscoverIvt(root);
  ASSERT_TRUE(t.ok()) << common::StatusMessage(t.status());
  ExpectPciOnBuses(t->sockets[0], 0x7f, 0x00);
  const SocketTopology& s1 = t->sockets[1];
  EXPECT_FALSE(s1.HasInstance(BoxType::kHa, 1));
  EXPECT_FALSE(s1.HasInstance(BoxType::kImc, 7));
  ASSERT_NE(s1.FindPci(BoxType::kImc, 7), nullptr);
  EXPECT_FALSE(s1.FindPci(BoxType::kImc, 7)->pmon.has_value());
  EXPECT_TRUE(s1.HasInstance(BoxType::kHa, 0));
  EXPECT_TRUE(s1.HasInstance(BoxType::kImc, 6));
  EXPECT_EQ(*s1.FindPci(BoxType::kImc, 6)->pmon, Pci(0xff, 0x1e, 0));
}

TEST(DiscoverTopologyTest, SocketsFollowPackageIdOrder) {
  TempDir dir;
  const fs::path root = CopyIvt2s(dir);
  // Package ids 3 and 5 (sparse): sockets 0 and 1 in that order.  The
  // U-Box node maps now name groups 3 and 5.
  const fs::path cpus = root / "sys/devices/system/cpu";
  for (int cpu = 0; cpu <= 12; ++cpu) {
    const fs::path file =
        cpus / ("cpu" + std::to_string(cpu)) / "topology/physical_package_id";
    std::string text;
    std::ifstream(file) >> text;
    std::ofstream(file, std::ios::trunc) << (text == "0" ? "5\n" : "3\n");
  }
  // GIDNIDMAP: group 3 -> node 2, group 5 -> node 0, groups 0-2 and 4 ->
  // node 7 (absent).  Bus 0x7f's U-Box is node 0, bus 0xff's node 2.
  constexpr uint32_t kMap = 0x1ff | (2u << 9) | (7u << 12) | (0u << 15);
  for (const char* fn : {"0000:7f:0b.0", "0000:ff:0b.0"}) {
    WriteDword(UboxConfig(root, fn), 0x54, kMap);
  }
  absl::StatusOr<Topology> t = DiscoverIvt(root);
  ASSERT_TRUE(t.ok()) << common::StatusMessage(t.status());
  ASSERT_EQ(t->sockets.size(), 2u);
  // Socket 0 is package 3: the old package 1 CPUs, behind node 2 (bus 0xff).
  EXPECT_THAT(t->sockets[0].cpus, ElementsAre(3, 4, 5, 9, 10, 11));
  EXPECT_EQ(t->sockets[0].msr_cpu, 3);
  EXPECT_THAT(t->sockets[1].cpus, ElementsAre(0, 1, 2, 6, 7, 8));
  ExpectPciOnBuses(t->sockets[0], 0xff, 0x80);
  ExpectPciOnBuses(t->sockets[1], 0x7f, 0x00);
}

// ---- other machines and errors ---------------------------------------------

TEST(DiscoverTopologyTest, NonIvyTownMachineIsNotAnError) {
  absl::StatusOr<Topology> t =
      DiscoverTopology(Fixture("epyc/sys"), Fixture("epyc/cpuinfo"));
  ASSERT_TRUE(t.ok()) << common::StatusMessage(t.status());
  EXPECT_NE(t->platform, "ivytown");
  EXPECT_EQ(t->cpu_model, "AuthenticAMD family 23 model 0x31");
  ASSERT_EQ(t->sockets.size(), 1u);
  EXPECT_THAT(t->sockets[0].cpus, ElementsAre(0, 1, 2, 3));
  EXPECT_EQ(t->sockets[0].per_core_instances, 2);
  for (const SocketTopology::PciInstance& p : t->sockets[0].pci) {
    EXPECT_FALSE(p.pmon.has_value()) << p.pmon->ToString();
    EXPECT_FALSE(p.aux.has_value());
  }
  EXPECT_FALSE(t->sockets[0].HasInstance(BoxType::kImc, 0));
}

TEST(DiscoverTopologyTest, MissingSysfsRootIsAClearError) {
  TempDir dir;
  const std::string missing = (dir.path() / "no-such-sys").string();
  absl::StatusOr<Topology> t =
      DiscoverTopology(missing, Fixture("ivt2s/cpuinfo"));
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(common::StatusMessage(t.status()), HasSubstr(missing));
  EXPECT_THAT(common::StatusMessage(t.status()), HasSubstr("sysfs"));
}

TEST(DiscoverTopologyTest, SysfsWithoutCpuTopologyIsAClearError) {
  TempDir dir;
  fs::create_directories(dir.path() / "sys/devices/system/cpu/cpu0");
  absl::StatusOr<Topology> t =
      DiscoverTopology((dir.path() / "sys").string(), Fixture("ivt2s/cpuinfo"));
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(common::StatusMessage(t.status()),
              HasSubstr("physical_package_id"));
}

TEST(DiscoverTopologyTest, MissingCpuinfoIsAClearError) {
  TempDir dir;
  const std::string missing = (dir.path() / "cpuinfo").string();
  absl::StatusOr<Topology> t = DiscoverTopology(Fixture("ivt2s/sys"), missing);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(common::StatusMessage(t.status()), HasSubstr(missing));
}

TEST(DiscoverTopologyTest, ThisMachine) {
  // Whatever this machine is, discovery reads it without error when sysfs
  // exports CPU topology, and names a CPU of each socket for its MSRs.
  std::error_code ec;
  const bool has_topology = fs::exists(
      "/sys/devices/system/cpu/cpu0/topology/physical_package_id", ec);
  absl::StatusOr<Topology> t = DiscoverTopology();
  if (!has_topology) {
    EXPECT_FALSE(t.ok());
    GTEST_SKIP() << "no /sys/devices/system/cpu/cpu0/topology here";
  }
  ASSERT_TRUE(t.ok()) << common::StatusMessage(t.status());
  ASSERT_FALSE(t->sockets.empty());
  for (const SocketTopology& s : t->sockets) {
    ASSERT_FALSE(s.cpus.empty());
    EXPECT_EQ(s.msr_cpu, s.cpus.front());
    EXPECT_GE(s.per_core_instances, 1);
    EXPECT_LE(s.per_core_instances, 15);
  }
  absl::StatusOr<CpuIdentity> id = ReadCpuIdentity();
  ASSERT_TRUE(id.ok()) << common::StatusMessage(id.status());
  EXPECT_EQ(t->platform == "ivytown", id->IsOf(ivytown::Identity()));
  EXPECT_EQ(t->cpu_model, id->ToString());
}

// ---- ReadCpuIdentity --------------------------------------------------------

TEST(ReadCpuIdentityTest, IvyTown) {
  absl::StatusOr<CpuIdentity> id = ReadCpuIdentity(Fixture("ivt2s/cpuinfo"));
  ASSERT_TRUE(id.ok()) << common::StatusMessage(id.status());
  EXPECT_EQ(id->vendor, "GenuineIntel");
  EXPECT_EQ(id->family, 6);
  EXPECT_EQ(id->model, 62);
  EXPECT_TRUE(id->IsOf(ivytown::Identity()));
  EXPECT_EQ(id->ToString(), "GenuineIntel family 6 model 0x3e");
  EXPECT_EQ(id->model_name, "Intel(R) Xeon(R) CPU E5-2697 v2 @ 2.70GHz");
  EXPECT_FALSE(id->hypervisor);
}

TEST(ReadCpuIdentityTest, ModelNameAndHypervisorFlag) {
  const std::string path =
      (fs::temp_directory_path() / "uncore_cpuinfo_vm").string();
  {
    std::ofstream f(path);
    f << "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\n"
         "model\t\t: 17\nmodel name\t: AMD EPYC 9654 96-Core Processor\n"
         "flags\t\t: fpu vme hypervisor lahf_lm\n\nprocessor\t: 1\n"
         "model name\t: something else\n";
  }
  absl::StatusOr<CpuIdentity> id = ReadCpuIdentity(path);
  ASSERT_TRUE(id.ok()) << common::StatusMessage(id.status());
  EXPECT_EQ(id->model_name, "AMD EPYC 9654 96-Core Processor");
  EXPECT_TRUE(id->hypervisor);
  EXPECT_FALSE(id->IsOf(ivytown::Identity()));
  fs::remove(path);
}

TEST(ReadCpuIdentityTest, OtherCpusAreNotIvyTown) {
  absl::StatusOr<CpuIdentity> hsx =
      ReadCpuIdentity(Fixture("haswell_ep/cpuinfo"));
  ASSERT_TRUE(hsx.ok()) << common::StatusMessage(hsx.status());
  EXPECT_EQ(hsx->ToString(), "GenuineIntel family 6 model 0x3f");
  EXPECT_FALSE(hsx->IsOf(ivytown::Identity()));

  absl::StatusOr<CpuIdentity> epyc = ReadCpuIdentity(Fixture("epyc/cpuinfo"));
  ASSERT_TRUE(epyc.ok()) << common::StatusMessage(epyc.status());
  EXPECT_EQ(epyc->vendor, "AuthenticAMD");
  EXPECT_EQ(epyc->family, 23);
  EXPECT_EQ(epyc->model, 49);
  EXPECT_FALSE(epyc->IsOf(ivytown::Identity()));
}

TEST(ReadCpuIdentityTest, CpuinfoWithoutX86FieldsIsUnknown) {
  TempDir dir;
  const fs::path file = dir.path() / "cpuinfo";
  std::ofstream(file) << "processor\t: 0\nBogoMIPS\t: 50.00\n"
                         "CPU implementer\t: 0x41\nCPU part\t: 0xd0c\n\n";
  absl::StatusOr<CpuIdentity> id = ReadCpuIdentity(file.string());
  ASSERT_TRUE(id.ok()) << common::StatusMessage(id.status());
  EXPECT_EQ(id->vendor, "unknown");
  EXPECT_FALSE(id->IsOf(ivytown::Identity()));
}

TEST(ReadCpuIdentityTest, OnlyTheFirstCpuCounts) {
  TempDir dir;
  const fs::path file = dir.path() / "cpuinfo";
  std::ofstream(file) << "processor\t: 0\nvendor_id\t: GenuineIntel\n"
                         "cpu family\t: 6\nmodel\t\t: 62\n"
                         "model name\t: Intel(R) Xeon(R) CPU E5-2697 v2\n\n"
                         "processor\t: 1\nvendor_id\t: GenuineIntel\n"
                         "cpu family\t: 6\nmodel\t\t: 63\n\n";
  absl::StatusOr<CpuIdentity> id = ReadCpuIdentity(file.string());
  ASSERT_TRUE(id.ok()) << common::StatusMessage(id.status());
  EXPECT_EQ(id->model, 62);  // not 63, nor parsed from "model name"
}

// ReadCpuIdentity's parser on text (what tests/fuzz/cpuinfo_fuzzer.cc
// calls): the same identity as from the file; any text gives one.
TEST(ParseCpuIdentityTest, IsReadCpuIdentityOnText) {
  const CpuIdentity id = ParseCpuIdentity(
      "processor\t: 0\r\nvendor_id\t: AuthenticAMD\r\ncpu family\t: 25\r\n"
      "model\t\t: 17\r\nstepping\t: 1\r\nflags\t\t: fpu hypervisor\r\n");
  EXPECT_EQ(id.vendor, "AuthenticAMD");
  EXPECT_EQ(id.family, 25);
  EXPECT_EQ(id.model, 17);
  EXPECT_EQ(id.stepping, 1);
  EXPECT_TRUE(id.hypervisor);
  EXPECT_EQ(ParseCpuIdentity("").vendor, "unknown");
  EXPECT_EQ(ParseCpuIdentity("model : 99999999999999999999").model, 0);
  EXPECT_EQ(ParseCpuIdentity("cpu family : 4294967296").family, 1 << 20);
}

TEST(ReadCpuIdentityTest, MissingFileIsNotFound) {
  absl::StatusOr<CpuIdentity> id = ReadCpuIdentity("/nonexistent/cpuinfo");
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(common::StatusMessage(id.status()),
              HasSubstr("/nonexistent/cpuinfo"));
}

// ---- the simulator's topology -----------------------------------------------

TEST(SimulatedTopologyTest, BusesPerSocket) {
  EXPECT_EQ(SimulatedPciAddress(0, 16, 4), Pci(0x7f, 16, 4));
  EXPECT_EQ(SimulatedPciAddress(1, 16, 4), Pci(0xff, 16, 4));
  EXPECT_EQ(SimulatedPciAddress(2, 16, 4), Pci(0x3f, 16, 4));
  EXPECT_EQ(SimulatedPciAddress(3, 16, 4), Pci(0xbf, 16, 4));
  EXPECT_EQ(
      SimulatedPciAddress(4, 16, 4),
      (PciAddress{.segment = 1, .bus = 0x7f, .device = 16, .function = 4}));
}

TEST(SimulatedTopologyTest, AgreesWithSimulatedPciAddress) {
  for (int sockets = 1; sockets <= 6; ++sockets) {
    SCOPED_TRACE(::testing::Message() << sockets << " sockets");
    const Topology t =
        SimulatedTopology(ivytown::Record(), sockets, /*cpus_per_socket=*/3);
    EXPECT_EQ(t.platform, "ivytown");
    EXPECT_EQ(t.cpu_model, "GenuineIntel family 6 model 0x3e");
    ASSERT_EQ(static_cast<int>(t.sockets.size()), sockets);
    std::set<PciAddress> seen;
    for (int s = 0; s < sockets; ++s) {
      const SocketTopology& socket = t.sockets[s];
      EXPECT_EQ(socket.socket, s);
      EXPECT_THAT(socket.cpus, ElementsAre(3 * s, 3 * s + 1, 3 * s + 2));
      EXPECT_EQ(socket.msr_cpu, 3 * s);
      EXPECT_EQ(socket.per_core_instances, 15);
      EXPECT_EQ(static_cast<int>(socket.pci.size()),
                NumPciInstancesInDescriptors());
      for (const SocketTopology::PciInstance& p : socket.pci) {
        const ivytown::InstanceDescriptor& in =
            ivytown::Box(static_cast<BoxType>(p.unit)).instances[p.instance];
        ASSERT_TRUE(p.pmon.has_value());
        EXPECT_EQ(*p.pmon,
                  SimulatedPciAddress(s, in.pmon.device, in.pmon.function));
        EXPECT_TRUE(seen.insert(*p.pmon).second) << p.pmon->ToString();
        EXPECT_TRUE(socket.HasInstance(p.unit, p.instance));
        if (in.aux.device != 0) {
          ASSERT_TRUE(p.aux.has_value());
          EXPECT_EQ(*p.aux,
                    SimulatedPciAddress(s, in.aux.device, in.aux.function));
          EXPECT_TRUE(seen.insert(*p.aux).second) << p.aux->ToString();
        } else {
          EXPECT_FALSE(p.aux.has_value());
        }
      }
      EXPECT_TRUE(socket.HasInstance(BoxType::kCbo, 14));
      EXPECT_FALSE(socket.HasInstance(BoxType::kCbo, 15));
    }
  }
}

// ---- the units come from the platform record -------------------------------

// The (unit, instance) pairs of `socket`'s PCI instances.
std::vector<std::pair<int, int>> PciUnitsOf(const SocketTopology& socket) {
  std::vector<std::pair<int, int>> out;
  for (const SocketTopology::PciInstance& p : socket.pci) {
    out.emplace_back(p.unit, p.instance);
  }
  return out;
}

std::vector<std::pair<int, int>> PciUnitsOf(
    const platforms::RegisterUnits& units) {
  std::vector<std::pair<int, int>> out;
  for (const platforms::PciUnitInstance& p : units.pci) {
    out.emplace_back(p.unit, p.instance);
  }
  return out;
}

TEST(TopologyUnitsTest, DiscoveryLooksForTheUnitsOfTheCpusRecord) {
  const platforms::RegisterUnits* units = ivytown::Record().units;
  ASSERT_NE(units, nullptr);
  absl::StatusOr<Topology> t = DiscoverIvt(Fixture("ivt2s"));
  ASSERT_TRUE(t.ok()) << common::StatusMessage(t.status());
  for (const SocketTopology& s : t->sockets) {
    EXPECT_EQ(PciUnitsOf(s), PciUnitsOf(*units));
    ASSERT_EQ(s.msr_units.size(), units->msr.size());
    for (size_t i = 0; i < s.msr_units.size(); ++i) {
      EXPECT_EQ(s.msr_units[i].unit, units->msr[i].unit);
      EXPECT_EQ(s.msr_units[i].instances, units->msr[i].instances);
      EXPECT_EQ(s.msr_units[i].per_core, units->msr[i].per_core);
    }
  }
}

TEST(TopologyUnitsTest, ARecordWithoutUnitsGivesSocketsWithoutUnits) {
  // The EPYC's record (amdzen2) is counted through perf: it has no units,
  // so nothing is looked for on its PCI buses.
  absl::StatusOr<Topology> t =
      DiscoverTopology(Fixture("epyc/sys"), Fixture("epyc/cpuinfo"));
  ASSERT_TRUE(t.ok()) << common::StatusMessage(t.status());
  const platforms::PlatformRecord* record = nullptr;
  for (const platforms::PlatformRecord& r : platforms::AllPlatformRecords()) {
    if (r.name() == t->platform) record = &r;
  }
  ASSERT_NE(record, nullptr) << t->platform;
  EXPECT_EQ(record->units, nullptr);
  ASSERT_EQ(t->sockets.size(), 1u);
  EXPECT_TRUE(t->sockets[0].pci.empty());
  EXPECT_TRUE(t->sockets[0].msr_units.empty());
  EXPECT_EQ(t->sockets[0].per_core_instances, 2);  // its two cores
}

// A platform that is not IvyTown, with units of its own.
TEST(TopologyUnitsTest, TheSimulatedTopologyLaysOutAnyRecordsUnits) {
  static constexpr perfmon::CpuMatch kCpus[] = {
      {.vendor = "GenuineIntel",
       .family = 6,
       .model_lo = 0x99,
       .model_hi = 0x99},
  };
  static constexpr perfmon::Platform kIdentity = {.name = "testplatform",
                                                  .aliases = "",
                                                  .title = "a test platform",
                                                  .source = "this test",
                                                  .cpus = kCpus,
                                                  .events = {},
                                                  .composites = {},
                                                  .metrics = {}};
  platforms::RegisterUnits units;
  units.msr = {{.unit = 7, .instances = 4, .per_core = true},
               {.unit = 2, .instances = 1, .per_core = false}};
  units.pci = {{.unit = 3,
                .instance = 0,
                .pmon = {.device = 0x10, .function = 2, .device_id = 0x1234},
                .aux = {.device = 0x11, .function = 3, .device_id = 0}},
               {.unit = 3,
                .instance = 1,
                .pmon = {.device = 0x12, .function = 0, .device_id = 0x1235},
                .aux = {}}};
  units.max_per_core = 3;
  const platforms::PlatformRecord record = {.identity = &kIdentity,
                                            .units = &units};

  const Topology t = SimulatedTopology(record, 2, /*cpus_per_socket=*/4);
  EXPECT_EQ(t.platform, "testplatform");
  EXPECT_EQ(t.cpu_model, "GenuineIntel family 6 model 0x99");
  ASSERT_EQ(t.sockets.size(), 2u);
  const SocketTopology& s1 = t.sockets[1];
  EXPECT_EQ(s1.per_core_instances, 3);
  EXPECT_TRUE(s1.HasInstance(7, 2));
  EXPECT_FALSE(s1.HasInstance(7, 3));  // beyond max_per_core
  EXPECT_TRUE(s1.HasInstance(2, 0));
  EXPECT_FALSE(s1.HasInstance(2, 1));
  EXPECT_THAT(PciUnitsOf(s1),
              ElementsAre(std::make_pair(3, 0), std::make_pair(3, 1)));
  ASSERT_NE(s1.FindPci(3, 0), nullptr);
  EXPECT_EQ(*s1.FindPci(3, 0)->pmon, SimulatedPciAddress(1, 0x10, 2));
  EXPECT_EQ(*s1.FindPci(3, 0)->aux, SimulatedPciAddress(1, 0x11, 3));
  EXPECT_FALSE(s1.FindPci(3, 1)->aux.has_value());
  EXPECT_TRUE(s1.HasInstance(3, 1));
  EXPECT_FALSE(s1.HasInstance(3, 2));

  // Without units: sockets and CPUs only.
  const platforms::PlatformRecord bare = {.identity = &kIdentity};
  const Topology b = SimulatedTopology(bare, 1, /*cpus_per_socket=*/2);
  ASSERT_EQ(b.sockets.size(), 1u);
  EXPECT_TRUE(b.sockets[0].pci.empty());
  EXPECT_TRUE(b.sockets[0].msr_units.empty());
  EXPECT_FALSE(b.sockets[0].HasInstance(7, 0));
}

}  // namespace
}  // namespace uncore::machine
