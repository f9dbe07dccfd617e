// uncore/region.h: bracket a phase of your program and get what the uncore
// did while it ran.
//
//   void Solve() {
//     UNCORE_REGION("solve");              // the fastest form; a name that
//     ...                                  // changes at run time works too
//   }
//   { uncore::UncoreRegion r("assemble"); ... }   // RAII, any string
//   uncore::RegionBegin("io"); ... uncore::RegionEnd("io");  // not scopes
//
// Regions count only while a session is active (uncore/session.h, or the
// UNCORE_EVENTS environment variable); without one, or with backend `off`, a
// region costs one pointer test.  -DUNCORE_DISABLE compiles UNCORE_REGION
// away.  Counts are socket-wide: a region reports everything its sockets'
// uncore did while it was open, whichever thread did the work.  Any thread
// may open regions, with its own stack (kMaxRegionDepth deep) merged into
// the report; a thread that exits keeps its results.
//
// Guarantees:
// - Misuse never crashes and is recorded in the report (an end without a
//   begin, an end that is not the innermost region's, nesting too deep, a
//   region closed by an exception).  An end that names an outer region
//   closes the regions inside it, each with its true wall time.
// - Hot path, every form (the macro, UncoreRegion from a RegionId, a
//   `const char*`, a `std::string_view` or a `std::string`, RegionBegin and
//   RegionEnd, the C API and the LIKWID macros): once a name has been used
//   on a thread, no allocation, no lock and no system call other than the
//   counter reads.  String names are found in a lock-free table (a
//   per-thread cache keyed by the pointer, confirmed by a comparison).
// - Each region takes one counter snapshot at begin and one at end; threads
//   that cross boundaries at the same moment share snapshots
//   (docs/concurrency.md).
// - Stopping the session while other threads are inside regions, program
//   exit, fork() and signal handlers are safe (docs/concurrency.md): a
//   region in a signal handler that interrupts the SDK itself is refused
//   and counted as refused in the report.
#ifndef UNCORE_REGION_H_
#define UNCORE_REGION_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <string>
#include <string_view>

namespace uncore {

inline constexpr int kMaxRegionDepth = 32;
// LIKWID-style marker regions running at once on one thread.
inline constexpr int kMaxMarkers = 64;

// An interned region name.
struct RegionId {
  int value = -1;
};

// Interns `name` (thread-safe; the first time a name is seen it takes a
// lock and allocates; after that, a lock-free lookup).
RegionId InternRegionName(std::string_view name);

namespace regions {
class Recorder;
}  // namespace regions

namespace internal {
// The active session's recorder, or nullptr.
extern std::atomic<regions::Recorder*> g_active_recorder;
// The recorder's generation when the begin was recorded, else 0 (refused,
// or the session stopped meanwhile).
uint64_t BeginRegion(regions::Recorder* recorder, int name_id);
// `exception`: the region is being closed by stack unwinding.
// `generation`: what BeginRegion returned (0: any, for RegionEnd and the C
// API, which do not know it).
void EndRegion(regions::Recorder* recorder, int name_id, bool exception,
               uint64_t generation = 0);
// A region a team's other threads open their first region under (the
// OpenMP tool: the workers of a parallel construct under the region its
// encountering thread is in), so that the whole team shares one path.
struct RegionParent {
  uint64_t generation = 0;  // of the recorder it belongs to; 0: none
  int path = -1;
  void* state = nullptr;
};
// The calling thread's innermost open region on `recorder` (none: a
// default RegionParent).
RegionParent CurrentRegionParent(regions::Recorder* recorder);
// As BeginRegion, but a thread with no region open opens `name_id` as a
// child of `parent` (with regions open: as a child of its innermost one).
// End it with EndRegion.
uint64_t BeginRegionUnder(regions::Recorder* recorder,
                          const RegionParent& parent, int name_id);
// LIKWID's marker semantics (the LIKWID package): regions keyed per thread
// by name, at the top level, that may overlap (start A, start B, stop A,
// stop B).  0 on success; a start of a marker that runs on this thread, or
// a stop of one that does not, is recorded in the report and returns
// kMarkerRunning / kMarkerNotRunning; more than kMaxMarkers at once,
// kMarkerTooMany; a refused boundary (a signal handler that interrupted
// the SDK, or the session stopping), kMarkerRefused.
inline constexpr int kMarkerRunning = -1;
inline constexpr int kMarkerNotRunning = -2;
inline constexpr int kMarkerTooMany = -3;
inline constexpr int kMarkerRefused = -4;
int BeginMarker(regions::Recorder* recorder, int name_id);
int EndMarker(regions::Recorder* recorder, int name_id);
// Zeroes the calling thread's results of the top-level region `name_id`
// (its calls, times and credited counts); kMarkerRunning while it runs on
// this thread.
int ResetMarker(regions::Recorder* recorder, int name_id);
// The C API's uncore_marker_start / _stop / _reset (sdk/runtime/c_api.cc),
// which are these with any failure made -1, for a caller that needs the
// cause (the LIKWID package, integrations/likwid, turns it into LIKWID's
// warnings and return codes): 0, or a kMarker* code with
// uncore_last_error() set.  Without an active session start and stop are 0
// (not measured), reset kMarkerNoSession; a NULL name, kMarkerNullName.
inline constexpr int kMarkerNoSession = -5;
inline constexpr int kMarkerNullName = -6;
int MarkerStart(const char* name);
int MarkerStop(const char* name);
int MarkerReset(const char* name);
// The id of a name: a per-thread cache keyed by the pointer, confirmed by a
// comparison, in front of the lock-free name table.
int NameIdOf(const char* name);
int NameIdOf(std::string_view name);

// An interned name; lives as long as the process.
struct InternedName {
  const char* data;  // NUL-terminated
  size_t size;
  int id;
};
// One UNCORE_REGION line: the last name it saw.
struct RegionSite {
  std::atomic<const InternedName*> last{nullptr};
};
int NameIdAtSiteSlow(RegionSite& site, std::string_view name);
inline int NameIdAtSite(RegionSite& site, std::string_view name) {
  const InternedName* n = site.last.load(std::memory_order_acquire);
  if (n != nullptr && n->size == name.size() &&
      (n->data == name.data() || name.empty() ||
       std::memcmp(n->data, name.data(), name.size()) == 0)) {
    return n->id;
  }
  return NameIdAtSiteSlow(site, name);
}
}  // namespace internal

class [[nodiscard]] UncoreRegion {
 public:
  [[nodiscard]] explicit UncoreRegion(RegionId id) { Open(id.value); }
  [[nodiscard]] explicit UncoreRegion(const char* name) {
    if (internal::g_active_recorder.load(std::memory_order_acquire) !=
        nullptr) {
      Open(internal::NameIdOf(name));
    }
  }
  [[nodiscard]] explicit UncoreRegion(std::string_view name) {
    if (internal::g_active_recorder.load(std::memory_order_acquire) !=
        nullptr) {
      Open(internal::NameIdOf(name));
    }
  }
  [[nodiscard]] explicit UncoreRegion(const std::string& name)
      : UncoreRegion(std::string_view(name)) {}
  // What UNCORE_REGION uses: the site remembers the last name it saw.
  [[nodiscard]] UncoreRegion(internal::RegionSite& site, const char* name) {
    if (internal::g_active_recorder.load(std::memory_order_acquire) !=
        nullptr) {
      Open(internal::NameIdAtSite(
          site, name == nullptr ? std::string_view() : std::string_view(name)));
    }
  }
  [[nodiscard]] UncoreRegion(internal::RegionSite& site,
                             std::string_view name) {
    if (internal::g_active_recorder.load(std::memory_order_acquire) !=
        nullptr) {
      Open(internal::NameIdAtSite(site, name));
    }
  }
  [[nodiscard]] UncoreRegion(internal::RegionSite& site,
                             const std::string& name)
      : UncoreRegion(site, std::string_view(name)) {}
  ~UncoreRegion() {
    if (generation_ != 0) {
      internal::EndRegion(recorder_, name_id_,
                          std::uncaught_exceptions() > exceptions_,
                          generation_);
    }
  }
  UncoreRegion(const UncoreRegion&) = delete;
  UncoreRegion& operator=(const UncoreRegion&) = delete;
  UncoreRegion(UncoreRegion&&) = delete;
  UncoreRegion& operator=(UncoreRegion&&) = delete;

