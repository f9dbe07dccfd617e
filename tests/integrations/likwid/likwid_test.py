#!/usr/bin/env python3
"""The LIKWID package (integrations/likwid) end to end; run by CTest as
likwid_test with the programs tests/integrations/likwid/CMakeLists.txt
builds.

  likwid_test.py --c-example likwid_c_example --fortran-example ... \
      --api-test likwid_api_test --fortran-test likwid_fortran_test \
      --real-cc cc --real-include /usr/include --real-library liblikwid.so ...

Checks:
  * LIKWID's own examples (Debian's C-markerAPI.c and F-markerAPI.F90,
    built unchanged against uncore::likwid) with 4 OpenMP threads, on the
    simulator (imc/CAS_COUNT.RD) and on perf's msr/tsc/: the JSON report's
    region "example" has calls = 4 threads x iterations (10 in C, 1 in
    Fortran) and threads = 4; each thread's GET (the example's output)
    counted its calls 1, 2, ... 10; on perf the msr/tsc/ total is the TSC
    rate times the region's wall_ns within 2% (each socket once; the rate
    from likwid_api_test's one-thread region);
  * likwid_api_test (return codes and values against LIKWID 5.2) with a
    session, its warnings on stderr, the misuse listed in the report, and
    the threads' GET values summing to the report's total; and without a
    session ("Running without Marker API", -EFAULT);
  * likwid_fortran_test (the Fortran module);
  * the examples and likwid_api_test.c still build against the real
    LIKWID (compile and link, never run).
A part whose programs are missing (no LIKWID examples, no Fortran
compiler, no LIKWID, no perf) prints "skip ..." and why.  Ends with "N
passed, N failed"; exits 1 when a check failed.
"""
import argparse
import collections
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "testing"))
import harness  # noqa: E402
from harness import check, skip  # noqa: E402,F401


def close(a, b, rel):
    return b != 0 and abs(a / b - 1.0) <= rel


