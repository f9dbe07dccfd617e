#!/usr/bin/env python3
"""Writes the sysfs fixture trees of the generated perf-only platforms
(tests/platforms/perfmon_plan_test.cc reads them):

  skx2s   Skylake-SP, 2 sockets: uncore_imc_0..5, uncore_cha_0..27
  spr2s   Sapphire Rapids, 2 sockets: uncore_imc_0..11 (with the kernel's
          cas_count_* aliases), uncore_imc_free_running_0..3, uncore_cha_0..59,
          uncore_upi_0..3
  gnr1s   Granite Rapids, 1 socket: uncore_imc_0..11
  zen4    AMD Zen 4, 1 socket: amd_umc_0..11, amd_df, amd_l3

Each PMU has `type`, `cpumask` (one CPU per socket) and `format/` files as
the kernel writes them (facts of arch/x86/events/intel/uncore_snbep.c and
arch/x86/events/amd/uncore.c); CPUs carry their package id.  Run it again
after changing it; the trees are committed.
"""
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))

GENERIC = {"event": "config:0-7", "umask": "config:8-15", "edge": "config:18",
           "inv": "config:23", "thresh": "config:24-31"}
SKX_CHA = dict(GENERIC, tid_en="config:19", filter_tid="config1:0-8",
               filter_state="config1:17-26", filter_opc="config1:9-17")
SPR_CHA = dict(GENERIC, umask="config:8-15,32-55", tid_en="config:16",
               filter_tid="config1:0-10")
SPR_UPI = dict(GENERIC, umask="config:8-15,32-57")
FREE_RUNNING = {"event": "config:0-7", "umask": "config:8-15"}
SPR_IMC_EVENTS = {
    "clockticks": ("event=0x01,umask=0x01", None, None),
    "cas_count_read": ("event=0x05,umask=0xcf", "6.103515625e-5", "MiB"),
    "cas_count_write": ("event=0x05,umask=0xf0", "6.103515625e-5", "MiB"),
}
FREE_RUNNING_EVENTS = {
    "dclk": ("event=0xff,umask=0x10", None, None),
    "read": ("event=0xff,umask=0x20", "6.103515625e-5", "MiB"),
    "write": ("event=0xff,umask=0x21", "6.103515625e-5", "MiB"),
}
AMD_UMC = {"event": "config:0-7", "rdwrmask": "config:8-9"}
AMD_DF = {"event": "config:0-7,32-37", "umask": "config:8-15,24-27"}
AMD_L3 = {"event": "config:0-7", "umask": "config:8-15"}


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text + "\n")


class Tree:
    def __init__(self, root, packages):
        self.root = root
        self.next_type = 20
        firsts = []
        for cpu, pkg in enumerate(packages):
            write(os.path.join(root, "devices", "system", "cpu",
                               "cpu%d" % cpu, "topology",
                               "physical_package_id"), str(pkg))
            if pkg == len(firsts):
                firsts.append(str(cpu))
        self.cpumask = ",".join(firsts)

    def pmu(self, name, formats, events=None):
        d = os.path.join(self.root, "bus", "event_source", "devices", name)
        write(os.path.join(d, "type"), str(self.next_type))
        self.next_type += 1
        write(os.path.join(d, "cpumask"), self.cpumask)
        for field, text in formats.items():
            write(os.path.join(d, "format", field), text)
        for alias, (terms, scale, unit) in (events or {}).items():
            write(os.path.join(d, "events", alias), terms)
            if scale:
                write(os.path.join(d, "events", alias + ".scale"), scale)
            if unit:
                write(os.path.join(d, "events", alias + ".unit"), unit)


def skx2s(root):
    t = Tree(root, [0, 0, 1, 1])
    for i in range(6):
        t.pmu("uncore_imc_%d" % i, GENERIC)
    for i in range(28):
        t.pmu("uncore_cha_%d" % i, SKX_CHA)


def spr2s(root):
    t = Tree(root, [0, 0, 0, 0, 1, 1, 1, 1])
    for i in range(12):
        t.pmu("uncore_imc_%d" % i, GENERIC, SPR_IMC_EVENTS)
    for i in range(4):
        t.pmu("uncore_imc_free_running_%d" % i, FREE_RUNNING,
              FREE_RUNNING_EVENTS)
    for i in range(60):
        t.pmu("uncore_cha_%d" % i, SPR_CHA)
    for i in range(4):
        t.pmu("uncore_upi_%d" % i, SPR_UPI)


def gnr1s(root):
    t = Tree(root, [0, 0])
    for i in range(12):
        t.pmu("uncore_imc_%d" % i, GENERIC)


def zen4(root):
    t = Tree(root, [0, 0, 0, 0])
    for i in range(12):
        t.pmu("amd_umc_%d" % i, AMD_UMC)
    t.pmu("amd_df", AMD_DF)
    t.pmu("amd_l3", AMD_L3)


def main():
    for name, make in (("skx2s", skx2s), ("spr2s", spr2s), ("gnr1s", gnr1s),
                       ("zen4", zen4)):
        root = os.path.join(HERE, name)
        shutil.rmtree(root, ignore_errors=True)
        make(root)


if __name__ == "__main__":
    main()
