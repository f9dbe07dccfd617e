// libuncore_likwid: LIKWID 5's marker API (include/likwid.h) over the
// Uncore SDK's C API, and the C side of the Fortran module `likwid`
// (likwid.F90).
//
//   cc -DLIKWID_PERFMON prog.c $(pkg-config --cflags --libs uncore-sdk-likwid)
//   UNCORE_EVENTS=imc/CAS_COUNT.RD UNCORE_OUTPUT=report.json ./a.out
//
// Init is uncore_init() (uncore::Session::Active() then says whether a
// session measures), Start and Stop uncore_marker_start / _stop, Reset
// uncore_marker_reset, Get uncore_region_get, Close uncore_finalize() and
// WriteFile uncore_write_report().  LIKWID 5.2's per-thread region states
// (its hash table's MARKER_STATE_*: known, running, stopped) are the SDK's
// own marker state (the recorder's running markers, which the SDK's
// uncore_marker_* share; uncore::internal::MarkerStart / Stop / Reset give
// the cause of a refusal): running is what the SDK has running on this
// thread, stopped is not running but entered on this thread in this session
// (uncore_region_get finds it).  From those, LIKWID's warnings and return
// codes (its libperfctr.c); the misuse also reaches the SDK, which lists it
// in the report.  Only whether the API is on (Init / Close) is kept here.
//
// Guarantees: exports the likwid_* functions of likwid.h, the
// uncore_likwid_f_* functions the Fortran module binds to, and the
// likwid_*_ functions a program compiled against LIKWID's own likwid.mod
// calls (uncore_likwid.map), nothing else; links the shared libuncore_sdk
// and is never part of it, so a program never gets likwid_* symbols from
// the SDK.  Start and Stop take no lock and allocate only the first time
// the SDK meets a name.
#include <errno.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>

#include "likwid.h"
#include "uncore/region.h"
#include "uncore/session.h"
#include "uncore/uncore_c.h"

namespace {

// Whether the markers measure: LIKWID's likwid_init.  Set by
// likwid_markerInit when a session runs, cleared by likwid_markerClose.
std::atomic<bool> g_on{false};
// Events per region in the session (for the zeros of an unknown region).
std::atomic<int> g_num_events{0};
std::mutex g_init_mu;  // Init and Close

bool On() { return g_on.load(std::memory_order_acquire); }

// A Fortran string: its first `length` characters, up to a NUL, without
// trailing blanks.
std::string FromFortran(const char* text, int64_t length) {
  if (text == nullptr || length <= 0) return std::string();
  std::string_view s(text, static_cast<size_t>(length));
  s = s.substr(0, s.find('\0'));
  const size_t last = s.find_last_not_of(' ');
  return std::string(last == std::string_view::npos ? std::string_view()
                                                    : s.substr(0, last + 1));
}

void ZeroResults(int* nr_events, double* time, int* count) {
  if (nr_events != nullptr) *nr_events = 0;
  if (time != nullptr) *time = 0.0;
  if (count != nullptr) *count = 0;
}

}  // namespace

