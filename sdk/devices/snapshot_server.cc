#include "sdk/devices/snapshot_server.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "sdk/common/clock.h"
#include "sdk/common/fd.h"
#include "sdk/common/status_macros.h"
#include "sdk/common/wire.h"

namespace uncore::devices {

// The segment: this header, then `entries` snapshot values, then the
// catalog's bytes.  Only lock-free atomics of fixed size, so both sides
// agree on the layout and no process sees a torn value.
struct ServedSegment {
  static constexpr uint64_t kMagic = 0x3330524853434e55ULL;  // "UNCSHR03"
  uint64_t magic = kMagic;
  // The server's process: its pid is stored last (0: not yet known), its
  // start time (/proc/PID/stat, clock ticks since boot) tells a reused pid,
  // its pid namespace (the inode of /proc/PID/ns/pid) whether the pid means
  // anything here.
  std::atomic<uint64_t> server_start_ticks{0};
  std::atomic<uint64_t> server_pid_ns{0};
  std::atomic<int32_t> server_pid{0};
  uint32_t padding0 = 0;
  uint64_t entries = 0;
  uint64_t catalog_bytes = 0;
  std::atomic<uint32_t> ready{0};         // set last by the server
  std::atomic<uint32_t> closing{0};       // the server has stopped serving
  std::atomic<int32_t> attached{0};       // followers attached
  std::atomic<uint32_t> request_word{0};  // futex: bumped per request
  std::atomic<uint32_t> served_word{0};   // futex: bumped per answer
  uint32_t padding = 0;
  std::atomic<uint64_t> requested{0};  // the last ticket handed out
  std::atomic<uint64_t> served{0};     // every ticket up to this is served
  std::atomic<uint64_t> snapshots{0};  // snapshots taken for followers
  std::atomic<uint64_t> sequence{0};   // sequence lock: odd while written
  std::atomic<uint64_t> timestamp_ns{0};
  std::atomic<uint32_t> valid{0};
  uint32_t padding2 = 0;

  std::atomic<uint64_t>* values() {
    return reinterpret_cast<std::atomic<uint64_t>*>(this + 1);
  }
  const char* catalog() {
    return reinterpret_cast<const char*>(values() + entries);
  }
  // The node union table (node_union.h), after the catalog, 8-byte aligned.
  NodeUnionSlot* union_slots() {
    const size_t offset = (entries * sizeof(uint64_t) + catalog_bytes + 7) &
                          ~static_cast<size_t>(7);
    return reinterpret_cast<NodeUnionSlot*>(reinterpret_cast<char*>(values()) +
                                            offset);
  }
};

namespace {

static_assert(std::atomic<uint64_t>::is_always_lock_free);
static_assert(std::atomic<uint32_t>::is_always_lock_free);
static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t));
static_assert(sizeof(ServedSegment) % sizeof(uint64_t) == 0);

// Futexes on the shared mapping (not FUTEX_PRIVATE: other processes wait).
void FutexWait(std::atomic<uint32_t>* word, uint32_t expected,
               std::chrono::milliseconds timeout) {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  ts.tv_nsec =
      static_cast<decltype(ts.tv_nsec)>((timeout.count() % 1000) * 1'000'000);
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT, expected,
          &ts, nullptr, 0);
}

void FutexWake(std::atomic<uint32_t>* word, int count) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE, count,
          nullptr, nullptr, 0);
}

size_t SegmentSize(uint64_t entries, uint64_t catalog_bytes) {
  const size_t head =
      sizeof(ServedSegment) + entries * sizeof(uint64_t) + catalog_bytes;
  return ((head + 7) & ~static_cast<size_t>(7)) +
         kNodeUnionSlots * sizeof(NodeUnionSlot);
}

std::string Reason(int error) { return std::generic_category().message(error); }

// A process, told apart from a later one with the same pid.
struct ProcessIdentity {
  int32_t pid = 0;
  uint64_t start_ticks = 0;  // 0: unknown
  uint64_t pid_ns = 0;       // 0: unknown
};

