#!/usr/bin/env python3
"""examples/phases on every simulator: four regions, and memory traffic that
differs by orders of magnitude between them (JSON report).

IvyTown through the example's own session; the Xeon 7500 (nehalemex) and
E7 (westmereex) through the environment session (UNCORE_PLATFORM,
UNCORE_METRICS=MEM_BW_TOTAL).  Session::SetSimulatedActivity drives each
simulator through the one simulator interface (sdk/sim/simulated_activity.h),
so each phase reads its own bandwidth and the compute loop ~0 on all three
(the 7500's used to read the same ~6 GB/s for every phase)."""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "testing"))
import harness  # noqa: E402
from harness import check  # noqa: E402


def run_phases(phases, platform):
    """The JSON report of `phases --quick` on `platform`'s simulator, or
    None (a failed check) when the program fails."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "phases.json")
        env = {"UNCORE_BACKEND": "sim", "UNCORE_OUTPUT": out}
        if platform != "ivytown":
            env.update({"UNCORE_PLATFORM": platform,
                        "UNCORE_METRICS": "MEM_BW_TOTAL"})
        r = harness.run([phases, "--quick"], env=harness.environment(env))
        if not check(r.returncode == 0, f"{platform}: phases --quick exits 0"):
            return None
        with open(out, encoding="utf-8") as f:
            return json.load(f)


def check_platform(phases, platform):
    report = run_phases(phases, platform)
    if report is None:
        return
    check(report["simulated"] is True, f"{platform}: the report is simulated")
    if "platform" in report:
        check(report["platform"] == platform,
              f"{platform}: the report's platform ({report['platform']})")
    regions = {x["name"]: x for x in report["regions"]}
    if not check(list(regions) == ["streaming copy", "triad", "pointer chase",
                                   "compute"],
                 f"{platform}: the four regions in order {list(regions)}"):
        return
    bw = {name: r["metrics"]["MEM_BW_TOTAL"] for name, r in regions.items()}
    print(platform, "MEM_BW_TOTAL (bytes/s):", bw)
    # Orders of magnitude: the copy (libc's memcpy, optimised in every
    # build) against the pointer chase, and the chase against compute.  The
    # triad is a plain loop: in an unoptimised (-O0, sanitizer) build it is
    # compute-bound, so it only has to beat the chase.
    check(bw["streaming copy"] > 10 * bw["pointer chase"] > 0,
          f"{platform}: the copy > 10 x the pointer chase > 0 {bw}")
    check(bw["triad"] > bw["pointer chase"],
          f"{platform}: the triad > the pointer chase {bw}")
    check(bw["compute"] < bw["pointer chase"] / 10,
          f"{platform}: compute < the pointer chase / 10 {bw}")


def main():
    phases = sys.argv[1]
    platforms = sys.argv[2:] or ["ivytown", "nehalemex", "westmereex"]
    for platform in platforms:
        check_platform(phases, platform)
    return harness.finish()


if __name__ == "__main__":
    sys.exit(main())
