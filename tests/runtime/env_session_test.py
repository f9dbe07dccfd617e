#!/usr/bin/env python3
"""A program with only UNCORE_REGION annotations, configured by UNCORE_*
environment variables: the report appears at exit, in every format."""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tools"))
import socket_list_cases  # noqa: E402

PROGRAM = None


def run(env, *args):
    full = {k: v for k, v in os.environ.items() if not k.startswith("UNCORE_")}
    full.update(env)
    return subprocess.run([PROGRAM, *args], capture_output=True, text=True,
                          env=full, timeout=120)


class EnvSessionTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def path(self, name):
        return os.path.join(self.dir.name, name)

    def test_json_report_at_exit(self):
        out = self.path("report.json")
        r = run({"UNCORE_EVENTS": "imc/CAS_COUNT.RD,cbo[0-1]/CLOCKTICKS",
                 "UNCORE_METRICS": "MEM_BW_TOTAL",
                 "UNCORE_BACKEND": "sim", "UNCORE_SOCKETS": "0-1",
                 "UNCORE_OUTPUT": out}, "4", "5")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "")
        with open(out, encoding="utf-8") as f:
            report = json.load(f)
        self.assertEqual(report["schema_version"], 1)
        self.assertEqual(report["backend"], "sim")
        self.assertTrue(report["simulated"])
        self.assertEqual(report["sockets"], [0, 1])
        specs = [e["canonical"] for e in report["events"]]
        self.assertIn("imc/CAS_COUNT.RD", specs)
        self.assertIn("cbo[0-1]/CLOCKTICKS", specs)
        regions = {r["path"]: r for r in report["regions"]}
        step = regions['step, "quoted"']
        inner = regions['step, "quoted"/inner']
        self.assertEqual(step["calls"], 4)
        self.assertEqual(inner["calls"], 4)
        self.assertEqual(inner["name"], "inner")
        self.assertGreaterEqual(step["wall_ns"], 4 * 10 * 1000 * 1000)
        cas = step["events"]["imc/CAS_COUNT.RD"]
        # The demo traffic model reads 2/3 of 10 GB/s in 64-byte lines.
        self.assertGreater(cas["total"], 0)
        self.assertEqual(len(cas["per_socket"]), 2)
        self.assertEqual(sum(cas["per_socket"]), cas["total"])
        self.assertEqual(cas["total"],
                         sum(i["value"] for i in cas["per_instance"]))
        self.assertLessEqual(cas["exclusive_total"], cas["total"])
        ticks = step["events"]["cbo[0-1]/CLOCKTICKS"]["total"]
        seconds = step["wall_ns"] / 1e9
        # 2 CBos x 2 sockets at the simulated 2 GHz UCLK, within the demo
        # model's 1 ms steps.
        self.assertAlmostEqual(ticks / (4 * 2e9 * seconds), 1.0, delta=0.3)
        bw = step["metrics"]["MEM_BW_TOTAL"]
        self.assertGreater(bw, 1e9)
        self.assertLess(bw, 100e9)

    def test_csv_and_table(self):
        out = self.path("report.csv")
        r = run({"UNCORE_EVENTS": "imc[0]/CAS_COUNT.WR",
                 "UNCORE_BACKEND": "sim", "UNCORE_OUTPUT": out}, "2", "1")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out, newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))
        header, body = rows[0], rows[1:]
        self.assertIn("region", header)
        names = {row[header.index("region")] for row in body}
        self.assertIn('step, "quoted"', names)
        r = run({"UNCORE_EVENTS": "imc[0]/CAS_COUNT.WR",
                 "UNCORE_BACKEND": "sim"}, "1", "1")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("SIMULATED", r.stderr)
        self.assertIn("inner", r.stderr)

    def test_no_variables_no_output(self):
        r = run({}, "1", "1")
        self.assertEqual(r.returncode, 0)
        self.assertEqual(r.stdout + r.stderr, "")

    def test_bad_configuration_is_one_line_and_the_program_runs(self):
        r = run({"UNCORE_EVENTS": "imc/CAS_COUNTX.RD",
                 "UNCORE_BACKEND": "sim"}, "1", "1")
        self.assertEqual(r.returncode, 0)
        # One message (the spec error points at the column on two more
        # lines).
        self.assertEqual(r.stderr.count("uncore:"), 1, r.stderr)
        self.assertTrue(r.stderr.startswith(
            "uncore: regions will not be measured: "), r.stderr)
        self.assertIn("did you mean CAS_COUNT", r.stderr)
        r = run({"UNCORE_EVENTS": "imc/CAS_COUNT.RD",
                 "UNCORE_SOCKETS": "zero"}, "1", "1")
        self.assertIn("UNCORE_SOCKETS", r.stderr)

    def test_auto_without_hardware_reports_why(self):
        out = self.path("auto.json")
        r = run({"UNCORE_EVENTS": "imc/CAS_COUNT.RD", "UNCORE_OUTPUT": out},
                "1", "1")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out, encoding="utf-8") as f:
            report = json.load(f)
        if report["backend"] != "off":
            self.skipTest("this machine has a usable backend: " +
                          report["backend"])
        self.assertEqual(report["regions"], [])
        self.assertEqual(len(report["warnings"]), 1)
        self.assertIn("direct:", report["warnings"][0])
        self.assertIn("uncore doctor", report["warnings"][0])

    def test_perf_msr_tsc_table(self):
        r = run({"UNCORE_EVENTS": "msr/tsc/", "UNCORE_BACKEND": "perf",
                 "UNCORE_SOCKETS": "0", "UNCORE_OUTPUT": "-"}, "2", "20")
        self.assertEqual(r.returncode, 0, r.stderr)
        if "regions will not be measured" in r.stderr:
            self.skipTest("perf cannot count msr/tsc/ here: " + r.stderr)
        self.assertIn("backend perf", r.stderr)
        self.assertIn("msr/tsc/", r.stderr)
        self.assertNotIn("SIMULATED", r.stderr)
        out = self.path("perf.json")
        r = run({"UNCORE_EVENTS": "msr/tsc/", "UNCORE_BACKEND": "perf",
                 "UNCORE_SOCKETS": "0", "UNCORE_OUTPUT": out}, "2", "20")
        with open(out, encoding="utf-8") as f:
            report = json.load(f)
        step = {x["path"]: x for x in report["regions"]}['step, "quoted"']
        tsc = step["events"]["msr/tsc/"]["total"]
        # The TSC ticks at a GHz-class rate: 40 ms of region is > 10^7.
        self.assertGreater(tsc / (step["wall_ns"] / 1e9), 1e8)
        self.assertEqual(step["events"]["msr/tsc/"]["per_instance"][0]
                         ["instance"], "msr")

    def test_socket_lists_match_uncore_stat(self):
        # The same lists as `uncore stat --sockets` (stat_doctor_test.py).
        every = self.path("every.json")
        r = run({"UNCORE_EVENTS": "imc/CAS_COUNT.RD", "UNCORE_BACKEND": "sim",
                 "UNCORE_OUTPUT": every}, "1", "1")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(every, encoding="utf-8") as f:
            all_sockets = json.load(f)["sockets"]
        for i, (text, sockets) in enumerate(socket_list_cases.ACCEPTED):
            with self.subTest(text=text):
                out = self.path("accepted%d.json" % i)
                r = run({"UNCORE_EVENTS": "imc/CAS_COUNT.RD",
                         "UNCORE_BACKEND": "sim", "UNCORE_SOCKETS": text,
                         "UNCORE_OUTPUT": out}, "1", "1")
                self.assertEqual(r.returncode, 0, r.stderr)
                with open(out, encoding="utf-8") as f:
                    report = json.load(f)
                self.assertEqual(report["sockets"],
                                 all_sockets if sockets is None else sockets)
        for i, (text, message) in enumerate(socket_list_cases.REFUSED):
            with self.subTest(text=text):
                out = self.path("refused%d.json" % i)
                r = run({"UNCORE_EVENTS": "imc/CAS_COUNT.RD",
                         "UNCORE_BACKEND": "sim", "UNCORE_SOCKETS": text,
                         "UNCORE_OUTPUT": out}, "1", "1")
                self.assertIn("UNCORE_SOCKETS: ", r.stderr)
                self.assertIn(message, r.stderr)
                self.assertFalse(os.path.exists(out), r.stderr)

    def test_backend_off(self):
        out = self.path("off.json")
        r = run({"UNCORE_EVENTS": "imc/CAS_COUNT.RD", "UNCORE_BACKEND": "off",
                 "UNCORE_OUTPUT": out}, "1", "1")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out, encoding="utf-8") as f:
            report = json.load(f)
        self.assertEqual(report["backend"], "off")
        self.assertEqual(report["regions"], [])


def main():
    global PROGRAM
    parser = argparse.ArgumentParser()
    parser.add_argument("--program", required=True)
    args, rest = parser.parse_known_args()
    PROGRAM = args.program
    unittest.main(argv=[sys.argv[0], *rest], verbosity=2)


if __name__ == "__main__":
    main()
