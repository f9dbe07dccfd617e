#!/usr/bin/env python3
"""Writes the sysfs fixture trees of the generated perf-only platforms
(tests/platforms/perfmon_plan_test.cc and tests/tools/perfmon_cli_test.py
read them) and SOURCES.md, which names the kernel source of every PMU's
format/ files:

  hsx2s   Haswell-EP, 2 sockets: uncore_ubox, uncore_pcu, uncore_cbox_0..17,
          uncore_ha_0..1, uncore_imc_0..7
  skx2s   Skylake-SP, 2 sockets: uncore_imc_0..5, uncore_cha_0..27
  spr2s   Sapphire Rapids, 2 sockets: uncore_imc_0..11,
          uncore_imc_free_running_0..3 (with the kernel's dclk, rpq_cycles and
          wpq_cycles aliases), uncore_cha_0..59, uncore_upi_0..3,
          uncore_iio_0..11, uncore_hbm_0..31
  gnr1s   Granite Rapids, 1 socket: uncore_imc_0..11, uncore_iio_0..11,
          uncore_cha_0..5
  zen4    AMD Zen 4, 1 socket: amd_umc_0..11, amd_df, amd_l3

Each PMU has `type`, `cpumask` (one CPU per socket) and `format/` files
exactly as the kernel writes them: the fields of one attribute array of
arch/x86/events/intel/uncore_snbep.c, uncore_discovery.c or
arch/x86/events/amd/uncore.c, taken from the generator's table of them
(tools/gen_perfmon_platforms.py, KERNEL_ATTRS), so the fixtures and the
generator's openability check read the same facts.  The kernel's event
aliases (events/) are written where a test needs them.  CPUs carry their
package id.  Run it again after changing it; the trees are committed.
"""
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(REPO, "tools"))
import gen_perfmon_platforms as gen  # noqa: E402

SNBEP = "arch/x86/events/intel/uncore_snbep.c"
DISCOVERY = "arch/x86/events/intel/uncore_discovery.c"
AMD = "arch/x86/events/amd/uncore.c"

# Event aliases the kernel defines (event_descs), as (terms, scale, unit).
HSWEP_IMC_EVENTS = {  # hswep_uncore_imc_events
    "clockticks": ("event=0x00,umask=0x00", None, None),
    "cas_count_read": ("event=0x04,umask=0x03", "6.103515625e-5", "MiB"),
    "cas_count_write": ("event=0x04,umask=0x0c", "6.103515625e-5", "MiB"),
}
FREE_RUNNING_EVENTS = {  # spr_uncore_imc_freerunning_events
    "dclk": ("event=0xff,umask=0x10", None, None),
    "rpq_cycles": ("event=0xff,umask=0x20", None, None),
    "wpq_cycles": ("event=0xff,umask=0x21", None, None),
}
# The free-running PMUs' format: skx_uncore_iio_freerunning_formats_attr.
FREE_RUNNING = ("skx_uncore_iio_freerunning_formats_attr",
                {"event": "config:0-7", "umask": "config:8-15"})


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text + "\n")


class Tree:
    def __init__(self, name, title, packages):
        self.name = name
        self.title = title
        self.root = os.path.join(HERE, name)
        self.next_type = 20
        self.sources = []  # (pmu instances, kernel file, attribute array)
        firsts = []
        for cpu, pkg in enumerate(packages):
            write(os.path.join(self.root, "devices", "system", "cpu",
                               "cpu%d" % cpu, "topology",
                               "physical_package_id"), str(pkg))
            if pkg == len(firsts):
                firsts.append(str(cpu))
        self.cpumask = ",".join(firsts)

    def pmus(self, prefix, count, platform=None, kernel_pmu=None,
             formats=None, events=None, source=SNBEP):
        """`count` instances <prefix>_0.. (one <prefix> when count is 0),
        their format/ files those of the kernel attribute array the
        generator maps `kernel_pmu` (default: prefix) to on `platform`, or
        the (array, fields) given."""
        if formats is None:
            array, fields = gen.kernel_formats(platform, kernel_pmu or prefix)
        else:
            array, fields = formats
        names = (["%s_%d" % (prefix, i) for i in range(count)] if count
                 else [prefix])
        for name in names:
            d = os.path.join(self.root, "bus", "event_source", "devices",
                             name)
            write(os.path.join(d, "type"), str(self.next_type))
            self.next_type += 1
            write(os.path.join(d, "cpumask"), self.cpumask)
            for field, text in fields.items():
                write(os.path.join(d, "format", field), text)
            for alias, (terms, scale, unit) in (events or {}).items():
                write(os.path.join(d, "events", alias), terms)
                if scale:
                    write(os.path.join(d, "events", alias + ".scale"), scale)
                if unit:
                    write(os.path.join(d, "events", alias + ".unit"), unit)
        shown = names[0] if len(names) == 1 else "%s..%s" % (names[0],
                                                            names[-1])
        self.sources.append((shown, source, array))


