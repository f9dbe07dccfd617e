// The session UNCORE_EVENTS describes, started when the library loads so
// that a program that only annotates regions gets a report without code
// changes, and stopped at exit (or by uncore_finalize(), or by SIGINT or
// SIGTERM).
//
// Signals.  Writing a report is not async-signal-safe, so the handler only
// writes the signal's number to a pipe; a thread started with the session
// reads it, stops the session (the report is written), restores the
// signal's default disposition and raises it again, so the program ends as
// the signal says ("killed by SIGINT").  Our handler is installed only for
// signals whose disposition is SIG_DFL when the session starts; a handler
// the program installs later replaces it.  The same signal again within
// kRepeatGraceNs of the first is a repeat, not a second request (GNU
// `timeout` sends SIGTERM to the program and then to its process group):
// the report is still written.  A second SIGINT or SIGTERM after that, or
// the other one, takes its usual effect at once.  SIGKILL cannot be
// caught: no report.
//
// A report write that blocks (a FIFO nobody reads, a full pipe on stderr)
// must not keep a signal from ending the program: the signal thread stops
// the session on a thread of its own and waits for it kAbandonAfter at
// most, whoever is writing (the exit path too); then it says on stderr,
// without blocking, that the report is abandoned, and the signal takes its
// effect.  A signal that arrives before exit ends the program whatever
// comes first (the exit path re-raises it after its own report): the exit
// status is the signal's.
//
// The handler wakes the signal thread through a futex word, not a pipe:
// the SDK keeps no descriptor for it, so a program that closes its
// inherited descriptors (a daemon) still ends on SIGTERM with its report,
// and the handler never writes into a descriptor the program reused.
//
// The program's threads keep running while the signal thread stops the
// session: Session::Stop lets the boundaries under way finish before it
// reads the open regions, writes the report and releases the device
// (docs/concurrency.md).  In a forked child the session is the parent's and
// stopping it does nothing.
#include "sdk/runtime/environment_session.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "sdk/common/status_macros.h"
#include "sdk/common/text.h"
#include "sdk/runtime/session_internal.h"
#include "uncore/session.h"
#include "uncore/uncore_c.h"

// The default: programs start the UNCORE_EVENTS session.  A program that
// chooses its sessions itself defines a strong version returning 0.
extern "C" __attribute__((weak)) int uncore_environment_session_enabled(void) {
  return 1;
}

// Defined (returning non-zero) by a library loaded with the program that
// starts the UNCORE_EVENTS session itself, later: the MPI integration
// (libuncore_sdk_mpi, docs/mpi.md) starts it in MPI_Init, once the ranks
// of a node have chosen who programs the counters.  A weak reference:
// null when no such library is loaded.
extern "C" __attribute__((weak)) int uncore_environment_session_deferred(void);

