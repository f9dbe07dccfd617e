// Plays Kokkos: loads libuncore_kokkos.so as Kokkos does (dlopen with
// RTLD_NOW | RTLD_GLOBAL, the kokkosp_* callbacks by dlsym) and calls them
// in a known pattern.  Run by kokkos_tool_test.py with UNCORE_* set:
//   kokkos_tool_driver TOOL.so regions      nested push/pop, for/reduce/
//                                           scan, a profile section, misuse
//   kokkos_tool_driver TOOL.so extras       fences and deep copies (the
//                                           test sets UNCORE_KOKKOS_*)
//   kokkos_tool_driver TOOL.so names        empty, long and many names
//   kokkos_tool_driver TOOL.so overlap      sections overlapping a region
//   kokkos_tool_driver TOOL.so threads      4 threads launching kernels
//   kokkos_tool_driver TOOL.so allocations  prints "allocations: N", the
//                                           allocations of 1000 rounds of
//                                           every callback once warm, and
//                                           "first use allocations: M", of
//                                           a kernel with a new label
// Every scenario ends with kokkosp_finalize_library, then prints "report
// at finalize: yes" when UNCORE_OUTPUT names a file that exists by then,
// then calls a kernel "after_finalize" (which the report must not show).
// The binary exports its replaced operator new (ENABLE_EXPORTS), so that
// the tool's and the SDK's allocations are counted too (those of the
// calling thread).
#include <dlfcn.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <thread>
#include <vector>

namespace {

// Only the calling thread's allocations: the simulator's traffic thread
// allocates as it pleases.
thread_local bool t_counting = false;
int64_t g_allocations = 0;

}  // namespace

