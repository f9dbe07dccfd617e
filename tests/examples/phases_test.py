#!/usr/bin/env python3
"""examples/phases on the simulator: four regions, and memory traffic that
differs by orders of magnitude between them (JSON report)."""
import json
import os
import subprocess
import sys
import tempfile


def main():
    phases = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "phases.json")
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("UNCORE_")}
        env.update({"UNCORE_BACKEND": "sim", "UNCORE_OUTPUT": out})
        r = subprocess.run([phases, "--quick"], env=env, capture_output=True,
                           text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        with open(out, encoding="utf-8") as f:
            report = json.load(f)
    assert report["simulated"] is True
    regions = {x["name"]: x for x in report["regions"]}
    assert list(regions) == ["streaming copy", "triad", "pointer chase",
                             "compute"], list(regions)
    bw = {name: r["metrics"]["MEM_BW_TOTAL"] for name, r in regions.items()}
    print("MEM_BW_TOTAL (bytes/s):", bw)
    # Orders of magnitude: the copy (libc's memcpy, optimised in every
    # build) against the pointer chase, and the chase against compute.  The
    # triad is a plain loop: in an unoptimised (-O0, sanitizer) build it is
    # compute-bound, so it only has to beat the chase.
    assert bw["streaming copy"] > 10 * bw["pointer chase"] > 0, bw
    assert bw["triad"] > bw["pointer chase"], bw
    assert bw["compute"] < bw["pointer chase"] / 10, bw
    print("phases_test: ok")


if __name__ == "__main__":
    main()
