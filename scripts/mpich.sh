#!/usr/bin/env bash
# The MPI integration (libuncore_sdk_mpi) built against MPICH and its tests
# run with MPICH's mpiexec, beside the Open MPI build of scripts/test.sh's
# main build.  The PMPI layer is per MPI implementation (docs/mpi.md): a
# site builds it against its own MPI the same way, naming that MPI's
# compiler wrapper and launcher.
#   bash scripts/mpich.sh [BUILD_DIR]     # default build-mpich
# Needs Debian's mpich and libmpich-dev (mpicc.mpich, mpiexec.mpich).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build-mpich}
for tool in mpicc.mpich mpiexec.mpich; do
  command -v "$tool" >/dev/null || {
    echo "mpich.sh: no $tool (apt-get install mpich libmpich-dev)" >&2
    exit 1
  }
done
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DUNCORE_WERROR=ON \
  -DMPI_C_COMPILER="$(command -v mpicc.mpich)" \
  -DMPIEXEC_EXECUTABLE="$(command -v mpiexec.mpich)" \
  ${UNCORE_CMAKE_ARGS:-}
grep -q '^MPI_C_LIB_NAMES:.*mpich' "$dir/CMakeCache.txt" || {
  echo "mpich.sh: CMake did not take MPICH:" >&2
  grep '^MPI_C_' "$dir/CMakeCache.txt" >&2
  exit 1
}
cmake --build "$dir" -j "$(nproc)" --target uncore_mpi \
  mpi_program mpi_program_plain mpi_program_explicit env_program
(cd "$dir" && ctest --output-on-failure -L mpi)
