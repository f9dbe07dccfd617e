#!/usr/bin/env bash
# Builds and runs every test: a plain build, an ASan+UBSan build, and the
# libFuzzer target for a bounded time (UNCORE_FUZZ_SECONDS, default 60).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs=$(nproc)

echo "=== plain build (warnings are errors)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j "$jobs"
(cd build && ctest --output-on-failure -j "$jobs")

echo "=== ASan + UBSan build"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DUNCORE_SANITIZE=address,undefined
cmake --build build-asan -j "$jobs"
# The install test builds an unsanitized consumer against the installed
# library: it runs in the plain build only.
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --output-on-failure -j "$jobs" -LE install)

echo "=== TSan build: the concurrent parts (regions, sessions, devices, simulator)"
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DUNCORE_SANITIZE=thread
cmake --build build-tsan -j "$jobs" --target regions_test devices_test sim_test
(cd build-tsan && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
  ctest --output-on-failure -j "$jobs" -R '^(RegionTest|DirectDevice|Sim|SimulatedUncore|DemoTraffic|PerfRealCounting)')

echo "=== libFuzzer: spec parser (${UNCORE_FUZZ_SECONDS:-60}s)"
CXX=clang++ CC=clang cmake -S . -B build-fuzz -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DUNCORE_BUILD_TESTS=OFF \
  -DUNCORE_BUILD_FUZZERS=ON -DUNCORE_SANITIZE=address,undefined \
  -DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link
cmake --build build-fuzz -j "$jobs" --target spec_parser_fuzzer
corpus=build-fuzz/corpus
rm -rf "$corpus" && mkdir -p "$corpus" && cp tests/fuzz/corpus/* "$corpus"/
./build-fuzz/tests/fuzz/spec_parser_fuzzer "$corpus" \
  -max_total_time="${UNCORE_FUZZ_SECONDS:-60}" -max_len=256 \
  -dict=tests/fuzz/spec.dict -print_final_stats=1 2>&1 | tail -n 15
echo "fuzzing: no crash in ${UNCORE_FUZZ_SECONDS:-60}s"
