#!/usr/bin/env python3
"""Checks a Chrome Trace Event file against the rules of Perfetto's JSON
importer (and chrome://tracing's), the ones a trace of ours must follow:

- the file is one JSON object whose "traceEvents" is a list of objects;
- every event has a known phase ("ph": X, B, E, b, e, C, M), an integer
  "pid" and, except metadata, a numeric "ts";
- an X slice has a numeric "dur" >= 0, a string name and an integer "tid";
- the slices of one thread nest: each starts at or after its enclosing one
  and ends at or before it (checked in exact decimals, to the nanosecond);
- every b has one e of the same cat and id, not before it;
- a C event's "args" is a non-empty object of numbers;
- an M event names only processes and threads (process_name, thread_name)
  with a string "name" in its args.

Usage: check_trace.py TRACE.json   (exit 0 when it follows them, else 1)
As a module: problems(trace) -> list of messages.
"""
import decimal
import json
import sys

KNOWN = {"X", "B", "E", "b", "e", "C", "M"}


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f, parse_float=decimal.Decimal)


def is_number(v):
    return isinstance(v, (int, decimal.Decimal)) and not isinstance(v, bool)


def problems(trace):
    out = []
    if not isinstance(trace, dict) or not isinstance(
            trace.get("traceEvents"), list):
        return ["the file is not an object with a traceEvents list"]
    slices = {}
    asyncs = {}
    for i, e in enumerate(trace["traceEvents"]):
        where = f"event {i} {json.dumps(e, default=str)[:120]}"
        if not isinstance(e, dict):
            out.append(f"{where}: not an object")
            continue
        ph = e.get("ph")
        if ph not in KNOWN:
            out.append(f"{where}: unknown phase {ph!r}")
            continue
        if not isinstance(e.get("pid"), int):
            out.append(f"{where}: no integer pid")
        if ph != "M" and not is_number(e.get("ts")):
            out.append(f"{where}: no numeric ts")
            continue
        if ph == "X":
            if not is_number(e.get("dur")) or e["dur"] < 0:
                out.append(f"{where}: an X slice needs a dur >= 0")
                continue
            if not isinstance(e.get("name"), str):
                out.append(f"{where}: a slice needs a string name")
            if not isinstance(e.get("tid"), int):
                out.append(f"{where}: a slice needs an integer tid")
                continue
            slices.setdefault((e["pid"], e["tid"]), []).append(
                (decimal.Decimal(e["ts"]),
                 decimal.Decimal(e["ts"]) + decimal.Decimal(e["dur"]),
                 e.get("name")))
        elif ph in ("b", "e"):
            key = (e.get("cat"), e.get("id"))
            if key[1] is None:
                out.append(f"{where}: an async event needs an id")
                continue
            asyncs.setdefault(key, []).append((ph, e["ts"]))
        elif ph == "C":
            args = e.get("args")
            if not isinstance(args, dict) or not args:
                out.append(f"{where}: a counter needs args")
            elif not all(is_number(v) for v in args.values()):
                out.append(f"{where}: counter args must be numbers")
        elif ph == "M":
            if e.get("name") not in ("process_name", "thread_name"):
                out.append(f"{where}: metadata other than process and "
                           "thread names")
            elif not isinstance(e.get("args", {}).get("name"), str):
                out.append(f"{where}: a name event needs args.name")
    for track, spans in slices.items():
        spans.sort(key=lambda s: (s[0], -s[1]))
        stack = []
        for begin, end, name in spans:
            while stack and stack[-1][1] <= begin:
                stack.pop()
            if stack and end > stack[-1][1]:
                out.append(f"thread {track}: slice {name!r} [{begin}, {end}] "
                           f"overlaps {stack[-1][2]!r} without nesting")
            stack.append((begin, end, name))
    for key, events in asyncs.items():
        phases = sorted(p for p, _ in events)
        if phases != ["b", "e"]:
            out.append(f"async {key}: {phases} instead of one b and one e")
        else:
            b = next(ts for p, ts in events if p == "b")
            e = next(ts for p, ts in events if p == "e")
            if e < b:
                out.append(f"async {key}: ends before it begins")
    return out


def main():
    found = problems(load(sys.argv[1]))
    for p in found[:50]:
        print(p)
    print(f"{sys.argv[1]}: {'OK' if not found else f'{len(found)} problems'}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
