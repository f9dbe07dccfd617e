#include "sdk/runtime/name_resolution.h"

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "sdk/common/status_macros.h"
#include "sdk/common/text.h"
#include "sdk/devices/perf/perfmon_plan.h"
#include "sdk/spec/encoder.h"
#include "sdk/spec/perf_metric.h"

namespace uncore::runtime {
namespace {

absl::Status InList(const absl::Status& status, std::string_view list) {
  if (status.ok() || list.empty()) return status;
  return absl::Status(
      status.code(),
      fmt::format("{}: {}", list, common::StatusMessage(status)));
}

// The multiplier from a free-running alias's unit to bytes, or 0.
double BytesPerUnit(std::string_view unit) {
  if (unit == "MiB") return 1024.0 * 1024.0;
  if (unit == "MB") return 1e6;
  if (unit == "B" || unit == "bytes") return 1;
  return 0;
}

// MEM_BW_READS / _WRITES / _TOTAL on the kernel's free-running memory
// counters (uncore_imc_free_running_N: `read` and `write` aliases with a
// scale and a unit), or nullopt when this machine has none.
std::optional<spec::CompiledMetric> FreeRunningBandwidth(
    std::string_view metric, const devices::perf::PmuCatalog& pmus,
    std::string* used) {
  const bool reads = metric == "MEM_BW_READS" || metric == "MEM_BW_TOTAL";
  const bool writes = metric == "MEM_BW_WRITES" || metric == "MEM_BW_TOTAL";
  if (!reads && !writes) return std::nullopt;
  const std::vector<const devices::perf::Pmu*> free_running =
      devices::perf::FreeRunningPmus(pmus, "uncore_imc");
  if (free_running.empty()) return std::nullopt;
  double bytes = 0;
  for (const devices::perf::Pmu* pmu : free_running) {
    for (std::string_view alias : {"read", "write"}) {
      const devices::perf::EventAlias* a = pmu->FindAlias(alias);
      const double b = a == nullptr ? 0 : BytesPerUnit(a->unit);
      if (b == 0 || (bytes != 0 && b != bytes)) return std::nullopt;
      bytes = b;
    }
  }
  using Node = spec::CompiledMetric::Node;
  spec::CompiledMetric m;
  m.name = std::string(metric);
  m.unit = "bytes";
  m.per_second = true;
  std::vector<std::string> parts;
  for (std::string_view alias : {"read", "write"}) {
    if ((alias == "read" && !reads) || (alias == "write" && !writes)) continue;
    spec::EventSpec e;
    e.kind = spec::EventSpec::Kind::kGenericPerf;
    e.pmu = "uncore_imc_free_running";
    e.text = fmt::format("uncore_imc_free_running/{}/", alias);
    e.perf_terms.push_back({std::string(alias), std::nullopt});
    Node n;
    n.op = Node::Op::kEvent;
    n.index = static_cast<int>(m.events.size());
    m.nodes.push_back(n);
    if (m.events.size() == 1) {
      Node sum;
      sum.op = Node::Op::kAdd;
      sum.lhs = 0;
      sum.rhs = 1;
      m.nodes.push_back(sum);
    }
    parts.push_back(e.text);
    m.events.push_back(std::move(e));
  }
  Node scale;
  scale.op = Node::Op::kConstant;
  scale.constant = bytes;
  m.nodes.push_back(scale);
  Node mul;
  mul.op = Node::Op::kMul;
  mul.lhs = static_cast<int>(m.nodes.size() - 2);
  mul.rhs = static_cast<int>(m.nodes.size() - 1);
  m.nodes.push_back(mul);
  m.root = static_cast<int>(m.nodes.size() - 1);
  m.expression = fmt::format("({}) * {}", common::Join(parts, " + "), bytes);
  *used = fmt::format(
      "{} counted by the kernel's free-running memory counters {}..{} ({}): "
      "no general counter programmed (UNCORE_FREE_RUNNING=0 counts CAS "
      "events instead)",
      metric, free_running.front()->name, free_running.back()->name,
      common::Join(parts, ", "));
  return m;
}

std::string EncodingText(const spec::EventSpec& e) {
  if (e.kind == spec::EventSpec::Kind::kGenericPerf) return e.Canonical();
  absl::StatusOr<spec::Encoding> enc = spec::EncodeEvent(e);
  if (!enc.ok()) return "";
  std::string text = fmt::format(
      "{}=0x{:08x}", enc->fixed_counter ? "fixed_ctl" : "ctl", enc->control);
  for (const spec::FilterValue& f : enc->filters) {
    text +=
        fmt::format(",{}=0x{:x}", enc->box->filters[f.filter].name, f.value);
  }
  return text;
}

// Builds ResolvedNames one name at a time.
class Resolver {
 public:
  Resolver(const SessionPlatform& platform, const NameRequest& request,
           const devices::perf::PmuCatalog* pmus)
      : platform_(platform), request_(request), pmus_(pmus) {}

