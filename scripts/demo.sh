#!/usr/bin/env bash
# Builds the SDK and runs the demo: the catalog of one box and the exact
# encoding of a few events and a metric.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build --target uncore
set -x
./build/tools/uncore list imc
./build/tools/uncore describe 'cbo/LLC_LOOKUP.DATA_READ:filter_state=0x1f'
./build/tools/uncore describe 'cbo/TOR_INSERTS.MISS_OPCODE:filter_opc=0x182'
./build/tools/uncore describe metric/MEM_BW_TOTAL
