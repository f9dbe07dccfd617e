#!/usr/bin/env python3
"""The CSV, Hatchet and HTML reports, read by what reads them (issue 22).

    report_views_test.py csv_pandas    --writer build/tests/write_sample_reports
    report_views_test.py hatchet_shape --writer ...
    report_views_test.py html_chromium --writer ...

write_sample_reports (tests/report/write_sample_reports.cc) writes a
hand-made run's reports into a temporary folder; sample.json, the JSON
report of the same run, is the reference the others are checked against.

  csv_pandas     pandas (Debian's python3-pandas: run this with /usr/bin/python3)
                 reads sample.csv: one row per value, the columns and their
                 dtypes, socket and instance rows summing to the total rows,
                 totals equal to the JSON's.  Without pandas: a failed check.
  hatchet_shape  sample.hatchet.json follows Hatchet's literal format: a list
                 of nodes with frame.name, frame.type, numeric metrics (the
                 same keys on every node), children lists, the region tree,
                 "(inc)" metrics at least the exclusive ones.  When hatchet is
                 importable, GraphFrame.from_literal loads it too.
  html_chromium  sample.html (and the page without a timeline, one with
                 20,000 calls, one whose regions are named constructor,
                 __proto__, toString and valueOf, and one with a region name
                 of 300 characters) refer to nothing outside themselves, and
                 headless Chromium renders them with no script error, also
                 when each region is hovered over and its legend entry
                 clicked, an <svg> element per region (data-region), a
                 rectangle per call, and no region name cell wider than
                 40em.  Exit 77 (skip) when no Chromium can run here.
"""
import argparse
import html.parser
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "testing"))
import harness  # noqa: E402
from harness import SKIP, check  # noqa: E402

# The sample's regions as the CSV and the HTML give them back (an invalid
# byte becomes U+FFFD) and as JSON does (the byte read as Latin-1).
SOLVE = 'solve, "quoted"'
CAFE = "caf\u00e9 \u2615 <&>"
PATHS = ["main", "main/" + SOLVE, "main/" + SOLVE + "/" + CAFE, "io\ufffd"]
JSON_PATHS = PATHS[:3] + ["io\u00ff"]
# sample-prototype-names.html: the sample's regions named as members of
# Object.prototype (issue 36, R9).
PROTOTYPE_PATHS = ["constructor", "constructor/__proto__",
                   "constructor/__proto__/toString", "valueOf"]
# sample-long-name.html: io named with 300 characters (issue 36).
LONG_NAME = "long_" + "x" * 290 + "_name"
LONG_NAME_PATHS = PATHS[:3] + [LONG_NAME]
# The widest a region's name cell may be, in CSS pixels: 40em of 14px.
MAX_NAME_CELL_PX = 40 * 14 + 20
CALLS_IN_TIMELINE = 14  # write_sample_reports.cc, SampleTimeline()


def write_samples(writer, folder):
    """The sample's JSON report, or None (a failed check) when the writer
    fails."""
    p = harness.run([writer, folder])
    if not check(p.returncode == 0, "write_sample_reports writes the samples"):
        return None
    with open(os.path.join(folder, "sample.json"), encoding="utf-8") as f:
        return json.load(f)


# ---- CSV with pandas

COLUMNS = ["region", "path", "parent", "depth", "calls", "threads", "wall_ns",
           "counted_ns", "overlap_ns", "thread_ns", "min_ns", "max_ns",
           "overhead_ns", "read_latency_dominated", "sampled_calls",
           "open_calls", "kind", "name", "scope", "level", "socket",
           "instance", "value", "unit", "count", "scale", "estimated"]
KEY = ["path", "kind", "name", "scope", "level", "socket", "instance"]