void* operator new(std::size_t size) {
  if (t_counting) ++g_allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) { return operator new(size); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace {

// Kokkos_Profiling_C_Interface.h.
struct DeviceInfo {
  size_t device_id;
};
struct SpaceHandle {
  char name[64];
};

struct Tool {
  void (*init)(int, uint64_t, uint32_t, DeviceInfo*);
  void (*finalize)();
  void (*begin_for)(const char*, uint32_t, uint64_t*);
  void (*end_for)(uint64_t);
  void (*begin_reduce)(const char*, uint32_t, uint64_t*);
  void (*end_reduce)(uint64_t);
  void (*begin_scan)(const char*, uint32_t, uint64_t*);
  void (*end_scan)(uint64_t);
  void (*push)(const char*);
  void (*pop)();
  void (*create_section)(const char*, uint32_t*);
  void (*start_section)(uint32_t);
  void (*stop_section)(uint32_t);
  void (*destroy_section)(uint32_t);
  void (*begin_fence)(const char*, uint32_t, uint64_t*);
  void (*end_fence)(uint64_t);
  void (*begin_deep_copy)(SpaceHandle, const char*, const void*, SpaceHandle,
                          const char*, const void*, uint64_t);
  void (*end_deep_copy)();
};

Tool g_tool;

template <typename F>
bool Load(void* library, const char* symbol, F* function) {
  void* p = dlsym(library, symbol);
  if (p == nullptr) {
    std::fprintf(stderr, "driver: %s is not in the tool\n", symbol);
    return false;
  }
  *function = reinterpret_cast<F>(p);
  return true;
}

bool LoadTool(const char* path) {
  void* library = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
  if (library == nullptr) {
    std::fprintf(stderr, "driver: %s\n", dlerror());
    return false;
  }
  Tool& t = g_tool;
  return Load(library, "kokkosp_init_library", &t.init) &&
         Load(library, "kokkosp_finalize_library", &t.finalize) &&
         Load(library, "kokkosp_begin_parallel_for", &t.begin_for) &&
         Load(library, "kokkosp_end_parallel_for", &t.end_for) &&
         Load(library, "kokkosp_begin_parallel_reduce", &t.begin_reduce) &&
         Load(library, "kokkosp_end_parallel_reduce", &t.end_reduce) &&
         Load(library, "kokkosp_begin_parallel_scan", &t.begin_scan) &&
         Load(library, "kokkosp_end_parallel_scan", &t.end_scan) &&
         Load(library, "kokkosp_push_profile_region", &t.push) &&
         Load(library, "kokkosp_pop_profile_region", &t.pop) &&
         Load(library, "kokkosp_create_profile_section", &t.create_section) &&
         Load(library, "kokkosp_start_profile_section", &t.start_section) &&
         Load(library, "kokkosp_stop_profile_section", &t.stop_section) &&
         Load(library, "kokkosp_destroy_profile_section", &t.destroy_section) &&
         Load(library, "kokkosp_begin_fence", &t.begin_fence) &&
         Load(library, "kokkosp_end_fence", &t.end_fence) &&
         Load(library, "kokkosp_begin_deep_copy", &t.begin_deep_copy) &&
         Load(library, "kokkosp_end_deep_copy", &t.end_deep_copy);
}

// Kokkos passes each label as std::string::c_str().
void For(const std::string& label) {
  uint64_t kid = 0;
  g_tool.begin_for(label.c_str(), 0, &kid);
  g_tool.end_for(kid);
}
void Reduce(const std::string& label) {
  uint64_t kid = 0;
  g_tool.begin_reduce(label.c_str(), 0, &kid);
  g_tool.end_reduce(kid);
}
void Scan(const std::string& label) {
  uint64_t kid = 0;
  g_tool.begin_scan(label.c_str(), 0, &kid);
  g_tool.end_scan(kid);
}
void Fence(const std::string& label) {
  uint64_t kid = 0;
  g_tool.begin_fence(label.c_str(), 0, &kid);
  g_tool.end_fence(kid);
}
void DeepCopy(const char* dst, const char* src) {
  SpaceHandle host = {};
  std::strcpy(host.name, "Host");
  static double a[4];
  static double b[4];
  g_tool.begin_deep_copy(host, dst, a, host, src, b, sizeof(a));
  g_tool.end_deep_copy();
}

// outer (1)
//   step (3)
//     kernel_for (6), kernel_reduce (3), kernel_scan (3)
//     inner (3)
//       kernel_for (3)
// section (2): a marker region, at the top level
// kernel_for (2): run inside the section
// A pop without a push and an end with an unknown kID are ignored.
void Regions() {
  g_tool.pop();
  g_tool.end_for(987654321);
  g_tool.push("outer");
  for (int i = 0; i < 3; ++i) {
    g_tool.push("step");
    For("kernel_for");
    Reduce("kernel_reduce");
    For("kernel_for");
    Scan("kernel_scan");
    g_tool.push("inner");
    For("kernel_for");
    g_tool.pop();
    g_tool.pop();
  }
  g_tool.pop();
  uint32_t section = 0;
  g_tool.create_section("section", &section);
  for (int i = 0; i < 2; ++i) {
    g_tool.start_section(section);
    For("kernel_for");
    g_tool.stop_section(section);
  }
  g_tool.destroy_section(section);
}

// work (1)
//   Kokkos::fence: user (2); the tool fence is never a region
//   deep_copy Host:dst <- Host:src (2)
//     copy_kernel (2)
void Extras() {
  g_tool.push("work");
  for (int i = 0; i < 2; ++i) {
    Fence("Kokkos::fence: user");
    Fence("Kokkos::Tools::invoke_kokkosp_callback: Kokkos Profile Tool Fence");
    SpaceHandle host = {};
    std::strcpy(host.name, "Host");
    double a[4] = {};
    double b[4] = {};
    g_tool.begin_deep_copy(host, "dst", a, host, "src", b, sizeof(a));
    For("copy_kernel");
    g_tool.end_deep_copy();
  }
  g_tool.pop();
}

// "" (1), two 1000-byte labels differing in their last byte (1 each), a
// 300-byte label of 2-byte UTF-8 characters (1), 3000 distinct labels
// "name_N" (2 each, more than one chunk of the tool's name table), the
// typeid names of an unnamed kernel's functor and of a lambda (1 each),
// and the plain labels "i" and "Zone" (1 each).
void Names() {
  For("");
  For("11contractionIN6Kokkos4ViewIPPdJNS0_11LayoutRightEEEEE");
  For("Z4mainEUliE_");
  For("i");
  For("Zone");
  std::string long_label(999, 'x');
  For(long_label + "a");
  For(long_label + "b");
  std::string utf8;
  for (int i = 0; i < 150; ++i) utf8 += "\xc3\xa9";  // U+00E9
  For(utf8);
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 3000; ++i) For("name_" + std::to_string(i));
  }
}

