#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""'gpuspy report' on the fixtures must print exactly the expected files.

    golden.py GPUSPY FIXTURES [--update]

The expected files were checked by hand against the numbers in
fixtures/README.md; --update rewrites them from the current output (review
the diff before committing it).
"""
import json
import os
import subprocess
import sys

CASES = [
    (["report", "run"], "run.expected.txt"),
    (["report", "--format", "json", "run"], "run.expected.json"),
    (["report", "--top", "1", "run/node7-101"], "run-node7-101-top1.expected.txt"),
    (["report", "process/node7-4242"], "process.expected.txt"),
    (["report", "--format=json", "process"], "process.expected.json"),
    (["report", "--top", "1", "process"], "process-top1.expected.txt"),
    (["report", "python"], "python.expected.txt"),
    (["report", "--format", "json", "python"], "python.expected.json"),
    (["report", "pools"], "pools.expected.txt"),
    (["report", "--format", "json", "pools"], "pools.expected.json"),
    (["report", "--top", "1", "pools"], "pools-top1.expected.txt"),
    (["report", "oom"], "oom.expected.txt"),
    (["report", "--format", "json", "oom"], "oom.expected.json"),
    (["report", "--top", "2", "oom/node9-500/oom-2.json"], "oom-file-top2.expected.txt"),
    # a real H200 snapshot (tests/gpu/outside.py): killed-process fallback
    # to snapshot.json, the outside view beside the inside one
    (["report", "--top", "1", "outside"], "outside.expected.txt"),
    (["report", "--format", "json", "outside"], "outside.expected.json"),
    # growing sites; killed processes read from snapshot.json, or from an
    # oom-N.json newer than it; a snapshot.json named directly
    (["report", "growth"], "growth.expected.txt"),
    (["report", "--format", "json", "growth"], "growth.expected.json"),
    (["report", "--top", "1", "growth"], "growth-top1.expected.txt"),
    (["report", "growth/node4-302/snapshot.json"], "growth-node4-302-snapshot.expected.txt"),
]


def main():
    gpuspy, fixtures = os.path.abspath(sys.argv[1]), sys.argv[2]
    update = "--update" in sys.argv[3:]
    failed = 0
    for args, expected in CASES:
        # relative paths, so that the output does not depend on the checkout
        p = subprocess.run([gpuspy] + args, cwd=fixtures, capture_output=True)
        path = os.path.join(fixtures, expected)
        what = "gpuspy " + " ".join(args)
        if p.returncode != 0 or p.stderr:
            print("FAIL %s: status %d, stderr %r" % (what, p.returncode, p.stderr))
            failed += 1
            continue
        if expected.endswith(".json"):
            json.loads(p.stdout)  # valid JSON, whatever else
        if update:
            with open(path, "wb") as f:
                f.write(p.stdout)
            print("updated", expected)
            continue
        with open(path, "rb") as f:
            want = f.read()
        if p.stdout != want:
            print("FAIL %s differs from %s:" % (what, expected))
            sys.stdout.flush()
            subprocess.run(["diff", "-u", path, "-"], input=p.stdout)
            failed += 1
        else:
            print("ok %s" % what)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
