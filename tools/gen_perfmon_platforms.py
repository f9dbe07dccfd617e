#!/usr/bin/env python3
"""Generates the perf-only platform tables in sdk/platforms/perfmon/generated/.

Sources:
  Intel: --spec-dir/intel-perfmon/ (by default ../shared/spec beside the
    repository): mapfile.csv (CPU identity -> files), each platform's
    <dir>/events/<name>_uncore.json and <dir>/metrics/perf/<name>_metrics_perf.json.
  AMD: the AMD_* tables below, restated by hand from the facts (names, event
    codes, unit masks, rdwrmask) of Linux perf's
    tools/perf/pmu-events/arch/x86/amdzen{2,3,4,5}/ event lists.
  Hand tables: tools/perfmon_hand/*.json (in the repository): CPUs that
    intel-perfmon has no uncore file for, restated from LIKWID, the Linux
    kernel's uncore driver and Intel's guides (xeon7500.json: the Xeon 7500
    / Nehalem-EX and Xeon E7 / Westmere-EX uncores; its "_about" names the
    sources, notes/decisions-xeon7500-events.md the choices).

What is taken: names, units, event codes, unit masks, perf's extra terms,
counters, counter types, deprecation, metric names, formulas and scale units.
Never the description text.

Encodings follow Linux perf (tools/perf/pmu-events/jevents.py):
  * PMU = uncore_<unit lowercased>, except the table UNIT_TO_PMU below;
  * event = EventCode | ExtSel << 8;
  * umask = UMask | UMaskExt << 8 (the kernel's umask_ext formats put bits
    8 and up into config bits 32 and up);
  * PortMask -> ch_mask, FCMask -> fc_mask, FILTER_VALUE -> config1, when
    not zero.

Derived data (the only decisions that are not a plain copy):
  * composites: where a platform splits an event over schedulers
    (X_SCH0.Y and X_SCH1.Y) and has no X.Y, the name X.Y stands for the sum
    of all X_SCHn.Y (Granite Rapids and Sierra Forest CAS counts);
  * the SDK's cross-platform metrics MEM_BW_READS / MEM_BW_WRITES /
    MEM_BW_TOTAL in bytes: Intel: the events of the platform's
    memory_bandwidth_read / _write metrics times 64; AMD Zen 4/5:
    umc_cas_cmd.rd / .wr times 64; Zen 2/3: the data-fabric DRAM channel
    beats times 64 (total only: that event does not split reads and writes);
    hand tables: the reads/writes events their JSON names (LIKWID's MEM
    groups) times 64;
  * hand tables: the Xeon 7500 / E7 M-Box FVC events, laid out from the
    kernel's per-CPU field positions (fvc_layout in the JSON).

Order in AllPlatforms(): the Intel intel-perfmon platforms (by generation),
then the hand-tabled platforms, then AMD.

Usage:
  gen_perfmon_platforms.py [--spec-dir DIR] [--out-dir DIR]   write the tables
  gen_perfmon_platforms.py --check [--spec-dir DIR] [--out-dir DIR]
      exit 1 (with a diff) when a file is not what the generator would write;
      exit 77 when the spec folder is absent (so CTest can skip).
Python 3 standard library only; the output is deterministic.
"""

import argparse
import csv
import difflib
import json
import os
import re
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_SPEC_DIR = os.path.join(REPO_ROOT, "..", "shared", "spec")
DEFAULT_OUT_DIR = os.path.join(REPO_ROOT, "sdk", "platforms", "perfmon",
                               "generated")
HAND_DIR = os.path.join(REPO_ROOT, "tools", "perfmon_hand")

# (name, aliases, title, perfmon directory, file stem), oldest first.
INTEL_PLATFORMS = [
    ("haswellx", "hsx", "Haswell-EP", "HSX", "haswellx"),
    ("broadwellx", "bdx", "Broadwell-EP", "BDX", "broadwellx"),
    ("skylakex", "skx", "Skylake-SP", "SKX", "skylakex"),
    ("cascadelakex", "clx", "Cascade Lake-SP", "CLX", "cascadelakex"),
    ("icelakex", "icx", "Ice Lake-SP", "ICX", "icelakex"),
    ("sapphirerapids", "spr", "Sapphire Rapids", "SPR", "sapphirerapids"),
    ("emeraldrapids", "emr", "Emerald Rapids", "EMR", "emeraldrapids"),
    ("graniterapids", "gnr", "Granite Rapids", "GNR", "graniterapids"),
    ("sierraforest", "srf", "Sierra Forest", "SRF", "sierraforest"),
]

