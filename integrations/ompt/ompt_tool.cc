// libuncore_ompt.so: an OpenMP tool (OMPT) that gives an unmodified OpenMP
// program one uncore region per parallel construct.  For LLVM's OpenMP
// runtime (libomp, what clang -fopenmp links); GCC's libgomp has no OMPT.
//
//   OMP_TOOL_LIBRARIES=/path/libuncore_ompt.so UNCORE_EVENTS=imc/CAS_COUNT.RD
//     UNCORE_OUTPUT=report.json ./app      (one command line)
//
// Each `#pragma omp parallel` becomes the region "omp parallel @ FUNCTION
// (FILE:LINE)" (FILE:LINE where the binary has DWARF line tables), opened
// by every thread of the team under the region the encountering thread is
// in, so that the team shares one region path and each socket is counted
// once however many threads run it.  UNCORE_OMPT_WORK=1 (or true, yes) adds
// a region per work-sharing construct inside it ("omp for @ ...", "omp
// single @ ...", "omp sections @ ...").  The session is the one
// UNCORE_EVENTS / UNCORE_METRICS start when the SDK loads; its report
// (UNCORE_OUTPUT) is written at exit or when the runtime shuts down,
// whichever comes first, once.
//
// Guarantees:
// - No active session (or backend `off`): each callback is one pointer
//   test (the tool stays registered, so a session the program starts later
//   is measured from its next construct on).
// - A construct's name is computed once, on its first run (symbols and
//   line tables read from the object's own file), then found in a
//   lock-free table; after a thread's first construct, a construct's begin
//   and end on it take no lock and allocate nothing beyond what a region
//   boundary does (uncore/region.h).
// - No exception leaves a callback; a construct that cannot be named or
//   measured is not measured, and the program runs on.
// - Nested parallel regions nest: the inner construct's path is below the
//   outer one's on every thread of the inner team.  An implicit task that
//   would be a thread's 33rd region (kMaxRegionDepth) is refused by the
//   SDK, which says so in the report's errors, and so are the teams that
//   thread starts inside it: nothing is lost silently.
// - libomp reports a worker's implicit-task end only when the thread is
//   next woken up, so a worker leaves the region when it reaches the
//   construct's closing barrier; the primary thread leaves it at the end of
//   the construct (after that barrier).
#include <omp-tools.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "integrations/ompt/source_location.h"
#include "uncore/region.h"
#include "uncore/uncore_c.h"

namespace uncore::ompt {
namespace {

using regions::Recorder;

// A region's kind: a parallel construct, or an ompt_work_t.
constexpr int kParallel = 0;

// One construct of the program (or one work-sharing construct), by the
// address it reports (codeptr_ra).  Never freed.
struct Site {
  const void* codeptr;
  int kind;
  int name_id;
  // Its enclosing function, inherited by the constructs nested in its
  // outlined body (whose symbols do not name the function).
  std::string function;
};

// OpenMP 5.1's kinds of loop (LLVM 19's libomp reports them; LLVM 14's
// omp-tools.h does not name them): each an "omp for".
constexpr int kWorkLoopStatic = 10;
constexpr int kWorkLoopOther = 13;

int WorkKind(int wstype) {
  return wstype >= kWorkLoopStatic && wstype <= kWorkLoopOther ? ompt_work_loop
                                                               : wstype;
}

const char* KindName(int kind) {
  switch (WorkKind(kind)) {
    case kParallel:
      return "omp parallel";
    case ompt_work_loop:
      return "omp for";
    case ompt_work_sections:
      return "omp sections";
    case ompt_work_single_executor:
      return "omp single";
    case ompt_work_workshare:
      return "omp workshare";
    case ompt_work_distribute:
      return "omp distribute";
    case ompt_work_taskloop:
      return "omp taskloop";
    case ompt_work_scope:
      return "omp scope";
    default:
      return "omp work";
  }
}

// "omp parallel @ compute_forces (forces.cc:42)".
std::string SiteName(int kind, const CodeLocation& where,
                     const std::string& function) {
  std::string name = KindName(kind);
  name += " @ ";
  if (!function.empty()) {
    name += function;
  } else if (!where.symbol.empty()) {
    name += where.symbol;
  } else if (!where.object.empty()) {
    char offset[32];
    std::snprintf(offset, sizeof(offset), "+0x%llx",
                  static_cast<unsigned long long>(where.offset));
    name += where.object + offset;
  } else {
    name += "unknown location";
  }
  if (!where.file.empty() && where.line > 0) {
    name += " (" + where.file + ":" + std::to_string(where.line) + ")";
  }
  return name;
}

// Sites by (codeptr, kind): open addressing, read without a lock; a new
// site is added under the lock (its name computed once).
class SiteTable {
 public:
  const Site* Find(const void* codeptr, int kind) const {
    size_t i = Hash(codeptr, kind);
    for (size_t probe = 0; probe < kSlots; ++probe) {
      const Site* site = slots_[i].load(std::memory_order_acquire);
      if (site == nullptr) return nullptr;
      if (site->codeptr == codeptr && site->kind == kind) return site;
      i = (i + 1) & (kSlots - 1);
    }
    return nullptr;
  }

