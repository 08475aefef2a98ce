#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Strings from the files never reach the terminal raw: every text output
of report, merge, diff and top on fixtures/hostile (escape sequences that
clear the screen or set the title, the 8-bit CSI, BEL, DEL, CR, newlines
in api, function, file, label, host, command, environment, module and
device names, and in torch.json) holds no control character but newline
and tab.  JSON output is escaped by jansson and is not checked here.

    test_hostile.py GPUSPY FIXTURES
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402


def controls(data):
    """Offsets of the control characters of DATA (C0 but \\n and \\t, DEL,
    C1 as UTF-8)."""
    bad = []
    for i, b in enumerate(data):
        if (b < 0x20 and b not in (0x09, 0x0A)) or b == 0x7F:
            bad.append(i)
        elif b == 0xC2 and i + 1 < len(data) and 0x80 <= data[i + 1] <= 0x9F:
            bad.append(i)
    return bad


def main():
    gpuspy, fixtures = sys.argv[1], sys.argv[2]
    hostile = os.path.join(fixtures, "hostile")
    report = os.path.join(hostile, "node6-66", "report.json")
    cases = [
        ["report", hostile],
        ["report", "--top", "1", report],
        ["merge", hostile],
        ["merge", hostile, os.path.join(fixtures, "run")],
        # every site new, then every site vanished: each is printed
        ["diff", os.path.join(fixtures, "run"), hostile],
        ["diff", hostile, os.path.join(fixtures, "process")],
        ["diff", "--at", "epoch 2", hostile, hostile],
        ["top", "--count", "1", hostile],
    ]
    for args in cases:
        name = " ".join(a if not a.startswith(fixtures) else os.path.relpath(a, fixtures)
                        for a in args)
        p = subprocess.run([gpuspy] + args, capture_output=True, timeout=30)
        bad = controls(p.stdout) + controls(p.stderr)
        out = p.stdout + p.stderr
        where = repr(out[max(0, bad[0] - 40):bad[0] + 20]) if bad else ""
        check(p.returncode == 0 and p.stdout and not bad, "gpuspy " + name,
              "status %d, %d control characters %s" % (p.returncode, len(bad), where))
    return harness.done()


if __name__ == "__main__":
    sys.exit(main())
