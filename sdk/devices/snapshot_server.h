// Sharing one process's programmed Device with other processes of the node
// (docs/node-sharing.md): the process that programmed the counters serves
// snapshots of them through a POSIX shared-memory segment, and other
// processes read those snapshots through a Device of their own, so the
// counters of a socket are programmed once however many processes measure
// regions on it.
//
//   // The leader: its device is programmed.
//   absl::StatusOr<std::unique_ptr<SnapshotServer>> server =
//       SnapshotServer::Start("job42.0", device, catalog);
//   ... followers attach and read ...
//   (*server)->Stop(absl::Seconds(2));  // waits for followers to detach
//
//   // A follower (another process):
//   absl::StatusOr<std::unique_ptr<RemoteSnapshotDevice>> dev =
//       RemoteSnapshotDevice::Attach({"job42.0"});
//   (*dev)->Program(request);           // checks the leader counts the events
//   (*dev)->TakeSnapshot(&snapshot);    // a snapshot taken after this call
//
// Protocol.  A follower takes a ticket (an atomic counter in the segment),
// wakes the server (a futex) and waits until the server says it has served
// that ticket.  The server reads the ticket counter, then takes a snapshot,
// publishes it under a sequence lock and marks every ticket up to the one
// it read as served: a follower's snapshot is always taken after its
// request, and concurrent requests share one snapshot.
//
// Guarantees: the segment holds only counts and the catalog (no pointers);
// a follower never programs anything; RemoteSnapshotDevice::TakeSnapshot is
// safe from many threads; a server that stops, or does not answer within
// kFollowerTimeout, makes the follower's snapshots invalid, never blocks it
// for longer.
#ifndef UNCORE_SDK_DEVICES_SNAPSHOT_SERVER_H_
#define UNCORE_SDK_DEVICES_SNAPSHOT_SERVER_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sdk/devices/device.h"

namespace uncore::devices {

// What a follower needs to report the leader's counts as its own: the
// backend, each event's canonical spelling, scale, unit and encoding, and
// the read plan with each entry's box instance name.
struct ServedCatalog {
  struct Event {
    std::string canonical;
    std::string unit;
    std::string encoding;
    double scale = 1.0;
  };
  std::string backend;
  bool simulated = false;
  std::vector<Event> events;
  std::vector<CounterPlacement> plan;
  std::vector<std::string> instance_names;  // per plan entry
};

std::string EncodeCatalog(const ServedCatalog& catalog);
absl::StatusOr<ServedCatalog> DecodeCatalog(std::string_view bytes);

// "job42.0" -> "/uncore-job42.0", the shm_open name; InvalidArgument for an
// empty name or one with characters other than [A-Za-z0-9._-].
absl::StatusOr<std::string> ServedSegmentPath(std::string_view name);

// How long a follower waits for the server to answer one request.
inline constexpr std::chrono::milliseconds kFollowerTimeout{10000};

struct ServedSegment;  // the layout in shared memory (snapshot_server.cc)

class SnapshotServer {
 public:
  // Creates the segment `name` (AlreadyExists when it exists: another job
  // or a leftover, named in the error) and starts the serving thread.
  // `device` (nullptr: an empty read plan) must stay programmed until Stop.
  static absl::StatusOr<std::unique_ptr<SnapshotServer>> Start(
      std::string_view name, Device* device, const ServedCatalog& catalog);
  ~SnapshotServer();  // Stop(0)
  SnapshotServer(const SnapshotServer&) = delete;
  SnapshotServer& operator=(const SnapshotServer&) = delete;

  // Keeps serving until no follower is attached or `wait` has passed, then
  // tells followers the server is gone, stops the thread and removes the
  // segment's name.  Safe to call twice.
  void Stop(std::chrono::milliseconds wait);

  // Snapshots taken for followers so far.
  uint64_t served() const;
  // Followers attached now.
  int attached() const;

 private:
  SnapshotServer() = default;
  void Serve();

  std::string path_;
  Device* device_ = nullptr;
  ServedSegment* segment_ = nullptr;
  size_t size_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  bool stopped_ = false;
};

class RemoteSnapshotDevice : public Device {
 public:
  // Attaches to every segment in `names` (served by SnapshotServers); the
  // read plan is theirs, concatenated in this order.  NotFound names a
  // segment that does not exist.
  static absl::StatusOr<std::unique_ptr<RemoteSnapshotDevice>> Attach(
      const std::vector<std::string>& names);
  ~RemoteSnapshotDevice() override;

  std::string_view name() const override { return "served"; }
  // Checks that the servers count every event of `request` (matched by
  // canonical spelling) and maps their plans onto its event indices.
  // Programs nothing.
  absl::Status Program(const ProgramRequest& request) override;
  const std::vector<CounterPlacement>& read_plan() const override {
    return plan_;
  }
  absl::Status TakeSnapshot(Snapshot* out) override;
  // Detaches from the segments.  Safe to call twice.
  absl::Status Release() override;
  uint64_t frozen_ns() const override { return 0; }

  // The first server's catalog (backend, simulated, events).
  const ServedCatalog& catalog() const { return sources_.front().catalog; }
  // Scale, unit and encoding of event `event` of the Program request
  // (defaults for an index out of range).
  ServedCatalog::Event event(int event) const {
    if (event < 0 || static_cast<size_t>(event) >= events_.size()) return {};
    return events_[static_cast<size_t>(event)];
  }
  // The box instance of read-plan entry `entry`.
  const std::string& instance_name(size_t entry) const {
    return instance_names_[entry];
  }

 private:
  struct Source {
    std::string name;
    ServedSegment* segment = nullptr;
    size_t size = 0;
    ServedCatalog catalog;
    size_t first_entry = 0;  // its place in the concatenated plan
    bool counted = false;    // our attach is counted in the segment
  };
  RemoteSnapshotDevice() = default;
  absl::Status Read(Source& source, uint64_t ticket, Snapshot* out);

  std::vector<Source> sources_;
  std::vector<CounterPlacement> plan_;
  std::vector<std::string> instance_names_;
  std::vector<ServedCatalog::Event> events_;  // per request event
  bool released_ = false;
};

}  // namespace uncore::devices

#endif  // UNCORE_SDK_DEVICES_SNAPSHOT_SERVER_H_