def check_csv(folder, reference):
    try:
        import pandas as pd
    except ImportError:
        check(False, "pandas is there: apt-get install python3-pandas "
              "(scripts/install-deps.sh), and run this with /usr/bin/python3")
        return 0
    path = os.path.join(folder, "sample.csv")
    # As docs/report-format.md advises: empty fields are missing values, a
    # region named "NA" stays a name.
    df = pd.read_csv(path, keep_default_na=False, na_values=[""],
                     dtype={"count": "UInt64", "socket": "Int64"})
    check(list(df.columns) == COLUMNS, "columns: %s" % list(df.columns))
    for column in ["depth", "calls", "threads", "wall_ns", "counted_ns",
                   "overlap_ns", "thread_ns", "min_ns", "max_ns",
                   "overhead_ns", "read_latency_dominated", "sampled_calls",
                   "open_calls", "estimated"]:
        check(str(df[column].dtype) == "int64",
              "%s is int64, not %s" % (column, df[column].dtype))
    check(str(df["value"].dtype) == "float64",
          "value is float64, not %s" % df["value"].dtype)
    check(str(df["scale"].dtype) == "float64", "scale is float64")
    check(str(df["count"].dtype) == "UInt64", "count reads as UInt64")
    for column in ["region", "path", "kind", "name", "scope", "level"]:
        check(df[column].dtype == object, "%s is text" % column)
    check(set(df["kind"]) == {"event", "metric"}, "kinds: %s" % set(df.kind))
    check(set(df["level"]) == {"total", "socket", "instance"},
          "levels: %s" % set(df.level))

    # One row per value: no two rows share a key.
    dup = df[df.duplicated(KEY, keep=False)]
    check(dup.empty, "rows sharing a key:\n%s" % dup[KEY])
    check(list(dict.fromkeys(df["path"])) == PATHS,
          "paths in results order: %s" % list(dict.fromkeys(df.path)))
    parents = df.drop_duplicates("path").set_index("path")["parent"]
    check(parents.isna()["main"] and parents.isna()["io\ufffd"],
          "outermost regions have no parent")
    check(parents["main/" + SOLVE] == "main", "solve's parent")
    check(parents["main/" + SOLVE + "/" + CAFE] == "main/" + SOLVE,
          "cafe's parent")

    # Every region: events x scopes x (1 total + 2 sockets + 3 instances),
    # plus one metric row.
    events = reference["events"]
    per_region = len(events) * 2 * (1 + 2 + 3) + len(reference["metrics"])
    check(len(df) == len(PATHS) * per_region,
          "rows: %d, expected %d" % (len(df), len(PATHS) * per_region))

    ev = df[df.kind == "event"]
    totals = ev[ev.level == "total"].set_index(["path", "name", "scope"])
    for level in ["socket", "instance"]:
        sums = ev[ev.level == level].groupby(["path", "name", "scope"]).sum(
            numeric_only=True).reindex(totals.index)
        check((sums["count"] == totals["count"]).all(),
              "%s counts sum to the total" % level)
        diff = (sums["value"] - totals["value"]).abs()
        check((diff <= 1e-9 * totals["value"].abs()).all(),
              "%s values sum to the total" % level)
    check(totals["socket"].isna().all() and totals["instance"].isna().all(),
          "total rows have no socket or instance")
    check(set(ev[ev.level == "socket"]["socket"]) == {0, 1}, "socket ids")
    # value is count * scale, in unit.
    scaled = (ev["count"].astype("float64") * ev["scale"] - ev["value"]).abs()
    check((scaled <= 1e-9 * ev["value"].abs()).all(), "value = count * scale")

    # The totals are the JSON report's.
    for region, json_path in zip(reference["regions"], PATHS):
        for event in events:
            counts = region["events"][event["canonical"]]
            key = (json_path, event["canonical"])
            check(int(totals.loc[key + ("inclusive",), "count"]) ==
                  counts["total"], "inclusive total of %s" % (key,))
            check(int(totals.loc[key + ("exclusive",), "count"]) ==
                  counts["exclusive_total"], "exclusive total of %s" % (key,))
        metric = df[(df.kind == "metric") & (df.path == json_path)]
        check(len(metric) == 1 and math.isclose(
            metric["value"].iloc[0], region["metrics"]["MEM_BW_READS"]),
            "metric of %s" % json_path)
        check(metric["unit"].iloc[0] == "bytes/s", "metric unit")

    # From the pandas one-liner docs/views.md gives: a region x event table.
    table = df[(df.kind == "event") & (df.level == "total") &
               (df.scope == "inclusive")].pivot(index="path", columns="name",
                                                 values="value")
    check(table.shape == (len(PATHS), len(events)), "pivot shape")
    check(table.loc["main", "imc/CAS_COUNT.RD"] == 10_000_000, "pivot value")
    return 0


