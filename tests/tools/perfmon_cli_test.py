#!/usr/bin/env python3
"""End-to-end tests of the generated perf-only platforms through the CLI:
`uncore list --platforms`, `uncore list --platform P [--json]` and
`uncore describe --platform P SPEC` (issue 13's done-when checks).

The DRAM CAS encodings are checked twice: against the issue's table (always)
and against Intel's JSON files (when --spec-dir holds intel-perfmon/)."""
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "testing"))
import harness  # noqa: E402

UNCORE = None
SPEC_DIR = None
FIXTURES = os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "platforms", "perfmon_fixtures")

INTEL_FILES = {
    "haswellx": "HSX/events/haswellx_uncore.json",
    "broadwellx": "BDX/events/broadwellx_uncore.json",
    "skylakex": "SKX/events/skylakex_uncore.json",
    "cascadelakex": "CLX/events/cascadelakex_uncore.json",
    "icelakex": "ICX/events/icelakex_uncore.json",
    "sapphirerapids": "SPR/events/sapphirerapids_uncore.json",
    "emeraldrapids": "EMR/events/emeraldrapids_uncore.json",
    "graniterapids": "GNR/events/graniterapids_uncore.json",
    "sierraforest": "SRF/events/sierraforest_uncore.json",
}

# Issue 13's table: platform -> (read encodings, write encodings), each a
# list of "event=..,umask=.." perf terms (several: summed schedulers).
CAS_TABLE = {
    "skylakex": (["event=0x04,umask=0x03"], ["event=0x04,umask=0x0c"]),
    "cascadelakex": (["event=0x04,umask=0x03"], ["event=0x04,umask=0x0c"]),
    "icelakex": (["event=0x04,umask=0x0f"], ["event=0x04,umask=0x30"]),
    "sapphirerapids": (["event=0x05,umask=0xcf"], ["event=0x05,umask=0xf0"]),
    "emeraldrapids": (["event=0x05,umask=0xcf"], ["event=0x05,umask=0xf0"]),
    "graniterapids": (["event=0x05,umask=0xcf", "event=0x06,umask=0xcf"],
                      ["event=0x05,umask=0xf0", "event=0x06,umask=0xf0"]),
    "sierraforest": (["event=0x05,umask=0xcf", "event=0x06,umask=0xcf"],
                     ["event=0x05,umask=0xf0", "event=0x06,umask=0xf0"]),
}


def run(*args, env=None):
    return harness.run([UNCORE, *args], env=harness.environment(env),
                       timeout=60, show_failure=False)


def describe_json(platform, spec, *extra):
    r = run("describe", "--platform", platform, "--json", spec, *extra)
    if r.returncode != 0:
        raise AssertionError("%s %s: %s" % (platform, spec, r.stderr))
    return json.loads(r.stdout)


def terms_of(doc):
    return [e["terms"] for e in doc["events"]]


def vendor_events(platform):
    path = os.path.join(SPEC_DIR or "", "intel-perfmon",
                        INTEL_FILES[platform])
    if not SPEC_DIR or not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as f:
        return json.load(f)["Events"]


class PlatformListTest(unittest.TestCase):
    def test_lists_every_platform(self):
        r = run("list", "--platforms", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        names = [p["name"] for p in json.loads(r.stdout)]
        for want in list(INTEL_FILES) + ["amdzen2", "amdzen3", "amdzen4",
                                         "amdzen5", "ivytown"]:
            self.assertIn(want, names)
        r = run("list", "--platforms")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("sapphirerapids", r.stdout)
        self.assertIn("model 0x8f", r.stdout)

    def test_unknown_platform_is_a_usage_error(self):
        r = run("list", "--platform", "sapphirerapid")
        self.assertEqual(r.returncode, 2)
        self.assertIn("sapphirerapids", r.stderr)

    def test_ivytown_keeps_todays_behaviour(self):
        plain = run("describe", "imc/CAS_COUNT.RD")
        for name in ("ivytown", "ivbep"):
            r = run("describe", "--platform", name, "imc/CAS_COUNT.RD")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout, plain.stdout)
        self.assertEqual(run("list", "--platform", "ivytown", "imc").stdout,
                         run("list", "imc").stdout)

    def test_list_json_holds_every_event_of_intels_file(self):
        for platform in INTEL_FILES:
            vendor = vendor_events(platform)
            if vendor is None:
                self.skipTest("no intel-perfmon folder under --spec-dir")
            r = run("list", "--platform", platform, "--json")
            self.assertEqual(r.returncode, 0, r.stderr)
            doc = json.loads(r.stdout)
            listed = [e["name"] for e in doc["events"]]
            self.assertEqual(len(listed), len(vendor), platform)
            self.assertEqual(sorted(listed),
                             sorted(e["EventName"] for e in vendor), platform)

    def test_list_box_pattern(self):
        r = run("list", "--platform", "spr", "imc")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("imc/CAS_COUNT.RD", r.stdout)
        self.assertNotIn("cha/", r.stdout)

    def test_environment_names_the_platform(self):
        r = run("describe", "UNC_M_CAS_COUNT.WR",
                env={"UNCORE_PLATFORM": "icelakex"})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("uncore_imc_N/event=0x04,umask=0x30/", r.stdout)


