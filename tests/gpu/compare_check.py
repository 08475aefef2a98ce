#!/usr/bin/env python3
"""Checks of scripts/gpu-check section 8 (several processes, comparing
runs), on what it left in OUTDIR; prints one PASS/FAIL line per check.
Usage: compare_check.py OUTDIR"""
import json
import os
import sys

out = sys.argv[1]
here = os.path.dirname(os.path.abspath(__file__))
failed = 0
MIB = 1 << 20


def check(cond, what):
    global failed
    print(("PASS " if cond else "FAIL ") + what)
    failed += not cond


def load(*path):
    try:
        with open(os.path.join(out, *path)) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        check(False, "%s: %s" % (os.path.join(*path), e))
        return None


def line_of(script, marker):
    with open(os.path.join(here, script)) as f:
        for n, text in enumerate(f, 1):
            if "# " + marker in text:
                return n
    raise SystemExit("no %s in %s" % (marker, script))


def headline(site):
    h = site.get("headline") or {}
    return (os.path.basename(h.get("file") or ""), h.get("line"))


# --- torchrun, two ranks, under gpuspy run
status = open(os.path.join(out, "ddp", "status")).read().strip()
check(status == "0", "torchrun --nproc_per_node 2 under gpuspy run: status %s" % status)
rep = load("ddp", "report.json")
mrg = load("ddp", "merge.json")
leak = ("ddp.py", line_of("ddp.py", "LEAK"))
if rep:
    procs = rep["processes"]
    ranks = sorted(p.get("rank", -1) for p in procs)
    check(len(procs) == 2 and ranks == [0, 1],
          "one report with both ranks: %d processes, ranks %s" % (len(procs), ranks))
    # the leaked tensors sit in PyTorch's pool: the PyTorch view names them
    tsites = [s for s in (rep.get("torch") or {}).get("sites", []) if headline(s) == leak]
    check(len(tsites) == 1 and tsites[0]["live_bytes"] == 40 * MIB and tsites[0]["processes"] == 1,
          "PyTorch view: the LEAK line holds 40 MiB at exit, in one process: %s"
          % [(s["live_bytes"], s["processes"]) for s in tsites])
    per_rank = {}
    for p in procs:
        try:
            t = json.load(open(os.path.join(p["path"], "torch.json")))
        except (OSError, ValueError):
            continue
        per_rank[p.get("rank")] = sum(s["live_bytes"] for s in t["sites"]
                                      if s["frames"] and os.path.basename(s["frames"][0]["file"]) == leak[0]
                                      and s["frames"][0]["line"] == leak[1])
    check(per_rank == {0: 0, 1: 40 * MIB}, "... rank 1's, not rank 0's: %s" % per_rank)
    spreads = [s.get("spread", {}).get("leaked", {}) for s in rep["sites"] if s.get("processes") == 2]
    check(len(spreads) > 0 and all("min" in sp and "max" in sp for sp in spreads),
          "sites of both ranks carry their min/median/max across the ranks")
if mrg:
    names = [p.get("rank") for p in mrg["processes"]]
    check(sorted(names) == [0, 1] and len(mrg["sites"]) > 0,
          "merge puts the two ranks side by side: ranks %s, %d sites" % (names, len(mrg["sites"])))

# --- the reference workload at batch size 16 and 32
params = ("train_bs.py", line_of("train_bs.py", "PARAMETERS"))
forward = ("train_bs.py", line_of("train_bs.py", "FORWARD"))
optim = ("train_bs.py", line_of("train_bs.py", "OPTIMIZER"))
for mode in ("nocache", "default"):
    d = load("bs-%s" % mode, "diff.json")
    if not d:
        continue
    t = d["totals"]
    check(t["peak"]["delta"] > 0, "%s: the peak grew from batch 16 to 32 (%+d MiB)"
          % (mode, t["peak"]["delta"] // MIB))

    def total(where, what):
        return sum(s[what]["delta"] for s in d["sites"] if headline(s) == where)

    def old(where, what):
        return sum(s[what]["old"] for s in d["sites"] if headline(s) == where)

    if mode == "nocache":
        check(old(params, "peak") > 0 and total(params, "peak") == 0 and total(params, "leaked") == 0,
              "nocache: the parameters (PARAMETERS line, %d MiB) did not change"
              % (old(params, "peak") // MIB))
        check(old(optim, "peak") > 0 and total(optim, "peak") == 0,
              "nocache: the optimizer state (OPTIMIZER line, %d MiB) did not change"
              % (old(optim, "peak") // MIB))
        grew = [s for s in d["sites"] if s["peak"]["delta"] > 0]
        by_fwd = total(forward, "peak")
        check(by_fwd > 0, "nocache: the forward pass (FORWARD line) grew by %d MiB" % (by_fwd // MIB))
        top = sorted(grew, key=lambda s: -s["peak"]["delta"])[:5]
        print("  largest growth: " + "; ".join(
            "%+d MiB %s:%s" % (s["peak"]["delta"] // MIB, *headline(s)) for s in top))
    at = load("bs-%s" % mode, "diff-at.json")
    if at:
        # between steps, without the cache only parameters, gradients and
        # optimizer state are live: the same at both batch sizes; the
        # cache keeps the larger batch's segments
        delta, base = at["totals"]["at"]["delta"], at["totals"]["at"]["old"]
        ok = abs(delta) <= base // 100 if mode == "nocache" else delta > 0
        check(ok and at["old"]["marked_processes"] == 1,
              "%s: --at 'after step 2': %+.1f MiB of %.1f MiB at that mark (%s)"
              % (mode, delta / MIB, base / MIB, "unchanged" if mode == "nocache" else "grew"))
sys.exit(1 if failed else 0)
