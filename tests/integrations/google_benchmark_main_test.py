#!/usr/bin/env python3
"""UNCORE_BENCHMARK_MAIN's --uncore_* flags, from the command line: the
counters of the extra run reach the console, JSON and CSV reporters and the
--benchmark_out file, with the documented values and a label that says they
are scaled from a separate run of how many iterations and how long, or are
withheld when that run is under 1 ms (see google_benchmark_main_program.cc
for the traffic each benchmark makes).  --flag-path and
--profiler-one-iteration are the configure-time choice of
integrations/google_benchmark/CMakeLists.txt: 1 (Google Benchmark 1.7.x)
and 2 (1.8.x) run min(16, N) iterations of the whole function, 3 (1.9 on)
runs the loop alone, for 1 iteration (1.9.0/1.9.1) or N, 0 refuses the
flags."""
import csv
import io
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "testing"))
import harness  # noqa: E402

PROGRAM = None
FLAG_PATH = None
PROFILER_ONE_ITERATION = None
READS = "uncore.imc.CAS_COUNT.RD"
READ_BW = "uncore.metric.imc.MEM_BW_READS"
FLAGS = ["--uncore_events=imc/CAS_COUNT.RD", "--uncore_metrics=MEM_BW_READS",
         "--uncore_backend=sim", "--benchmark_min_time=0.01"]
SHORT = "BM_Short/iterations:20"
# The benchmarks whose extra run lasts over 1 ms (each iteration waits
# 1.2 ms), by name: their timed iterations per thread.
TIMED = {
    "BM_Reads/iterations:20": 20,
    "BM_ReadsWithSetup/iterations:20": 20,
    "BM_FewIterations/iterations:4": 4,
    "BM_Threads/iterations:20/threads:2": 20,
    "BM_Scoped/iterations:20": 20,
    "BM_Auto": None,  # chosen by --benchmark_min_time
}
# A line of the CSV or console output, as a JSON benchmark has it.
SCALED = re.compile(r"uncore: scaled from a separate run of (\d+) "
                    r"iterations?, ([0-9.]+) (us|ms|s)\b")
WITHHELD = re.compile(r"uncore: withheld: the (?:shortest of \d+ )?"
                      r"separate runs? of (\d+) iterations? lasted "
                      r"([0-9.]+) (us|ms|s), under the 1 ms its counts need "
                      r"to be scaled")
# The same, on any row: an aggregate's names the shortest run first.
SCALED_ROW = re.compile(r"uncore: scaled from (?:a separate run|\d+ separate "
                        r"runs) of (\d+) iterations?, ([0-9.]+) (us|ms|s)\b")
SECONDS = {"us": 1e-6, "ms": 1e-3, "s": 1}


def whole_function():
    """Whether the extra run covers the whole function (Google Benchmark
    1.7/1.8's memory manager) rather than its loop (1.9's profiler)."""
    return FLAG_PATH in ("1", "2")


def extra_iterations(per_thread):
    """The extra run's iterations after a timed run of `per_thread`."""
    if whole_function():
        return min(16, per_thread)
    return 1 if PROFILER_ONE_ITERATION == "1" else per_thread


def expected_reads(name, per_thread):
    """The reads per iteration the flags give benchmark `name`."""
    m = extra_iterations(per_thread)
    if name.startswith("BM_ReadsWithSetup"):
        return 1600 / m + 11 if whole_function() else 11
    if name.startswith("BM_FewIterations"):
        return 200 / m + 11 if whole_function() else 11
    return {"BM_Threads": 3, "BM_Scoped": 5}.get(name.split("/")[0], 11)


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


def per_thread(b):
    return b["iterations"] // b.get("threads", 1)


