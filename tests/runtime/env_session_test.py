#!/usr/bin/env python3
"""A program with only UNCORE_REGION annotations, configured by UNCORE_*
environment variables: the report appears at exit, in every format."""
import csv
import glob
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tools"))
import socket_list_cases  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "testing"))
import harness  # noqa: E402

PROGRAM = None


def environment(env):
    """Without UNCORE_* and the variables that name an MPI rank."""
    full = harness.environment(env)
    for k in [k for k in full if k not in env]:
        if k.endswith("_RANK") or k == "SLURM_PROCID":
            del full[k]
    return full


def run(env, *args, **kwargs):
    return harness.run([PROGRAM, *args], env=environment(env), timeout=120,
                       show_failure=False, **kwargs)


def default_signals():
    """In the child: SIGINT and SIGTERM as a shell would leave them."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def start(env, *args, preexec_fn=default_signals):
    return subprocess.Popen([PROGRAM, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            env=environment(env), preexec_fn=preexec_fn)


class EnvSessionTest(harness.TempDirTest):
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
        self.assertEqual(report["schema_version"], 2)
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

    def test_an_unknown_metric_names_uncore_metrics(self):
        r = run({"UNCORE_METRICS": "NOPE", "UNCORE_BACKEND": "sim"},
                "1", "1")
        self.assertEqual(r.returncode, 0)
        self.assertEqual(r.stderr.count("uncore:"), 1, r.stderr)
        self.assertIn("UNCORE_METRICS", r.stderr)
        self.assertNotIn("UNCORE_EVENTS", r.stderr)
        self.assertIn("NOPE", r.stderr)
        # Both set: the one at fault is named.
        r = run({"UNCORE_EVENTS": "imc/CAS_COUNT.RD", "UNCORE_METRICS": "NOPE",
                 "UNCORE_BACKEND": "sim"}, "1", "1")
        self.assertIn("metrics (UNCORE_METRICS): ", r.stderr)
        r = run({"UNCORE_EVENTS": "imc/NOPE", "UNCORE_METRICS": "MEM_BW_TOTAL",
                 "UNCORE_BACKEND": "sim"}, "1", "1")
        self.assertIn("events (UNCORE_EVENTS): ", r.stderr)

    def test_outside_text_is_escaped_and_cut_in_messages(self):
        # An escape sequence reaches the terminal as text, not as a command.
        r = run({"UNCORE_EVENTS": "\x1b[31mred\x07", "UNCORE_BACKEND": "sim"},
                "1", "1")
        self.assertEqual(r.returncode, 0)
        self.assertIn("regions will not be measured", r.stderr)
        self.assertNotIn("\x1b", r.stderr)
        self.assertNotIn("\x07", r.stderr)
        self.assertIn("\\x1b[31mred\\x07", r.stderr)
        r = run({"UNCORE_SAMPLE": "\x1b]0;title\x07",
                 "UNCORE_EVENTS": "imc/CAS_COUNT.RD"}, "1", "1")
        self.assertNotIn("\x1b", r.stderr)
        self.assertIn("\\x1b]0;title\\x07", r.stderr)
        # A 100 kB spec: a message of a few hundred bytes, not 300 kB.
        spec = "imc/CAS_COUNT.RD:" + "x" * 100000
        r = run({"UNCORE_EVENTS": spec, "UNCORE_BACKEND": "sim"}, "1", "1")
        self.assertIn("regions will not be measured", r.stderr)
        self.assertLess(len(r.stderr), 2000, r.stderr[:3000])
        self.assertIn("(100017 bytes, 99817 left out)", r.stderr)

    def test_long_values_are_cut_with_the_count_left_out(self):
        # Issue 36, R11: UNCORE_PLATFORM, UNCORE_SOCKETS and
        # UNCORE_TRACE_INTERVAL echoed a 5,000-byte value whole, the message
        # cut at 4 kB with the whole message's size as the count.  Every
        # variable quotes at most a few hundred bytes of a value, and says
        # how many bytes it left out.
        value = "p" * 5000
        # The quoted text shown, its size and how many bytes were left out.
        cut = re.compile(r"['\"]([^'\"]*?)\.\.\. "
                         r"\((\d+) bytes, (\d+) left out\)")
        base = {"UNCORE_EVENTS": "imc/CAS_COUNT.RD", "UNCORE_BACKEND": "sim"}
        cwd = os.getcwd() + "/"  # a relative path is made absolute
        # Each variable, its value and the text its message quotes; paths
        # keep up to 600 bytes (room for long directories), the rest 200.
        for name, v, quoted, most in [
                ("UNCORE_PLATFORM", value, value, 200),
                ("UNCORE_SOCKETS", value, value, 200),
                ("UNCORE_TRACE_INTERVAL", value, value, 200),
                ("UNCORE_BACKEND", value, value, 200),
                ("UNCORE_SAMPLE", value, value, 200),
                ("UNCORE_OUTPUT", value + ",,-", value + ",,-", 200),
                ("UNCORE_OUTPUT", value, cwd + value, 600),
                ("UNCORE_TRACE", value, cwd + value, 600)]:
            with self.subTest(variable=name, value=v[-10:]):
                r = run({**base, name: v}, "1", "1")
                self.assertEqual(r.returncode, 0, r.stderr[:500])
                self.assertIn("regions will not be measured", r.stderr)
                self.assertLess(len(r.stderr), 2000, r.stderr[:3000])
                found = cut.findall(r.stderr)
                self.assertTrue(found, r.stderr)
                for shown, total, left_out in found:
                    self.assertTrue(quoted.startswith(shown), shown)
                    self.assertLessEqual(len(shown), most)
                    self.assertEqual(int(total), len(quoted), r.stderr)
                    self.assertEqual(len(shown) + int(left_out), len(quoted),
                                     r.stderr)

    def test_outputs_that_name_one_file_are_refused(self):
        # Issue 36, R8: the report overwrote the trace with no message.
        out = self.path("x.json")
        base = {"UNCORE_EVENTS": "imc/CAS_COUNT.RD", "UNCORE_BACKEND": "sim"}
        for env in ({"UNCORE_OUTPUT": out, "UNCORE_TRACE": out},
                    {"UNCORE_OUTPUT": out,
                     "UNCORE_TRACE": self.path(".") + "/./x.json"},
                    {"UNCORE_OUTPUT": out + ",-," + out}):
            with self.subTest(env=env):
                r = run({**base, **env}, "1", "1")
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertIn("regions will not be measured", r.stderr)
                self.assertIn("the same file", r.stderr)
                self.assertIn("give each its own name", r.stderr)
                self.assertFalse(os.path.exists(out))

    def test_a_trace_that_cannot_be_written_is_named_at_exit(self):
        # Issue 36, R10: "uncore: writing the report failed: ..." when the
        # report was written and the trace was not.
        if not os.access("/dev/full", os.W_OK):
            self.skipTest("no /dev/full")
        out = self.path("r.json")
        r = run({"UNCORE_EVENTS": "imc/CAS_COUNT.RD", "UNCORE_BACKEND": "sim",
                 "UNCORE_OUTPUT": out, "UNCORE_TRACE": "/dev/full"}, "3", "1")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(
            r.stderr, "uncore: the trace is lost: cannot write the trace to "
            "'/dev/full': No space left on device\n")
        with open(out, encoding="utf-8") as f:
            errors = json.load(f)["errors"]
        self.assertIn("trace: not written (cannot write the trace to "
                      "'/dev/full': No space left on device); 6 region calls "
                      "recorded for it are lost", errors)

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
        r = table = run({"UNCORE_EVENTS": "msr/tsc/", "UNCORE_BACKEND": "perf",
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
        # A machine whose kernel shows no uncore PMU (a virtual machine)
        # has no platform: the report says so, not "ivytown".
        if not glob.glob("/sys/bus/event_source/devices/uncore_*") and \
                not glob.glob("/sys/bus/event_source/devices/amd_[dl]*"):
            self.assertEqual(report["platform"], "none")
            self.assertIn("uncore report: platform none (no supported "
                          "uncore: generic perf PMUs), backend perf",
                          table.stderr)
        step = {x["path"]: x for x in report["regions"]}['step, "quoted"']
        tsc = step["events"]["msr/tsc/"]["total"]
        # The TSC ticks at a GHz-class rate: 40 ms of region is > 10^7.
        self.assertGreater(tsc / (step["wall_ns"] / 1e9), 1e8)
        self.assertEqual(step["events"]["msr/tsc/"]["per_instance"][0]
                         ["instance"], "msr")
        # Sockets the machine lacks are refused, naming the ones it has
        # (they were dropped without a word: socket 0 alone was counted).
        r = run({"UNCORE_EVENTS": "msr/tsc/", "UNCORE_BACKEND": "perf",
                 "UNCORE_SOCKETS": "0-63", "UNCORE_OUTPUT": "-"}, "1", "1")
        self.assertEqual(r.stderr.count("uncore:"), 1, r.stderr)
        self.assertIn("regions will not be measured", r.stderr)
        self.assertRegex(r.stderr, r"sockets [0-9]+-63 do not exist: this "
                         r"machine has [0-9]+ sockets? \(0(-[0-9]+)?\)")

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



class OutputTest(harness.TempDirTest):
    """Report files: placeholders, checks at start, writes that never
    leave a half-written report, and reports after SIGINT and SIGTERM."""

    def files(self):
        return sorted(os.listdir(self.dir.name))

    def load(self, name):
        with open(self.path(name), encoding="utf-8") as f:
            return json.load(f)

    def sim(self, output):
        return {"UNCORE_EVENTS": "imc/CAS_COUNT.RD", "UNCORE_BACKEND": "sim",
                "UNCORE_OUTPUT": output}

    def wait_ready(self, p):
        line = p.stdout.readline()
        if line != "ready\n":
            p.kill()
            self.fail("no 'ready' from the program: %r %s" %
                      (line, p.communicate()[1]))

    def interrupt(self, signo):
        p = start(self.sim(self.path("out.json")), "loop")
        self.wait_ready(p)
        p.send_signal(signo)
        _, stderr = p.communicate(timeout=60)
        # The signal takes its usual effect once the report is written.
        self.assertEqual(p.returncode, -signo, stderr)
        self.assertEqual(stderr, "")
        self.assertEqual(self.files(), ["out.json"])  # no temporary file
        report = self.load("out.json")
        regions = {r["path"]: r for r in report["regions"]}
        self.assertGreaterEqual(regions["outer/loop"]["calls"], 1)
        # Still open when the signal came: counted up to then, marked open.
        self.assertEqual(regions["outer"]["calls"], 1)
        self.assertEqual(regions["outer"]["open_calls"], 1)
        self.assertGreater(regions["outer"]["wall_ns"], 0)
        self.assertIn('region "outer" was still open on thread 0 when the '
                      "session stopped: counted up to then (its open_calls)",
                      report["errors"])
        name = signal.Signals(signo).name
        self.assertTrue(any("interrupted by %s" % name in w
                            for w in report["warnings"]), report["warnings"])

    def test_sigint_writes_the_report_then_kills(self):
        self.interrupt(signal.SIGINT)

    def test_sigterm_writes_the_report_then_kills(self):
        self.interrupt(signal.SIGTERM)

    def test_sigterm_with_the_table_on_stderr(self):
        p = start(self.sim("-"), "loop")
        self.wait_ready(p)
        p.send_signal(signal.SIGTERM)
        _, stderr = p.communicate(timeout=60)
        self.assertEqual(p.returncode, -signal.SIGTERM, stderr)
        self.assertIn("uncore report: platform ivytown, backend sim", stderr)
        self.assertIn("interrupted by SIGTERM", stderr)

    def test_sigterm_twice_at_once_still_writes_the_report(self):
        # GNU timeout sends SIGTERM to the program, then to its process
        # group: the repeat is the same request, not a second one.
        p = start(self.sim(self.path("out.json")), "loop")
        self.wait_ready(p)
        os.kill(p.pid, signal.SIGTERM)
        os.kill(p.pid, signal.SIGTERM)
        _, stderr = p.communicate(timeout=60)
        self.assertEqual(p.returncode, -signal.SIGTERM, stderr)
        self.assertEqual(self.files(), ["out.json"])
        self.assertEqual(self.load("out.json")["backend"], "sim")

    def test_gnu_timeout_leaves_a_report_every_time(self):
        timeout = shutil.which("timeout")
        if timeout is None:
            self.skipTest("no GNU timeout here")
        for run in range(30):
            out = self.path("t%d.json" % run)
            p = subprocess.run([timeout, "0.3", PROGRAM, "loop"],
                               env={**os.environ, **self.sim(out)},
                               stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True,
                               preexec_fn=default_signals, timeout=60)
            self.assertEqual(p.returncode, 124, p.stderr)
            self.assertTrue(os.path.exists(out), "run %d: no report" % run)
            with open(out, encoding="utf-8") as f:
                self.assertEqual(json.load(f)["backend"], "sim")

    def timeout_run(self, env, command, seconds=3):
        """`timeout SECONDS command`, stderr left unread until it ends (a
        stalled pipe when the program fills it); the status and stderr."""
        timeout = shutil.which("timeout")
        if timeout is None:
            self.skipTest("no GNU timeout here")
        p = subprocess.Popen([timeout, str(seconds), *command],
                             env=environment(env), stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, preexec_fn=default_signals)
        try:
            p.wait(timeout=seconds + 20)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            self.fail(f"{command}: still running {seconds + 20} s after "
                      f"timeout {seconds} sent SIGTERM (only SIGKILL ended it)")
        return p.returncode, p.stderr.read().decode(errors="replace")

    def test_sigterm_ends_a_report_write_that_blocks_on_a_fifo(self):
        # R3: the report at exit goes to a FIFO nobody reads: opening it
        # blocks.  timeout's SIGTERM ends the program anyway (status 124),
        # the report abandoned with a message.
        fifo = self.path("report.fifo")
        os.mkfifo(fifo)
        status, stderr = self.timeout_run(self.sim(fifo), [PROGRAM, "1", "1"])
        self.assertEqual(status, 124, stderr)
        self.assertIn("SIGTERM", stderr)
        self.assertIn("abandoned", stderr)
        # The same while the program runs: the signal starts the write.
        status, stderr = self.timeout_run(self.sim(fifo), [PROGRAM, "loop"])
        self.assertEqual(status, 124, stderr)
        self.assertIn("abandoned", stderr)

    def test_sigterm_ends_a_report_write_into_a_stalled_stderr(self):
        # R3: the table goes to stderr, a pipe nobody reads that the
        # program has filled: the write at exit blocks.
        status, _ = self.timeout_run(
            self.sim("-"),
            ["sh", "-c", 'head -c 65500 /dev/zero >&2; exec "$0" 1 1',
             PROGRAM])
        self.assertEqual(status, 124)

    def test_a_signal_before_exit_gives_its_exit_status(self):
        # R7: SIGTERM arrives while the program writes its report at exit
        # (to a FIFO whose reader comes late): it ended by the signal,
        # every time, once the report is written whole.
        fifo = self.path("late.json")  # a FIFO, written as JSON
        os.mkfifo(fifo)
        for run_index in range(5):
            p = start(self.sim(fifo), "1", "1")
            time.sleep(0.3)  # returned from main, blocked opening the FIFO
            p.send_signal(signal.SIGTERM)
            time.sleep(0.1)
            with open(fifo, encoding="utf-8") as f:
                report = json.load(f)
            _, stderr = p.communicate(timeout=60)
            self.assertEqual(p.returncode, -signal.SIGTERM,
                             f"run {run_index}: {stderr}")
            self.assertEqual(report["backend"], "sim")

    def test_closed_stdio_keeps_the_session(self):
        # Started with descriptors 0-2 closed: the SDK's own descriptors
        # must not take them (the program's output would reach them).
        def closed_stdio():
            default_signals()
            for fd in (0, 1, 2):
                os.close(fd)
        out = self.path("out.json")
        p = subprocess.Popen([PROGRAM, "3", "5"],
                             env={**os.environ, **self.sim(out)},
                             preexec_fn=closed_stdio)
        self.assertEqual(p.wait(timeout=60), 0)
        report = self.load("out.json")
        regions = {r["path"]: r for r in report["regions"]}
        self.assertEqual(regions["step, \"quoted\""]["calls"], 3)
        self.assertEqual(report["errors"], [])
        p = subprocess.Popen([PROGRAM, "loop"],
                             env={**os.environ, **self.sim(out)},
                             preexec_fn=closed_stdio)
        time.sleep(0.5)
        self.assertIsNone(p.poll(), "the session stopped by itself")
        p.send_signal(signal.SIGTERM)
        self.assertEqual(p.wait(timeout=60), -signal.SIGTERM)
        self.assertEqual(self.load("out.json")["backend"], "sim")

    def test_a_daemon_that_closes_its_descriptors_ends_with_its_report(self):
        p = start(self.sim(self.path("out.json")), "close-fds")
        self.wait_ready(p)
        p.send_signal(signal.SIGTERM)
        _, stderr = p.communicate(timeout=60)
        self.assertEqual(p.returncode, -signal.SIGTERM, stderr)
        regions = {r["path"]: r for r in self.load("out.json")["regions"]}
        self.assertGreaterEqual(regions["outer/loop"]["calls"], 1)

    def test_ignored_signal_stays_ignored(self):
        def ignore_sigint():
            default_signals()
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        p = start(self.sim(self.path("out.json")), "loop",
                  preexec_fn=ignore_sigint)
        self.wait_ready(p)
        p.send_signal(signal.SIGINT)
        with self.assertRaises(subprocess.TimeoutExpired):
            p.wait(timeout=0.5)
        p.send_signal(signal.SIGTERM)
        p.communicate(timeout=60)
        self.assertEqual(p.returncode, -signal.SIGTERM)
        self.assertEqual(self.load("out.json")["backend"], "sim")

    def test_program_handler_replaces_ours(self):
        p = start(self.sim(self.path("out.json")), "own-handler")
        self.wait_ready(p)
        p.send_signal(signal.SIGTERM)
        _, stderr = p.communicate(timeout=60)
        # The program's handler ran, the program returned, the report was
        # written at exit with every region closed.
        self.assertEqual(p.returncode, 3, stderr)
        report = self.load("out.json")
        regions = {r["path"]: r for r in report["regions"]}
        self.assertEqual(regions["outer"]["calls"], 1)
        self.assertEqual(report["errors"], [])
        self.assertFalse(any("interrupted" in w for w in report["warnings"]))

    def test_second_signal_while_writing_still_kills(self):
        p = start(self.sim(self.path("out.json")), "loop")
        self.wait_ready(p)
        p.send_signal(signal.SIGINT)
        p.send_signal(signal.SIGTERM)
        p.communicate(timeout=60)
        self.assertIn(p.returncode, (-signal.SIGINT, -signal.SIGTERM))
        # Killed before the rename or after: never a half-written report.
        if os.path.exists(self.path("out.json")):
            self.assertEqual(self.load("out.json")["backend"], "sim")

    def test_eight_processes_leave_eight_reports(self):
        procs = [start(self.sim(self.path("out-%p.json")), "3", "2")
                 for _ in range(8)]
        for p in procs:
            _, stderr = p.communicate(timeout=120)
            self.assertEqual(p.returncode, 0, stderr)
        self.assertEqual(self.files(),
                         sorted("out-%d.json" % p.pid for p in procs))
        for p in procs:
            report = self.load("out-%d.json" % p.pid)
            regions = {r["path"]: r for r in report["regions"]}
            self.assertEqual(regions['step, "quoted"']["calls"], 3)

    def test_rank_host_and_time_placeholders(self):
        for rank in range(3):
            r = run({**self.sim(self.path("r%r-%h-%t%%.json")),
                     "OMPI_COMM_WORLD_RANK": str(rank)}, "1", "1")
            self.assertEqual(r.returncode, 0, r.stderr)
        r = run({**self.sim(self.path("r%r-%h-%t%%.json")),
                 "SLURM_PROCID": "7"}, "1", "1")
        self.assertEqual(r.returncode, 0, r.stderr)
        r = run(self.sim(self.path("norank-%r.json")), "1", "1")
        self.assertEqual(r.returncode, 0, r.stderr)
        host = os.uname().nodename
        pattern = re.compile(r"^r(\d)-%s-\d{8}-\d{6}%%\.json$" %
                             re.escape(host))
        files = self.files()
        ranks = sorted(m.group(1) for m in map(pattern.match, files) if m)
        self.assertEqual(ranks, ["0", "1", "2", "7"], files)
        self.assertEqual(len([f for f in files
                              if re.match(r"^norank-pid\d+\.json$", f)]), 1,
                         files)

    def test_bad_output_is_an_error_at_start(self):
        cases = [
            (self.path("missing/out.json"),
             [self.path("missing"), "No such file or directory",
              "create the directory first"]),
            (self.path("out-%q.json"), ["unknown placeholder '%q'"]),
            (self.dir.name, ["Is a directory"]),
            ("", ["UNCORE_OUTPUT is empty: "]),
        ]
        for output, messages in cases:
            with self.subTest(output=output):
                r = run(self.sim(output), "1", "1")
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertTrue(r.stderr.startswith(
                    "uncore: regions will not be measured: "), r.stderr)
                self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
                for message in messages:
                    self.assertIn(message, r.stderr)
        self.assertEqual(self.files(), [])

    def test_existing_report_survives_a_failed_write(self):
        r = run(self.sim(self.path("out.json")), "2", "1")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(self.path("out.json"), "rb") as f:
            good = f.read()
        json.loads(good)

        def small_files():
            default_signals()
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (200, 200))
        r = run(self.sim(self.path("out.json")), "1", "1",
                preexec_fn=small_files, restore_signals=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(r.stderr.startswith(
            "uncore: writing the report failed: "), r.stderr)
        self.assertIn("File too large", r.stderr)
        self.assertIn("left as it was", r.stderr)
        with open(self.path("out.json"), "rb") as f:
            self.assertEqual(f.read(), good)
        self.assertEqual(self.files(), ["out.json"])


if __name__ == "__main__":
    harness.unittest_main("program", globals())
