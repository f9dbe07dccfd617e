#!/usr/bin/env bash
# Builds and runs every test, as CI does (.ci/run), on Debian 12 or 13:
#   1. clang-format --dry-run -Werror over every tracked C/C++ source;
#   2. a GCC Release build, warnings as errors, and every test (CTest; the
#      MPI tests with Open MPI);
#   3. the MPI integration built against MPICH and its tests run with
#      MPICH's mpiexec (scripts/mpich.sh);
#   4. a clang Release build of the library, the tool, the integrations and
#      the examples, warnings as errors, then clang-tidy over the C++ files the
#      last commit changed (scripts/tidy.sh; UNCORE_TIDY_BASE changes that);
#   5. an ASan+UBSan Debug build (GCC) and every test but the install test;
#   6. a TSan build of the tests labelled `concurrent`, run under TSan;
#   7. every libFuzzer target (clang, ASan+UBSan; tests/fuzz: the event
#      spec, PMU formats and aliases, /proc/cpuinfo, the vendor tables'
#      metric formulas, id lists, UNCORE_OUTPUT, the node-sharing and MPI
#      wire formats) for UNCORE_FUZZ_SECONDS each (default 10), by
#      scripts/fuzz.sh; a crash, a hang (10 s) or a broken property fails;
#   8. on Debian 12, as root: the same project on Debian 13 (GCC 14 and every
#      test, MPICH, clang 19) in a root that debootstrap makes anew
#      (scripts/debian13.sh; its packages are fetched while stages 1-7
#      run).  UNCORE_DEBIAN13=0 leaves it out.
# On Debian 13 itself it runs what stage 8 runs there (GCC 14 and every
# test, MPICH, clang 19); stages 1 and 4-7 are Debian 12's.
# Each stage says how long it took; the last lines sum them up.  The GCC
# and MPICH builds share a compiler cache that lives in this tree
# (build-ccache) and starts empty in a fresh clone.
# Warnings are errors here (UNCORE_WERROR=ON); a user's own build does not
# turn them into errors unless asked.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs=$(nproc)
start=$SECONDS
stage_start=$SECONDS
stage_name=""
summary=()
stage() {
  if [ -n "$stage_name" ]; then
    summary+=("$(printf '%5d s  %s' $((SECONDS - stage_start)) "$stage_name")")
  fi
  stage_name="$*"
  stage_start=$SECONDS
  echo
  echo "=== $* ($((SECONDS - start)) s in)"
}
export CCACHE_DIR=$PWD/build-ccache CCACHE_BASEDIR=$PWD
ccache=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
# On Debian 13 itself: what the Debian 13 stage runs on Debian 12 (a GCC 14
# build and every test, MPICH, a clang 19 build).  The formatting, tidy,
# sanitizer and fuzz stages hold the sources to Debian 12's clang-format,
# clang-tidy and sanitizers (14): CI runs them there.
if [ "$codename" != bookworm ]; then
  echo "test.sh: on '${codename:-unknown}': the Debian 13 stage's builds and" \
       "tests (scripts/debian13.sh inside); format, tidy, sanitizers and" \
       "fuzzers run on Debian 12"
  exec bash scripts/debian13.sh inside
fi

# The Debian 13 root is made while the other stages build (it mostly waits
# for the network).
debian13=""
if [ "${UNCORE_DEBIAN13:-1}" = 0 ]; then
  debian13="UNCORE_DEBIAN13=0"
elif [ "$(id -u)" -ne 0 ]; then
  debian13="debootstrap and chroot need root"
fi
if [ -z "$debian13" ]; then
  mkdir -p build-debian13
  (bash scripts/debian13.sh prepare >build-debian13/prepare.log 2>&1
   echo $? >build-debian13/prepare.status) &
  debian13_prepare=$!
  # A stage that fails ends this script only once the root's preparation
  # has ended and undone its mounts.
  trap 'wait "$debian13_prepare" 2>/dev/null || true' EXIT
fi

stage "format: clang-format --dry-run -Werror over the tracked sources"
git ls-files -z '*.cc' '*.h' '*.c' | xargs -0 clang-format --dry-run -Werror
echo "format: clean"

stage "GCC Release build (warnings are errors) and every test"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DUNCORE_WERROR=ON \
  "${ccache[@]}"
cmake --build build -j "$jobs"
(cd build && ctest --output-on-failure -j "$jobs")

stage "MPICH: the MPI integration built against MPICH, its tests (scripts/mpich.sh)"
UNCORE_CMAKE_ARGS="${ccache[*]}" bash scripts/mpich.sh build-mpich

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

stage "libFuzzer: every target for ${UNCORE_FUZZ_SECONDS:-10} s (scripts/fuzz.sh)"
bash scripts/fuzz.sh --seconds "${UNCORE_FUZZ_SECONDS:-10}"

if [ -z "$debian13" ]; then
  stage "Debian 13: GCC 14 and every test, MPICH, clang 19 (scripts/debian13.sh)"
  wait "$debian13_prepare" || true
  if [ "$(cat build-debian13/prepare.status 2>/dev/null)" != 0 ]; then
    tail -40 build-debian13/prepare.log
    echo "Debian 13: the root could not be made (build-debian13/prepare.log)"
    exit 1
  fi
  echo "root made while the stages above ran: $(tail -1 build-debian13/prepare.log)"
  bash scripts/debian13.sh test
else
  stage "Debian 13: skipped: $debian13"
fi
stage "all stages passed"
echo "How long each stage took:"
printf '%s\n' "${summary[@]}"
echo "$((SECONDS - start)) s in all"
