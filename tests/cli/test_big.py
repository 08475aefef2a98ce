#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""'gpuspy report', 'merge' and 'diff' on a report of 50,000 call sites and
330,000 at-peak and mark entries (make_big_report.py): each must finish,
with status 0, within a generous 60 s.  No timing is asserted here:
bench/read-bench prints the times and how they grow with the sites.
Under ASan (scripts/sanitize sets GPUSPY_TEST_BIG_SITES=10000) the same
report a fifth of the size: what ASan checks, the reader's memory, is
the same code at any size, and the full size is the plain suite's.

    test_big.py GPUSPY
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_big_report  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402


def main():
    gpuspy = sys.argv[1]
    sites = int(os.environ.get("GPUSPY_TEST_BIG_SITES", "50000"))
    entries = sites * 33 // 5
    with tempfile.TemporaryDirectory() as tmp:
        run = os.path.join(tmp, "big")
        path = os.path.join(run, "bignode-4000", "report.json")
        os.makedirs(os.path.dirname(path))
        with open(path, "w") as f:
            json.dump(make_big_report.report(sites, entries, 2, 4000), f, separators=(",", ":"))
        cases = [("report", ["report", path], b"1 process, %d call sites" % sites),
                 ("report --format json", ["report", "--format", "json", path], b'"sites"'),
                 ("merge", ["merge", run], b"%d call sites" % sites),
                 ("diff", ["diff", path, path], b""),
                 ("diff --at", ["diff", "--at", "step 3", path, path], b"")]
        for name, args, expect in cases:
            try:
                r = subprocess.run([gpuspy] + args, capture_output=True, timeout=60)
            except subprocess.TimeoutExpired:
                check(False, "gpuspy %s: finishes in 60 s" % name)
                continue
            check(r.returncode == 0 and expect in r.stdout, "gpuspy " + name,
                  "status %d, stderr %r" % (r.returncode, r.stderr[:200]))
    return harness.done()


if __name__ == "__main__":
    sys.exit(main())
