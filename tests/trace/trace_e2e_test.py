#!/usr/bin/env python3
"""The trace and the report views from real runs (issue 22's "Done when").

    trace_e2e_test.py perf   --program two_thread_program
    trace_e2e_test.py phases --program phases
    trace_e2e_test.py stat   --uncore uncore

perf    the two-thread program on perf's msr/tsc/ (a socket-wide count at the
        TSC's known rate) with UNCORE_TRACE=t-%p.json and
        UNCORE_OUTPUT=r.json,r.csv,r.html,r.hatchet.json: all five files are
        there; the trace follows Perfetto's importer rules (check_trace.py);
        (20 ms background snapshots too); its slices per region path equal the report's calls; every point of
        the socket's msr/tsc/ counter track is the TSC rate (rdtsc against
        CLOCK_MONOTONIC, measured by the program) within 2%; the calls that
        read the counters carry counts in their args ("serial"'s within 5%
        of its duration's ticks); pandas reads r.csv
        (one row per value); the Hatchet tree holds the regions with
        inclusive metrics; headless Chromium renders r.html with an SVG
        element for every region and no script error.  Exit 77 (skip) where
        perf cannot count msr/tsc/ (not root, no msr PMU).
phases  examples/phases on the simulator with UNCORE_TRACE and
        UNCORE_TRACE_INTERVAL=10ms: the trace follows the rules, its four
        phases are slices, and the counter tracks have a point about every
        10 ms (background sampling) with the phases' bandwidths.
stat    `uncore stat -I 50 --trace` on perf msr/tsc/: one interval slice
        per interval line and a rate point per interval (of 1 ms or more).
mpi     mpirun -np 3 of the MPI test program on the simulator: with
        UNCORE_TRACE=t-%r.json every rank's trace and the merged t-all.json
        (every rank's slices, each rank its own process, the ranks' first
        regions within 100 ms of one another on the merged clock); without
        %r only the merged trace, and no temporary file left behind.
"""
import argparse
import collections
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_trace  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "testing"))
import harness  # noqa: E402
from harness import SKIP, check, perf_can_count_tsc  # noqa: E402,F401
from mpi_launch import Launcher  # noqa: E402

failures = harness.FAILURES


def run(cmd, env_extra, cwd):
    return harness.run(cmd, env=harness.environment(env_extra), cwd=cwd,
                       show_failure=False)


def slices_by_path(trace):
    counts = collections.Counter()
    for e in trace["traceEvents"]:
        if e["ph"] == "X":
            counts[e["args"]["path"]] += 1
        elif e["ph"] == "b":
            counts[e["args"]["path"]] += 1
    return counts


def counter_points(trace, name):
    return [(float(e["ts"]), float(v)) for e in trace["traceEvents"]
            if e["ph"] == "C" and e["name"] == name
            for v in e["args"].values()]


def check_views(folder, report):
    """pandas on r.csv, the Hatchet tree, Chromium on r.html."""
    paths = [r["path"] for r in report["regions"]]
    try:
        import pandas
    except ImportError:
        check(False, "pandas is missing (python3-pandas; run with "
              "/usr/bin/python3)")
        return
    frame = pandas.read_csv(os.path.join(folder, "r.csv"))
    check(len(frame) > 0, "r.csv has rows")
    check("value" in frame.columns, "r.csv has a value column")
    check(set(paths) <= set(frame["path"].astype(str)),
          "every region path is in r.csv")
    with open(os.path.join(folder, "r.hatchet.json"), encoding="utf-8") as f:
        tree = json.load(f)
    names = []

    def walk(nodes, depth):
        for n in nodes:
            check(isinstance(n["frame"]["name"], str), "frame name")
            check(any(k.endswith("(inc)") for k in n["metrics"]),
                  f"node {n['frame']['name']} has inclusive metrics")
            names.append(n["frame"]["name"])
            walk(n.get("children", []), depth + 1)
    walk(tree, 0)
    check(sorted(names) == sorted(r["name"] for r in report["regions"]),
          f"the Hatchet tree holds the regions: {names}")
    chromium = shutil.which("chromium")
    if chromium is None:
        print("note: no chromium here: r.html not rendered")
        return
    page = os.path.join(folder, "r.html")
    with open(page, encoding="utf-8") as f:
        text = f.read()
    catch = ("<script>window.addEventListener('error',function(e){"
             "document.documentElement.setAttribute('data-script-error',"
             "String(e.message))});</script>")
    probe = os.path.join(folder, "r-probe.html")
    with open(probe, "w", encoding="utf-8") as f:
        f.write(text.replace("<head>", "<head>" + catch, 1))
    p = subprocess.run(
        [chromium, "--headless=new", "--no-sandbox", "--disable-gpu",
         "--no-first-run", "--user-data-dir=" + os.path.join(folder, "prof"),
         "--dump-dom", "file://" + probe],
        capture_output=True, text=True, timeout=120, errors="replace")
    dom = p.stdout
    check("<svg" in dom, "Chromium rendered an <svg> in r.html")
    error = dom.split('data-script-error="')[1].split('"')[0] \
        if 'data-script-error="' in dom else None
    check(error is None, f"no script error in r.html: {error}")
    for path in paths:
        check(f'data-region="{path}"' in dom,
              f"region {path} is drawn in r.html")