class DescribeTest(unittest.TestCase):
    def test_cas_counts_match_the_issue_table(self):
        for platform, (reads, writes) in CAS_TABLE.items():
            for spec in ("imc/CAS_COUNT.RD", "UNC_M_CAS_COUNT.RD",
                         "uncore_imc/CAS_COUNT.RD"):
                self.assertEqual(terms_of(describe_json(platform, spec)),
                                 reads, (platform, spec))
            for spec in ("imc/CAS_COUNT.WR", "unc_m_cas_count.wr"):
                self.assertEqual(terms_of(describe_json(platform, spec)),
                                 writes, (platform, spec))
            self.assertEqual(
                terms_of(describe_json(platform, "metric/MEM_BW_READS")),
                reads, platform)
            self.assertEqual(
                terms_of(describe_json(platform, "metric/MEM_BW_TOTAL")),
                reads + writes, platform)

    def test_cas_counts_match_intels_files(self):
        for platform, (reads, writes) in CAS_TABLE.items():
            vendor = vendor_events(platform)
            if vendor is None:
                self.skipTest("no intel-perfmon folder under --spec-dir")
            for suffix, want in ((".RD", reads), (".WR", writes)):
                got = []
                for e in vendor:
                    n = e["EventName"]
                    if n == "UNC_M_CAS_COUNT" + suffix or (
                            n.startswith("UNC_M_CAS_COUNT_SCH") and
                            n.endswith(suffix)):
                        got.append("event=0x%02x,umask=0x%02x" % (
                            int(e["EventCode"], 16), int(e["UMask"], 16)))
                self.assertEqual(sorted(got), sorted(want),
                                 (platform, suffix))

    def test_kernel_syntax_resolves_to_the_vendor_name(self):
        doc = describe_json("sapphirerapids",
                            "uncore_imc_0/event=0x05,umask=0xcf/")
        self.assertEqual(doc["name"], "UNC_M_CAS_COUNT.RD")
        self.assertEqual(doc["events"][0]["perf"],
                         "uncore_imc_0/event=0x05,umask=0xcf/")

    def test_text_shows_the_perf_encoding(self):
        r = run("describe", "--platform", "sapphirerapids", "imc/CAS_COUNT.RD")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("uncore_imc_N/event=0x05,umask=0xcf/", r.stdout)
        self.assertIn("UNC_M_CAS_COUNT.RD", r.stdout)

    def test_amd_zen4_memory_bandwidth(self):
        doc = describe_json("amdzen4", "metric/MEM_BW_TOTAL")
        self.assertEqual([(e["pmu"], e["terms"]) for e in doc["events"]],
                         [("amd_umc", "event=0x0a,rdwrmask=0x1"),
                          ("amd_umc", "event=0x0a,rdwrmask=0x2")])
        doc = describe_json("amdzen4", "umc_cas_cmd.rd")
        self.assertEqual(terms_of(doc), ["event=0x0a,rdwrmask=0x1"])

    def test_metric_needing_core_events_says_so(self):
        r = run("list", "--platform", "skylakex", "--metrics")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("needs core events", r.stdout)
        self.assertIn("metric/memory_bandwidth_read", r.stdout)

    def test_unknown_name_names_platform_and_neighbours(self):
        r = run("describe", "--platform", "icelakex", "imc/CAS_CONT.RD")
        self.assertEqual(r.returncode, 2)
        self.assertIn("icelakex", r.stderr)
        self.assertIn("imc/CAS_COUNT.RD", r.stderr)

    def test_opens_the_pmus_the_sysfs_fixture_has(self):
        root = os.path.join(FIXTURES, "spr2s")
        doc = describe_json("sapphirerapids", "imc/CAS_COUNT.RD",
                            "--sysfs", root)
        self.assertEqual(doc["events"][0]["pmus"],
                         ["uncore_imc_%d" % i for i in range(12)])
        self.assertEqual(doc["group_reads_per_snapshot"], 24)
        # The same reads, each an Intel uncore group: local on any CPU of
        # its socket (tools/cli/read_cost.h).
        reads = doc["reads"]["perf"]
        self.assertEqual(reads["reads_per_snapshot"], 24)
        self.assertEqual(reads["reads_per_region_pair"], 48)
        self.assertEqual({g["locality"] for g in reads["groups"]},
                         {"package"})
        self.assertEqual(sorted({g["socket"] for g in reads["groups"]}),
                         [0, 1])
        r = run("describe", "--platform", "spr", "--sysfs", root,
                "imc/CAS_COUNT.RD")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("uncore_imc_10 uncore_imc_11 (12 PMUs), "
                      "config=0xcf05,", r.stdout)
        self.assertNotIn("free_running", r.stdout)
        self.assertIn("24 group reads", r.stdout)
        r = run("describe", "--platform", "spr", "--sysfs", root,
                "metric/MEM_BW_TOTAL")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("uncore_imc_free_running_0 uncore_imc_free_running_1 "
                      "uncore_imc_free_running_2 uncore_imc_free_running_3 "
                      "also count without programming (events: dclk, "
                      "rpq_cycles, wpq_cycles)", r.stdout)
        r = run("describe", "--platform", "zen4", "--sysfs", root,
                "umc_cas_cmd.rd")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("none here", r.stdout)
        self.assertIn("amd_umc", r.stdout)


