// Node sharing (sdk/devices/snapshot_server.h, sdk/runtime/node_sharing.h):
// a server publishing a device's snapshots through shared memory, and
// followers reading them, here in one process (the MPI tests run it across
// processes).
#include "sdk/devices/snapshot_server.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "sdk/common/clock.h"
#include "sdk/spec/event_spec.h"
#include "uncore/session.h"

namespace uncore::devices {
namespace {

// Every snapshot's values are the number of snapshots taken before it plus
// one: a snapshot taken after a moment has a value above the count read
// at that moment.
class CountingDevice : public Device {
 public:
  explicit CountingDevice(std::vector<int> sockets) {
    for (int s : sockets) {
      CounterPlacement p;
      p.socket = s;
      plan_.push_back(p);
    }
  }
  std::string_view name() const override { return "counting"; }
  absl::Status Program(const ProgramRequest&) override {
    return absl::OkStatus();
  }
  const std::vector<CounterPlacement>& read_plan() const override {
    return plan_;
  }
  absl::Status TakeSnapshot(Snapshot* out) override {
    const uint64_t n = taken_.fetch_add(1) + 1;
    out->values.assign(plan_.size(), n);
    out->timestamp_ns = common::MonotonicNowNs();
    out->valid = true;
    return absl::OkStatus();
  }
  absl::Status Release() override { return absl::OkStatus(); }
  uint64_t frozen_ns() const override { return 0; }
  uint64_t taken() const { return taken_.load(); }

 private:
  std::vector<CounterPlacement> plan_;
  std::atomic<uint64_t> taken_{0};
};

spec::EventSpec Event(const char* text) {
  absl::StatusOr<spec::EventSpec> e = spec::ParseEventSpec(text);
  EXPECT_TRUE(e.ok()) << e.status();
  return *e;
}

ServedCatalog CatalogFor(const Device& device, const char* event) {
  ServedCatalog c;
  c.backend = "counting";
  c.events.push_back({Event(event).Canonical(), "cycles", "enc", 2.5});
  c.plan = device.read_plan();
  for (size_t i = 0; i < c.plan.size(); ++i) {
    c.instance_names.push_back(fmt::format("box{}", i));
  }
  return c;
}

// A name no other test (or leftover) uses.
std::string UniqueName(const char* what) {
  static std::atomic<int> n{0};
  return fmt::format("test.{}.{}.{}", getpid(), what, n.fetch_add(1));
}

ProgramRequest RequestFor(const char* event) {
  ProgramRequest r;
  r.events.push_back(Event(event));
  return r;
}

TEST(ServedCatalogTest, RoundTrips) {
  CountingDevice device({0, 1});
  ServedCatalog c = CatalogFor(device, "ubox/UCLK");
  c.simulated = true;
  absl::StatusOr<ServedCatalog> back = DecodeCatalog(EncodeCatalog(c));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->backend, "counting");
  EXPECT_TRUE(back->simulated);
  ASSERT_EQ(back->events.size(), 1u);
  EXPECT_EQ(back->events[0].unit, "cycles");
  EXPECT_EQ(back->events[0].scale, 2.5);
  ASSERT_EQ(back->plan.size(), 2u);
  EXPECT_EQ(back->plan[1].socket, 1);
  EXPECT_EQ(back->instance_names[1], "box1");
  // Cut short anywhere: an error, never a crash.
  const std::string bytes = EncodeCatalog(c);
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_FALSE(DecodeCatalog(bytes.substr(0, n)).ok()) << n;
  }
}

TEST(ServedSegmentPathTest, RefusesOddNames) {
  EXPECT_EQ(*ServedSegmentPath("job.1-a_b"), "/uncore-job.1-a_b");
  EXPECT_FALSE(ServedSegmentPath("").ok());
  EXPECT_FALSE(ServedSegmentPath("a/b").ok());
  EXPECT_FALSE(ServedSegmentPath("a b").ok());
}