  absl::StatusOr<ResolvedNames> Run() && {
    for (const std::string& text : request_.events) {
      UNCORE_RETURN_IF_ERROR(InList(Event(text), request_.events_list));
    }
    for (const std::string& text : request_.metrics) {
      UNCORE_RETURN_IF_ERROR(InList(Metric(text), request_.metrics_list));
    }
    return std::move(out_);
  }

 private:
  // A tabled platform's events go by the names the vendor gives them.
  std::string CanonicalOf(const spec::EventSpec& e) const {
    return platform_.record->tabled() &&
                   e.kind == spec::EventSpec::Kind::kGenericPerf &&
                   !e.text.empty()
               ? e.text
               : e.Canonical();
  }

  // The index of `e` among the events, added when new.
  int AddEvent(const spec::EventSpec& e, std::string_view text,
               bool from_metric) {
    const std::string canonical = CanonicalOf(e);
    for (size_t i = 0; i < out_.events.size(); ++i) {
      if (out_.event_infos[i].canonical == canonical) {
        if (!from_metric) out_.event_infos[i].from_metric = false;
        return static_cast<int>(i);
      }
    }
    out_.events.push_back(e);
    EventInfo info;
    info.spec = std::string(text);
    info.canonical = canonical;
    info.encoding = EncodingText(e);
    info.from_metric = from_metric;
    out_.event_infos.push_back(std::move(info));
    return static_cast<int>(out_.events.size() - 1);
  }

  void AddInputEvent(std::string_view text, int index) {
    out_.inputs.push_back(
        {std::string(text), false, out_.event_infos[index].canonical, index});
  }

  // The same metric twice (MEM_BW_TOTAL,MEM_BW_TOTAL, or in both lists) is
  // counted and reported once.  Returns its index.
  int AddMetric(spec::CompiledMetric compiled,
                std::optional<spec::Resolution> resolution) {
    for (size_t i = 0; i < out_.metrics.size(); ++i) {
      if (out_.metrics[i].compiled.name == compiled.name) {
        return static_cast<int>(i);
      }
    }
    ResolvedMetric m;
    for (const spec::EventSpec& e : compiled.events) {
      const bool named = platform_.record->tabled() &&
                         e.kind == spec::EventSpec::Kind::kGenericPerf &&
                         !e.text.empty();
      m.event_index.push_back(AddEvent(e, named ? e.text : e.Canonical(),
                                       /*from_metric=*/true));
    }
    m.compiled = std::move(compiled);
    m.resolution = std::move(resolution);
    out_.metrics.push_back(std::move(m));
    return static_cast<int>(out_.metrics.size() - 1);
  }

  absl::Status Event(const std::string& text) {
    if (!platform_.record->tabled()) {  // a register model's own catalog
      UNCORE_ASSIGN_OR_RETURN(spec::Spec s, spec::ParseSpec(text));
      if (s.is_metric()) {
        return CatalogMetric(text, std::get<spec::MetricSpec>(s.value));
      }
      const spec::EventSpec& e = std::get<spec::EventSpec>(s.value);
      if (e.kind != spec::EventSpec::Kind::kGenericPerf) {
        UNCORE_RETURN_IF_ERROR(spec::EncodeEvent(e).status());
      }
      AddInputEvent(text, AddEvent(e, text, /*from_metric=*/false));
      return absl::OkStatus();
    }
    absl::StatusOr<spec::Resolution> r =
        spec::ResolveOnPlatform(*platform_.record->identity, text);
    if (!r.ok()) {
      // Another PMU in the kernel's syntax (msr/tsc/, power/energy-pkg/,
      // uncore_imc_0/cas_count_read/): perf resolves it from sysfs.
      std::optional<spec::EventSpec> raw = spec::KernelSyntaxEvent(text);
      if (!raw.has_value()) return r.status();
      AddInputEvent(text, AddEvent(*raw, text, /*from_metric=*/false));
      return absl::OkStatus();
    }
    return Resolution(text, *std::move(r));
  }

