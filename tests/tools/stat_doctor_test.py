#!/usr/bin/env python3
"""End-to-end tests of `uncore stat` and `uncore doctor`."""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import socket_list_cases  # noqa: E402

sys.path.insert(0, os.path.join(HERE, "..", "testing"))
import harness  # noqa: E402

UNCORE = None
REGISTER_FIXTURES = os.path.join(HERE, "..", "machine", "fixtures")
PERF_FIXTURES = os.path.join(HERE, "..", "devices", "perf", "fixtures")
PMU_DIR = "/sys/bus/event_source/devices"

# An interval line: the time in seconds, then the columns.
INTERVAL_LINE = re.compile(r"^\s+(\d+\.\d{6})\s+(\S.*)$")


def run(*args, env=None):
    return harness.run([UNCORE, *args], env=env, timeout=60,
                       show_failure=False)


def cpuinfo_field(name):
    with open("/proc/cpuinfo") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key.strip() == name:
                return value.strip()
    return None


def machine_is_ivytown():
    return (cpuinfo_field("vendor_id") == "GenuineIntel" and
            cpuinfo_field("cpu family") == "6" and
            cpuinfo_field("model") == "62")


def uncore_pmus():
    if not os.path.isdir(PMU_DIR):
        return []
    return sorted(n for n in os.listdir(PMU_DIR) if n.startswith("uncore_"))


def cap_eff():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("CapEff:"):
                return int(line.split()[1], 16)
    return None


class StatTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="uncore_stat_test")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.dir, name)

    def test_sim_counts_the_command_into_json(self):
        out = self.path("out.json")
        r = run("stat", "-e", "imc/CAS_COUNT.RD", "-M", "MEM_BW_TOTAL",
                "--backend", "sim", "-o", out, "--", "sleep", "0.2")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("SIMULATED", r.stderr)
        with open(out) as f:
            d = json.load(f)
        self.assertEqual(d["backend"], "sim")
        self.assertIs(d["simulated"], True)
        regions = [x for x in d["regions"] if x["name"] == "sleep"]
        self.assertEqual(len(regions), 1, d["regions"])
        region = regions[0]
        self.assertEqual(region["calls"], 1)
        self.assertGreaterEqual(region["wall_ns"], 200_000_000)
        self.assertLess(region["wall_ns"], 10_000_000_000)
        self.assertGreater(region["events"]["imc/CAS_COUNT.RD"]["total"], 0)
        # The metric is evaluated over the region (the demo model: 10 GB/s).
        bw = region["metrics"]["MEM_BW_TOTAL"]
        self.assertIsNotNone(bw)
        self.assertGreater(bw, 1e9)
        self.assertLess(bw, 100e9)

    def test_metric_given_as_an_event(self):
        out = self.path("m.json")
        r = run("stat", "-e", "metric/MEM_BW_TOTAL", "--backend", "sim",
                "-o", out, "--", "true")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            d = json.load(f)
        self.assertEqual([m["name"] for m in d["metrics"]], ["MEM_BW_TOTAL"])
        specs = {e["canonical"]: e["from_metric"] for e in d["events"]}
        self.assertEqual(specs, {"imc/CAS_COUNT.RD": True,
                                 "imc/CAS_COUNT.WR": True})
        self.assertEqual(d["regions"][0]["name"], "true")

    def test_spec_list_with_commas_and_csv(self):
        out = self.path("out.csv")
        r = run("stat", "-e",
                "imc/CAS_COUNT.RD,cbo/LLC_LOOKUP.DATA_READ:filter_state=0x1f",
                "--backend", "sim", "-o", out, "--", "true")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out, newline="") as f:
            text = f.read()
        self.assertTrue(text.startswith("region,path,parent,depth,calls,"))
        self.assertIn("imc/CAS_COUNT.RD", text)
        self.assertIn("cbo/LLC_LOOKUP.DATA_READ:filter_state=0x1f", text)

    def test_default_output_is_the_table_on_stderr(self):
        r = run("stat", "-e", "imc/CAS_COUNT.RD", "--backend", "sim", "--",
                "sh", "-c", "echo from-the-command")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "from-the-command\n")
        self.assertIn("uncore report: platform ivytown, backend sim", r.stderr)
        self.assertIn("imc/CAS_COUNT.RD", r.stderr)
        self.assertIn("seconds time elapsed", r.stderr)
        row = [l for l in r.stderr.splitlines() if l.startswith("sh ")]
        self.assertEqual(len(row), 1, r.stderr)
        self.assertEqual(row[0].split()[1], "1")  # calls

    def test_exit_status_is_passed_through(self):
        r = run("stat", "-e", "imc/CAS_COUNT.RD", "--backend", "sim", "--",
                "sh", "-c", "exit 3")
        self.assertEqual(r.returncode, 3, r.stderr)
        r = run("stat", "-e", "imc/CAS_COUNT.RD", "--backend", "sim", "--",
                "sh", "-c", "kill -TERM $$")
        self.assertEqual(r.returncode, 128 + 15, r.stderr)
        self.assertIn("killed by signal 15", r.stderr)
        # The report is still written.
        self.assertIn("uncore report:", r.stderr)

    def test_missing_command_is_127_and_writes_no_report(self):
        out = self.path("never.json")
        r = run("stat", "-e", "imc/CAS_COUNT.RD", "--backend", "sim", "-o",
                out, "--", "/nonexistent/uncore-no-such-command", "x")
        self.assertEqual(r.returncode, 127, r.stderr)
        self.assertIn("cannot run '/nonexistent/uncore-no-such-command'",
                      r.stderr)
        self.assertIn("No such file or directory", r.stderr)
        self.assertFalse(os.path.exists(out))

    def test_report_that_cannot_be_written_is_125(self):
        if not os.access("/dev/full", os.W_OK):
            self.skipTest("no /dev/full")
        r = run("stat", "-e", "imc/CAS_COUNT.RD", "--backend", "sim", "-o",
                "/dev/full", "--", "true")
        self.assertEqual(r.returncode, 125, r.stderr)
        self.assertIn("uncore stat: the report is lost: ", r.stderr)
        self.assertIn("'/dev/full'", r.stderr)
        self.assertIn("No space left on device", r.stderr)
        # A command that failed keeps its own status.
        r = run("stat", "-e", "imc/CAS_COUNT.RD", "--backend", "sim", "-o",
                "/dev/full", "--", "sh", "-c", "exit 3")
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertIn("the report is lost", r.stderr)

    def test_outputs_that_name_one_file_are_usage_errors(self):
        # Issue 36, R8: -o X --trace X wrote the report over the trace.
        out = self.path("x.json")
        os.symlink(out, self.path("link.json"))
        for args in (["-o", out, "--trace", out],
                     ["-o", out, "--trace", self.path("./x.json")],
                     ["-o", self.path("link.json"), "--trace", out],
                     ["-o", out + "," + out]):
            with self.subTest(args=args):
                r = run("stat", "-e", "imc/CAS_COUNT.RD", "--backend", "sim",
                        *args, "--", "true")
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn("the same file", r.stderr)
                self.assertIn("give each its own name", r.stderr)
                self.assertFalse(os.path.exists(out))
        # Apart, both are written.
        trace = self.path("t.json")
        r = run("stat", "-e", "imc/CAS_COUNT.RD", "--backend", "sim", "-o",
                out, "--trace", trace, "--", "true")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out, encoding="utf-8") as f:
            self.assertIn("regions", json.load(f))
        with open(trace, encoding="utf-8") as f:
            self.assertIn("traceEvents", json.load(f))

    def test_a_trace_that_cannot_be_written_is_not_the_report(self):
        # Issue 36, R10: "the report is lost" when the trace was.
        if not os.access("/dev/full", os.W_OK):
            self.skipTest("no /dev/full")
        out = self.path("r.json")
        r = run("stat", "-e", "imc/CAS_COUNT.RD", "--backend", "sim", "-o",
                out, "--trace", "/dev/full", "--", "true")
        self.assertEqual(r.returncode, 125, r.stderr)
        self.assertIn("uncore stat: the trace is lost: cannot write the "
                      "trace to '/dev/full': No space left on device",
                      r.stderr)
        self.assertNotIn("the report is lost", r.stderr)
        with open(out, encoding="utf-8") as f:
            self.assertIn("regions", json.load(f))

    def test_output_placeholders(self):
        r = run("stat", "-e", "imc/CAS_COUNT.RD", "--backend", "sim", "-o",
                self.path("out-%p.json"), "--", "true")
        self.assertEqual(r.returncode, 0, r.stderr)
        files = os.listdir(self.dir)
        self.assertEqual(len(files), 1, files)
        self.assertRegex(files[0], r"^out-\d+\.json$")
        with open(self.path(files[0])) as f:
            self.assertEqual(json.load(f)["backend"], "sim")
        # Relative to the working directory where stat starts.
        r = subprocess.run([os.path.abspath(UNCORE), "stat", "-e",
                            "imc/CAS_COUNT.RD", "--backend", "sim", "-o",
                            "rel-%%.csv", "--", "true"],
                           capture_output=True, text=True, timeout=60,
                           cwd=self.dir)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(os.path.exists(self.path("rel-%.csv")))
        r = run("stat", "-e", "imc/CAS_COUNT.RD", "--backend", "sim", "-o",
                self.path("out-%k.json"), "--", "true")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("unknown placeholder '%k'", r.stderr)

    def test_usage_errors(self):
        cases = [
            (["-e", "imc/CAS_COUNT.RD"], "--"),
            (["-e", "imc/CAS_COUNT.RD", "--"], "no COMMAND"),
            (["-e", "imc/CAS_COUNT.RD", "sleep", "1"], "after `--`"),
            (["--", "true"], "nothing to count"),
            (["-e", "imc/CAS_COUNT.RD", "--backend", "bogus", "--", "true"],
             "unknown backend"),
            (["-e", "imc/CAS_COUNT.RD", "-I", "abc", "--", "true"], "-I"),
            (["-e", "imc/CAS_COUNT.RD", "-I", "--", "true"], "needs a value"),
            (["-e", "imc/CAS_COUNT.RD", "--sockets", "1-0", "--", "true"],
             "--sockets"),
            (["-e", "imc/CAS_COUNT.RD", "--frobnicate", "--", "true"],
             "unknown option"),
            (["-M", "NO_SUCH_METRIC", "--", "true"], "NO_SUCH_METRIC"),
            (["-e", "imc/CAS_COUNT.RD", "-o", "/nonexistent-dir/x.json",
              "--", "true"], "/nonexistent-dir/x.json"),
        ]
        for args, message in cases:
            with self.subTest(args=args):
                r = run("stat", *args)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn(message, r.stderr)
                self.assertEqual(r.stdout, "")

    def events_counted(self, *args):
        out = self.path("events.json")
        r = run("stat", *args, "--backend", "sim", "-o", out, "--", "true")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            return [e["canonical"] for e in json.load(f)["events"]]

    def test_option_spellings(self):
        want = ["imc/CAS_COUNT.RD"]
        for args in (["-e", "imc/CAS_COUNT.RD"], ["-eimc/CAS_COUNT.RD"],
                     ["--events", "imc/CAS_COUNT.RD"],
                     ["--events=imc/CAS_COUNT.RD"]):
            with self.subTest(args=args):
                self.assertEqual(self.events_counted(*args), want)
        # Repeated, and mixed with lists.
        self.assertEqual(
            self.events_counted("-e", "imc/CAS_COUNT.RD",
                                "--events=imc/CAS_COUNT.WR,cbo/CLOCKTICKS"),
            ["imc/CAS_COUNT.RD", "imc/CAS_COUNT.WR", "cbo/CLOCKTICKS"])
        out = self.path("spellings.json")
        r = run("stat", "--metrics=MEM_BW_TOTAL", "--interval=50",
                "--backend=sim", "--sockets=0", "--output=" + out, "--",
                "true")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            d = json.load(f)
        self.assertEqual([m["name"] for m in d["metrics"]], ["MEM_BW_TOTAL"])
        self.assertEqual(d["sockets"], [0])
        self.assertEqual(d["backend"], "sim")

    def test_everything_after_dashes_is_the_command(self):
        # Options after `--` belong to the command, even ours and --help.
        r = run("stat", "-e", "imc/CAS_COUNT.RD", "--backend", "sim", "-o",
                self.path("x.json"), "--", "sh", "-c", 'echo "$@"', "sh",
                "-e", "--help", "--sockets", "--", "-o")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "-e --help --sockets -- -o\n")

    def test_socket_lists_match_uncore_sockets(self):
        # The same lists as UNCORE_SOCKETS (env_session_test.py).
        every = self.path("every.json")
        r = run("stat", "-e", "imc/CAS_COUNT.RD", "--backend", "sim", "-o",
                every, "--", "true")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(every) as f:
            all_sockets = json.load(f)["sockets"]
        for text, sockets in socket_list_cases.ACCEPTED:
            with self.subTest(text=text):
                out = self.path("sockets.json")
                r = run("stat", "-e", "imc/CAS_COUNT.RD", "--backend", "sim",
                        "--sockets", text, "-o", out, "--", "true")
                self.assertEqual(r.returncode, 0, r.stderr)
                with open(out) as f:
                    d = json.load(f)
                self.assertEqual(d["sockets"],
                                 all_sockets if sockets is None else sockets)
        for text, message in socket_list_cases.REFUSED:
            with self.subTest(text=text):
                r = run("stat", "-e", "imc/CAS_COUNT.RD", "--backend", "sim",
                        "--sockets=" + text, "--", "sh", "-c", "echo ran")
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn("--sockets: ", r.stderr)
                self.assertIn(message, r.stderr)
                self.assertEqual(r.stdout, "")

    def test_bad_spec_shows_the_parser_message(self):
        r = run("stat", "-e", "cbo/LLC_LOKUP.DATA_READ", "--backend", "sim",
                "--", "sh", "-c", "echo ran")
        self.assertEqual(r.returncode, 2)
        self.assertIn("column 5", r.stderr)
        self.assertIn("LLC_LOOKUP", r.stderr)
        self.assertNotIn("ran", r.stdout)  # the command did not run

    def test_interval_metrics_on_another_platform(self):
        # The Xeon 7500's simulator: its events go by the vendor's names,
        # and each interval line still evaluates the metric.
        out = self.path("n.json")
        r = run("stat", "--platform", "nehalemex", "-e", "wbox/UNCORE_CLOCK",
                "-M", "MEM_BW_TOTAL", "--backend", "sim", "-I", "50", "-o",
                out, "--", "sleep", "0.2")
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = [INTERVAL_LINE.match(l) for l in r.stderr.splitlines()]
        lines = [m for m in lines if m]
        self.assertGreaterEqual(len(lines), 2, r.stderr)
        for m in lines[:-1]:
            columns = m.group(2).split()
            self.assertGreater(int(columns[0].replace(",", "")), 0)
            self.assertTrue(columns[-1].endswith("bytes/s"), columns)
        with open(out) as f:
            d = json.load(f)
        self.assertEqual(d["platform"], "nehalemex")
        self.assertIn("UNCORE_CLOCK", d["regions"][0]["events"])

    def test_interval_lines(self):
        out = self.path("i.json")
        r = run("stat", "-e", "imc/CAS_COUNT.RD", "-M", "MEM_BW_TOTAL",
                "--backend", "sim", "-I", "50", "-o", out, "--", "sleep",
                "0.3")
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = [INTERVAL_LINE.match(l) for l in r.stderr.splitlines()]
        lines = [m for m in lines if m]
        # 0.05, 0.10, ... 0.30 and the last, short one: a loaded machine
        # may skip a late tick, so "several".
        self.assertGreaterEqual(len(lines), 4, r.stderr)
        self.assertLessEqual(len(lines), 12, r.stderr)
        times = [float(m.group(1)) for m in lines]
        self.assertEqual(times, sorted(times))
        self.assertGreaterEqual(times[0], 0.05)
        self.assertLess(times[0], 0.2)
        self.assertGreaterEqual(times[-1], 0.3)
        header = [l for l in r.stderr.splitlines() if l.startswith("#")]
        self.assertEqual(len(header), 1)
        self.assertIn("imc/CAS_COUNT.RD", header[0])
        self.assertIn("MEM_BW_TOTAL", header[0])
        for m in lines[:-1]:  # the last interval may be short
            columns = m.group(2).split()
            self.assertGreater(int(columns[0].replace(",", "")), 0)
            self.assertTrue(columns[-1].endswith("bytes/s"), columns)
        with open(out) as f:
            d = json.load(f)
        paths = {x["path"]: x for x in d["regions"]}
        self.assertEqual(paths["sleep"]["calls"], 1)
        self.assertEqual(paths["sleep/interval"]["calls"], len(lines))

    def test_auto_without_counters_still_runs_the_command(self):
        out = self.path("auto.json")
        r = run("stat", "-e", "imc/CAS_COUNT.RD", "-o", out, "--", "sh", "-c",
                "echo ran")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "ran\n")
        with open(out) as f:
            d = json.load(f)
        if not uncore_pmus() and not machine_is_ivytown():
            self.assertEqual(d["backend"], "off")
            self.assertIn("NOTHING IS COUNTED", r.stderr)
            self.assertIn("uncore doctor", r.stderr)
        else:
            self.assertIn(d["backend"], ("perf", "direct", "off"))

    def test_explicit_backend_that_cannot_count_does_not_run(self):
        if uncore_pmus():
            self.skipTest("this machine has uncore PMUs")
        r = run("stat", "-e", "imc/CAS_COUNT.RD", "--backend", "perf", "--",
                "sh", "-c", "echo ran")
        self.assertEqual(r.returncode, 125, r.stderr)
        self.assertEqual(r.stdout, "")
        self.assertIn("uncore_imc", r.stderr)

    def test_environment_variables_do_not_start_a_session_in_the_tool(self):
        # The tool opts out of the UNCORE_EVENTS session: -e decides, and no
        # second report appears.
        env = dict(os.environ, UNCORE_EVENTS="imc/CAS_COUNT.WR",
                   UNCORE_BACKEND="sim", UNCORE_OUTPUT=self.path("env.json"))
        out = self.path("stat.json")
        r = run("stat", "-e", "imc/CAS_COUNT.RD", "--backend", "sim", "-o",
                out, "--", "true", env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertFalse(os.path.exists(self.path("env.json")))
        with open(out) as f:
            d = json.load(f)
        self.assertEqual([e["canonical"] for e in d["events"]],
                         ["imc/CAS_COUNT.RD"])

    def test_perf_counts_the_tsc(self):
        out = self.path("tsc.json")
        r = run("stat", "--backend", "perf", "-e", "msr/tsc/", "-o", out,
                "--", "sleep", "0.1")
        if r.returncode == 125:
            self.skipTest("perf cannot count msr/tsc/ here: " + r.stderr)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            d = json.load(f)
        self.assertEqual(d["backend"], "perf")
        self.assertIs(d["simulated"], False)
        region = [x for x in d["regions"] if x["name"] == "sleep"][0]
        self.assertEqual(region["calls"], 1)
        self.assertGreaterEqual(region["wall_ns"], 100_000_000)
        tsc = region["events"]["msr/tsc/"]["total"]
        # The TSC ticks at the nominal clock: well above 100 MHz.
        self.assertGreater(tsc / (region["wall_ns"] * 1e-9), 1e8)

    def test_help(self):
        r = run("stat", "--help")
        self.assertEqual(r.returncode, 0)
        self.assertIn("usage: uncore stat", r.stdout)
        self.assertIn("-- COMMAND", r.stdout)
        for option in ("-e,--events", "-M,--metrics", "-I,--interval",
                       "--backend", "--sockets", "-o,--output", "--multiplex",
                       "--force"):
            self.assertIn(option, r.stdout)
        self.assertEqual(run("stat", "-h").stdout, r.stdout)
        self.assertEqual(run("help", "stat").stdout, r.stdout)
        r = run("help")
        self.assertIn("stat -e SPEC", r.stdout)
        self.assertIn("doctor [--json]", r.stdout)


class DoctorTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.text = run("doctor")
        cls.json_run = run("doctor", "--json")
        cls.d = json.loads(cls.json_run.stdout)

    def checks(self, backend):
        return {c["name"]: c for c in self.d[backend]["checks"]}

    def test_exit_status_matches_the_verdict(self):
        d = self.d
        self.assertIn(self.json_run.returncode, (0, 1))
        self.assertEqual(self.json_run.returncode, self.text.returncode)
        self.assertEqual(self.json_run.returncode,
                         d["verdict"]["exit_status"])
        real = d["perf"]["usable"] or d["direct"]["usable"]
        self.assertEqual(d["verdict"]["exit_status"], 0 if real else 1)
        expected_auto = ("perf" if d["perf"]["usable"] else
                         "direct" if d["direct"]["usable"] else "off")
        self.assertEqual(d["verdict"]["auto"], expected_auto)
        self.assertTrue(d["verdict"]["line"].startswith(
            "auto → " + expected_auto + ":"))
        self.assertIn("verdict: " + d["verdict"]["line"], self.text.stdout)

    def test_keys(self):
        d = self.d
        self.assertEqual(list(d.keys()), ["cpu", "kernel", "privileges",
                                          "perf", "direct", "sim", "reads",
                                          "verdict"])
        for key in ("vendor", "family", "model", "model_name", "ivytown",
                    "register_platform", "hypervisor"):
            self.assertIn(key, d["cpu"])
        for key in ("uid", "root", "cap_eff", "cap_perfmon", "cap_sys_admin",
                    "cap_sys_rawio"):
            self.assertIn(key, d["privileges"])
        for key in ("usable", "summary", "why_not", "checks",
                    "usable_for_other_pmus", "pmu_folder", "uncore_pmus",
                    "other_pmus", "perf_event_paranoid"):
            self.assertIn(key, d["perf"])
        for key in ("usable", "checks", "msr_devices",
                    "pci_functions_per_socket"):
            self.assertIn(key, d["direct"])
        self.assertIs(d["sim"]["usable"], True)

    def test_every_failure_says_how_to_fix_it(self):
        for backend in ("perf", "direct", "sim"):
            for c in self.d[backend]["checks"]:
                with self.subTest(backend=backend, check=c["name"]):
                    self.assertIn(c["status"], ("ok", "fail", "skip"))
                    self.assertTrue(c["detail"])
                    if c["status"] == "fail":
                        self.assertIsInstance(c["fix"], str)
                        self.assertTrue(c["fix"].strip())
            failed = [c for c in self.d[backend]["checks"]
                      if c["status"] == "fail"]
            if failed:
                self.assertTrue(self.d[backend]["why_not"])
        # The text report prints a fix under every FAIL line.
        lines = self.text.stdout.splitlines()
        for i, line in enumerate(lines):
            if line.startswith("  FAIL"):
                self.assertIn("fix: ", lines[i + 1])

    def test_cpu_agrees_with_proc_cpuinfo(self):
        cpu = self.d["cpu"]
        self.assertEqual(cpu["vendor"], cpuinfo_field("vendor_id"))
        self.assertEqual(cpu["family"], int(cpuinfo_field("cpu family")))
        self.assertEqual(cpu["model"], int(cpuinfo_field("model")))
        self.assertEqual(cpu["ivytown"], machine_is_ivytown())
        flags = (cpuinfo_field("flags") or "").split()
        self.assertEqual(cpu["hypervisor"], "hypervisor" in flags)
        if machine_is_ivytown():
            self.assertEqual(cpu["register_platform"], "ivytown")
        # The first direct check is the CPU's register platform's.
        first = self.d["direct"]["checks"][0]
        if cpu["register_platform"] is None:
            self.assertEqual(first["name"], "register platform")
            self.assertEqual(first["status"], "fail")
            self.assertEqual(first["reason"], "no_register_platform")
            self.assertEqual(len(self.d["direct"]["checks"]), 1)
            self.assertIs(self.d["direct"]["usable"], False)
        else:
            self.assertTrue(first["name"].endswith(" CPU"), first)
            self.assertEqual(first["status"], "ok")

    def test_privileges_agree_with_this_process(self):
        p = self.d["privileges"]
        self.assertEqual(p["uid"], os.geteuid())
        self.assertEqual(p["root"], os.geteuid() == 0)
        caps = cap_eff()
        if caps is not None:
            self.assertEqual(int(p["cap_eff"], 16), caps)
            self.assertEqual(p["cap_perfmon"], bool(caps >> 38 & 1))
            self.assertEqual(p["cap_sys_admin"], bool(caps >> 21 & 1))
            self.assertEqual(p["cap_sys_rawio"], bool(caps >> 17 & 1))

    def test_perf_facts_agree_with_sysfs(self):
        perf = self.d["perf"]
        self.assertEqual(perf["pmu_folder"], os.path.isdir(PMU_DIR))
        self.assertEqual(sorted(perf["uncore_pmus"]), uncore_pmus())
        self.assertEqual("msr" in perf["other_pmus"],
                         os.path.isdir(os.path.join(PMU_DIR, "msr")))
        try:
            with open("/proc/sys/kernel/perf_event_paranoid") as f:
                paranoid = int(f.read())
        except OSError:
            paranoid = None
        self.assertEqual(perf["perf_event_paranoid"], paranoid)
        checks = self.checks("perf")
        if paranoid is not None:
            self.assertIn("%d (" % paranoid,
                          checks["perf_event_paranoid"]["detail"])
        if not uncore_pmus():
            self.assertEqual(checks["uncore PMUs"]["status"], "fail")
            self.assertIs(perf["usable"], False)
            self.assertIn("no uncore_* PMU", perf["why_not"])
        else:
            self.assertEqual(checks["uncore PMUs"]["status"], "ok")

    def test_msr_trial_agrees_with_stat(self):
        if not os.path.exists(os.path.join(PMU_DIR, "msr", "events", "tsc")):
            self.skipTest("no msr/tsc/ here")
        trial = self.checks("perf")["trial msr/tsc/"]
        r = run("stat", "--backend", "perf", "-e", "msr/tsc/", "--", "true")
        self.assertEqual(trial["status"] == "ok", r.returncode == 0,
                         (trial, r.stderr))
        self.assertEqual(self.d["perf"]["usable_for_other_pmus"],
                         trial["status"] == "ok")
        if trial["status"] == "ok":
            self.assertEqual(self.d["verdict"]["auto_for_other_pmus"], "perf")
            counted = re.search(r"counted ([\d,]+) in", trial["detail"])
            self.assertGreater(int(counted.group(1).replace(",", "")), 0)

    def test_direct_facts_agree_with_dev_cpu(self):
        direct = self.d["direct"]
        msr = glob.glob("/dev/cpu/[0-9]*/msr")
        self.assertEqual(direct["msr_devices"], len(msr))
        if self.d["cpu"]["register_platform"] is None:
            return  # no platform's probe: no msr checks
        driver = self.checks("direct")["msr driver"]
        if not msr and not glob.glob("/dev/cpu/[0-9]*/msr_safe"):
            self.assertEqual(driver["status"], "fail")
            self.assertIn("modprobe msr", driver["fix"])
            self.assertEqual(self.checks("direct")["MSR access"]["status"],
                             "skip")
        else:
            self.assertEqual(driver["status"], "ok")

    def test_usage(self):
        self.assertEqual(run("doctor", "--bogus").returncode, 2)
        self.assertEqual(run("doctor", "--sysfs").returncode, 2)
        r = run("doctor", "--help")
        self.assertEqual(r.returncode, 0)
        self.assertIn("usage: uncore doctor", r.stdout)
        for option in ("--json", "--sysfs", "--cpuinfo", "--dev-cpu",
                       "--paranoid", "--proc-status"):
            self.assertIn(option, r.stdout)
        r = run("doctor", "--sysfs")
        self.assertIn("--sysfs needs a value", r.stderr)
        r = run("doctor", "extra")
        self.assertEqual(r.returncode, 2)
        self.assertIn("unexpected argument 'extra'", r.stderr)


class DoctorFixtureTest(unittest.TestCase):
    """doctor on a copy of a two-socket IvyTown's files, unprivileged."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="uncore_doctor_test")
        ivt = os.path.join(REGISTER_FIXTURES, "ivt2s")
        shutil.copytree(os.path.join(ivt, "sys"), self.p("sys"))
        shutil.copytree(
            os.path.join(PERF_FIXTURES, "ivt2s", "bus", "event_source"),
            self.p("sys/bus/event_source"))
        shutil.copy(os.path.join(ivt, "cpuinfo"), self.p("cpuinfo"))
        os.makedirs(self.p("dev/cpu"))
        with open(self.p("paranoid"), "w") as f:
            f.write("1\n")
        with open(self.p("status"), "w") as f:
            f.write("Name:\tx\nUid:\t1000\t1000\t1000\t1000\n"
                    "CapEff:\t0000000000000000\n")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def p(self, name):
        return os.path.join(self.dir, name)

    def doctor(self):
        r = run("doctor", "--json", "--sysfs", self.p("sys"), "--cpuinfo",
                self.p("cpuinfo"), "--dev-cpu", self.p("dev/cpu"),
                "--paranoid", self.p("paranoid"),
                "--proc-status=" + self.p("status"))
        self.assertIn(r.returncode, (0, 1), r.stderr)
        return json.loads(r.stdout)

    def test_option_spellings_agree(self):
        # `--sysfs DIR` and `--sysfs=DIR`, --json before or after.
        r = run("doctor", "--sysfs=" + self.p("sys"),
                "--cpuinfo=" + self.p("cpuinfo"),
                "--dev-cpu=" + self.p("dev/cpu"),
                "--paranoid=" + self.p("paranoid"),
                "--proc-status", self.p("status"), "--json")
        self.assertIn(r.returncode, (0, 1), r.stderr)
        d = json.loads(r.stdout)
        expected = self.doctor()
        for key in ("cpu", "privileges"):
            self.assertEqual(d[key], expected[key])
        self.assertEqual(d["verdict"]["auto"], expected["verdict"]["auto"])
        self.assertEqual(d["perf"]["uncore_pmus"],
                         expected["perf"]["uncore_pmus"])
        self.assertEqual(d["direct"]["pci_functions_per_socket"],
                         expected["direct"]["pci_functions_per_socket"])

    def test_ivytown_without_msr_driver_or_privileges(self):
        d = self.doctor()
        self.assertIs(d["cpu"]["ivytown"], True)
        self.assertEqual(d["cpu"]["register_platform"], "ivytown")
        self.assertEqual(d["cpu"]["vendor"], "GenuineIntel")
        self.assertEqual(d["cpu"]["model"], 0x3e)
        self.assertEqual(d["privileges"]["uid"], 1000)
        self.assertIs(d["privileges"]["root"], False)
        self.assertIs(d["privileges"]["cap_perfmon"], False)
        pmus = sorted(n for n in os.listdir(self.p(
            "sys/bus/event_source/devices")) if n.startswith("uncore_"))
        self.assertEqual(sorted(d["perf"]["uncore_pmus"]), pmus)
        self.assertIn("uncore_imc_0", pmus)
        self.assertEqual(d["perf"]["perf_event_paranoid"], 1)
        perf = {c["name"]: c for c in d["perf"]["checks"]}
        self.assertEqual(perf["uncore PMUs"]["status"], "ok")
        self.assertEqual(perf["perf_event_paranoid"]["status"], "fail")
        self.assertIn("cap_perfmon", perf["perf_event_paranoid"]["fix"])
        self.assertIn("perf_event_paranoid=0",
                      perf["perf_event_paranoid"]["fix"])
        self.assertIn("trial uncore_imc_0/clockticks/", perf)
        direct = {c["name"]: c for c in d["direct"]["checks"]}
        self.assertEqual(direct["IvyTown CPU"]["status"], "ok")
        self.assertEqual(direct["msr driver"]["status"], "fail")
        self.assertIn("modprobe msr", direct["msr driver"]["fix"])
        self.assertEqual(direct["uncore PCI functions"]["status"], "ok")
        per_socket = d["direct"]["pci_functions_per_socket"]
        self.assertEqual(len(per_socket), 2)
        self.assertTrue(all(n > 0 for n in per_socket), per_socket)
        self.assertEqual(direct["trial ubox/UCLK + imc/DCLK"]["status"],
                         "skip")
        self.assertIs(d["direct"]["usable"], False)
        self.assertEqual(d["verdict"]["auto"],
                         "perf" if d["perf"]["usable"] else "off")
        for c in d["perf"]["checks"] + d["direct"]["checks"]:
            if c["status"] == "fail":
                self.assertTrue(c["fix"], c)

    def test_msr_device_that_cannot_be_read(self):
        os.makedirs(self.p("dev/cpu/0"))
        open(self.p("dev/cpu/0/msr"), "w").close()  # reads return nothing
        d = self.doctor()
        self.assertEqual(d["direct"]["msr_devices"], 1)
        direct = {c["name"]: c for c in d["direct"]["checks"]}
        self.assertEqual(direct["msr driver"]["status"], "ok")
        self.assertEqual(direct["MSR access"]["status"], "fail")
        self.assertIn("short read", direct["MSR access"]["detail"])
        self.assertTrue(direct["MSR access"]["fix"])
        self.assertEqual(direct["trial ubox/UCLK + imc/DCLK"]["status"],
                         "skip")


class DoctorRegisterPlatformTest(unittest.TestCase):
    """doctor's direct checks come from the CPU's register platform
    (runtime::RegisterPlatforms(): its probe_direct): a Xeon 7500 gets the
    nehalemex probe's, a CPU of none one failed check."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="uncore_doctor_rp_test")
        os.makedirs(self.p("dev/cpu"))

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def p(self, name):
        return os.path.join(self.dir, name)

    def doctor(self, fixture, cpuinfo=None, *extra):
        args = ["--sysfs", os.path.join(REGISTER_FIXTURES, fixture, "sys"),
                "--cpuinfo",
                cpuinfo or os.path.join(REGISTER_FIXTURES, fixture,
                                        "cpuinfo"),
                "--dev-cpu", self.p("dev/cpu"), *extra]
        r = run("doctor", "--json", *args)
        self.assertIn(r.returncode, (0, 1), r.stderr)
        text = run("doctor", *args)
        return json.loads(r.stdout), text.stdout

    def test_xeon7500_gets_the_nehalemex_probe(self):
        d, text = self.doctor("nhmex2s")
        self.assertEqual(d["cpu"]["model"], 0x2e)
        self.assertEqual(d["cpu"]["register_platform"], "nehalemex")
        self.assertIs(d["cpu"]["ivytown"], False)
        self.assertIn("(Intel(R) Xeon(R) CPU           X7560  @ 2.27GHz): "
                      "Nehalem-EX\n", text)
        checks = d["direct"]["checks"]
        self.assertEqual([c["name"] for c in checks],
                         ["Nehalem-EX CPU", "msr driver", "MSR access",
                          "sockets", "trial wbox/UNCORE_CLOCK"])
        self.assertEqual([c["status"] for c in checks],
                         ["ok", "fail", "skip", "ok", "skip"])
        self.assertIn("modprobe msr", checks[1]["fix"])
        self.assertIn("2 sockets: socket 0 through CPU 0, socket 1 through "
                      "CPU 2", checks[3]["detail"])
        self.assertIn("no PCI", checks[3]["detail"])
        self.assertEqual(checks[4]["reason"], "not_tried")
        # MSRs only: no PCI functions to count.
        self.assertEqual(d["direct"]["pci_functions_per_socket"], [])
        self.assertIs(d["direct"]["usable"], False)
        self.assertEqual(d["direct"]["why_not"], "msr driver not loaded")
        self.assertNotIn("IvyTown CPU", text)

    def test_xeon7500_trial_goes_through_the_backend(self):
        # Files that read and write like msr devices (all zero): the trial
        # opens the direct backend's stack (allow-list guard included),
        # programs the W-box's fixed counter, snapshots and releases it.
        for cpu in range(4):
            os.makedirs(self.p("dev/cpu/%d" % cpu))
            with open(self.p("dev/cpu/%d/msr" % cpu), "wb") as f:
                f.truncate(0x10000)
        d, text = self.doctor("nhmex2s")
        trial = {c["name"]: c for c in d["direct"]["checks"]}[
            "trial wbox/UNCORE_CLOCK"]
        self.assertEqual(trial["status"], "ok", trial)
        self.assertIs(d["direct"]["usable"], True)
        self.assertEqual(d["direct"]["trial_stage"], "done")
        self.assertEqual(d["direct"]["msr_devices"], 4)
        self.assertIn("direct: usable: programs the Xeon 7500 (Nehalem-EX) "
                      "registers itself (MSRs only)", text)

    def test_xeon_e7_gets_the_westmereex_probe(self):
        with open(os.path.join(REGISTER_FIXTURES, "nhmex2s", "cpuinfo")) as f:
            info = f.read().replace("model\t\t: 46", "model\t\t: 47")
        with open(self.p("cpuinfo"), "w") as f:
            f.write(info)
        d, _ = self.doctor("nhmex2s", self.p("cpuinfo"))
        self.assertEqual(d["cpu"]["register_platform"], "westmereex")
        self.assertEqual(d["direct"]["checks"][0]["name"], "Westmere-EX CPU")

    def test_epyc_needs_a_register_platform(self):
        d, text = self.doctor("epyc")
        self.assertIsNone(d["cpu"]["register_platform"])
        self.assertIs(d["cpu"]["ivytown"], False)
        checks = d["direct"]["checks"]
        self.assertEqual(len(checks), 1, checks)
        c = checks[0]
        self.assertEqual(c["name"], "register platform")
        self.assertEqual(c["status"], "fail")
        self.assertEqual(c["reason"], "no_register_platform")
        for name in ("ivytown", "nehalemex", "westmereex"):
            self.assertIn(name, c["detail"])
            self.assertIn(name, c["fix"])
        self.assertIn("UNCORE_BACKEND=sim", c["fix"])
        self.assertIn("UNCORE_BACKEND=perf", c["fix"])
        self.assertIs(d["direct"]["usable"], False)
        self.assertEqual(d["direct"]["why_not"],
                         "no register platform for this CPU")
        self.assertIsNone(d["direct"]["trial_stage"])
        self.assertIn(": no register platform\n", text)


def run_pinned(cpu, *args):
    """`uncore ARGS` with its affinity set to the one CPU `cpu`."""
    return subprocess.run([UNCORE, *args], capture_output=True, text=True,
                          timeout=60,
                          preexec_fn=lambda: os.sched_setaffinity(0, {cpu}))


class ReadCostTest(unittest.TestCase):
    """What describe and doctor say a boundary costs in reads, and which
    reads cross CPUs (tools/cli/read_cost.h, devices/perf/read_locality.h)."""

    def describe_json(self, *args, cpu=None):
        r = (run_pinned(cpu, "describe", "--json", *args) if cpu is not None
             else run("describe", "--json", *args))
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)["reads"]

    def test_msr_tsc_read_from_its_cpu_and_from_another(self):
        if not os.path.isdir(os.path.join(PMU_DIR, "msr")):
            self.skipTest("no msr PMU here")
        cpus = sorted(os.sched_getaffinity(0))
        if len(cpus) < 2:
            self.skipTest("one CPU only")
        reads = self.describe_json("msr/tsc/")
        perf = reads["perf"]
        sockets = len({g["socket"] for g in perf["groups"]})
        # One group per socket (msr has no cpumask: each socket's first CPU).
        self.assertEqual(perf["reads_per_snapshot"], sockets)
        self.assertEqual(perf["reads_per_region_pair"], 2 * sockets)
        self.assertEqual(reads["snapshots_per_region_pair"], 2)
        event_cpu = perf["groups"][0]["cpu"]
        other_cpu = [c for c in cpus if c != event_cpu][0]
        for g in perf["groups"]:
            self.assertEqual(g["pmu"], "msr")
            self.assertEqual(g["locality"], "event_cpu")
            self.assertEqual(g["verdict"], "IPI unless the reader runs on "
                             "CPU %d" % g["cpu"])

        on_event_cpu = self.describe_json("msr/tsc/", cpu=event_cpu)["perf"]
        self.assertEqual(on_event_cpu["reader_cpus"], [event_cpu])
        self.assertEqual(on_event_cpu["groups"][0]["crossing"], "never")
        self.assertEqual(on_event_cpu["never_cross"], 1)
        self.assertEqual(on_event_cpu["always_cross"], sockets - 1)

        on_other = self.describe_json("msr/tsc/", cpu=other_cpu)["perf"]
        self.assertEqual(on_other["reader_cpus"], [other_cpu])
        self.assertEqual(on_other["groups"][0]["crossing"], "always")
        self.assertEqual(on_other["always_cross"], sockets)

        text = run_pinned(other_cpu, "describe", "msr/tsc/")
        self.assertEqual(text.returncode, 0, text.stderr)
        self.assertIn("a region pair takes 2 snapshots", text.stdout)
        self.assertIn("msr on CPU %d (socket 0): IPI unless the reader runs "
                      "on CPU %d; from this process: an IPI wherever it runs"
                      % (event_cpu, event_cpu), text.stdout)
        self.assertIn("this process may run on CPU %d: of a boundary's" %
                      other_cpu, text.stdout)

    def test_describe_agrees_with_the_reads_a_perf_session_makes(self):
        out = os.path.join(tempfile.mkdtemp(prefix="uncore_reads"), "t.json")
        r = run("stat", "--backend", "perf", "-e", "msr/tsc/", "-o", out,
                "--", "true")
        if r.returncode == 125:
            self.skipTest("perf cannot count msr/tsc/ here: " + r.stderr)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            stat = json.load(f)
        shutil.rmtree(os.path.dirname(out), ignore_errors=True)
        reads = self.describe_json("msr/tsc/")
        self.assertEqual(reads["perf"]["reads_per_snapshot"],
                         stat["reads_per_snapshot"])

    def test_direct_counters_agree_with_the_simulator(self):
        for spec in ("imc/CAS_COUNT.RD",
                     "cbo/LLC_LOOKUP.DATA_READ:filter_state=0x1f",
                     "imc[0,1]/CAS_COUNT.WR", "metric/MEM_BW_TOTAL"):
            with self.subTest(spec=spec):
                tmp = tempfile.mkdtemp(prefix="uncore_reads")
                out = os.path.join(tmp, "s.json")
                r = run("stat", "--backend", "sim", "-e", spec, "-o", out,
                        "--", "true")
                self.assertEqual(r.returncode, 0, r.stderr)
                with open(out) as f:
                    stat = json.load(f)
                shutil.rmtree(tmp, ignore_errors=True)
                reads = self.describe_json(spec)
                self.assertEqual(
                    reads["direct_counters_per_socket"] * len(stat["sockets"]),
                    stat["reads_per_snapshot"])

    def test_intel_uncore_on_the_fixture_is_local_on_its_socket(self):
        # The fixture has CPUs 0-3 on socket 0 and 4-7 on socket 1, the
        # uncore cpumask 0,4; this process runs on this machine's CPUs.
        ivt = os.path.join(PERF_FIXTURES, "ivt2s")
        reads = self.describe_json("--sysfs", ivt, "imc/CAS_COUNT.RD", cpu=1)
        perf = reads["perf"]
        self.assertEqual(perf["reads_per_snapshot"], 16)  # 8 iMC x 2 sockets
        self.assertEqual(reads["direct_counters_per_socket"], 8)
        for g in perf["groups"]:
            self.assertEqual(g["locality"], "package")
            s = g["socket"]
            self.assertEqual(g["verdict"],
                             "local on any CPU of socket %d (CPUs %s); IPI "
                             "from other sockets" % (s, "0-3" if s == 0
                                                     else "4-7"))
            # CPU 1 is on socket 0: local there, an IPI to socket 1.
            self.assertEqual(g["crossing"], "never" if s == 0 else "always")
        self.assertEqual(perf["never_cross"], 8)
        self.assertEqual(perf["always_cross"], 8)

    def test_amd_uncore_on_the_fixture_needs_the_events_cpu(self):
        zen = os.path.join(PERF_FIXTURES, "zen4x2")
        reads = self.describe_json("--sysfs", zen,
                                   "amd_l3/event=0x4,umask=0xff/", cpu=0)
        perf = reads["perf"]
        self.assertEqual([g["cpu"] for g in perf["groups"]], [0, 2, 4, 6])
        self.assertEqual([g["crossing"] for g in perf["groups"]],
                         ["never", "always", "always", "always"])
        self.assertEqual(reads["direct_counters_per_socket"], 0)

    def test_an_event_perf_cannot_plan_says_why(self):
        epyc = os.path.join(PERF_FIXTURES, "epyc")
        reads = self.describe_json("--sysfs", epyc, "imc/CAS_COUNT.RD")
        self.assertIsNone(reads["perf"])
        self.assertIn("uncore_imc_0", reads["perf_error"])
        self.assertEqual(reads["direct_counters_per_socket"], 8)

    def test_doctor_classifies_every_pmu_and_costs_its_trials(self):
        ivt = os.path.join(PERF_FIXTURES, "ivt2s")
        r = run("doctor", "--json", "--sysfs", ivt)
        d = json.loads(r.stdout)["reads"]
        localities = {p["name"]: p["locality"] for p in d["pmus"]}
        self.assertEqual(localities["msr"], "event_cpu")
        self.assertEqual(localities["power"], "unknown")
        self.assertEqual(localities["uncore_imc_0"], "package")
        self.assertEqual({p["name"] for p in d["pmus"]},
                         {n for n in os.listdir(os.path.join(
                             ivt, "bus", "event_source", "devices"))
                          if n != "software"})
        specs = [e["spec"] for e in d["events"]]
        self.assertEqual(specs, ["msr/tsc/", "uncore_imc_0/clockticks/"])
        for e in d["events"]:
            self.assertEqual(e["reads"]["perf"]["reads_per_snapshot"], 2)
        text = run("doctor", "--sysfs", ivt).stdout
        self.assertIn("\nreads: what a region boundary costs in reads here",
                      text)
        self.assertIn("event_cpu  msr: read locally only on the event's CPU",
                      text)


if __name__ == "__main__":
    harness.unittest_main("uncore", globals())
