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
import subprocess
import sys
import tempfile


def run_phases(phases, platform):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "phases.json")
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("UNCORE_")}
        env.update({"UNCORE_BACKEND": "sim", "UNCORE_OUTPUT": out})
        if platform != "ivytown":
            env.update({"UNCORE_PLATFORM": platform,
                        "UNCORE_METRICS": "MEM_BW_TOTAL"})
        r = subprocess.run([phases, "--quick"], env=env, capture_output=True,
                           text=True, timeout=300)
        assert r.returncode == 0, (platform, r.stderr)
        with open(out, encoding="utf-8") as f:
            return json.load(f)


def check(phases, platform):
    report = run_phases(phases, platform)
    assert report["simulated"] is True
    if "platform" in report:
        assert report["platform"] == platform, (platform, report["platform"])
    regions = {x["name"]: x for x in report["regions"]}
    assert list(regions) == ["streaming copy", "triad", "pointer chase",
                             "compute"], list(regions)
    bw = {name: r["metrics"]["MEM_BW_TOTAL"] for name, r in regions.items()}
    print(platform, "MEM_BW_TOTAL (bytes/s):", bw)
    # Orders of magnitude: the copy (libc's memcpy, optimised in every
    # build) against the pointer chase, and the chase against compute.  The
    # triad is a plain loop: in an unoptimised (-O0, sanitizer) build it is
    # compute-bound, so it only has to beat the chase.
    assert bw["streaming copy"] > 10 * bw["pointer chase"] > 0, (platform, bw)
    assert bw["triad"] > bw["pointer chase"], (platform, bw)
    assert bw["compute"] < bw["pointer chase"] / 10, (platform, bw)


def main():
    phases = sys.argv[1]
    platforms = sys.argv[2:] or ["ivytown", "nehalemex", "westmereex"]
    for platform in platforms:
        check(phases, platform)
    print("phases_test: ok")


if __name__ == "__main__":
    main()
