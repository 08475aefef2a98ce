#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`gpuspy diff` between two builds of one program, as a CI gate would run it.

    diff_runs.py --lib LIBGPUSPY --cli GPUSPY --fake-dir DIR PLAIN EXTRA

PLAIN and EXTRA are builds of stable_key.c with the same file name; EXTRA
has code inserted before every leaking function (each address moves) and
leaks one 1 MiB allocation more, from the new function leak_extra().  Both
run under LD_PRELOAD=LIBGPUSPY against the fake CUDA libraries in DIR.

The diff must show the new site at +1048576 bytes leaked and every other
site unchanged (0 leaked, 0 peak, 0 allocations); --fail-on-growth 512K
must exit 1 and 2M exit 0; a run diffed with itself is all zeros, exit 0,
even with --fail-on-growth 0.
"""
import argparse
import json
import xml.etree.ElementTree as ET
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

SIZE = 3 << 20
MIB = 1 << 20


def run_one(args, program, out):
    env = harness.clean_env(args.fake_dir, LD_PRELOAD=harness.preload(args.lib),
                            GPUSPY_OUTPUT_DIR=out, GPUSPY_QUIET="1")
    p = subprocess.run([program, str(SIZE)], env=env, capture_output=True, timeout=60)
    if p.returncode != 0:
        sys.exit("%s: status %d, stderr %r" % (program, p.returncode, p.stderr))


def readme_gate():
    """docs/usage.md's --fail-on-growth example ("Comparing runs"): its SIZE,
    and the output block shown below it (None, None when it has none)."""
    doc = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs",
                       "usage.md")
    with open(doc, encoding="utf-8") as f:
        blocks = re.findall(r"^```[^\n]*\n(.*?)^```\n", f.read(), re.S | re.M)
    for i, b in enumerate(blocks[:-1]):
        m = re.search(r"^gpuspy diff --fail-on-growth (\S+) ", b, re.M)
        if m:
            return m.group(1), blocks[i + 1]
    return None, None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--cli", required=True)
    ap.add_argument("--fake-dir", required=True)
    ap.add_argument("plain")
    ap.add_argument("extra")
    args = ap.parse_args()
    for name in ("lib", "cli", "fake_dir", "plain", "extra"):
        setattr(args, name, os.path.abspath(getattr(args, name)))
    diff = harness.Cli(args.cli, "diff")

    with tempfile.TemporaryDirectory(prefix="gpuspy-diff-") as tmp:
        old, new = os.path.join(tmp, "main"), os.path.join(tmp, "branch")
        run_one(args, args.plain, old)
        run_one(args, args.extra, new)

        p = diff("--format", "json", old, new)
        check(p.returncode == 0 and p.stderr == "", "diff --format json: status %d, stderr %r"
              % (p.returncode, p.stderr))
        d = json.loads(p.stdout) if p.returncode == 0 else {"sites": []}
        check(d.get("format") == "gpuspy-diff/1", "format gpuspy-diff/1")
        for s in d["sites"]:
            print("  %-9s %+9d leaked %+9d peak %+3d allocations  %s" % (
                s["status"], s["leaked"]["delta"], s["peak"]["delta"],
                s["allocations"]["delta"], s["key"]))
        new_sites = [s for s in d["sites"] if s["status"] == "new"]
        others = [s for s in d["sites"] if s["status"] != "new"]
        check(len(new_sites) == 1, "exactly one new site")
        if new_sites:
            s = new_sites[0]
            check(s["leaked"]["delta"] == MIB and s["leaked"]["new"] == MIB,
                  "the new site leaked +1048576")
            check(s.get("headline", {}).get("function") == "leak_extra",
                  "its headline is leak_extra")
            check(re.fullmatch(r"[0-9a-f]{16}", s["key"]) is not None,
                  "its key is a digest of 16 hex digits: %s" % s["key"])
        check(len(others) >= 3, "the unchanged sites are matched (%d)" % len(others))
        check(all(s["status"] == "same" and s["leaked"]["delta"] == 0 and
                  s["peak"]["delta"] == 0 and s["allocations"]["delta"] == 0 for s in others),
              "every other site shows 0 in leaked, peak and allocations")
        check(any(s.get("headline", {}).get("function") == "stable_scratch" and
                  s["peak"]["new"] == SIZE and
                  s["allocations"]["new"] == 4 for s in others),
              "the alloc/free site is among them, with its peak and count")
        check(d["totals"]["leaked"]["delta"] == MIB, "the leaked total grew by 1 MiB")
        devs = [t for t in d["totals"]["devices"] if t["what"] == "live_at_exit"]
        check(len(devs) == 1 and devs[0]["delta"] == MIB, "device 0 holds 1 MiB more at exit")

        # every code address moved: the match was made on names
        keys_old = {s["key"] for s in others}
        p_old = subprocess.run([args.cli, "report", "--format", "json", old],
                               capture_output=True, text=True)
        p_new = subprocess.run([args.cli, "report", "--format", "json", new],
                               capture_output=True, text=True)
        off = []
        for p in (p_old, p_new):
            r = json.loads(p.stdout)
            off.append({(s["key"], f.get("function")): f["offset"] for s in r["sites"]
                        if s["key"] in keys_old for f in s["frames"]
                        if f.get("function", "").startswith(("leak_stable", "stable_"))})
        moved = [k for k in off[0] if k in off[1] and off[0][k] != off[1][k]]
        check(len(off[0]) >= 3 and len(moved) == len(off[0]),
              "every matched frame lies at another offset in the new build (%d of %d)"
              % (len(moved), len(off[0])))

        t = diff(old, new)
        check(t.returncode == 0 and "NEW" in t.stdout and "leak_extra" in t.stdout and
              "+1.0 MiB" in t.stdout, "the text names the new site and its +1.0 MiB")
        check("leak_stable_runtime" not in t.stdout,
              "unchanged sites are not listed in the text")

        p = diff("--fail-on-growth", "512K", old, new)
        check(p.returncode == 1 and "FAIL: 1 site grew by more than 512.0 KiB" in p.stdout,
              "--fail-on-growth 512K: status %d" % p.returncode)
        p = diff("--fail-on-growth", "2M", old, new)
        check(p.returncode == 0 and "OK: no site grew" in p.stdout,
              "--fail-on-growth 2M: status %d" % p.returncode)
        p = diff("--fail-on-growth", "1048576", old, new)
        check(p.returncode == 0, "--fail-on-growth of exactly the growth: status %d (more "
              "than SIZE fails, not SIZE itself)" % p.returncode)
        p = diff("--fail-on-growth", "1048575", "--format", "json", old, new)
        j = json.loads(p.stdout) if p.stdout else {}
        check(p.returncode == 1 and j.get("fail_on_growth") == {"limit": MIB - 1, "failed": True,
                                                                 "sites": 1},
              "--fail-on-growth one byte less: status 1 and the verdict in the JSON")

        # the gates' JUnit XML: one failure, the new site by its one name
        xml = os.path.join(tmp, "junit.xml")
        name = new_sites[0]["name"] if new_sites else "?"
        p = diff("--fail-on-growth", "512K", "--junit", xml, old, new)
        cases = ET.parse(xml).getroot().findall("testsuite/testcase") if p.returncode == 1 else []
        bad = [c for c in cases if c.find("failure") is not None]
        check(len(cases) == len(d["sites"]) and [c.get("name") for c in bad] == [name] and
              "leak_extra" in name, "--junit: a case per site, one failure: %s" % name)
        p = diff("--fail-on-growth", "2M", "--junit", xml, old, new)
        cases = ET.parse(xml).getroot().findall("testsuite/testcase")
        check(p.returncode == 0 and cases and all(c.find("failure") is None for c in cases),
              "--junit within the limit: no failure")
        # a budget over the new site's name, the rest under the default
        budget = os.path.join(tmp, "budget.txt")
        with open(budget, "w") as f:
            f.write("leak_extra (*)  512K\n*  16M\n")
        p = diff("--budget", budget, old, new)
        check(p.returncode == 1 and ("  %s: peak 1.0 MiB, budget 512.0 KiB (%s:1: leak_extra (*))"
                                     % (name, budget)) in p.stdout.splitlines(),
              "--budget: status 1, the new site named over its budget")
        with open(budget, "w") as f:
            f.write("leak_extra (*)  1M\n*  16M\n")
        p = diff("--budget", budget, old, new)
        check(p.returncode == 0 and "OK: " in p.stdout, "--budget of exactly its peak: status 0")

        # docs/usage.md's example is this diff, and shows its real output
        size, shown = readme_gate()
        check(size is not None, "docs/usage.md has a --fail-on-growth example")
        if size:
            p = diff("--fail-on-growth", size, old, new)
            # docs/usage.md shows the end ("..." for the run's own settings),
            # with source paths from the top of the tree
            root = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                 "..", "..")) + "/"
            out = p.stdout.replace(root, "")
            tail = shown[4:] if shown.startswith("...\n") else shown
            check(out.endswith(tail) and (out == tail or shown.startswith("...\n")),
                  "docs/usage.md shows what --fail-on-growth %s prints: %r" % (size, out))
            check(p.returncode == (1 if "FAIL:" in shown else 0),
                  "--fail-on-growth %s exits as docs/usage.md shows: status %d"
                  % (size, p.returncode))

        # a run diffed with itself
        p = diff("--format", "json", "--fail-on-growth", "0", old, old)
        s = json.loads(p.stdout) if p.returncode == 0 else {"sites": [{}], "totals": {}}
        check(p.returncode == 0, "self-diff with --fail-on-growth 0: status %d" % p.returncode)
        check(len(s["sites"]) >= 3 and all(
            x["status"] == "same" and x["leaked"]["delta"] == 0 and x["peak"]["delta"] == 0
            and x["allocations"]["delta"] == 0 for x in s["sites"]),
              "self-diff: every site the same, all deltas 0")
        check(all(v["delta"] == 0 for k, v in s["totals"].items() if k != "devices"),
              "self-diff: totals unchanged")
        t = diff(old, old)
        check(t.returncode == 0 and "  none" in t.stdout, "self-diff text: no changed site")

        # the same runs named with --old/--new
        p = diff("--old", old, "--new", new, "--format", "json")
        j = json.loads(p.stdout) if p.returncode == 0 else {}
        check(j.get("totals", {}).get("leaked", {}).get("delta") == MIB,
              "--old/--new give the same answer")
    return harness.done()


if __name__ == "__main__":
    sys.exit(main())
