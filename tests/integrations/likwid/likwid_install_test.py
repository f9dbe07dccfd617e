#!/usr/bin/env python3
"""The LIKWID package as a user gets it: installs the build tree into a
scratch prefix (cmake --install) and builds there with pkg-config alone, as
docs/likwid-markers.md says.  Run by CTest as likwid_install_test
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
likwid_fortran_test.F90.  Ends with "N passed, N failed".
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


def example_calls(report_path):
    try:
        with open(report_path) as f:
            report = json.load(f)
    except (OSError, ValueError):
        return None
    for r in report.get("regions", []):
        if r["path"] == "example":
            return r["calls"]
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cmake", default="cmake")
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

    # 3. Fortran.
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
