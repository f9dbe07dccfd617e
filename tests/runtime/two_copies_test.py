#!/usr/bin/env python3
"""Two copies of the SDK in one process (sdk/runtime/process_registry.h).

two_copies_host links libuncore_sdk.so and starts the UNCORE_EVENTS session;
it then loads a plugin.  The plugin linked to libuncore_sdk.a is a second
copy: its environment session says so once on stderr and does not start,
its Session::Start is refused saying how to link, and the one report holds
the host's regions only.  The plugin linked to libuncore_sdk.so shares the
host's copy: no warning, the ordinary one-session-at-a-time refusal, and
its region is in the host's report.

  two_copies_test.py --host HOST --static-plugin SO --shared-plugin SO
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "testing"))
import harness  # noqa: E402

HOST = STATIC_PLUGIN = SHARED_PLUGIN = None


def run_host(plugin, out_dir):
    env = harness.environment({
        "UNCORE_EVENTS": "imc/CAS_COUNT.RD", "UNCORE_BACKEND": "sim",
        "UNCORE_OUTPUT": os.path.join(out_dir, "report-%p.json")})
    return harness.run([HOST, plugin], env=env, timeout=120,
                       show_failure=False)


def reports(out_dir):
    names = sorted(os.listdir(out_dir))
    result = []
    for name in names:
        with open(os.path.join(out_dir, name), encoding="utf-8") as f:
            result.append(json.load(f))
    return names, result


class TwoCopiesTest(harness.TempDirTest):
    def test_static_plugin_is_a_second_copy(self):
        r = run_host(STATIC_PLUGIN, self.dir.name)
        self.assertEqual(r.returncode, 0, r.stderr)
        # The plugin's environment session: one warning, naming the
        # plugin's file and the fix.
        warnings = [line for line in r.stderr.splitlines()
                    if line.startswith("uncore:")]
        self.assertEqual(len(warnings), 1, r.stderr)
        self.assertIn("regions will not be measured", warnings[0])
        self.assertIn("another copy of the Uncore SDK in this process",
                      warnings[0])
        self.assertIn(os.path.basename(STATIC_PLUGIN), warnings[0])
        self.assertIn("libuncore_sdk.so", warnings[0])
        # The plugin's own Session::Start: refused the same way.
        self.assertIn("plugin session: refused: another copy of the Uncore "
                      "SDK in this process", r.stdout)
        self.assertIn("link each of them to the shared library", r.stdout)
        # One report, the host's, without the plugin's region.
        names, found = reports(self.dir.name)
        self.assertEqual(len(found), 1, names)
        paths = [region["path"] for region in found[0]["regions"]]
        self.assertIn("host", paths)
        self.assertIn("host-after", paths)
        self.assertNotIn("plugin", paths)

    def test_shared_plugin_shares_the_session(self):
        r = run_host(SHARED_PLUGIN, self.dir.name)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("another copy", r.stderr + r.stdout)
        self.assertIn("plugin session: refused: another uncore::Session is "
                      "active", r.stdout)
        names, found = reports(self.dir.name)
        self.assertEqual(len(found), 1, names)
        paths = [region["path"] for region in found[0]["regions"]]
        self.assertEqual(sorted(paths), ["host", "host-after", "plugin"])


if __name__ == "__main__":
    harness.unittest_main(("host", "static-plugin", "shared-plugin"),
                          globals())
