#!/usr/bin/env python3
"""Checks of scripts/gpu-check case pytest-torch: pytest --gpuspy
(python/gpuspy/pytest_plugin.py) over the PyTorch tests of
tests/gpu/pytest_torch.py, with libgpuspy.so preloaded, its JUnit XML
parsed: the freed tensor and the one kept in a new segment of the pool
pass gpu_no_leak (the pool's segment said apart, as the PyTorch pool, in
the summary); the 1 GiB tensor fails its 512 MiB limit naming its peak;
within 2 GiB it passes; with --gpuspy-include-pools the kept one fails,
its site marked as the PyTorch pool's.  Prints one PASS/FAIL line per
check (SKIP without pytest or torch).
Usage: pytest_torch_check.py LIBGPUSPY PYTHON_DIR CASEDIR"""
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

lib, pydir, d = sys.argv[1:4]
here = os.path.dirname(os.path.abspath(__file__))
failed = 0


def check(cond, what, detail=""):
    global failed
    print(("PASS " if cond else "FAIL ") + what + ("" if cond or not detail else ": %s" % detail))
    failed += not cond


for mod in ("pytest", "torch"):
    if subprocess.run([sys.executable, "-c", "import " + mod]).returncode != 0:
        print("SKIP %s is not installed for %s" % (mod, sys.executable))
        sys.exit(0)


def pytest(name, *args):
    junit = os.path.join(d, name + ".xml")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUSPY_")}
    env.update(LD_PRELOAD=lib, GPUSPY_OUTPUT_DIR=os.path.join(d, name), PYTHONPATH=pydir)
    p = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p",
                        "gpuspy.pytest_plugin", "--gpuspy", "--junitxml", junit, *args,
                        os.path.join(here, "pytest_torch.py")], env=env, capture_output=True,
                       text=True, cwd=d)
    with open(os.path.join(d, name + ".out"), "w") as f:
        f.write(p.stdout + p.stderr)
    cases = {}
    try:
        for tc in ET.parse(junit).getroot().iter("testcase"):
            f = tc.find("failure")
            cases[tc.get("name")] = (f.get("message"), f.text) if f is not None else None
    except (OSError, ET.ParseError) as e:
        check(False, "%s: pytest wrote its JUnit XML" % name, e)
    return p.returncode, p.stdout + p.stderr, cases


status, text, cases = pytest("gpuspy")
check(status == 1 and set(cases) == {"test_freed", "test_kept_in_pool", "test_over_limit",
                                     "test_within_limit"}, "pytest ran the four tests", status)
check(cases.get("test_freed") is None, "a tensor freed: no leak", cases.get("test_freed"))
check(cases.get("test_kept_in_pool") is None,
      "a tensor kept in a new segment: the pool's cache, not the test's leak",
      cases.get("test_kept_in_pool"))
f = cases.get("test_over_limit")
check(f is not None and re.match(r"gpuspy: test_over_limit's peak, 1\.0 GiB of GPU memory, is "
                                 r"over its limit of 512\.0 MiB", f[0] or ""),
      "1 GiB over a 512 MiB limit: fails, naming its peak", f)
check(cases.get("test_within_limit") is None, "1 GiB within 2 GiB: passes",
      cases.get("test_within_limit"))
check(re.search(r"^the frameworks' pools held .*::test_kept_in_pool ", text, re.M) is not None,
      "the summary: the PyTorch pool's segment apart", text[-1500:])
status, text, cases = pytest("include-pools", "--gpuspy-include-pools", "-k", "kept")
f = cases.get("test_kept_in_pool")
check(f is not None and "(PyTorch pool)" in (f[1] or ""),
      "--gpuspy-include-pools: the kept tensor's segment counted, the PyTorch pool's", f)
print("%d failed" % failed)
sys.exit(1 if failed else 0)
