#!/usr/bin/env python3
"""uncore::mpi end to end: mpirun -np 4 (oversubscribed) with the simulator
and with perf's msr/tsc/, the LD_PRELOAD route, one rank, and bound ranks.

Checks the merged report at rank 0: "ranks", "nodes", calls summed over
ranks, and each region's total counted once per socket while at least one
rank was inside it (the node union): the simulated U-Box clock (2 GHz) or
the TSC rate (measured by the program) times the union of the ranks' calls
(timed by the program inside the regions, and around their boundaries: the
count lies between the two, within 1%), for ranks that overlap ("work",
"staggered": rank r enters at r x 30 ms for 100 ms) and ranks with gaps
between them ("gapped": at r x 150 ms).  With perf, the perf_event file descriptors open in
the job's processes while it runs must be events x sockets, not x ranks.
"""
import argparse
import csv
import glob
import json
import os
import re
import socket
import stat
import subprocess
import sys
import threading
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "testing"))
import harness  # noqa: E402
from harness import check, skip  # noqa: E402
from mpi_launch import Launcher  # noqa: E402

# Open MPI's mpirun or MPICH's mpiexec (main() sets it from --mpirun).
LAUNCHER = None


def node_sockets():
    packages = set()
    for path in glob.glob("/sys/devices/system/cpu/cpu[0-9]*/topology/"
                          "physical_package_id"):
        with open(path) as f:
            packages.add(int(f.read()))
    return max(len(packages), 1)


def mpirun(args, np, program, env_extra, export=None, bind_to_core=False,
           timeout=60, program_args=("--region-ms", "1000"), quiet=False):
    cmd = LAUNCHER.command(np, [program] + list(program_args), export=export,
                           bind_to_core=bind_to_core)
    env = harness.environment({**LAUNCHER.environment(), **env_extra})
    return harness.run(cmd, env=env, timeout=timeout, show_failure=not quiet)


def facts(p):
    for line in p.stdout.splitlines():
        if line.startswith("{"):
            return json.loads(line)
    return {}


# The simulator's job of two short ranks (about a second), for the checks of
# each UNCORE_* form.
SIM = {"UNCORE_EVENTS": "ubox/UCLK", "UNCORE_BACKEND": "sim"}
SHORT = ("--region-ms", "50")


def load_json(path, what):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        check(False, f"{what}: {path} is JSON ({e})")
        return {}


def check_output_list(args, tmp):
    """UNCORE_OUTPUT's every form for the merged report (issue 36 R4): a
    comma-separated list (each name written, each in its own format), the
    placeholders in each name, "-" among them, and an empty name refused at
    start."""
    d = os.path.join(tmp, "list")
    os.mkdir(d)
    names = [os.path.join(d, n) for n in ("a.json", "a.html", "a.csv")]
    p = mpirun(args, 2, args.program,
               dict(SIM, UNCORE_OUTPUT=",".join(names)), program_args=SHORT)
    check(p.returncode == 0 and sorted(os.listdir(d)) ==
          ["a.csv", "a.html", "a.json"],
          f"UNCORE_OUTPUT=a.json,a.html,a.csv: all three written "
          f"{sorted(os.listdir(d))}")
    if all(os.path.exists(n) for n in names):
        report = load_json(names[0], "list")
        check(report.get("kind") == "mpi" and report.get("ranks") == 2,
              "UNCORE_OUTPUT list: a.json is the merged JSON of 2 ranks")
        with open(names[1], encoding="utf-8") as f:
            page = f.read()
        check(page.startswith("<!DOCTYPE html>") and "work" in page,
              "UNCORE_OUTPUT list: a.html is the page")
        with open(names[2], encoding="utf-8") as f:
            rows = f.read().splitlines()
        check(rows and rows[0].startswith("region,path,parent,depth,calls,") and
              any(r.startswith("work,work,,0,2,") for r in rows),
              "UNCORE_OUTPUT list: a.csv is the tidy CSV (work: 2 calls)")

    # Spaces around the names, "-" (the table on rank 0's stderr), a table
    # file and the placeholders, each in its own name.
    d = os.path.join(tmp, "forms")
    os.mkdir(d)
    hatchet = os.path.join(d, "m.hatchet.json")
    table = os.path.join(d, "m.txt")
    placed = os.path.join(d, "r%r-%h-%p-%t-%%.json")
    p = mpirun(args, 2, args.program,
               dict(SIM, UNCORE_OUTPUT=f" {hatchet} , -,{table},{placed}"),
               program_args=SHORT)
    check(p.returncode == 0 and
          p.stderr.count("uncore MPI report: 2 ranks") == 1,
          "UNCORE_OUTPUT list with -: the table on stderr, once")
    check(os.path.exists(table) and
          open(table, encoding="utf-8").read().startswith(
              "uncore MPI report: 2 ranks"),
          "UNCORE_OUTPUT list: another name is the table")
    tree = load_json(hatchet, "hatchet") if os.path.exists(hatchet) else None
    check(isinstance(tree, list) and tree and "frame" in tree[0],
          "UNCORE_OUTPUT list: *.hatchet.json is Hatchet's literal tree")
    pid = facts(p).get("pid")
    host = socket.gethostname()
    pattern = re.compile(
        rf"r0-{re.escape(host)}-{pid}-\d{{8}}-\d{{6}}-%\.json")
    placed_files = [f for f in os.listdir(d) if pattern.fullmatch(f)]
    check(len(placed_files) == 1,
          f"UNCORE_OUTPUT list: %r %h %p %t %% expanded as rank 0's "
          f"{sorted(os.listdir(d))}")

    # An empty name in the list: said once at start, the job runs
    # unmeasured, nothing written.
    d = os.path.join(tmp, "empty-item")
    os.mkdir(d)
    p = mpirun(args, 2, args.program,
               dict(SIM, UNCORE_OUTPUT=os.path.join(d, "a.json") + ",,-"),
               program_args=SHORT)
    check(p.returncode == 0 and
          p.stderr.count("has an empty name in its list") == 1 and
          not os.listdir(d) and "uncore MPI report" not in p.stderr,
          f"UNCORE_OUTPUT a.json,,-: refused at start, once: "
          f"{p.stderr.strip()}")