// The state (field 3) and start time (field 22) of /proc/PID/stat.
bool ReadProcessStat(int32_t pid, char* state, uint64_t* start_ticks) {
  const std::string path = fmt::format("/proc/{}/stat", pid);
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buffer[4096];
  const ssize_t n = read(fd, buffer, sizeof(buffer));
  close(fd);
  if (n <= 0) return false;
  std::string_view text(buffer, static_cast<size_t>(n));
  // The command name (field 2) is in parentheses and may hold anything.
  const size_t paren = text.rfind(')');
  if (paren == std::string_view::npos) return false;
  text.remove_prefix(paren + 1);
  int field = 2;
  while (!text.empty() && field < 22) {
    const size_t start = text.find_first_not_of(' ');
    if (start == std::string_view::npos) return false;
    text.remove_prefix(start);
    const size_t end = std::min(text.find(' '), text.size());
    ++field;
    if (field == 3) *state = text[0];
    if (field == 22) {
      uint64_t value = 0;
      for (const char c : text.substr(0, end)) {
        if (c < '0' || c > '9') return false;
        value = value * 10 + static_cast<uint64_t>(c - '0');
      }
      *start_ticks = value;
      return true;
    }
    text.remove_prefix(end);
  }
  return false;
}

uint64_t OwnPidNamespace() {
  struct stat st = {};
  if (stat("/proc/self/ns/pid", &st) != 0) return 0;
  return static_cast<uint64_t>(st.st_ino);
}

ProcessIdentity OwnIdentity() {
  ProcessIdentity id;
  id.pid = static_cast<int32_t>(getpid());
  char state = 0;
  ReadProcessStat(id.pid, &state, &id.start_ticks);
  id.pid_ns = OwnPidNamespace();
  return id;
}

enum class Liveness { kAlive, kDead, kUnknown };

Liveness LivenessOf(const ProcessIdentity& id) {
  if (id.pid <= 0) return Liveness::kUnknown;
  if (id.pid_ns != 0 && id.pid_ns != OwnPidNamespace()) {
    return Liveness::kUnknown;  // its pid means nothing here
  }
  if (kill(id.pid, 0) != 0 && errno == ESRCH) return Liveness::kDead;
  char state = 0;
  uint64_t start_ticks = 0;
  if (ReadProcessStat(id.pid, &state, &start_ticks)) {
    if (state == 'Z' || state == 'X') return Liveness::kDead;  // not reaped
    if (id.start_ticks != 0 && start_ticks != id.start_ticks) {
      return Liveness::kDead;  // the pid is another process's now
    }
  }
  return Liveness::kAlive;
}

ProcessIdentity IdentityIn(const ServedSegment& s) {
  ProcessIdentity id;
  id.pid = s.server_pid.load(std::memory_order_acquire);
  id.start_ticks = s.server_start_ticks.load(std::memory_order_relaxed);
  id.pid_ns = s.server_pid_ns.load(std::memory_order_relaxed);
  return id;
}

// Removes the name `path` if it still names the file (dev, ino): a new
// segment made under the name since it was looked at stays.
bool UnlinkIfSame(const std::string& path, dev_t dev, ino_t ino) {
  const int fd = shm_open(path.c_str(), O_RDONLY | O_CLOEXEC, 0);
  if (fd < 0) return false;
  struct stat st = {};
  const bool same = fstat(fd, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
  close(fd);
  return same && shm_unlink(path.c_str()) == 0;
}

// Removes the segment `path` when its server is known dead.  `owner` gets
// the identity recorded in it (pid 0 when there is none to read).
bool RemoveIfDead(const std::string& path, ProcessIdentity* owner) {
  *owner = ProcessIdentity();
  const int fd = shm_open(path.c_str(), O_RDONLY | O_CLOEXEC, 0);
  if (fd < 0) return false;
  struct stat st = {};
  if (fstat(fd, &st) != 0 ||
      static_cast<size_t>(st.st_size) < sizeof(ServedSegment)) {
    close(fd);
    return false;  // being created, or not ours
  }
  void* p = mmap(nullptr, sizeof(ServedSegment), PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED) return false;
  const auto* segment = static_cast<const ServedSegment*>(p);
  if (segment->magic == ServedSegment::kMagic) *owner = IdentityIn(*segment);
  munmap(p, sizeof(ServedSegment));
  return LivenessOf(*owner) == Liveness::kDead &&
         UnlinkIfSame(path, st.st_dev, st.st_ino);
}

// Maps `path` (opened as `fd`) read-write; closes fd.
absl::StatusOr<ServedSegment*> Map(int fd, size_t size,
                                   const std::string& path) {
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int error = errno;
  close(fd);
  if (p == MAP_FAILED) {
    return absl::InternalError(fmt::format(
        "cannot map the shared counters segment {}: {}", path, Reason(error)));
  }
  return static_cast<ServedSegment*>(p);
}

}  // namespace

