#!/usr/bin/env python3
"""The LIKWID package as a user gets it: installs the build tree into a
scratch prefix (cmake --install) and builds there with pkg-config alone, as
docs/likwid.md says.  Run by CTest as likwid_install_test
(label install).

  likwid_install_test.py --cmake cmake --build-dir build --work-dir DIR \
      --libdir lib --pkg-config pkg-config --cc cc [--fc gfortran] \
      [--examples-dir /usr/share/likwid/examples --openmp-c-flags=-fopenmp \
       --openmp-fortran-flags=-fopenmp]
  likwid_install_test.py --prefix PREFIX ...   # an installed tree as it is

Checks: the package's files (libuncore_likwid.so, include/uncore-sdk-likwid
with likwid.h, likwid-marker.h, likwid.F90 and likwid.mod, the .pc file);
libuncore_likwid exports LIKWID's names only and needs libuncore_sdk,
which exports no likwid_* name; the headers alone compile as C89 from
`pkg-config --cflags`; `cc -fopenmp -DLIKWID_PERFMON C-markerAPI.c
$(pkg-config --cflags --libs uncore-sdk-likwid)` builds Debian's example
and links libuncore_likwid, not liblikwid; likwid_api_test.c built the
same way passes on the simulator; `gfortran -fopenmp F-markerAPI.F90
$(pkg-config ...)` builds and runs with 2 threads (report: 2 calls); the
installed likwid.F90 compiled by hand (another compiler's route) serves
likwid_fortran_test.F90.

CMake, as a LIKWID user's project finds it (cmake_consumer/, written like
LIKWID's test/cmake: find_package(likwid REQUIRED COMPONENTS marker
OPTIONAL_COMPONENTS nvmarker), likwid::likwid): configured with
-DCMAKE_PREFIX_PATH=<prefix>, the package comes from
<prefix>/lib/cmake/likwid even where a system LIKWID's
likwid-config.cmake is found without it (checked when there is one);
LIKWID's variables name the installed tree, marker is found, nvmarker not,
and a REQUIRED nvmarker fails configuring; marker_c and marker_f (LIKWID
5.4's API up to WRITE_FILE, with OpenMP) and marker_c_variables (LIKWID's
variables instead of the target) build, link libuncore_likwid and not
liblikwid, run with 2 threads on the simulator with no LD_LIBRARY_PATH, see
their 3 rounds and one event through GET, and both the WRITE_FILE file and
the report at CLOSE hold region consumer with 3 calls per thread.  Ends
with "N passed, N failed".
"""
import argparse
import json
import os
import re
import shlex
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "testing"))
import harness  # noqa: E402
from harness import check, skip  # noqa: E402,F401

C_FUNCTIONS = [
    "likwid_markerInit", "likwid_markerThreadInit", "likwid_markerNextGroup",
    "likwid_markerClose", "likwid_markerWriteFile",
    "likwid_markerRegisterRegion", "likwid_markerStartRegion",
    "likwid_markerStopRegion", "likwid_markerResetRegion",
    "likwid_markerGetRegion", "likwid_getProcessorId", "likwid_pinThread",
    "likwid_pinProcess",
]


def run(cmd, env=None, cwd=None):
    return harness.run(cmd, env=env, cwd=cwd, timeout=None)


def dynamic_symbols(library):
    p = run(["nm", "-D", "--defined-only", "--format=posix", library])
    return [line.split()[0] for line in p.stdout.splitlines() if line]


def session_env(prefix_lib, report, threads):
    return harness.environment({
        "UNCORE_BACKEND": "sim", "UNCORE_EVENTS": "imc/CAS_COUNT.RD",
        "UNCORE_OUTPUT": report, "OMP_NUM_THREADS": str(threads),
        "LD_LIBRARY_PATH": prefix_lib})


def region_calls(report_path, region):
    try:
        with open(report_path) as f:
            report = json.load(f)
    except (OSError, ValueError):
        return None
    for r in report.get("regions", []):
        if r["path"] == region:
            return r["calls"]
    return None


def example_calls(report_path):
    return region_calls(report_path, "example")


CONSUMER_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                            "cmake_consumer")


def configure_consumer(args, build, options, show_failure=True):
    """Configures cmake_consumer/ in `build`; returns (process, the
    consumer's "NAME: value" lines as a dict)."""
    cmd = [args.cmake, "-S", CONSUMER_DIR, "-B", build,
           "-DCMAKE_C_COMPILER=" + args.cc] + options
    if args.generator:
        cmd += ["-G", args.generator]
    if args.fc:
        cmd.append("-DCMAKE_Fortran_COMPILER=" + args.fc)
    p = harness.run(cmd, timeout=None, show_failure=show_failure)
    values = {}
    for line in p.stdout.splitlines():
        m = re.match(r"^-- (likwid_\w+|LIKWID_\w+): (.*)$", line)
        if m:
            values[m.group(1)] = m.group(2)
    return p, values