def check_sample(args, tmp):
    """UNCORE_SAMPLE under MPI (issue 36 R2): the ranks count no node
    unions when they sample, so a socket's count is one rank's view; the
    merged report says so (a warning in the report, once on stderr) and
    marks the counts estimated where several ranks entered the region (the
    view can fall short of the union: "staggered" read 47% low with 4 ranks,
    quietly)."""
    out = os.path.join(tmp, "sample.json")
    table = os.path.join(tmp, "sample.txt")
    p = mpirun(args, 4, args.program,
               dict(SIM, UNCORE_SAMPLE="2", UNCORE_OUTPUT=f"{out},{table}"),
               program_args=SHORT)
    check(p.returncode == 0 and os.path.exists(out),
          "UNCORE_SAMPLE=2 -np 4: mpirun succeeds, report written")
    if not os.path.exists(out):
        return
    report = load_json(out, "sample")
    said = [w for w in report.get("warnings", [])
            if "UNCORE_SAMPLE=2" in w and "node union" in w]
    check(len(said) == 1,
          f"UNCORE_SAMPLE=2: the merged report warns that node unions are "
          f"off {report.get('warnings')}")
    lines = [l for l in p.stderr.splitlines()
             if "UNCORE_SAMPLE=2" in l and "node union" in l]
    check(len(lines) == 1, f"UNCORE_SAMPLE=2: said once on stderr {lines}")
    r = region(report, "staggered")
    ev = r["events"]["ubox/UCLK"] if r else {}
    check(ev.get("estimated") is True and ev.get("per_socket") and
          all(s["estimated"] is True and s["node_union"] is False and
              s["from_rank"] >= 0 for s in ev["per_socket"]),
          f"UNCORE_SAMPLE=2: staggered, one rank's view of 4, marked "
          f"estimated {ev}")
    union = facts(p).get("union_ns", {}).get("staggered", 0)
    check(ev.get("total", 0) < 0.9 * 2e9 * node_sockets() * union * 1e-9,
          "UNCORE_SAMPLE=2: staggered's view is below the node union (what "
          "the estimated mark is for)")
    rows = open(table, encoding="utf-8").read().splitlines() \
        if os.path.exists(table) else []
    check(any(l.lstrip().startswith("staggered") and "~" in l for l in rows),
          "UNCORE_SAMPLE=2: the table marks staggered's count ~")


def job(args, tmp, name, env, np=2):
    """A short simulated job of `np` ranks with `env` (over SIM); its
    merged JSON at tmp/NAME.json unless env names UNCORE_OUTPUT.  Returns
    the process, the report ({} when none) and rank 0's "uncore:" lines."""
    out = os.path.join(tmp, name + ".json")
    full = dict(SIM, UNCORE_OUTPUT=out)
    full.update(env)
    full = {k: v for k, v in full.items() if v is not None}
    if os.path.exists(out):
        os.remove(out)
    p = mpirun(args, np, args.program, full, program_args=SHORT, quiet=True)
    report = load_json(out, name) if os.path.exists(out) else {}
    lines = [l for l in p.stderr.splitlines() if l.startswith("uncore:")]
    return p, report, lines


def refused_once(what, p, report, lines, phrase):
    """A form that cannot work: the job runs unmeasured and one line on
    stderr says why (not once per rank, nor another rank's consequence of
    it); a merged report, when there is one (a session that could not
    start), lists why and has no counts."""
    check(p.returncode == 0 and len(lines) == 1 and phrase in lines[0] and
          (not report or (any(phrase in e for e in report.get("errors", []))
                          and not report.get("events"))),
          f"{what}: refused, said once ({phrase!r}): {lines}")


def measured(what, p, report, np=2):
    work = region(report, "work") or {}
    ok = (p.returncode == 0 and report.get("ranks") == np and
          not report.get("errors") and work.get("calls") == np and
          all(e["total"] > 0 or "COUNTER0_OCCUPANCY" in k or
              "POWER_CKE" in k for k, e in work.get("events", {}).items()))
    check(ok, f"{what}: measured, merged over {np} ranks "
          f"(errors {report.get('errors')}; {p.stderr.strip()[-300:]})")
    return ok


