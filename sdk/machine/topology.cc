#include "sdk/machine/topology.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "sdk/common/fd.h"
#include "sdk/common/sysfs.h"
#include "sdk/common/text.h"
#include "sdk/platforms/common/platform_records.h"
#include "sdk/platforms/common/register_units.h"

namespace uncore::machine {

using registers::PciAddress;
namespace {

namespace fs = std::filesystem;
using platforms::PlatformRecord;
using platforms::RegisterUnits;

std::optional<uint64_t> ReadNumber(const fs::path& path, int base) {
  std::optional<std::string> text = common::ReadSmallFile(path);
  if (!text) return std::nullopt;
  return common::ParseUnsigned(*text, base);
}

// "SSSS:BB:DD.F" -> PciAddress.
std::optional<PciAddress> ParsePciName(std::string_view name) {
  std::vector<std::string_view> parts = common::Split(name, ':');
  if (parts.size() != 3) return std::nullopt;
  std::vector<std::string_view> devfn = common::Split(parts[2], '.');
  if (devfn.size() != 2) return std::nullopt;
  std::optional<uint64_t> segment = common::ParseUnsigned(parts[0], 16);
  std::optional<uint64_t> bus = common::ParseUnsigned(parts[1], 16);
  std::optional<uint64_t> device = common::ParseUnsigned(devfn[0], 16);
  std::optional<uint64_t> function = common::ParseUnsigned(devfn[1], 16);
  if (!segment || !bus || !device || !function || *segment > 0xffff ||
      *bus > 0xff || *device > 0x1f || *function > 7) {
    return std::nullopt;
  }
  return PciAddress{.segment = static_cast<uint16_t>(*segment),
                    .bus = static_cast<uint8_t>(*bus),
                    .device = static_cast<uint8_t>(*device),
                    .function = static_cast<uint8_t>(*function)};
}

// A PCI function of the unit list, identified by its device id.
struct KnownFunction {
  int unit;
  int instance;
  bool aux;
};

std::optional<KnownFunction> IdentifyFunction(const RegisterUnits& units,
                                              uint16_t device_id) {
  for (const platforms::PciUnitInstance& in : units.pci) {
    if (in.pmon.present() && in.pmon.device_id == device_id) {
      return KnownFunction{in.unit, in.instance, false};
    }
    if (in.aux.present() && in.aux.device_id == device_id) {
      return KnownFunction{in.unit, in.instance, true};
    }
  }
  return std::nullopt;
}

// Every PCI unit instance of the list, with no function found yet.
std::vector<SocketTopology::PciInstance> EmptyPciInstances(
    const RegisterUnits* units) {
  std::vector<SocketTopology::PciInstance> out;
  if (units == nullptr) return out;
  for (const platforms::PciUnitInstance& in : units->pci) {
    out.push_back(SocketTopology::PciInstance{
        .unit = in.unit, .instance = in.instance, .pmon = {}, .aux = {}});
  }
  return out;
}

// Every MSR unit of the list with its instance count.
std::vector<SocketTopology::MsrUnit> MsrUnits(const RegisterUnits* units) {
  if (units == nullptr) return {};
  return units->msr;
}

// The first platform record whose CPUs match, or nullptr.
const PlatformRecord* RecordOfCpu(const CpuIdentity& id) {
  for (const PlatformRecord& r : platforms::AllPlatformRecords()) {
    if (id.IsOf(*r.identity)) return &r;
  }
  return nullptr;
}

// One dword of a PCI function's config file, or nullopt (non-root users see
// only the first 64 bytes).
std::optional<uint32_t> ReadConfigDword(const fs::path& config,
                                        uint32_t offset) {
  const int fd =
      common::KeepAboveStdio(::open(config.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd < 0) return std::nullopt;
  uint32_t value = 0;
  const ssize_t n = ::pread(fd, &value, sizeof(value), offset);
  ::close(fd);
  if (n != static_cast<ssize_t>(sizeof(value))) return std::nullopt;
  return value;
}

// The package id an anchor function's node-id registers name, or nullopt.
std::optional<int> AnchorPackage(const platforms::PciSocketAnchor& anchor,
                                 const fs::path& function_dir) {
  const fs::path config = function_dir / "config";
  std::optional<uint32_t> node = ReadConfigDword(config, anchor.node_id_offset);
  std::optional<uint32_t> map = ReadConfigDword(config, anchor.node_map_offset);
  if (!node || !map) return std::nullopt;
  const uint32_t local = *node & 0x7;
  for (int i = 0; i < 8; ++i) {
    if (((*map >> (3 * i)) & 0x7) == local) return i;
  }
  return std::nullopt;
}

struct CpuFacts {
  int cpu;
  int package;
  int core;
};

absl::StatusOr<std::vector<CpuFacts>> ReadCpus(const fs::path& cpu_root) {
  std::optional<std::set<int>> online;
  if (std::optional<std::string> text =
          common::ReadSmallFile(cpu_root / "online")) {
    online = common::ParseCpuList(*text);
  }
  std::vector<CpuFacts> cpus;
  std::error_code ec;
  for (fs::directory_iterator it(cpu_root, ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() < 4 || name.compare(0, 3, "cpu") != 0) continue;
    std::optional<uint64_t> cpu =
        common::ParseUnsigned(std::string_view{name}.substr(3), 10);
    if (!cpu || *cpu > 1'000'000) continue;
    if (online && !online->contains(static_cast<int>(*cpu))) continue;
    const fs::path topology = it->path() / "topology";
    std::optional<uint64_t> package =
        ReadNumber(topology / "physical_package_id", 10);
    std::optional<uint64_t> core = ReadNumber(topology / "core_id", 10);
    if (!package) continue;  // offline, or no topology exported
    cpus.push_back(CpuFacts{static_cast<int>(*cpu), static_cast<int>(*package),
                            core ? static_cast<int>(*core) : -1});
  }
  if (ec) {
    return absl::NotFoundError(fmt::format(
        "cannot list CPUs in {}: {}; pass the sysfs mount point (normally "
        "/sys) as the sysfs root",
        cpu_root.string(), ec.message()));
  }
  if (cpus.empty()) {
    return absl::NotFoundError(fmt::format(
        "no online CPU with a topology/physical_package_id under {}; pass the "
        "sysfs mount point (normally /sys) as the sysfs root",
        cpu_root.string()));
  }
  std::sort(cpus.begin(), cpus.end(),
            [](const CpuFacts& a, const CpuFacts& b) { return a.cpu < b.cpu; });
  return cpus;
}

// The uncore PCI functions of one bus.
struct BusGroup {
  std::vector<std::pair<KnownFunction, PciAddress>> functions;
  std::optional<fs::path> anchor_dir;  // the socket anchor's (U-Box's)
};

std::map<std::pair<uint16_t, uint8_t>, BusGroup> ReadPciFunctions(
    const RegisterUnits& units, const fs::path& pci_root) {
  std::map<std::pair<uint16_t, uint8_t>, BusGroup> buses;
  std::error_code ec;
  for (fs::directory_iterator it(pci_root, ec), end; !ec && it != end;
       it.increment(ec)) {
    std::optional<PciAddress> address =
        ParsePciName(it->path().filename().string());
    if (!address) continue;
    std::optional<uint64_t> vendor = ReadNumber(it->path() / "vendor", 16);
    std::optional<uint64_t> device = ReadNumber(it->path() / "device", 16);
    if (!vendor || !device || *vendor != units.pci_vendor || *device > 0xffff) {
      continue;
    }
    const auto key = std::make_pair(address->segment, address->bus);
    if (units.anchor.device_id != 0 && *device == units.anchor.device_id) {
      buses[key].anchor_dir = it->path();
      continue;
    }
    if (std::optional<KnownFunction> known =
            IdentifyFunction(units, static_cast<uint16_t>(*device))) {
      buses[key].functions.emplace_back(*known, *address);
    }
  }
  return buses;
}

// The socket of each bus (-1: none), in `buses` order.  Like the kernel's
// snbep_pci2phy_map_init: a bus with an anchor (IvyTown's U-Box) gets the
// package its node-id registers name, when every anchor's can be read and
// they are distinct; otherwise anchor buses go to sockets in ascending
// (segment, bus) order.  A bus without an anchor (IvyTown's IRP, D5:F6,
// lives on the socket's IIO bus, e.g. 0x00 or 0x80) takes the socket of the
// nearest anchor bus above it in its segment.  With no anchor at all, buses
// go to sockets in ascending order.
std::vector<int> MapBusesToSockets(
    const platforms::PciSocketAnchor& anchor,
    const std::map<std::pair<uint16_t, uint8_t>, BusGroup>& buses,
    const std::map<int, int>& socket_of_package, int num_sockets) {
  std::vector<const BusGroup*> groups;
  std::vector<uint16_t> segments;
  for (const auto& [key, group] : buses) {
    groups.push_back(&group);
    segments.push_back(key.first);
  }
  std::vector<int> socket(groups.size(), -1);
  std::vector<size_t> anchors;  // groups with an anchor, ascending
  for (size_t g = 0; g < groups.size(); ++g) {
    if (groups[g]->anchor_dir) anchors.push_back(g);
  }
  if (anchors.empty()) {
    for (size_t g = 0;
         g < groups.size() && g < static_cast<size_t>(num_sockets); ++g) {
      socket[g] = static_cast<int>(g);
    }
    return socket;
  }
  bool by_node_id = true;
  std::set<int> packages;
  for (size_t a : anchors) {
    std::optional<int> package = AnchorPackage(anchor, *groups[a]->anchor_dir);
    if (!package || !packages.insert(*package).second) {
      by_node_id = false;
      break;
    }
    auto it = socket_of_package.find(*package);
    // A package with no online CPU has no socket: its buses are ignored.
    socket[a] = it == socket_of_package.end() ? -1 : it->second;
  }
  if (!by_node_id) {
    for (size_t i = 0; i < anchors.size(); ++i) {
      socket[anchors[i]] = i < static_cast<size_t>(num_sockets)
                               ? static_cast<int>(i)
                               : -1;  // more anchors than sockets: ignored
    }
  }
  // Buses without an anchor, from the top down within each segment.
  int above = -1;  // the socket of the nearest anchor bus above, -1: none
  for (size_t g = groups.size(); g-- > 0;) {
    if (g + 1 < groups.size() && segments[g + 1] != segments[g]) above = -1;
    if (groups[g]->anchor_dir) {
      above = socket[g];
    } else {
      socket[g] = above;
    }
  }
  return socket;
}

}  // namespace

const SocketTopology::PciInstance* SocketTopology::FindPci(int unit,
                                                           int instance) const {
  for (const PciInstance& p : pci) {
    if (p.unit == unit && p.instance == instance) return &p;
  }
  return nullptr;
}

bool SocketTopology::HasInstance(int unit, int instance) const {
  if (instance < 0) return false;
  for (const MsrUnit& m : msr_units) {
    if (m.unit == unit) {
      return instance < m.instances &&
             (!m.per_core || instance < per_core_instances);
    }
  }
  const PciInstance* p = FindPci(unit, instance);
  return p != nullptr && p->pmon.has_value();
}

std::string CpuIdentity::ToString() const {
  return fmt::format("{} family {} model 0x{:x}", vendor, family, model);
}

bool CpuIdentity::IsOf(const perfmon::Platform& platform) const {
  return platforms::CpuIsOf(platform, vendor, family, model);
}

absl::StatusOr<CpuIdentity> ReadCpuIdentity(std::string_view cpuinfo_path) {
  int error = 0;
  std::optional<std::string> text =
      common::ReadSmallFile(fs::path(std::string(cpuinfo_path)), &error);
  if (!text) {
    return absl::NotFoundError(
        fmt::format("cannot read {}: {}; pass the path of /proc/cpuinfo",
                    cpuinfo_path, std::strerror(error)));
  }
  return ParseCpuIdentity(*text);
}

CpuIdentity ParseCpuIdentity(std::string_view cpuinfo_text) {
  CpuIdentity id;
  bool seen_any = false;
  for (std::string_view line : common::Split(cpuinfo_text, '\n')) {
    line = common::StripWhitespace(line);
    if (line.empty()) {
      if (seen_any) break;  // the end of the first CPU's block
      continue;
    }
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view key = common::StripWhitespace(line.substr(0, colon));
    const std::string_view value =
        common::StripWhitespace(line.substr(colon + 1));
    seen_any = true;
    if (key == "vendor_id" && id.vendor.empty()) {
      id.vendor = std::string(value);
    } else if (key == "cpu family") {
      if (std::optional<uint64_t> v = common::ParseUnsigned(value, 10)) {
        id.family = static_cast<int>(std::min<uint64_t>(*v, 1 << 20));
      }
    } else if (key == "model") {
      if (std::optional<uint64_t> v = common::ParseUnsigned(value, 10)) {
        id.model = static_cast<int>(std::min<uint64_t>(*v, 1 << 20));
      }
    } else if (key == "stepping") {
      if (std::optional<uint64_t> v = common::ParseUnsigned(value, 10)) {
        id.stepping = static_cast<int>(std::min<uint64_t>(*v, 1 << 20));
      }
    } else if (key == "model name" && id.model_name.empty()) {
      id.model_name = std::string(value);
    } else if (key == "flags") {
      for (std::string_view flag : common::Split(value, ' ', true)) {
        id.hypervisor = id.hypervisor || flag == "hypervisor";
      }
    }
  }
  if (id.vendor.empty()) id.vendor = "unknown";
  return id;
}

PciAddress SimulatedPciAddress(int socket, uint8_t device, uint8_t function) {
  static constexpr uint8_t kBuses[] = {0x7f, 0xff, 0x3f, 0xbf};
  const int s = std::max(socket, 0);
  return PciAddress{.segment = static_cast<uint16_t>(s / 4),
                    .bus = kBuses[s % 4],
                    .device = device,
                    .function = function};
}

Topology SimulatedTopology(const PlatformRecord& platform, int sockets,
                           int cpus_per_socket) {
  cpus_per_socket = std::max(cpus_per_socket, 1);
  const RegisterUnits* units = platform.units;
  Topology t;
  CpuIdentity cpu;  // the platform's first CPU model
  cpu.vendor = "unknown";
  if (!platform.identity->cpus.empty()) {
    const perfmon::CpuMatch& first = platform.identity->cpus.front();
    cpu.vendor = std::string(first.vendor);
    cpu.family = first.family;
    cpu.model = first.model_lo;
  }
  t.cpu_model = cpu.ToString();
  t.platform = std::string(platform.name());
  for (int s = 0; s < sockets; ++s) {
    SocketTopology socket;
    socket.socket = s;
    socket.msr_cpu = s * cpus_per_socket;
    for (int c = 0; c < cpus_per_socket; ++c) {
      socket.cpus.push_back(s * cpus_per_socket + c);
    }
    socket.per_core_instances =
        units != nullptr ? units->max_per_core : cpus_per_socket;
    socket.msr_units = MsrUnits(units);
    if (units != nullptr) {
      for (const platforms::PciUnitInstance& in : units->pci) {
        SocketTopology::PciInstance p{
            .unit = in.unit,
            .instance = in.instance,
            .pmon = SimulatedPciAddress(s, in.pmon.device, in.pmon.function),
            .aux = {}};
        // Every aux function is present in the simulator, one with no known
        // device id (IvyTown's QPI port 2's, D24:F6) included.
        if (in.aux.device != 0) {
          p.aux = SimulatedPciAddress(s, in.aux.device, in.aux.function);
        }
        socket.pci.push_back(p);
      }
    }
    t.sockets.push_back(std::move(socket));
  }
  return t;
}

absl::StatusOr<Topology> DiscoverTopology(std::string_view sysfs_root,
                                          std::string_view cpuinfo_path) {
  const fs::path root{std::string(sysfs_root)};
  absl::StatusOr<CpuIdentity> id = ReadCpuIdentity(cpuinfo_path);
  if (!id.ok()) return id.status();
  absl::StatusOr<std::vector<CpuFacts>> cpus =
      ReadCpus(root / "devices" / "system" / "cpu");
  if (!cpus.ok()) return cpus.status();

  Topology t;
  t.cpu_model = id->ToString();
  const PlatformRecord* platform = RecordOfCpu(*id);
  const RegisterUnits* units = platform != nullptr ? platform->units : nullptr;
  if (platform != nullptr) t.platform = std::string(platform->name());

  // Sockets, in package-id order.
  std::map<int, int> socket_of_package;
  for (const CpuFacts& c : *cpus) socket_of_package.emplace(c.package, 0);
  for (auto& [package, socket] : socket_of_package) {
    socket = static_cast<int>(t.sockets.size());
    SocketTopology s;
    s.socket = socket;
    s.pci = EmptyPciInstances(units);
    t.sockets.push_back(std::move(s));
  }
  std::vector<std::set<int>> cores(t.sockets.size());
  for (const CpuFacts& c : *cpus) {
    const int s = socket_of_package.at(c.package);
    t.sockets[s].cpus.push_back(c.cpu);  // ascending: cpus are sorted
    cores[s].insert(c.core >= 0 ? c.core : c.cpu);
  }
  for (size_t s = 0; s < t.sockets.size(); ++s) {
    const int num_cores = static_cast<int>(cores[s].size());
    t.sockets[s].msr_cpu = t.sockets[s].cpus.front();
    t.sockets[s].per_core_instances =
        units != nullptr ? std::min(num_cores, units->max_per_core) : num_cores;
    t.sockets[s].msr_units = MsrUnits(units);
  }
  if (units == nullptr) return t;  // no PCI units to look for

  // PCI functions: the socket's uncore bus and its IIO bus (IvyTown's IRP).
  const std::map<std::pair<uint16_t, uint8_t>, BusGroup> buses =
      ReadPciFunctions(*units, root / "bus" / "pci" / "devices");
  std::vector<const BusGroup*> groups;
  groups.reserve(buses.size());
  for (const auto& [key, group] : buses) groups.push_back(&group);
  const std::vector<int> socket_of_group =
      MapBusesToSockets(units->anchor, buses, socket_of_package,
                        static_cast<int>(t.sockets.size()));
  for (size_t g = 0; g < groups.size(); ++g) {
    if (socket_of_group[g] < 0) continue;
    SocketTopology& socket = t.sockets[socket_of_group[g]];
    for (const auto& [known, address] : groups[g]->functions) {
      for (SocketTopology::PciInstance& p : socket.pci) {
        if (p.unit != known.unit || p.instance != known.instance) continue;
        (known.aux ? p.aux : p.pmon) = address;
      }
    }
  }
  return t;
}

}  // namespace uncore::machine
