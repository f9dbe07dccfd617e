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
// The segment records the server's process (pid, start time, pid
// namespace).  A process that died while serving (killed, or ended without
// Stop) leaves its segment behind: SnapshotServer::Start and
// RemoteSnapshotDevice::Attach find such a leftover dead and remove it, and
// RemoveStaleSegments sweeps them.
//
// Guarantees: the segment holds only counts, the catalog, the server's
// process identity and the node union table (node_union.h; no pointers); a follower never programs anything;
// RemoteSnapshotDevice::TakeSnapshot is safe from many threads; a server
// that stops, dies, or does not answer within kFollowerTimeout makes the
// follower's snapshots fail, never blocks it for longer: a death is seen
// within kLivenessCheckEvery of the request, and from then on every
// snapshot fails at once with the same error (a server that stopped
// answering fails them at once until it answers again).  A segment is
// removed as stale only when its process is known dead (not alive, a
// zombie, or its pid reused by a later process); in another pid namespace,
// or where /proc cannot say, it is left alone.
#ifndef UNCORE_SDK_DEVICES_SNAPSHOT_SERVER_H_
#define UNCORE_SDK_DEVICES_SNAPSHOT_SERVER_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sdk/devices/device.h"
#include "sdk/devices/node_union.h"

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

// The catalog's bytes, in sdk/common/wire.h's format (little-endian,
// length-prefixed).  DecodeCatalog returns DataLoss for bytes cut short, a
// byte too many, a count that cannot fit, an entry naming no event, or a
// counter width outside 1-64.
std::string EncodeCatalog(const ServedCatalog& catalog);
absl::StatusOr<ServedCatalog> DecodeCatalog(std::string_view bytes);

// "job42.0" -> "/uncore-job42.0", the shm_open name; InvalidArgument for an
// empty name or one with characters other than [A-Za-z0-9._-].
absl::StatusOr<std::string> ServedSegmentPath(std::string_view name);

// How long a follower waits for the server to answer one request.
inline constexpr std::chrono::milliseconds kFollowerTimeout{10000};
// How often a waiting follower checks that the server's process lives.
inline constexpr std::chrono::milliseconds kLivenessCheckEvery{100};

// Removes every segment /dev/shm/uncore-PREFIX* whose server's process is
// known dead; returns how many.  Segments of live processes, of other
// users, of other pid namespaces, of another SDK version or still being
// created are left alone.
int RemoveStaleSegments(std::string_view prefix);

struct ServedSegment;  // the layout in shared memory (snapshot_server.cc)

class SnapshotServer {
 public:
  // Creates the segment `name` and starts the serving thread.  A segment of
  // that name whose server died is removed first; AlreadyExists when a
  // live process (named in the error) serves it, or when it cannot tell.
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
  // The segment's node union table over the whole read plan (node_union.h).
  NodeUnionGroup node_union_group() const;

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
  // segment that does not exist; FailedPrecondition one whose server died
  // (the leftover is removed).
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

  // Each segment's node union table over its entries of the read plan
  // (valid once programmed; node_union.h).
  std::vector<NodeUnionGroup> node_union_groups() const;
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
    // The ticket that timed out (0: none): until the server has served it,
    // later snapshots fail at once.
    std::atomic<uint64_t> stuck_ticket{0};
  };
  RemoteSnapshotDevice() = default;
  absl::Status Read(Source& source, uint64_t ticket, Snapshot* out);
  // Once a server is known dead every snapshot fails with this error.
  absl::Status Broken(absl::Status status);

  std::deque<Source> sources_;  // not moved: they hold atomics
  std::atomic<bool> broken_{false};
  std::mutex broken_mu_;
  absl::Status broken_status_;  // guarded by broken_mu_
  std::vector<CounterPlacement> plan_;
  std::vector<std::string> instance_names_;
  std::vector<ServedCatalog::Event> events_;  // per request event
  bool released_ = false;
};

}  // namespace uncore::devices

#endif  // UNCORE_SDK_DEVICES_SNAPSHOT_SERVER_H_