 private:
  void Open(int name_id) {
    recorder_ = internal::g_active_recorder.load(std::memory_order_acquire);
    if (recorder_ == nullptr) return;
    name_id_ = name_id;
    exceptions_ = std::uncaught_exceptions();
    generation_ = internal::BeginRegion(recorder_, name_id);
  }

  regions::Recorder* recorder_ = nullptr;
  uint64_t generation_ = 0;  // of the recorder that recorded the begin
  int name_id_ = -1;
  int exceptions_ = 0;
};

// Begin and end a region that is not a scope.  The end names the innermost
// open region of the calling thread, or an outer one (which closes the
// regions inside it).
void RegionBegin(std::string_view name);
void RegionEnd(std::string_view name);
void RegionBegin(RegionId id);
void RegionEnd(RegionId id);

}  // namespace uncore

#define UNCORE_REGION_CONCAT_INNER(a, b) a##b
#define UNCORE_REGION_CONCAT(a, b) UNCORE_REGION_CONCAT_INNER(a, b)
// A number of its own for each use of UNCORE_REGION, so that several on one
// line (a macro of the program's that opens two) declare distinct names:
// __COUNTER__ where the compiler has it (GCC, clang, MSVC), else the line.
#ifdef __COUNTER__
#define UNCORE_REGION_UNIQUE __COUNTER__
#else
#define UNCORE_REGION_UNIQUE __LINE__
#endif

#ifdef UNCORE_DISABLE
#define UNCORE_REGION(name) static_cast<void>(0)
#else
// A region from here to the end of the enclosing scope.  `name`: a string
// literal, `const char*`, std::string_view or std::string; a name that
// changes from one run of the line to the next is counted as itself.
#define UNCORE_REGION(name) UNCORE_REGION_NUMBERED(name, UNCORE_REGION_UNIQUE)
// `id` is expanded once here (a number), then used for both names.
#define UNCORE_REGION_NUMBERED(name, id) UNCORE_REGION_WITH_ID(name, id)
#define UNCORE_REGION_WITH_ID(name, id)                                  \
  static ::uncore::internal::RegionSite UNCORE_REGION_CONCAT(            \
      uncore_region_site_, id);                                          \
  const ::uncore::UncoreRegion UNCORE_REGION_CONCAT(uncore_region_, id)( \
      UNCORE_REGION_CONCAT(uncore_region_site_, id), name)
#endif

#endif  // UNCORE_REGION_H_
