#!/usr/bin/env bash
# Installs the Debian packages the SDK builds and tests with (as root), by
# their names on Debian 12 ("bookworm": GCC 12, clang 14) or Debian 13
# ("trixie": GCC 14, clang 19), read from /etc/os-release.  Does nothing
# when they are all present already.
#   bash scripts/install-deps.sh            # what scripts/test.sh needs
#   bash scripts/install-deps.sh --print    # only print the package names
set -euo pipefail
codename=""
if [ -r /etc/os-release ]; then
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
fi
# The LLVM version whose sanitizer runtime (libFuzzer too) and OpenMP
# runtime go with the distribution's default clang.
case "$codename" in
  bookworm) llvm=14 ;;
  trixie) llvm=19 ;;
  *)
    echo "install-deps: tested on Debian 12 (bookworm) and 13 (trixie), not" \
         "on '${codename:-unknown}': trying Debian 13's package names" >&2
    llvm=19 ;;
esac
packages=(cmake ninja-build g++ clang "libclang-rt-$llvm-dev" libabsl-dev
          libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev
          python3 pkg-config nlohmann-json3-dev clang-format clang-tidy git
          ccache openmpi-bin libopenmpi-dev mpich libmpich-dev
          "libomp-$llvm-dev" libdw-dev libtrilinos-kokkos-dev likwid gfortran
          python3-pandas chromium)
# The Debian 13 stage of scripts/test.sh makes its root with debootstrap.
[ "$codename" = bookworm ] && packages+=(debootstrap)
if [ "${1:-}" = --print ]; then
  echo "${packages[*]}"
  exit 0
fi
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