# ---- Hatchet literal format

def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def check_hatchet(folder, reference):
    with open(os.path.join(folder, "sample.hatchet.json"),
              encoding="utf-8") as f:
        forest = json.load(f)
    check(isinstance(forest, list) and len(forest) == 2, "two roots")
    keys = None
    nodes = {}
    # Amounts that add up down the tree (not rates such as bandwidths).
    additive = {"time (inc)"} | {e["canonical"] + " (inc)"
                                 for e in reference["events"]}

    def walk(node, path, parent_metrics):
        nonlocal keys
        check(set(node) == {"frame", "metrics", "children"},
              "node keys: %s" % set(node))
        frame, metrics = node["frame"], node["metrics"]
        check(isinstance(frame.get("name"), str) and frame.get("type") ==
              "region", "frame %s" % frame)
        check(isinstance(node["children"], list), "children is a list")
        check(isinstance(metrics, dict), "metrics is an object")
        if keys is None:
            keys = list(metrics)
        check(list(metrics) == keys, "the same metrics on every node")
        for name, value in metrics.items():
            check(is_number(value) or value is None,
                  "%s of %s is a number" % (name, frame["name"]))
        for name, value in metrics.items():
            if not name.endswith(" (inc)"):
                continue
            exclusive = metrics.get(name[:-len(" (inc)")])
            if is_number(value) and is_number(exclusive):
                check(value >= exclusive, "%s >= exclusive" % name)
            if name in additive and parent_metrics is not None and \
                    is_number(value) and is_number(parent_metrics.get(name)):
                check(parent_metrics[name] >= value,
                      "%s of the parent >= the child's" % name)
        path = path + "/" + frame["name"] if path else frame["name"]
        nodes[path] = metrics
        for child in node["children"]:
            walk(child, path, metrics)

    for root in forest:
        walk(root, "", None)
    check(list(nodes) == JSON_PATHS, "the region tree: %s" % list(nodes))
    check(keys[:4] == ["time (inc)", "time", "calls", "threads"],
          "first metrics: %s" % keys[:4])
    for event in reference["events"]:
        check(event["canonical"] + " (inc)" in keys and
              event["canonical"] in keys, "event %s" % event["canonical"])
    check("MEM_BW_READS (inc)" in keys, "metric, inclusive")
    for region, path in zip(reference["regions"], JSON_PATHS):
        m = nodes[path]
        check(math.isclose(m["time (inc)"], region["wall_ns"] / 1e9),
              "time (inc) of %s" % path)
        check(m["calls"] == region["calls"], "calls of %s" % path)
        check(m["threads"] == region["threads"], "threads of %s" % path)
        cas = region["events"]["imc/CAS_COUNT.RD"]
        check(m["imc/CAS_COUNT.RD (inc)"] == cas["total"], "CAS inclusive")
        check(m["imc/CAS_COUNT.RD"] == cas["exclusive_total"], "CAS exclusive")
    # main ran on one thread: its own time is its wall time less solve's.
    check(math.isclose(nodes["main"]["time"], 0.1 - 0.06), "main's own time")
    check(nodes["main/" + SOLVE]["time"] is None,
          "two threads: no exclusive time")
    try:
        import hatchet  # not packaged by Debian: checked when present
    except ImportError:
        print("hatchet is not installed: checked the literal format's rules "
              "only")
        return 0
    gf = hatchet.GraphFrame.from_literal(forest)
    check(len(gf.graph) == len(JSON_PATHS), "hatchet: one node per region")
    check("time (inc)" in gf.inc_metrics and "time" in gf.exc_metrics,
          "hatchet: time columns")
    print(gf.tree(metric_column="time (inc)"))
    return 0


# ---- HTML in headless Chromium

