#!/usr/bin/env python3
"""UNCORE_BENCHMARK_MAIN's --uncore_* flags, from the command line: the
counters of the extra run reach the console, JSON and CSV reporters and the
--benchmark_out file, with the documented values (see
google_benchmark_main_program.cc for the traffic each benchmark makes)."""
import csv
import io
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "testing"))
import harness  # noqa: E402

PROGRAM = None
READS = "uncore.imc.CAS_COUNT.RD"
READ_BW = "uncore.metric.imc.MEM_BW_READS"
FLAGS = ["--uncore_events=imc/CAS_COUNT.RD", "--uncore_metrics=MEM_BW_READS",
         "--uncore_backend=sim", "--benchmark_min_time=0.01"]
# Per-iteration reads of each benchmark's extra run (16 iterations unless
# the benchmark runs fewer).
EXPECTED_READS = {
    "BM_Reads/iterations:100": 11,
    "BM_ReadsWithSetup/iterations:100": 1600 / 16 + 11,
    "BM_FewIterations/iterations:4": 200 / 4 + 11,
    "BM_Threads/iterations:50/threads:2": 3,
    "BM_Scoped/iterations:100": 5,
    "BM_Auto": 11,
}


def run(*args, env=None):
    return harness.run([PROGRAM, *args],
                       env=harness.environment(env, drop=("BENCHMARK_",)),
                       timeout=120, show_failure=False)


def csv_rows(text):
    """The CSV rows by name; the context lines before the header (which
    Google Benchmark writes into a --benchmark_out file) are skipped."""
    text = text[text.index("name,iterations,"):]
    return {row["name"]: row for row in csv.DictReader(io.StringIO(text))}


def benchmarks_of(text):
    return {b["name"]: b for b in json.loads(text)["benchmarks"]}


