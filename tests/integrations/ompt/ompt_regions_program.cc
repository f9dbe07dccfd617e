// An OpenMP program with its own UNCORE_REGION around parallel constructs,
// for ompt_test.py (run with OMP_TOOL_LIBRARIES=libuncore_ompt.so): the
// tool's regions nest under the program's on every thread of the team.
//
//   ompt_regions_program     Solve() 3 times (the region "solve", holding
//                            physics::Step<double> and Solve's own
//                            construct), then physics::Step<double> once
//                            outside any region
//
// The lines marked "construct:" are where the tool's region names point.
// Guarantees: exits 0; prints nothing.
#include <uncore/region.h>

#include <vector>

namespace physics {

template <typename T>
__attribute__((noinline)) void Step(std::vector<T>& x) {
  const int n = static_cast<int>(x.size());
#pragma omp parallel for  // construct: Step
  for (int i = 0; i < n; ++i) x[i] = x[i] * T(0.5) + T(1);
}

}  // namespace physics

__attribute__((noinline)) void Solve(std::vector<double>& x) {
  UNCORE_REGION("solve");
  physics::Step(x);
  double sum = 0;
#pragma omp parallel reduction(+ : sum)  // construct: Solve
  sum += x[0];
  x[1] += sum;
}

int main() {
  std::vector<double> x(4096, 1.0);
  for (int k = 0; k < 3; ++k) Solve(x);
  physics::Step(x);
  return x[0] > 0 ? 0 : 1;
}
