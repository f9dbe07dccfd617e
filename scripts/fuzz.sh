#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz, clang, ASan+UBSan) in
# build-fuzz and runs each one in turn on a scratch copy of its seed corpus
# (tests/fuzz/corpus/<name>/, with tests/fuzz/<name>.dict when there is
# one; the spec parser's are corpus/spec/ and spec.dict):
#
#   scripts/fuzz.sh                      # each for UNCORE_FUZZ_SECONDS (20) s
#   scripts/fuzz.sh --seconds 300        # each for 300 s
#   scripts/fuzz.sh --runs 1000000       # each for 1,000,000 inputs
#   scripts/fuzz.sh --runs 1000000 cpuinfo id_list   # only these targets
#   scripts/fuzz.sh --no-build ...       # use the targets already built
#
# An input that takes more than 10 s is a hang and fails like a crash, as
# do a sanitizer report, a leak, a broken property (FUZZ_CHECK) and running
# out of memory (2 GB).  The input is kept as build-fuzz/fuzz/<name>/
# crash-* (or timeout-*, leak-*, oom-*); replay it with
#   build-fuzz/tests/fuzz/<name>_fuzzer FILE
# A line per target (inputs run, seconds, result) is printed at the end and
# written to build-fuzz/fuzz/summary.md.  Exits 1 when any target failed.
set -euo pipefail
cd "$(dirname "$0")/.."

targets_all=(spec_parser pmu_format cpuinfo perf_metric id_list output
             snapshot_catalog mpi_rank)
seconds="${UNCORE_FUZZ_SECONDS:-20}"
runs=""
build=1
targets=()
while (($#)); do
  case "$1" in
    --seconds) seconds="$2"; runs=""; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
((${#targets[@]})) || targets=("${targets_all[@]}")
# The seed corpus and dictionary of a target: tests/fuzz/corpus/NAME and
# tests/fuzz/NAME.dict, NAME being "spec" for spec_parser.
seeds() { [[ $1 == spec_parser ]] && echo spec || echo "$1"; }
for t in "${targets[@]}"; do
  if [[ ! -f tests/fuzz/${t}_fuzzer.cc || ! -d tests/fuzz/corpus/$(seeds "$t") ]]; then
    echo "fuzz.sh: no target '$t' (targets: ${targets_all[*]})" >&2
    exit 2
  fi
done

if ((build)); then
  CXX=clang++ CC=clang cmake -S . -B build-fuzz -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DUNCORE_WERROR=ON \
    -DUNCORE_BUILD_TESTS=OFF -DUNCORE_BUILD_FUZZERS=ON \
    -DUNCORE_SANITIZE=address,undefined \
    -DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link
  cmake --build build-fuzz -j "$(nproc)" --target fuzzers
fi

work=build-fuzz/fuzz
mkdir -p "$work"
summary="$work/summary.md"
echo "| target | inputs | seconds | result |" >"$summary"
echo "|---|---:|---:|---|" >>"$summary"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
failed=0
for t in "${targets[@]}"; do
  dir="$work/$t"
  rm -rf "$dir" && mkdir -p "$dir/corpus"
  cp tests/fuzz/corpus/"$(seeds "$t")"/* "$dir/corpus/"
  args=("$dir/corpus" -timeout=10 -rss_limit_mb=2048
        -max_len=4096 -print_final_stats=1
        -artifact_prefix="$dir/")
  dict=tests/fuzz/$(seeds "$t").dict
  [[ -f $dict ]] && args+=(-dict="$dict")
  if [[ -n $runs ]]; then
    args+=(-runs="$runs")
    echo "=== fuzzing $t: $runs inputs"
  else
    args+=(-max_total_time="$seconds")
    echo "=== fuzzing $t: $seconds s"
  fi
  start=$(date +%s%N)
  status=0
  ./build-fuzz/tests/fuzz/"$t"_fuzzer "${args[@]}" >"$dir/log" 2>&1 ||
    status=$?
  elapsed=$((($(date +%s%N) - start + 500000000) / 1000000000))
  units=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log" |
            tail -n 1)
  if ((status == 0)); then
    result="no crash, no hang"
  else
    result="FAILED (exit $status; see $dir/log)"
    failed=1
    tail -n 40 "$dir/log"
  fi
  echo "$t: ${units:-?} inputs in $elapsed s: $result"
  echo "| $t | ${units:-?} | $elapsed | $result |" >>"$summary"
done
echo
cat "$summary"
exit "$failed"
