#!/usr/bin/env bash
# Builds and runs every test, as CI does (.ci/run):
#   1. clang-format --dry-run -Werror over every tracked C/C++ source;
#   2. a GCC Release build, warnings as errors, and every test (CTest);
#   3. a clang Release build of the library, the tool, the integrations and
#      the examples, warnings as errors, then clang-tidy over the C++ files the
#      last commit changed (scripts/tidy.sh; UNCORE_TIDY_BASE changes that);
#   4. an ASan+UBSan Debug build (GCC) and every test but the install test;
#   5. a TSan build of the tests labelled `concurrent`, run under TSan;
#   6. every libFuzzer target (clang, ASan+UBSan; tests/fuzz: the event
#      spec, PMU formats and aliases, /proc/cpuinfo, the vendor tables'
#      metric formulas, id lists, UNCORE_OUTPUT, the node-sharing and MPI
#      wire formats) for UNCORE_FUZZ_SECONDS each (default 20), by
#      scripts/fuzz.sh; a crash, a hang (10 s) or a broken property fails.
# Warnings are errors here (UNCORE_WERROR=ON); a user's own build does not
# turn them into errors unless asked.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs=$(nproc)
start=$SECONDS
stage() { echo; echo "=== $* ($((SECONDS - start)) s in)"; }

stage "format: clang-format --dry-run -Werror over the tracked sources"
git ls-files -z '*.cc' '*.h' '*.c' | xargs -0 clang-format --dry-run -Werror
echo "format: clean"

stage "GCC Release build (warnings are errors) and every test"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DUNCORE_WERROR=ON
cmake --build build -j "$jobs"
(cd build && ctest --output-on-failure -j "$jobs")

stage "clang Release build (warnings are errors) and clang-tidy"
CC=clang CXX=clang++ cmake -S . -B build-clang -G Ninja \
  -DCMAKE_BUILD_TYPE=Release -DUNCORE_WERROR=ON -DUNCORE_BUILD_TESTS=OFF
cmake --build build-clang -j "$jobs"
bash scripts/tidy.sh build-clang

stage "ASan + UBSan Debug build and every test"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DUNCORE_WERROR=ON -DUNCORE_SANITIZE=address,undefined
cmake --build build-asan -j "$jobs"
# The install test builds an unsanitized consumer against the installed
# library, and the layer probes rebuild targets: the plain build runs them.
# So does mpi_test (label mpi): Open MPI's own allocations at exit are
# leaks to LSan, and its LD_PRELOAD case cannot put the ASan runtime first.
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --output-on-failure -j "$jobs" -LE 'install|layers|mpi')

stage "TSan build: the tests labelled 'concurrent'"
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DUNCORE_WERROR=ON -DUNCORE_SANITIZE=thread
cmake --build build-tsan -j "$jobs" --target concurrent_tests
(cd build-tsan && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
  ctest --output-on-failure -j "$jobs" -L concurrent)

stage "libFuzzer: every target for ${UNCORE_FUZZ_SECONDS:-20} s (scripts/fuzz.sh)"
bash scripts/fuzz.sh --seconds "${UNCORE_FUZZ_SECONDS:-20}"
stage "all stages passed"
