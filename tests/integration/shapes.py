#!/usr/bin/env python3
"""Each shape of memory over time on the fake driver
(tests/integration/shapes.c): report.json flags per_step, epoch (a
staircase, at epochs of 1 and 8 intervals, at GPUSPY_INTERVAL 20ms and
50ms) and marked (by its marks) growing, each named once on stderr before
the program's last line, "shapes: done", which it prints while it still
runs; cycle, warm_up, cache and big_once are never flagged nor named.
warm_up8 and fill16 rise at each sample for 8 and 16 samples (which the
rule cannot tell from a leak while it lasts) and then stay: not growing
in report.json, and where they were flagged while rising, recorded as
"grew, then stopped" ("growth": "stopped": true), said so on stderr
before "shapes: done" and in the exit summary, never as growing there.
Usage: shapes.py LIBGPUSPY FAKE_DIR SHAPES_PROGRAM"""
import glob
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

lib, fake, prog = sys.argv[1:4]
lib = harness.preload(lib)
env = harness.clean_env(fake, LD_PRELOAD=lib)


def run(shape, n, period_ms, interval_ms):
    out = harness.tempdir()
    r = subprocess.run([prog, shape, str(n), str(period_ms)],
                       env=dict(env, GPUSPY_OUTPUT_DIR=out, GPUSPY_INTERVAL=f"{interval_ms}ms"),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
    reps = glob.glob(os.path.join(out, "*", "report.json"))
    rep = json.load(open(reps[0])) if reps else {"sites": []}
    shutil.rmtree(out)
    fn = "marked_hold" if shape == "marked" else shape
    sites = [s for s in rep["sites"] if any(f.get("symbol") == fn for f in s["frames"])]
    lines = r.stdout.splitlines()
    return r.returncode, sites, lines


# shape, periods, period in intervals, growing (True, False, or STOPPED:
# perhaps flagged while it rose, stopped by the end), the notice's words:
# the site's innermost frame, keep(), which every shape allocates through
# (a static function: the process names it from the program's .symtab, as
# gpuspy report does)
AT = "at keep (shapes.c:"
STOPPED = "stopped"
CASES = [
    # a step at every sample; on a loaded machine a late sample can merge
    # two steps into one and the rule then calls the rise drift
    ("per_step", 20, 1, True, (", per-sample, " + AT, ", drift, " + AT)),
    # epochs of one interval: 20 of them, as for per_step, so that a few
    # samples a loaded machine takes late still leave the rule its rises
    ("epoch", 20, 1, True, ", " + AT),
    ("epoch", 12, 8, True, ", staircase, " + AT),
    ("marked", 12, 2, True, " from mark to mark, " + AT),
    ("cycle", 60, 1, False, None),
    ("warm_up", 60, 1, False, None),
    ("cache", 60, 1, False, None),
    ("big_once", 60, 1, False, None),
    # 8 x 512 KiB, then flat for 90 samples; 16 x 32 MiB, then flat
    ("warm_up8", 98, 1, STOPPED, None),
    ("fill16", 60, 1, STOPPED, None),
]

for interval in (20, 50):
    for shape, n, per, grows, words in CASES:
        tag = f"{shape}, {n} periods of {per} x {interval} ms"
        rc, sites, lines = run(shape, n, per * interval, interval)
        check(rc == 0 and "shapes: done" in lines, f"{tag}: runs ({rc})")
        check(sites and all(s["growing"] is (grows is True) for s in sites),
              f"{tag}: growing {grows is True} in report.json: {[s['growing'] for s in sites]}")
        told = [i for i, l in enumerate(lines) if l.startswith("gpuspy: growing: ")]
        if grows is STOPPED:
            done = lines.index("shapes: done") if "shapes: done" in lines else -1
            stops = [i for i, l in enumerate(lines) if l.startswith("gpuspy: grew, then stopped: ")]
            flagged = [s for s in sites if "growth" in s]
            check(all(s["growth"]["stopped"] is True for s in flagged)
                  and len(told) == len(flagged) <= 1 and len(stops) == len(told)
                  and all(told[0] < stops[0] < done for _ in told),
                  f"{tag}: if flagged while it rose, then stopped, in report.json and on "
                  f"stderr before it ends: {[s.get('growth') for s in sites]} "
                  f"{[lines[i] for i in told + stops]}")
            tail = lines[done + 1:] if done >= 0 else []
            check(not any(l.startswith("gpuspy:   growing: ") for l in tail)
                  and len([l for l in tail if l.startswith("gpuspy:   grew, then stopped at ")])
                  == len(flagged),
                  f"{tag}: the exit summary says grew, then stopped, never growing: {tail}")
        elif grows:
            done = lines.index("shapes: done") if "shapes: done" in lines else -1
            words = (words,) if isinstance(words, str) else words
            check(len(told) == 1 and any(w in lines[told[0]] for w in words) and told[0] < done,
                  f"{tag}: named once on stderr while it runs: "
                  f"{[lines[i] for i in told]} at line {told} of {len(lines)}")
        else:
            check(not told, f"{tag}: nothing said: {[lines[i] for i in told]}")
sys.exit(harness.done())