# perf's exceptions to uncore_<unit lowercased> (jevents.py unit_to_pmu).
UNIT_TO_PMU = {
    "CBO": "uncore_cbox",
    "QPI LL": "uncore_qpi",
    "SBO": "uncore_sbox",
    "iMPH-U": "uncore_arb",
    "UPI LL": "uncore_upi",
    "L3PMC": "amd_l3",
    "DFPMC": "amd_df",
    "UMCPMC": "amd_umc",
}


def unit_to_pmu(unit):
    return UNIT_TO_PMU.get(unit, "uncore_" + unit.lower())


# ---- AMD facts (from Linux perf's amdzen* lists; names and codes only) ----
# Each entry: (name, unit, event code, umask, extra perf terms).


def _umc_events():
    out = [("umc_mem_clk", "UMCPMC", 0x00, 0, "")]
    for base, code in (("umc_act_cmd", 0x05), ("umc_pchg_cmd", 0x06),
                       ("umc_cas_cmd", 0x0A), ("umc_data_slot_clks", 0x14)):
        out.append((base + ".all", "UMCPMC", code, 0, ""))
        out.append((base + ".rd", "UMCPMC", code, 0, "rdwrmask=0x1"))
        out.append((base + ".wr", "UMCPMC", code, 0, "rdwrmask=0x2"))
    return out


def _channel_events(fmt, first_code, umask, count):
    # Data-fabric events repeat per channel with the event code 0x40 apart.
    return [(fmt % i, "DFPMC", first_code + 0x40 * i, umask, "")
            for i in range(count)]


AMD_ZEN23_DF = _channel_events("dram_channel_data_controller_%d", 0x07, 0x38,
                               8)
AMD_ZEN23_L3 = [
    ("l3_request_g1.caching_l3_cache_accesses", "L3PMC", 0x01, 0x80, ""),
    ("l3_lookup_state.all_l3_req_typs", "L3PMC", 0x04, 0xFF, ""),
    ("l3_comb_clstr_state.request_miss", "L3PMC", 0x06, 0x01, ""),
]
AMD_ZEN45_L3 = [
    ("l3_lookup_state.l3_miss", "L3PMC", 0x04, 0x01, ""),
    ("l3_lookup_state.l3_hit", "L3PMC", 0x04, 0xFE, ""),
    ("l3_lookup_state.all_coherent_accesses_to_l3", "L3PMC", 0x04, 0xFF, ""),
]
AMD_ZEN4_DF = (
    _channel_events("local_processor_read_data_beats_cs%d", 0x1F, 0x7FE, 12) +
    _channel_events("local_processor_write_data_beats_cs%d", 0x1F, 0x7FF, 12) +
    _channel_events("remote_processor_read_data_beats_cs%d", 0x1F, 0xBFE, 12) +
    _channel_events("remote_processor_write_data_beats_cs%d", 0x1F, 0xBFF, 12))
AMD_ZEN5_DF = (
    _channel_events("local_or_remote_socket_read_data_beats_dram_%d", 0x1F,
                    0xFFE, 12) +
    _channel_events("local_socket_write_data_beats_dram_%d", 0x1F, 0x7FF, 12) +
    _channel_events("remote_socket_write_data_beats_dram_%d", 0x1F, 0xBFF, 12)
    + _channel_events("local_or_remote_socket_write_data_beats_dram_%d", 0x1F,
                      0xFFF, 12))


def _sum(names):
    return " + ".join(names)


