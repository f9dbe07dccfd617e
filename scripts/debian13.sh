#!/usr/bin/env bash
# Builds and tests the SDK on Debian 13 ("trixie": GCC 14, clang 19, Google
# Benchmark 1.9, Abseil 2024, fmt 10, Open MPI 5, MPICH 4, LIKWID 5.4) in a
# root that debootstrap makes from the machine's own Debian mirror, as root:
#
#   bash scripts/debian13.sh            # prepare, then test
#   bash scripts/debian13.sh prepare    # only make the root and install the
#                                       # packages (scripts/install-deps.sh)
#   bash scripts/debian13.sh test       # build and test in a prepared root
#
# The root is made anew each time, in build-debian13/root (or
# UNCORE_DEBIAN13_DIR/root): nothing is kept from an earlier run.  The test
# copies the tracked sources (with their uncommitted changes) to
# /work/main in the root, and the spec beside them (../shared, read-only),
# mounts /proc, /sys and /dev (perf events and the msr PMU are the host
# kernel's), then runs, inside:
#   1. a GCC 14 Release build, warnings as errors, and every test (CTest:
#      MPI with Open MPI 5, LIKWID 5.4, the OpenMP and Kokkos tools, the
#      pandas and Chromium checks included);
#   2. the MPI tests again against MPICH (scripts/mpich.sh);
#   3. a clang 19 Release build of the library, the tool, the
#      integrations and the examples, warnings as errors.
# Every mount is undone on exit, whatever happens.
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
dir=${UNCORE_DEBIAN13_DIR:-$src/build-debian13}
root=$dir/root
jobs=$(nproc)

# The mount points under the root, deepest first.
mounts_under() {
  findmnt -rn -o TARGET | awk -v r="$root" 'index($0, r "/") == 1' | sort -r
}
unmount_all() {
  local m
  for m in $(mounts_under); do umount -l "$m" 2>/dev/null || true; done
}

# /proc and /sys of their own, and a /dev of a few device nodes on a tmpfs:
# nothing of the machine's own /dev is reachable under the root, so removing
# the root can never remove a device node.
mount_all() {
  trap unmount_all EXIT
  trap 'exit 130' INT TERM
  mount -t proc proc "$root/proc"
  mount -t sysfs sysfs "$root/sys"
  mount -t tmpfs -o mode=755,size=16m dev "$root/dev"
  local node
  for node in null zero full random urandom tty; do
    cp -a "/dev/$node" "$root/dev/$node"
  done
  mkdir -p "$root/dev/shm" "$root/dev/pts"
  mount -t tmpfs -o mode=1777 shm "$root/dev/shm"
  mount -t devpts -o newinstance,ptmxmode=0666 devpts "$root/dev/pts"
  ln -s pts/ptmx "$root/dev/ptmx"
  ln -s /proc/self/fd "$root/dev/fd"
  ln -s /proc/self/fd/0 "$root/dev/stdin"
  ln -s /proc/self/fd/1 "$root/dev/stdout"
  ln -s /proc/self/fd/2 "$root/dev/stderr"
}

# Removes `path` under the root once nothing is mounted there.
remove() {
  unmount_all
  if [ -n "$(mounts_under)" ]; then
    echo "debian13: cannot unmount what is under $root: not removing $1" >&2
    exit 1
  fi
  rm -rf "$1"
}

# Inside the root (called by `test` through chroot).
inside() {
  # Run from the tree this script is in (the top of the script cd-s there).
  local start=$SECONDS
  echo "debian13: $(. /etc/os-release && echo "$PRETTY_NAME"), $(g++ --version | head -1), $(clang --version | head -1)"
  # The MPICH build reuses the GCC build's objects through the compiler
  # cache (in the root: nothing outlives it).
  export CCACHE_DIR=/work/ccache CCACHE_BASEDIR=/work/main
  local ccache="-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache"
  # shellcheck disable=SC2086
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DUNCORE_WERROR=ON \
    $ccache
  cmake --build build -j "$jobs"
  (cd build && ctest --output-on-failure -j "$jobs")
  echo "debian13: GCC build and tests: $((SECONDS - start)) s"
  UNCORE_CMAKE_ARGS="$ccache" bash scripts/mpich.sh build-mpich
  echo "debian13: MPICH: $((SECONDS - start)) s"
  CC=clang CXX=clang++ cmake -S . -B build-clang -G Ninja \
    -DCMAKE_BUILD_TYPE=Release -DUNCORE_WERROR=ON -DUNCORE_BUILD_TESTS=OFF
  cmake --build build-clang -j "$jobs"
  echo "debian13: clang build: $((SECONDS - start)) s"
}

prepare() {
  local begin=$SECONDS
  remove "$root"
  mkdir -p "$dir"
  # The machine's Debian mirror, as its apt sources name it.
  local mirror
  mirror=$(awk '/^URIs:/ { print $2; exit }' \
             /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
  [ -n "$mirror" ] || mirror=$(awk '$1 == "deb" && $3 !~ /security/ {
                                      print $2; exit }' \
                                 /etc/apt/sources.list 2>/dev/null || true)
  if [ -z "$mirror" ]; then
    echo "debian13: no Debian mirror in /etc/apt/sources.list{,.d}" >&2
    exit 1
  fi
  command -v debootstrap >/dev/null || {
    echo "debian13: needs debootstrap (apt-get install debootstrap)" >&2
    exit 1
  }
  echo "debian13: debootstrap trixie into $root"
  debootstrap --variant=minbase trixie "$root" "$mirror" \
    >"$dir/debootstrap.log" 2>&1 || {
    tail -20 "$dir/debootstrap.log" >&2
    exit 1
  }
  cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
  mkdir -p "$root/work/main/scripts"
  cp scripts/install-deps.sh "$root/work/main/scripts/"
  mount_all
  run_inside bash /work/main/scripts/install-deps.sh
  unmount_all
  echo "debian13: root ready in $((SECONDS - begin)) s"
}

run_inside() {
  chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    "$@"
}

test_in_root() {
  if [ ! -x "$root/usr/bin/cmake" ]; then
    echo "debian13: no prepared root in $root: run 'scripts/debian13.sh prepare'" >&2
    exit 1
  fi
  remove "$root/work"
  mkdir -p "$root/work/main" "$root/work/shared"
  git ls-files -z --cached --others --exclude-standard |
    tar --null -T - -cf - --ignore-failed-read 2>/dev/null |
    tar -xf - -C "$root/work/main"
  mount_all
  if [ -d ../shared ]; then
    mount --bind ../shared "$root/work/shared"
    mount -o remount,bind,ro "$root/work/shared"
  fi
  run_inside bash /work/main/scripts/debian13.sh inside
  unmount_all
}

case "${1:-all}" in
  prepare) prepare ;;
  test) test_in_root ;;
  inside) inside ;;
  all) prepare; test_in_root ;;
  *) echo "usage: scripts/debian13.sh [prepare|test]" >&2; exit 2 ;;
esac
