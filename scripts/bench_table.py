#!/usr/bin/env python3
"""Runs tests/bench/concurrency_bench once and prints the tables of
docs/performance.md ("Threads, before the attribution rule").

    python3 scripts/bench_table.py [--bench build/tests/concurrency_bench]
        [--repetitions 3] [--min-time 0.5] [--json out.json]
        [--from-json out.json]

One run of the benchmark (Google Benchmark JSON; with repetitions > 1 the
medians) gives:
  - aggregate region pairs per second at 1, 2, 4, 8 and 16 threads on
    (a) the simulator, (b) the simulator with a fixed off-CPU latency per
    register access, (c) perf msr/tsc/, each with shared snapshots and with
    the per-socket-lock design (SharedSnapshots::Mode::kEach);
  - the ratios the targets name: (a) shared at 16 threads over 1 thread
    (>= 2x), (b) shared over (b) lock at 16 threads (>= 8x);
  - what each form of region name costs per pair over the interned RegionId
    (<= 15 ns).
It also prints the machine (CPU model, CPUs) and the load average before
and after the run.  --from-json formats a saved run without running it.
"""

import argparse
import json
import os
import platform
import subprocess
import sys

THREADS = [1, 2, 4, 8, 16]
COLUMNS = [
    ("sim_shared", "(a) sim, shared"),
    ("sim_lock", "(a) sim, lock"),
    ("slowsim_shared", "(b) slow sim, shared"),
    ("slowsim_lock", "(b) slow sim, lock"),
    ("perftsc_shared", "(c) perf msr/tsc/, shared"),
    ("perftsc_lock", "(c) perf msr/tsc/, lock"),
]
FORMS = [
    ("id", "`UncoreRegion(RegionId)` (interned)"),
    ("macro", "`UNCORE_REGION(\"...\")`"),
    ("const_char", "`UncoreRegion(const char*)`"),
    ("string_view", "`UncoreRegion(std::string_view)`"),
    ("string", "`UncoreRegion(const std::string&)`"),
    ("begin_end", "`RegionBegin/RegionEnd(std::string_view)`"),
    ("c_api", "`uncore_region_begin/end(const char*)`"),
]
STRING_FORMS = ["const_char", "string_view", "string", "begin_end", "c_api"]
TARGET_STRING_NS = 15.0
TARGET_SIM_SCALING = 2.0
TARGET_SLOW_VS_LOCK = 8.0


def cpu_model():
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def load_average():
    try:
        return "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
    except OSError:
        return "unknown"


def run_benchmark(args):
    cmd = [
        args.bench,
        "--benchmark_format=json",
        "--benchmark_min_time={}".format(args.min_time),
    ]
    if args.repetitions > 1:
        cmd += [
            "--benchmark_repetitions={}".format(args.repetitions),
            "--benchmark_report_aggregates_only=true",
        ]
    if args.slow_access_ns is not None:
        cmd.append("--slow_access_ns={}".format(args.slow_access_ns))
    before = load_average()
    sys.stderr.write("running: {}\n".format(" ".join(cmd)))
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True)
    after = load_average()
    data = json.loads(out.stdout)
    data["bench_table"] = {
        "command": " ".join(cmd),
        "load_before": before,
        "load_after": after,
        "cpu_model": cpu_model(),
        "cpus": os.cpu_count(),
    }
    return data


def rows_by_name(data):
    """run_name -> the row to use: the median where there are aggregates."""
    chosen = {}
    for b in data.get("benchmarks", []):
        name = b.get("run_name", b["name"])
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") == "median":
                chosen[name] = b
        elif name not in chosen:
            chosen[name] = b
    return chosen


def pairs_row(rows, column, threads):
    return rows.get("BM_Pairs/{}/real_time/threads:{}".format(column, threads))


def rate(row):
    if row is None or row.get("error_occurred"):
        return None
    return row.get("items_per_second")


def fmt_rate(value):
    if value is None:
        return "n/a"
    if value >= 1e6:
        return "{:.2f} M".format(value / 1e6)
    if value >= 1e3:
        return "{:.1f} k".format(value / 1e3)
    return "{:.0f}".format(value)


def fmt_ratio(num, den):
    if num is None or den is None or den == 0:
        return None
    return num / den


def verdict(value, target):
    if value is None:
        return "not measured"
    return "met" if value >= target else "NOT met"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bench", default="build/tests/concurrency_bench")
    p.add_argument("--repetitions", type=int, default=3)
    p.add_argument("--min-time", type=float, default=0.5)
    p.add_argument("--slow-access-ns", type=int, default=None)
    p.add_argument("--json", help="also save the run's JSON here")
    p.add_argument("--from-json", help="format a saved run; do not run")
    args = p.parse_args()

    if args.from_json:
        with open(args.from_json, encoding="utf-8") as f:
            data = json.load(f)
    else:
        data = run_benchmark(args)
        if args.json:
            with open(args.json, "w", encoding="utf-8") as f:
                json.dump(data, f, indent=1)
    rows = rows_by_name(data)
    info = data.get("bench_table", {})
    ctx = data.get("context", {})

    print("Machine: {}, {} CPUs; load average before / after the run: "
          "{} / {}.".format(info.get("cpu_model", "?"),
                            info.get("cpus", ctx.get("num_cpus", "?")),
                            info.get("load_before", "?"),
                            info.get("load_after", "?")))
    print("Command: `{}`".format(info.get("command", "?")))
    print()
    print("Aggregate region pairs per second:")
    print()
    print("| threads | " + " | ".join(c[1] for c in COLUMNS) + " |")
    print("|---:|" + "---:|" * len(COLUMNS))
    for n in THREADS:
        cells = [fmt_rate(rate(pairs_row(rows, c[0], n))) for c in COLUMNS]
        print("| {} | {} |".format(n, " | ".join(cells)))
    print()
    print("Device snapshots per pair (2: none shared):")
    print()
    print("| threads | " + " | ".join(c[1] for c in COLUMNS) + " |")
    print("|---:|" + "---:|" * len(COLUMNS))
    for n in THREADS:
        cells = []
        for c in COLUMNS:
            r = pairs_row(rows, c[0], n)
            v = None if r is None or r.get("error_occurred") else r.get(
                "snapshots_per_pair")
            cells.append("n/a" if v is None else "{:.2f}".format(v))
        print("| {} | {} |".format(n, " | ".join(cells)))
    print()

    access = [
        pairs_row(rows, c, n).get("access_us")
        for c in ("slowsim_shared", "slowsim_lock") for n in THREADS
        if pairs_row(rows, c, n) is not None and
        pairs_row(rows, c, n).get("access_us") is not None
    ]
    if access:
        print("(b): one register access slept {:.1f} to {:.1f} us (mean per "
              "benchmark run; asked: {} us).".format(
                  min(access), max(access),
                  (args.slow_access_ns or 2000) / 1000.0))
    skipped = sorted({
        r.get("error_message", "")
        for name, r in rows.items() if r.get("error_occurred")
    })
    for message in skipped:
        print("Skipped: {}".format(message))

    def r16(col, n=16):
        return rate(pairs_row(rows, col, n))

    scaling = fmt_ratio(r16("sim_shared"), r16("sim_shared", 1))
    slow_gain = fmt_ratio(r16("slowsim_shared"), r16("slowsim_lock"))
    sim_gain = fmt_ratio(r16("sim_shared"), r16("sim_lock"))
    perf_gain = fmt_ratio(r16("perftsc_shared"), r16("perftsc_lock"))
    print()
    print("| ratio | value | target |")
    print("|---|---:|---|")

    def line(label, value, target):
        shown = "n/a" if value is None else "{:.2f}x".format(value)
        want = "-" if target is None else ">= {:g}x: {}".format(
            target, verdict(value, target))
        print("| {} | {} | {} |".format(label, shown, want))

    line("(a) shared, 16 threads / 1 thread", scaling, TARGET_SIM_SCALING)
    line("(b) shared / lock, 16 threads", slow_gain, TARGET_SLOW_VS_LOCK)
    line("(a) shared / lock, 16 threads", sim_gain, None)
    line("(c) shared / lock, 16 threads", perf_gain, None)

    print()
    print("Region pair by name form, one thread, in-memory 8-counter device "
          "(CPU time):")
    print()
    print("| form | ns per pair | over the interned form | target |")
    print("|---|---:|---:|---|")
    base_row = rows.get("BM_Form_id")
    base = None if base_row is None else base_row.get("cpu_time")
    for key, label in FORMS:
        r = rows.get("BM_Form_" + key)
        if r is None or r.get("error_occurred"):
            print("| {} | n/a | | |".format(label))
            continue
        ns = r["cpu_time"]
        if key == "id" or base is None:
            print("| {} | {:.1f} | | |".format(label, ns))
            continue
        delta = ns - base
        target = ""
        if key in STRING_FORMS:
            target = "<= {:g} ns: {}".format(
                TARGET_STRING_NS,
                "met" if delta <= TARGET_STRING_NS else "NOT met")
        print("| {} | {:.1f} | {:+.1f} ns | {} |".format(
            label, ns, delta, target))
    return 0


if __name__ == "__main__":
    sys.exit(main())