def _amd_bw(reads, writes, total):
    """The SDK metrics in bytes; None for a direction the events cannot split."""
    out = []
    for name, events in (("MEM_BW_READS", reads), ("MEM_BW_WRITES", writes),
                         ("MEM_BW_TOTAL", total)):
        if events:
            out.append((name, "(%s) * 64" % _sum(events), "1B", events))
    return out


_ZEN23_CH = ["dram_channel_data_controller_%d" % i for i in range(8)]
_ZEN4_RD = (["local_processor_read_data_beats_cs%d" % i for i in range(12)])
_ZEN4_WR = (["local_processor_write_data_beats_cs%d" % i for i in range(12)])
_ZEN5_RD = ["local_or_remote_socket_read_data_beats_dram_%d" % i
            for i in range(12)]
_ZEN5_WR = ["local_or_remote_socket_write_data_beats_dram_%d" % i
            for i in range(12)]

# (name, aliases, title, source, cpu matches, events, sdk metrics,
#  perf metrics: (name, expr, scale unit, events)).
# CPU identities follow perf's x86 mapfile: family 0x17 models 0x30 and up
# are Zen 2; family 0x19 models 0x00-0x0f and 0x20-0x5f Zen 3, the others
# Zen 4; family 0x1a Zen 5.
AMD_PLATFORMS = [
    ("amdzen2", "zen2", "AMD Zen 2",
     "Linux perf amdzen2 event list (facts restated)",
     [("AuthenticAMD", 0x17, 0x30, 0xFF)],
     AMD_ZEN23_DF + AMD_ZEN23_L3,
     _amd_bw(None, None, _ZEN23_CH), []),
    ("amdzen3", "zen3", "AMD Zen 3",
     "Linux perf amdzen3 event list (facts restated)",
     [("AuthenticAMD", 0x19, 0x00, 0x0F), ("AuthenticAMD", 0x19, 0x20, 0x5F)],
     AMD_ZEN23_DF + AMD_ZEN23_L3,
     _amd_bw(None, None, _ZEN23_CH), []),
    ("amdzen4", "zen4", "AMD Zen 4",
     "Linux perf amdzen4 event list (facts restated)",
     [("AuthenticAMD", 0x19, 0x10, 0x1F), ("AuthenticAMD", 0x19, 0x60, 0xFF)],
     _umc_events() + AMD_ZEN4_DF + AMD_ZEN45_L3,
     _amd_bw(["umc_cas_cmd.rd"], ["umc_cas_cmd.wr"],
             ["umc_cas_cmd.rd", "umc_cas_cmd.wr"]),
     [("dram_read_data_for_local_processor", _sum(_ZEN4_RD),
       "6.103515625e-5MiB", _ZEN4_RD),
      ("dram_write_data_for_local_processor", _sum(_ZEN4_WR),
       "6.103515625e-5MiB", _ZEN4_WR)]),
    ("amdzen5", "zen5", "AMD Zen 5",
     "Linux perf amdzen5 event list (facts restated)",
     [("AuthenticAMD", 0x1A, 0x00, 0xFF)],
     _umc_events() + AMD_ZEN5_DF + AMD_ZEN45_L3,
     _amd_bw(["umc_cas_cmd.rd"], ["umc_cas_cmd.wr"],
             ["umc_cas_cmd.rd", "umc_cas_cmd.wr"]),
     [("dram_read_data_local_or_remote", _sum(_ZEN5_RD), "6.103515625e-5MiB",
       _ZEN5_RD),
      ("dram_write_data_local_or_remote", _sum(_ZEN5_WR), "6.103515625e-5MiB",
       _ZEN5_WR)]),
]

NAME_RE = re.compile(r"^[A-Za-z0-9_.]+$")


class SpecError(Exception):
    pass


def intval(text):
    text = (text or "0").strip()
    if text in ("", "na", "NA", "null"):
        return 0
    return int(text.split(",")[0], 0)


def perf_hex(value):
    return "0x%x" % value


# ---- Intel ----


