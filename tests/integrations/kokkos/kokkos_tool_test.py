#!/usr/bin/env python3
"""libuncore_kokkos.so, the Kokkos Tools library: its callbacks become
uncore regions with the right names, calls and nesting, and the report is
written at kokkosp_finalize_library (Kokkos::finalize).  Builds nothing:
runs what CMake built, on the simulator.

  kokkos_tool_test.py --tool libuncore_kokkos.so --driver kokkos_tool_driver
      the callbacks called directly (kokkos_tool_driver.cc)
  kokkos_tool_test.py --tool libuncore_kokkos.so --program kokkos_program
      an unmodified Kokkos program (kokkos_program.cc) run with the tool
  kokkos_tool_test.py --tool libuncore_kokkos.so --skip-reason WHY
      no Kokkos program could be built: prints "skipped: WHY", exits 0
"""
import argparse
import json
import os
import re
import sys
import unittest

TOOL = None
DRIVER = None
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "testing"))
import harness  # noqa: E402

PROGRAM = None
EVENT = "imc/CAS_COUNT.RD"


def environment(env):
    """The caller's environment without UNCORE_* and Kokkos tool
    variables, plus `env`."""
    return harness.environment(env, drop=("KOKKOS_",))


class ToolTest(harness.TempDirTest):
    """A scratch directory per test and a report reader."""

    def setUp(self):
        super().setUp()
        self.report = self.path("report.json")

    def sim(self, **extra):
        env = {"UNCORE_EVENTS": EVENT, "UNCORE_BACKEND": "sim",
               "UNCORE_OUTPUT": self.report}
        env.update(extra)
        return env

    def run_binary(self, argv, env):
        r = harness.run(argv, env=environment(env), timeout=120,
                        show_failure=False)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        return r

    def regions(self):
        """{path: calls} of the report; checks what every region holds."""
        with open(self.report, encoding="utf-8") as f:
            report = json.load(f)
        self.assertGreaterEqual(report["schema_version"], 1)
        self.assertTrue(report["simulated"])
        self.errors = report["errors"]
        self.raw = {r["path"]: r for r in report["regions"]}
        calls = {}
        for region in report["regions"]:
            path = region["path"]
            self.assertNotIn(path, calls)
            self.assertIn(EVENT, region["events"])
            self.assertEqual(region["open_calls"], 0, path)
            # The name is the last step of the path; depth counts the steps
            # (names here hold no '/', except the long ones, cut).
            if "/" not in region["name"]:
                self.assertTrue(path.endswith(region["name"]), path)
                self.assertEqual(region["depth"], path.count("/"), path)
            calls[path] = region["calls"]
        return calls