GENERATOR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "tools", "gen_perfmon_platforms.py")


def fixture(name):
    return os.path.join(FIXTURES, name)


def opens(platform, spec, tree):
    """The describe text's "opens" lines for `spec` on a fixture tree."""
    r = run("describe", "--platform", platform, "--sysfs", fixture(tree),
            spec)
    if r.returncode != 0:
        raise AssertionError("%s %s: %s" % (platform, spec, r.stderr))
    return [line for line in r.stdout.splitlines()
            if line.startswith("opens")]


class KernelFormatTest(unittest.TestCase):
    """Issue 23 item 3: vendor data the kernel reads differently, checked
    against sysfs trees made from the kernel's format attributes
    (perfmon_fixtures/SOURCES.md)."""

    def test_skylake_cha_filter_is_config1_high_half(self):
        for platform in ("skylakex", "cascadelakex"):
            lines = opens(platform, "UNC_CHA_TOR_INSERTS.IA_HIT_CRD", "skx2s")
            self.assertEqual(len(lines), 1, lines)
            self.assertIn("uncore_cha_0 ", lines[0])
            self.assertIn(",config1=0x4023300000000,", lines[0])

    def test_skylake_fixture_is_the_kernels(self):
        fmt = os.path.join(fixture("skx2s"), "bus", "event_source",
                           "devices", "uncore_cha_0", "format")
        fields = sorted(os.listdir(fmt))
        self.assertNotIn("filter_opc", fields)
        self.assertEqual(fields, sorted([
            "event", "umask", "edge", "tid_en", "inv", "thresh", "filter_tid",
            "filter_state", "filter_rem", "filter_loc", "filter_nm",
            "filter_all_op", "filter_not_nm", "filter_opc0", "filter_opc1",
            "filter_nc", "filter_isoc"]))
        with open(os.path.join(fmt, "filter_opc0")) as f:
            self.assertEqual(f.read().strip(), "config1:41-50")

    def test_haswell_pcu_occupancy_uses_occ_sel(self):
        for n, state in ((1, "C0"), (2, "C3"), (3, "C6")):
            lines = opens("haswellx",
                          "UNC_P_POWER_STATE_OCCUPANCY.CORES_" + state,
                          "hsx2s")
            self.assertEqual(lines, ["opens      uncore_pcu (1 PMU), "
                                     "config=0x%x,config1=0x0,config2=0x0" %
                                     (0x80 | n << 14)])

    def test_iio_metrics_open_on_granite_rapids(self):
        for metric in ("iio_bandwidth_read", "iio_bandwidth_write",
                       "io_msi"):
            lines = opens("graniterapids", "metric/" + metric, "gnr1s")
            self.assertTrue(lines, metric)
            for line in lines:
                self.assertNotIn("none here", line)
                self.assertIn("uncore_iio_0 ", line)

    def test_sapphire_rapids_hbm_pmu_is_hbm(self):
        lines = opens("sapphirerapids", "UNC_MCHBM_CLOCKTICKS", "spr2s")
        self.assertEqual(len(lines), 1)
        self.assertIn("uncore_hbm_31 (32 PMUs)", lines[0])

    def test_unopenable_events_are_refused_with_the_encoders_message(self):
        r = run("describe", "--platform", "graniterapids", "--sysfs",
                fixture("gnr1s"), "UNC_CHA_TOR_INSERTS.IA_HIT_CXL_ACC")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("none here", r.stdout)
        self.assertIn("does not fit in field 'umask'", r.stdout)

    def test_generator_counts_the_unopenable_events(self):
        if not SPEC_DIR or not os.path.isdir(os.path.join(SPEC_DIR,
                                                          "intel-perfmon")):
            self.skipTest("no intel-perfmon folder under --spec-dir")
        r = harness.run([sys.executable, GENERATOR, "--unopenable",
                         "--spec-dir", SPEC_DIR], timeout=120,
                        show_failure=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        counts = {}
        for line in r.stdout.splitlines():
            counts[line.split()[0]] = counts.get(line.split()[0], 0) + 1
        self.assertEqual(counts, {"icelakex": 2, "sapphirerapids": 7,
                                  "emeraldrapids": 7, "graniterapids": 31,
                                  "sierraforest": 31})

    def test_list_marks_every_unopenable_event(self):
        want = {"haswellx": 0, "broadwellx": 0, "skylakex": 0,
                "cascadelakex": 0, "icelakex": 2, "sapphirerapids": 7,
                "emeraldrapids": 7, "graniterapids": 31, "sierraforest": 31}
        for platform, count in want.items():
            r = run("list", "--platform", platform, "--json")
            self.assertEqual(r.returncode, 0, r.stderr)
            refused = [e for e in json.loads(r.stdout)["events"]
                       if not e["opens"]]
            self.assertEqual(len(refused), count, platform)
            for e in refused:
                self.assertTrue(e["unopenable"], e["name"])
            r = run("list", "--platform", platform)
            self.assertEqual(r.returncode, 0, r.stderr)
            marked = [line for line in r.stdout.splitlines()
                      if "(cannot be opened: " in line]
            self.assertEqual(len(marked), count, platform)
            if count:
                self.assertIn("%d of them no kernel format can open" % count,
                              r.stdout)
        r = run("list", "--platform", "icelakex", "m2m")
        self.assertIn("UNC_M2M_IMC_READS.TO_PMM", r.stdout)
        self.assertIn("(cannot be opened: umask=0x720 does not fit the "
                      "kernel's umask field (config:8-15, 8 bits))", r.stdout)

    def test_zen5_dram_metrics_are_credited_to_the_sdk(self):
        r = run("list", "--platforms", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        zen5 = [p for p in json.loads(r.stdout) if p["name"] == "amdzen5"][0]
        self.assertIn("dram_read_data_local_or_remote", zen5["source"])
        self.assertIn("the SDK's own, not perf's", zen5["source"])


class GeneratorDefaultsTest(unittest.TestCase):
    def test_default_output_paths_are_the_committed_files(self):
        # Without --out / --out-dir each generator checks the file CMake
        # builds (issue 23 item 3: gen_event_catalog.py's default was stale).
        if not SPEC_DIR or not os.path.isdir(os.path.join(SPEC_DIR,
                                                          "intel-perfmon")):
            self.skipTest("no intel-perfmon folder under --spec-dir")
        tools = os.path.dirname(GENERATOR)
        for script in ("gen_event_catalog.py", "gen_perfmon_platforms.py"):
            r = harness.run([sys.executable, os.path.join(tools, script),
                             "--check", "--spec-dir", SPEC_DIR], timeout=120,
                            show_failure=False)
            self.assertEqual(r.returncode, 0, (script, r.stdout, r.stderr))


class DoctorTest(unittest.TestCase):
    def doctor(self, vendor, family, model):
        with tempfile.TemporaryDirectory() as tmp:
            cpuinfo = os.path.join(tmp, "cpuinfo")
            with open(cpuinfo, "w") as f:
                f.write("processor\t: 0\nvendor_id\t: %s\n"
                        "cpu family\t: %d\nmodel\t\t: %d\n"
                        "model name\t: fixture\nflags\t\t: fpu\n\n" %
                        (vendor, family, model))
            text = run("doctor", "--cpuinfo", cpuinfo, "--sysfs",
                       os.path.join(FIXTURES, "spr2s"))
            js = run("doctor", "--json", "--cpuinfo", cpuinfo, "--sysfs",
                     os.path.join(FIXTURES, "spr2s"))
        return text.stdout, json.loads(js.stdout)

    def test_names_the_detected_platform(self):
        text, doc = self.doctor("GenuineIntel", 6, 0x8f)
        self.assertIn("platform    sapphirerapids (from vendor data", text)
        self.assertEqual(doc["cpu"]["platforms"], ["sapphirerapids"])
        text, doc = self.doctor("GenuineIntel", 6, 0x55)
        self.assertIn("platform    skylakex or cascadelakex, by stepping",
                      text)
        text, doc = self.doctor("AuthenticAMD", 0x19, 0x11)
        self.assertEqual(doc["cpu"]["platforms"], ["amdzen4"])
        text, doc = self.doctor("GenuineIntel", 6, 0x3e)
        self.assertIn("platform    ivytown (built in", text)
        self.assertEqual(doc["cpu"]["platforms"], [])


if __name__ == "__main__":
    harness.unittest_main("uncore", globals(), optional={"spec-dir": ""})