def read_mapfile(spec_dir):
    """family-model-stepping patterns per perfmon directory."""
    ids = {}
    with open(os.path.join(spec_dir, "intel-perfmon", "mapfile.csv"),
              encoding="utf-8") as f:
        for row in csv.DictReader(f):
            if row["EventType"] != "uncore":
                continue
            directory = row["Filename"].strip("/").split("/")[0]
            ids.setdefault(directory, [])
            if row["Family-model"] not in ids[directory]:
                ids[directory].append(row["Family-model"])
    return ids


FMS_RE = re.compile(
    r"^(GenuineIntel)-(\d+)-([0-9A-F]{2})(?:-\[([0-9A-F]+)\])?$")


def parse_fms(pattern):
    m = FMS_RE.match(pattern)
    if not m:
        raise SpecError("unparsed mapfile CPU pattern %r" % pattern)
    vendor, family, model = m.group(1), int(m.group(2)), int(m.group(3), 16)
    lo, hi = 0, 15
    if m.group(4):
        steppings = [int(c, 16) for c in m.group(4)]
        lo, hi = min(steppings), max(steppings)
        if hi - lo + 1 != len(steppings):
            raise SpecError("stepping set %r is not a range" % pattern)
    return (vendor, family, model, model, lo, hi)


def intel_event(e):
    name = e["EventName"]
    if not NAME_RE.match(name):
        raise SpecError("odd event name %r" % name)
    unit = e["Unit"]
    event = intval(e.get("EventCode")) | (intval(e.get("ExtSel")) << 8)
    umask = intval(e.get("UMask")) | (intval(e.get("UMaskExt")) << 8)
    terms = []
    for key, term in (("PortMask", "ch_mask"), ("FCMask", "fc_mask"),
                      ("FILTER_VALUE", "config1")):
        v = intval(e.get(key))
        if v:
            terms.append("%s=%s" % (term, perf_hex(v)))
    counters = e.get("Counter", "")
    ctype = e.get("CounterType", "")
    if ctype == "FREERUN":
        kind = "kFreeRunning"
    elif ctype == "FIXED" or counters == "FIXED":
        kind = "kFixed"
    else:
        kind = "kProgrammable"
    return {
        "name": name, "unit": unit, "pmu": unit_to_pmu(unit), "event": event,
        "umask": umask, "terms": ",".join(terms), "counters": counters,
        "kind": kind, "deprecated": e.get("Deprecated", "0") == "1",
    }


TOKEN_RE = re.compile(
    r"(?P<at>[A-Za-z0-9_]+@(?P<atname>[A-Za-z0-9_.]+)(?P<atterms>[^@]*)@)"
    r"|(?P<hash>#[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<num>\d+(?:\.\d+)?(?:e[-+]?\d+)?)"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_.]*)")
NON_EVENTS = {"duration_time", "if", "else", "min", "max", "d_ratio",
              "source_count", "has_event", "strcmp_cpuid_str", "not"}


def metric_events(expr, uncore_names):
    uncore, core = [], []
    for m in TOKEN_RE.finditer(expr):
        if m.group("at"):
            name = m.group("atname")
            extra = m.group("atterms").replace("\\", "").lstrip(",")
            ref = name + ("," + extra if extra else "")
            if name in uncore_names:
                if ref not in uncore:
                    uncore.append(ref)
            elif name not in core:
                core.append(name)
        elif m.group("name"):
            name = m.group("name")
            if name in NON_EVENTS:
                continue
            if name in uncore_names:
                if name not in uncore:
                    uncore.append(name)
            elif name not in core:
                core.append(name)
    return uncore, core


def composites_for(events):
    """X.Y -> [X_SCH0.Y, X_SCH1.Y, ...] where X.Y is not itself an event."""
    names = {e["name"] for e in events}
    groups = {}
    for n in sorted(names):
        m = re.match(r"^(.*)_SCH(\d+)(\..*)?$", n)
        if m:
            combined = m.group(1) + (m.group(3) or "")
            groups.setdefault(combined, []).append(n)
    return [(c, parts) for c, parts in sorted(groups.items())
            if len(parts) > 1 and c not in names]


