#!/usr/bin/env bash
# Installs the Debian 12 packages the SDK builds and tests with (as root).
# Does nothing when they are all present already.
set -euo pipefail
packages=(cmake ninja-build g++ clang libclang-rt-14-dev libabsl-dev libfmt-dev
          libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev python3
          pkg-config nlohmann-json3-dev clang-format clang-tidy
          openmpi-bin libopenmpi-dev libomp-14-dev libtrilinos-kokkos-dev
          likwid gfortran python3-pandas chromium)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi
