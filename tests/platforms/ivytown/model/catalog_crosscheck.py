#!/usr/bin/env python3
"""Cross-checks the compiled event catalog against both event sources.

Runs `<uncore> list --json` and compares what the binary carries with
  * the manual's list (spec/manual-events.json) and
  * Intel's list (spec/intel-perfmon/ivytown_uncore.json),
each independently, with its own reading of the sources (this script shares
no code with tools/gen_event_catalog.py).  Every difference becomes a
"finding"; a finding must be explained by sdk/platforms/ivytown/model/catalog_allowlist.json
(see its "about" key for the format), otherwise the check fails.  Allow-list
entries and rules that explain nothing are stale and fail the check too.

Expected `list --json` output: a JSON array, one object per event and unit
mask (or per event without unit masks) with keys box, event, umask (or null),
code, umask_value (or null), extended, counters, max_increment, filters
(the event's and the unit mask's fields), aliases (the unit mask's on a
unit-mask row, the event's on an event row), event_aliases (the event's;
optional, but without it the event's aliases must appear in "aliases"),
sources (of the unit mask when there is one).  Rows for the
box descriptors' fixed counters (ubox/UCLK, imc/DCLK), if the CLI lists
them, are not catalog events and are skipped.

Exit status: 0 clean, 1 findings or problems, 2 usage/run errors, 77 when
the spec folder is absent.
"""

import argparse
import collections
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))
DEFAULT_SPEC_DIR = os.path.join(REPO_ROOT, "..", "shared", "spec")
DEFAULT_ALLOWLIST = os.path.join(REPO_ROOT, "sdk", "platforms", "ivytown",
                                 "model", "catalog_allowlist.json")

BOX_ORDER = ["ubox", "cbo", "ha", "imc", "irp", "pcu", "qpi", "r2pcie",
             "r3qpi"]
MANUAL_BOX = {name.upper(): name for name in BOX_ORDER}
PERFMON_UNIT = {
    "UBOX": ("ubox", "UNC_U_"), "CBO": ("cbo", "UNC_C_"),
    "HA": ("ha", "UNC_H_"), "iMC": ("imc", "UNC_M_"),
    "IRP": ("irp", "UNC_I_"), "PCU": ("pcu", "UNC_P_"),
    "QPI LL": ("qpi", "UNC_Q_"), "R2PCIe": ("r2pcie", "UNC_R2_"),
    "R3QPI": ("r3qpi", "UNC_R3_"),
}
FIXED_COUNTER_ROWS = {("ubox", "uclk"), ("imc", "dclk")}
ROW_KEYS = {
    "box": str, "event": str, "umask": (str, type(None)), "code": int,
    "umask_value": (int, type(None)), "extended": bool, "counters": list,
    "max_increment": int, "filters": list, "aliases": list, "sources": list,
}
ENTRY_KEYS = {"kind", "box", "event", "events", "umask", "umasks", "source",
              "reason"}
DEP = re.compile(r"^\s*([A-Za-z_0-9]+)\[(\d+):(\d+)\]\s*$")