namespace uncore::runtime {
namespace {

std::unique_ptr<Session>& EnvironmentSession() {
  static auto* session = new std::unique_ptr<Session>();
  return *session;
}

// Serializes stopping the session: at exit, in uncore_finalize(), and on
// the signal thread.  Guards g_stopped.
std::mutex& StopMutex() {
  static auto* mu = new std::mutex;
  return *mu;
}
bool g_stopped = false;

const char* SignalName(int signo) {
  return signo == SIGINT ? "SIGINT" : "SIGTERM";
}

// Stops the session and writes its report, once; says on stderr when the
// report cannot be written.  `signo`: the signal that asked for it, or 0.
void StopSession(int signo) {
  std::lock_guard<std::mutex> lock(StopMutex());
  std::unique_ptr<Session>& session = EnvironmentSession();
  if (session == nullptr || g_stopped) return;
  g_stopped = true;
  if (signo != 0) {
    AddSessionWarning(
        *session,
        fmt::format("the program was interrupted by {} (signal {}): this "
                    "report was written before the signal took effect; "
                    "regions still open then are counted up to it and "
                    "marked open (open_calls)",
                    SignalName(signo), signo));
  }
  absl::Status s = session->Stop();
  if (!s.ok()) {
    // "the trace is lost: ..." says what it is; else the report's error.
    std::fprintf(stderr, "uncore: %s%s\n",
                 IsTraceLoss(s) ? "" : "writing the report failed: ",
                 common::StatusMessage(s).c_str());
  }
}

// The signals after which the report is still written.
constexpr int kSignals[] = {SIGINT, SIGTERM};

// How long the signal thread lets the report's write run before it
// abandons it and lets the signal end the program.
constexpr auto kAbandonAfter = std::chrono::seconds(3);

// Writes `text` to stderr without ever blocking: a pipe or FIFO through a
// descriptor of its own in non-blocking mode (its buffer may be full), a
// socket with MSG_DONTWAIT, anything else (a file, a terminal) as it is.
// Nothing when it cannot.
void SayWithoutBlocking(const std::string& text) {
  struct stat st = {};
  if (fstat(STDERR_FILENO, &st) != 0) return;
  ssize_t written = 0;
  if (S_ISSOCK(st.st_mode)) {
    written = send(STDERR_FILENO, text.data(), text.size(),
                   MSG_DONTWAIT | MSG_NOSIGNAL);
  } else if (S_ISFIFO(st.st_mode)) {
    const int fd = open("/proc/self/fd/2", O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return;
    written = write(fd, text.data(), text.size());
    close(fd);
  } else {
    written = write(STDERR_FILENO, text.data(), text.size());
  }
  (void)written;
}

// StopSession(signo) on a thread of its own, waited for kAbandonAfter at
// most: false when it has not finished by then (its write blocks, or the
// exit path's, which holds StopMutex()).  Without a thread to spare, as
// StopSession.
bool StopSessionWithin(int signo) {
  struct Done {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
  };
  auto done = std::make_shared<Done>();
  try {
    std::thread([done, signo] {
      StopSession(signo);
      std::lock_guard<std::mutex> lock(done->mu);
      done->done = true;
      done->cv.notify_all();
    }).detach();
  } catch (const std::system_error&) {
    StopSession(signo);
    return true;
  }
  std::unique_lock<std::mutex> lock(done->mu);
  return done->cv.wait_for(lock, kAbandonAfter, [&] { return done->done; });
}

void SetDefault(int signo) {
  struct sigaction action = {};
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  sigaction(signo, &action, nullptr);
}

// The signal's usual effect, on the calling thread: default disposition,
// unblocked, raised.
void RaiseAsUsual(int signo) {
  SetDefault(signo);
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, signo);
  pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
  raise(signo);
}

// A repeat of the same signal within this long of the first is the same
// request (GNU timeout's second SIGTERM comes microseconds after the
// first); a person's second Ctrl-C takes longer.
constexpr int64_t kRepeatGraceNs = 200'000'000;

// Set once by StartSignalWatcher, read by the handler.
pid_t g_owner_pid = 0;
bool g_installed[std::size(kSignals)] = {};
std::atomic<int> g_signal_received{0};
std::atomic<int64_t> g_first_signal_ns{0};
// The signal thread sleeps on it: 0 nothing yet, 1 a signal, 2 stop.
std::atomic<uint32_t> g_wake{0};
static_assert(std::atomic<int>::is_always_lock_free);
static_assert(std::atomic<int64_t>::is_always_lock_free);
static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t));

// Async-signal-safe: a system call.
void Wake(uint32_t value) {
  g_wake.store(value, std::memory_order_seq_cst);
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&g_wake), FUTEX_WAKE_PRIVATE,
          1, nullptr, nullptr, 0);
}