// The catalog's bytes: sdk/common/wire.h (little-endian, length-prefixed).
std::string EncodeCatalog(const ServedCatalog& catalog) {
  common::WireWriter w;
  w.Str(catalog.backend);
  w.U64(catalog.simulated ? 1 : 0);
  w.U64(catalog.events.size());
  for (const ServedCatalog::Event& e : catalog.events) {
    w.Str(e.canonical);
    w.Str(e.unit);
    w.Str(e.encoding);
    w.F64(e.scale);
  }
  w.U64(catalog.plan.size());
  for (size_t i = 0; i < catalog.plan.size(); ++i) {
    const CounterPlacement& p = catalog.plan[i];
    w.I64(p.event);
    w.I64(p.socket);
    w.Str(p.unit);
    w.I64(p.instance);
    w.I64(p.counter);
    w.U64(p.width);
    w.Str(i < catalog.instance_names.size() ? catalog.instance_names[i] : "");
  }
  return w.Take();
}

absl::StatusOr<ServedCatalog> DecodeCatalog(std::string_view bytes) {
  common::WireReader r(bytes);
  ServedCatalog c;
  auto corrupt = [] {
    return absl::DataLossError(
        "the shared counters segment's catalog is corrupt (a leader of "
        "another SDK version?)");
  };
  c.backend = r.Str();
  c.simulated = r.Bool();
  // An event is at least three counts and a double; a plan entry six
  // integers and a count.
  c.events.resize(r.Count(uint64_t{4} * 8));
  for (ServedCatalog::Event& e : c.events) {
    e.canonical = r.Str();
    e.unit = r.Str();
    e.encoding = r.Str();
    e.scale = r.F64();
  }
  const uint64_t n = r.Count(uint64_t{7} * 8);
  c.plan.resize(n);
  c.instance_names.resize(n);
  for (size_t i = 0; i < n && r.ok(); ++i) {
    CounterPlacement& p = c.plan[i];
    p.event = r.Int();
    p.socket = r.Int();
    p.unit = r.Str();
    p.instance = r.Int();
    p.counter = r.Int();
    const uint64_t width = r.U64();
    p.width = static_cast<uint8_t>(width);
    c.instance_names[i] = r.Str();
    if (p.event < 0 || static_cast<uint64_t>(p.event) >= c.events.size() ||
        (r.ok() && (width == 0 || width > 64))) {
      return corrupt();
    }
  }
  if (!r.done()) return corrupt();
  return c;
}

absl::StatusOr<std::string> ServedSegmentPath(std::string_view name) {
  if (name.empty() || name.size() > 200 ||
      name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstu"
                             "vwxyz0123456789._-") != std::string_view::npos) {
    return absl::InvalidArgumentError(fmt::format(
        "invalid shared counters name \"{}\": use 1 to 200 letters, digits, "
        "'.', '_' or '-'",
        name));
  }
  return fmt::format("/uncore-{}", name);
}

// ---- the server ----