def load_intel(spec_dir):
    ids = read_mapfile(spec_dir)
    platforms = []
    for name, aliases, title, directory, stem in INTEL_PLATFORMS:
        events_path = os.path.join(spec_dir, "intel-perfmon", directory,
                                   "events", stem + "_uncore.json")
        metrics_path = os.path.join(spec_dir, "intel-perfmon", directory,
                                    "metrics", "perf",
                                    stem + "_metrics_perf.json")
        with open(events_path, encoding="utf-8") as f:
            doc = json.load(f)
        events = [intel_event(e) for e in doc["Events"]]
        events.sort(key=lambda e: e["name"])
        for a, b in zip(events, events[1:]):
            if a["name"] == b["name"]:
                raise SpecError("%s: duplicate event %s" % (name, a["name"]))
        names = {e["name"] for e in events}
        with open(metrics_path, encoding="utf-8") as f:
            metrics_doc = json.load(f)
        metrics = []
        by_name = {}
        for m in metrics_doc:
            uncore, core = metric_events(m["MetricExpr"], names)
            if not uncore:
                continue  # a core-only metric: not the uncore's business
            entry = {"name": m["MetricName"], "expr": m["MetricExpr"],
                     "scale_unit": m.get("ScaleUnit", ""), "uncore": uncore,
                     "core": core, "sdk": False}
            metrics.append(entry)
            by_name[entry["name"]] = entry
        for sdk_name, source in (("MEM_BW_READS", ["memory_bandwidth_read"]),
                                 ("MEM_BW_WRITES", ["memory_bandwidth_write"]),
                                 ("MEM_BW_TOTAL", ["memory_bandwidth_read",
                                                   "memory_bandwidth_write"])):
            evs = []
            for s in source:
                if s not in by_name:
                    raise SpecError("%s: no %s metric" % (name, s))
                evs += by_name[s]["uncore"]
            metrics.append({"name": sdk_name,
                            "expr": "(%s) * 64" % _sum(evs),
                            "scale_unit": "1B", "uncore": evs, "core": [],
                            "sdk": True})
        cpus = [parse_fms(p) for p in ids.get(directory, [])]
        if not cpus:
            raise SpecError("%s: not in mapfile.csv" % name)
        header = doc.get("Header", {})
        source = "intel-perfmon %s/events/%s_uncore.json V%s, %s" % (
            directory, stem, header.get("Version", "?"),
            os.path.basename(metrics_path))
        platforms.append({
            "name": name, "aliases": aliases, "title": title,
            "source": source, "cpus": cpus, "events": events,
            "composites": composites_for(events), "metrics": metrics,
        })
    return platforms


def load_amd():
    platforms = []
    for (name, aliases, title, source, cpus, raw_events, sdk_metrics,
         perf_metrics) in AMD_PLATFORMS:
        events = []
        for ev_name, unit, code, umask, terms in raw_events:
            events.append({
                "name": ev_name, "unit": unit, "pmu": unit_to_pmu(unit),
                "event": code, "umask": umask, "terms": terms,
                "counters": "", "kind": "kProgrammable", "deprecated": False,
            })
        events.sort(key=lambda e: e["name"])
        names = {e["name"] for e in events}
        metrics = []
        for m_name, expr, unit, evs in perf_metrics:
            metrics.append({"name": m_name, "expr": expr, "scale_unit": unit,
                            "uncore": list(evs), "core": [], "sdk": False})
        for m_name, expr, unit, evs in sdk_metrics:
            metrics.append({"name": m_name, "expr": expr, "scale_unit": unit,
                            "uncore": list(evs), "core": [], "sdk": True})
        for m in metrics:
            for ev in m["uncore"]:
                if ev not in names:
                    raise SpecError("%s: metric %s reads unknown %s" %
                                    (name, m["name"], ev))
        platforms.append({
            "name": name, "aliases": aliases, "title": title,
            "source": source,
            "cpus": [(v, fam, lo, hi, 0, 15) for v, fam, lo, hi in cpus],
            "events": events, "composites": [], "metrics": metrics,
        })
    return platforms


# ---- hand tables (tools/perfmon_hand/) ----

