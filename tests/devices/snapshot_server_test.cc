// Node sharing (sdk/devices/snapshot_server.h, sdk/runtime/node_sharing.h):
// a server publishing a device's snapshots through shared memory, and
// followers reading them, here in one process (the MPI tests run it across
// processes).
#include "sdk/devices/snapshot_server.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sdk/common/clock.h"
#include "sdk/spec/event_spec.h"
#include "uncore/region.h"
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

// The catalog is sdk/common/wire.h's format: little-endian counts, strings
// as their bytes (UTF-8 stays UTF-8), and a count that cannot fit is
// refused before anything is allocated.
TEST(ServedCatalogTest, IsTheCommonWireFormat) {
  CountingDevice device({0});
  ServedCatalog c = CatalogFor(device, "ubox/UCLK");
  c.backend = "caf\xc3\xa9 \xe2\x98\x95";
  const std::string bytes = EncodeCatalog(c);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x09\0\0\0\0\0\0\0", 8));
  EXPECT_EQ(bytes.substr(8, 9), c.backend);
  absl::StatusOr<ServedCatalog> back = DecodeCatalog(bytes);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->backend, c.backend);
  // The event count (after the backend and the simulated flag) says more
  // events than the bytes could hold.
  std::string huge = bytes;
  huge.replace(8 + 9 + 8, 8, std::string(8, '\xff'));
  EXPECT_EQ(DecodeCatalog(huge).status().code(), absl::StatusCode::kDataLoss);
  // A byte more is refused too.
  EXPECT_FALSE(DecodeCatalog(bytes + '\0').ok());
  // A counter width no counter has: 0, or above 64.
  for (uint8_t width : {uint8_t{0}, uint8_t{65}}) {
    ServedCatalog odd = c;
    odd.plan[0].width = width;
    EXPECT_EQ(DecodeCatalog(EncodeCatalog(odd)).status().code(),
              absl::StatusCode::kDataLoss)
        << int{width};
  }
  ServedCatalog full = c;
  full.plan[0].width = 64;
  EXPECT_TRUE(DecodeCatalog(EncodeCatalog(full)).ok());
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

