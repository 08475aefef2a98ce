#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""contrib/prometheus/gpuspy-alerts.yml passes 'promtool check rules', and
'promtool test rules' passes its recorded cases
(contrib/prometheus/gpuspy-alerts.test.yml): the growth alert fires on a
leak at every sample and on an epoch leak under allocate/free cycles, not
on a warm-up that levels off (flagged by gpuspy or not) nor on a slow
cache that gpuspy does not flag; the limit alerts fire on a full GPU and
on a process that tracks most of its GPU, not on a short peak nor on a
device that CUDA and NVML number differently.  The example
contrib/prometheus/prometheus.yml, which loads them, passes 'promtool
check config'.

Each condition of the rules is then taken out, one at a time, in a copy:
the cases must then fail, or they would not test that condition.

    test_alert_rules.py SOURCE_DIR [PROMTOOL]

Exit 77 (skipped) when promtool (Debian: prometheus) is not installed.
"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402


RULES = "gpuspy-alerts.yml"
CASES = "gpuspy-alerts.test.yml"

# (what is taken out, the text of the rule, what stands in for it)
MUTATIONS = [
    ("the growth alert's floor condition",
     "          and\n          min_over_time(gpuspy_site_live_bytes[15m]) > "
     "min_over_time(gpuspy_site_live_bytes[1h])\n", ""),
    ("the growth alert's flag", "gpuspy_site_growing == 1\n          and\n", ""),
    ("the growth alert's hour", "        for: 1h\n", "        for: 30m\n"),
    ("the device alert's 90%", "gpuspy_nvml_device_total_bytes\n          ) > 0.9",
     "gpuspy_nvml_device_total_bytes\n          ) > 0.96"),
    ("the device alert's five minutes",
     "          ) > 0.9\n        for: 5m\n", "          ) > 0.9\n        for: 1m\n"),
    ("the device alert's one alert per host and device",
     "max without (rank) (", "max without () ("),
    ("the tracked alert's NVML condition",
     "          and\n          gpuspy_nvml_used_bytes > 0\n", ""),
    ("the tracked alert's 90%", "gpuspy_nvml_device_total_bytes > 0.9)",
     "gpuspy_nvml_device_total_bytes > 0.99)"),
]


def promtool_run(promtool, *args, cwd):
    p = subprocess.run([promtool, *args], capture_output=True, text=True, timeout=120, cwd=cwd)
    return p.returncode, p.stdout + p.stderr


def main():
    src = sys.argv[1]
    promtool = sys.argv[2] if len(sys.argv) > 2 else shutil.which("promtool")
    if not promtool:
        print("promtool not found (Debian: prometheus): skipped")
        return 77
    d = os.path.join(src, "contrib", "prometheus")
    rc, out = promtool_run(promtool, "check", "rules", RULES, cwd=d)
    check(rc == 0 and "3 rules found" in out, "promtool check rules " + RULES, out)
    rc, out = promtool_run(promtool, "test", "rules", CASES, cwd=d)
    check(rc == 0, "promtool test rules " + CASES, out)
    # the example configuration loads the rules
    rc, out = promtool_run(promtool, "check", "config", "prometheus.yml", cwd=d)
    check(rc == 0 and "1 rule files found" in out, "promtool check config prometheus.yml", out)

    rules = open(os.path.join(d, RULES)).read()
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(os.path.join(d, CASES), tmp)
        for what, old, new in MUTATIONS:
            check(rules.count(old) == 1, f"{RULES} has {what}", old)
            with open(os.path.join(tmp, RULES), "w") as f:
                f.write(rules.replace(old, new, 1))
            rc, out = promtool_run(promtool, "check", "rules", RULES, cwd=tmp)
            check(rc == 0, f"without {what}: still valid rules", out)
            rc, out = promtool_run(promtool, "test", "rules", CASES, cwd=tmp)
            check(rc != 0 and "FAILED" in out, f"without {what}: the cases fail", out)
    return harness.done()


if __name__ == "__main__":
    sys.exit(main())