  // `enclosing`: the site of the construct the calling thread runs in, or
  // nullptr.  May throw std::bad_alloc.
  const Site* FindOrAdd(const void* codeptr, int kind, const Site* enclosing) {
    std::lock_guard<std::mutex> lock(mu_);
    if (const Site* site = Find(codeptr, kind)) return site;
    const auto key = std::make_pair(codeptr, kind);
    if (auto it = overflow_.find(key); it != overflow_.end()) {
      return it->second.get();
    }
    const CodeLocation where = ResolveReturnAddress(codeptr);
    std::string function = where.function;
    if (function.empty() && enclosing != nullptr) {
      function = enclosing->function;
    }
    auto site = std::make_unique<Site>();
    site->codeptr = codeptr;
    site->kind = kind;
    site->name_id = InternRegionName(SiteName(kind, where, function)).value;
    site->function = std::move(function);
    if (size_ >= kMaxSize) {  // full: the rest are found under the lock
      return overflow_.emplace(key, std::move(site)).first->second.get();
    }
    size_t i = Hash(codeptr, kind);
    while (slots_[i].load(std::memory_order_relaxed) != nullptr) {
      i = (i + 1) & (kSlots - 1);
    }
    ++size_;
    const Site* added = site.release();
    slots_[i].store(added, std::memory_order_release);
    return added;
  }

 private:
  static constexpr int kSlotBits = 13;
  static constexpr size_t kSlots = size_t{1} << kSlotBits;
  static constexpr size_t kMaxSize = kSlots / 4 * 3;

  static size_t Hash(const void* codeptr, int kind) {
    const uint64_t x = (reinterpret_cast<uintptr_t>(codeptr) ^
                        (static_cast<uint64_t>(kind) << 56)) *
                       0x9E3779B97F4A7C15ull;
    return static_cast<size_t>(x >> (64 - kSlotBits));
  }