class Run:
    """A program started now, with UNCORE_* set; wait() collects it."""

    def __init__(self, name, argv, env_extra, tmp, timeout=120):
        self.name = name
        self.report = os.path.join(tmp, name + ".json")
        env = harness.environment({"OMP_NUM_THREADS": "4",
                                   "UNCORE_OUTPUT": self.report, **env_extra},
                                  drop=("LIKWID_",))
        self.argv = argv
        self.timeout = timeout
        self.proc = subprocess.Popen(argv, env=env, cwd=tmp,
                                     stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.stdout = ""
        self.stderr = ""
        self.returncode = None

    def wait(self):
        try:
            self.stdout, self.stderr = self.proc.communicate(
                timeout=self.timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.stdout, self.stderr = self.proc.communicate()
        self.returncode = self.proc.returncode
        if self.returncode != 0:
            print(f"--- {self.name}: {' '.join(self.argv)} exited "
                  f"{self.returncode}\n--- stdout:\n{self.stdout}"
                  f"--- stderr:\n{self.stderr}")
        return self

    def load_report(self):
        try:
            with open(self.report) as f:
                return json.load(f)
        except (OSError, ValueError) as e:
            check(False, f"{self.name}: report {self.report}: {e}")
            return None


def region(report, name):
    for r in report.get("regions", []):
        if r["path"] == name:
            return r
    return None


def sim_env():
    return {"UNCORE_BACKEND": "sim", "UNCORE_EVENTS": "imc/CAS_COUNT.RD"}


def perf_env():
    return {"UNCORE_BACKEND": "perf", "UNCORE_EVENTS": "msr/tsc/"}


def check_example(run, backend, iterations, tsc_hz):
    """LIKWID's example: region "example", 4 threads x iterations calls."""
    name = run.name
    check(run.returncode == 0, f"{name}: exits 0")
    if run.returncode != 0:
        return
    counts = collections.Counter(
        int(m) for m in re.findall(r"The region was called (\d+) times",
                                   run.stdout))
    expected = collections.Counter(
        {n: 4 for n in range(1, iterations + 1)})
    check(counts == expected,
          f"{name}: each thread's GET counted 1..{iterations} calls "
          f"({dict(sorted(counts.items()))})")
    measures = re.findall(r"Region example measures (\d+) events",
                          run.stdout)
    check(len(measures) == 4 * iterations and set(measures) == {"1"},
          f"{name}: every GET gave nevents 1 (the session's one event)")
    times = [float(t) for t in re.findall(
        r"total measurement time is\s+([0-9.]+)", run.stdout)]
    check(bool(times) and abs(max(times) - 2.0 * iterations) < 0.5,
          f"{name}: a thread's GET time after {iterations} x 2 s is about "
          f"{2 * iterations} s ({max(times) if times else None})")
    check("WARN" not in run.stderr and "ERROR" not in run.stderr,
          f"{name}: no LIKWID warning on stderr")
    report = run.load_report()
    if report is None:
        return
    check(report.get("backend") == backend, f"{name}: backend {backend}")
    check(not report.get("errors"),
          f"{name}: no errors in the report {report.get('errors')}")
    ex = region(report, "example")
    check(ex is not None, f"{name}: region example in the report")
    if ex is None:
        return
    check(ex["calls"] == 4 * iterations,
          f"{name}: example calls = 4 threads x {iterations} "
          f"({ex['calls']})")
    check(ex["threads"] == 4, f"{name}: example threads = 4 "
          f"({ex['threads']})")
    check(ex["open_calls"] == 0, f"{name}: no call left open")
    wall_s = ex["wall_ns"] * 1e-9
    check(2.0 * iterations <= wall_s < 2.0 * iterations + 1.0,
          f"{name}: wall time about {2 * iterations} s ({wall_s:.3f})")
    if backend == "sim":
        total = ex["events"]["imc/CAS_COUNT.RD"]["total"]
        check(report.get("simulated") is True and total > 0,
              f"{name}: simulated CAS reads counted ({total})")
    elif tsc_hz:
        total = ex["events"]["msr/tsc/"]["total"]
        rate = total / ex["wall_ns"] * 1e9
        check(close(rate, tsc_hz, 0.02),
              f"{name}: msr/tsc/ total / wall_ns = {rate / 1e9:.4f} GHz, "
              f"the TSC rate {tsc_hz / 1e9:.4f} GHz within 2% (each socket "
              f"once)")


def facts(run):
    for line in reversed(run.stdout.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    return {}


def check_api(run, backend):
    """likwid_api_test measured: its own checks, stderr and the report.
    Returns the TSC rate of its one-thread region on perf."""
    name = run.name
    fx = facts(run)
    check(run.returncode == 0 and fx.get("failures") == 0,
          f"{name}: every check of the program passes")
    expected = collections.Counter({
        "WARN: Region A was already started": 1,
        "WARN: Stopping an unknown/not-started region A": 1,
        "WARN: Stopping an unknown/not-started region never": 1,
        "WARN: Stopping an unknown/not-started region owned": 1,
        "ERROR: Can only reset stopped regions": 3,
    })
    # (likwid_pinThread(-1)'s own "ERROR: Pinning ..." is not a marker's.)
    got = collections.Counter(
        line for line in run.stderr.splitlines()
        if line.startswith("WARN") or line.startswith("ERROR: Can"))
    check(got == expected, f"{name}: LIKWID 5.2's warnings on stderr, "
          f"each as often as the misuse ({dict(got)})")
    report = run.load_report()
    if report is None:
        return 0.0
    errors = report.get("errors", [])
    check(sum("started again while it runs" in e for e in errors) == 1 and
          sum("stopped on a thread where it does not run" in e
              for e in errors) == 3,
          f"{name}: the report lists the second START and the 3 STOPs")
    for path in ("A", "B", "team", "one_thread"):
        check(region(report, path) is not None,
              f"{name}: region {path} in the report")
    team = region(report, "team")
    if team is not None and fx.get("team_events") is not None:
        event = report["events"][0]
        total = team["events"][event["canonical"]]["total"] * event["scale"]
        got_sum = sum(fx["team_events"])
        check(team["calls"] == 2 and team["threads"] == 2,
              f"{name}: team: 2 calls on 2 threads")
        check(abs(got_sum - total) <= 1e-9 * max(total, 1.0) and total > 0,
              f"{name}: the 2 threads' GET values sum to the region's total "
              f"({fx['team_events']} -> {total})")
    written = os.path.join(os.path.dirname(run.report),
                           run.name + "-written.json")
    try:
        with open(written) as f:
            json.load(f)
        check(True, f"{name}: WRITE_FILE's report is whole JSON")
    except (OSError, ValueError) as e:
        check(False, f"{name}: WRITE_FILE's report: {e}")
    one = region(report, "one_thread")
    if backend == "perf" and one is not None:
        return one["events"]["msr/tsc/"]["total"] / one["wall_ns"] * 1e9
    return 0.0


def compile_real(args, tmp):
    """Builds LIKWID's examples and likwid_api_test.c against the real
    LIKWID: compile and link only."""
    if args.real_skip:
        skip(f"building against the real LIKWID: {args.real_skip}")
        return
    inc = ["-I" + args.real_include]
    lib = [args.real_library]
    jobs = []
    jobs.append(("likwid_api_test.c",
                 [args.real_cc, "-std=c99",
                  "-Werror=implicit-function-declaration",
                  "-DLIKWID_PERFMON"] + inc +
                 [args.api_source, "-o", os.path.join(tmp, "api_real"),
                  "-pthread"] + lib))
    c_example = os.path.join(args.examples_dir or "", "C-markerAPI.c")
    f_example = os.path.join(args.examples_dir or "", "F-markerAPI.F90")
    if args.examples_dir and os.path.exists(c_example):
        jobs.append(("C-markerAPI.c",
                     [args.real_cc, "-w", "-DLIKWID_PERFMON"] +
                     shlex.split(args.openmp_c_flags) + inc +
                     [c_example, "-o", os.path.join(tmp, "c_real")] + lib +
                     shlex.split(args.openmp_c_flags)))
    else:
        skip("C-markerAPI.c against the real LIKWID: no LIKWID examples")
    if not args.real_fc:
        skip("F-markerAPI.F90 against the real LIKWID: no Fortran compiler")
    elif not os.path.exists(os.path.join(args.real_include, "likwid.mod")):
        skip("F-markerAPI.F90 against the real LIKWID: no likwid.mod in "
             + args.real_include)
    elif args.examples_dir and os.path.exists(f_example):
        jobs.append(("F-markerAPI.F90",
                     [args.real_fc, "-w"] +
                     shlex.split(args.openmp_fortran_flags) + inc +
                     [f_example, "-o", os.path.join(tmp, "f_real")] + lib +
                     shlex.split(args.openmp_fortran_flags)))
    for what, cmd in jobs:
        p = harness.run(cmd, cwd=tmp, timeout=None)
        check(p.returncode == 0,
              f"{what} builds against the real LIKWID ({args.real_library})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--c-example", help="C-markerAPI.c built against us")
    ap.add_argument("--fortran-example", help="F-markerAPI.F90, the same")
    ap.add_argument("--examples-skip", default="",
                    help="why the examples were not built")
    ap.add_argument("--fortran-skip", default="",
                    help="why the Fortran programs were not built")
    ap.add_argument("--api-test", required=True)
    ap.add_argument("--fortran-test")
    ap.add_argument("--api-source", required=True)
    ap.add_argument("--examples-dir", default="")
    ap.add_argument("--real-cc", default="cc")
    ap.add_argument("--real-fc", default="")
    ap.add_argument("--real-include", default="")
    ap.add_argument("--real-library", default="")
    ap.add_argument("--real-skip", default="")
    ap.add_argument("--openmp-c-flags", default="-fopenmp")
    ap.add_argument("--openmp-fortran-flags", default="-fopenmp")
    args = ap.parse_args()
    for key in ("c_example", "fortran_example", "api_test", "fortran_test",
                "api_source"):
        if getattr(args, key):
            setattr(args, key, os.path.abspath(getattr(args, key)))
    tmp = tempfile.mkdtemp(prefix="uncore-likwid-")
    print(f"work directory: {tmp}")

    no_perf = harness.perf_system_wide_reason()
    runs = {}

    def start(name, argv, env, **kw):
        runs[name] = Run(name, argv, env, tmp, **kw)

    # Everything at once: the programs mostly sleep (the C example 10 x 2 s).
    start("api_sim", [args.api_test, "measured", "1",
                      os.path.join(tmp, "api_sim-written.json")], sim_env())
    start("api_off", [args.api_test, "off"], {})
    if args.fortran_test:
        start("fortran_test_sim",
              [args.fortran_test, os.path.join(tmp, "fortran-written.json")],
              sim_env())
    examples = []
    if args.c_example:
        examples.append(("c_example", args.c_example, 10))
    if args.fortran_example:
        examples.append(("fortran_example", args.fortran_example, 1))
    for name, program, _ in examples:
        start(name + "_sim", [program], sim_env())
    if not no_perf:
        start("api_perf", [args.api_test, "measured", "1",
                           os.path.join(tmp, "api_perf-written.json")],
              perf_env())
        for name, program, _ in examples:
            start(name + "_perf", [program], perf_env())
    for run in runs.values():
        run.wait()

    check_api(runs["api_sim"], "sim")
    off = runs["api_off"]
    check(off.returncode == 0 and facts(off).get("failures") == 0,
          "api_off: without a session every call is -EFAULT, GET zeros")
    check("Running without Marker API" in off.stderr,
          "api_off: INIT says \"Running without Marker API\"")
    check(not os.path.exists(off.report), "api_off: no report")
    if args.fortran_test:
        ft = runs["fortran_test_sim"]
        check(ft.returncode == 0 and "FAIL" not in ft.stdout and
              ft.stdout.count("ok ") >= 6,
              "fortran_test_sim: every check of the Fortran module passes")
        report = ft.load_report()
        check(report is not None and region(report, "gpu") is None,
              "fortran_test_sim: the GPU subroutines made no region")
    else:
        skip(f"likwid_fortran_test: {args.fortran_skip}")

    tsc_hz = 0.0
    if no_perf:
        skip(f"perf msr/tsc/: {no_perf}")
    else:
        tsc_hz = check_api(runs["api_perf"], "perf")
        check(tsc_hz > 0, f"api_perf: TSC rate from one_thread "
              f"({tsc_hz / 1e9:.4f} GHz)")
    if not examples:
        skip(f"LIKWID's examples: {args.examples_skip}")
    elif not args.fortran_example:
        skip(f"F-markerAPI.F90: {args.fortran_skip or args.examples_skip}")
    for name, _, iterations in examples:
        check_example(runs[name + "_sim"], "sim", iterations, 0.0)
        if not no_perf:
            check_example(runs[name + "_perf"], "perf", iterations, tsc_hz)

    compile_real(args, tmp)

    return harness.finish()


if __name__ == "__main__":
    sys.exit(main())
