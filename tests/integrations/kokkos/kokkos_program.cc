// An ordinary Kokkos program (Serial backend) that knows nothing of the
// Uncore SDK: kokkos_tool_test.py runs it with libuncore_kokkos.so as its
// Kokkos tool and checks the regions and calls in the report.
//   kokkos_program [ITERATIONS] [N]
// Per iteration, in profile region "iteration": parallel_for "fill",
// parallel_for "axpy", parallel_reduce "dot".  Then, once each: an unnamed
// parallel_for (Kokkos labels it with the functor's type name),
// parallel_scan "prefix_sum", a ProfilingSection "section" around a
// parallel_for "in_section" (twice), and a deep_copy between two views.
// Prints "dot: D" and, after Kokkos::finalize, "report at finalize: yes"
// when UNCORE_OUTPUT names a file that exists by then.  Exit 1 when a
// result is wrong.
#include <unistd.h>

#include <Kokkos_Core.hpp>
#include <Kokkos_Profiling_ProfileSection.hpp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {

// An unnamed kernel's functor: its label is its type name.
struct Square {
  Kokkos::View<double*> v;
  KOKKOS_INLINE_FUNCTION void operator()(const int i) const { v(i) *= v(i); }
};

int Run(int iterations, int n) {
  Kokkos::View<double*> x("x", n);
  Kokkos::View<double*> y("y", n);
  double dot = 0.0;
  for (int it = 0; it < iterations; ++it) {
    Kokkos::Profiling::pushRegion("iteration");
    Kokkos::parallel_for(
        "fill", n, KOKKOS_LAMBDA(const int i) {
          x(i) = 1.0;
          y(i) = 2.0;
        });
    Kokkos::parallel_for(
        "axpy", n, KOKKOS_LAMBDA(const int i) { y(i) += 3.0 * x(i); });
    Kokkos::parallel_reduce(
        "dot", n,
        KOKKOS_LAMBDA(const int i, double& sum) { sum += x(i) * y(i); }, dot);
    Kokkos::Profiling::popRegion();
  }
  Kokkos::parallel_for(Kokkos::RangePolicy<>(0, n), Square{x});
  Kokkos::View<int64_t*> prefix("prefix", n);
  Kokkos::parallel_scan(
      "prefix_sum", n,
      KOKKOS_LAMBDA(const int i, int64_t& partial, const bool final) {
        partial += i;
        if (final) prefix(i) = partial;
      });
  Kokkos::Profiling::ProfilingSection section("section");
  for (int i = 0; i < 2; ++i) {
    section.start();
    Kokkos::parallel_for(
        "in_section", n, KOKKOS_LAMBDA(const int j) { x(j) += 1.0; });
    section.stop();
  }
  Kokkos::deep_copy(y, x);
  std::printf("dot: %g\n", dot);
  const int64_t last = int64_t{n} * (n - 1) / 2;
  auto prefix_host =
      Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), prefix);
  return dot == 5.0 * n && prefix_host(n - 1) == last ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 3;
  const int n = argc > 2 ? std::atoi(argv[2]) : 100000;
  Kokkos::initialize(argc, argv);
  const int status = Run(iterations, n);
  Kokkos::finalize();
  const char* output = std::getenv("UNCORE_OUTPUT");
  if (output != nullptr && access(output, F_OK) == 0) {
    std::printf("report at finalize: yes\n");
  }
  return status;
}