absl::StatusOr<std::unique_ptr<SnapshotServer>> SnapshotServer::Start(
    std::string_view name, Device* device, const ServedCatalog& catalog) {
  UNCORE_ASSIGN_OR_RETURN(std::string path, ServedSegmentPath(name));
  const std::string encoded = EncodeCatalog(catalog);
  const uint64_t entries =
      device == nullptr ? 0 : static_cast<uint64_t>(device->read_plan().size());
  if (entries != catalog.plan.size()) {
    return absl::InvalidArgumentError(
        "SnapshotServer: the catalog's plan does not match the device's");
  }
  const size_t size = SegmentSize(entries, encoded.size());
  auto create = [&] {
    return common::KeepAboveStdio(
        shm_open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  };
  int fd = create();
  int error = errno;
  ProcessIdentity owner;
  // A leftover of a server that died: removed, and made anew.
  if (fd < 0 && error == EEXIST && RemoveIfDead(path, &owner)) {
    fd = create();
    error = errno;
  }
  if (fd < 0) {
    if (error == EEXIST) {
      if (owner.pid > 0) {
        return absl::AlreadyExistsError(fmt::format(
            "the shared counters segment /dev/shm{} exists already: process "
            "{} serves it (another job uses the name)",
            path, owner.pid));
      }
      return absl::AlreadyExistsError(fmt::format(
          "the shared counters segment /dev/shm{} exists already and does "
          "not say which live process serves it (another job uses the name, "
          "or another SDK version left it: remove the file when no job "
          "runs)",
          path));
    }
    return absl::Status(
        absl::ErrnoToStatusCode(error),
        fmt::format("cannot create the shared counters segment /dev/shm{}: {}",
                    path, Reason(error)));
  }
  if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
    const int error = errno;
    close(fd);
    shm_unlink(path.c_str());
    return absl::ResourceExhaustedError(
        fmt::format("cannot size the shared counters segment /dev/shm{}: {}",
                    path, Reason(error)));
  }
  absl::StatusOr<ServedSegment*> mapped = Map(fd, size, path);
  if (!mapped.ok()) {
    shm_unlink(path.c_str());
    return mapped.status();
  }
  ServedSegment* segment = new (*mapped) ServedSegment();
  const ProcessIdentity self = OwnIdentity();
  segment->server_start_ticks.store(self.start_ticks,
                                    std::memory_order_relaxed);
  segment->server_pid_ns.store(self.pid_ns, std::memory_order_relaxed);
  segment->server_pid.store(self.pid, std::memory_order_release);
  segment->entries = entries;
  segment->catalog_bytes = encoded.size();
  for (uint64_t i = 0; i < entries; ++i) {
    new (&segment->values()[i]) std::atomic<uint64_t>(0);
  }
  std::memcpy(const_cast<char*>(segment->catalog()), encoded.data(),
              encoded.size());
  for (size_t i = 0; i < kNodeUnionSlots; ++i) {
    NodeUnionSlot* slot = new (&segment->union_slots()[i]) NodeUnionSlot;
    slot->key.store(0, std::memory_order_relaxed);
    slot->word.store(0, std::memory_order_relaxed);
  }

  std::unique_ptr<SnapshotServer> server(new SnapshotServer());
  server->path_ = std::move(path);
  server->device_ = device;
  server->segment_ = segment;
  server->size_ = size;
  try {
    server->thread_ = std::thread(&SnapshotServer::Serve, server.get());
  } catch (const std::system_error& e) {
    server->stopped_ = true;
    shm_unlink(server->path_.c_str());
    munmap(segment, size);
    return absl::ResourceExhaustedError(fmt::format(
        "cannot start the shared counters server thread: {}", e.what()));
  }
  segment->ready.store(1, std::memory_order_release);
  return server;
}

SnapshotServer::~SnapshotServer() { Stop(std::chrono::milliseconds(0)); }

void SnapshotServer::Serve() {
  ServedSegment& s = *segment_;
  Snapshot snapshot(s.entries);
  while (true) {
    const uint32_t word = s.request_word.load(std::memory_order_acquire);
    if (stop_.load(std::memory_order_acquire)) return;
    const uint64_t requested = s.requested.load(std::memory_order_acquire);
    if (requested == s.served.load(std::memory_order_relaxed)) {
      FutexWait(&s.request_word, word, std::chrono::milliseconds(100));
      continue;
    }
    // Taken after every request up to `requested` was made.
    bool valid = true;
    if (device_ != nullptr) {
      valid = device_->TakeSnapshot(&snapshot).ok() && snapshot.valid;
    } else {
      snapshot.timestamp_ns = common::MonotonicNowNs();
    }
    const uint64_t seq = s.sequence.load(std::memory_order_relaxed);
    s.sequence.store(seq + 1, std::memory_order_relaxed);
    // A seqlock without fences (ThreadSanitizer does not model them):
    // release stores, so a reader that sees a new value (an acquire load)
    // also sees the odd sequence number stored before it.
    for (uint64_t i = 0; i < s.entries; ++i) {
      s.values()[i].store(snapshot.values[i], std::memory_order_release);
    }
    s.timestamp_ns.store(snapshot.timestamp_ns, std::memory_order_release);
    s.valid.store(valid ? 1 : 0, std::memory_order_release);
    s.sequence.store(seq + 2, std::memory_order_release);
    s.snapshots.fetch_add(1, std::memory_order_relaxed);
    s.served.store(requested, std::memory_order_release);
    s.served_word.fetch_add(1, std::memory_order_release);
    FutexWake(&s.served_word, INT_MAX);
  }
}