def check_forms(args, tmp):
    """Each documented UNCORE_* form (docs/environment.md) under MPI: it
    works for the merged report, or it is refused with one clear line.
    UNCORE_OUTPUT's forms are check_output_list's, UNCORE_SAMPLE's
    check_sample's, UNCORE_TRACE's %r and plain names trace_e2e_mpi_test's."""
    d = os.path.join(tmp, "forms-env")
    os.mkdir(d)

    # UNCORE_EVENTS: ',' and ';' between specs, commas inside a kernel
    # spec and a modifier list stay with it.
    events = ("ubox/UCLK;imc/CAS_COUNT.RD, imc/event=0x04,umask=0x0c/,"
              "cbo/COUNTER0_OCCUPANCY:thresh=1,edge")
    p, report, _ = job(args, d, "events", {"UNCORE_EVENTS": events})
    names = [e["canonical"] for e in report.get("events", [])]
    check(len(names) == 4 and names[0] == "ubox/UCLK" and
          "imc/CAS_COUNT.WR" in names,
          f"UNCORE_EVENTS={events}: four events {names}")
    measured("UNCORE_EVENTS list", p, report)
    # A metric spec among the events counts as a metric.
    p, report, _ = job(args, d, "events-metric",
                       {"UNCORE_EVENTS": "ubox/UCLK,MEM_BW_READS"})
    work = region(report, "work") or {}
    m = work.get("metrics", {}).get("MEM_BW_READS") or {}
    check(m.get("ranks") == 2 and (m.get("value") or 0) > 0 and
          m.get("rank_mean", 0) > 0,
          f"UNCORE_EVENTS with a metric: MEM_BW_READS of the merged counts "
          f"and over 2 ranks {m}")
    # A spec that cannot be counted.
    p, report, lines = job(args, d, "events-bad",
                           {"UNCORE_EVENTS": "ubox/NOPE"})
    refused_once("UNCORE_EVENTS=ubox/NOPE", p, report, lines,
                 "unknown ubox event 'NOPE'")

    # UNCORE_METRICS: a name and a spec with a parameter, alone.
    p, report, _ = job(args, d, "metrics", {
        "UNCORE_EVENTS": None,
        "UNCORE_METRICS": "MEM_BW_TOTAL,metric/PCT_CYCLES_DRAM_RANKx_IN_CKE:x=3"})
    work = region(report, "work") or {}
    got = sorted(k for k, v in work.get("metrics", {}).items()
                 if v and v.get("ranks") == 2)
    check(got == ["MEM_BW_TOTAL", "PCT_CYCLES_DRAM_RANKx_IN_CKE:x=3"],
          f"UNCORE_METRICS (no UNCORE_EVENTS): both metrics over 2 ranks {got}")
    measured("UNCORE_METRICS", p, report)

    # UNCORE_BACKEND: any case; off; auto; one that cannot work here.
    p, report, _ = job(args, d, "backend-case", {"UNCORE_BACKEND": "SIM"})
    check(report.get("backend") == "sim", "UNCORE_BACKEND=SIM: sim")
    p, report, lines = job(args, d, "backend-off", {"UNCORE_BACKEND": "off"})
    check(p.returncode == 0 and report.get("backend") == "off" and
          any("not measured" in w for w in report.get("warnings", [])) and
          not lines,
          f"UNCORE_BACKEND=off: a merged report of backend off that says "
          f"so {report.get('warnings')} {lines}")
    p, report, lines = job(args, d, "backend-auto", {"UNCORE_BACKEND": "auto"})
    check(p.returncode == 0 and report.get("backend") in ("perf", "direct",
                                                          "off"),
          f"UNCORE_BACKEND=auto: perf, direct or off, never sim "
          f"({report.get('backend')})")
    if report.get("backend") == "off":
        check(any("no backend could count here" in w
                  for w in report.get("warnings", [])),
              "UNCORE_BACKEND=auto, off here: the merged report says why")
    for backend in ("direct", "perf"):
        p, report, lines = job(args, d, "backend-" + backend,
                               {"UNCORE_BACKEND": backend})
        if report.get("backend") == backend:
            skip(f"UNCORE_BACKEND={backend} counts ubox/UCLK here")
            continue
        check(p.returncode == 0 and len(lines) == 1 and
              "regions will not be measured" in lines[0] and
              "shared counters segment" not in p.stderr,
              f"UNCORE_BACKEND={backend}, which cannot count here: its "
              f"reason, said once {lines}")
    p, report, lines = job(args, d, "backend-bad", {"UNCORE_BACKEND": "bogus"})
    check(p.returncode == 0 and len(lines) == 1 and
          "unknown backend 'bogus'" in lines[0],
          f"UNCORE_BACKEND=bogus: said once {lines}")

    # UNCORE_OUTPUT set but empty.
    p, report, lines = job(args, d, "output-empty", {"UNCORE_OUTPUT": ""})
    check(p.returncode == 0 and len(lines) == 1 and
          "UNCORE_OUTPUT is empty" in lines[0],
          f"UNCORE_OUTPUT='': said once {lines}")

    # UNCORE_TRACE=-: a trace is a file, refused at start as a session
    # refuses it (not lost at the end).
    p, report, lines = job(args, d, "trace-dash", {"UNCORE_TRACE": "-"})
    refused_once("UNCORE_TRACE=-", p, report, lines, "a trace is a file")

    # UNCORE_TRACE_INTERVAL with the HTML page, and a value too short.
    page = os.path.join(d, "interval.html")
    p, report, _ = job(args, d, "interval", {
        "UNCORE_TRACE_INTERVAL": "10ms",
        "UNCORE_OUTPUT": os.path.join(d, "interval.json") + "," + page})
    check(p.returncode == 0 and os.path.exists(page),
          "UNCORE_TRACE_INTERVAL=10ms: the merged page written")
    measured("UNCORE_TRACE_INTERVAL=10ms", p, report)
    p, report, lines = job(args, d, "interval-bad",
                           {"UNCORE_TRACE_INTERVAL": "5us"})
    refused_once("UNCORE_TRACE_INTERVAL=5us", p, report, lines,
                 "not a time of 100us or more")

    # UNCORE_PLATFORM: an alias in another case; one that does not exist.
    p, report, _ = job(args, d, "platform", {"UNCORE_PLATFORM": "IVBEP"})
    check(report.get("platform") == "ivytown",
          f"UNCORE_PLATFORM=IVBEP: ivytown ({report.get('platform')})")
    measured("UNCORE_PLATFORM=IVBEP", p, report)
    p, report, lines = job(args, d, "platform-bad",
                           {"UNCORE_PLATFORM": "nosuch"})
    refused_once("UNCORE_PLATFORM=nosuch", p, report, lines,
                 "no platform 'nosuch'")

    # UNCORE_SOCKETS: a range and a list (the simulator simulates as many
    # as named), each socket counted once; not a list.
    for sockets in ("0-1", "0,1"):
        p, report, _ = job(args, d, "sockets", {"UNCORE_SOCKETS": sockets})
        nodes = report.get("node_list", [{}])
        led = [s["socket"] for s in nodes[0].get("sockets", [])]
        work = region(report, "work") or {}
        per = work.get("events", {}).get("ubox/UCLK", {}).get("per_socket", [])
        check(led == [0, 1] and [s["socket"] for s in per] == [0, 1] and
              all(s["value"] > 0 for s in per),
              f"UNCORE_SOCKETS={sockets}: sockets 0 and 1, each counted "
              f"once {led} {per}")
    p, report, lines = job(args, d, "sockets-bad", {"UNCORE_SOCKETS": "x"})
    refused_once("UNCORE_SOCKETS=x", p, report, lines, "UNCORE_SOCKETS")

    # UNCORE_SAMPLE not a whole number of 1 or more.
    p, report, lines = job(args, d, "sample-bad", {"UNCORE_SAMPLE": "0"})
    refused_once("UNCORE_SAMPLE=0", p, report, lines, "UNCORE_SAMPLE")

    # Flags the simulator takes and does nothing with (they matter to perf
    # and direct), in one job: accepted, the job measured, nothing said.
    flags = {"UNCORE_FREE_RUNNING": "0", "UNCORE_FORCE": "yes",
             "UNCORE_MULTIPLEX": "true"}
    p, report, lines = job(args, d, "flags", flags)
    measured(" ".join(f"{k}={v}" for k, v in flags.items()), p, report)
    check(not lines, f"UNCORE_FREE_RUNNING, UNCORE_FORCE, UNCORE_MULTIPLEX: "
          f"nothing said {lines}")