def same_path(a, b):
    return os.path.realpath(a) == os.path.realpath(b)


def cmake_consumer(args, prefix, work):
    lib = os.path.join(prefix, args.libdir)
    inc = os.path.join(prefix, "include", "uncore-sdk-likwid")
    ours = os.path.join(lib, "cmake", "likwid")
    check(os.path.exists(os.path.join(ours, "likwid-config.cmake")),
          f"installed: {os.path.relpath(ours, prefix)}/likwid-config.cmake")

    # Without CMAKE_PREFIX_PATH: the system's LIKWID, when there is one.
    p, system = configure_consumer(args, os.path.join(work, "cmake-system"),
                                   ["-DCONSUMER_CONFIGURE_ONLY=ON"],
                                   show_failure=False)
    system_dir = system.get("likwid_DIR", "")
    if p.returncode != 0 or not system_dir:
        skip("no system LIKWID's likwid-config.cmake: the search order is "
             "not compared")
        system_dir = ""
    else:
        check(not same_path(system_dir, ours),
              f"without CMAKE_PREFIX_PATH the system's LIKWID is found "
              f"({system_dir})")

    # With it: ours, first.
    build = os.path.join(work, "cmake-consumer")
    options = ["-DCMAKE_PREFIX_PATH=" + prefix]
    if args.fc:
        options.append("-DCONSUMER_FORTRAN=ON")
    p, found = configure_consumer(args, build, options)
    if not check(p.returncode == 0, "the consumer configures with "
                 "-DCMAKE_PREFIX_PATH=<prefix>"):
        return
    check(same_path(found.get("likwid_DIR", ""), ours),
          f"likwid_DIR is <prefix>/{args.libdir}/cmake/likwid "
          f"({found.get('likwid_DIR')})" +
          (f", ahead of {system_dir}" if system_dir else ""))
    lib_so = os.path.join(lib, "libuncore_likwid.so")
    sdk_so = os.path.join(lib, "libuncore_sdk.so")
    expected = {
        "likwid_FOUND": lambda v: v.upper() in ("TRUE", "ON", "1"),
        "likwid_marker_FOUND": lambda v: v.upper() in ("TRUE", "ON", "1"),
        "likwid_nvmarker_FOUND": lambda v: v.upper() in ("FALSE", "OFF",
                                                         "0", ""),
        "LIKWID_INCLUDE_DIR": lambda v: same_path(v, inc),
        "LIKWID_INCLUDE_DIRS": lambda v: same_path(v, inc),
        "LIKWID_INCLUDES": lambda v: same_path(v, inc),
        "LIKWID_ROOT_DIR": lambda v: same_path(v, prefix),
        "LIKWID_LIBRARY": lambda v: same_path(v, lib_so),
        "LIKWID_LIBRARIES": lambda v: [os.path.realpath(x) for x in
                                       v.split(";")] ==
        [os.path.realpath(lib_so), os.path.realpath(sdk_so)],
        "LIKWID_LIBRARY_DIRS": lambda v: same_path(v, lib),
        "LIKWID_COMPILE_DEFINITIONS": lambda v: v == "-DLIKWID_PERFMON",
        "LIKWID_FORTRAN_INTERFACE": lambda v: v == (
            "true" if args.fc else "false"),
        "LIKWID_NVIDIA_INTERFACE": lambda v: v == "false",
    }
    for name, ok in expected.items():
        check(name in found and ok(found[name]),
              f"{name}: {found.get(name)}")
    p = run([args.cmake, "--build", build])
    if not check(p.returncode == 0, "the consumer builds (marker_c, "
                 "marker_c_variables" + (", marker_f)" if args.fc else ")")):
        return
    programs = ["marker_c", "marker_c_variables"] + (
        ["marker_f"] if args.fc else [])
    for name in programs:
        exe = os.path.join(build, name)
        d = run(["readelf", "-d", exe]).stdout
        check("libuncore_likwid.so" in d and "liblikwid" not in d,
              f"{name} links libuncore_likwid, not liblikwid")
        report = os.path.join(work, name + "-report.json")
        written = os.path.join(work, name + "-written.json")
        env = harness.environment({
            "UNCORE_BACKEND": "sim", "UNCORE_EVENTS": "imc/CAS_COUNT.RD",
            "UNCORE_OUTPUT": report, "OMP_NUM_THREADS": "2"},
            drop=("LD_LIBRARY_PATH",))
        p = run([exe, written], env=env, cwd=work)
        threads = re.search(r"^threads (\d+)$", p.stdout, re.M)
        threads = int(threads.group(1)) if threads else 0
        check(p.returncode == 0 and threads == 2,
              f"{name} runs with 2 threads, no LD_LIBRARY_PATH: GET sees 3 "
              f"rounds and one event ({p.stdout.strip()!r})")
        for what, path in (("WRITE_FILE", written), ("CLOSE", report)):
            calls = region_calls(path, "consumer")
            check(calls == 3 * 2, f"{name}: the {what} report has region "
                  f"consumer with 3 calls x 2 threads ({calls})")

    # A project that requires the GPU component does not configure.
    p, _ = configure_consumer(args, os.path.join(work, "cmake-nvmarker"),
                              options + ["-DCONSUMER_REQUIRE_NVMARKER=ON"],
                              show_failure=False)
    check(p.returncode != 0 and "nvmarker" in p.stdout + p.stderr,
          "REQUIRED COMPONENTS nvmarker: find_package(likwid) fails")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cmake", default="cmake")
    ap.add_argument("--generator", default="",
                    help="CMake generator of the consumer project")
    ap.add_argument("--build-dir")
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--prefix", help="an installed tree: do not install")
    ap.add_argument("--libdir", default="lib")
    ap.add_argument("--pkg-config", default="pkg-config")
    ap.add_argument("--cc", default="cc")
    ap.add_argument("--fc", default="")
    ap.add_argument("--examples-dir", default="")
    ap.add_argument("--api-source",
                    default=os.path.join(os.path.dirname(
                        os.path.abspath(__file__)), "likwid_api_test.c"))
    ap.add_argument("--fortran-test-source",
                    default=os.path.join(os.path.dirname(
                        os.path.abspath(__file__)),
                        "likwid_fortran_test.F90"))
    # Without OpenMP flags the example of that language is not built.
    ap.add_argument("--openmp-c-flags", default="")
    ap.add_argument("--openmp-fortran-flags", default="")
    args = ap.parse_args()

    work = os.path.abspath(args.work_dir)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    if args.prefix:
        prefix = os.path.abspath(args.prefix)
    else:
        prefix = os.path.join(work, "prefix")
        p = run([args.cmake, "--install", args.build_dir, "--prefix", prefix])
        if not check(p.returncode == 0, "cmake --install"):
            return 1
    lib = os.path.join(prefix, args.libdir)
    inc = os.path.join(prefix, "include", "uncore-sdk-likwid")

    # 0. The files, and what the libraries export.
    files = [os.path.join(lib, "libuncore_likwid.so"),
             os.path.join(lib, "pkgconfig", "uncore-sdk-likwid.pc"),
             os.path.join(inc, "likwid.h"),
             os.path.join(inc, "likwid-marker.h"),
             os.path.join(inc, "likwid.F90")]
    if args.fc:
        files.append(os.path.join(inc, "likwid.mod"))
    for f in files:
        check(os.path.exists(f), f"installed: {os.path.relpath(f, prefix)}")
    likwid_so = os.path.join(lib, "libuncore_likwid.so")
    names = dynamic_symbols(likwid_so)
    stray = [n for n in names if not re.match(
        r"^(likwid_|uncore_likwid_f_|__likwid_MOD_)", n)]
    check(not stray, f"libuncore_likwid exports LIKWID's names only {stray}")
    missing = [f for f in C_FUNCTIONS if f not in names]
    check(not missing, f"libuncore_likwid exports LIKWID's functions "
          f"{missing}")
    sdk_likwid = [n for n in dynamic_symbols(
        os.path.join(lib, "libuncore_sdk.so")) if n.startswith("likwid")]
    check(not sdk_likwid, f"libuncore_sdk defines no likwid_* name "
          f"{sdk_likwid}")
    p = run(["readelf", "-d", likwid_so])
    check(re.search(r"NEEDED.*\[libuncore_sdk\.so", p.stdout) is not None,
          "libuncore_likwid needs the shared libuncore_sdk")

    # 1. pkg-config alone.
    env = dict(os.environ)
    env["PKG_CONFIG_PATH"] = os.path.join(lib, "pkgconfig")
    p = run([args.pkg_config, "--cflags", "--libs", "uncore-sdk-likwid"],
            env=env)
    if not check(p.returncode == 0, "pkg-config --cflags --libs "
                 "uncore-sdk-likwid"):
        return 1
    flags = shlex.split(p.stdout)
    cflags = shlex.split(run([args.pkg_config, "--cflags",
                              "uncore-sdk-likwid"], env=env).stdout)
    libs = shlex.split(run([args.pkg_config, "--libs", "uncore-sdk-likwid"],
                           env=env).stdout)
    check(any(f.startswith("-I") and
              os.path.realpath(f[2:]) == os.path.realpath(inc)
              for f in cflags), "--cflags name include/uncore-sdk-likwid")
    fortran_source = run([args.pkg_config, "--variable=fortran_source",
                          "uncore-sdk-likwid"], env=env).stdout.strip()
    check(os.path.realpath(fortran_source) ==
          os.path.realpath(os.path.join(inc, "likwid.F90")),
          "--variable=fortran_source is the installed likwid.F90")

    tu = os.path.join(work, "headers.c")
    with open(tu, "w") as f:
        f.write("#include <likwid-marker.h>\n#include <likwid.h>\n"
                "int main(void) { LIKWID_MARKER_INIT; LIKWID_MARKER_CLOSE; "
                "return 0; }\n")
    for defs in ([], ["-DLIKWID_PERFMON"]):
        p = run([args.cc, "-std=c89", "-pedantic-errors", "-Wall", "-Wextra",
                 "-Werror"] + defs + cflags + ["-c", tu, "-o",
                                                os.path.join(work, "h.o")])
        check(p.returncode == 0, f"the installed headers compile as C89 "
              f"{' '.join(defs)}")

    # 2. C: Debian's example and the API test, built with pkg-config.
    omp_c = shlex.split(args.openmp_c_flags)
    c_example = os.path.join(args.examples_dir, "C-markerAPI.c")
    if not args.openmp_c_flags:
        skip("C-markerAPI.c: no OpenMP flags for C given")
    elif args.examples_dir and os.path.exists(c_example):
        out = os.path.join(work, "c_example")
        p = run([args.cc] + omp_c + ["-DLIKWID_PERFMON", c_example] + flags +
                ["-o", out])
        if check(p.returncode == 0, "cc -fopenmp -DLIKWID_PERFMON "
                 "C-markerAPI.c $(pkg-config --cflags --libs "
                 "uncore-sdk-likwid)"):
            d = run(["readelf", "-d", out]).stdout
            check("libuncore_likwid.so" in d and "liblikwid" not in d,
                  "C-markerAPI links libuncore_likwid, not liblikwid")
    else:
        skip("C-markerAPI.c: no LIKWID examples")
    api = os.path.join(work, "api_test")
    p = run([args.cc, "-std=c99", "-DLIKWID_PERFMON", args.api_source] +
            flags + ["-pthread", "-o", api])
    if check(p.returncode == 0, "likwid_api_test.c builds with pkg-config"):
        p = run([api, "measured", "1", os.path.join(work, "written.json")],
                env=session_env(lib, os.path.join(work, "api.json"), 1),
                cwd=work)
        check(p.returncode == 0, "likwid_api_test passes on the installed "
              "library (sim)")

    # 3. CMake: find_package(likwid COMPONENTS marker).
    cmake_consumer(args, prefix, work)

    # 4. Fortran.
    if not args.fc:
        skip("Fortran: no Fortran compiler")
        return finish()
    omp_f = shlex.split(args.openmp_fortran_flags)
    f_example = os.path.join(args.examples_dir, "F-markerAPI.F90")
    if not args.openmp_fortran_flags:
        skip("F-markerAPI.F90: no OpenMP flags for Fortran given")
    elif args.examples_dir and os.path.exists(f_example):
        out = os.path.join(work, "f_example")
        p = run([args.fc] + omp_f + [f_example] + flags + ["-o", out],
                cwd=work)
        if check(p.returncode == 0, "gfortran -fopenmp F-markerAPI.F90 "
                 "$(pkg-config --cflags --libs uncore-sdk-likwid)"):
            report = os.path.join(work, "f_example.json")
            p = run([out], env=session_env(lib, report, 2), cwd=work)
            check(p.returncode == 0 and example_calls(report) == 2,
                  "F-markerAPI runs with 2 threads: region example, 2 calls")
    else:
        skip("F-markerAPI.F90: no LIKWID examples")
    # Another compiler's route: the installed source, compiled by hand, its
    # module in a directory of its own.
    mod_dir = os.path.join(work, "own-module")
    os.makedirs(mod_dir)
    obj = os.path.join(mod_dir, "likwid.o")
    p = run([args.fc, "-c", fortran_source, "-J", mod_dir, "-o", obj])
    if check(p.returncode == 0, "the installed likwid.F90 compiles"):
        out = os.path.join(work, "fortran_test")
        p = run([args.fc, "-I" + mod_dir, args.fortran_test_source, obj] +
                libs + ["-o", out], cwd=work)
        if check(p.returncode == 0, "likwid_fortran_test builds on that "
                 "module"):
            p = run([out, os.path.join(work, "fortran-written.json")],
                    env=session_env(lib, os.path.join(work, "ft.json"), 1),
                    cwd=work)
            check(p.returncode == 0, "likwid_fortran_test passes")
    return finish()


def finish():
    return harness.finish()


if __name__ == "__main__":
    sys.exit(main())
