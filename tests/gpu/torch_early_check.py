#!/usr/bin/env python3
"""Checks of scripts/gpu-check case torch-early: every tensor of the
reference workload has a line, from the first.  For each round R it
reads DIR/gpuspy-R.report.json (`gpuspy report --format json`) and the
workload's RESULT lines (DIR/plain-R.stdout, DIR/gpuspy-R.stdout), and
prints one PASS/FAIL line per check: the bytes of PyTorch's pool from
before the view started (lines without a headline: 0), the bytes named
from gpuspy's record of their segment (said, not judged), the weights
named at the line of WORKLOAD that moves the model to the GPU (90 MiB at
least: its parameters are 103 MiB), and the median step time's ratio,
gpuspy against plain (within 1.05).
Usage: torch_early_check.py DIR ROUNDS WORKLOAD"""
import json
import os
import re
import statistics
import sys

d, rounds, workload = sys.argv[1], int(sys.argv[2]), sys.argv[3]
failed = 0
MIB = 1 << 20


def check(cond, what):
    global failed
    print(("PASS " if cond else "FAIL ") + "torch-early: " + what)
    failed += not cond


def median_ms(path):
    try:
        m = re.search(r"median_ms=([0-9.]+)", open(path).read())
    except OSError:
        return None
    return float(m.group(1)) if m else None


# the line that moves the model to the GPU: the first with .to(dev)
to_line = next((n for n, text in enumerate(open(workload), 1) if ".to(dev)" in text), None)
base = os.path.basename(workload)
plain, spied = [], []
for r in range(1, rounds + 1):
    p, g = median_ms(os.path.join(d, f"plain-{r}.stdout")), \
        median_ms(os.path.join(d, f"gpuspy-{r}.stdout"))
    plain += [p] if p else []
    spied += [g] if g else []
    try:
        rep = json.load(open(os.path.join(d, f"gpuspy-{r}.report.json")))
    except (OSError, ValueError) as e:
        check(False, f"round {r}: report: {e}")
        continue
    sites = (rep.get("torch") or {}).get("sites") or []
    check(bool(sites), f"round {r}: the PyTorch view ran ({len(sites)} lines)")
    before = sum(s["live_bytes"] for s in sites
                 if "headline" not in s and s.get("source") != "segment")
    nopython = sum(s["live_bytes"] for s in sites
                   if "headline" not in s and s.get("source") == "segment")
    segment = sum(s["live_bytes"] for s in sites if s.get("source") == "segment")
    total = sum(s["live_bytes"] for s in sites)
    check(before == 0, f"round {r}: {before} bytes ({before / MIB:.1f} MiB) of "
          f"{total / MIB:.1f} MiB live from before the view started")
    print(f"INFO torch-early: round {r}: {segment / MIB:.1f} MiB named from gpuspy's record "
          f"of their segment, {nopython / MIB:.1f} MiB of it on threads without Python")
    # the weights: what lives at the line that moved the model to the GPU
    # (the workload's model holds 27.1 M float32 parameters, 103 MiB)
    at = [s for s in sites if os.path.basename((s.get("headline") or {}).get("file", "")) ==
          base and (s.get("headline") or {}).get("line") == to_line]
    weights = sum(s["live_bytes"] for s in at)
    how = sorted({s.get("source", "pytorch") for s in at})
    check(weights >= 90 * MIB, f"round {r}: {weights / MIB:.1f} MiB named at {base}:{to_line}, "
          f"where the model moves to the GPU (named by {', '.join(how) or 'nothing'})")
if plain and spied:
    ratio = statistics.median(spied) / statistics.median(plain)
    check(ratio <= 1.05, f"step time: median {statistics.median(spied):.2f} ms under gpuspy, "
          f"{statistics.median(plain):.2f} ms plain, ratio {ratio:.3f} (rounds {rounds})")
else:
    check(False, f"step time: no RESULT lines (plain {plain}, gpuspy {spied})")
sys.exit(1 if failed else 0)