  absl::Status Metric(const std::string& text) {
    if (!platform_.record->tabled()) {
      UNCORE_ASSIGN_OR_RETURN(spec::MetricSpec metric,
                              spec::ParseMetricName(text));
      return CatalogMetric(text, metric);
    }
    UNCORE_ASSIGN_OR_RETURN(
        spec::Resolution r,
        spec::ResolveMetricOnPlatform(*platform_.record->identity, text));
    return Resolution(text, std::move(r));
  }

  absl::Status CatalogMetric(std::string_view text,
                             const spec::MetricSpec& metric) {
    UNCORE_ASSIGN_OR_RETURN(spec::CompiledMetric m,
                            spec::CompileMetric(metric));
    const int index = AddMetric(std::move(m), std::nullopt);
    out_.inputs.push_back({std::string(text), true, metric.Canonical(), index});
    return absl::OkStatus();
  }

  // A tabled platform's event, composite (summed) or metric, as perf
  // events (docs/platforms.md "Sessions").
  absl::Status Resolution(std::string_view text, spec::Resolution r) {
    if (r.kind == spec::Resolution::Kind::kEvent) {
      const std::vector<spec::EventSpec> specs = spec::ToPerfEventSpecs(r);
      AddInputEvent(text, AddEvent(specs.front(), r.input, false));
      return absl::OkStatus();
    }
    const std::string canonical = fmt::format("metric/{}", r.name);
    std::string used;
    std::optional<spec::CompiledMetric> free_running;
    if (r.metric != nullptr && r.metric->sdk_defined &&
        request_.use_free_running && pmus_ != nullptr &&
        request_.backend != "direct") {
      free_running = FreeRunningBandwidth(r.name, *pmus_, &used);
    }
    int index = 0;
    if (free_running.has_value()) {
      const size_t before = out_.metrics.size();
      index = AddMetric(*std::move(free_running), std::nullopt);
      if (out_.metrics.size() > before) out_.warnings.push_back(used);
    } else {
      UNCORE_ASSIGN_OR_RETURN(spec::CompiledMetric m,
                              spec::CompileResolution(r, {}));
      index = AddMetric(std::move(m), std::move(r));
    }
    out_.inputs.push_back({std::string(text), true, canonical, index});
    return absl::OkStatus();
  }

  const SessionPlatform& platform_;
  const NameRequest& request_;
  const devices::perf::PmuCatalog* pmus_;
  ResolvedNames out_;
};

}  // namespace

absl::StatusOr<SessionMachine> ReadSessionMachine(std::string_view platform,
                                                  std::string_view backend,
                                                  bool on_hardware,
                                                  const MachineFiles& files) {
  SessionMachine m;
  m.cpu = machine::ReadCpuIdentity(files.cpuinfo);
  // The kernel's PMUs, where a backend may count on them.  A session that
  // reads another's counters (node sharing) looks too, so that it makes the
  // same choices (platform, free-running counters) as the one serving.
  if (on_hardware && (backend == "perf" || backend == "auto" ||
                      backend == "direct" || backend.empty())) {
    absl::StatusOr<devices::perf::PmuCatalog> found =
        devices::perf::DiscoverPmus(files.sysfs_root);
    if (found.ok()) m.pmus = *std::move(found);
  }
  UNCORE_ASSIGN_OR_RETURN(
      m.platform, ChooseSessionPlatform(platform, backend, on_hardware, m.cpu,
                                        m.pmus_or()));
  return m;
}

absl::StatusOr<ResolvedNames> ResolveNames(
    const SessionPlatform& platform, const NameRequest& request,
    const devices::perf::PmuCatalog* pmus) {
  return Resolver(platform, request, pmus).Run();
}

absl::StatusOr<std::vector<spec::EventSpec>> EventsOfName(
    const perfmon::Platform& platform, std::string_view text) {
  absl::StatusOr<spec::Resolution> r = spec::ResolveOnPlatform(platform, text);
  if (r.ok()) return spec::ToPerfEventSpecs(*r);
  if (std::optional<spec::EventSpec> e = spec::KernelSyntaxEvent(text)) {
    return std::vector<spec::EventSpec>{*e};
  }
  return r.status();
}

}  // namespace uncore::runtime