def region(report, path):
    for r in report.get("regions", []):
        if r["path"] == path:
            return r
    return None


def views_sum(r, event, report):
    """The ranks' own views of a region's count, summed (what counting
    each rank's intervals would give)."""
    index = [e["canonical"] for e in report.get("events", [])].index(event) \
        if event in [e["canonical"] for e in report.get("events", [])] else -1
    if index < 0:
        return "-"
    return sum(pr["totals"][index] for pr in r.get("per_rank", [])
               if len(pr.get("totals", [])) > index)


def check_merged(name, report, np, rate_per_socket, event, sockets, fx):
    check(report.get("ranks") == np, f"{name}: ranks == {np}")
    check(report.get("nodes") == 1, f"{name}: nodes == 1")
    check(not report.get("errors"), f"{name}: no errors {report.get('errors')}")
    work = region(report, "work")
    step = region(report, "step")
    check(work is not None and step is not None, f"{name}: both regions")
    if work is None or step is None:
        return
    check(work["calls"] == np and work["ranks"] == np,
          f"{name}: work calls {work['calls']} == {np}")
    check(step["calls"] == np * (np + 1) // 2,
          f"{name}: step calls {step['calls']} summed over ranks")
    union_ns = fx.get("union_ns", {})
    outer_ns = fx.get("outer_union_ns", {})
    check(len(union_ns) == 3 and len(outer_ns) == 3,
          f"{name}: the program timed the unions")
    for path, union in union_ns.items():
        outer = outer_ns.get(path, union)
        r = region(report, path)
        check(r is not None and r["calls"] == np,
              f"{name}: {path}: {np} calls")
        if r is None:
            continue
        ev = r["events"][event]
        low = rate_per_socket * sockets * union * 1e-9
        high = rate_per_socket * sockets * outer * 1e-9
        check(0.99 * low <= ev["total"] <= 1.01 * high,
              f"{name}: {path}: {event} total {ev['total']} vs rate x the "
              f"ranks' union {union / 1e6:.2f} ms (inside) to "
              f"{outer / 1e6:.2f} ms (around the boundaries): {low:.0f} to "
              f"{high:.0f}, within 1% (the ranks' own views summed: "
              f"{views_sum(r, event, report)})")
        check(len(ev["per_socket"]) == sockets,
              f"{name}: {path}: one count per socket "
              f"({len(ev['per_socket'])})")
        for s in ev["per_socket"]:
            check(s["node_union"] is True and s["from_rank"] == -1,
                  f"{name}: {path}: socket {s['socket']} counted as the "
                  f"node union")
            check(s["ranks"] == np,
                  f"{name}: {path}: spread over {s['ranks']} ranks")
            check(0.98 * union <= s["union_wall_ns"] <= 1.02 * outer,
                  f"{name}: {path}: union_wall_ns {s['union_wall_ns']} "
                  f"within 2% of {union} (inside) to {outer} (around)")
        # The region's wall_ns is the node union's time, as in one process
        # (the ranks' mean is rank_mean_wall_ns), so total / wall_ns is the
        # rate of the sockets.
        check(r.get("wall_node_union") is True and
              0.98 * union <= r.get("wall_ns", 0) <= 1.02 * outer,
              f"{name}: {path}: wall_ns {r.get('wall_ns')} is the node "
              f"union's, within 2% of {union} to {outer}")
        check_rate(f"{name}: {path}", r, event, rate_per_socket * sockets)


