#!/usr/bin/env python3
"""Generates sdk/platforms/ivytown/model/event_catalog_data.cc from the two event sources.

Sources (in --spec-dir, by default ../shared/spec beside the repository):
  manual-events.json              the manual's event list (primary source)
  intel-perfmon/ivytown_uncore.json  Intel's published list (second source)

The two are merged by event key (box, event code, extended-select bit) and,
within an event, by unit-mask value:
  * names: the manual's spelling wins; perfmon's other spellings of the same
    encoding become aliases (without the UNC_x_ prefix);
  * an event or unit mask found in only one source is still included, and its
    `sources` bits say where it came from;
  * counters: bit i of counter_mask = general counter i may count the event;
  * filter dependencies are mapped to kernel sysfs field names
    (notes/field-names.md) and put on the event when every unit mask needs
    them, else on the unit masks that do.
The policy tables below (extra aliases, exclusions, corrections) record every
decision that is not a plain merge; sdk/platforms/ivytown/model/catalog_allowlist.json gives
the reason for each difference, and tests/platforms/ivytown/model/catalog_crosscheck.py
checks the compiled catalog against both sources independently.

Usage:
  gen_event_catalog.py [--spec-dir DIR] [--out FILE]   write the table
  gen_event_catalog.py --check [--spec-dir DIR] [--out FILE]
      exit 1 (with a diff) when FILE is not what the generator would write;
  exit 77 when the spec folder is absent (so CTest can skip).
Python 3 standard library only; the output is deterministic.
"""

import argparse
import collections
import difflib
import json
import os
import re
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_SPEC_DIR = os.path.join(REPO_ROOT, "..", "shared", "spec")
DEFAULT_OUT = os.path.join(REPO_ROOT, "sdk", "platforms", "ivytown", "model",
                           "event_catalog_data.cc")
MANUAL_FILE = "manual-events.json"
PERFMON_FILE = os.path.join("intel-perfmon", "ivytown_uncore.json")

# Box types in BoxType order: (our name, BoxType enumerator, manual key,
# perfmon Unit, perfmon EventName prefix).
BOXES = [
    ("ubox", "kUbox", "UBOX", "UBOX", "UNC_U_"),
    ("cbo", "kCbo", "CBO", "CBO", "UNC_C_"),
    ("ha", "kHa", "HA", "HA", "UNC_H_"),
    ("imc", "kImc", "IMC", "iMC", "UNC_M_"),
    ("irp", "kIrp", "IRP", "IRP", "UNC_I_"),
    ("pcu", "kPcu", "PCU", "PCU", "UNC_P_"),
    ("qpi", "kQpi", "QPI", "QPI LL", "UNC_Q_"),
    ("r2pcie", "kR2pcie", "R2PCIE", "R2PCIe", "UNC_R2_"),
    ("r3qpi", "kR3qpi", "R3QPI", "R3QPI", "UNC_R3_"),
]
BOX_ORDER = {b[0]: i for i, b in enumerate(BOXES)}

# ---- policy tables: every non-mechanical decision lives here ----

# Names the manual's own metrics and definitions use that neither list
# spells (digest section 8 item 20). (box, event) -> aliases and
# (box, event, umask) -> aliases.  RxR_INSERTS.IRQ_REJECTED is also perfmon's
# spelling; it is listed so the alias stays even if perfmon drops it.
EXTRA_EVENT_ALIASES = {
    ("cbo", "COUNTER0_OCCUPANCY"): ["OCCUPANCY_COUNTER0"],
}
EXTRA_UMASK_ALIASES = {
    ("cbo", "RxR_INSERTS", "IRQ_REJ"): ["IRQ_REJECTED"],
    ("cbo", "TOR_INSERTS", "MISS_OPCODE"): ["MISS_OPC_MATCH"],
    ("cbo", "TOR_OCCUPANCY", "MISS_OPCODE"): ["MISS_OPC_MATCH"],
    ("qpi", "DIRECT2CORE", "SUCCESS_RBT_HIT"): ["SUCCESS"],
}