# The kernel format term that carries an event's selector, per PMU: "event"
# except the Xeon 7500 M-Box, which selects with inc_sel (or set_flag_sel
# with flag_mode=1).
def _hand_event(name, unit, pmu, code, umask=0, terms="", counters="",
                kind="kProgrammable", event_term="event"):
    if not NAME_RE.match(name):
        raise SpecError("odd hand event name %r" % name)
    return {
        "name": name, "unit": unit, "pmu": pmu, "event": code,
        "umask": umask, "terms": terms, "counters": counters, "kind": kind,
        "deprecated": False, "event_term": event_term,
    }


def _hand_group(entry):
    """[NAME, code], [NAME, code, "umask"] or [BASE, code, {SUFFIX: umask}]
    -> [(name, code, umask)]."""
    if len(entry) == 3 and isinstance(entry[2], dict):
        base, code, umasks = entry
        return [("%s_%s" % (base, suffix), int(code, 0), int(umask, 0))
                for suffix, umask in umasks.items()]
    if len(entry) == 3:
        return [(entry[0], int(entry[1], 0), int(entry[2], 0))]
    return [(entry[0], int(entry[1], 0), 0)]


def hand_events(boxes, platform):
    """Every event of the hand tables, encoded for `platform`'s kernel PMUs."""
    events = []
    for box_name, box in boxes.items():
        unit, pmu = box["unit"], box["pmu"]
        counters = box.get("counters", "")
        # The events both platforms share, then this platform's own.
        entries = box["events"] + platform.get("box_events", {}).get(
            box_name, [])
        if box_name == "bbox":
            # B-Box: each event is tied to one counter, which the kernel's
            # `counter` format field (config:6-7) selects.
            for name, code, ctr in entries:
                events.append(_hand_event(name, unit, pmu, int(code, 0),
                                          terms="counter=0x%x" % ctr,
                                          counters=str(ctr)))
            continue
        if box_name == "rbox":
            for name, code, terms in entries:
                events.append(_hand_event(name, unit, pmu, int(code, 0),
                                          terms=terms, counters=counters))
            continue
        if box_name == "mbox":
            for name, code in entries:
                events.append(_hand_event(name, unit, pmu, int(code, 0),
                                          counters=counters,
                                          event_term="inc_sel"))
            for name, code in box["set_flag_events"]:
                events.append(_hand_event(name, unit, pmu, int(code, 0),
                                          terms="flag_mode=0x1",
                                          counters=counters,
                                          event_term="set_flag_sel"))
            # FVC_EVn: slot n (inc_sel first + n) holds a 3-bit sub-event at
            # bit slot_shift + 3n of the ZDP_CTL_FVC register (the kernel's
            # fvc term); a B-Box write command adds write_bit.
            layout = platform["fvc_layout"]
            first = int(box["fvc_first_inc_sel"], 0)
            for slot in range(box["fvc_slots"]):
                shift = layout["slot_shift"] + 3 * slot
                for sub, value, write in box["fvc_events"]:
                    fvc = (value << shift) | (layout["write_bit"] if write
                                              else 0)
                    events.append(_hand_event(
                        "FVC_EV%d_%s" % (slot, sub), unit, pmu, first + slot,
                        terms="fvc=0x%x" % fvc, counters=counters,
                        event_term="inc_sel"))
            continue
        for name, code, umask in box.get("fixed", []):
            events.append(_hand_event(name, unit, pmu, int(code, 0),
                                      int(umask, 0), counters="FIXED",
                                      kind="kFixed"))
        for entry in entries:
            for name, code, umask in _hand_group(entry):
                events.append(_hand_event(name, unit, pmu, code, umask,
                                          counters=counters))
    events.sort(key=lambda e: e["name"])
    for a, b in zip(events, events[1:]):
        if a["name"].upper() == b["name"].upper():
            raise SpecError("%s: duplicate event %s" % (platform["name"],
                                                        a["name"]))
    return events