extern "C" {

void likwid_markerInit(void) {
  std::lock_guard<std::mutex> lock(g_init_mu);
  if (On()) return;
  if (uncore_init() != 0) {
    std::fprintf(stderr, "Running without Marker API: %s\n",
                 uncore_last_error());
    return;
  }
  const uncore::Session* session = uncore::Session::Active();
  if (session == nullptr) {
    std::fputs(
        "Running without Marker API. Activate Marker API with "
        "UNCORE_EVENTS or UNCORE_METRICS (docs/environment.md).\n",
        stderr);
    return;
  }
  if (!session->measuring()) {  // UNCORE_BACKEND=off, or auto found none
    std::fprintf(stderr,
                 "Running without Marker API: the session's backend (%.*s) "
                 "measures nothing.\n",
                 static_cast<int>(session->backend().size()),
                 session->backend().data());
    return;
  }
  g_num_events.store(static_cast<int>(session->Collect().events.size()),
                     std::memory_order_relaxed);
  g_on.store(true, std::memory_order_release);
}

void likwid_markerThreadInit(void) {}

void likwid_markerNextGroup(void) {}

void likwid_markerClose(void) {
  std::lock_guard<std::mutex> lock(g_init_mu);
  if (!g_on.exchange(false, std::memory_order_acq_rel)) return;
  if (uncore_finalize() != 0) {
    std::fprintf(stderr, "uncore: likwid_markerClose: %s\n",
                 uncore_last_error());
  }
}

int likwid_markerWriteFile(const char* markerfile) {
  if (markerfile == nullptr || !On()) return -EFAULT;
  if (uncore_write_report(markerfile) != 0) {
    std::fprintf(stderr, "uncore: likwid_markerWriteFile(\"%s\"): %s\n",
                 markerfile, uncore_last_error());
    return -EIO;
  }
  return 0;
}

int likwid_markerRegisterRegion(const char* regionTag) {
  if (regionTag == nullptr || !On()) return -EFAULT;
  return uncore_region_register(regionTag) == 0 ? 0 : -EFAULT;
}

int likwid_markerStartRegion(const char* regionTag) {
  if (regionTag == nullptr || !On()) return -EFAULT;
  switch (uncore::internal::MarkerStart(regionTag)) {
    case 0:
      return 0;
    case uncore::internal::kMarkerRunning:
      // LIKWID warns and goes on (0); the SDK keeps the first start and
      // lists the second in the report.
      std::fprintf(stderr, "WARN: Region %s was already started\n", regionTag);
      return 0;
    default:
      // More markers at once than the SDK holds, or the session is
      // stopping (uncore_last_error() says which).
      return -EFAULT;
  }
}

int likwid_markerStopRegion(const char* regionTag) {
  if (regionTag == nullptr || !On()) return -EFAULT;
  const int result = uncore::internal::MarkerStop(regionTag);
  if (result == uncore::internal::kMarkerNotRunning) {  // in the report too
    std::fprintf(stderr, "WARN: Stopping an unknown/not-started region %s\n",
                 regionTag);
  }
  return result == 0 ? 0 : -EFAULT;
}

int likwid_markerResetRegion(const char* regionTag) {
  if (regionTag == nullptr || !On()) return -EFAULT;
  // LIKWID resets stopped regions only: entered on this thread (the SDK
  // has its share) and not running (the SDK's reset refuses that).
  if (uncore_region_get(regionTag, nullptr, nullptr, nullptr, nullptr) != 0) {
    std::fputs("ERROR: Can only reset stopped regions\n", stderr);
    return -EFAULT;
  }
  const int result = uncore::internal::MarkerReset(regionTag);
  if (result == uncore::internal::kMarkerRunning) {
    std::fputs("ERROR: Can only reset stopped regions\n", stderr);
  }
  return result == 0 ? 0 : -EFAULT;
}

void likwid_markerGetRegion(const char* regionTag, int* nr_events,
                            double* events, double* time, int* count) {
  if (!On()) {
    ZeroResults(nr_events, time, count);
    return;
  }
  const bool want_events =
      nr_events != nullptr && events != nullptr && *nr_events > 0;
  int written = want_events ? *nr_events : 0;
  double seconds = 0.0;
  int calls = 0;
  if (regionTag == nullptr ||
      uncore_region_get(regionTag, want_events ? &written : nullptr,
                        want_events ? events : nullptr, &seconds,
                        &calls) != 0) {
    // Not stopped on this thread yet: LIKWID's new entry, all zero.
    seconds = 0.0;
    calls = 0;
    if (want_events) {
      written =
          std::min(*nr_events, g_num_events.load(std::memory_order_relaxed));
      std::fill(events, events + written, 0.0);
    }
  }
  if (want_events) *nr_events = written;
  if (time != nullptr) *time = seconds;
  if (count != nullptr) *count = calls;
}

int likwid_getProcessorId(void) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) == 1) {
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &set)) return cpu;
    }
  }
  return sched_getcpu();
}

int likwid_pinProcess(int processorId) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (processorId >= 0 && processorId < CPU_SETSIZE) {
    CPU_SET(processorId, &set);
    if (sched_setaffinity(0, sizeof(set), &set) == 0) return 1;
  }
  std::fprintf(stderr, "ERROR: Pinning of process to CPU %d failed: %s\n",
               processorId, std::strerror(errno != 0 ? errno : EINVAL));
  return 0;
}

int likwid_pinThread(int processorId) {
  cpu_set_t set;
  CPU_ZERO(&set);
  int error = EINVAL;
  if (processorId >= 0 && processorId < CPU_SETSIZE) {
    CPU_SET(processorId, &set);
    error = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
    if (error == 0) return 1;
  }
  std::fprintf(stderr, "ERROR: Pinning of thread to CPU %d failed: %s\n",
               processorId, std::strerror(error));
  return 0;
}

