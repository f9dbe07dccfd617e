// libuncore_kokkos.so: a Kokkos Tools library that turns an unmodified
// Kokkos program's profiling hooks into uncore regions.
//
//   export UNCORE_EVENTS=imc/CAS_COUNT.RD UNCORE_OUTPUT=report.json
//   KOKKOS_TOOLS_LIBS=/path/libuncore_kokkos.so ./kokkos_program
//   (Kokkos 3: KOKKOS_PROFILE_LIBRARY=/path/libuncore_kokkos.so)
//
// Every parallel_for / parallel_reduce / parallel_scan becomes a region
// named by its label (Kokkos gives an unnamed kernel its functor's type
// name), every Kokkos::Profiling::pushRegion / popRegion a region around
// them, every ProfilingSection start / stop a marker region (top level,
// may overlap anything: uncore_marker_start / stop).  With
// UNCORE_KOKKOS_FENCES=1 fences, and with UNCORE_KOKKOS_DEEP_COPIES=1 deep
// copies ("deep_copy Host:dst <- Host:src"), become regions as well.  The
// session is the one UNCORE_EVENTS / UNCORE_METRICS describe, started when
// libuncore_sdk.so loads with this library; kokkosp_finalize_library
// (Kokkos::finalize) stops it and writes the report (uncore_finalize()).
//
// Only the SDK's C API (uncore/uncore_c.h) is used.  A label that is a
// mangled C++ type name (an unnamed kernel's functor or lambda, as
// typeid().name() gives it) is demangled, as kokkos-tools' own timers do.
// Names longer than kMaxNameBytes are cut and end in "...#" and a hash of the whole label.
// Each distinct label is interned once (a lock and an allocation); after
// that a callback takes no lock and allocates nothing: a per-thread cache
// finds the interned name, whose pointer the SDK's own per-thread cache
// knows.  A kernel's or fence's kID and a profile section's id are the
// index of its interned name.  No exception leaves a callback.
#include <cxxabi.h>
#include <strings.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "uncore/uncore_c.h"

// Kokkos_Profiling_C_Interface.h: the device information Kokkos passes to
// kokkosp_init_library (not read here), and the memory space handle the
// deep-copy callbacks take by value.
struct Kokkos_Profiling_KokkosPDeviceInfo;
struct Kokkos_Profiling_SpaceHandle {
  char name[64];
};