# Filter fields the hardware (and the Linux driver's extra-register table)
# needs beyond what both lists print: LLC_LOOKUP.NID (umask 0x41) matches on
# FILTER1.nid as well as FILTER0.state.
EXTRA_UMASK_FILTERS = {
    ("cbo", "LLC_LOOKUP", "NID"): ["filter_nid"],
}

# Perfmon entries left out of the catalog, by full EventName or prefix.
#  * UNC_U_CLOCKTICKS is the U-Box UCLK fixed counter, which the box
#    descriptor models (ubox/UCLK); the manual has no U-Box event 0x00.
#  * UNC_Q_MESSAGE.* are packet match/mask presets of CTO_COUNT (umask 0);
#    the catalog has no place for match/mask values.
PERFMON_EXCLUDED_NAMES = {"UNC_U_CLOCKTICKS"}
PERFMON_EXCLUDED_PREFIXES = ("UNC_Q_MESSAGE.",)
# A perfmon-only key whose event name is a manual event of the same box at a
# different key (PCU FREQ_MIN_PERF_P_CYCLES: manual 0x02+ext, perfmon 0x62)
# is dropped: the manual's encoding wins and names stay unique.

# The manual prints "Max Inc/Cyc 0" for two events (digest section 8 item
# 19); a count that never increments is a misprint, so 0 becomes 1.
MIN_MAX_INCREMENT = 1

# Canonical order of filter fields inside a filter list.  irp_filter and
# ubox_filter name filters with no documented register (IRP_PmonFilter, and
# the U-Box filter perfmon's FILTER_MATCH.ENABLE mentions): the event needs a
# filter the SDK cannot program, and users should know it.
FILTER_ORDER = [
    "filter_tid", "filter_state", "filter_addr_lo", "filter_addr_hi",
    "filter_opc", "filter_nid", "filter_band0", "filter_band1",
    "filter_band2", "filter_band3", "match0", "match1", "mask0", "mask1",
    "irp_filter", "ubox_filter",
]

NAME_RE = re.compile(r"^[A-Za-z0-9_]+$")
DEP_RE = re.compile(r"^(\w+)\[(\d+):(\d+)\]$")


class SpecError(Exception):
    pass