class BenchmarkMainTest(harness.TempDirTest):
    def check_json(self, text):
        runs = benchmarks_of(text)
        self.assertEqual(set(runs), set(EXPECTED_READS) | {"BM_AFailure"})
        failure = runs["BM_AFailure"]
        self.assertTrue(failure["error_occurred"])
        self.assertNotIn(READS, failure)
        for name, reads in EXPECTED_READS.items():
            with self.subTest(name):
                b = runs[name]
                self.assertEqual(b[READS], reads)
                self.assertGreater(b[READ_BW], 0)
                self.assertEqual(b["label"], "uncore: SIMULATED")
                # The hook measures no allocations: no memory fields.
                self.assertNotIn("allocs_per_iter", b)
                self.assertNotIn("max_bytes_used", b)

    def test_json(self):
        r = run(*FLAGS, "--benchmark_format=json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.check_json(r.stdout)

    def test_console(self):
        r = run(*FLAGS, "--benchmark_color=false")
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = {line.split()[0]: line for line in r.stdout.splitlines()
                 if line.startswith("BM_")}
        self.assertIn("uncore.imc.CAS_COUNT.RD=11 ",
                      lines["BM_Reads/iterations:100"])
        self.assertIn("uncore.imc.CAS_COUNT.RD=61 ",
                      lines["BM_FewIterations/iterations:4"])
        self.assertRegex(lines["BM_Reads/iterations:100"],
                         r"uncore\.metric\.imc\.MEM_BW_READS=[0-9.]+[kMG]?/s")
        self.assertTrue(
            lines["BM_Reads/iterations:100"].endswith("uncore: SIMULATED"))

    def test_csv_with_a_failing_first_benchmark(self):
        r = run(*FLAGS, "--benchmark_format=csv")
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = csv_rows(r.stdout)
        self.assertEqual(rows["BM_AFailure"]["error_occurred"], "true")
        for name, reads in EXPECTED_READS.items():
            with self.subTest(name):
                self.assertEqual(float(rows[name][READS]), reads)
                self.assertGreater(float(rows[name][READ_BW]), 0)

    def test_out_files(self):
        for fmt in ("json", "csv", "console"):
            with self.subTest(fmt):
                out = self.path("out." + fmt)
                r = run(*FLAGS, "--benchmark_out=" + out,
                        "--benchmark_out_format=" + fmt,
                        "--benchmark_format=console")
                self.assertEqual(r.returncode, 0, r.stderr)
                with open(out, encoding="utf-8") as f:
                    text = f.read()
                if fmt == "json":
                    self.check_json(text)
                elif fmt == "csv":
                    rows = csv_rows(text)
                    self.assertEqual(
                        float(rows["BM_Reads/iterations:100"][READS]), 11)
                else:
                    self.assertIn("uncore.imc.CAS_COUNT.RD=111 ", text)
        # The file reporter's format also comes from the environment.
        out = self.path("env.json")
        r = run(*FLAGS, "--benchmark_out=" + out,
                env={"BENCHMARK_OUT_FORMAT": "json"})
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out, encoding="utf-8") as f:
            self.check_json(f.read())

    def test_repetitions_and_aggregates(self):
        r = run(*FLAGS, "--benchmark_format=json",
                "--benchmark_filter=BM_ReadsWithSetup",
                "--benchmark_repetitions=3")
        self.assertEqual(r.returncode, 0, r.stderr)
        runs = json.loads(r.stdout)["benchmarks"]
        kinds = [(b["run_type"], b.get("aggregate_name")) for b in runs]
        self.assertEqual(kinds, [("iteration", None)] * 3 + [
            ("aggregate", "mean"), ("aggregate", "median"),
            ("aggregate", "stddev"), ("aggregate", "cv")])
        for b in runs:
            with self.subTest(b["name"]):
                want = {"stddev": 0, "cv": 0}.get(b.get("aggregate_name"),
                                                  111)
                self.assertEqual(b[READS], want)
                self.assertIn(READ_BW, b)

    def test_aggregates_only_says_why_there_is_nothing(self):
        r = run(*FLAGS, "--benchmark_format=json",
                "--benchmark_filter=BM_Reads/",
                "--benchmark_repetitions=2",
                "--benchmark_report_aggregates_only=true")
        self.assertEqual(r.returncode, 0, r.stderr)
        runs = json.loads(r.stdout)["benchmarks"]
        self.assertEqual(len(runs), 4)
        for b in runs:
            self.assertNotIn(READS, b)
            self.assertIn("aggregates-only reporting", b["label"])

    def test_backend_off_runs_and_says_so(self):
        r = run("--uncore_events=imc/CAS_COUNT.RD", "--uncore_backend=off",
                "--benchmark_format=json", "--benchmark_filter=BM_Reads/")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("uncore: not measured: backend off", r.stderr)
        b = benchmarks_of(r.stdout)["BM_Reads/iterations:100"]
        self.assertEqual(b["iterations"], 100)
        self.assertNotIn(READS, b)
        self.assertEqual(b["label"], "uncore: not measured: backend off")

    def test_without_flags_it_is_benchmark_main(self):
        r = run("--benchmark_format=json", "--benchmark_filter=BM_Reads/")
        self.assertEqual(r.returncode, 0, r.stderr)
        b = benchmarks_of(r.stdout)["BM_Reads/iterations:100"]
        self.assertNotIn(READS, b)
        self.assertNotIn("label", b)
        # --uncore_backend alone sets the ScopedCounters backend.
        r = run("--uncore_backend=sim", "--benchmark_format=json",
                "--benchmark_filter=BM_Scoped")
        self.assertEqual(r.returncode, 0, r.stderr)
        b = benchmarks_of(r.stdout)["BM_Scoped/iterations:100"]
        self.assertEqual(b[READS], 5)
        self.assertEqual(b["label"], "uncore: SIMULATED")

    def test_environment_session_conflicts(self):
        env = {"UNCORE_EVENTS": "imc/CAS_COUNT.WR", "UNCORE_BACKEND": "sim",
               "UNCORE_OUTPUT": self.path("report.json")}
        r = run(*FLAGS, env=env)
        self.assertEqual(r.returncode, 1)
        self.assertIn("another uncore::Session is active", r.stderr)
        # ScopedCounters fails its benchmark with the reason; others run.
        r = run("--benchmark_format=json", "--benchmark_filter=BM_Scoped",
                env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        b = benchmarks_of(r.stdout)["BM_Scoped/iterations:100"]
        self.assertTrue(b["error_occurred"])
        self.assertIn("uncore: another uncore::Session is active",
                      b["error_message"])

    def test_refusals(self):
        cases = [
            (["--uncore_events=imc/CAS_CONT.RD"], "--uncore_events:"),
            (["--uncore_metrics=CAS_COUNT"], "--uncore_events:"),
            (["--uncore_events=imc/CAS_COUNT.RD", "--uncore_backend=bogus"],
             "--uncore_backend=bogus"),
            (["--uncore_event=imc/CAS_COUNT.RD"], "unknown flag"),
            (["--uncore_events=imc/CAS_COUNT.RD", "--uncore_backend=sim",
              "--benchmark_enable_random_interleaving=true"],
             "random_interleaving"),
            (["--uncore_events"], "unknown flag"),
        ]
        for args, message in cases:
            with self.subTest(args):
                r = run(*args)
                self.assertEqual(r.returncode, 1, r.stdout)
                self.assertIn("uncore: ", r.stderr)
                self.assertIn(message, r.stderr)
                self.assertNotIn("BM_Reads", r.stdout)
        r = run("--uncore_events=imc/CAS_CONT.RD")
        self.assertIn("CAS_COUNT", r.stderr)  # the closest valid name

    def test_every_platforms_names(self):
        # The Xeon 7500's names on its simulator (UNCORE_PLATFORM): the
        # flags resolve through runtime::ResolveNames, not IvyTown's
        # grammar ("unknown box 'wbox'").  Its events go by vendor names.
        r = run("--uncore_events=wbox/UNCORE_CLOCK",
                "--uncore_metrics=MEM_BW_TOTAL", "--uncore_backend=sim",
                "--benchmark_min_time=0.01", "--benchmark_filter=BM_Reads/",
                "--benchmark_format=json",
                env={"UNCORE_PLATFORM": "nehalemex"})
        self.assertEqual(r.returncode, 0, r.stderr)
        b = benchmarks_of(r.stdout)["BM_Reads/iterations:100"]
        self.assertIn("uncore.UNCORE_CLOCK", b)
        self.assertIn("uncore.metric.MEM_BW_TOTAL", b)
        self.assertEqual(b["label"], "uncore: SIMULATED")

    def test_unrecognized_benchmark_flag_still_fails(self):
        r = run(*FLAGS, "--no_such_flag")
        self.assertEqual(r.returncode, 1)

    def test_help_lists_the_uncore_flags(self):
        r = run("--help")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("--benchmark_filter", r.stdout)
        self.assertIn("--uncore_events", r.stdout)


if __name__ == "__main__":
    harness.unittest_main("program", globals())