def hand_metrics(spec, events):
    """The SDK's MEM_BW_* (bytes) and perf-syntax bandwidth metrics (MB/s)
    from the reads/writes events of LIKWID's MEM group.  "total", where
    given, are the events of the totals when reads + writes cannot be
    counted at once (westmereex: notes/decisions-xeon7500.md)."""
    reads, writes = spec["reads"], spec["writes"]
    total = spec.get("total", reads + writes)
    names = {e["name"] for e in events}
    for ev in reads + writes + total:
        if ev not in names:
            raise SpecError("hand metric reads unknown event %s" % ev)
    out = []
    for name, evs in (("memory_bandwidth_read", reads),
                      ("memory_bandwidth_write", writes),
                      ("memory_bandwidth_total", total)):
        out.append({"name": name,
                    "expr": "((%s) * 64 / 1000000) / duration_time" %
                            _sum(evs),
                    "scale_unit": "1MB/s", "uncore": list(evs), "core": [],
                    "sdk": False})
    out.append({"name": "llc_miss_ratio",
                "expr": "LLC_MISSES_ALL / (LLC_HITS_ALL + LLC_MISSES_ALL)",
                "scale_unit": "100%",
                "uncore": ["LLC_MISSES_ALL", "LLC_HITS_ALL"], "core": [],
                "sdk": False})
    for name, evs in (("MEM_BW_READS", reads), ("MEM_BW_WRITES", writes),
                      ("MEM_BW_TOTAL", total)):
        out.append({"name": name, "expr": "(%s) * 64" % _sum(evs),
                    "scale_unit": "1B", "uncore": list(evs), "core": [],
                    "sdk": True})
    return out


def load_hand(hand_dir=HAND_DIR):
    platforms = []
    for fname in sorted(os.listdir(hand_dir)):
        if not fname.endswith(".json"):
            continue
        with open(os.path.join(hand_dir, fname), encoding="utf-8") as f:
            doc = json.load(f)
        for p in doc["platforms"]:
            events = hand_events(doc["boxes"], p)
            platforms.append({
                "name": p["name"], "aliases": p["aliases"],
                "title": p["title"],
                "source": "tools/perfmon_hand/%s (LIKWID, Linux uncore_nhmex, "
                          "Intel Xeon 7500 uncore guide; facts restated)" %
                          fname,
                "cpus": [(v, fam, lo, hi, 0, 15)
                         for v, fam, lo, hi in p["cpus"]],
                "events": events, "composites": [],
                "metrics": hand_metrics(doc["metrics"][p["metrics"]], events),
            })
    return platforms


# ---- output ----

BANNER = ("// Generated by tools/gen_perfmon_platforms.py: do not edit.\n"
          "// Facts (names, encodings, formulas) only; see docs/platforms.md.\n"
          "// The generator lays the tables out one entry per line; clang-format\n"
          "// leaves them as they are.\n"
          "// clang-format off\n")


def cpp_str(s):
    return '"%s"' % s.replace("\\", "\\\\").replace('"', '\\"')


def func_name(platform):
    return "".join(p.capitalize() for p in
                   re.split(r"[^a-z0-9]", platform["name"])) + "Platform"


