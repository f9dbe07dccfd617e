#!/usr/bin/env python3
"""Generates the perf-only platform tables in sdk/platforms/perfmon/generated/.

Sources:
  Intel: --spec-dir/intel-perfmon/ (by default ../shared/spec beside the
    repository): mapfile.csv (CPU identity -> files), each platform's
    <dir>/events/<name>_uncore.json and <dir>/metrics/perf/<name>_metrics_perf.json.
  AMD: the AMD_* tables below, restated by hand from the facts (names, event
    codes, unit masks, rdwrmask) of Linux perf's
    tools/perf/pmu-events/arch/x86/amdzen{2,3,4,5}/ event lists; Zen 4's two
    DRAM metrics restate perf's, Zen 5's two are the SDK's own.
  Kernel formats: KERNEL_ATTRS / KERNEL_PMUS below, the format attributes
    of Linux's uncore drivers (facts), against which every event is checked.
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

Where the kernel reads vendor data differently (each checked against the
kernel's format attributes; notes/decisions.md):
  * Skylake-SP / Cascade Lake CHA: FILTER_VALUE -> config1 bits 32-63 (in
    events and in metric formulas), as perf does;
  * Sapphire Rapids and later IIO: a UMask that repeats PortMask and FCMask
    (UMask | PortMask << 12 | FCMask << 24) keeps its low 8 bits;
  * Haswell-EP / Broadwell-EP PCU: umask bits 6-7 -> occ_sel;
  * MCHBM -> uncore_hbm (the kernel's name);
  * every event is checked against its PMU's kernel format (kernel_problem);
    the ones none opens carry the reason into the table (Event::unopenable),
    and --unopenable lists them.

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
  gen_perfmon_platforms.py --unopenable [--spec-dir DIR]
      print "platform EVENT: reason" for every event no kernel format opens.
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
    # Not perf's: the kernel's name.  Intel's MCHBM unit (the HBM channel
    # controllers of Sapphire/Emerald Rapids with HBM) is the PMU the
    # kernel registers as `hbm` (uncore_hbm_N), not uncore_mchbm.
    "MCHBM": "uncore_hbm",
}


# Per platform, where the kernel names a unit's PMU otherwise: Granite
# Rapids' and Sierra Forest's MDF is the discovered type the kernel names
# `mdf_sbo` (gnr_uncore_mdf_sbo in uncore_snbep.c's gnr_uncores).
PLATFORM_UNIT_TO_PMU = {
    "graniterapids": {"MDF": "uncore_mdf_sbo"},
    "sierraforest": {"MDF": "uncore_mdf_sbo"},
}


def unit_to_pmu(unit, platform=""):
    special = PLATFORM_UNIT_TO_PMU.get(platform, {})
    if unit in special:
        return special[unit]
    return UNIT_TO_PMU.get(unit, "uncore_" + unit.lower())


# ---- the kernel's uncore format attributes ----
# Facts of Linux arch/x86/events/intel/uncore_snbep.c (the
# DEFINE_UNCORE_FORMAT_ATTR field strings and the attribute arrays that list
# them), uncore_discovery.c (the generic format of discovered PMUs that
# uncore_snbep.c gives no format of their own) and
# arch/x86/events/amd/uncore.c: field name -> sysfs format string, per
# attribute array.  The check below (kernel_problem) and the sysfs fixtures
# (tests/platforms/perfmon_fixtures/make_fixtures.py) both read them.
# (format_attr_<var>: sysfs field name, format string), as the kernel's
# DEFINE_UNCORE_FORMAT_ATTR(var, name, format) lines define them.
_F = {
    "event": ("event", "config:0-7"),
    "event_ext": ("event", "config:0-7,21"),
    "umask": ("umask", "config:8-15"),
    "umask_ext": ("umask", "config:8-15,32-43,45-55"),
    "umask_ext2": ("umask", "config:8-15,32-57"),
    "umask_ext4": ("umask", "config:8-15,32-55"),
    "edge": ("edge", "config:18"),
    "tid_en": ("tid_en", "config:19"),
    "tid_en2": ("tid_en", "config:16"),
    "inv": ("inv", "config:23"),
    "thresh9": ("thresh", "config:24-35"),
    "thresh8": ("thresh", "config:24-31"),
    "thresh5": ("thresh", "config:24-28"),
    "occ_sel": ("occ_sel", "config:14-15"),
    "occ_invert": ("occ_invert", "config:30"),
    "occ_edge": ("occ_edge", "config:14-51"),
    "occ_edge_det": ("occ_edge_det", "config:31"),
    "ch_mask": ("ch_mask", "config:36-43"),
    "ch_mask2": ("ch_mask", "config:36-47"),
    "fc_mask": ("fc_mask", "config:44-46"),
    "fc_mask2": ("fc_mask", "config:48-50"),
    "filter_tid2": ("filter_tid", "config1:0"),
    "filter_tid3": ("filter_tid", "config1:0-5"),
    "filter_tid4": ("filter_tid", "config1:0-8"),
    "filter_tid5": ("filter_tid", "config1:0-9"),
    "filter_cid": ("filter_cid", "config1:5"),
    "filter_link2": ("filter_link", "config1:6-8"),
    "filter_nid2": ("filter_nid", "config1:32-47"),
    "filter_state3": ("filter_state", "config1:17-23"),
    "filter_state5": ("filter_state", "config1:17-26"),
    "filter_rem": ("filter_rem", "config1:32"),
    "filter_loc": ("filter_loc", "config1:33"),
    "filter_nm": ("filter_nm", "config1:36"),
    "filter_not_nm": ("filter_not_nm", "config1:37"),
    "filter_all_op": ("filter_all_op", "config1:35"),
    "filter_opc2": ("filter_opc", "config1:52-60"),
    "filter_opc_0": ("filter_opc0", "config1:41-50"),
    "filter_opc_1": ("filter_opc1", "config1:51-60"),
    "filter_nc": ("filter_nc", "config1:62"),
    "filter_c6": ("filter_c6", "config1:61"),
    "filter_isoc": ("filter_isoc", "config1:63"),
    "filter_band0": ("filter_band0", "config1:0-7"),
    "filter_band1": ("filter_band1", "config1:8-15"),
    "filter_band2": ("filter_band2", "config1:16-23"),
    "filter_band3": ("filter_band3", "config1:24-31"),
    "match_rds": ("match_rds", "config1:48-51"),
    "match_rnid30": ("match_rnid30", "config1:32-35"),
    "match_rnid4": ("match_rnid4", "config1:31"),
    "match_dnid": ("match_dnid", "config1:13-17"),
    "match_mc": ("match_mc", "config1:9-12"),
    "match_opc": ("match_opc", "config1:5-8"),
    "match_vnw": ("match_vnw", "config1:3-4"),
    "match0": ("match0", "config1:0-31"),
    "match1": ("match1", "config1:32-63"),
    "mask_rds": ("mask_rds", "config2:48-51"),
    "mask_rnid30": ("mask_rnid30", "config2:32-35"),
    "mask_rnid4": ("mask_rnid4", "config2:31"),
    "mask_dnid": ("mask_dnid", "config2:13-17"),
    "mask_mc": ("mask_mc", "config2:9-12"),
    "mask_opc": ("mask_opc", "config2:5-8"),
    "mask_vnw": ("mask_vnw", "config2:3-4"),
    "mask0": ("mask0", "config2:0-31"),
    "mask1": ("mask1", "config2:32-63"),
}


def _attrs(*names):
    """The sysfs format/ files of an attribute array: field -> string."""
    return {_F[n][0]: _F[n][1] for n in names}


# Attribute array -> fields, as the kernel source lists them.
KERNEL_ATTRS = {
    "snbep_uncore_formats_attr": _attrs("event", "umask", "edge", "inv",
                                        "thresh8"),
    "hswep_uncore_ubox_formats_attr": _attrs(
        "event", "umask", "edge", "inv", "thresh5", "filter_tid2",
        "filter_cid"),
    "hswep_uncore_cbox_formats_attr": _attrs(
        "event", "umask", "edge", "tid_en", "thresh8", "filter_tid3",
        "filter_link2", "filter_state3", "filter_nid2", "filter_opc2",
        "filter_nc", "filter_c6", "filter_isoc"),
    "hswep_uncore_sbox_formats_attr": _attrs("event", "umask", "edge",
                                             "tid_en", "inv", "thresh8"),
    "snbep_uncore_pcu_formats_attr": _attrs(
        "event", "occ_sel", "edge", "inv", "thresh5", "occ_invert",
        "occ_edge", "filter_band0", "filter_band1", "filter_band2",
        "filter_band3"),
    "snbep_uncore_qpi_formats_attr": _attrs(
        "event_ext", "umask", "edge", "inv", "thresh8", "match_rds",
        "match_rnid30", "match_rnid4", "match_dnid", "match_mc", "match_opc",
        "match_vnw", "match0", "match1", "mask_rds", "mask_rnid30",
        "mask_rnid4", "mask_dnid", "mask_mc", "mask_opc", "mask_vnw",
        "mask0", "mask1"),
    "ivbep_uncore_ubox_formats_attr": _attrs("event", "umask", "edge", "inv",
                                             "thresh5"),
    "ivbep_uncore_formats_attr": _attrs("event", "umask", "edge", "inv",
                                        "thresh8"),
    "skx_uncore_cha_formats_attr": _attrs(
        "event", "umask", "edge", "tid_en", "inv", "thresh8", "filter_tid4",
        "filter_state5", "filter_rem", "filter_loc", "filter_nm",
        "filter_all_op", "filter_not_nm", "filter_opc_0", "filter_opc_1",
        "filter_nc", "filter_isoc"),
    "skx_uncore_iio_formats_attr": _attrs("event", "umask", "edge", "inv",
                                          "thresh9", "ch_mask", "fc_mask"),
    "skx_uncore_formats_attr": _attrs("event", "umask", "edge", "inv",
                                      "thresh8"),
    "skx_uncore_pcu_formats_attr": _attrs(
        "event", "umask", "edge", "inv", "thresh8", "occ_invert",
        "occ_edge_det", "filter_band0", "filter_band1", "filter_band2",
        "filter_band3"),
    "skx_upi_uncore_formats_attr": _attrs("event", "umask_ext", "edge",
                                          "inv", "thresh8"),
    "snr_uncore_cha_formats_attr": _attrs("event", "umask_ext2", "edge",
                                          "tid_en", "inv", "thresh8",
                                          "filter_tid5"),
    "snr_uncore_iio_formats_attr": _attrs("event", "umask", "edge", "inv",
                                          "thresh9", "ch_mask2", "fc_mask2"),
    "icx_upi_uncore_formats_attr": _attrs("event", "umask_ext4", "edge",
                                          "inv", "thresh8"),
    "spr_uncore_cha_formats_attr": _attrs("event", "umask_ext4", "tid_en2",
                                          "edge", "inv", "thresh8",
                                          "filter_tid5"),
    "spr_uncore_raw_formats_attr": _attrs("event", "umask_ext4", "edge",
                                          "inv", "thresh8"),
    # uncore_discovery.c: the format of a discovered PMU that has none of
    # its own (SPR/GNR pcu, GNR ubox and b2hot).
    "generic_uncore_formats_attr": _attrs("event", "umask", "edge", "inv",
                                          "thresh8"),
}
# arch/x86/events/amd/uncore.c (its own format strings; the data-fabric
# event and umask widths depend on the family, and only the fields the
# tables use are listed: the kernel's L3 arrays hold more).
KERNEL_ATTRS.update({
    # Every family 17h and 19h CPU without PerfMonV2 (Zen 2 and Zen 3)
    # gets format_attr_event14.
    "amd_uncore_df_format_attr (family 17h/19h)": {
        "event": "config:0-7,32-35,59-60", "umask": "config:8-15"},
    "amd_uncore_df_format_attr (PerfMonV2)": {
        "event": "config:0-7,32-37", "umask": "config:8-15,24-27"},
    "amd_uncore_l3_format_attr": {"event": "config:0-7",
                                  "umask": "config:8-15"},
    "amd_uncore_umc_format_attr": {"event": "config:0-7",
                                   "rdwrmask": "config:8-9"},
})

_SNBEP_PCI = "snbep_uncore_formats_attr"
_SPR_RAW = "spr_uncore_raw_formats_attr"
_GENERIC = "generic_uncore_formats_attr"
_HSX_BDX = {
    "uncore_cbox": "hswep_uncore_cbox_formats_attr",
    "uncore_sbox": "hswep_uncore_sbox_formats_attr",
    "uncore_pcu": "snbep_uncore_pcu_formats_attr",
    "uncore_ha": _SNBEP_PCI, "uncore_imc": _SNBEP_PCI,
    "uncore_irp": _SNBEP_PCI, "uncore_r2pcie": _SNBEP_PCI,
    "uncore_r3qpi": _SNBEP_PCI,
    "uncore_qpi": "snbep_uncore_qpi_formats_attr",
}
_SKX = {
    "uncore_ubox": "ivbep_uncore_ubox_formats_attr",
    "uncore_cha": "skx_uncore_cha_formats_attr",
    "uncore_iio": "skx_uncore_iio_formats_attr",
    "uncore_irp": "skx_uncore_formats_attr",
    "uncore_pcu": "skx_uncore_pcu_formats_attr",
    "uncore_imc": "skx_uncore_formats_attr",
    "uncore_m2m": "skx_uncore_formats_attr",
    "uncore_upi": "skx_upi_uncore_formats_attr",
    "uncore_m2pcie": "skx_uncore_formats_attr",
    "uncore_m3upi": "skx_uncore_formats_attr",
}
_SPR = {
    "uncore_cha": "spr_uncore_cha_formats_attr",
    "uncore_iio": "snr_uncore_iio_formats_attr",
    "uncore_irp": _SPR_RAW, "uncore_m2pcie": _SPR_RAW,
    "uncore_pcu": _GENERIC, "uncore_imc": _SPR_RAW, "uncore_m2m": _SPR_RAW,
    "uncore_upi": _SPR_RAW, "uncore_m3upi": _SPR_RAW, "uncore_mdf": _SPR_RAW,
    "uncore_cxlcm": _SPR_RAW, "uncore_cxldp": _SPR_RAW,
    "uncore_hbm": _SPR_RAW,
}
# gnr_uncores in uncore_snbep.c names cha, iio, irp, pcu, ubox, imc,
# b2cmi, b2cxl and mdf_sbo; it ignores UPI and B2UPI
# (gnr_uncore_units_ignore) and leaves the other discovered types unnamed
# (uncore_type_<id>_<n>), so B2HOT, CXLCM, CXLDP and CHACMS events have no
# PMU of their name.
_GNR = {
    "uncore_cha": "spr_uncore_cha_formats_attr",
    "uncore_iio": "snr_uncore_iio_formats_attr",
    "uncore_irp": _SPR_RAW, "uncore_pcu": _GENERIC, "uncore_ubox": _GENERIC,
    "uncore_imc": _SPR_RAW, "uncore_b2cmi": _SPR_RAW, "uncore_b2cxl": _SPR_RAW,
    "uncore_mdf_sbo": _GENERIC,
}
_ZEN2 = {"amd_df": "amd_uncore_df_format_attr (family 17h/19h)",
         "amd_l3": "amd_uncore_l3_format_attr"}
_ZEN3 = _ZEN2
_ZEN4 = {"amd_df": "amd_uncore_df_format_attr (PerfMonV2)",
         "amd_l3": "amd_uncore_l3_format_attr",
         "amd_umc": "amd_uncore_umc_format_attr"}
# Platform -> kernel PMU prefix -> attribute array.  A PMU prefix a
# platform's table uses and this map lacks is one no kernel registers.
KERNEL_PMUS = {
    "haswellx": dict(_HSX_BDX,
                     uncore_ubox="hswep_uncore_ubox_formats_attr"),
    "broadwellx": dict(_HSX_BDX,
                       uncore_ubox="ivbep_uncore_ubox_formats_attr"),
    "skylakex": _SKX, "cascadelakex": _SKX,
    "icelakex": {
        "uncore_ubox": "ivbep_uncore_ubox_formats_attr",
        "uncore_cha": "snr_uncore_cha_formats_attr",
        "uncore_iio": "snr_uncore_iio_formats_attr",
        "uncore_irp": "ivbep_uncore_formats_attr",
        "uncore_m2pcie": "ivbep_uncore_formats_attr",
        "uncore_pcu": "skx_uncore_pcu_formats_attr",
        "uncore_m2m": "skx_uncore_formats_attr",
        "uncore_upi": "icx_upi_uncore_formats_attr",
        "uncore_m3upi": "skx_uncore_formats_attr",
        "uncore_imc": "skx_uncore_formats_attr",
    },
    "sapphirerapids": _SPR, "emeraldrapids": _SPR,
    "graniterapids": _GNR, "sierraforest": _GNR,
    "amdzen2": _ZEN2, "amdzen3": _ZEN3, "amdzen4": _ZEN4, "amdzen5": _ZEN4,
}


def kernel_formats(platform, pmu):
    """(attribute array name, {field: format string}) of `pmu` on
    `platform`, or None when no kernel registers that PMU there."""
    array = KERNEL_PMUS.get(platform, {}).get(pmu)
    return (array, KERNEL_ATTRS[array]) if array else None


def _field_bits(text):
    """"config:8-15,32-55" -> (word, [bit positions, low first])."""
    word, ranges = text.split(":")
    bits = []
    for r in ranges.split(","):
        lo, _, hi = r.partition("-")
        bits += range(int(lo), int(hi or lo) + 1)
    return word, bits


def kernel_problem(platform, e):
    """Why no kernel format of `e`'s PMU can open `e` on `platform` ("" when
    one can; None when the generator has no kernel facts for the platform,
    the hand tables)."""
    if platform not in KERNEL_PMUS:
        return None
    found = kernel_formats(platform, e["pmu"])
    if found is None:
        return "the kernel has no %s PMU" % e["pmu"]
    array, fields = found
    terms = [(e.get("event_term", "event"), e["event"])]
    if e["umask"]:
        terms.append(("umask", e["umask"]))
    for t in filter(None, e["terms"].split(",")):
        key, _, value = t.partition("=")
        terms.append((key, int(value, 0) if value else 1))
    for key, value in terms:
        if key in ("config", "config1", "config2"):
            # Raw words: every bit set must be one of the word's fields (the
            # kernel masks other bits off without a word).
            known = set()
            for text in fields.values():
                word, bits = _field_bits(text)
                if word == key:
                    known.update(bits)
            stray = [b for b in range(64) if value >> b & 1 and b not in known]
            if stray:
                return "%s=0x%x sets bits %s that no field of the kernel's " \
                    "%s format (%s) has" % (key, value,
                                           ",".join(map(str, stray)),
                                           e["pmu"], array)
            continue
        if key not in fields:
            return "the kernel's %s format (%s) has no %s field" % (
                e["pmu"], array, key)
        _, bits = _field_bits(fields[key])
        if value >> len(bits):
            return "%s=0x%x does not fit the kernel's %s field (%s, %d bits)" % (
                key, value, key, fields[key], len(bits))
    return ""


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
#  metrics in perf's syntax: (name, expr, scale unit, events)).  Zen 4's
#  dram_*_for_local_processor restate perf's amdzen4 metrics; Zen 5's
#  dram_*_local_or_remote are the SDK's own (perf's amdzen5 tables have no
#  such metric), built the same way from the Zen 5 data-fabric events, and
#  the platform's source says so.
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
     "Linux perf amdzen5 event list (facts restated); metrics "
     "dram_read_data_local_or_remote and dram_write_data_local_or_remote: "
     "the SDK's own, not perf's",
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


# Skylake-SP and Cascade Lake CHA filters: Intel writes FILTER_VALUE as the
# low 32 bits of the filter register pair, but the kernel's skx CHA format
# puts every filter field that value sets (filter_rem .. filter_isoc) in
# config1 bits 32-63 and writes config1's high half to FILTER1; perf shifts
# the value up by 32 (Linux commit 7a75c6c23a2e) and so do we.
CHA_FILTER_IN_HIGH_HALF = {"skylakex", "cascadelakex"}
# Sapphire Rapids and later IIO events: Intel's UMaskExt repeats the port
# mask (UMask bits 12-23) and the FC mask (bits 24-26) that PortMask and
# FCMask already give; the kernel's IIO format (snr_uncore_iio_formats_attr)
# has an 8-bit umask and separate ch_mask/fc_mask fields, and perf's own
# tables carry the 8-bit UMask only.
IIO_UMASK_REPEATS_MASKS = {"sapphirerapids", "emeraldrapids",
                           "graniterapids", "sierraforest"}


def intel_event(e, platform=""):
    name = e["EventName"]
    if not NAME_RE.match(name):
        raise SpecError("odd event name %r" % name)
    unit = e["Unit"]
    event = intval(e.get("EventCode")) | (intval(e.get("ExtSel")) << 8)
    umask = intval(e.get("UMask")) | (intval(e.get("UMaskExt")) << 8)
    if (platform in IIO_UMASK_REPEATS_MASKS and unit == "IIO" and
            umask > 0xff):
        port, fc = (umask >> 12) & 0xfff, (umask >> 24) & 0x7
        if (umask & ~(0xff | 0xfff << 12 | 0x7 << 24) or
                port != intval(e.get("PortMask")) or
                fc != intval(e.get("FCMask"))):
            raise SpecError("%s: %s: UMask 0x%x is not UMask | PortMask << 12"
                            " | FCMask << 24" % (platform, name, umask))
        umask &= 0xff
    terms = []
    pmu = unit_to_pmu(unit, platform)
    fmt = kernel_formats(platform, pmu)
    if (fmt and umask and "umask" not in fmt[1] and "occ_sel" in fmt[1] and
            not umask & ~0xc0):
        # Haswell-EP/Broadwell-EP PCU: no umask field; Intel's umask bits
        # 6-7 are the occupancy select (config:14-15), the kernel's occ_sel.
        terms.append("occ_sel=%s" % perf_hex(umask >> 6))
        umask = 0
    for key, term in (("PortMask", "ch_mask"), ("FCMask", "fc_mask"),
                      ("FILTER_VALUE", "config1")):
        v = intval(e.get(key))
        if v and key == "FILTER_VALUE" and unit == "CHA" and (
                platform in CHA_FILTER_IN_HIGH_HALF):
            # Intel's Filter1 register is the kernel's config1 bits 32-63;
            # any other filter would belong elsewhere.
            if not e.get("Filter", "").startswith("Filter1"):
                raise SpecError("%s: %s: FILTER_VALUE of filter %r, not "
                                "Filter1" % (platform, name, e.get("Filter")))
            v <<= 32
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
        "name": name, "unit": unit, "pmu": pmu, "event": event,
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


CHA_FILTER_RE = re.compile(
    r"(UNC_CHA_[A-Za-z0-9_.]+\\,config1\\=)(0x[0-9a-fA-F]+|\d+)")


def shift_cha_filters(expr):
    """A formula's "UNC_CHA_X\\,config1\\=V" with V moved to config1's high
    half (CHA_FILTER_IN_HIGH_HALF)."""
    return CHA_FILTER_RE.sub(
        lambda m: m.group(1) + perf_hex(int(m.group(2), 0) << 32), expr)


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
        events = [intel_event(e, name) for e in doc["Events"]]
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
            expr = m["MetricExpr"]
            if name in CHA_FILTER_IN_HIGH_HALF:
                expr = shift_cha_filters(expr)
            uncore, core = metric_events(expr, names)
            if not uncore:
                continue  # a core-only metric: not the uncore's business
            entry = {"name": m["MetricName"], "expr": expr,
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
        # The selector's term is written only where it is not "event" or
        # where the kernel's reason for refusing the event follows it.
        term = e.get("event_term", "event")
        refused = e.get("unopenable") or ""
        tail = ""
        if term != "event" or refused:
            tail = ", " + cpp_str(term)
        if refused:
            tail += ", " + cpp_str(refused)
        w("    {%s, %s, %s, 0x%x, 0x%x, %s, %s, CounterKind::%s, %s%s}," % (
            cpp_str(e["name"]), cpp_str(e["unit"]), cpp_str(e["pmu"]),
            e["event"], e["umask"], cpp_str(e["terms"]),
            cpp_str(e["counters"]), e["kind"],
            "true" if e["deprecated"] else "false", tail))
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
    parser.add_argument("--unopenable", action="store_true",
                        help="list the events no kernel format opens, one "
                             "per line, and write nothing")
    args = parser.parse_args(argv)

    if not os.path.isfile(os.path.join(args.spec_dir, "intel-perfmon",
                                       "mapfile.csv")):
        print("spec folder %s not found: skipping" % args.spec_dir,
              file=sys.stderr)
        return 77
    try:
        platforms = (load_intel(args.spec_dir) + load_hand() +
                     load_amd())
        for p in platforms:
            for e in p["events"]:
                e["unopenable"] = kernel_problem(p["name"], e) or ""
    except (SpecError, OSError, KeyError, ValueError) as e:
        print("gen_perfmon_platforms: %s" % e, file=sys.stderr)
        return 2
    if args.unopenable:
        for p in platforms:
            for e in p["events"]:
                reason = kernel_problem(p["name"], e)
                if reason:
                    print("%s %s: %s" % (p["name"], e["name"], reason))
        return 0
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