namespace uncore::kokkos {
namespace {

// Longer names are cut: the report stays readable and a name fits the
// SDK's table whatever the functor's type name.
constexpr size_t kMaxNameBytes = 200;
// Distinct names this library interns; later ones share one overflow name.
constexpr uint32_t kChunkSize = 1024;
constexpr uint32_t kMaxChunks = 1024;
constexpr uint32_t kMaxNames = kChunkSize * kMaxChunks;
// Per-thread caches and stacks.
constexpr uint32_t kCacheSize = 256;  // a power of two
constexpr int kMaxPushDepth = 256;    // the SDK refuses beyond 32 anyway
constexpr int kMaxDeepCopyDepth = 16;
constexpr size_t kDeepCopyNameBytes = 512;
// The kID of a fence or deep copy that is not measured.
constexpr uint64_t kNotMeasured = UINT64_MAX;
// The label of the fences Kokkos itself makes around each callback (the
// tool's "global fencing"): not the program's, never measured.
constexpr const char* kToolFence = "Kokkos Profile Tool Fence";

struct Name {
  std::string label;    // as Kokkos gave it
  std::string display;  // the region's name
  uint32_t id = 0;
  bool overflow = false;  // shared by the labels beyond kMaxNames
};

uint64_t Fnv1a(std::string_view s) {
  uint64_t h = 14695981039346656037ull;
  for (const char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

// `label` demangled when it is a mangled C++ name: a symbol ("_Z..."), a
// type whose mangling starts with a length-prefixed name ("11contraction
// I...E"), a nested name ("N6Kokkos...E") or a local entity such as a
// lambda ("Z4mainEUliE_"), as typeid().name() gives them; else as is.  Plain
// words are never demangled: "i" stays "i", not "int".
std::string Demangled(std::string_view label) {
  if (label.empty()) return std::string();
  const auto digit = [&](size_t i) {
    return i < label.size() && label[i] >= '0' && label[i] <= '9';
  };
  const bool mangled = label.substr(0, 2) == "_Z" || digit(0) ||
                       ((label[0] == 'N' || label[0] == 'Z') && digit(1));
  if (!mangled) return std::string(label);
  const std::string text(label);
  int status = -1;
  char* demangled =
      abi::__cxa_demangle(text.c_str(), nullptr, nullptr, &status);
  std::string result = status == 0 && demangled != nullptr ? demangled : text;
  std::free(demangled);
  return result;
}

// The region name of `label`: as is when short enough, else its first
// bytes (never half a UTF-8 character), "...#" and 8 hex digits of a hash
// of the whole label, so that long labels differing at the end stay apart.
std::string DisplayName(std::string_view label, uint64_t hash) {
  if (label.empty()) return "(unnamed)";
  if (label.size() <= kMaxNameBytes) return std::string(label);
  char suffix[16];
  std::snprintf(suffix, sizeof(suffix), "...#%08x",
                static_cast<unsigned>(hash & 0xffffffffu));
  size_t keep = kMaxNameBytes - std::strlen(suffix);
  while (keep > 0 && (static_cast<unsigned char>(label[keep]) & 0xc0) == 0x80) {
    --keep;
  }
  std::string display(label.substr(0, keep));
  display += suffix;
  return display;
}

// Every name interned so far, by label and by id.  Entries are never
// removed: the ids stay valid for the life of the process.
class NameTable {
 public:
  // The interned name of `label` (hash: Fnv1a(label)); nullptr when out of
  // memory.  Takes the lock.
  const Name* Intern(std::string_view label, uint64_t hash) {
    try {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = by_label_.find(label);
      if (it != by_label_.end()) return it->second;
      if (overflow_ != nullptr) return overflow_;
      if (count_.load(std::memory_order_relaxed) == kMaxNames - 1) {
        // Full: the last id is the overflow name, shared by every label
        // from now on.
        overflow_ = Add(std::string(),
                        "(more Kokkos names than libuncore_kokkos keeps)",
                        /*overflow=*/true);
        return overflow_;
      }
      Name* name = Add(std::string(label), DisplayName(Demangled(label), hash),
                       /*overflow=*/false);
      by_label_.emplace(name->label, name);  // a view of its label
      return name;
    } catch (...) {
      return nullptr;
    }
  }

  // The name with id `id`, or nullptr when there is none.  Lock-free.
  const Name* Find(uint64_t id) const {
    if (id >= count_.load(std::memory_order_acquire)) return nullptr;
    return chunks_[id / kChunkSize][id % kChunkSize];
  }

 private:
  // Under mu_.  May throw std::bad_alloc (nothing is published then).
  Name* Add(std::string label, std::string display, bool overflow) {
    const uint32_t id = count_.load(std::memory_order_relaxed);
    Name** chunk = chunks_[id / kChunkSize];
    if (chunk == nullptr) {
      chunk = new Name*[kChunkSize]();
      chunks_[id / kChunkSize] = chunk;
    }
    auto* name = new Name{std::move(label), std::move(display), id, overflow};
    chunk[id % kChunkSize] = name;
    count_.store(id + 1, std::memory_order_release);
    return name;
  }

  std::mutex mu_;
  std::unordered_map<std::string_view, Name*> by_label_;  // views of labels
  Name** chunks_[kMaxChunks] = {};  // written under mu_ before count_
  Name* overflow_ = nullptr;
  std::atomic<uint32_t> count_{0};
};

NameTable& Names() {
  // Never destroyed: callbacks may come during exit.
  static auto* table = new NameTable();
  return *table;
}

// Per thread: the names last found, by hash.
struct CacheEntry {
  uint64_t hash;
  const Name* name;
};
thread_local CacheEntry t_cache[kCacheSize];

// The interned name of `label` (NULL reads as ""); nullptr only when out
// of memory.  No lock and no allocation once this thread has seen it.
const Name* NameOf(const char* label) {
  const std::string_view view = label != nullptr ? label : "";
  const uint64_t hash = Fnv1a(view);
  CacheEntry& entry = t_cache[hash & (kCacheSize - 1)];
  if (entry.name != nullptr && entry.hash == hash &&
      entry.name->label == view) {
    return entry.name;
  }
  const Name* name = Names().Intern(view, hash);
  if (name != nullptr && !name->overflow) entry = CacheEntry{hash, name};
  return name;
}

// Opens the region of `label`; its name's id, or kNotMeasured.
uint64_t Begin(const char* label) {
  const Name* name = NameOf(label);
  if (name == nullptr) return kNotMeasured;
  uncore_region_begin(name->display.c_str());
  return name->id;
}

void BeginKernel(const char* label, uint64_t* kid) {
  const uint64_t id = Begin(label);
  if (kid != nullptr) *kid = id;
}

void End(uint64_t id) {
  const Name* name = Names().Find(id);
  if (name != nullptr) uncore_region_end(name->display.c_str());
}

// A small stack of ids per thread (for the callbacks whose end does not
// say what it ends); pushes beyond its depth are not measured and their
// pops ignored.
template <int kDepth>
struct IdStack {
  uint32_t ids[kDepth] = {};
  int depth = 0;  // may exceed kDepth: those entries were not measured
  void Push(const char* label) {
    const int d = depth++;
    if (d >= kDepth) return;
    const uint64_t id = Begin(label);
    ids[d] = static_cast<uint32_t>(id == kNotMeasured ? kMaxNames : id);
  }
  void Pop() {
    if (depth == 0) return;  // a pop without a push: nothing to end
    const int d = --depth;
    if (d < kDepth) End(ids[d]);
  }
};
thread_local IdStack<kMaxPushDepth> t_regions;
thread_local IdStack<kMaxDeepCopyDepth> t_deep_copies;

std::atomic<bool> g_fences{false};
std::atomic<bool> g_deep_copies{false};

// UNCORE_* flags read as the SDK reads UNCORE_FORCE: 1, true or yes.
bool Flag(const char* variable) {
  const char* v = std::getenv(variable);
  return v != nullptr &&
         (std::strcmp(v, "1") == 0 || strcasecmp(v, "true") == 0 ||
          strcasecmp(v, "yes") == 0);
}

bool Blank(const char* variable) {
  const char* v = std::getenv(variable);
  if (v == nullptr) return true;
  for (; *v != '\0'; ++v) {
    if (std::strchr(" \t\n\r\f\v", *v) == nullptr) return false;
  }
  return true;
}

}  // namespace
}  // namespace uncore::kokkos

#define UNCORE_KOKKOS_EXPORT extern "C" __attribute__((visibility("default")))

namespace uk = uncore::kokkos;

UNCORE_KOKKOS_EXPORT void kokkosp_init_library(
    const int /*load_seq*/, const uint64_t /*interface_ver*/,
    const uint32_t /*dev_info_count*/,
    Kokkos_Profiling_KokkosPDeviceInfo* /*device_info*/) noexcept {
  uk::g_fences.store(uk::Flag("UNCORE_KOKKOS_FENCES"),
                     std::memory_order_relaxed);
  uk::g_deep_copies.store(uk::Flag("UNCORE_KOKKOS_DEEP_COPIES"),
                          std::memory_order_relaxed);
  if (uk::Blank("UNCORE_EVENTS") && uk::Blank("UNCORE_METRICS")) {
    std::fputs(
        "uncore: libuncore_kokkos is loaded but UNCORE_EVENTS and "
        "UNCORE_METRICS are unset: Kokkos kernels are not measured\n",
        stderr);
  }
}

// Stops the UNCORE_EVENTS session and writes its report.
UNCORE_KOKKOS_EXPORT void kokkosp_finalize_library() noexcept {
  if (uncore_finalize() != 0) {
    std::fprintf(stderr, "uncore: writing the report failed: %s\n",
                 uncore_last_error());
  }
}

UNCORE_KOKKOS_EXPORT void kokkosp_begin_parallel_for(const char* name,
                                                     const uint32_t /*dev_id*/,
                                                     uint64_t* kid) noexcept {
  uk::BeginKernel(name, kid);
}
UNCORE_KOKKOS_EXPORT void kokkosp_end_parallel_for(
    const uint64_t kid) noexcept {
  uk::End(kid);
}
UNCORE_KOKKOS_EXPORT void kokkosp_begin_parallel_reduce(
    const char* name, const uint32_t /*dev_id*/, uint64_t* kid) noexcept {
  uk::BeginKernel(name, kid);
}
UNCORE_KOKKOS_EXPORT void kokkosp_end_parallel_reduce(
    const uint64_t kid) noexcept {
  uk::End(kid);
}
UNCORE_KOKKOS_EXPORT void kokkosp_begin_parallel_scan(const char* name,
                                                      const uint32_t /*dev_id*/,
                                                      uint64_t* kid) noexcept {
  uk::BeginKernel(name, kid);
}
UNCORE_KOKKOS_EXPORT void kokkosp_end_parallel_scan(
    const uint64_t kid) noexcept {
  uk::End(kid);
}

UNCORE_KOKKOS_EXPORT void kokkosp_push_profile_region(
    const char* name) noexcept {
  uk::t_regions.Push(name);
}
UNCORE_KOKKOS_EXPORT void kokkosp_pop_profile_region() noexcept {
  uk::t_regions.Pop();
}

// Profile sections are named timers that may overlap one another and the
// regions around them: marker regions (uncore_marker_start / stop, LIKWID's
// semantics), at the top level of the report, per thread by name.
UNCORE_KOKKOS_EXPORT void kokkosp_create_profile_section(
    const char* name, uint32_t* sec_id) noexcept {
  const uk::Name* n = uk::NameOf(name);
  if (sec_id != nullptr) *sec_id = n != nullptr ? n->id : uk::kMaxNames;
}
UNCORE_KOKKOS_EXPORT void kokkosp_start_profile_section(
    const uint32_t sec_id) noexcept {
  const uk::Name* n = uk::Names().Find(sec_id);
  if (n != nullptr) uncore_marker_start(n->display.c_str());
}
UNCORE_KOKKOS_EXPORT void kokkosp_stop_profile_section(
    const uint32_t sec_id) noexcept {
  const uk::Name* n = uk::Names().Find(sec_id);
  if (n != nullptr) uncore_marker_stop(n->display.c_str());
}
UNCORE_KOKKOS_EXPORT void kokkosp_destroy_profile_section(
    const uint32_t /*sec_id*/) noexcept {}

UNCORE_KOKKOS_EXPORT void kokkosp_begin_fence(const char* name,
                                              const uint32_t /*dev_id*/,
                                              uint64_t* kid) noexcept {
  uint64_t id = uk::kNotMeasured;
  if (uk::g_fences.load(std::memory_order_relaxed) &&
      (name == nullptr || std::strstr(name, uk::kToolFence) == nullptr)) {
    id = uk::Begin(name);
  }
  if (kid != nullptr) *kid = id;
}
UNCORE_KOKKOS_EXPORT void kokkosp_end_fence(const uint64_t kid) noexcept {
  if (kid != uk::kNotMeasured) uk::End(kid);
}

UNCORE_KOKKOS_EXPORT void kokkosp_begin_deep_copy(
    Kokkos_Profiling_SpaceHandle dst_handle, const char* dst_name,
    const void* /*dst_ptr*/, Kokkos_Profiling_SpaceHandle src_handle,
    const char* src_name, const void* /*src_ptr*/, uint64_t /*size*/) noexcept {
  if (!uk::g_deep_copies.load(std::memory_order_relaxed)) return;
  // On the stack: a name costs no allocation once seen.
  char label[uk::kDeepCopyNameBytes];
  std::snprintf(label, sizeof(label), "deep_copy %.*s:%s <- %.*s:%s",
                static_cast<int>(strnlen(dst_handle.name, 64)), dst_handle.name,
                dst_name != nullptr ? dst_name : "",
                static_cast<int>(strnlen(src_handle.name, 64)), src_handle.name,
                src_name != nullptr ? src_name : "");
  uk::t_deep_copies.Push(label);
}
UNCORE_KOKKOS_EXPORT void kokkosp_end_deep_copy() noexcept {
  if (!uk::g_deep_copies.load(std::memory_order_relaxed)) return;
  uk::t_deep_copies.Pop();
}