def hsx2s():
    t = Tree("hsx2s", "Haswell-EP, 2 sockets", [0, 0, 1, 1])
    t.pmus("uncore_ubox", 0, "haswellx")
    t.pmus("uncore_pcu", 0, "haswellx")
    t.pmus("uncore_cbox", 18, "haswellx")
    t.pmus("uncore_ha", 2, "haswellx")
    t.pmus("uncore_imc", 8, "haswellx", events=HSWEP_IMC_EVENTS)
    return t


def skx2s():
    t = Tree("skx2s", "Skylake-SP, 2 sockets", [0, 0, 1, 1])
    t.pmus("uncore_imc", 6, "skylakex", events=HSWEP_IMC_EVENTS)
    t.pmus("uncore_cha", 28, "skylakex")
    return t


def spr2s():
    t = Tree("spr2s", "Sapphire Rapids, 2 sockets",
             [0, 0, 0, 0, 1, 1, 1, 1])
    t.pmus("uncore_imc", 12, "sapphirerapids")
    t.pmus("uncore_imc_free_running", 4, formats=FREE_RUNNING,
           events=FREE_RUNNING_EVENTS)
    t.pmus("uncore_cha", 60, "sapphirerapids")
    t.pmus("uncore_upi", 4, "sapphirerapids")
    t.pmus("uncore_iio", 12, "sapphirerapids")
    t.pmus("uncore_hbm", 32, "sapphirerapids")
    return t


def gnr1s():
    t = Tree("gnr1s", "Granite Rapids, 1 socket", [0, 0])
    t.pmus("uncore_imc", 12, "graniterapids")
    t.pmus("uncore_iio", 12, "graniterapids")
    t.pmus("uncore_cha", 6, "graniterapids")
    return t


def zen4():
    t = Tree("zen4", "AMD Zen 4, 1 socket", [0, 0, 0, 0])
    t.pmus("amd_umc", 12, "amdzen4", source=AMD)
    t.pmus("amd_df", 0, "amdzen4", source=AMD)
    t.pmus("amd_l3", 0, "amdzen4", source=AMD)
    return t


def main():
    lines = [
        "# Where each fixture PMU's format/ files come from",
        "",
        "Written by make_fixtures.py (do not edit): every PMU's `format/` "
        "files are the",
        "fields of one attribute array of the Linux kernel source "
        "(facts only; the",
        "strings are in tools/gen_perfmon_platforms.py, KERNEL_ATTRS). "
        "`generic_uncore_formats_attr`",
        "is the format uncore_discovery.c gives a discovered PMU that "
        "uncore_snbep.c",
        "names no format for.",
        "",
        "| tree | PMUs | kernel file | attribute array |",
        "|---|---|---|---|",
    ]
    for make in (hsx2s, skx2s, spr2s, gnr1s, zen4):
        shutil.rmtree(os.path.join(HERE, make.__name__), ignore_errors=True)
        t = make()
        for shown, source, array in t.sources:
            if array == "generic_uncore_formats_attr":
                source = DISCOVERY
            lines.append("| %s (%s) | %s | %s | `%s` |" % (
                t.name, t.title, shown, source, array))
    write(os.path.join(HERE, "SOURCES.md"), "\n".join(lines))


if __name__ == "__main__":
    main()