def map_filter_dep(dep):
    """Maps a source's filter dependency string to kernel field names."""
    if dep is None or dep in ("", "null"):
        return set()
    fields = set()
    for item in dep.split(","):
        item = item.strip()
        m = DEP_RE.match(item)
        if not m:
            raise SpecError("unparsed filter dependency %r" % dep)
        reg, hi, lo = m.group(1), int(m.group(2)), int(m.group(3))
        if reg == "CBoFilter0" and lo == 17:
            fields.add("filter_state")  # 22:17 (the lists print 23:17)
        elif reg == "CBoFilter0" and lo == 0:
            fields.add("filter_tid")
        elif reg == "CBoFilter1" and lo == 20:
            fields.add("filter_opc")
        elif reg == "CBoFilter1" and lo == 0:
            fields.add("filter_nid")
        elif reg == "HA_OpcodeMatch":
            fields.add("filter_opc")
        elif reg == "HA_AddrMatch0":
            fields.add("filter_addr_lo")
        elif reg == "HA_AddrMatch1":
            fields.add("filter_addr_hi")
        elif reg == "PCUFilter" and hi - lo == 7 and lo % 8 == 0:
            fields.add("filter_band%d" % (lo // 8))
        elif reg in ("QPIMatch0", "QPIMatch1", "QPIMask0", "QPIMask1"):
            fields.update(["match0", "match1", "mask0", "mask1"])
        elif reg == "IRPFilter":
            fields.add("irp_filter")
        elif reg == "UBoxFilter":
            fields.add("ubox_filter")
        else:
            raise SpecError("unknown filter register in %r" % dep)
    return fields


def filter_list(fields):
    unknown = set(fields) - set(FILTER_ORDER)
    if unknown:
        raise SpecError("no canonical order for %s" % sorted(unknown))
    return tuple(f for f in FILTER_ORDER if f in fields)


def counter_mask_from_range(text):
    """'0-3' -> 0xF, '0' -> 0x1."""
    lo, _, hi = text.partition("-")
    hi = hi or lo
    return sum(1 << i for i in range(int(lo), int(hi) + 1))


def counter_mask_from_list(text):
    """'0,1,2,3' -> 0xF."""
    return sum(1 << int(c) for c in text.split(","))


def check_name(name, what):
    if not NAME_RE.match(name):
        raise SpecError("odd %s name %r" % (what, name))


class Umask:

    def __init__(self, name, value):
        self.name = name
        self.value = value
        self.aliases = []
        self.fields = set()  # before hoisting: every field this umask needs
        self.sources = set()


class Event:

    def __init__(self, box, name, code, extended):
        self.box = box
        self.name = name
        self.code = code
        self.extended = extended
        self.counter_mask = 0
        self.max_increment = 1
        self.fields = set()  # event-level dependency from the sources
        self.aliases = []
        self.umasks = {}  # value -> Umask
        self.sources = set()


def add_alias(aliases, primary, name):
    if name.lower() == primary.lower():
        return
    if any(a.lower() == name.lower() for a in aliases):
        return
    aliases.append(name)


def load_sources(spec_dir):
    with open(os.path.join(spec_dir, MANUAL_FILE), encoding="utf-8") as f:
        manual = json.load(f)
    with open(os.path.join(spec_dir, PERFMON_FILE), encoding="utf-8") as f:
        perfmon = json.load(f)
    return manual, perfmon


def merge(manual, perfmon, notes):
    """Returns the merged events, sorted by (box, code, extended)."""
    events = {}
    manual_names = collections.defaultdict(dict)  # box -> lower name -> key
    by_manual_key = {b[2]: b[0] for b in BOXES}
    for box_key, entries in manual["boxes"].items():
        box = by_manual_key[box_key]
        for e in entries:
            check_name(e["name"], "event")
            key = (box, int(e["ev_sel"], 16), bool(e["ext"]))
            if key in events:
                raise SpecError("manual lists %s twice" % (key,))
            ev = Event(box, e["name"], key[1], key[2])
            ev.counter_mask = counter_mask_from_range(e["ctrs"])
            ev.max_increment = max(int(e["max_inc"]), MIN_MAX_INCREMENT)
            ev.fields = map_filter_dep(e["filter_dep"])
            ev.sources.add("manual")
            for u in e["umasks"]:
                check_name(u["name"], "umask")
                value = int(u["value"], 16)
                if value in ev.umasks:
                    raise SpecError("manual repeats umask 0x%02x in %s" %
                                    (value, key))
                um = Umask(u["name"], value)
                um.fields = map_filter_dep(u["filter_dep"])
                um.sources.add("manual")
                ev.umasks[value] = um
            events[key] = ev
            manual_names[box][ev.name.lower()] = key

    by_unit = {b[3]: (b[0], b[4]) for b in BOXES}
    grouped = collections.OrderedDict()  # key -> [(event, umask, value, entry)]
    for p in perfmon["Events"]:
        box, prefix = by_unit[p["Unit"]]
        full = p["EventName"]
        if not full.startswith(prefix):
            raise SpecError("%s does not start with %s" % (full, prefix))
        if full in PERFMON_EXCLUDED_NAMES or full.startswith(
            PERFMON_EXCLUDED_PREFIXES):
            notes.append("perfmon %s left out (policy)" % full)
            continue
        event_name, _, umask_name = full[len(prefix):].partition(".")
        check_name(event_name, "event")
        value = int(p["UMask"], 16)
        if umask_name:
            check_name(umask_name, "umask")
        elif value != 0:
            raise SpecError("%s has umask 0x%x but no umask name" %
                            (full, value))
        key = (box, int(p["EventCode"], 16), p["ExtSel"] == "1")
        grouped.setdefault(key, []).append((event_name, umask_name, value, p))

    for key, rows in grouped.items():
        box = key[0]
        ev = events.get(key)
        if ev is None:
            names = [r[0] for r in rows]
            bare = [r[0] for r in rows if not r[1]]
            primary = bare[0] if bare else names[0]
            clash = manual_names[box].get(primary.lower())
            if clash is not None:
                notes.append("perfmon %s/%s at code 0x%02x ext %d dropped: the "
                             "manual has it at 0x%02x ext %d" %
                             (box, primary, key[1], key[2], clash[1], clash[2]))
                continue
            ev = Event(box, primary, key[1], key[2])
            ev.counter_mask = counter_mask_from_list(rows[0][3]["Counter"])
            events[key] = ev
        ev.sources.add("perfmon")
        masks = {counter_mask_from_list(r[3]["Counter"]) for r in rows}
        if masks != {ev.counter_mask}:
            notes.append("%s/%s: perfmon counters %s, catalog 0x%x" %
                         (box, ev.name, sorted(masks), ev.counter_mask))
        for event_name, umask_name, value, p in rows:
            add_alias(ev.aliases, ev.name, event_name)
            fields = map_filter_dep(p["Filter"])
            if not umask_name:
                if ev.fields != fields and "manual" in ev.sources:
                    notes.append("%s/%s: perfmon filters %s, manual %s" %
                                 (box, ev.name, sorted(fields),
                                  sorted(ev.fields)))
                if "manual" not in ev.sources:
                    ev.fields |= fields
                continue
            um = ev.umasks.get(value)
            if um is None:
                um = Umask(umask_name, value)
                um.fields = fields
                ev.umasks[value] = um
            elif "manual" in um.sources and um.fields != fields:
                notes.append("%s/%s.%s: perfmon filters %s, manual %s" %
                             (box, ev.name, um.name, sorted(fields),
                              sorted(um.fields)))
            add_alias(um.aliases, um.name, umask_name)
            um.sources.add("perfmon")

    # Policy additions.
    by_name = {(ev.box, ev.name): ev for ev in events.values()}
    for (box, name), aliases in EXTRA_EVENT_ALIASES.items():
        ev = by_name[(box, name)]
        for a in aliases:
            add_alias(ev.aliases, ev.name, a)
    for (box, name, umask), aliases in EXTRA_UMASK_ALIASES.items():
        um = find_umask(by_name[(box, name)], umask)
        for a in aliases:
            add_alias(um.aliases, um.name, a)
    for (box, name, umask), fields in EXTRA_UMASK_FILTERS.items():
        find_umask(by_name[(box, name)], umask).fields.update(fields)

    ordered = sorted(events.values(),
                     key=lambda e: (BOX_ORDER[e.box], e.code, e.extended))
    validate(ordered)
    return ordered


def find_umask(ev, name):
    for um in ev.umasks.values():
        if um.name == name:
            return um
    raise SpecError("%s/%s has no umask %s" % (ev.box, ev.name, name))


def validate(events):
    seen = collections.defaultdict(dict)
    for ev in events:
        for n in [ev.name] + ev.aliases:
            other = seen[ev.box].get(n.lower())
            if other is not None:
                raise SpecError("%s: name %s used by %s and %s" %
                                (ev.box, n, other, ev.name))
            seen[ev.box][n.lower()] = ev.name
        names = {}
        for um in ev.umasks.values():
            for n in [um.name] + um.aliases:
                if n.lower() in names:
                    raise SpecError("%s/%s: umask name %s used twice" %
                                    (ev.box, ev.name, n))
                names[n.lower()] = um.name
        if ev.counter_mask == 0 or ev.counter_mask > 0xF:
            raise SpecError("%s/%s: counter mask 0x%x" %
                            (ev.box, ev.name, ev.counter_mask))


def split_filters(ev):
    """(event-level fields, {value: umask-level fields})."""
    if not ev.umasks:
        return set(ev.fields), {}
    rows = {v: ev.fields | um.fields for v, um in ev.umasks.items()}
    common = set.intersection(*rows.values())
    return common, {v: f - common for v, f in rows.items()}


# ---- C++ emission ----

COLUMNS = 80


def sources_const(sources):
    return {
        frozenset(["manual"]): "kM",
        frozenset(["perfmon"]): "kP",
        frozenset(["manual", "perfmon"]): "kMP",
    }[frozenset(sources)]


def cpp_str(s):
    assert '"' not in s and "\\" not in s
    return '"%s"' % s


def pack(prefix, items, suffix, indent):
    """Packs `items` into lines of at most COLUMNS characters.

    `prefix` opens the list (ending in '{'); continuation lines are aligned
    just after that brace.  The tables sit between clang-format off/on.
    """
    first = " " * indent + prefix
    cont = " " * len(first)
    lines = []
    line = first
    for i, item in enumerate(items):
        text = item + ("," if i + 1 < len(items) else suffix)
        sep = "" if line.endswith("{") or line == cont else " "
        too_long = len(line) + len(sep) + len(text) > COLUMNS
        if too_long and line not in (first, cont):
            lines.append(line.rstrip())
            line = cont + text
        else:
            line = line + sep + text
    lines.append(line)
    return lines


def umask_array_name(ev):
    box = ev.box[0].upper() + ev.box[1:]
    return "k%s%02X%sUmasks" % (box, ev.code, "Ext" if ev.extended else "")


class Lists:
    """Named constant arrays for the filter and alias lists, one per
    distinct list, in first-use order; the descriptors point into them."""

    def __init__(self, prefix):
        self.prefix = prefix
        self.names = {}

    def ref(self, items):
        items = tuple(items)
        if not items:
            return "{}"
        if items not in self.names:
            self.names[items] = "%s%d" % (self.prefix, len(self.names))
        return self.names[items]

    def emit(self, out):
        for items, name in self.names.items():
            out.extend(pack("constexpr std::string_view %s[] = {" % name,
                            [cpp_str(i) for i in items], "};", 0))


def render(events):
    enum = {b[0]: b[1] for b in BOXES}
    filter_lists = Lists("kFilters")
    alias_lists = Lists("kAliases")
    # Name the lists first, in table order, so that they precede their use.
    for ev in events:
        event_fields, umask_fields = split_filters(ev)
        for value in sorted(ev.umasks):
            filter_lists.ref(filter_list(umask_fields[value]))
            alias_lists.ref(ev.umasks[value].aliases)
    for ev in events:
        event_fields, _ = split_filters(ev)
        filter_lists.ref(filter_list(event_fields))
        alias_lists.ref(ev.aliases)
    n_umasks = sum(len(ev.umasks) for ev in events)
    per_box = collections.Counter(ev.box for ev in events)
    out = []
    w = out.append
    w("// GENERATED by tools/gen_event_catalog.py from the spec's "
      "manual-events.json")
    w("// and intel-perfmon/ivytown_uncore.json -- DO NOT EDIT.  Change the "
      "generator")
    w("// (its policy tables) and run: python3 tools/gen_event_catalog.py")
    w("//")
    w("// %d events, %d unit masks." % (len(events), n_umasks))
    w("// Events per box: %s," %
      ", ".join("%s %d" % (b[0], per_box[b[0]]) for b in BOXES[:5]))
    w("// %s." % ", ".join("%s %d" % (b[0], per_box[b[0]]) for b in BOXES[5:]))
    w("")
    w("#include <cstddef>")
    w("#include <cstdint>")
    w("#include <iterator>")
    w("#include <span>")
    w("#include <string_view>")
    w("")
    w('#include "sdk/platforms/ivytown/model/box_descriptors.h"')
    w('#include "sdk/platforms/ivytown/model/event_catalog.h"')
    w("")
    w("namespace uncore::ivytown {")
    w("namespace {")
    w("")
    w("// Shorthands for the `sources` bits.")
    w("constexpr uint8_t kM = kFromManual;")
    w("constexpr uint8_t kP = kFromPerfmon;")
    w("constexpr uint8_t kMP = kFromManual | kFromPerfmon;")
    w("")
    w("// The generator lays the tables out one entry per line; clang-format")
    w("// would pack them into a grid.")
    w("// clang-format off")
    w("")
    w("// Filter-field lists (kernel field names, BoxDescriptor::FindField).")
    filter_lists.emit(out)
    w("")
    w("// Alias lists.")
    alias_lists.emit(out)
    w("")
    w("// UmaskDescriptor: {name, value, filters, aliases, sources}.")
    for ev in events:
        if not ev.umasks:
            continue
        _, umask_fields = split_filters(ev)
        w("")
        w("constexpr UmaskDescriptor %s[] = {" % umask_array_name(ev))
        for value in sorted(ev.umasks):
            um = ev.umasks[value]
            items = [
                cpp_str(um.name), "0x%02X" % value,
                filter_lists.ref(filter_list(umask_fields[value])),
                alias_lists.ref(um.aliases), sources_const(um.sources)
            ]
            out.extend(pack("{", items, "},", 4))
        w("};")
    w("")
    w("// EventDescriptor: {box, name, code, extended, counter_mask, "
      "max_increment,")
    w("//                   filters, aliases, umasks, sources, description}.")
    w("constexpr EventDescriptor kEvents[] = {")
    box = None
    for ev in events:
        if ev.box != box:
            box = ev.box
            w("    // ---- %s ----" % box)
        event_fields, _ = split_filters(ev)
        items = [
            "BoxType::%s" % enum[ev.box], cpp_str(ev.name), "0x%02X" % ev.code,
            "true" if ev.extended else "false", "0x%X" % ev.counter_mask,
            str(ev.max_increment),
            filter_lists.ref(filter_list(event_fields)),
            alias_lists.ref(ev.aliases),
            umask_array_name(ev) if ev.umasks else "{}",
            sources_const(ev.sources), '""'
        ]
        out.extend(pack("{", items, "},", 4))
    w("};")
    w("// clang-format on")
    w("")
    w("// Sorted by (box, code, extended) with no repeated key, so that")
    w("// EventsOf() is a subspan and FindEventByCode() a binary search.")
    w("constexpr bool StrictlySorted() {")
    w("  for (size_t i = 1; i < std::size(kEvents); ++i) {")
    w("    const EventDescriptor& a = kEvents[i - 1];")
    w("    const EventDescriptor& b = kEvents[i];")
    w("    if (a.box != b.box) {")
    w("      if (a.box > b.box) return false;")
    w("    } else if (a.code != b.code) {")
    w("      if (a.code > b.code) return false;")
    w("    } else if (a.extended >= b.extended) {")
    w("      return false;")
    w("    }")
    w("  }")
    w("  return true;")
    w("}")
    w("static_assert(StrictlySorted());")
    w("static_assert(std::size(kEvents) == %d);" % len(events))
    w("")
    w("}  // namespace")
    w("")
    w("std::span<const EventDescriptor> AllEvents() { return kEvents; }")
    w("")
    w("}  // namespace uncore::ivytown")
    return "\n".join(out) + "\n"


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec-dir", default=DEFAULT_SPEC_DIR)
    parser.add_argument("--out", default=DEFAULT_OUT)
    parser.add_argument("--check", action="store_true",
                        help="compare with --out instead of writing it")
    parser.add_argument("--verbose", action="store_true",
                        help="print the merge notes")
    args = parser.parse_args(argv)

    if not (os.path.isfile(os.path.join(args.spec_dir, MANUAL_FILE)) and
            os.path.isfile(os.path.join(args.spec_dir, PERFMON_FILE))):
        print("spec folder %s not found: skipping" % args.spec_dir,
              file=sys.stderr)
        return 77
    notes = []
    try:
        manual, perfmon = load_sources(args.spec_dir)
        events = merge(manual, perfmon, notes)
    except SpecError as e:
        print("gen_event_catalog: %s" % e, file=sys.stderr)
        return 2
    if args.verbose:
        for n in notes:
            print("note: " + n, file=sys.stderr)
    text = render(events)

    if args.check:
        try:
            with open(args.out, encoding="utf-8") as f:
                current = f.read()
        except FileNotFoundError:
            current = ""
        if current == text:
            return 0
        sys.stdout.writelines(
            difflib.unified_diff(current.splitlines(True),
                                 text.splitlines(True), args.out,
                                 "regenerated"))
        print("%s is stale: run tools/gen_event_catalog.py" % args.out,
              file=sys.stderr)
        return 1
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