class FlagsTest(harness.TempDirTest):
    def setUp(self):
        super().setUp()
        if FLAG_PATH == "0":
            self.skipTest("this Google Benchmark refuses the flags "
                          "(UnsupportedVersionTest)")

    def check_scaled_label(self, b, name):
        """The label says the counters are scaled, from how many iterations
        and how long a run; returns it."""
        label = b["label"]
        m = SCALED.search(label)
        self.assertIsNotNone(m, f"{name}: {label}")
        self.assertEqual(int(m.group(1)), extra_iterations(per_thread(b)),
                         label)
        self.assertGreaterEqual(float(m.group(2)) * SECONDS[m.group(3)],
                                1e-3, label)
        self.assertIn("uncore: SIMULATED", label)
        return label

    def check_short(self, label, has_reads):
        """BM_Short's extra run is meant to last under 1 ms, so that its
        counters are withheld and its label says why.  A slow build on a
        loaded machine can take longer (ASan on a CI machine: 1.28 ms);
        then its counters are scaled like any other.  Either way the
        duration the label gives decides, on the 1 ms line."""
        withheld = WITHHELD.search(label)
        m = withheld or SCALED_ROW.search(label)
        self.assertIsNotNone(m, label)
        self.assertEqual(has_reads, withheld is None, label)
        self.assertEqual(int(m.group(1)), extra_iterations(20), label)
        seconds = float(m.group(2)) * SECONDS[m.group(3)]
        self.assertEqual(seconds < 1e-3, withheld is not None, label)

    def check_short_json(self, b):
        """check_short on a JSON row: its metric comes and goes with its
        count."""
        self.assertEqual(READ_BW in b, READS in b, b)
        self.check_short(b["label"], READS in b)

    def check_json(self, text):
        runs = benchmarks_of(text)
        self.assertEqual(set(runs), set(TIMED) | {"BM_AFailure", SHORT})
        failure = runs["BM_AFailure"]
        self.assertTrue(failure["error_occurred"])
        self.assertNotIn(READS, failure)
        self.check_short_json(runs[SHORT])
        for name in TIMED:
            with self.subTest(name):
                b = runs[name]
                self.assertEqual(b[READS],
                                 expected_reads(name, per_thread(b)))
                # The hook measures no allocations: no memory fields.
                self.assertNotIn("allocs_per_iter", b)
                self.assertNotIn("max_bytes_used", b)
                # BM_Scoped: the code's exact count is kept, the flags
                # add the metric (from 1.9 its ScopedCounters gives way
                # to the hook in the extra run).
                self.assertGreater(b[READ_BW], 0)
                self.check_scaled_label(b, name)

    def test_json(self):
        r = run(*FLAGS, "--benchmark_format=json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.check_json(r.stdout)

    def test_console(self):
        r = run(*FLAGS, "--benchmark_color=false")
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = {line.split()[0]: line for line in r.stdout.splitlines()
                 if line.startswith("BM_")}
        reads = lines["BM_Reads/iterations:20"]
        self.assertIn("uncore.imc.CAS_COUNT.RD=11 ", reads)
        few = expected_reads("BM_FewIterations", 4)
        self.assertIn(f"uncore.imc.CAS_COUNT.RD={few:g} ",
                      lines["BM_FewIterations/iterations:4"])
        self.assertRegex(reads,
                         r"uncore\.metric\.imc\.MEM_BW_READS=[0-9.]+[kMG]?/s")
        m = SCALED.search(reads)
        self.assertIsNotNone(m, reads)
        self.assertEqual(int(m.group(1)), extra_iterations(20), reads)
        self.assertTrue(reads.endswith("uncore: SIMULATED"), reads)
        short = lines[SHORT]
        self.check_short(short, "uncore.imc" in short)

    def test_csv_with_a_failing_first_benchmark(self):
        r = run(*FLAGS, "--benchmark_format=csv")
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = csv_rows(r.stdout)
        self.assertEqual(rows["BM_AFailure"]["error_occurred"], "true")
        for name in TIMED:
            with self.subTest(name):
                row = rows[name]
                per = int(row["iterations"]) // (2 if "threads:2" in name
                                                 else 1)
                self.assertEqual(float(row[READS]),
                                 expected_reads(name, per))
                self.assertGreater(float(row[READ_BW]), 0)
                self.assertRegex(row["label"], SCALED)
        self.check_short(rows[SHORT]["label"], rows[SHORT][READS] != "")

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
                        float(rows["BM_Reads/iterations:20"][READS]), 11)
                else:
                    with_setup = expected_reads("BM_ReadsWithSetup", 20)
                    self.assertIn(
                        f"uncore.imc.CAS_COUNT.RD={with_setup:g} ", text)
                    self.assertRegex(text, SCALED)
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
        with_setup = expected_reads("BM_ReadsWithSetup", 20)
        for b in runs:
            with self.subTest(b["name"]):
                want = {"stddev": 0, "cv": 0}.get(b.get("aggregate_name"),
                                                  with_setup)
                self.assertEqual(b[READS], want)
                self.assertIn(READ_BW, b)
                if b["run_type"] == "iteration":
                    self.check_scaled_label(b, b["name"])
                else:
                    self.assertRegex(
                        b["label"],
                        r"uncore: scaled from 3 separate runs of "
                        rf"{extra_iterations(20)} iterations?, [0-9.]+ "
                        r"(us|ms|s) to [0-9.]+ (us|ms|s)")
        # Aggregates of runs too short to scale are withheld too (each
        # row by its own shortest run).
        r = run(*FLAGS, "--benchmark_format=json",
                "--benchmark_filter=BM_Short", "--benchmark_repetitions=2")
        self.assertEqual(r.returncode, 0, r.stderr)
        runs = json.loads(r.stdout)["benchmarks"]
        self.assertEqual(len(runs), 6)
        for b in runs:
            with self.subTest(b["name"]):
                self.check_short_json(b)
                if b["run_type"] == "aggregate":
                    self.assertRegex(b["label"],
                                     "(the shortest of|from) 2 separate runs")

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
        b = benchmarks_of(r.stdout)["BM_Reads/iterations:20"]
        self.assertEqual(b["iterations"], 20)
        self.assertNotIn(READS, b)
        self.assertEqual(b["label"], "uncore: not measured: backend off")

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
        b = benchmarks_of(r.stdout)["BM_Scoped/iterations:20"]
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
        b = benchmarks_of(r.stdout)["BM_Reads/iterations:20"]
        self.assertIn("uncore.UNCORE_CLOCK", b)
        self.assertIn("uncore.metric.MEM_BW_TOTAL", b)
        self.check_scaled_label(b, "BM_Reads")