int64_t MonotonicNs() {  // async-signal-safe
  timespec ts = {};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::mutex& WatcherMutex() {
  static auto* mu = new std::mutex;
  return *mu;
}
std::thread* g_watcher = nullptr;  // guarded by WatcherMutex()

// Async-signal-safe calls only.
void OnSignal(int signo) {
  const int saved_errno = errno;
  const int64_t now = MonotonicNs();
  int first = 0;
  if (getpid() == g_owner_pid &&
      g_signal_received.compare_exchange_strong(first, signo)) {
    g_first_signal_ns.store(now);
    Wake(1);
  } else if (getpid() == g_owner_pid && first == signo &&
             (g_first_signal_ns.load() == 0 ||
              now - g_first_signal_ns.load() < kRepeatGraceNs)) {
    // The same request again (GNU timeout): the report is being written.
  } else {
    // A forked child (it has no signal thread), or a second signal while
    // the report is being written: the usual effect, now.  The signal is
    // blocked in its handler, so it is delivered when the handler returns.
    SetDefault(signo);
    raise(signo);
  }
  errno = saved_errno;
}

// The signal thread: sleeps until a signal (or the stop) wakes it.
void WatchSignals() {
  for (;;) {
    const uint32_t wake = g_wake.load(std::memory_order_seq_cst);
    if (wake == 0) {
      syscall(SYS_futex, reinterpret_cast<uint32_t*>(&g_wake),
              FUTEX_WAIT_PRIVATE, 0, nullptr, nullptr, 0);
      continue;  // woken, interrupted or spurious: look again
    }
    if (wake != 1) return;
    const int signo = g_signal_received.load();
    if (!StopSessionWithin(signo)) {
      SayWithoutBlocking(fmt::format(
          "uncore: {} came while the report was being written, and the "
          "write has not ended in {} s (a FIFO nobody reads? a full pipe?): "
          "the report is abandoned\n",
          SignalName(signo), std::chrono::seconds(kAbandonAfter).count()));
    }
    // The signal's usual effect: delivered to this thread, which blocked
    // every signal until now.
    RaiseAsUsual(signo);
    return;
  }
}

// Installs OnSignal where the disposition is SIG_DFL and starts the signal
// thread.  Does nothing when no signal needs it or a resource is missing
// (the report is then written at exit only, as without signals).
void StartSignalWatcher() {
  std::lock_guard<std::mutex> lock(WatcherMutex());
  bool any_default = false;
  for (const int signo : kSignals) {
    struct sigaction current = {};
    if (sigaction(signo, nullptr, &current) == 0 &&
        (current.sa_flags & SA_SIGINFO) == 0 && current.sa_handler == SIG_DFL) {
      any_default = true;
    }
  }
  if (!any_default) return;
  g_owner_pid = getpid();
  g_wake.store(0);
  // The thread starts with every signal blocked, so that none is handled
  // there and the re-raise above reaches it only when unblocked.
  sigset_t all;
  sigset_t old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  try {
    g_watcher = new std::thread(&WatchSignals);
  } catch (const std::system_error&) {
    g_watcher = nullptr;
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (g_watcher == nullptr) return;
  for (size_t i = 0; i < std::size(kSignals); ++i) {
    struct sigaction current = {};
    if (sigaction(kSignals[i], nullptr, &current) != 0 ||
        (current.sa_flags & SA_SIGINFO) != 0 || current.sa_handler != SIG_DFL) {
      continue;
    }
    struct sigaction action = {};
    action.sa_handler = &OnSignal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    g_installed[i] = sigaction(kSignals[i], &action, nullptr) == 0;
  }
}

// Puts back SIG_DFL where our handler still is, and stops and joins the
// signal thread.  Not on the signal thread.
void StopSignalWatcher() {
  std::lock_guard<std::mutex> lock(WatcherMutex());
  for (size_t i = 0; i < std::size(kSignals); ++i) {
    if (!g_installed[i]) continue;
    struct sigaction current = {};
    if (sigaction(kSignals[i], nullptr, &current) == 0 &&
        (current.sa_flags & SA_SIGINFO) == 0 &&
        current.sa_handler == &OnSignal) {
      SetDefault(kSignals[i]);
    }
    g_installed[i] = false;
  }
  // In a forked child the thread is not there (and the pipe is shared
  // with the parent's).
  if (g_watcher == nullptr || getpid() != g_owner_pid) return;
  if (g_watcher->get_id() == std::this_thread::get_id()) return;
  // A signal that came first keeps the thread busy with it: the stop is
  // seen when it looks again (never: it re-raises the signal).
  uint32_t idle = 0;
  if (g_wake.compare_exchange_strong(idle, 2)) {
    Wake(2);
    g_watcher->join();
  } else {
    g_watcher->detach();
  }
  delete g_watcher;
  g_watcher = nullptr;
}

}  // namespace

void StopEnvironmentSession() {
  if (EnvironmentSession() == nullptr) return;
  StopSession(0);
  StopSignalWatcher();
  // A signal that came first ends the program as it would have without
  // the SDK, now that the report is written (the signal thread may be
  // about to do the same, or still be waiting for this thread's write).
  const int signo = g_signal_received.load();
  if (signo != 0 && getpid() == g_owner_pid) RaiseAsUsual(signo);
}

bool StartEnvironmentSession() {
  if (uncore_environment_session_enabled() == 0) return false;
  if (uncore_environment_session_deferred != nullptr &&
      uncore_environment_session_deferred() != 0) {
    return false;
  }
  absl::StatusOr<SessionOptions> options = Session::OptionsFromEnvironment();
  if (!options.ok()) {
    if (options.status().code() != absl::StatusCode::kNotFound) {
      std::fprintf(
          stderr, "uncore: regions will not be measured: %s\n",
          common::PrintableMessage(common::StatusMessage(options.status()))
              .c_str());
    }
    return false;
  }
  // The variables that asked for it (the error names the one at fault).
  const char* asked = options->events.empty()    ? "UNCORE_METRICS asks"
                      : options->metrics.empty() ? "UNCORE_EVENTS asks"
                                                 : "UNCORE_EVENTS and "
                                                   "UNCORE_METRICS ask";
  absl::StatusOr<std::unique_ptr<Session>> session =
      Session::Start(*std::move(options));
  if (!session.ok()) {
    std::fprintf(
        stderr,
        "uncore: regions will not be measured: the session %s for cannot "
        "start: %s\n",
        asked,
        common::PrintableMessage(common::StatusMessage(session.status()))
            .c_str());
    return false;
  }
  EnvironmentSession() = *std::move(session);
  std::atexit(&StopEnvironmentSession);
  StartSignalWatcher();
  return true;
}

}  // namespace uncore::runtime

// Referenced with --undefined by every program that links uncore::sdk, so a
// static link keeps this file and its initializer (sdk/CMakeLists.txt).
extern "C" {
extern const int uncore_environment_session_anchor;
const int uncore_environment_session_anchor = 0;
}

namespace uncore::runtime {
namespace {
[[maybe_unused]] const bool g_environment_session = StartEnvironmentSession();
}  // namespace
}  // namespace uncore::runtime
