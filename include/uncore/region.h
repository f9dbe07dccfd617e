// uncore/region.h: bracket a phase of your program and get what the uncore
// did while it ran.
//
//   void Solve() {
//     UNCORE_REGION("solve");              // the fastest form: the name is
//     ...                                  // interned once per call site
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
// Guarantees: misuse never crashes and is recorded in the report (an end
// without a begin, an end that is not the innermost region's, nesting too
// deep, a region closed by an exception).  Hot path, after a call site's
// first use: no allocation, no lock, no string hashing (`UncoreRegion(const
// char*)` finds its id by the pointer, confirmed by one strcmp).  Each
// region takes one counter snapshot at begin and one at end.
#ifndef UNCORE_REGION_H_
#define UNCORE_REGION_H_

#include <atomic>
#include <exception>
#include <string_view>

namespace uncore {

inline constexpr int kMaxRegionDepth = 32;

// An interned region name.
struct RegionId {
  int value = -1;
};

// Interns `name` (thread-safe; takes a lock and may allocate: call it once
// per name, e.g. in a static).
RegionId InternRegionName(std::string_view name);

namespace regions {
class Recorder;
}  // namespace regions

namespace internal {
// The active session's recorder, or nullptr.
extern std::atomic<regions::Recorder*> g_active_recorder;
void BeginRegion(regions::Recorder* recorder, int name_id);
// `exception`: the region is being closed by stack unwinding.
void EndRegion(regions::Recorder* recorder, int name_id, bool exception);
// The id of a `const char*` name: a per-thread cache keyed by the pointer,
// confirmed with one strcmp.
int NameIdOf(const char* name);
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
      Open(InternRegionName(name).value);
    }
  }
  ~UncoreRegion() {
    if (recorder_ != nullptr) {
      internal::EndRegion(recorder_, name_id_,
                          std::uncaught_exceptions() > exceptions_);
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
    internal::BeginRegion(recorder_, name_id);
  }

  regions::Recorder* recorder_ = nullptr;
  int name_id_ = -1;
  int exceptions_ = 0;
};

// Begin and end a region that is not a scope.  The end must name the
// innermost open region of the calling thread.
void RegionBegin(std::string_view name);
void RegionEnd(std::string_view name);
void RegionBegin(RegionId id);
void RegionEnd(RegionId id);

}  // namespace uncore

#define UNCORE_REGION_CONCAT_INNER(a, b) a##b
#define UNCORE_REGION_CONCAT(a, b) UNCORE_REGION_CONCAT_INNER(a, b)

#ifdef UNCORE_DISABLE
#define UNCORE_REGION(name) static_cast<void>(0)
#else
// A region from here to the end of the enclosing scope; `name` is interned
// once, the first time this line runs.
#define UNCORE_REGION(name)                                                    \
  static const ::uncore::RegionId UNCORE_REGION_CONCAT(                        \
      uncore_region_id_, __LINE__) = ::uncore::InternRegionName(name);         \
  const ::uncore::UncoreRegion UNCORE_REGION_CONCAT(uncore_region_, __LINE__)( \
      UNCORE_REGION_CONCAT(uncore_region_id_, __LINE__))
#endif

#endif  // UNCORE_REGION_H_