class MainTest(harness.TempDirTest):
    """What does not depend on the flag path."""

    def test_without_flags_it_is_benchmark_main(self):
        r = run("--benchmark_format=json", "--benchmark_filter=BM_Reads/")
        self.assertEqual(r.returncode, 0, r.stderr)
        b = benchmarks_of(r.stdout)["BM_Reads/iterations:20"]
        self.assertNotIn(READS, b)
        self.assertNotIn("label", b)
        # --uncore_backend alone sets the ScopedCounters backend.
        r = run("--uncore_backend=sim", "--benchmark_format=json",
                "--benchmark_filter=BM_Scoped")
        self.assertEqual(r.returncode, 0, r.stderr)
        b = benchmarks_of(r.stdout)["BM_Scoped/iterations:20"]
        self.assertEqual(b[READS], 5)
        self.assertEqual(b["label"], "uncore: SIMULATED")

    def test_unrecognized_benchmark_flag_still_fails(self):
        r = run(*FLAGS, "--no_such_flag")
        self.assertEqual(r.returncode, 1)

    def test_help_lists_the_uncore_flags(self):
        r = run("--help")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("--benchmark_filter", r.stdout)
        self.assertIn("--uncore_events", r.stdout)


class UnsupportedVersionTest(harness.TempDirTest):
    """A Google Benchmark the flags do not support (flag path 0): they are
    refused, saying so, and ScopedCounters still counts."""

    def setUp(self):
        super().setUp()
        if FLAG_PATH != "0":
            self.skipTest("this Google Benchmark supports the flags "
                          "(FlagsTest)")

    def test_flags_are_refused_and_scoped_counters_work(self):
        r = run(*FLAGS)
        self.assertEqual(r.returncode, 1)
        self.assertIn("is not supported for the flag mode", r.stderr)
        self.assertIn("ScopedCounters", r.stderr)
        self.assertNotIn("BM_Reads", r.stdout)
        r = run("--uncore_backend=sim", "--benchmark_format=json",
                "--benchmark_filter=BM_Scoped")
        self.assertEqual(r.returncode, 0, r.stderr)
        b = benchmarks_of(r.stdout)["BM_Scoped/iterations:20"]
        self.assertEqual(b[READS], 5)


if __name__ == "__main__":
    harness.unittest_main(["program", "flag-path", "profiler-one-iteration"],
                          globals())