class DriverTest(ToolTest):
    """kokkos_tool_driver calls the callbacks as Kokkos would."""

    def drive(self, scenario, **extra):
        r = self.run_binary([DRIVER, TOOL, scenario], self.sim(**extra))
        # Written by kokkosp_finalize_library, before the program ends.
        self.assertIn("report at finalize: yes", r.stdout)
        return r

    def test_nested_regions_kernels_and_sections(self):
        self.drive("regions")
        self.assertEqual(self.regions(), {
            "outer": 1,
            "outer/step": 3,
            "outer/step/kernel_for": 6,
            "outer/step/kernel_reduce": 3,
            "outer/step/kernel_scan": 3,
            "outer/step/inner": 3,
            "outer/step/inner/kernel_for": 3,
            "section": 2,  # a marker region: always at the top level
            "kernel_for": 2,
        })
        # The pop without a push and the unknown kID were ignored; the
        # kernel after kokkosp_finalize_library is not in the report.
        self.assertEqual(self.errors, [])

    def test_table_on_stderr_by_default(self):
        env = self.sim()
        del env["UNCORE_OUTPUT"]
        r = self.run_binary([DRIVER, TOOL, "regions"], env)
        self.assertIn("kernel_reduce", r.stderr)
        self.assertIn("SIMULATED", r.stderr)

    def test_fences_and_deep_copies_are_off_by_default(self):
        self.drive("extras")
        self.assertEqual(self.regions(), {"work": 1, "work/copy_kernel": 2})

    def test_fences_and_deep_copies_on(self):
        self.drive("extras", UNCORE_KOKKOS_FENCES="1",
                   UNCORE_KOKKOS_DEEP_COPIES="1")
        # Kokkos's own fences around callbacks are never regions.
        self.assertEqual(self.regions(), {
            "work": 1,
            "work/Kokkos::fence: user": 2,
            "work/deep_copy Host:dst <- Host:src": 2,
            "work/deep_copy Host:dst <- Host:src/copy_kernel": 2,
        })
        self.assertEqual(self.errors, [])

    def test_each_option_alone(self):
        self.drive("extras", UNCORE_KOKKOS_FENCES="true",
                   UNCORE_KOKKOS_DEEP_COPIES="0")
        self.assertEqual(self.regions(), {
            "work": 1, "work/Kokkos::fence: user": 2,
            "work/copy_kernel": 2})
        self.drive("extras", UNCORE_KOKKOS_DEEP_COPIES="YES")
        self.assertEqual(self.regions(), {
            "work": 1, "work/deep_copy Host:dst <- Host:src": 2,
            "work/deep_copy Host:dst <- Host:src/copy_kernel": 2})

    def test_empty_long_and_many_names(self):
        self.drive("names")
        calls = self.regions()
        self.assertEqual(len(calls), 3 + 1 + 3000 + 4)
        self.assertEqual(calls["(unnamed)"], 1)
        # typeid names are demangled, as kokkos-tools' timers show them;
        # plain labels stay as they are.
        self.assertEqual(
            calls["contraction<Kokkos::View<double**, Kokkos::LayoutRight> >"],
            1, calls.keys() - {f"name_{i}" for i in range(3000)})
        self.assertEqual(calls["main::{lambda(int)#1}"], 1)
        self.assertEqual(calls["i"], 1)
        self.assertEqual(calls["Zone"], 1)
        for i in range(3000):
            self.assertEqual(calls[f"name_{i}"], 2)
        cut = re.compile(r"^(.*)\.\.\.#[0-9a-f]{8}$")
        long_names = [p for p in calls if p.startswith("x")]
        self.assertEqual(len(long_names), 2)  # told apart by the hash
        for name in long_names:
            self.assertLessEqual(len(name.encode("utf-8")), 200)
            self.assertEqual(calls[name], 1)
            self.assertEqual(cut.match(name).group(1),
                             "x" * (200 - len("...#12345678")))
        # Cut between characters, never inside one.
        utf8 = [p for p in calls if p.startswith("\u00e9")]
        self.assertEqual(len(utf8), 1)
        self.assertLessEqual(len(utf8[0].encode("utf-8")), 200)
        self.assertEqual(set(cut.match(utf8[0]).group(1)), {"\u00e9"})

    def test_sections_may_overlap(self):
        self.drive("overlap")
        self.assertEqual(self.regions(), {
            "a": 1, "region": 1, "b": 1, "region/kernel": 1})
        self.assertEqual(self.errors, [])

    def test_threads(self):
        self.drive("threads")
        expected = {"thread": 4, "thread/shared_kernel": 400}
        for t in range(4):
            expected[f"thread/kernel_{t}"] = 50
        self.assertEqual(self.regions(), expected)
        self.assertEqual(self.errors, [])
        # Schema 2 says how many threads entered each region.
        if "threads" in self.raw["thread"]:
            self.assertEqual(self.raw["thread"]["threads"], 4)
            self.assertEqual(self.raw["thread/shared_kernel"]["threads"], 4)

    def test_no_allocation_once_a_name_is_known(self):
        r = self.drive("allocations", UNCORE_KOKKOS_FENCES="1",
                       UNCORE_KOKKOS_DEEP_COPIES="1")
        self.assertIn("allocations: 0\n", r.stdout)
        first = re.search(r"first use allocations: (\d+)", r.stdout)
        self.assertGreater(int(first.group(1)), 0)  # the counter counts
        calls = self.regions()
        self.assertEqual(calls["round"], 1002)
        self.assertEqual(calls["round/deep_copy Host:dst <- Host:src"], 1002)
        self.assertEqual(calls["section"], 1002)

    def test_without_events_nothing_is_measured(self):
        r = self.run_binary([DRIVER, TOOL, "regions"],
                            {"UNCORE_OUTPUT": self.report})
        self.assertIn("UNCORE_EVENTS and UNCORE_METRICS are unset", r.stderr)
        self.assertNotIn("report at finalize", r.stdout)
        self.assertFalse(os.path.exists(self.report))


class ProgramTest(ToolTest):
    """An unmodified Kokkos program with the tool: Kokkos 4 reads
    KOKKOS_TOOLS_LIBS, Kokkos 3 KOKKOS_PROFILE_LIBRARY."""

    def run_program(self, iterations, **extra):
        env = self.sim(KOKKOS_TOOLS_LIBS=TOOL, KOKKOS_PROFILE_LIBRARY=TOOL)
        env.update(extra)
        r = self.run_binary([PROGRAM, str(iterations), "1000"], env)
        self.assertIn("report at finalize: yes", r.stdout)
        return self.regions()

    def test_kernels_regions_and_sections(self):
        calls = self.run_program(5)
        for path, n in {"iteration": 5, "iteration/fill": 5,
                        "iteration/axpy": 5, "iteration/dot": 5,
                        "prefix_sum": 1, "section": 2,
                        "in_section": 2}.items():
            self.assertEqual(calls.get(path), n, f"{path}: {calls}")
        # The unnamed kernel's label is its functor's type name, mangled
        # or not depending on the Kokkos version: shown demangled.
        unnamed = [p for p in calls if "Square" in p]
        self.assertEqual(len(unnamed), 1, calls)
        self.assertIn("(anonymous namespace)::Square", unnamed[0])
        self.assertEqual(calls[unnamed[0]], 1)
        self.assertFalse([p for p in calls if p.startswith("deep_copy")])
        self.assertEqual(self.errors, [])

    def test_deep_copies(self):
        calls = self.run_program(2, UNCORE_KOKKOS_DEEP_COPIES="1")
        self.assertEqual(calls.get("deep_copy Host:y <- Host:x"), 1, calls)
        self.assertEqual(calls.get("iteration/dot"), 2)


def main():
    global TOOL, DRIVER, PROGRAM
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool", required=True)
    parser.add_argument("--driver")
    parser.add_argument("--program")
    parser.add_argument("--skip-reason",
                        default="no Kokkos program was given (--program)")
    args, rest = parser.parse_known_args()
    TOOL, DRIVER, PROGRAM = args.tool, args.driver, args.program
    if DRIVER:
        suite = DriverTest
    elif PROGRAM:
        suite = ProgramTest
    else:
        print(f"skipped: {args.skip_reason}")
        return 0
    tests = unittest.defaultTestLoader.loadTestsFromTestCase(suite)
    if rest:
        tests = unittest.TestSuite(
            t for t in tests if any(name in t.id() for name in rest))
    result = unittest.TextTestRunner(verbosity=2).run(tests)
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
