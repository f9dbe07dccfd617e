"""The one harness of the SDK's Python test drivers.

    sys.path.insert(0, <tests/testing>)
    import harness
    from harness import check, skip

    p = harness.run([program, "--flag"], env=harness.environment(
        {"UNCORE_BACKEND": "sim"}))
    check(p.returncode == 0, "the program runs")
    return harness.finish()       # 0, or 1 after any failed check

A check prints one line ("ok   what" / "FAIL what") and is remembered;
`finish` lists the failures and gives the exit code.  `environment` is the
caller's environment without any UNCORE_* variable (and the other prefixes
it is given), so that a developer's shell never changes a test.  A driver
that cannot test anything here exits with SKIP (77), which CTest reports as
skipped (SKIP_RETURN_CODE).

A unittest driver ends with `harness.unittest_main("program", globals())`
and may keep each test's scratch files in a `TempDirTest`'s folder.
"""

import argparse
import os
import shlex
import subprocess
import sys
import tempfile
import unittest

SKIP = 77
FAILURES = []
PASSED = [0]


def check(ok, what):
    """Records one check; returns `ok` so that a driver can stop early."""
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if ok:
        PASSED[0] += 1
    else:
        FAILURES.append(what)
    return ok


def skip(what):
    print("skip " + what, flush=True)


def finish():
    """The exit code: 0 when every check passed, 1 after any failure
    (listed), SKIP when no check ran at all (CTest reports it as skipped
    where the test declares SKIP_RETURN_CODE 77, else as failed): a driver
    that tested nothing never passes."""
    for what in FAILURES:
        print("FAILED: " + what, file=sys.stderr)
    print(f"{PASSED[0]} passed, {len(FAILURES)} failed", flush=True)
    if FAILURES:
        return 1
    if PASSED[0] == 0:
        print("no check ran: nothing was tested", flush=True)
        return SKIP
    return 0


def environment(extra=None, drop=()):
    """This process's environment without UNCORE_* (and `drop` prefixes),
    plus `extra`."""
    prefixes = ("UNCORE_",) + tuple(drop)
    env = {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}
    env.update(extra or {})
    return env


def run(cmd, env=None, cwd=None, timeout=300, show_failure=True, **kwargs):
    """Runs `cmd` (a list), capturing text output; prints the command and
    its output when it exits non-zero."""
    p = subprocess.run(list(cmd), env=env, cwd=cwd, capture_output=True,
                       text=True, timeout=timeout, **kwargs)
    if show_failure and p.returncode != 0:
        print("command: " + " ".join(shlex.quote(str(c)) for c in cmd))
        print(p.stdout + p.stderr, flush=True)
    return p


def perf_can_count_tsc():
    """Whether perf's msr PMU (event tsc) is there to be opened as root."""
    return os.geteuid() == 0 and os.path.exists(
        "/sys/bus/event_source/devices/msr/events/tsc")


def perf_system_wide_reason():
    """Why perf's msr/tsc/ cannot be opened system-wide here (no msr PMU,
    or neither root nor perf_event_paranoid <= 0), or "" when it can."""
    if not os.path.isdir("/sys/bus/event_source/devices/msr"):
        return "no msr PMU in /sys/bus/event_source/devices"
    try:
        with open("/proc/sys/kernel/perf_event_paranoid") as f:
            paranoid = int(f.read())
    except (OSError, ValueError):
        paranoid = 2
    if os.geteuid() != 0 and paranoid > 0:
        return "system-wide perf needs root or perf_event_paranoid <= 0"
    return ""


class TempDirTest(unittest.TestCase):
    """A scratch folder per test: self.dir.name, path(name) in it."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def path(self, name):
        return os.path.join(self.dir.name, name)


def unittest_main(options, module_globals, optional=None):
    """The main() of a unittest driver: takes each required --OPTION
    (`options`: one name or several) and each `optional` one (name ->
    default) into the driver's global OPTION (upper case, "-" as "_"), and
    gives the rest to unittest.  Exits 0 when every test passed, 1 after
    any failure or error, SKIP when no test ran or every one was skipped:
    a driver that tested nothing never passes."""
    parser = argparse.ArgumentParser()
    for name in [options] if isinstance(options, str) else options:
        parser.add_argument("--" + name, required=True)
    for name, default in (optional or {}).items():
        parser.add_argument("--" + name, default=default)
    args, rest = parser.parse_known_args()
    for name, value in vars(args).items():
        module_globals[name.upper()] = value
    result = unittest.main(argv=[sys.argv[0], *rest], verbosity=2,
                           exit=False).result
    if not result.wasSuccessful():
        sys.exit(1)
    if result.testsRun == len(result.skipped):
        print("no test ran: nothing was tested", flush=True)
        sys.exit(SKIP)
    sys.exit(0)
