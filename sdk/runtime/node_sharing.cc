#include "sdk/runtime/node_sharing.h"

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "sdk/common/status_macros.h"
#include "sdk/devices/snapshot_server.h"
#include "uncore/session.h"

namespace uncore::runtime {
namespace {

// The backend that programmed the counters, serving them.
class ServingBackend : public Backend {
 public:
  ServingBackend(std::unique_ptr<Backend> inner,
                 std::unique_ptr<devices::SnapshotServer> server)
      : inner_(std::move(inner)), server_(std::move(server)) {}
  ~ServingBackend() override { Stop().IgnoreError(); }

  std::string_view name() const override { return inner_->name(); }
  bool simulated() const override { return inner_->simulated(); }
  devices::Device* device() const override { return inner_->device(); }
  std::string InstanceName(size_t entry,
                           const devices::CounterPlacement& p) const override {
    return inner_->InstanceName(entry, p);
  }
  EventScale ScaleOf(int event) const override {
    return inner_->ScaleOf(event);
  }
  bool Estimated(int entry) const override { return inner_->Estimated(entry); }
  absl::Status Stop() override {
    // Readers first: the device must stay programmed while they read it.
    if (server_ != nullptr) server_->Stop(kServeStopWait);
    return inner_->Stop();
  }
  const Backend* wrapped() const override { return inner_.get(); }
  sim::SimulatedActivity* simulated_activity() const override {
    return inner_->simulated_activity();
  }
  std::vector<devices::NodeUnionGroup> node_union_groups() const override {
    if (server_ == nullptr || inner_->device() == nullptr) return {};
    return {server_->node_union_group()};
  }

 private:
  std::unique_ptr<Backend> inner_;
  std::unique_ptr<devices::SnapshotServer> server_;
};

// Reads another process's counters.
class SharedBackend : public Backend {
 public:
  explicit SharedBackend(std::unique_ptr<devices::RemoteSnapshotDevice> device)
      : device_(std::move(device)) {}
  ~SharedBackend() override { Stop().IgnoreError(); }

  std::string_view name() const override { return device_->catalog().backend; }
  bool simulated() const override { return device_->catalog().simulated; }
  devices::Device* device() const override { return device_.get(); }
  std::string InstanceName(size_t entry,
                           const devices::CounterPlacement&) const override {
    return device_->instance_name(entry);
  }
  EventScale ScaleOf(int event) const override {
    const devices::ServedCatalog::Event& e = device_->event(event);
    return {e.scale, e.unit, e.encoding};
  }
  absl::Status Stop() override { return device_->Release(); }
  std::vector<devices::NodeUnionGroup> node_union_groups() const override {
    return device_->node_union_groups();
  }

 private:
  std::unique_ptr<devices::RemoteSnapshotDevice> device_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Backend>> ServeBackend(
    std::unique_ptr<Backend> backend, const std::string& name,
    const std::vector<std::string>& canonical_events) {
  devices::ServedCatalog catalog;
  catalog.backend = std::string(backend->name());
  catalog.simulated = backend->simulated();
  for (size_t i = 0; i < canonical_events.size(); ++i) {
    const EventScale scale = backend->ScaleOf(static_cast<int>(i));
    catalog.events.push_back(
        {canonical_events[i], scale.unit, scale.encoding, scale.scale});
  }
  devices::Device* device = backend->device();
  if (device != nullptr) {
    catalog.plan = device->read_plan();
    for (size_t i = 0; i < catalog.plan.size(); ++i) {
      catalog.instance_names.push_back(
          backend->InstanceName(i, catalog.plan[i]));
    }
  }
  absl::StatusOr<std::unique_ptr<devices::SnapshotServer>> server =
      devices::SnapshotServer::Start(name, device, catalog);
  if (!server.ok()) {
    backend->Stop().IgnoreError();
    return server.status();
  }
  return std::unique_ptr<Backend>(
      std::make_unique<ServingBackend>(std::move(backend), *std::move(server)));
}

absl::StatusOr<OpenedBackend> OpenSharedBackend(
    const std::vector<std::string>& names,
    const devices::ProgramRequest& program) {
  UNCORE_ASSIGN_OR_RETURN(std::unique_ptr<devices::RemoteSnapshotDevice> device,
                          devices::RemoteSnapshotDevice::Attach(names));
  UNCORE_RETURN_IF_ERROR(device->Program(program));
  OpenedBackend out;
  out.backend = std::make_unique<SharedBackend>(std::move(device));
  if (out.backend->simulated()) {
    out.warnings.push_back(
        "backend sim: every count is SIMULATED (a made-up traffic model on a "
        "simulated IvyTown), not measured on this machine");
  }
  return out;
}

}  // namespace uncore::runtime

namespace uncore {

int RemoveStaleSharedCounters(std::string_view prefix) {
  return devices::RemoveStaleSegments(prefix);
}

}  // namespace uncore
