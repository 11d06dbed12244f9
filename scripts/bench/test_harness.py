"""The regression guard's own logic (`harness.py --compare` / `--save-baseline`) on made-up results,
and the /proc sampler that counts the fleet's threads on a few short processes: run by
scripts/test.sh; needs no build, peer or benchmark run."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HARNESS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "harness.py")


def results(*workloads):
    return {"runs": 5, "workloads": [{"key": key, "title": key, "ratios": checks} for key, checks in workloads]}


def check(label, value, better="higher", **extra):
    return {"ratio": label, "value": value, "better": better, **extra}


class CompareTests(unittest.TestCase):
    def run_harness(self, *args, env=None):
        return subprocess.run([sys.executable, HARNESS, *args], capture_output=True, text=True, env=dict(os.environ, **(env or {})))

    def write(self, directory, name, data):
        path = os.path.join(directory, name)
        with open(path, "w") as f:
            json.dump(data, f)
        return path

    def compare(self, baseline, current, **env):
        with tempfile.TemporaryDirectory() as d:
            return self.run_harness("--compare", self.write(d, "b.json", baseline), self.write(d, "c.json", current), env=env)

    def test_a_ratio_between_peers_is_reported_but_never_fails(self):
        base = results(("verify-ec", [check("floor / openssl", 1.00, guarded=False), check("mtls / openssl", 0.90)]))
        now = self.compare(base, results(("verify-ec", [check("floor / openssl", 0.50, guarded=False), check("mtls / openssl", 0.89)])))
        self.assertEqual(now.returncode, 0, now.stdout + now.stderr)
        self.assertIn("reference, not guarded", now.stdout)
        self.assertIn("No regression", now.stdout)

    def test_a_drop_within_the_tolerance_passes_and_beyond_it_fails(self):
        base = results(("verify-ec", [check("mtls / openssl", 1.50)]))
        ok = self.compare(base, results(("verify-ec", [check("mtls / openssl", 1.21)])))
        self.assertEqual(ok.returncode, 0, ok.stdout + ok.stderr)
        self.assertIn("No regression", ok.stdout)
        bad = self.compare(base, results(("verify-ec", [check("mtls / openssl", 1.19)])))
        self.assertEqual(bad.returncode, 1, bad.stdout + bad.stderr)
        self.assertIn("**regressed**", bad.stdout)
        self.assertIn("1 regression(s)", bad.stdout)

    def test_lower_is_better_checks_fail_when_they_grow(self):
        base = results(("startup", [check("mtls/openssl time", 1.0, "lower")]), ("https-download-tls13", [check("mtls peak RSS", 10.0, "lower", unit="MiB")]))
        self.assertEqual(self.compare(base, results(("startup", [check("mtls/openssl time", 0.5, "lower")]))).returncode, 0)
        self.assertEqual(self.compare(base, results(("startup", [check("mtls/openssl time", 1.24, "lower")]))).returncode, 0)
        self.assertEqual(self.compare(base, results(("startup", [check("mtls/openssl time", 1.26, "lower")]))).returncode, 1)
        self.assertEqual(self.compare(base, results(("https-download-tls13", [check("mtls peak RSS", 13.0, "lower", unit="MiB")]))).returncode, 1)

    def test_thread_counts_have_an_absolute_slack(self):
        base = results(("fleet-scale", [check("one process, peak threads", 8, "lower", unit=" threads", slack=8)]))
        def now(threads):
            return results(("fleet-scale", [check("one process, peak threads", threads, "lower", unit=" threads", slack=8)]))
        self.assertEqual(self.compare(base, now(11)).returncode, 0)
        self.assertEqual(self.compare(base, now(18)).returncode, 0)
        self.assertEqual(self.compare(base, now(19)).returncode, 1)
        self.assertEqual(self.compare(base, now(1001)).returncode, 1)

    def test_the_tolerance_is_a_knob_and_new_or_missing_checks_are_reported_not_failed(self):
        base = results(("pin", [check("a", 2.0), check("gone", 1.0)]))
        strict = self.compare(base, results(("pin", [check("a", 1.9), check("new", 3.0)])), BENCH_TOLERANCE="0.01")
        self.assertEqual(strict.returncode, 1, strict.stdout)
        loose = self.compare(base, results(("pin", [check("a", 1.9), check("new", 3.0)])))
        self.assertEqual(loose.returncode, 0, loose.stdout)
        self.assertIn("| pin | new |", loose.stdout)
        self.assertIn("not measured now", loose.stdout)
        # Workloads that did not run now are not compared.
        self.assertEqual(self.compare(results(("fleet", [check("x", 50.0)]), ("pin", [check("a", 2.0)])), results(("pin", [check("a", 2.0)]))).returncode, 0)

    def test_saving_replaces_the_workloads_that_ran_and_keeps_the_others(self):
        with tempfile.TemporaryDirectory() as d:
            baseline = self.write(d, "baseline.json", results(("pin", [check("a", 2.0)]), ("fleet", [check("x", 50.0)])))
            current = self.write(d, "c.json", results(("pin", [check("a", 3.0)])))
            saved = self.run_harness("--save-baseline", baseline, current)
            self.assertEqual(saved.returncode, 0, saved.stderr)
            data = json.load(open(baseline))
            values = {w["key"]: w["ratios"][0]["value"] for w in data["workloads"]}
            self.assertEqual(values, {"pin": 3.0, "fleet": 50.0})
            self.assertFalse(os.path.exists(baseline + ".tmp"))


class WatchTests(unittest.TestCase):
    """The sampler behind the fleet's peak threads and processes (`harness.Watch`), on real processes."""

    def watch(self, argv):
        sys.path.insert(0, os.path.dirname(HARNESS))
        import harness
        process = subprocess.Popen(argv, start_new_session=True)
        watch = harness.Watch(process.pid, None)
        watch.run(process)
        return watch

    def test_it_sees_every_thread_of_one_process(self):
        code = "import threading, time\nfor _ in range(40): threading.Thread(target=time.sleep, args=(0.6,)).start()\ntime.sleep(0.3)"
        watch = self.watch([sys.executable, "-c", code])
        self.assertEqual(watch.processes, 1)
        self.assertGreaterEqual(watch.threads, 41)
        self.assertLessEqual(watch.threads, 43)
        self.assertGreater(watch.rss_sum, 0)

    def test_it_adds_up_the_processes_of_the_group(self):
        watch = self.watch(["sh", "-c", "sleep 0.5 & sleep 0.5 & sleep 0.5 & wait"])
        self.assertEqual(watch.processes, 4)
        self.assertEqual(watch.threads, 4)
        self.assertEqual(len(watch.hwm), 4)


if __name__ == "__main__":
    unittest.main()