def render_platform(p):
    out = [BANNER, '#include "sdk/platforms/perfmon/perfmon_tables.h"', "",
           "namespace uncore::perfmon {", "namespace {", ""]
    w = out.append
    w("constexpr CpuMatch kCpus[] = {")
    for vendor, family, lo, hi, slo, shi in p["cpus"]:
        w("    {%s, 0x%x, 0x%x, 0x%x, %d, %d}," %
          (cpp_str(vendor), family, lo, hi, slo, shi))
    w("};")
    w("")
    w("constexpr Event kEvents[] = {")
    for e in p["events"]:
        # The selector's term is written only where it is not "event".
        term = e.get("event_term", "event")
        w("    {%s, %s, %s, 0x%x, 0x%x, %s, %s, CounterKind::%s, %s%s}," % (
            cpp_str(e["name"]), cpp_str(e["unit"]), cpp_str(e["pmu"]),
            e["event"], e["umask"], cpp_str(e["terms"]),
            cpp_str(e["counters"]), e["kind"],
            "true" if e["deprecated"] else "false",
            "" if term == "event" else ", " + cpp_str(term)))
    w("};")
    w("")
    if p["composites"]:
        w("constexpr Composite kComposites[] = {")
        for c, parts in p["composites"]:
            w("    {%s, %s}," % (cpp_str(c), cpp_str(" ".join(parts))))
        w("};")
        w("")
    w("constexpr Metric kMetrics[] = {")
    for m in p["metrics"]:
        w("    {%s,\n     %s,\n     %s, %s,\n     %s, %s}," % (
            cpp_str(m["name"]), cpp_str(m["expr"]), cpp_str(m["scale_unit"]),
            cpp_str(" ".join(m["uncore"])), cpp_str(" ".join(m["core"])),
            "true" if m["sdk"] else "false"))
    w("};")
    w("")
    w("}  // namespace")
    w("")
    w("const Platform& %s() {" % func_name(p))
    w("  static constexpr Platform kPlatform = {")
    w("      %s," % cpp_str(p["name"]))
    w("      %s," % cpp_str(p["aliases"]))
    w("      %s," % cpp_str(p["title"]))
    w("      %s," % cpp_str(p["source"]))
    w("      kCpus,")
    w("      kEvents,")
    w("      %s," % ("kComposites" if p["composites"] else
                     "std::span<const Composite>()"))
    w("      kMetrics,")
    w("  };")
    w("  return kPlatform;")
    w("}")
    w("")
    w("}  // namespace uncore::perfmon")
    w("// clang-format on")
    return "\n".join(out) + "\n"


def render_registry(platforms):
    out = [BANNER, '#include "sdk/platforms/perfmon/perfmon_tables.h"', "",
           "namespace uncore::perfmon {", ""]
    for p in platforms:
        out.append("const Platform& %s();" % func_name(p))
    out.append("")
    out.append("std::span<const Platform* const> AllPlatforms() {")
    out.append("  static const Platform* const kAll[] = {")
    for p in platforms:
        out.append("      &%s()," % func_name(p))
    out.append("  };")
    out.append("  return kAll;")
    out.append("}")
    out.append("")
    out.append("}  // namespace uncore::perfmon")
    out.append("// clang-format on")
    return "\n".join(out) + "\n"


def render_all(platforms):
    files = {p["name"] + ".cc": render_platform(p) for p in platforms}
    files["registry.cc"] = render_registry(platforms)
    return files


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec-dir", default=DEFAULT_SPEC_DIR)
    parser.add_argument("--out-dir", default=DEFAULT_OUT_DIR)
    parser.add_argument("--check", action="store_true",
                        help="compare with --out-dir instead of writing it")
    args = parser.parse_args(argv)

    if not os.path.isfile(os.path.join(args.spec_dir, "intel-perfmon",
                                       "mapfile.csv")):
        print("spec folder %s not found: skipping" % args.spec_dir,
              file=sys.stderr)
        return 77
    try:
        platforms = (load_intel(args.spec_dir) + load_hand() +
                     load_amd())
    except (SpecError, OSError, KeyError, ValueError) as e:
        print("gen_perfmon_platforms: %s" % e, file=sys.stderr)
        return 2
    files = render_all(platforms)

    if args.check:
        stale = False
        present = set()
        if os.path.isdir(args.out_dir):
            present = {f for f in os.listdir(args.out_dir) if f.endswith(".cc")}
        for extra in sorted(present - set(files)):
            print("%s/%s is not generated any more: delete it" %
                  (args.out_dir, extra), file=sys.stderr)
            stale = True
        for fname, text in sorted(files.items()):
            path = os.path.join(args.out_dir, fname)
            try:
                with open(path, encoding="utf-8") as f:
                    current = f.read()
            except FileNotFoundError:
                current = ""
            if current != text:
                stale = True
                sys.stdout.writelines(list(difflib.unified_diff(
                    current.splitlines(True), text.splitlines(True), path,
                    "regenerated"))[:200])
        if stale:
            print("%s is stale: run tools/gen_perfmon_platforms.py" %
                  args.out_dir, file=sys.stderr)
            return 1
        return 0
    os.makedirs(args.out_dir, exist_ok=True)
    for fname, text in files.items():
        with open(os.path.join(args.out_dir, fname), "w",
                  encoding="utf-8") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