def kernel_fields(dep):
    """Kernel sysfs field names for one source's filter dependency."""
    if not dep or dep == "null":
        return set()
    out = set()
    for part in dep.split(","):
        m = DEP.match(part)
        if not m:
            raise ValueError("cannot read filter dependency %r" % dep)
        reg, hi, lo = m.group(1), int(m.group(2)), int(m.group(3))
        table = {
            ("CBoFilter0", 17): "filter_state",
            ("CBoFilter0", 0): "filter_tid",
            ("CBoFilter1", 20): "filter_opc",
            ("CBoFilter1", 0): "filter_nid",
        }
        if (reg, lo) in table:
            out.add(table[(reg, lo)])
        elif reg == "HA_AddrMatch0":
            out.add("filter_addr_lo")
        elif reg == "HA_AddrMatch1":
            out.add("filter_addr_hi")
        elif reg == "HA_OpcodeMatch":
            out.add("filter_opc")
        elif reg == "PCUFilter" and hi == lo + 7:
            out.add("filter_band%d" % (lo // 8))
        elif reg.startswith("QPIMask") or reg.startswith("QPIMatch"):
            out |= {"match0", "match1", "mask0", "mask1"}
        elif reg == "IRPFilter":
            out.add("irp_filter")
        elif reg == "UBoxFilter":
            out.add("ubox_filter")
        else:
            raise ValueError("unknown filter register in %r" % dep)
    return out


def counters_of_range(text):
    lo, _, hi = text.partition("-")
    return list(range(int(lo), int(hi or lo) + 1))


# ---- the sources, read independently ----

class SrcEvent:
    """One event of one source: names seen, counters, filters, umasks."""

    def __init__(self):
        self.names = []          # event names as the source spells them
        self.counters = None     # sorted list
        self.max_increment = None
        self.fields = set()      # event-level filter fields
        self.bare = []           # full names of entries without a unit mask
        self.umasks = collections.OrderedDict()  # value -> [(name, fields)]
        self.entries = []        # perfmon: one dict per list entry


def read_manual(spec_dir):
    with open(os.path.join(spec_dir, "manual-events.json"),
              encoding="utf-8") as f:
        data = json.load(f)
    events = {}
    for box_key, entries in data["boxes"].items():
        box = MANUAL_BOX[box_key]
        for e in entries:
            key = (box, int(e["ev_sel"], 16), bool(e["ext"]))
            ev = events.setdefault(key, SrcEvent())
            ev.names.append(e["name"])
            ev.counters = counters_of_range(e["ctrs"])
            ev.max_increment = int(e["max_inc"])
            ev.fields = kernel_fields(e["filter_dep"])
            if not e["umasks"]:
                ev.bare.append(e["name"])
            for u in e["umasks"]:
                ev.umasks.setdefault(int(u["value"], 16), []).append(
                    (u["name"], ev.fields | kernel_fields(u["filter_dep"])))
    return events


def read_perfmon(spec_dir):
    path = os.path.join(spec_dir, "intel-perfmon", "ivytown_uncore.json")
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    events = {}
    for p in data["Events"]:
        box, prefix = PERFMON_UNIT[p["Unit"]]
        full = p["EventName"]
        assert full.startswith(prefix), full
        event_name, dot, umask_name = full[len(prefix):].partition(".")
        key = (box, int(p["EventCode"], 16), p["ExtSel"] == "1")
        ev = events.setdefault(key, SrcEvent())
        if event_name not in ev.names:
            ev.names.append(event_name)
        counters = sorted(int(c) for c in p["Counter"].split(","))
        ev.counters = ev.counters or counters
        ev.entries.append({
            "full": full, "event": event_name,
            "umask": umask_name if dot else None,
            "value": int(p["UMask"], 16), "counters": counters,
            "fields": kernel_fields(p["Filter"]),
        })
        if not dot:
            ev.bare.append(full)
        else:
            ev.umasks.setdefault(int(p["UMask"], 16), []).append(
                (umask_name, kernel_fields(p["Filter"])))
    return events


# ---- the catalog, as the binary prints it ----

class CatEvent:

    def __init__(self, row):
        self.box = row["box"]
        self.name = row["event"]
        self.code = row["code"]
        self.extended = row["extended"]
        self.counters = sorted(row["counters"])
        self.max_increment = row["max_increment"]
        self.rows = collections.OrderedDict()  # umask value or None -> row
        self.aliases = []  # the event's aliases
        self.umask_aliases = {}  # umask value -> that unit mask's aliases

    @property
    def key(self):
        return (self.box, self.code, self.extended)


def read_catalog(rows, problems):
    """Validates the rows and groups them into events by key."""
    events = collections.OrderedDict()
    names = collections.defaultdict(dict)
    if not isinstance(rows, list) or not rows:
        problems.append("`list --json` did not print a non-empty JSON array")
        return events
    for i, row in enumerate(rows):
        where = "row %d (%s/%s.%s)" % (i, row.get("box"), row.get("event"),
                                       row.get("umask"))
        bad = [k for k, t in ROW_KEYS.items()
               if k not in row or not isinstance(row[k], t) or
               (t is int and isinstance(row[k], bool))]
        if bad:
            problems.append("%s: missing or mistyped keys %s" % (where, bad))
            continue
        if (row["box"], row["event"].lower()) in FIXED_COUNTER_ROWS:
            continue
        if row["box"] not in BOX_ORDER:
            problems.append("%s: unknown box" % where)
            continue
        if (row["umask"] is None) != (row["umask_value"] is None):
            problems.append("%s: umask and umask_value disagree" % where)
            continue
        key = (row["box"], row["code"], row["extended"])
        ev = events.get(key)
        if ev is None:
            ev = events[key] = CatEvent(row)
            other = names[row["box"]].get(row["event"].lower())
            if other is not None:
                problems.append("%s: event name also used by key %s" %
                                (where, other))
            names[row["box"]][row["event"].lower()] = key
        for attr, k in (("name", "event"), ("counters", "counters"),
                        ("max_increment", "max_increment")):
            v = sorted(row[k]) if k == "counters" else row[k]
            if getattr(ev, attr) != v:
                problems.append("%s: %s differs between rows of one event" %
                                (where, k))
        if row["umask_value"] in ev.rows:
            problems.append("%s: repeated key and unit-mask value" % where)
        if row["umask"] is not None and any(
                r["umask"] is not None and
                r["umask"].lower() == row["umask"].lower()
                for r in ev.rows.values()):
            problems.append("%s: unit-mask name repeated in the event" % where)
        if None in ev.rows or (row["umask"] is None and ev.rows):
            problems.append("%s: event listed both with and without unit "
                            "masks" % where)
        ev.rows[row["umask_value"]] = row
        # "aliases" holds the row's own alternatives: the unit mask's on a
        # unit-mask row, the event's on an event row.  The event's aliases
        # are also in "event_aliases" when the CLI prints that key; without
        # it, a unit-mask row's "aliases" may hold both.
        event_aliases = row.get("event_aliases", [])
        if not isinstance(event_aliases, list):
            problems.append("%s: event_aliases is not a list" % where)
            event_aliases = []
        if row["umask"] is None:
            event_aliases = event_aliases + row["aliases"]
        else:
            ev.umask_aliases[row["umask_value"]] = list(row["aliases"])
        for a in event_aliases:
            if a.lower() not in [x.lower() for x in ev.aliases]:
                ev.aliases.append(a)
    return events


# ---- comparison ----

class Finding:

    def __init__(self, kind, source, box, event, umask=None, **detail):
        self.kind = kind
        self.source = source
        self.box = box
        self.event = event
        self.umask = umask
        self.detail = detail
        self.explained_by = None

    def __str__(self):
        what = "%s/%s" % (self.box, self.event)
        if self.umask is not None:
            what += "." + self.umask
        detail = ", ".join("%s=%s" % (k, json.dumps(v))
                           for k, v in sorted(self.detail.items()))
        return "%s (vs %s): %s%s" % (self.kind, self.source, what,
                                     " [%s]" % detail if detail else "")


def row_filters(row):
    return set(row["filters"])


def compare_manual(cat, man, findings, problems):
    add = findings.append
    for key, src in man.items():
        box = key[0]
        name = src.names[0]
        ev = cat.get(key)
        if ev is None:
            add(Finding("manual_event_excluded", "manual", box, name,
                        code=key[1], extended=key[2]))
            continue
        if ev.name != name:
            add(Finding("event_name_differs", "manual", box, ev.name,
                        manual=name))
        if ev.counters != src.counters:
            add(Finding("counters_differ", "manual", box, ev.name,
                        catalog=ev.counters, manual=src.counters))
        if ev.max_increment != src.max_increment:
            add(Finding("max_increment_differs", "manual", box, ev.name,
                        catalog=ev.max_increment, manual=src.max_increment))
        if src.bare and None not in ev.rows:
            add(Finding("bare_event_not_listed", "manual", box, ev.name))
        if None in ev.rows:
            check_sources(ev.rows[None], "manual", True, problems)
            if row_filters(ev.rows[None]) != src.fields:
                add(Finding("filters_differ", "manual", box, ev.name,
                            catalog=sorted(row_filters(ev.rows[None])),
                            manual=sorted(src.fields)))
        for value, row in ev.rows.items():
            if value is None:
                continue
            named = src.umasks.get(value)
            check_sources(row, "manual", named is not None, problems)
            if named is None:
                add(Finding("umask_only_in_perfmon", "manual", box, ev.name,
                            row["umask"]))
                continue
            if row["umask"] != named[0][0]:
                add(Finding("umask_name_differs", "manual", box, ev.name,
                            row["umask"], manual=named[0][0]))
            if row_filters(row) != named[0][1]:
                add(Finding("filters_differ", "manual", box, ev.name,
                            row["umask"], catalog=sorted(row_filters(row)),
                            manual=sorted(named[0][1])))
        for value, named in src.umasks.items():
            if value not in ev.rows:
                add(Finding("manual_umask_excluded", "manual", box, ev.name,
                            named[0][0], umask_value=value))
    for key, ev in cat.items():
        if key not in man:
            add(Finding("event_only_in_perfmon", "manual", ev.box, ev.name,
                        code=ev.code, extended=ev.extended))
            for row in ev.rows.values():
                check_sources(row, "manual", False, problems)


def compare_perfmon(cat, perf, findings, problems):
    add = findings.append
    for key, src in perf.items():
        box = key[0]
        ev = cat.get(key)
        if ev is None:
            for e in src.entries:
                add(Finding("perfmon_entry_excluded", "perfmon", box,
                            e["event"], e["umask"], code=key[1],
                            extended=key[2], umask_value=e["value"]))
            continue
        if ev.counters != src.counters or any(
                e["counters"] != src.counters for e in src.entries):
            add(Finding("counters_differ", "perfmon", box, ev.name,
                        catalog=ev.counters, perfmon=src.counters))
        if src.bare and None not in ev.rows:
            add(Finding("bare_event_not_listed", "perfmon", box, ev.name))
        # Names: perfmon's own spellings must be the catalog's or aliases.
        for name in src.names:
            if name.lower() == ev.name.lower():
                continue
            if name.lower() in {a.lower() for a in ev.aliases} or any(
                    name.lower() in {a.lower() for a in aliases}
                    for aliases in ev.umask_aliases.values()):
                add(Finding("perfmon_alias", "perfmon", box, ev.name,
                            alias=name,
                            second_spelling=any(
                                n.lower() == ev.name.lower()
                                for n in src.names)))
            else:
                add(Finding("perfmon_name_unmapped", "perfmon", box, ev.name,
                            perfmon=name))
        for e in src.entries:
            row = ev.rows.get(e["value"] if e["umask"] is not None else None)
            if row is None and e["umask"] is None:
                continue  # bare entry: bare_event_not_listed covers it
            if row is None:
                add(Finding("perfmon_entry_excluded", "perfmon", box,
                            e["event"], e["umask"], code=key[1],
                            extended=key[2], umask_value=e["value"]))
                continue
            if row_filters(row) != e["fields"]:
                add(Finding("filters_differ", "perfmon", box, ev.name,
                            row["umask"], catalog=sorted(row_filters(row)),
                            perfmon=sorted(e["fields"]),
                            perfmon_name=e["full"]))
            if e["umask"] is None or e["umask"].lower() == row[
                    "umask"].lower():
                continue
            if e["umask"].lower() in {a.lower() for a in row["aliases"]}:
                add(Finding("perfmon_alias", "perfmon", box, ev.name,
                            row["umask"], alias=e["umask"],
                            second_spelling=any(
                                n.lower() == row["umask"].lower()
                                for n, _ in src.umasks[e["value"]])))
            else:
                add(Finding("perfmon_name_unmapped", "perfmon", box, ev.name,
                            row["umask"], perfmon=e["umask"]))
        for value, row in ev.rows.items():
            if value is None:
                check_sources(row, "perfmon", True, problems)
                continue
            in_perfmon = value in src.umasks
            check_sources(row, "perfmon", in_perfmon, problems)
            if not in_perfmon:
                add(Finding("umask_only_in_manual", "perfmon", box, ev.name,
                            row["umask"]))
    for key, ev in cat.items():
        if key not in perf:
            add(Finding("event_only_in_manual", "perfmon", ev.box, ev.name,
                        code=ev.code, extended=ev.extended))
            for row in ev.rows.values():
                check_sources(row, "perfmon", False, problems)


def compare_aliases(cat, perf, findings):
    """Every catalog alias must be a perfmon spelling or be allow-listed."""
    for key, ev in cat.items():
        src = perf.get(key)
        spelled = set()
        if src is not None:
            spelled |= {n.lower() for n in src.names}
            spelled |= {n.lower() for names in src.umasks.values()
                        for n, _ in names}
        named = [(None, a) for a in ev.aliases]
        for value, aliases in ev.umask_aliases.items():
            named += [(ev.rows[value]["umask"], a) for a in aliases
                      if a.lower() not in {x.lower() for x in ev.aliases}]
        for umask, alias in named:
            if alias.lower() not in spelled:
                findings.append(Finding("alias_in_no_source", "both", ev.box,
                                        ev.name, umask, alias=alias))


def check_sources(row, source, present, problems):
    if (source in row["sources"]) != present:
        what = "%s/%s" % (row["box"], row["event"])
        if row["umask"] is not None:
            what += "." + row["umask"]
        problems.append("%s: sources %s, but %s %s it" %
                        (what, row["sources"], source,
                         "lists" if present else "does not list"))


# ---- the allow-list ----

def load_allowlist(path, problems):
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    if not data.get("about"):
        problems.append("allow-list: the 'about' key is missing")
    entries = data.get("entries", [])
    rules = data.get("rules", [])
    for i, e in enumerate(entries):
        if not e.get("reason") or not e.get("kind") or not e.get("box"):
            problems.append("allow-list entry %d: kind, box and reason are "
                            "required" % i)
        if ("event" in e) == ("events" in e):
            problems.append("allow-list entry %d: give event or events" % i)
        if "umask" in e and "umasks" in e:
            problems.append("allow-list entry %d: umask and umasks" % i)
    for i, r in enumerate(rules):
        if r.get("rule") not in RULES or not r.get("reason"):
            problems.append("allow-list rule %d: unknown rule or no reason" %
                            i)
    return entries, rules


def entry_combinations(entry):
    """The (event, umask) pairs an entry names; umask '*' = any."""
    events = entry["events"] if "events" in entry else [entry["event"]]
    if "umasks" in entry:
        umasks = entry["umasks"]
        umasks = ["*"] if umasks == "*" else umasks
    elif "umask" in entry:
        umasks = [entry["umask"]]
    else:
        umasks = [None]
    return [(e, u) for e in events for u in umasks]


def entry_matches(entry, combo, f):
    event, umask = combo
    if entry["kind"] != f.kind or entry["box"] != f.box:
        return False
    if entry.get("source") not in (None, f.source):
        return False
    if event.lower() != f.event.lower():
        return False
    if umask != "*":
        if (umask is None) != (f.umask is None):
            return False
        if umask is not None and umask.lower() != f.umask.lower():
            return False
    for k, v in entry.items():
        if k not in ENTRY_KEYS and f.detail.get(k) != v:
            return False
    return True


# Rules: systematic differences, each enforced exactly by a predicate.
RULES = {
    # Perfmon spells one encoding twice and one spelling is the catalog's
    # own name: the other spelling is an alias.
    "perfmon_second_spelling": lambda f: (
        f.kind == "perfmon_alias" and f.detail.get("second_spelling") is True),
    # A source lists an event bare (no unit mask) while the catalog lists it
    # only with unit masks, every one of which perfmon lists.
    "bare_form_with_perfmon_umasks": lambda f: (
        f.kind == "bare_event_not_listed" and
        f.detail.get("catalog_umasks_in_perfmon") is True),
}


def annotate(findings, cat, perf):
    """Adds the facts the rules test to the findings they concern."""
    by_name = {(ev.box, ev.name): ev for ev in cat.values()}
    for f in findings:
        if f.kind != "bare_event_not_listed":
            continue
        ev = by_name[(f.box, f.event)]
        src = perf.get(ev.key)
        f.detail["catalog_umasks_in_perfmon"] = src is not None and all(
            value is not None and value in src.umasks for value in ev.rows)


def explain(findings, entries, rules):
    stale = []
    for entry in entries:
        for combo in entry_combinations(entry):
            hit = False
            for f in findings:
                if entry_matches(entry, combo, f):
                    f.explained_by = entry
                    hit = True
            if not hit:
                stale.append("stale allow-list entry: %s %s/%s%s" % (
                    entry.get("kind"), entry.get("box"), combo[0],
                    "" if combo[1] is None else "." + combo[1]))
    for rule in rules:
        pred = RULES.get(rule.get("rule"))
        hit = False
        for f in findings:
            if pred is not None and pred(f):
                f.explained_by = rule
                hit = True
        if not hit:
            stale.append("stale allow-list rule: %s" % rule.get("rule"))
    return stale


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uncore", required=True,
                        help="path of the uncore CLI")
    parser.add_argument("--spec-dir", default=DEFAULT_SPEC_DIR)
    parser.add_argument("--allowlist", default=DEFAULT_ALLOWLIST)
    parser.add_argument("--verbose", action="store_true",
                        help="also print the explained findings")
    args = parser.parse_args(argv)

    manual_path = os.path.join(args.spec_dir, "manual-events.json")
    perfmon_path = os.path.join(args.spec_dir, "intel-perfmon",
                                "ivytown_uncore.json")
    if not (os.path.isfile(manual_path) and os.path.isfile(perfmon_path)):
        print("spec folder %s not found: skipping" % args.spec_dir)
        return 77

    try:
        out = subprocess.run([args.uncore, "list", "--json"], check=True,
                             capture_output=True, text=True, timeout=120)
        rows = json.loads(out.stdout)
    except (OSError, subprocess.SubprocessError, ValueError) as e:
        print("cannot run `%s list --json`: %s" % (args.uncore, e))
        return 2

    problems = []
    findings = []
    cat = read_catalog(rows, problems)
    man = read_manual(args.spec_dir)
    perf = read_perfmon(args.spec_dir)
    compare_manual(cat, man, findings, problems)
    compare_perfmon(cat, perf, findings, problems)
    compare_aliases(cat, perf, findings)
    annotate(findings, cat, perf)
    entries, rules = load_allowlist(args.allowlist, problems)
    stale = explain(findings, entries, rules)

    unexplained = [f for f in findings if f.explained_by is None]
    if args.verbose:
        for f in findings:
            if f.explained_by is not None:
                print("allowed: %s" % f)
    for p in problems:
        print("PROBLEM: %s" % p)
    for f in unexplained:
        print("NOT ALLOWED: %s" % f)
    for s in stale:
        print("STALE: %s" % s)
    n_rows = sum(len(ev.rows) for ev in cat.values())
    print("catalog: %d events, %d rows; %d findings, %d allowed, %d not; "
          "%d problems; %d stale allow-list items" %
          (len(cat), n_rows, len(findings), len(findings) - len(unexplained),
           len(unexplained), len(problems), len(stale)))
    return 1 if (problems or unexplained or stale) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