TEST(SnapshotServerTest, SnapshotsAreTakenAfterTheRequest) {
  CountingDevice device({0});
  const std::string name = UniqueName("after");
  auto server =
      SnapshotServer::Start(name, &device, CatalogFor(device, "ubox/UCLK"));
  ASSERT_TRUE(server.ok()) << server.status();
  auto follower = RemoteSnapshotDevice::Attach({name});
  ASSERT_TRUE(follower.ok()) << follower.status();
  EXPECT_EQ((*server)->attached(), 1);
  ASSERT_TRUE((*follower)->Program(RequestFor("ubox/UCLK")).ok());
  ASSERT_EQ((*follower)->read_plan().size(), 1u);
  EXPECT_EQ((*follower)->instance_name(0), "box0");
  EXPECT_EQ((*follower)->event(0).unit, "cycles");
  Snapshot s;
  for (int i = 0; i < 200; ++i) {
    const uint64_t before = device.taken();
    const uint64_t t0 = common::MonotonicNowNs();
    ASSERT_TRUE((*follower)->TakeSnapshot(&s).ok());
    ASSERT_TRUE(s.valid);
    EXPECT_GT(s.values[0], before);
    EXPECT_GE(s.timestamp_ns, t0);
  }
  EXPECT_EQ((*server)->served(), 200u);
  ASSERT_TRUE((*follower)->Release().ok());
  EXPECT_EQ((*server)->attached(), 0);
}

TEST(SnapshotServerTest, ConcurrentRequestsAreAllAnsweredAfterTheirRequest) {
  CountingDevice device({0});
  const std::string name = UniqueName("concurrent");
  auto server =
      SnapshotServer::Start(name, &device, CatalogFor(device, "ubox/UCLK"));
  ASSERT_TRUE(server.ok()) << server.status();
  auto follower = RemoteSnapshotDevice::Attach({name});
  ASSERT_TRUE(follower.ok()) << follower.status();
  ASSERT_TRUE((*follower)->Program(RequestFor("ubox/UCLK")).ok());
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  constexpr int kThreads = 6;
  constexpr int kEach = 100;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      Snapshot s;
      for (int i = 0; i < kEach; ++i) {
        const uint64_t before = device.taken();
        if (!(*follower)->TakeSnapshot(&s).ok() || !s.valid ||
            s.values[0] <= before) {
          ++wrong;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GE((*server)->served(), 1u);
  EXPECT_LE((*server)->served(), uint64_t{kThreads * kEach});
}

TEST(SnapshotServerTest, SeveralServersConcatenate) {
  CountingDevice socket0({0});
  CountingDevice socket1({1});
  const std::string a = UniqueName("a");
  const std::string b = UniqueName("b");
  auto sa =
      SnapshotServer::Start(a, &socket0, CatalogFor(socket0, "ubox/UCLK"));
  auto sb =
      SnapshotServer::Start(b, &socket1, CatalogFor(socket1, "ubox/UCLK"));
  ASSERT_TRUE(sa.ok() && sb.ok());
  auto follower = RemoteSnapshotDevice::Attach({a, b});
  ASSERT_TRUE(follower.ok()) << follower.status();
  ASSERT_TRUE((*follower)->Program(RequestFor("ubox/UCLK")).ok());
  const std::vector<CounterPlacement>& plan = (*follower)->read_plan();
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[0].socket, 0);
  EXPECT_EQ(plan[1].socket, 1);
  Snapshot s;
  ASSERT_TRUE((*follower)->TakeSnapshot(&s).ok());
  EXPECT_EQ(s.values[0], socket0.taken());
  EXPECT_EQ(s.values[1], socket1.taken());
}

TEST(SnapshotServerTest, RefusesWhatDoesNotMatch) {
  CountingDevice device({0});
  const std::string name = UniqueName("mismatch");
  auto server =
      SnapshotServer::Start(name, &device, CatalogFor(device, "ubox/UCLK"));
  ASSERT_TRUE(server.ok()) << server.status();
  // The same name twice.
  auto again =
      SnapshotServer::Start(name, &device, CatalogFor(device, "ubox/UCLK"));
  EXPECT_EQ(again.status().code(), absl::StatusCode::kAlreadyExists);
  // An event the server does not count.
  auto follower = RemoteSnapshotDevice::Attach({name});
  ASSERT_TRUE(follower.ok()) << follower.status();
  absl::Status s = (*follower)->Program(RequestFor("imc/CAS_COUNT.RD"));
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("same events"), absl::string_view::npos) << s;
  // A name nobody serves.
  EXPECT_EQ(RemoteSnapshotDevice::Attach({UniqueName("none")}).status().code(),
            absl::StatusCode::kNotFound);
}