// The same segment twice would step its node words twice in one boundary
// (a process waiting on itself): refused, naming it.
TEST(SnapshotServerTest, ASegmentNamedTwiceIsRefused) {
  CountingDevice device({0});
  const std::string name = UniqueName("twice");
  auto server =
      SnapshotServer::Start(name, &device, CatalogFor(device, "ubox/UCLK"));
  ASSERT_TRUE(server.ok()) << server.status();
  auto follower = RemoteSnapshotDevice::Attach({name, name});
  ASSERT_FALSE(follower.ok());
  EXPECT_EQ(follower.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(follower.status().message()),
              ::testing::HasSubstr("named twice"));
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

bool SegmentExists(const std::string& name) {
  return access(fmt::format("/dev/shm/uncore-{}", name).c_str(), F_OK) == 0;
}

// A child process that serves `name` and is gone: it ends without Stop,
// as a killed process would, and is reaped.  Its pid.
pid_t LeaveDeadServer(const std::string& name) {
  const pid_t child = fork();
  if (child == 0) {
    CountingDevice device({0});
    auto server =
        SnapshotServer::Start(name, &device, CatalogFor(device, "ubox/UCLK"));
    _exit(server.ok() ? 0 : 1);  // no Stop: the segment stays
  }
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  return child;
}

// A child process serving `name` (a sim session's counters when `session`,
// else a CountingDevice) until it is killed.  Its pid, once it serves.
pid_t StartServerProcess(const std::string& name, bool session) {
  int ready[2];
  if (pipe(ready) != 0) return -1;
  const pid_t child = fork();
  if (child == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlives the test
    close(ready[0]);
    bool ok = false;
    std::unique_ptr<Session> s;
    CountingDevice device({0});
    std::unique_ptr<SnapshotServer> server;
    if (session) {
      SessionOptions o;
      o.events = {"ubox/UCLK"};
      o.backend = "sim";
      o.share_counters_as = name;
      auto started = Session::Start(o);
      ok = started.ok();
      if (ok) s = *std::move(started);
    } else {
      auto started =
          SnapshotServer::Start(name, &device, CatalogFor(device, "ubox/UCLK"));
      ok = started.ok();
      if (ok) server = *std::move(started);
    }
    const char byte = ok ? 'y' : 'n';
    if (write(ready[1], &byte, 1) != 1 || !ok) _exit(1);
    while (true) pause();
  }
  close(ready[1]);
  char byte = 0;
  const bool ok = read(ready[0], &byte, 1) == 1 && byte == 'y';
  close(ready[0]);
  EXPECT_TRUE(ok) << "the serving child did not start";
  return child;
}

void Reap(pid_t child) {
  int status = 0;
  waitpid(child, &status, 0);
}

// Kills and reaps a serving child when a test ends, and removes what it
// leaves in /dev/shm.
struct KillAtEnd {
  pid_t pid;
  std::string name;
  ~KillAtEnd() {
    if (kill(pid, SIGKILL) == 0) Reap(pid);
    RemoveStaleSegments(name);
  }
};

TEST(SnapshotServerTest, ADeadServersLeftoverIsRefusedAndRemoved) {
  const std::string name = UniqueName("dead");
  const pid_t dead = LeaveDeadServer(name);
  ASSERT_TRUE(SegmentExists(name));
  auto follower = RemoteSnapshotDevice::Attach({name});
  ASSERT_EQ(follower.status().code(), absl::StatusCode::kFailedPrecondition)
      << follower.status();
  EXPECT_NE(follower.status().message().find(
                fmt::format("(pid {}) that served shared counters", dead)),
            absl::string_view::npos)
      << follower.status();
  EXPECT_NE(follower.status().message().find("has died"),
            absl::string_view::npos);
  EXPECT_FALSE(SegmentExists(name));
}

TEST(SnapshotServerTest, StartRemovesADeadServersLeftover) {
  const std::string name = UniqueName("restart");
  LeaveDeadServer(name);
  ASSERT_TRUE(SegmentExists(name));
  CountingDevice device({0});
  auto server =
      SnapshotServer::Start(name, &device, CatalogFor(device, "ubox/UCLK"));
  ASSERT_TRUE(server.ok()) << server.status();
  auto follower = RemoteSnapshotDevice::Attach({name});
  ASSERT_TRUE(follower.ok()) << follower.status();
  ASSERT_TRUE((*follower)->Program(RequestFor("ubox/UCLK")).ok());
  Snapshot s;
  EXPECT_TRUE((*follower)->TakeSnapshot(&s).ok());
  // A live server's name is still refused, naming it.
  auto again =
      SnapshotServer::Start(name, &device, CatalogFor(device, "ubox/UCLK"));
  EXPECT_EQ(again.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_NE(again.status().message().find(fmt::format("process {}", getpid())),
            absl::string_view::npos)
      << again.status();
}

TEST(SnapshotServerTest, RemoveStaleSegmentsSweepsOnlyTheDead) {
  const std::string prefix = UniqueName("sweep");
  LeaveDeadServer(prefix + ".1");
  LeaveDeadServer(prefix + ".2");
  // Forked while this process has no thread of its own (ThreadSanitizer
  // refuses threads in a child forked from a threaded process).
  const pid_t other = StartServerProcess(prefix + ".4", /*session=*/false);
  const KillAtEnd end{other, prefix};
  CountingDevice device({0});
  auto live = SnapshotServer::Start(prefix + ".3", &device,
                                    CatalogFor(device, "ubox/UCLK"));
  ASSERT_TRUE(live.ok()) << live.status();
  EXPECT_EQ(RemoveStaleSegments(prefix), 2);
  EXPECT_FALSE(SegmentExists(prefix + ".1"));
  EXPECT_FALSE(SegmentExists(prefix + ".2"));
  EXPECT_TRUE(SegmentExists(prefix + ".3"));
  EXPECT_TRUE(SegmentExists(prefix + ".4"));
  // Killed: a zombie until reaped, dead all the same; the public name.
  kill(other, SIGKILL);
  // SIGKILL is asynchronous: wait until it has exited, leaving it a zombie
  // (WNOWAIT: not reaped).
  siginfo_t exited{};
  ASSERT_EQ(waitid(P_PID, other, &exited, WEXITED | WNOWAIT), 0);
  EXPECT_EQ(uncore::RemoveStaleSharedCounters(prefix), 1);
  EXPECT_FALSE(SegmentExists(prefix + ".4"));
  Reap(other);
  EXPECT_EQ(uncore::RemoveStaleSharedCounters(prefix), 0);
}

TEST(SnapshotServerTest, AServerThatDiesFailsItsReadersFast) {
  const std::string name = UniqueName("dies");
  const pid_t child = StartServerProcess(name, /*session=*/false);
  const KillAtEnd end{child, name};
  auto follower = RemoteSnapshotDevice::Attach({name});
  ASSERT_TRUE(follower.ok()) << follower.status();
  ASSERT_TRUE((*follower)->Program(RequestFor("ubox/UCLK")).ok());
  Snapshot s;
  ASSERT_TRUE((*follower)->TakeSnapshot(&s).ok());
  kill(child, SIGKILL);  // not reaped yet: a zombie
  auto t0 = std::chrono::steady_clock::now();
  const absl::Status first = (*follower)->TakeSnapshot(&s);
  EXPECT_EQ(first.code(), absl::StatusCode::kUnavailable) << first;
  EXPECT_NE(first.message().find(fmt::format("(pid {})", child)),
            absl::string_view::npos)
      << first;
  EXPECT_NE(first.message().find("has died"), absl::string_view::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(3));
  EXPECT_FALSE(SegmentExists(name));  // its leftover is gone too
  Reap(child);
  // From now on at once, with the same error.
  t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 20; ++i) {
    const absl::Status again = (*follower)->TakeSnapshot(&s);
    EXPECT_EQ(again, first);
    EXPECT_FALSE(s.valid);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0,
            std::chrono::milliseconds(500));
}

TEST(SnapshotServerTest, AServerThatStopsAnsweringFailsFastUntilItAnswers) {
  const std::string name = UniqueName("stuck");
  const pid_t child = StartServerProcess(name, /*session=*/false);
  const KillAtEnd end{child, name};
  auto follower = RemoteSnapshotDevice::Attach({name});
  ASSERT_TRUE(follower.ok()) << follower.status();
  ASSERT_TRUE((*follower)->Program(RequestFor("ubox/UCLK")).ok());
  Snapshot s;
  ASSERT_TRUE((*follower)->TakeSnapshot(&s).ok());
  kill(child, SIGSTOP);  // alive, not answering
  int status = 0;        // stopped for sure (the signal is asynchronous)
  ASSERT_EQ(waitpid(child, &status, WUNTRACED), child);
  ASSERT_TRUE(WIFSTOPPED(status));
  const absl::Status first = (*follower)->TakeSnapshot(&s);
  EXPECT_EQ(first.code(), absl::StatusCode::kDeadlineExceeded) << first;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 5; ++i) EXPECT_EQ((*follower)->TakeSnapshot(&s), first);
  EXPECT_LT(std::chrono::steady_clock::now() - t0,
            std::chrono::milliseconds(500));
  kill(child, SIGCONT);
  // It answers the requests made meanwhile, then ours.
  absl::Status later = first;
  for (int i = 0; i < 100 && !later.ok(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    later = (*follower)->TakeSnapshot(&s);
  }
  EXPECT_TRUE(later.ok()) << later;
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

TEST(NodeSharingSessionTest, ReadersOfADeadServerFailFastWithOneError) {
  const std::string name = UniqueName("session.dies");
  const pid_t child = StartServerProcess(name, /*session=*/true);
  const KillAtEnd end{child, name};
  SessionOptions o;
  o.events = {"ubox/UCLK"};
  o.read_counters_from = {name};
  auto session = Session::Start(o);
  ASSERT_TRUE(session.ok()) << session.status();
  { UncoreRegion before("before"); }
  kill(child, SIGKILL);
  Reap(child);
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 20; ++i) {
    UncoreRegion r(i % 2 == 0 ? "even" : "odd");
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(3));
  ASSERT_TRUE((*session)->Stop().ok());
  const Results results = (*session)->Collect();
  ASSERT_EQ(results.run.errors.size(), 1u)
      << ::testing::PrintToString(results.run.errors);
  const std::string& error = results.run.errors[0];
  // Every boundary after the death failed for that one reason.
  EXPECT_THAT(error, ::testing::MatchesRegex(
                         "[0-9]+ snapshots failed, the first at the begin of "
                         "\"even\": .*"));
  EXPECT_NE(error.find(fmt::format("(pid {})", child)), std::string::npos)
      << error;
  EXPECT_NE(error.find("has died"), std::string::npos) << error;
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