  std::atomic<const Site*> slots_[kSlots] = {};
  std::mutex mu_;
  size_t size_ = 0;  // guarded by mu_
  std::map<std::pair<const void*, int>, std::unique_ptr<Site>>
      overflow_;  // guarded by mu_
};

SiteTable& Sites() {
  // Never destroyed: runtime threads may still call in during exit.
  static auto* table = new SiteTable;
  return *table;
}

// Parallel constructs a thread encounters at once (nested), and implicit
// tasks it runs at once.  Two more than a thread's regions, so that the
// SDK's limit (kMaxRegionDepth: deeper regions are refused, in the report's
// errors) is reached first: each measured implicit task on a thread is one
// of its regions (refused or not) but one, a worker's whose end libomp has
// not reported yet; each nested construct a thread encounters is inside one
// of its implicit tasks but the outermost.  Beyond these, TooDeep.
constexpr int kMaxTeams = kMaxRegionDepth + 2;
constexpr int kMaxFrames = kMaxRegionDepth + 2;

// A parallel construct being run, on its encountering thread: what every
// thread of its team needs to open its region.  parallel_data points here.
struct Team {
  Recorder* recorder = nullptr;
  const Site* site = nullptr;
  internal::RegionParent parent;
};

bool SameRegion(const internal::RegionParent& a,
                const internal::RegionParent& b) {
  return a.generation == b.generation && a.path == b.path && a.state == b.state;
}

struct WorkRegion {
  Recorder* recorder = nullptr;
  uint64_t generation = 0;  // 0: none open
  int name_id = -1;
};

// An implicit task of a measured construct on this thread; its task_data
// holds the frame's index + 1.
struct Frame {
  bool used = false;
  bool open = false;    // the construct's region is open on this thread
  bool worker = false;  // not the team's primary thread
  Recorder* recorder = nullptr;
  uint64_t generation = 0;
  const Site* site = nullptr;
  // The region it was opened under: still the thread's innermost while
  // the frame is open means the SDK refused it (too deep).
  internal::RegionParent under;
  int previous = 0;  // the innermost frame before this one (index + 1)
  WorkRegion work;   // UNCORE_OMPT_WORK
};

struct ThreadState {
  Team teams[kMaxTeams];
  // Parallel constructs this thread encounters at once, measured or not
  // (teams[i] is the i-th's while i < kMaxTeams): each end is the
  // innermost's.  Not parallel_data: libomp reports the end after it has
  // freed the team, whose parallel_data another thread's construct may
  // already hold.
  int team_depth = 0;
  Frame frames[kMaxFrames];
  int current = 0;         // the innermost frame (index + 1), 0: none
  WorkRegion serial_work;  // work-sharing outside a measured construct
};

constinit thread_local ThreadState t_state;

Recorder* ActiveRecorder() {
  return internal::g_active_recorder.load(std::memory_order_acquire);
}

const Site* SiteOf(const void* codeptr, int kind, const ThreadState& t) {
  if (const Site* site = Sites().Find(codeptr, kind)) return site;
  const Site* enclosing =
      t.current > 0 ? t.frames[t.current - 1].site : nullptr;
  return Sites().FindOrAdd(codeptr, kind, enclosing);
}

// The frame a task_data names, or nullptr.
Frame* FrameOf(ThreadState& t, const ompt_data_t* task_data) {
  if (task_data == nullptr) return nullptr;
  const uint64_t index = task_data->value;
  if (index == 0 || index > static_cast<uint64_t>(kMaxFrames)) return nullptr;
  Frame& f = t.frames[index - 1];
  return f.used ? &f : nullptr;
}

void CloseRegion(Recorder* recorder, int name_id, uint64_t generation) {
  Recorder* active = ActiveRecorder();
  if (active == nullptr || active != recorder || generation == 0) return;
  try {
    internal::EndRegion(active, name_id, /*exception=*/false, generation);
  } catch (...) {  // not measured; the program runs on
  }
}

// A construct nested deeper than the tool follows on this thread, which is
// then already deeper than the SDK's kMaxRegionDepth (kMaxTeams): a begin
// that the SDK refuses, recording why in the report's errors (one line,
// counted), and its end, which undoes nothing else.
void TooDeep(Recorder* recorder, const Site* site) {
  try {
    const uint64_t generation = internal::BeginRegion(recorder, site->name_id);
    CloseRegion(recorder, site->name_id, generation);
  } catch (...) {  // not measured; the program runs on
  }
}

// Leaves the construct's region on this thread (and any region still open
// inside it).
void CloseFrame(Frame& f) {
  if (f.open) CloseRegion(f.recorder, f.site->name_id, f.generation);
  f.open = false;
  f.work = WorkRegion();
}

void OnParallelBegin(ompt_data_t* /*encountering_task_data*/,
                     const ompt_frame_t* /*encountering_task_frame*/,
                     ompt_data_t* parallel_data,
                     unsigned int /*requested_parallelism*/, int flags,
                     const void* codeptr_ra) noexcept {
  ThreadState& t = t_state;
  const int depth = t.team_depth++;  // its end is this thread's next
  if (parallel_data == nullptr) return;
  parallel_data->ptr = nullptr;
  Recorder* recorder = ActiveRecorder();
  // A league of teams (`omp teams`) runs initial tasks, which have no
  // region.
  if (recorder == nullptr || (flags & ompt_parallel_league) != 0) return;
  try {
    const Site* site = SiteOf(codeptr_ra, kParallel, t);
    if (depth >= kMaxTeams) {
      TooDeep(recorder, site);
      return;
    }
    const internal::RegionParent parent =
        internal::CurrentRegionParent(recorder);
    // Inside an implicit task whose region the SDK refused (too deep): the
    // team's regions would go under a shallower one.
    if (t.current > 0) {
      const Frame& f = t.frames[t.current - 1];
      if (f.open && f.recorder == recorder && f.under.path >= 0 &&
          SameRegion(parent, f.under)) {
        TooDeep(recorder, site);
        return;
      }
    }
    Team& team = t.teams[depth];
    team.recorder = recorder;
    team.site = site;
    team.parent = parent;
    parallel_data->ptr = &team;
  } catch (...) {  // not measured; the program runs on
  }
}

// `parallel_data` is not read: by now it may be another construct's.
void OnParallelEnd(ompt_data_t* /*parallel_data*/,
                   ompt_data_t* /*encountering_task_data*/, int /*flags*/,
                   const void* /*codeptr_ra*/) noexcept {
  ThreadState& t = t_state;
  if (t.team_depth > 0) --t.team_depth;
}

void BeginImplicitTask(const ompt_data_t* parallel_data, ompt_data_t* task_data,
                       unsigned int index) {
  task_data->value = 0;
  const auto* team = parallel_data == nullptr
                         ? nullptr
                         : static_cast<const Team*>(parallel_data->ptr);
  if (team == nullptr) return;
  Recorder* recorder = ActiveRecorder();
  if (recorder == nullptr || recorder != team->recorder) return;
  ThreadState& t = t_state;
  int slot = 0;
  while (slot < kMaxFrames && t.frames[slot].used) ++slot;
  if (slot == kMaxFrames) {
    TooDeep(recorder, team->site);
    return;
  }
  uint64_t generation = 0;
  try {
    // The primary thread opens it under its own innermost region (the
    // parent); a worker with no region open, under the parent too.
    generation =
        internal::BeginRegionUnder(recorder, team->parent, team->site->name_id);
  } catch (...) {  // not measured; the program runs on
  }
  if (generation == 0) return;
  Frame& f = t.frames[slot];
  f = Frame();
  f.used = true;
  f.open = true;
  f.worker = index != 0;
  f.recorder = recorder;
  f.generation = generation;
  f.site = team->site;
  f.under = team->parent;
  f.previous = t.current;
  t.current = slot + 1;
  task_data->value = static_cast<uint64_t>(slot) + 1;
}

void EndImplicitTask(ompt_data_t* task_data) {
  ThreadState& t = t_state;
  Frame* f = FrameOf(t, task_data);
  if (f == nullptr) return;
  const int index = static_cast<int>(task_data->value);
  task_data->value = 0;
  CloseFrame(*f);
  f->used = false;
  if (t.current == index) t.current = f->previous;
}

void OnImplicitTask(ompt_scope_endpoint_t endpoint, ompt_data_t* parallel_data,
                    ompt_data_t* task_data, unsigned int /*actual_parallelism*/,
                    unsigned int index, int flags) noexcept {
  // The initial task (the program's own thread, or a league's team) is
  // not a construct.
  if ((flags & ompt_task_initial) != 0 || task_data == nullptr) return;
  if (endpoint == ompt_scope_begin) {
    BeginImplicitTask(parallel_data, task_data, index);
  } else if (endpoint == ompt_scope_end) {
    EndImplicitTask(task_data);
  }
}

// A worker leaves the construct's region when it reaches the construct's
// closing barrier: libomp reports its implicit-task end only when the
// thread is next woken up.  OpenMP 5.1 runtimes name that barrier
// (implicit_parallel); libomp 14 reports every implicit barrier as
// `implicit`, the closing one without a code address (or with the
// construct's own), a work-sharing construct's with that construct's.
void OnSyncRegion(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint,
                  ompt_data_t* /*parallel_data*/, ompt_data_t* task_data,
                  const void* codeptr_ra) noexcept {
  if (endpoint != ompt_scope_begin) return;
  if (kind != ompt_sync_region_barrier_implicit_parallel &&
      kind != ompt_sync_region_barrier_implicit) {
    return;
  }
  Frame* f = FrameOf(t_state, task_data);
  if (f == nullptr || !f->open || !f->worker) return;
  if (kind == ompt_sync_region_barrier_implicit && codeptr_ra != nullptr &&
      codeptr_ra != f->site->codeptr) {
    return;
  }
  CloseFrame(*f);
}

void OnWork(ompt_work_t wstype, ompt_scope_endpoint_t endpoint,
            ompt_data_t* /*parallel_data*/, ompt_data_t* task_data,
            uint64_t /*count*/, const void* codeptr_ra) noexcept {
  // Threads that skip a `single` do not run it.
  if (wstype == ompt_work_single_other) return;
  ThreadState& t = t_state;
  Frame* f = FrameOf(t, task_data);
  WorkRegion& w = f != nullptr ? f->work : t.serial_work;
  if (endpoint == ompt_scope_begin) {
    Recorder* recorder = ActiveRecorder();
    if (recorder == nullptr || w.generation != 0) return;
    try {
      const Site* site = SiteOf(codeptr_ra, WorkKind(wstype), t);
      w.generation = internal::BeginRegion(recorder, site->name_id);
      w.name_id = site->name_id;
      w.recorder = recorder;
    } catch (...) {  // not measured; the program runs on
    }
  } else if (endpoint == ompt_scope_end) {
    CloseRegion(w.recorder, w.name_id, w.generation);
    w = WorkRegion();
  }
}

// UNCORE_OMPT_WORK: 1, true or yes.
bool WorkRequested() {
  const char* value = std::getenv("UNCORE_OMPT_WORK");
  if (value == nullptr) return false;
  for (const char* on : {"1", "true", "yes"}) {
    if (std::strcmp(value, on) == 0) return true;
  }
  return false;
}

int Initialize(ompt_function_lookup_t lookup, int /*initial_device_num*/,
               ompt_data_t* /*tool_data*/) {
  const auto set_callback =
      reinterpret_cast<ompt_set_callback_t>(lookup("ompt_set_callback"));
  if (set_callback == nullptr) return 0;
  auto set = [set_callback](ompt_callbacks_t event, ompt_callback_t fn) {
    const ompt_set_result_t r = set_callback(event, fn);
    return r == ompt_set_always || r == ompt_set_sometimes ||
           r == ompt_set_sometimes_paired;
  };
  if (!set(ompt_callback_parallel_begin,
           reinterpret_cast<ompt_callback_t>(&OnParallelBegin)) ||
      !set(ompt_callback_parallel_end,
           reinterpret_cast<ompt_callback_t>(&OnParallelEnd)) ||
      !set(ompt_callback_implicit_task,
           reinterpret_cast<ompt_callback_t>(&OnImplicitTask))) {
    std::fprintf(stderr,
                 "uncore: libuncore_ompt: this OpenMP runtime does not "
                 "report parallel constructs to tools: no construct is "
                 "measured\n");
    return 0;
  }
  // Without it, workers leave at their implicit-task end.
  set(ompt_callback_sync_region,
      reinterpret_cast<ompt_callback_t>(&OnSyncRegion));
  if (WorkRequested()) {
    set(ompt_callback_work, reinterpret_cast<ompt_callback_t>(&OnWork));
  }
  return 1;
}

// The runtime shuts down: write the report now (the session's own exit
// handler then finds it written, or has written it already).
void Finalize(ompt_data_t* /*tool_data*/) {
  try {
    uncore_finalize();
  } catch (...) {  // the session's exit handler writes it
  }
}

}  // namespace
}  // namespace uncore::ompt

// What the OpenMP runtime looks up in every library of OMP_TOOL_LIBRARIES.
extern "C" __attribute__((visibility("default"))) ompt_start_tool_result_t*
ompt_start_tool(unsigned int /*omp_version*/, const char* /*runtime_version*/) {
  static ompt_start_tool_result_t result = {&uncore::ompt::Initialize,
                                            &uncore::ompt::Finalize,
                                            ompt_data_t{.value = 0}};
  return &result;
}