// Per thread T of 4: thread (1) > shared_kernel (100), kernel_T (50).
void Threads() {
  std::vector<std::thread> threads;
  threads.reserve(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t] {
      g_tool.push("thread");
      const std::string own = "kernel_" + std::to_string(t);
      for (int i = 0; i < 100; ++i) {
        For("shared_kernel");
        if (i % 2 == 0) Reduce(own);
      }
      g_tool.pop();
    });
  }
  for (std::thread& thread : threads) thread.join();
}

// Sections that overlap each other and a profile region: a and b (1
// each), region (1) > kernel (1), no error (markers may overlap).
void Overlap() {
  uint32_t a = 0;
  uint32_t b = 0;
  g_tool.create_section("a", &a);
  g_tool.create_section("b", &b);
  g_tool.start_section(a);
  g_tool.push("region");
  g_tool.start_section(b);
  g_tool.stop_section(a);
  For("kernel");
  g_tool.pop();
  g_tool.stop_section(b);
}

// Every callback once, with labels in buffers Kokkos would have rebuilt.
void Round(uint32_t section) {
  char label[32];
  uint64_t kid = 0;
  g_tool.push("round");
  std::snprintf(label, sizeof(label), "%s", "for");
  g_tool.begin_for(label, 0, &kid);
  g_tool.end_for(kid);
  std::snprintf(label, sizeof(label), "%s", "reduce");
  g_tool.begin_reduce(label, 0, &kid);
  g_tool.end_reduce(kid);
  std::snprintf(label, sizeof(label), "%s", "scan");
  g_tool.begin_scan(label, 0, &kid);
  g_tool.end_scan(kid);
  std::snprintf(label, sizeof(label), "%s", "fence");
  g_tool.begin_fence(label, 0, &kid);
  g_tool.end_fence(kid);
  g_tool.start_section(section);
  DeepCopy("dst", "src");
  g_tool.stop_section(section);
  g_tool.pop();
}

// The allocations of `body`, on this thread.
template <typename F>
int64_t AllocationsOf(F body) {
  g_allocations = 0;
  t_counting = true;
  body();
  t_counting = false;
  return g_allocations;
}

// Prints the allocations of 1000 warm rounds (0 expected), and of a
// kernel with a label the tool has not seen (some: the counter sees the
// tool's allocations).
void Allocations() {
  uint32_t section = 0;
  g_tool.create_section("section", &section);
  Round(section);
  Round(section);
  const int64_t warm = AllocationsOf([section] {
    for (int i = 0; i < 1000; ++i) Round(section);
  });
  char label[] = "first use";
  const int64_t first = AllocationsOf([&label] {
    uint64_t kid = 0;
    g_tool.begin_for(label, 0, &kid);
    g_tool.end_for(kid);
  });
  std::printf("allocations: %" PRId64 "\nfirst use allocations: %" PRId64 "\n",
              warm, first);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr,
                 "usage: kokkos_tool_driver TOOL.so "
                 "regions|extras|names|overlap|threads|allocations\n");
    return 2;
  }
  if (!LoadTool(argv[1])) return 2;
  const std::string scenario = argv[2];
  DeviceInfo device = {0};
  g_tool.init(0, 20210225, 1, &device);
  if (scenario == "regions") {
    Regions();
  } else if (scenario == "extras") {
    Extras();
  } else if (scenario == "names") {
    Names();
  } else if (scenario == "overlap") {
    Overlap();
  } else if (scenario == "threads") {
    Threads();
  } else if (scenario == "allocations") {
    Allocations();
  } else {
    std::fprintf(stderr, "driver: unknown scenario %s\n", scenario.c_str());
    return 2;
  }
  g_tool.finalize();
  const char* output = std::getenv("UNCORE_OUTPUT");
  if (output != nullptr && access(output, F_OK) == 0) {
    std::printf("report at finalize: yes\n");
  }
  For("after_finalize");
  return 0;
}