def check_rate(what, r, event, rate):
    """total / wall_ns of a merged region is `rate` within 2%."""
    wall = r.get("wall_ns", 0)
    got = r["events"][event]["total"] * 1e9 / wall if wall else 0
    check(abs(got - rate) <= 0.02 * rate,
          f"{what}: total / wall_ns {got / 1e9:.4f} G/s vs the rate "
          f"{rate / 1e9:.4f} G/s, within 2% ({got / rate - 1:+.2%}; ranks' "
          f"mean wall {r.get('rank_mean_wall_ns')} ns, node union "
          f"{wall} ns)")


def check_staggered_rates(args, tmp, sockets):
    """8 ranks (on this 2-CPU machine: oversubscribed) that enter and leave
    "staggered" at different times, overlapping partly (rank r at r x 30
    ms for 100 ms), and "gapped" (r x 150 ms): msr/tsc/'s total over the
    merged wall_ns is the TSC rate within 2%, on idle CPUs and on CPUs kept
    busy by a spinning process each.  The ranks' mean wall made it 3x too
    high (8 ranks: 310 ms of union, 100 ms each), and the node union's time
    read beside the snapshots rather than at them drifted under load."""
    for busy in (False, True):
        name = f"perf -np 8 staggered {'busy' if busy else 'idle'}"
        out = os.path.join(tmp, f"staggered-{'busy' if busy else 'idle'}.json")
        spinners = []
        if busy:
            for cpu in sorted(os.sched_getaffinity(0)):
                spinners.append(subprocess.Popen(
                    ["sh", "-c", "while :; do :; done"],
                    preexec_fn=lambda c=cpu: os.sched_setaffinity(0, {c})))
        try:
            p = mpirun(args, 8, args.program,
                       {"UNCORE_EVENTS": "msr/tsc/", "UNCORE_BACKEND": "perf",
                        "UNCORE_OUTPUT": out},
                       timeout=120, program_args=("--region-ms", "300"))
        finally:
            for sp in spinners:
                sp.kill()
                sp.wait()
        check(p.returncode == 0 and os.path.exists(out),
              f"{name}: mpirun succeeds")
        if p.returncode != 0 or not os.path.exists(out):
            continue
        report = load_json(out, name)
        fx = facts(p)
        for path in ("staggered", "gapped", "work"):
            r = region(report, path)
            check(r is not None and r["ranks"] == 8,
                  f"{name}: {path} entered by 8 ranks")
            if r is None:
                continue
            # The ranks' calls overlap partly (staggered) or not at all
            # (gapped): their union is well above each rank's own time.
            longer = path == "work" or \
                r["wall_ns"] > 1.5 * r["rank_mean_wall_ns"]
            check(r["wall_node_union"] is True and longer,
                  f"{name}: {path}: wall_ns {r['wall_ns']} is the node "
                  f"union, not the ranks' mean {r['rank_mean_wall_ns']}")
            check_rate(f"{name}: {path}", r, "msr/tsc/",
                       fx["tsc_hz"] * sockets)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mpirun", default="mpirun")
    ap.add_argument("--program", required=True)
    ap.add_argument("--plain-program", required=True)
    ap.add_argument("--explicit-program", required=True)
    ap.add_argument("--preload", required=True)
    ap.add_argument("--nompi-program",
                    help="a program that is not an MPI program (on the "
                    "shared SDK)")
    ap.add_argument("--only", choices=["forms"],
                    help="only the checks of each UNCORE_* form (while "
                    "working on them)")
    args = ap.parse_args()
    global LAUNCHER
    LAUNCHER = Launcher(args.mpirun)
    print(f"MPI: {LAUNCHER}")
    sockets = node_sockets()
    tmp = tempfile.mkdtemp(prefix="uncore-mpi-")
    check_output_list(args, tmp)
    check_sample(args, tmp)
    check_forms(args, tmp)
    if args.only == "forms":
        return harness.finish()

    # The simulator: U-Box clock at 2 GHz per socket.
    out = os.path.join(tmp, "sim.json")
    p = mpirun(args, 4, args.program, {"UNCORE_EVENTS": "ubox/UCLK",
                                       "UNCORE_BACKEND": "sim",
                                       "UNCORE_OUTPUT": out})
    check(p.returncode == 0, "sim -np 4: mpirun succeeds")
    if p.returncode == 0:
        with open(out) as f:
            report = json.load(f)
        check(report.get("simulated") is True, "sim -np 4: simulated")
        check_merged("sim -np 4", report, 4, 2e9, "ubox/UCLK", sockets,
                     facts(p))

    # perf msr/tsc/: only where the msr PMU exists and may be opened
    # system-wide.
    no_perf = harness.perf_system_wide_reason()
    if no_perf:
        skip("perf: " + no_perf)
    else:
        out = os.path.join(tmp, "perf.json")
        p = mpirun(args, 4, args.program, {"UNCORE_EVENTS": "msr/tsc/",
                                           "UNCORE_BACKEND": "perf",
                                           "UNCORE_OUTPUT": out})
        check(p.returncode == 0, "perf -np 4: mpirun succeeds")
        if p.returncode == 0:
            with open(out) as f:
                report = json.load(f)
            fx = facts(p)
            check(report.get("backend") == "perf", "perf -np 4: backend perf")
            check_merged("perf -np 4", report, 4, fx["tsc_hz"], "msr/tsc/",
                         sockets, fx)
            check(fx["perf_fds"] == 1 * sockets,
                  f"perf -np 4: {fx['perf_fds']} perf events open on the "
                  f"node == events x sockets ({sockets}), not x ranks")
        check_staggered_rates(args, tmp, sockets)

    # LD_PRELOAD: a program that does not link uncore::mpi.
    out = os.path.join(tmp, "preload.json")
    p = mpirun(args, 4, args.plain_program,
               {"UNCORE_EVENTS": "ubox/UCLK", "UNCORE_BACKEND": "sim",
                "UNCORE_OUTPUT": out},
               export={"LD_PRELOAD": args.preload})
    check(p.returncode == 0, "LD_PRELOAD -np 4: mpirun succeeds")
    if p.returncode == 0:
        with open(out) as f:
            check_merged("LD_PRELOAD -np 4", json.load(f), 4, 2e9,
                         "ubox/UCLK", sockets, facts(p))

    # One rank, CSV.
    out = os.path.join(tmp, "one-%r.csv")
    p = mpirun(args, 1, args.program, {"UNCORE_EVENTS": "ubox/UCLK",
                                       "UNCORE_BACKEND": "sim",
                                       "UNCORE_OUTPUT": out})
    check(p.returncode == 0, "sim -np 1: mpirun succeeds")
    csv_path = os.path.join(tmp, "one-0.csv")
    check(os.path.exists(csv_path), "sim -np 1: %r expands to rank 0")
    if os.path.exists(csv_path):
        with open(csv_path) as f:
            rows = f.read().splitlines()
        check(rows[0].startswith("region,path,parent,depth,calls,threads,"),
              "sim -np 1: CSV header (the session's tidy CSV)")
        check(any(r.startswith("work,work,,0,1,") and
                  ",event,ubox/UCLK,inclusive,total,,," in r
                  for r in rows), "sim -np 1: CSV total row of work")

    # A region named in UTF-8 keeps its bytes in the merged report: JSON as
    # UTF-8 (not \\u escapes of each byte), the CSV and the table too.
    name = "caf\u00e9 \u2615"  # "café ☕"
    raw = name.encode("utf-8")
    for ext in ("json", "csv", "txt"):
        out = os.path.join(tmp, "utf8." + ext)
        p = mpirun(args, 3, args.program,
                   {"UNCORE_EVENTS": "ubox/UCLK", "UNCORE_BACKEND": "sim",
                    "UNCORE_OUTPUT": out},
                   program_args=["--region-ms", "20", "--region", name])
        check(p.returncode == 0, f"UTF-8 region -np 3 {ext}: mpirun succeeds")
        if p.returncode != 0 or not os.path.exists(out):
            check(False, f"UTF-8 region -np 3 {ext}: report written")
            continue
        with open(out, "rb") as f:
            data = f.read()
        check(raw in data and b"\\u00c3" not in data and
              b"\\u00e9" not in data and b"\\u2615" not in data,
              f"UTF-8 region -np 3 {ext}: the name's bytes as written "
              f"({data.count(raw)} times)")
        text = data.decode("utf-8")
        if ext == "json":
            r = region(json.loads(text), name)
            check(r is not None and r["name"] == name and r["calls"] == 3
                  and r["ranks"] == 3,
                  f"UTF-8 region -np 3 json: region {name!r}, 3 calls")
        elif ext == "csv":
            check(any(l.startswith(f"{name},{name},,0,3,") and
                      ",event,ubox/UCLK,inclusive,total,,," in l
                      for l in text.splitlines()),
                  "UTF-8 region -np 3 csv: its total row")
        else:
            check(any(l.lstrip().startswith(name) for l in text.splitlines()),
                  "UTF-8 region -np 3 table: a row starts with the name")

    # A region named "a/b" and "b" inside "a": two paths ("a\\/b" and
    # "a/b"), both in the merged report (issue 36 R1: the merge kept one).
    out = os.path.join(tmp, "slash.json")
    csv_out = os.path.join(tmp, "slash.csv")
    p = mpirun(args, 2, args.program,
               {"UNCORE_EVENTS": "ubox/UCLK", "UNCORE_BACKEND": "sim",
                "UNCORE_OUTPUT": out + "," + csv_out},
               program_args=["--region-ms", "20", "--slash-pair", "1"])
    check(p.returncode == 0, "a/b beside a > b -np 2: mpirun succeeds")
    if p.returncode == 0 and os.path.exists(out):
        with open(out, encoding="utf-8") as f:
            report = json.load(f)
        top = region(report, "a\\/b")
        inner = region(report, "a/b")
        check(top is not None and top["name"] == "a/b" and
              top["depth"] == 0 and top["calls"] == 2,
              f"a/b beside a > b: the region 'a/b' at the top: {top}")
        check(inner is not None and inner["name"] == "b" and
              inner["depth"] == 1 and inner["calls"] == 2,
              f"a/b beside a > b: the region 'b' inside 'a': {inner}")
        paths = [r["path"] for r in report["regions"]]
        check(len(paths) == len(set(paths)),
              f"a/b beside a > b: every path once: {paths}")
        with open(csv_out, encoding="utf-8") as f:
            rows = list(csv.reader(f))
        check(any(r[:4] == ["a/b", "a\\/b", "", "0"] for r in rows) and
              any(r[:4] == ["b", "a/b", "a", "1"] for r in rows),
              "a/b beside a > b: both regions' rows in the merged CSV")
    else:
        check(False, "a/b beside a > b -np 2: report written")

    # Ranks bound to cores: the lowest bound rank of the socket leads.
    if (os.cpu_count() or 1) >= 2:
        out = os.path.join(tmp, "bound.json")
        p = mpirun(args, 2, args.program, {"UNCORE_EVENTS": "ubox/UCLK",
                                           "UNCORE_BACKEND": "sim",
                                           "UNCORE_OUTPUT": out},
                   bind_to_core=True)
        check(p.returncode == 0, "bound -np 2: mpirun succeeds")
        if p.returncode == 0:
            with open(out) as f:
                report = json.load(f)
            check_merged("bound -np 2", report, 2, 2e9, "ubox/UCLK", sockets,
                         facts(p))

    # uncore_mpi_init / uncore_mpi_finalize called by the program.
    out = os.path.join(tmp, "explicit.json")
    p = mpirun(args, 2, args.explicit_program,
               {"UNCORE_EVENTS": "ubox/UCLK", "UNCORE_BACKEND": "sim",
                "UNCORE_OUTPUT": out})
    check(p.returncode == 0, "explicit init -np 2: mpirun succeeds")
    if p.returncode == 0:
        with open(out) as f:
            check_merged("explicit init -np 2", json.load(f), 2, 2e9,
                         "ubox/UCLK", sockets, facts(p))

    # A report that cannot be written is said at the start; the job runs.
    out = os.path.join(tmp, "missing-dir", "x.json")
    p = mpirun(args, 2, args.program, {"UNCORE_EVENTS": "ubox/UCLK",
                                       "UNCORE_BACKEND": "sim",
                                       "UNCORE_OUTPUT": out})
    check(p.returncode == 0 and "create the directory first" in p.stderr
          and not os.path.exists(out),
          "bad UNCORE_OUTPUT: one error at start, the job runs unmeasured")

    # UNCORE_OUTPUT naming something other than a regular file (private
    # copies, never the real /dev/null): a device, a FIFO and a symbolic
    # link are written in place (the device stays a device, the link a
    # link), a directory is refused at start.
    env_sim = {"UNCORE_EVENTS": "ubox/UCLK", "UNCORE_BACKEND": "sim"}
    if os.geteuid() == 0:
        device = os.path.join(tmp, "null")
        os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        p = mpirun(args, 2, args.program, dict(env_sim, UNCORE_OUTPUT=device))
        check(p.returncode == 0 and
              stat.S_ISCHR(os.stat(device).st_mode),
              "UNCORE_OUTPUT a character device: written in place, still a "
              "device")
    fifo = os.path.join(tmp, "fifo.json")
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(
        target=lambda: received.append(open(fifo, encoding="utf-8").read()))
    reader.start()
    p = mpirun(args, 2, args.program, dict(env_sim, UNCORE_OUTPUT=fifo))
    reader.join(timeout=60)
    check(p.returncode == 0 and stat.S_ISFIFO(os.stat(fifo).st_mode) and
          received and '"kind": "mpi"' in received[0],
          "UNCORE_OUTPUT a FIFO: the merged report goes through it")
    target = os.path.join(tmp, "target.json")
    link = os.path.join(tmp, "link.json")
    os.symlink(target, link)
    p = mpirun(args, 2, args.program, dict(env_sim, UNCORE_OUTPUT=link))
    check(p.returncode == 0 and os.path.islink(link) and
          os.path.isfile(target),
          "UNCORE_OUTPUT a symbolic link: the file it names is written, the "
          "link stays")
    directory = os.path.join(tmp, "a-directory")
    os.mkdir(directory)
    p = mpirun(args, 2, args.program, dict(env_sim, UNCORE_OUTPUT=directory))
    check(p.returncode == 0 and "not a directory" in p.stderr and
          os.path.isdir(directory) and not os.listdir(directory),
          "UNCORE_OUTPUT a directory: refused at start, said once")

    # A rank without UNCORE_EVENTS (a forgotten -x on a multi-node run):
    # nobody measures, and rank 0 names that rank once.
    out = os.path.join(tmp, "partial.json")
    # One program, rank 3 unsetting the variable itself (the rank from
    # Open MPI or MPICH): Debian 13's Open MPI 5 mpiexec dies of SIGSEGV on
    # any MPMD line ("-np 1 /bin/true : -np 1 /bin/true").
    unset_on_rank_3 = ('[ "${OMPI_COMM_WORLD_RANK:-$PMI_RANK}" = 3 ] && '
                       'unset UNCORE_EVENTS; exec "$0" --region-ms 100')
    cmd = LAUNCHER.command(4, ["sh", "-c", unset_on_rank_3, args.program])
    env = harness.environment({**LAUNCHER.environment(),
                               "UNCORE_EVENTS": "ubox/UCLK",
                               "UNCORE_BACKEND": "sim", "UNCORE_OUTPUT": out})
    p = harness.run(cmd, env=env, timeout=60)
    said = p.stderr.count("not on rank 3 ")
    check(p.returncode == 0 and said == 1 and not os.path.exists(out),
          "a rank without UNCORE_EVENTS is named once on stderr "
          f"(said {said} times; rc {p.returncode}): {p.stderr.strip()}")

    # Ending without MPI_Finalize: the leader's segment is removed at exit,
    # and rank 0 says no merged report is written.
    env_sim = {"UNCORE_EVENTS": "ubox/UCLK", "UNCORE_BACKEND": "sim",
               "UNCORE_OUTPUT": os.path.join(tmp, "unfinished.json")}
    p = mpirun(args, 1, args.program, env_sim, quiet=True,
               program_args=["--region-ms", "50", "--end", "exit"])
    pid = facts(p).get("pid")
    left = glob.glob(f"/dev/shm/uncore-mpi.{pid:x}.*") if pid else ["?"]
    check(pid and not left,
          f"exit without MPI_Finalize: its segment is removed at exit {left}")
    check(p.stderr.count("ended without MPI_Finalize") == 1,
          "exit without MPI_Finalize: said once on stderr: "
          f"{p.stderr.strip()}")

    # A job killed (SIGKILL: nothing runs at exit) leaves its leader's
    # segment; the next job's node rank 0 removes it (its owner is dead).
    p = mpirun(args, 1, args.program, env_sim, quiet=True,
               program_args=["--region-ms", "50", "--end", "kill"])
    pid = facts(p).get("pid")
    left = glob.glob(f"/dev/shm/uncore-mpi.{pid:x}.*") if pid else []
    check(len(left) == 1, f"a killed job leaves its segment {left}")
    p = mpirun(args, 1, args.program, env_sim,
               program_args=["--region-ms", "50"])
    check(p.returncode == 0, "the next job runs")
    still = [f for f in left if os.path.exists(f)]
    check(left and not still,
          f"the next job removes the killed job's segment {still}")

    # The library preloaded into a program that never calls MPI_Init: one
    # line at exit says nothing was measured and why (it was silent).
    if args.nompi_program:
        env = harness.environment({"LD_PRELOAD": args.preload,
                                   "UNCORE_EVENTS": "ubox/UCLK",
                                   "UNCORE_BACKEND": "sim"})
        p = harness.run([args.nompi_program, "2", "1"], env=env, timeout=60)
        lines = [l for l in p.stderr.splitlines() if l.startswith("uncore:")]
        check(p.returncode == 0 and len(lines) == 1 and
              "nothing was measured" in lines[0] and "MPI_Init" in lines[0],
              f"preloaded without MPI_Init: one line at exit {lines}")
        env.pop("UNCORE_EVENTS")
        p = harness.run([args.nompi_program, "2", "1"], env=env, timeout=60)
        check(p.returncode == 0 and "uncore:" not in p.stderr,
              f"preloaded, nothing asked: silent {p.stderr.strip()}")

    # No segment is left behind.
    left = glob.glob("/dev/shm/uncore-mpi.*")
    check(not left, f"no shared-memory segment left behind {left}")
    return harness.finish()


if __name__ == "__main__":
    sys.exit(main())