class DomScan(html.parser.HTMLParser):
    """Collects data-region attributes of elements inside <svg>, the
    rectangles of calls, the rate charts and the html element's attributes."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.svg_depth = 0
        self.svg_regions = set()
        self.calls = 0
        self.rate_charts = 0
        self.root = {}
        self.external = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "html":
            self.root = a
        for name in ("src", "href", "xlink:href", "action", "poster"):
            if name in a:
                self.external.append((tag, name, a[name]))
        if tag == "svg":
            self.svg_depth += 1
            if "rates" in (a.get("class") or "").split():
                self.rate_charts += 1
        if self.svg_depth and "data-region" in a:
            self.svg_regions.add(a["data-region"])
        if tag == "rect" and "call" in (a.get("class") or "").split():
            self.calls += 1

    def handle_endtag(self, tag):
        if tag == "svg":
            self.svg_depth -= 1


def scan(text):
    parser = DomScan()
    parser.feed(text)
    parser.close()
    return parser


def check_static_html(name, text, paths):
    check(text.startswith("<!DOCTYPE html>"), name + ": HTML5 doctype")
    for pattern in ("http://", "https://", "url(", "@import"):
        check(pattern not in text, "%s: no %r" % (name, pattern))
    check(re.search(r"\b(src|href)\s*=", text) is None,
          name + ": no src or href at all")
    check("Content-Security-Policy" in text and "default-src 'none'" in text,
          name + ": a policy that forbids every resource")
    page = scan(text)
    check(not page.external, "%s: external references %s" % (name,
                                                             page.external))
    check(page.svg_regions == set(paths), "%s: every region in an SVG: %s" %
          (name, page.svg_regions))
    check("SIMULATED" in text, name + ": says SIMULATED")


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def run_chromium(chromium, page, profile):
    return harness.run(
        [chromium, "--headless=new", "--no-sandbox", "--disable-gpu",
         "--no-first-run", "--disable-extensions", "--enable-logging=stderr",
         "--v=0", "--user-data-dir=" + profile, "--dump-dom",
         "file://" + page],
        timeout=120, show_failure=False, errors="replace")


# Injected into a copy of each page, first in <head>: a script error is
# written into the DOM, where --dump-dom shows it.
CATCH = ("<script>window.addEventListener('error',function(e){"
         "document.documentElement.setAttribute('data-error',"
         "String(e.message));});</script>")
# Injected last in <body>, after the page's script: hovers over one element
# of each region and clicks each legend entry twice, so that the handlers
# run with every region's name; then marks the page as exercised.
EXERCISE = ("<script>(function(){var seen=new Set();"
            "document.querySelectorAll('[data-region]').forEach(function(el){"
            "var k=el.getAttribute('data-region');if(seen.has(k))return;"
            "seen.add(k);['mouseover','mouseout'].forEach(function(t){"
            "el.dispatchEvent(new MouseEvent(t,{bubbles:true}));});});"
            "document.querySelectorAll('ul.legend li[data-region]')"
            ".forEach(function(li){li.click();li.click();});"
            "document.documentElement.setAttribute('data-exercised',"
            "String(seen.size));var w=0;"
            "document.querySelectorAll('td.name').forEach(function(td){"
            "w=Math.max(w,td.getBoundingClientRect().width);});"
            "document.documentElement.setAttribute('data-name-width',"
            "String(Math.round(w)));})();</script>")


def check_html(folder, reference):
    del reference
    # Each page and the calls it draws.
    pages = {"sample.html": CALLS_IN_TIMELINE, "sample-no-timeline.html": 0,
             "sample-20000-calls.html": 20000,
             "sample-prototype-names.html": CALLS_IN_TIMELINE,
             "sample-long-name.html": CALLS_IN_TIMELINE}
    paths = {name: PATHS for name in pages}
    paths["sample-prototype-names.html"] = PROTOTYPE_PATHS
    paths["sample-long-name.html"] = LONG_NAME_PATHS
    texts = {}
    for name in pages:
        with open(os.path.join(folder, name), encoding="utf-8") as f:
            texts[name] = f.read()
        check_static_html(name, texts[name], paths[name])
    check(len(texts["sample-20000-calls.html"]) < 20000 * 400,
          "20,000 calls: a page of a few MB")
    check('id="no-timeline"' in texts["sample-no-timeline.html"],
          "without a timeline the page says so")
    chromium = find_chromium()
    if chromium is None:
        print("SKIP: no chromium (apt-get install chromium: "
              "scripts/install-deps.sh)")
        return SKIP
    profile = os.path.join(folder, "profile")
    # Can Chromium run here at all?  A trivial page must come back.
    probe = os.path.join(folder, "probe.html")
    with open(probe, "w", encoding="utf-8") as f:
        f.write("<!DOCTYPE html><title>p</title><p id=probe>ok</p>")
    try:
        p = run_chromium(chromium, probe, profile)
    except (OSError, subprocess.TimeoutExpired) as e:
        print("SKIP: chromium does not run here: %s" % e)
        return SKIP
    if p.returncode != 0 or 'id="probe"' not in p.stdout:
        print("SKIP: chromium does not run here (exit %d):\n%s" %
              (p.returncode, p.stderr[-2000:]))
        return SKIP
    for name, calls in pages.items():
        text = texts[name].replace('<meta charset="utf-8">',
                                   '<meta charset="utf-8">' + CATCH, 1)
        check(text.count("</body>") == 1, name + ": one </body>")
        text = text.replace("</body>", EXERCISE + "</body>", 1)
        copy = os.path.join(folder, "checked-" + name)
        with open(copy, "w", encoding="utf-8") as f:
            f.write(text)
        start = time.monotonic()
        p = run_chromium(chromium, copy, profile)
        seconds = time.monotonic() - start
        print("%s: %.0f kB, rendered and dumped in %.1f s" %
              (name, len(text.encode()) / 1e3, seconds))
        check(p.returncode == 0, "%s: chromium exits 0 (%d)" %
              (name, p.returncode))
        # The probe page takes about a second; the largest page a few more
        # (generous: the machine may be busy).
        check(seconds < 60, "%s: rendered in %.1f s" % (name, seconds))
        errors = [line for line in p.stderr.splitlines()
                  if "Uncaught" in line or ":CONSOLE" in line]
        check(not errors, "%s: console errors: %s" % (name, errors))
        dom = scan(p.stdout)
        check("data-error" not in dom.root,
              "%s: script error %r" % (name, dom.root.get("data-error")))
        check(dom.root.get("data-script") == "ready",
              "%s: the page's script ran to its end" % name)
        check(dom.root.get("data-exercised") == str(len(paths[name])),
              "%s: every region hovered over, its legend entry clicked "
              "(%r)" % (name, dom.root.get("data-exercised")))
        # A long name wraps in its cell: the column never takes the page.
        width = int(dom.root.get("data-name-width") or "-1")
        check(0 < width <= MAX_NAME_CELL_PX,
              "%s: the widest region name cell is %d px" % (name, width))
        check(dom.svg_regions == set(paths[name]),
              "%s: rendered, an SVG element per region: %s" %
              (name, dom.svg_regions))
        check(dom.calls == calls,
              "%s: %d call rectangles, not %d" % (name, dom.calls, calls))
        check(dom.rate_charts == (2 if calls else 0),
              "%s: %d rate charts (one per socket)" % (name, dom.rate_charts))
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("view", choices=["csv_pandas", "hatchet_shape",
                                         "html_chromium"])
    parser.add_argument("--writer", required=True,
                        help="the write_sample_reports program")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="uncore-views-") as folder:
        reference = write_samples(args.writer, folder)
        if reference is None:
            return harness.finish()
        check([r["path"] for r in reference["regions"]] == JSON_PATHS,
              "the sample's regions")
        status = {"csv_pandas": check_csv, "hatchet_shape": check_hatchet,
                  "html_chromium": check_html}[args.view](folder, reference)
    # A failed check fails the view; else a view that could not run (no
    # Chromium) is skipped, although its static checks passed.
    return harness.finish() or status


if __name__ == "__main__":
    sys.exit(main())