def test_perf(args):
    if not perf_can_count_tsc():
        print("SKIP: perf cannot count msr/tsc/ here (needs root and the "
              "msr PMU)")
        return SKIP
    with tempfile.TemporaryDirectory() as folder:
        r = run([args.program], {
            "UNCORE_BACKEND": "perf", "UNCORE_EVENTS": "msr/tsc/",
            "UNCORE_TRACE": "t-%p.json", "UNCORE_TRACE_INTERVAL": "20ms",
            "UNCORE_OUTPUT": "r.json,r.csv,r.html,r.hatchet.json"}, folder)
        print(r.stdout, r.stderr)
        check(r.returncode == 0, f"the program ran: {r.returncode}")
        traces = glob.glob(os.path.join(folder, "t-*.json"))
        check(len(traces) == 1, f"one trace file: {traces}")
        for name in ("r.json", "r.csv", "r.html", "r.hatchet.json"):
            check(os.path.exists(os.path.join(folder, name)), name)
        if failures:
            return 1
        tsc_hz = float(r.stdout.split("tsc_hz")[1].split()[0])
        with open(os.path.join(folder, "r.json"), encoding="utf-8") as f:
            report = json.load(f)
        trace = check_trace.load(traces[0])
        for p in check_trace.problems(trace):
            check(False, "trace rule: " + p)
        calls = {reg["path"]: reg["calls"] for reg in report["regions"]}
        check(dict(slices_by_path(trace)) == calls,
              f"slices per region {dict(slices_by_path(trace))} == the "
              f"report's calls {calls}")
        check(calls.get("work") == 2 and calls.get("work/step") == 6,
              f"two threads' work: {calls}")
        points = counter_points(trace, "msr/tsc/")
        check(len(points) >= 5, f"msr/tsc/ has rate points: {len(points)}")
        for ts, rate in points:
            check(abs(rate / tsc_hz - 1) < 0.02,
                  f"msr/tsc/ at {ts} us: {rate:.4g}/s against the TSC's "
                  f"{tsc_hz:.4g}/s")
        # "serial" opened and closed alone: its slice carries its count.
        serial = [e for e in trace["traceEvents"]
                  if e["ph"] == "X" and e["name"] == "serial"]
        check(len(serial) == 1 and "msr/tsc/" in serial[0]["args"],
              "the serial call carries its count")
        if serial and "msr/tsc/" in serial[0]["args"]:
            got = float(serial[0]["args"]["msr/tsc/"])
            want = tsc_hz * float(serial[0]["dur"]) * 1e-6
            # Within 5%: the slice's clock and the counter read are two
            # reads a preemption can part by milliseconds on a loaded
            # machine (2% failed there once); the whole run would be 2.5x.
            check(abs(got / want - 1) < 0.05,
                  f"serial's count {got:.4g} is its duration's TSC ticks "
                  f"{want:.4g}")
        check_views(folder, report)
    return 1 if failures else 0


def test_phases(args):
    with tempfile.TemporaryDirectory() as folder:
        r = run([args.program], {
            "UNCORE_BACKEND": "sim", "UNCORE_METRICS": "MEM_BW_TOTAL",
            "UNCORE_TRACE": "phases-%p.json",
            "UNCORE_TRACE_INTERVAL": "10ms", "UNCORE_OUTPUT": "r.json"},
            folder)
        check(r.returncode == 0, f"phases ran: {r.returncode} {r.stderr}")
        traces = glob.glob(os.path.join(folder, "phases-*.json"))
        check(len(traces) == 1, f"one trace: {traces}")
        if failures:
            return 1
        trace = check_trace.load(traces[0])
        for p in check_trace.problems(trace):
            check(False, "trace rule: " + p)
        with open(os.path.join(folder, "r.json"), encoding="utf-8") as f:
            report = json.load(f)
        calls = {reg["path"]: reg["calls"] for reg in report["regions"]}
        check(dict(slices_by_path(trace)) == calls,
              f"slices {dict(slices_by_path(trace))} == calls {calls}")
        points = counter_points(trace, "MEM_BW_TOTAL")
        duration_us = report["duration_ns"] / 1000
        check(len(points) >= duration_us / 10_000 * 0.5,
              f"about one MEM_BW_TOTAL point per 10 ms: {len(points)} in "
              f"{duration_us / 1e6:.2f} s")
        gaps = [b[0] - a[0] for a, b in zip(points, points[1:])]
        check(gaps and max(gaps) < 200_000,
              f"no long stretch without a point: {max(gaps or [0])} us")
        # Inside "streaming copy" the track shows its bandwidth, inside
        # "compute" none.
        slices = {e["name"]: (float(e["ts"]), float(e["ts"]) + float(e["dur"]))
                  for e in trace["traceEvents"] if e["ph"] == "X"}
        for name, expect_traffic in (("streaming copy", True),
                                     ("compute", False)):
            begin, end = slices[name]
            inside = [v for ts, v in points
                      if begin + 20_000 <= ts <= end - 30_000]
            check(inside, f"points inside {name}")
            if inside:
                check((min(inside) > 1e9) == expect_traffic,
                      f"{name}: bandwidth points {inside[:5]}...")
    return 1 if failures else 0


