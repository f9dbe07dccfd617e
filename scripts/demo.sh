#!/usr/bin/env bash
# Builds the SDK and runs the demo: how an event is programmed, then the
# `phases` example (four phases whose memory traffic differs by orders of
# magnitude) with its report.  The report is counted on UNCORE_BACKEND,
# default `sim` (a simulated IvyTown; the report says SIMULATED), since most
# machines have no IvyTown uncore: set UNCORE_BACKEND=auto (or direct, perf)
# on one that has.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build --target uncore phases
set -x
./build/tools/uncore describe 'cbo/LLC_LOOKUP.DATA_READ:filter_state=0x1f'
./build/tools/uncore describe --registers metric/MEM_BW_TOTAL
UNCORE_BACKEND="${UNCORE_BACKEND:-sim}" ./build/examples/phases
# What can count on this machine, and why not (exit 1 when nothing can).
./build/tools/uncore doctor || true
