#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The CI gates: 'gpuspy report --fail-on-leak SIZE' and the bound of
'gpuspy diff --fail-on-growth SIZE', as a CI script would run them.

    test_gates.py GPUSPY FIXTURES
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402


def main():
    gpuspy, fixtures = sys.argv[1], sys.argv[2]
    proc = os.path.join(fixtures, "process")

    report = harness.Cli(gpuspy, "report")

    # what the fixture leaks, as the JSON says
    p = report("--format", "json", proc)
    leaked = json.loads(p.stdout)["leaked"]["bytes"]
    check(leaked > 0, "the fixture leaks (%d bytes)" % leaked)

    p = report("--fail-on-leak", "1M", proc)
    last = p.stdout.splitlines()[-1] if p.stdout else ""
    check(p.returncode == 1 and last == "FAIL: 3.0 MiB live at exit, more than 1.0 MiB "
          "(--fail-on-leak)" and p.stderr == "",
          "more than SIZE live: status 1, the verdict last", repr((p.returncode, last, p.stderr)))
    check("LEAKED AT EXIT" in p.stdout, "the report is printed above the verdict")

    # the bound is exclusive
    p = report("--fail-on-leak", str(leaked), proc)
    check(p.returncode == 0 and p.stdout.splitlines()[-1].startswith("OK: 3.0 MiB live at exit"),
          "exactly SIZE live passes", repr((p.returncode, p.stdout[-200:])))
    p = report("--fail-on-leak=%d" % (leaked - 1), proc)
    check(p.returncode == 1, "one byte less fails (--fail-on-leak=SIZE)", repr(p.returncode))
    p = report("--fail-on-leak", "0", proc)
    check(p.returncode == 1, "0 fails when anything is live", repr(p.returncode))
    p = report("--fail-on-leak", "1G", "--top", "1", proc)
    check(p.returncode == 0, "with another option after it", repr((p.returncode, p.stderr)))

    # JSON stays JSON: the verdict on stderr
    p = report("--format", "json", "--fail-on-leak", "1M", proc)
    try:
        json.loads(p.stdout)
        ok = True
    except ValueError:
        ok = False
    check(p.returncode == 1 and ok and p.stderr.startswith("FAIL: 3.0 MiB"),
          "--format json: JSON on stdout, the verdict on stderr", repr((p.returncode, p.stderr)))

    # bad input is 2, one line
    for args, what in ((["--fail-on-leak", "lots", proc], "a size that is not one"),
                       (["--fail-on-leak"], "no value"),
                       (["--fail-on-leak", "-1", proc], "a negative size")):
        p = report(*args)
        check(p.returncode == 2 and p.stdout == "" and len(p.stderr.splitlines()) == 1,
              "%s: status 2, one line" % what, repr((p.returncode, p.stderr)))

    with tempfile.TemporaryDirectory(prefix="gpuspy-gates-") as tmp:
        # nothing allocated: a run directory with nothing, or only run.json
        empty = os.path.join(tmp, "empty")
        os.mkdir(empty)
        p = report("--fail-on-leak", "0", empty)
        check(p.returncode == 0 and "nothing was allocated" in p.stdout and
              p.stdout.splitlines()[-1] == "OK: nothing is live at exit (--fail-on-leak)",
              "an empty run directory: nothing allocated, status 0", repr((p.returncode, p.stdout,
                                                                      p.stderr)))
        p = report("--format", "json", "--fail-on-leak", "0", empty)
        check(p.returncode == 0 and p.stdout == "" and "nothing is live" in p.stderr,
              "--format json, nothing allocated: nothing on stdout, the verdict on stderr",
              repr((p.returncode, p.stdout, p.stderr)))
        runonly = os.path.join(tmp, "runonly")
        os.mkdir(runonly)
        shutil.copy(os.path.join(fixtures, "killed", "run.json"), runonly)
        p = report("--fail-on-leak", "0", runonly)
        check(p.returncode == 0 and "nothing was allocated" in p.stdout,
              "only run.json: nothing allocated, status 0", repr((p.returncode, p.stderr)))
        # without the gate, such a directory is still an input error
        p = report(empty)
        check(p.returncode == 2, "without the gate an empty directory is status 2",
              repr(p.returncode))
        # an empty directory among reports is passed over
        p = report("--fail-on-leak", "1M", empty, proc)
        check(p.returncode == 1 and "FAIL: 3.0 MiB" in p.stdout,
              "an empty directory beside a report: the report is gated", repr(p.returncode))

        # a process killed before its first snapshot: not "nothing"
        killed = os.path.join(tmp, "killed")
        os.makedirs(os.path.join(killed, "node1-77"))
        p = report("--fail-on-leak", "0", killed)
        check(p.returncode == 2 and len(p.stderr.splitlines()) == 1,
              "an empty process directory: status 2", repr((p.returncode, p.stderr)))

        # a path that does not exist: status 2 (a typo must not pass), and why
        p = report("--fail-on-leak", "0", os.path.join(tmp, "out"))
        check(p.returncode == 2 and p.stdout == "" and len(p.stderr.splitlines()) == 1 and
              "allocates nothing" in p.stderr,
              "a missing run directory: status 2 and the likely reason",
              repr((p.returncode, p.stderr)))

    # the bounds are documented as exclusive
    for cmd in ("report", "diff"):
        p = subprocess.run([gpuspy, cmd, "--help"], capture_output=True, text=True)
        check(p.returncode == 0 and "exactly SIZE passes" in p.stdout,
              "%s --help says exactly SIZE passes" % cmd, p.stdout)
    return harness.done()


if __name__ == "__main__":
    sys.exit(main())