TEST(SnapshotServerTest, AStoppedServerFailsSnapshotsAtOnce) {
  CountingDevice device({0});
  const std::string name = UniqueName("stopped");
  auto server =
      SnapshotServer::Start(name, &device, CatalogFor(device, "ubox/UCLK"));
  ASSERT_TRUE(server.ok()) << server.status();
  auto follower = RemoteSnapshotDevice::Attach({name});
  ASSERT_TRUE(follower.ok()) << follower.status();
  ASSERT_TRUE((*follower)->Program(RequestFor("ubox/UCLK")).ok());
  (*server)->Stop(std::chrono::milliseconds(0));
  // The name is gone: nobody else attaches.
  EXPECT_FALSE(RemoteSnapshotDevice::Attach({name}).ok());
  const auto t0 = std::chrono::steady_clock::now();
  Snapshot s;
  absl::Status status = (*follower)->TakeSnapshot(&s);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
  EXPECT_FALSE(s.valid);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
}

// Through sessions: a `sim` session serving, a device reading it.
TEST(NodeSharingSessionTest, ALeaderSessionServesItsCounters) {
  const std::string name = UniqueName("session");
  SessionOptions o;
  o.events = {"ubox/UCLK"};
  o.backend = "sim";
  o.share_counters_as = name;
  auto session = Session::Start(o);
  ASSERT_TRUE(session.ok()) << session.status();
  auto follower = RemoteSnapshotDevice::Attach({name});
  ASSERT_TRUE(follower.ok()) << follower.status();
  EXPECT_EQ((*follower)->catalog().backend, "sim");
  EXPECT_TRUE((*follower)->catalog().simulated);
  ASSERT_TRUE((*follower)->Program(RequestFor("ubox/UCLK")).ok());
  Snapshot a;
  Snapshot b;
  // The demo model advances the simulator every millisecond on its own
  // thread, which a loaded machine may delay: bring it up to now here.
  (*session)->AdvanceSimulation();
  ASSERT_TRUE((*follower)->TakeSnapshot(&a).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  (*session)->AdvanceSimulation();
  ASSERT_TRUE((*follower)->TakeSnapshot(&b).ok());
  // The simulated U-Box clock runs at 2 GHz: 40 M cycles in 20 ms at least.
  EXPECT_GE(b.values[0], a.values[0] + 2'000'000'000ull / 50);
  EXPECT_GT(b.timestamp_ns, a.timestamp_ns);
  ASSERT_TRUE((*follower)->Release().ok());
  EXPECT_TRUE((*session)->Stop().ok());
  // Stopped: the name is gone.
  EXPECT_EQ(RemoteSnapshotDevice::Attach({name}).status().code(),
            absl::StatusCode::kNotFound);
}

TEST(NodeSharingSessionTest, OptionsAreChecked) {
  SessionOptions both;
  both.events = {"ubox/UCLK"};
  both.backend = "sim";
  both.share_counters_as = UniqueName("both");
  both.read_counters_from = {UniqueName("other")};
  EXPECT_EQ(Session::Start(both).status().code(),
            absl::StatusCode::kInvalidArgument);
  SessionOptions reader;
  reader.events = {"ubox/UCLK"};
  reader.read_counters_from = {UniqueName("absent")};
  EXPECT_EQ(Session::Start(reader).status().code(),
            absl::StatusCode::kNotFound);
  SessionOptions bad;
  bad.events = {"ubox/UCLK"};
  bad.backend = "sim";
  bad.share_counters_as = "no/slash";
  EXPECT_EQ(Session::Start(bad).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Session::Active(), nullptr);
}

}  // namespace
}  // namespace uncore::devices