void SnapshotServer::Stop(std::chrono::milliseconds wait) {
  if (stopped_) return;
  stopped_ = true;
  ServedSegment& s = *segment_;
  const auto deadline = std::chrono::steady_clock::now() + wait;
  while (s.attached.load(std::memory_order_acquire) > 0 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  s.closing.store(1, std::memory_order_release);
  stop_.store(true, std::memory_order_release);
  s.request_word.fetch_add(1, std::memory_order_release);
  FutexWake(&s.request_word, INT_MAX);
  thread_.join();
  // Followers still waiting see `closing` when they wake.
  s.served_word.fetch_add(1, std::memory_order_release);
  FutexWake(&s.served_word, INT_MAX);
  shm_unlink(path_.c_str());
  munmap(segment_, size_);
  segment_ = nullptr;
}

uint64_t SnapshotServer::served() const {
  return segment_ == nullptr
             ? 0
             : segment_->snapshots.load(std::memory_order_relaxed);
}

NodeUnionGroup SnapshotServer::node_union_group() const {
  NodeUnionGroup group;
  if (segment_ == nullptr) return group;
  group.name = path_;
  group.table = NodeUnionTable(segment_->union_slots());
  group.entries = segment_->entries;
  return group;
}

int SnapshotServer::attached() const {
  return segment_ == nullptr
             ? 0
             : segment_->attached.load(std::memory_order_relaxed);
}

int RemoveStaleSegments(std::string_view prefix) {
  DIR* dir = opendir("/dev/shm");
  if (dir == nullptr) return 0;
  const std::string start = fmt::format("uncore-{}", prefix);
  std::vector<std::string> names;
  while (const dirent* entry = readdir(dir)) {
    const std::string_view name = entry->d_name;
    if (name.substr(0, start.size()) == start) names.emplace_back(name);
  }
  closedir(dir);
  int removed = 0;
  for (const std::string& name : names) {
    ProcessIdentity owner;
    if (RemoveIfDead("/" + name, &owner)) ++removed;
  }
  return removed;
}

// ---- the follower's device ----

absl::StatusOr<std::unique_ptr<RemoteSnapshotDevice>>
RemoteSnapshotDevice::Attach(const std::vector<std::string>& names) {
  if (names.empty()) {
    return absl::InvalidArgumentError(
        "RemoteSnapshotDevice: no shared counters segment to read");
  }
  std::unique_ptr<RemoteSnapshotDevice> device(new RemoteSnapshotDevice());
  for (const std::string& name : names) {
    if (std::count(names.begin(), names.end(), name) > 1) {
      return absl::InvalidArgumentError(fmt::format(
          "shared counters \"{}\" are named twice: name each serving "
          "process once",
          name));
    }
    UNCORE_ASSIGN_OR_RETURN(const std::string path, ServedSegmentPath(name));
    const int fd =
        common::KeepAboveStdio(shm_open(path.c_str(), O_RDWR | O_CLOEXEC, 0));
    if (fd < 0) {
      const int error = errno;
      return absl::Status(
          error == ENOENT ? absl::StatusCode::kNotFound
                          : absl::ErrnoToStatusCode(error),
          fmt::format("cannot open the shared counters segment /dev/shm{} "
                      "(\"{}\"): {}; the process that counts for this "
                      "socket must start its session first",
                      path, name, Reason(error)));
    }
    struct stat st = {};
    if (fstat(fd, &st) != 0 ||
        static_cast<size_t>(st.st_size) < sizeof(ServedSegment)) {
      close(fd);
      return absl::FailedPreconditionError(fmt::format(
          "the shared counters segment /dev/shm{} is not ready yet", path));
    }
    const size_t size = static_cast<size_t>(st.st_size);
    UNCORE_ASSIGN_OR_RETURN(ServedSegment * segment, Map(fd, size, path));
    // Owned from here: Release unmaps it.
    Source& source = device->sources_.emplace_back();
    source.name = name;
    source.segment = segment;
    source.size = size;
    if (segment->magic == ServedSegment::kMagic) {
      const ProcessIdentity owner = IdentityIn(*segment);
      if (LivenessOf(owner) == Liveness::kDead) {
        const bool removed = UnlinkIfSame(path, st.st_dev, st.st_ino);
        return absl::FailedPreconditionError(fmt::format(
            "the process (pid {}) that served shared counters \"{}\" has "
            "died (killed, or it ended without stopping its session): "
            "/dev/shm{} is its leftover{}; the process that counts for this "
            "socket must start its session again",
            owner.pid, name, path, removed ? ", now removed" : ""));
      }
    }
    if (segment->magic != ServedSegment::kMagic ||
        segment->ready.load(std::memory_order_acquire) == 0 ||
        SegmentSize(segment->entries, segment->catalog_bytes) != size) {
      return absl::FailedPreconditionError(fmt::format(
          "/dev/shm{} is not a ready shared counters segment of this SDK "
          "version",
          path));
    }
    UNCORE_ASSIGN_OR_RETURN(source.catalog,
                            DecodeCatalog(std::string_view(
                                segment->catalog(), segment->catalog_bytes)));
    // Each snapshot reads one value per planned counter from the segment:
    // a catalog that plans more (or fewer) than it holds is corrupt.
    if (source.catalog.plan.size() != segment->entries) {
      return absl::DataLossError(fmt::format(
          "/dev/shm{} plans {} counters but holds {} values: the segment is "
          "corrupt; the socket's serving session must start again",
          path, source.catalog.plan.size(), segment->entries));
    }
    segment->attached.fetch_add(1, std::memory_order_acq_rel);
    source.counted = true;
  }
  return device;
}

RemoteSnapshotDevice::~RemoteSnapshotDevice() { Release().IgnoreError(); }

absl::Status RemoteSnapshotDevice::Program(const ProgramRequest& request) {
  plan_.clear();
  instance_names_.clear();
  events_.assign(request.events.size(), ServedCatalog::Event{});
  for (Source& source : sources_) {
    source.first_entry = plan_.size();
    // Leader event index -> ours.
    std::vector<int> map(source.catalog.events.size(), -1);
    for (size_t i = 0; i < request.events.size(); ++i) {
      const std::string canonical = request.events[i].Canonical();
      bool found = false;
      for (size_t j = 0; j < source.catalog.events.size(); ++j) {
        if (source.catalog.events[j].canonical == canonical) {
          map[j] = static_cast<int>(i);
          events_[i] = source.catalog.events[j];
          found = true;
        }
      }
      if (!found) {
        return absl::FailedPreconditionError(fmt::format(
            "the process serving shared counters \"{}\" does not count {}: "
            "every process must ask for the same events",
            source.name, canonical));
      }
    }
    for (size_t k = 0; k < source.catalog.plan.size(); ++k) {
      CounterPlacement p = source.catalog.plan[k];
      p.event = map[p.event];
      if (p.event < 0) {
        return absl::FailedPreconditionError(fmt::format(
            "the process serving shared counters \"{}\" counts {}, which "
            "this session did not ask for: every process must ask for the "
            "same events",
            source.name,
            source.catalog.events[source.catalog.plan[k].event].canonical));
      }
      plan_.push_back(p);
      instance_names_.push_back(source.catalog.instance_names[k]);
    }
  }
  return absl::OkStatus();
}

std::vector<NodeUnionGroup> RemoteSnapshotDevice::node_union_groups() const {
  std::vector<NodeUnionGroup> groups;
  for (const Source& source : sources_) {
    NodeUnionGroup& g = groups.emplace_back();
    // Named as the server names it (its shm path): every process steps
    // the groups in the order of these names.
    g.name = ServedSegmentPath(source.name).value_or(source.name);
    g.table = NodeUnionTable(source.segment->union_slots());
    g.first_entry = source.first_entry;
    g.entries = source.catalog.plan.size();
  }
  return groups;
}

absl::Status RemoteSnapshotDevice::TakeSnapshot(Snapshot* out) {
  out->values.resize(plan_.size());
  out->valid = false;
  if (broken_.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lock(broken_mu_);
    return broken_status_;
  }
  // No allocation on the region hot path (device.h) for up to 8 servers.
  absl::InlinedVector<uint64_t, 8> tickets(sources_.size());
  // Ask every server first, then wait for each: they snapshot in parallel.
  for (size_t i = 0; i < sources_.size(); ++i) {
    ServedSegment& s = *sources_[i].segment;
    tickets[i] = s.requested.fetch_add(1, std::memory_order_acq_rel) + 1;
    s.request_word.fetch_add(1, std::memory_order_release);
    FutexWake(&s.request_word, 1);
  }
  uint64_t timestamp = 0;
  for (size_t i = 0; i < sources_.size(); ++i) {
    UNCORE_RETURN_IF_ERROR(Read(sources_[i], tickets[i], out));
    timestamp = std::max(timestamp, out->timestamp_ns);
  }
  out->timestamp_ns = timestamp;
  out->valid = true;
  return absl::OkStatus();
}

absl::Status RemoteSnapshotDevice::Broken(absl::Status status) {
  std::lock_guard<std::mutex> lock(broken_mu_);
  if (!broken_.load(std::memory_order_relaxed)) {
    broken_status_ = std::move(status);
    broken_.store(true, std::memory_order_release);
  }
  return broken_status_;
}

absl::Status RemoteSnapshotDevice::Read(Source& source, uint64_t ticket,
                                        Snapshot* out) {
  ServedSegment& s = *source.segment;
  const ProcessIdentity owner = IdentityIn(s);
  // One text for the timeout and the failures after it, so that a report
  // lists it once.
  auto not_answering = [&] {
    return absl::DeadlineExceededError(fmt::format(
        "the process (pid {}) serving shared counters \"{}\" did not answer "
        "within {} ms; snapshots fail at once until it answers again",
        owner.pid, source.name, kFollowerTimeout.count()));
  };
  uint64_t stuck = source.stuck_ticket.load(std::memory_order_acquire);
  if (stuck != 0) {
    if (s.served.load(std::memory_order_acquire) < stuck) {
      return not_answering();
    }
    source.stuck_ticket.compare_exchange_strong(stuck, 0,
                                                std::memory_order_acq_rel);
  }
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + kFollowerTimeout;
  auto next_check = start + kLivenessCheckEvery;
  while (s.served.load(std::memory_order_acquire) < ticket) {
    const uint32_t word = s.served_word.load(std::memory_order_acquire);
    if (s.served.load(std::memory_order_acquire) >= ticket) break;
    if (s.closing.load(std::memory_order_acquire) != 0) {
      return absl::UnavailableError(fmt::format(
          "the process serving shared counters \"{}\" has stopped its "
          "session",
          source.name));
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= next_check) {
      if (LivenessOf(owner) == Liveness::kDead) {
        // Its leftover goes too (a live server's segment of the same name
        // stays).
        ProcessIdentity recorded;
        RemoveIfDead(fmt::format("/uncore-{}", source.name), &recorded);
        return Broken(absl::UnavailableError(fmt::format(
            "the process (pid {}) serving shared counters \"{}\" has died "
            "(killed, or it ended without stopping its session): no "
            "snapshot can be taken",
            owner.pid, source.name)));
      }
      next_check = now + kLivenessCheckEvery;
    }
    if (now >= deadline) {
      source.stuck_ticket.store(ticket, std::memory_order_release);
      return not_answering();
    }
    FutexWait(&s.served_word, word, kLivenessCheckEvery);
  }
  const size_t n = source.catalog.plan.size();
  while (true) {
    const uint64_t before = s.sequence.load(std::memory_order_acquire);
    if ((before & 1) != 0) {
      std::this_thread::yield();
      continue;
    }
    for (size_t k = 0; k < n; ++k) {
      out->values[source.first_entry + k] =
          s.values()[k].load(std::memory_order_acquire);
    }
    out->timestamp_ns = s.timestamp_ns.load(std::memory_order_acquire);
    const bool valid = s.valid.load(std::memory_order_acquire) != 0;
    if (s.sequence.load(std::memory_order_relaxed) != before) continue;
    if (!valid) {
      return absl::UnavailableError(fmt::format(
          "the process serving shared counters \"{}\" could not read them",
          source.name));
    }
    return absl::OkStatus();
  }
}

absl::Status RemoteSnapshotDevice::Release() {
  if (released_) return absl::OkStatus();
  released_ = true;
  for (Source& source : sources_) {
    if (source.segment == nullptr) continue;
    if (source.counted) {
      source.segment->attached.fetch_sub(1, std::memory_order_acq_rel);
    }
    munmap(source.segment, source.size);
    source.segment = nullptr;
  }
  return absl::OkStatus();
}

}  // namespace uncore::devices
