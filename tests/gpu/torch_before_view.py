#!/usr/bin/env python3
"""For each RUN (a gpuspy run directory) and its report JSON (RUN.json,
`gpuspy report --format json RUN`): the bytes of PyTorch's live blocks
the view could give no line (no headline: allocated before the view
started, and not in a segment gpuspy recorded), of how many live, and
those PyTorch recorded no Python frames for in a segment gpuspy recorded
from a thread without Python either (autograd's backward); one
PASS/FAIL line each (0 wanted).
Usage: torch_before_view.py NAME=REPORT_JSON..."""
import json
import sys

failed = 0
for arg in sys.argv[1:]:
    name, path = arg.split("=", 1)
    try:
        sites = (json.load(open(path)).get("torch") or {}).get("sites") or []
    except (OSError, ValueError) as e:
        print(f"FAIL before-view {name}: {e}")
        failed += 1
        continue
    before = sum(s["live_bytes"] for s in sites
                 if "headline" not in s and s.get("source") != "segment")
    nopython = sum(s["live_bytes"] for s in sites
                   if "headline" not in s and s.get("source") == "segment")
    total = sum(s["live_bytes"] for s in sites)
    ok = bool(sites) and before == 0
    print(f"{'PASS' if ok else 'FAIL'} before-view {name}: {before / 2**20:.1f} MiB of "
          f"{total / 2**20:.1f} MiB live in {len(sites)} lines with no line at all (before the view "
          f"started, in no segment gpuspy recorded); {nopython / 2**20:.1f} MiB on threads "
          f"without Python, named by gpuspy's native site of their segment")
    failed += not ok
sys.exit(1 if failed else 0)
