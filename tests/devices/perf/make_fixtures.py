#!/usr/bin/env python3
"""Writes the sysfs fixture trees the perf backend's tests read:

  fixtures/ivt2s  a 2-socket IvyTown (8 CPUs, 10 cores per socket's worth of
                  CBos) with the kernel ivbep driver's PMUs, format strings,
                  cpumasks and aliases (arch/x86/events/intel/uncore_snbep.c;
                  notes/kernel-ivbep-facts.md), plus msr and power.
  fixtures/epyc   a 1-socket AMD machine with amd_df and amd_l3.
  fixtures/zen4x2 a 2-socket AMD Zen 4 (8 CPUs, two L3 complexes of two
                  CPUs per socket) with amd_l3, amd_df and amd_umc_N, their
                  format strings from arch/x86/events/amd/uncore.c (family
                  19h L3, PerfMonV2 UMC), cpumasks one CPU per L3 complex
                  (amd_l3), per socket (amd_df) and per socket's UMC
                  (amd_umc_N), plus msr.

Run it again after changing it; the trees are committed.
"""
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))

GENERIC = {"event": "config:0-7", "umask": "config:8-15", "edge": "config:18",
           "inv": "config:23", "thresh": "config:24-31"}
UBOX = dict(GENERIC, thresh="config:24-28")
CBOX = {"event": "config:0-7", "umask": "config:8-15", "edge": "config:18",
        "tid_en": "config:19", "thresh": "config:24-31",
        "filter_tid": "config1:0-4", "filter_link": "config1:5-8",
        "filter_state": "config1:17-22", "filter_nid": "config1:32-47",
        "filter_opc": "config1:52-60", "filter_c6": "config1:61",
        "filter_nc": "config1:62", "filter_isoc": "config1:63"}
PCU = {"event": "config:0-7", "occ_sel": "config:14-15", "edge": "config:18",
       "thresh": "config:24-28", "occ_invert": "config:30",
       "occ_edge": "config:14-51", "filter_band0": "config1:0-7",
       "filter_band1": "config1:8-15", "filter_band2": "config1:16-23",
       "filter_band3": "config1:24-31"}
QPI = {"event": "config:0-7,21", "umask": "config:8-15", "edge": "config:18",
       "thresh": "config:24-31",
       "match_rds": "config1:48-51", "match_rnid30": "config1:32-35",
       "match_rnid4": "config1:31", "match_dnid": "config1:13-17",
       "match_mc": "config1:9-12", "match_opc": "config1:5-8",
       "match_vnw": "config1:3-4", "match0": "config1:0-31",
       "match1": "config1:32-63",
       "mask_rds": "config2:48-51", "mask_rnid30": "config2:32-35",
       "mask_rnid4": "config2:31", "mask_dnid": "config2:13-17",
       "mask_mc": "config2:9-12", "mask_opc": "config2:5-8",
       "mask_vnw": "config2:3-4", "mask0": "config2:0-31",
       "mask1": "config2:32-63"}
IMC_EVENTS = {
    "clockticks": ("event=0xff,umask=0x00", None, None),
    "cas_count_read": ("event=0x04,umask=0x03", "6.103515625e-5", "MiB"),
    "cas_count_write": ("event=0x04,umask=0x0c", "6.103515625e-5", "MiB"),
}


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text + "\n")


def pmu(root, name, type_, formats, cpumask=None, events=None):
    d = os.path.join(root, "bus", "event_source", "devices", name)
    write(os.path.join(d, "type"), str(type_))
    if cpumask is not None:
        write(os.path.join(d, "cpumask"), cpumask)
    for field, text in formats.items():
        write(os.path.join(d, "format", field), text)
    for alias, (terms, scale, unit) in (events or {}).items():
        write(os.path.join(d, "events", alias), terms)
        if scale:
            write(os.path.join(d, "events", alias + ".scale"), scale)
        if unit:
            write(os.path.join(d, "events", alias + ".unit"), unit)


def cpus(root, packages):
    for cpu, pkg in enumerate(packages):
        write(os.path.join(root, "devices", "system", "cpu", "cpu%d" % cpu,
                           "topology", "physical_package_id"), str(pkg))


def ivt2s(root):
    cpus(root, [0, 0, 0, 0, 1, 1, 1, 1])
    mask = "0,4"
    next_type = [12]

    def add(name, formats, events=None):
        pmu(root, name, next_type[0], formats, mask, events)
        next_type[0] += 1

    add("uncore_ubox", UBOX)
    for i in range(10):  # a 10-core part: CBos 0-9
        add("uncore_cbox_%d" % i, CBOX)
    for i in range(2):
        add("uncore_ha_%d" % i, GENERIC)
    for i in range(8):
        add("uncore_imc_%d" % i, GENERIC, IMC_EVENTS)
    add("uncore_irp", GENERIC)
    add("uncore_pcu", PCU)
    for i in range(3):
        add("uncore_qpi_%d" % i, QPI)
    add("uncore_r2pcie", GENERIC)
    for i in range(2):
        add("uncore_r3qpi_%d" % i, GENERIC)
    pmu(root, "msr", 9, {"event": "config:0-63"}, None,
        {"tsc": ("event=0x00", None, None),
         "aperf": ("event=0x01", None, None),
         "mperf": ("event=0x02", None, None)})
    pmu(root, "power", 11, {"event": "config:0-7"}, "0,4",
        {"energy-pkg": ("event=0x02", "2.3283064365386962890625e-10",
                        "Joules"),
         "energy-ram": ("event=0x03", "2.3283064365386962890625e-10",
                        "Joules")})
    pmu(root, "software", 1, {}, None)


def epyc(root):
    cpus(root, [0, 0, 0, 0])
    pmu(root, "amd_df", 13, {"event": "config:0-7,32-35,59-60",
                             "umask": "config:8-15"}, "0")
    pmu(root, "amd_l3", 14, {"event": "config:0-7", "umask": "config:8-15"},
        "0")
    pmu(root, "msr", 9, {"event": "config:0-63"}, None,
        {"tsc": ("event=0x00", None, None)})


def zen4x2(root):
    cpus(root, [0, 0, 0, 0, 1, 1, 1, 1])
    pmu(root, "amd_l3", 14, {"event": "config:0-7", "umask": "config:8-15",
                             "coreid": "config:42-44",
                             "enallslices": "config:46",
                             "enallcores": "config:47",
                             "sliceid": "config:48-50",
                             "threadmask": "config:56-57"}, "0,2,4,6")
    pmu(root, "amd_df", 13, {"event": "config:0-7,32-35,59-60",
                             "umask": "config:8-15"}, "0,4")
    for i, mask in enumerate(("0", "4")):
        pmu(root, "amd_umc_%d" % i, 15 + i,
            {"event": "config:0-7", "rdwrmask": "config:8-9"}, mask)
    pmu(root, "msr", 9, {"event": "config:0-63"}, None,
        {"tsc": ("event=0x00", None, None)})


def main():
    for name, make in (("ivt2s", ivt2s), ("epyc", epyc),
                       ("zen4x2", zen4x2)):
        root = os.path.join(HERE, "fixtures", name)
        shutil.rmtree(root, ignore_errors=True)
        make(root)


if __name__ == "__main__":
    main()