def test_stat(args):
    if not perf_can_count_tsc():
        print("SKIP: perf cannot count msr/tsc/ here")
        return SKIP
    with tempfile.TemporaryDirectory() as folder:
        r = run([args.uncore, "stat", "--backend", "perf", "-e", "msr/tsc/",
                 "-I", "50", "--trace", "s.json", "-o", "s.html,-", "--",
                 "sleep", "0.325"], {}, folder)
        check(r.returncode == 0, f"stat ran: {r.returncode} {r.stderr}")
        trace = check_trace.load(os.path.join(folder, "s.json"))
        for p in check_trace.problems(trace):
            check(False, "trace rule: " + p)
        intervals = [e for e in trace["traceEvents"]
                     if e["ph"] == "X" and e["name"] == "interval"]
        # One slice per interval line stat printed (to stderr): 0.325 s of
        # 50 ms intervals print 6 whole ones and the last 25 ms, or more
        # when a loaded machine stretches the run.
        lines = [ln for ln in r.stderr.splitlines()
                 if re.match(r"^\s*\d+\.\d+\s+[\d,]+\s*$", ln)]
        check(len(lines) >= 7, f"interval lines of 0.325 s: {len(lines)}")
        check(len(intervals) == len(lines),
              f"one slice per interval line: {len(intervals)} slices, "
              f"{len(lines)} lines")
        # A rate point per interval, but for one under a millisecond (the
        # trace merges such a stretch into the next: TraceOptions'
        # min_rate_ns), which a late tick on a loaded machine can make.
        points = counter_points(trace, "msr/tsc/")
        long_enough = [e for e in intervals if float(e["dur"]) >= 1000.0]
        check(len(points) == len(long_enough),
              f"a rate point per interval of 1 ms or more: {len(points)} "
              f"points, {len(long_enough)} such intervals")
        check(os.path.exists(os.path.join(folder, "s.html")), "s.html")
    return 1 if failures else 0


def mpirun(args, folder, env_extra):
    launcher = Launcher(args.mpirun)
    cmd = launcher.command(3, [args.program, "--region-ms", "200"])
    env = {**launcher.environment(), "TMPDIR": folder,
           "UNCORE_BACKEND": "sim", "UNCORE_EVENTS": "imc/CAS_COUNT.RD",
           "UNCORE_OUTPUT": "m.json"}
    env.update(env_extra)
    r = run(cmd, env, folder)
    check(r.returncode == 0, f"mpirun: {r.returncode} {r.stderr[-2000:]}")
    return r


def test_mpi(args):
    with tempfile.TemporaryDirectory() as folder:
        mpirun(args, folder, {"UNCORE_TRACE": "t-%r.json"})
        names = sorted(os.listdir(folder))
        for want in ("t-0.json", "t-1.json", "t-2.json", "t-all.json"):
            check(want in names, f"{want} in {names}")
        if failures:
            return 1
        per_rank = [check_trace.load(os.path.join(folder, f"t-{r}.json"))
                    for r in range(3)]
        merged = check_trace.load(os.path.join(folder, "t-all.json"))
        for t in per_rank + [merged]:
            for p in check_trace.problems(t):
                check(False, "trace rule: " + p)
        slices = [e for e in merged["traceEvents"] if e["ph"] == "X"]
        check(len(slices) == sum(
            1 for t in per_rank for e in t["traceEvents"] if e["ph"] == "X"),
            "the merged trace holds every rank's slices")
        firsts = {}
        for e in slices:
            firsts[e["pid"]] = min(firsts.get(e["pid"], 1e18), float(e["ts"]))
        check(len(firsts) == 3, f"three processes: {sorted(firsts)}")
        check(max(firsts.values()) - min(firsts.values()) < 100_000,
              f"the ranks' first regions line up: {firsts}")
        check(merged["otherData"]["merged_ranks"] == 3, "3 ranks merged")
    with tempfile.TemporaryDirectory() as folder:
        mpirun(args, folder, {"UNCORE_TRACE": "job.json"})
        names = sorted(os.listdir(folder))
        check("job.json" in names, f"the merged trace: {names}")
        check(not any(n.startswith(".uncore-trace") for n in names),
              f"no temporary trace left: {names}")
        if "job.json" in names:
            for p in check_trace.problems(
                    check_trace.load(os.path.join(folder, "job.json"))):
                check(False, "trace rule: " + p)
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("case", choices=["perf", "phases", "stat", "mpi"])
    parser.add_argument("--program")
    parser.add_argument("--uncore")
    parser.add_argument("--mpirun")
    args = parser.parse_args()
    result = {"perf": test_perf, "phases": test_phases, "stat": test_stat,
              "mpi": test_mpi}[args.case](args)
    print("PASS" if result == 0 else "SKIP" if result == SKIP else
          f"{len(failures)} failures")
    return result


if __name__ == "__main__":
    sys.exit(main())
