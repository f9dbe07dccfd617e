#!/usr/bin/env python3
"""End-to-end tests of the `uncore` CLI: list, describe, errors."""
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "testing"))
import harness  # noqa: E402

UNCORE = None


def run(*args):
    return harness.run([UNCORE, *args], env=harness.environment(), timeout=60,
                       show_failure=False)


class ListTest(unittest.TestCase):
    def test_list_imc_gives_manual_encodings(self):
        r = run("list", "imc")
        self.assertEqual(r.returncode, 0, r.stderr)
        line = next(l for l in r.stdout.splitlines()
                    if l.split() and l.split()[0] == "CAS_COUNT.RD")
        self.assertIn("0x04", line)
        self.assertIn("0x03", line)
        self.assertIn("0x00400304", line)
        self.assertIn("fixed counter imc/DCLK", r.stdout)
        self.assertIn("imc.MEM_BW_READS", r.stdout)
        self.assertNotIn("LLC_LOOKUP", r.stdout)

    def test_list_json(self):
        r = run("list", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = json.loads(r.stdout)
        self.assertGreater(len(rows), 1000)
        for row in rows:
            for key in ("box", "event", "umask", "code", "umask_value",
                        "counters"):
                self.assertIn(key, row)
        cas = [x for x in rows if x["box"] == "imc" and
               x["event"] == "CAS_COUNT" and x["umask"] == "RD"]
        self.assertEqual(len(cas), 1)
        self.assertEqual(cas[0]["code"], 4)
        self.assertEqual(cas[0]["umask_value"], 3)
        self.assertEqual(cas[0]["counters"], [0, 1, 2, 3])
        no_umask = [x for x in rows if x["umask"] is None]
        self.assertTrue(no_umask)
        self.assertTrue(all(x["umask_value"] is None for x in no_umask))

    def test_list_pattern_and_metrics_json(self):
        r = run("list", "tor_inserts", "--json")
        rows = json.loads(r.stdout)
        self.assertTrue(rows)
        self.assertTrue(all(x["event"] == "TOR_INSERTS" for x in rows))
        m = json.loads(run("list", "--metrics", "--json").stdout)
        self.assertEqual(len(m), 93)

    def test_list_nothing_matches(self):
        r = run("list", "no-such-thing-anywhere")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("nothing matches", r.stderr)


class DescribeTest(unittest.TestCase):
    def test_llc_lookup_filter_state(self):
        r = run("describe", "cbo/LLC_LOOKUP.DATA_READ:filter_state=0x1f")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("0x00400334", r.stdout)
        self.assertIn("0x003e0000", r.stdout)
        self.assertIn("filter_state=0x1f", r.stdout)
        self.assertIn("MSR 0xd14", r.stdout)   # CBo0 FILTER0
        self.assertIn("MSR 0xd10", r.stdout)   # CBo0 CTL0
        self.assertIn("MSR 0xed4", r.stdout)   # CBo14 FILTER0

    def test_describe_json(self):
        r = run("describe", "cbo[3]/LLC_VICTIMS.M_STATE", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        d = json.loads(r.stdout)
        self.assertEqual(d["control"], 0x00400137)
        self.assertEqual(d["instances"], [3])
        locations = [w["location"] for w in d["registers"]]
        self.assertIn("MSR 0xd70", locations)  # CBo 3 CTL0, manual golden

    def test_describe_pci_box(self):
        r = run("describe", "imc[0]/CAS_COUNT.RD")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("+0xd8", r.stdout)       # channel control 0
        self.assertIn("8086:0eb4", r.stdout)   # iMC0 channel 0

    def test_describe_metric(self):
        r = run("describe", "metric/MEM_BW_TOTAL")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("imc/CAS_COUNT.RD", r.stdout)
        self.assertIn("imc/CAS_COUNT.WR", r.stdout)
        d = json.loads(run("describe", "MEM_BW_READS", "--json").stdout)
        self.assertEqual(d["metric"], "MEM_BW_READS")
        self.assertEqual(d["events"][0]["control"], 0x00400304)

    def test_describe_perf_event(self):
        r = run("describe", "msr/tsc/")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("perf backend", r.stdout)

    def test_describe_registers_llc_victims(self):
        r = run("describe", "--registers", "cbo[3]/LLC_VICTIMS.M_STATE")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("step  register", r.stdout)
        self.assertIn("0x00400137  b/c: event [0]", r.stdout)
        j = run("describe", "--registers", "--json",
                "cbo[3]/LLC_VICTIMS.M_STATE")
        got = [(x["register"], x["location"], x["value"])
               for x in json.loads(j.stdout)]
        self.assertEqual(got, [
            ("U_MSR_PMON_GLOBAL_CTL (socket 0)", "MSR 0x0c00", "0x80000000"),
            ("Cn_MSR_PMON_BOX_CTL (CBo3)", "MSR 0x0d64", "0x00030003"),
            ("Cn_MSR_PMON_BOX_FILTER (CBo3)", "MSR 0x0d74", "0x00000000"),
            ("Cn_MSR_PMON_BOX_FILTER1 (CBo3)", "MSR 0x0d7a", "0x00000000"),
            ("Cn_MSR_PMON_CTL0 (CBo3)", "MSR 0x0d70", "0x00400137"),
            ("Cn_MSR_PMON_CTR0 (CBo3)", "MSR 0x0d76", "0x00000000"),
            ("U_MSR_PMON_GLOBAL_CTL (socket 0)", "MSR 0x0c00", "0x20000000"),
        ])

    def test_describe_registers_json_pci_and_metric(self):
        r = run("describe", "--registers", "--json", "imc[0]/CAS_COUNT.RD")
        self.assertEqual(r.returncode, 0, r.stderr)
        steps = json.loads(r.stdout)
        self.assertEqual([s["step"] for s in steps],
                         list(range(1, len(steps) + 1)))
        ctl = [s for s in steps if s["register"].startswith(
            "MC_CHy_PCI_PMON_CTL0 (iMC0 channel 0)")]
        self.assertEqual(len(ctl), 1)
        self.assertEqual(ctl[0]["value"], "0x00400304")
        self.assertIn("0000:7f:10.4", ctl[0]["location"])
        # A 48-bit PCI counter is cleared as two dwords.
        ctr = [s["register"] for s in steps if "CTR0" in s["register"]]
        self.assertEqual(ctr, ["MC_CHy_PCI_PMON_CTR0 low (iMC0 channel 0)",
                               "MC_CHy_PCI_PMON_CTR0 high (iMC0 channel 0)"])
        m = run("describe", "--registers", "metric/MEM_BW_READS")
        self.assertEqual(m.returncode, 0, m.stderr)
        # 2 controllers x 4 channels.
        self.assertEqual(m.stdout.count("0x00400304"), 8)
        bad = run("describe", "--registers", "msr/tsc/")
        self.assertEqual(bad.returncode, 2)
        self.assertIn("perf backend", bad.stderr)

    def test_describe_registers_xeon7500(self):
        # The model: the S-Box match/mask sequence and the C-Boxes at their
        # irregular addresses (10 on Westmere-EX).
        r = run("describe", "--platform", "nehalemex", "--registers")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("S-Box match/mask sequence", r.stdout)
        self.assertIn("a) S0_MSR_MM_CFG 0xE48 <- 0 (bit 63 = 0)", r.stdout)
        self.assertIn("d) S1_MSR_MM_CFG 0xE58 <- 1 << 63", r.stdout)
        self.assertIn("uncore_cbox_3  0xDC0", r.stdout)
        self.assertNotIn("uncore_cbox_8", r.stdout)
        w = run("describe", "--platform", "wsmex", "--registers")
        self.assertEqual(w.returncode, 0, w.stderr)
        self.assertIn("uncore_cbox_9  0xFC0", w.stdout)
        # An event by the vendor's name with terms, as sessions take it, and
        # in the kernel's syntax: the engine's writes, steps a-d in order.
        for spec in ("sbox/TO_R_PROG_EV:match=0x1,mask=0x3",
                     "uncore_sbox_0/event=0x0,match=0x1,mask=0x3/"):
            e = run("describe", "--platform", "nehalemex", "--registers",
                    spec)
            self.assertEqual(e.returncode, 0, e.stderr)
            # The listing IvyTown's writes use: step, register, location
            # ("MSR 0x0e48"), value (0x and at least 8 digits), why.
            self.assertIn("step  register", e.stdout)
            s0 = [l.split() for l in e.stdout.splitlines()
                  if l.split()[1:2] and l.split()[1].startswith("S0_MSR_")]
            got = [(x[1], x[2] + " " + x[3], x[4]) for x in s0]
            self.assertEqual(got, [
                ("S0_MSR_PMON_GLOBAL_CTL", "MSR 0x0c40", "0x00000000"),
                ("S0_MSR_PMON_CTL0", "MSR 0x0c50", "0x00000000"),
                ("S0_MSR_PMON_CTR0", "MSR 0x0c51", "0x00000000"),
                ("S0_MSR_MM_CFG", "MSR 0x0e48", "0x00000000"),
                ("S0_MSR_MATCH", "MSR 0x0e49", "0x00000001"),
                ("S0_MSR_MASK", "MSR 0x0e4a", "0x00000003"),
                ("S0_MSR_PMON_CTL0", "MSR 0x0c50", "0x00400000"),
                ("S0_MSR_MM_CFG", "MSR 0x0e48", "0x8000000000000000"),
                ("S0_MSR_PMON_GLOBAL_CTL", "MSR 0x0c40", "0x00000001")],
                spec)
            self.assertIn("start counting: set en_all",
                          e.stdout.splitlines()[-1])
            # The same writes as JSON, in the same format.
            j = run("describe", "--platform", "nehalemex", "--registers",
                    "--json", spec)
            self.assertEqual(j.returncode, 0, j.stderr)
            steps = json.loads(j.stdout)
            self.assertEqual([s["step"] for s in steps],
                             list(range(1, len(steps) + 1)))
            self.assertEqual(len(steps), len(
                [l for l in e.stdout.splitlines() if "  MSR 0x" in l]))
            got = [(s["register"], s["space"], int(s["address"], 16),
                    int(s["value"], 16)) for s in steps
                   if s["register"].startswith("S0_MSR_")]
            self.assertEqual(got, [
                ("S0_MSR_PMON_GLOBAL_CTL", "MSR", 0xC40, 0),
                ("S0_MSR_PMON_CTL0", "MSR", 0xC50, 0),
                ("S0_MSR_PMON_CTR0", "MSR", 0xC51, 0),
                ("S0_MSR_MM_CFG", "MSR", 0xE48, 0),
                ("S0_MSR_MATCH", "MSR", 0xE49, 0x1),
                ("S0_MSR_MASK", "MSR", 0xE4A, 0x3),
                ("S0_MSR_PMON_CTL0", "MSR", 0xC50, 0x400000),
                ("S0_MSR_MM_CFG", "MSR", 0xE48, 1 << 63),
                ("S0_MSR_PMON_GLOBAL_CTL", "MSR", 0xC40, 0x1)], spec)
            self.assertEqual(steps[-1]["location"], "MSR 0x0c00")
            self.assertEqual(steps[-1]["why"], "start counting: set en_all")
        # Westmere-EX too: the W-Box fixed counter, enabled by GLOBAL_CTL
        # bit 31.
        w = run("describe", "--platform", "westmereex", "--registers",
                "--json", "wbox/UNCORE_CLOCK")
        self.assertEqual(w.returncode, 0, w.stderr)
        got = [(s["register"], int(s["address"], 16), s["value"])
               for s in json.loads(w.stdout)]
        self.assertIn(("W_MSR_PMON_FIXED_CTR_CTL", 0x395, "0x00000001"), got)
        self.assertEqual(got[-2], ("W_MSR_PMON_GLOBAL_CTL", 0xC80,
                                   "0x80000000"))
        # The model without a SPEC is text only.
        m = run("describe", "--platform", "nehalemex", "--registers",
                "--json")
        self.assertEqual(m.returncode, 2)
        self.assertIn("--json lists the writes of a SPEC", m.stderr)
        bad = run("describe", "--platform", "nehalemex", "--registers",
                  "sbox/NO_SUCH_EVENT")
        self.assertEqual(bad.returncode, 2)
        self.assertIn("uncore list --platform nehalemex", bad.stderr)

    def test_describe_says_what_perf_would_lose(self):
        # decisions.md #32/#33: the kernel's driver programs the PCU band
        # filter only for FREQ_BAND0..3_CYCLES, and knows no counter
        # restriction for R2PCIe RxR_OCCUPANCY (manual: counter 0).
        r = run("describe", "pcu/DEMOTIONS_CORE0:filter_band0=0x3")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("perf       perf would lose filter_band0", r.stdout)
        d = json.loads(run("describe", "r2pcie/RxR_OCCUPANCY.DRS",
                           "--json").stdout)
        self.assertEqual(len(d["perf_caveats"]), 1)
        self.assertIn("allows only counter 0", d["perf_caveats"][0])
        d = json.loads(run("describe", "imc/CAS_COUNT.RD", "--json").stdout)
        self.assertEqual(d["perf_caveats"], [])

    def test_describe_ha_occupancy_names_q_occ_rst(self):
        r = run("describe", "ha[0]/BT_OCCUPANCY.LOCAL")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("direct     writes the control as 0x00410143, with "
                      "q_occ_rst", r.stdout)
        self.assertIn("perf       the manual asks for q_occ_rst", r.stdout)

    def test_inv_is_refused_with_the_reason(self):
        r = run("describe", "cbo/CLOCKTICKS:inv:thresh=1")
        self.assertEqual(r.returncode, 2)
        self.assertIn("bit 23 of its counter control is reserved", r.stderr)
        self.assertIn("cbo/CLOCKTICKS:thresh=N", r.stderr)

    def test_bad_spec_fails_with_position_and_suggestion(self):
        r = run("describe", "cbo/LLC_LOKUP.DATA_READ")
        self.assertEqual(r.returncode, 2)
        self.assertIn("column 5", r.stderr)
        self.assertIn("LLC_LOOKUP", r.stderr)
        self.assertEqual(r.stdout, "")

    def test_bad_arguments(self):
        self.assertEqual(run().returncode, 2)
        self.assertEqual(run("frobnicate").returncode, 2)
        self.assertEqual(run("describe").returncode, 2)
        self.assertEqual(run("describe", "a", "b").returncode, 2)
        self.assertEqual(run("list", "--bogus").returncode, 2)
        self.assertEqual(run("help").returncode, 0)


class OptionsTest(unittest.TestCase):
    def test_help_per_command(self):
        for command, options in (
                ("list", ["PATTERN", "--json", "--metrics"]),
                ("describe", ["SPEC", "--json", "--registers"]),
                ("stat", ["-e,--events", "-- COMMAND"]),
                ("doctor", ["--json", "--sysfs"])):
            for spelling in ([command, "--help"], [command, "-h"],
                             ["help", command]):
                with self.subTest(args=spelling):
                    r = run(*spelling)
                    self.assertEqual(r.returncode, 0, r.stderr)
                    self.assertTrue(r.stdout.startswith(
                        "usage: uncore " + command), r.stdout)
                    for option in options:
                        self.assertIn(option, r.stdout)
                    self.assertEqual(r.stderr, "")

    def test_top_level_help(self):
        for args in (["help"], ["--help"], ["-h"]):
            with self.subTest(args=args):
                r = run(*args)
                self.assertEqual(r.returncode, 0, r.stderr)
                for command in ("list", "describe", "stat", "doctor"):
                    self.assertIn("uncore " + command, r.stdout)
        r = run()
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stdout, "")
        self.assertIn("usage: uncore COMMAND", r.stderr)

    def test_usage_errors_say_what_and_where_the_usage_is(self):
        cases = [
            (["frobnicate"], "unknown command 'frobnicate'"),
            (["list", "--bogus"], "uncore list: unknown option '--bogus'"),
            (["list", "imc", "cbo"], "one PATTERN at most"),
            (["describe"], "SPEC is required"),
            (["describe", "a", "b"], "one SPEC at a time"),
            (["help", "nope"], "unknown command 'nope'"),
        ]
        for args, message in cases:
            with self.subTest(args=args):
                r = run(*args)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn(message, r.stderr)
                self.assertIn("--help shows the usage", r.stderr)
                self.assertEqual(r.stdout, "")

    def test_flags_anywhere(self):
        a = run("list", "--json", "--metrics", "imc")
        b = run("list", "imc", "--metrics", "--json")
        self.assertEqual(a.returncode, 0, a.stderr)
        self.assertEqual(a.stdout, b.stdout)
        d = run("describe", "--json", "--registers", "imc[0]/CAS_COUNT.RD")
        e = run("describe", "imc[0]/CAS_COUNT.RD", "--registers", "--json")
        self.assertEqual(d.returncode, 0, d.stderr)
        self.assertEqual(d.stdout, e.stdout)

    def test_tables_are_aligned(self):
        r = run("list", "imc")
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        header = next(l for l in lines if l.split()[:1] == ["EVENT.UMASK"])
        start = lines.index(header)
        rows = []
        for line in lines[start + 1:]:
            if not line.strip():
                break
            rows.append(line)
        self.assertGreater(len(rows), 5)
        # Right-aligned columns end where their header ends.
        for column in ("code", "umask", "control", "counters"):
            end = header.index(column) + len(column)
            for row in rows:
                self.assertNotEqual(row[end - 1], " ", (column, row))
                self.assertTrue(end == len(row) or row[end] == " ",
                                (column, row))
        self.assertFalse(any(l.endswith(" ") for l in lines))


if __name__ == "__main__":
    harness.unittest_main("uncore", globals())