// The Fortran module's bind(C) functions (likwid.F90): a region name as a
// Fortran string and its length.

void uncore_likwid_f_register_region(const char* tag, int length) {
  (void)likwid_markerRegisterRegion(FromFortran(tag, length).c_str());
}

void uncore_likwid_f_start_region(const char* tag, int length) {
  (void)likwid_markerStartRegion(FromFortran(tag, length).c_str());
}

void uncore_likwid_f_stop_region(const char* tag, int length) {
  (void)likwid_markerStopRegion(FromFortran(tag, length).c_str());
}

void uncore_likwid_f_reset_region(const char* tag, int length) {
  (void)likwid_markerResetRegion(FromFortran(tag, length).c_str());
}

void uncore_likwid_f_get_region(const char* tag, int length, int* nr_events,
                                double* events, double* time, int* count) {
  likwid_markerGetRegion(FromFortran(tag, length).c_str(), nr_events, events,
                         time, count);
}

void uncore_likwid_f_write_file(const char* file, int length) {
  (void)likwid_markerWriteFile(FromFortran(file, length).c_str());
}

// LIKWID's NvMarker (5.2) and RocmMarker (5.3) subroutines, WriteFile 5.4:
// GPUs are not measured.
void uncore_likwid_f_gpu_marker(const char* /*tag*/, int /*length*/) {}

// What a program compiled against LIKWID's own likwid.mod calls: its
// interface declares external procedures, which gfortran (and ifort) name
// in lower case with a trailing underscore and pass a string's length as a
// trailing size_t.

void likwid_markerinit_(void) { likwid_markerInit(); }

void likwid_markerthreadinit_(void) { likwid_markerThreadInit(); }

void likwid_markernextgroup_(void) { likwid_markerNextGroup(); }

void likwid_markerclose_(void) { likwid_markerClose(); }

void likwid_markerregisterregion_(const char* tag, size_t length) {
  uncore_likwid_f_register_region(tag, static_cast<int>(length));
}

void likwid_markerstartregion_(const char* tag, size_t length) {
  uncore_likwid_f_start_region(tag, static_cast<int>(length));
}

void likwid_markerstopregion_(const char* tag, size_t length) {
  uncore_likwid_f_stop_region(tag, static_cast<int>(length));
}

void likwid_markerresetregion_(const char* tag, size_t length) {
  uncore_likwid_f_reset_region(tag, static_cast<int>(length));
}

void likwid_markergetregion_(const char* tag, int* nr_events, double* events,
                             double* time, int* count, size_t length) {
  uncore_likwid_f_get_region(tag, static_cast<int>(length), nr_events, events,
                             time, count);
}

void likwid_markerwritefile_(const char* file, size_t length) {
  uncore_likwid_f_write_file(file, static_cast<int>(length));
}

// The GPU subroutines of LIKWID's likwid.mod when LIKWID was built for
// Nvidia (likwid_NvMarker*, 5.2 and later) or AMD GPUs (likwid_RocmMarker*,
// 5.3 and later; the WriteFile ones 5.4): nothing, GPUs are not measured.

void likwid_nvmarkerinit_(void) {}
void likwid_nvmarkernextgroup_(void) {}
void likwid_nvmarkerclose_(void) {}
void likwid_nvmarkerregisterregion_(const char* /*tag*/, size_t /*length*/) {}
void likwid_nvmarkerstartregion_(const char* /*tag*/, size_t /*length*/) {}
void likwid_nvmarkerstopregion_(const char* /*tag*/, size_t /*length*/) {}
void likwid_nvmarkerresetregion_(const char* /*tag*/, size_t /*length*/) {}
void likwid_nvmarkerwritefile_(const char* /*file*/, size_t /*length*/) {}

void likwid_rocmmarkerinit_(void) {}
void likwid_rocmmarkernextgroup_(void) {}
void likwid_rocmmarkerclose_(void) {}
void likwid_rocmmarkerregisterregion_(const char* /*tag*/, size_t /*length*/) {}
void likwid_rocmmarkerstartregion_(const char* /*tag*/, size_t /*length*/) {}
void likwid_rocmmarkerstopregion_(const char* /*tag*/, size_t /*length*/) {}
void likwid_rocmmarkerresetregion_(const char* /*tag*/, size_t /*length*/) {}
void likwid_rocmmarkerwritefile_(const char* /*file*/, size_t /*length*/) {}

}  // extern "C"
