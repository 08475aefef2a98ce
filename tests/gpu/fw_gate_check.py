"""Checks the evidence of tests/gpu/fw_gate.py (scripts/gpu-check, case
fw-gate): DIR/FRAMEWORK/ has the program's loaded.txt, DIR/FRAMEWORK.status
its exit status, DIR/FRAMEWORK-run/ its output directory.
Usage: fw_gate_check.py DIR"""
import glob
import json
import os
import sys

d = sys.argv[1]
failures = 0
names = {"torch": "pytorch", "jax": "jax", "cupy": "cupy", "paddle": "paddle"}
for fw in ("none", "torch", "jax", "cupy", "paddle"):
    if os.path.exists(os.path.join(d, fw, "skipped")):
        print(f"skip {fw}: not installed")
        continue
    status = open(os.path.join(d, f"{fw}.status")).read().strip()
    reps = glob.glob(os.path.join(d, f"{fw}-run", "*", "report.json"))
    rep = json.load(open(reps[0])) if reps else {}
    calls = rep.get("python_calls")
    counters = (rep.get("frameworks") or {}).get("counters", {})
    if fw == "none":
        ok = status == "0" and calls == 0 and not counters
        what = f"python_calls {calls}, frameworks {sorted(counters)}"
    else:
        ok = status == "0" and isinstance(calls, int) and calls > 0 and names[fw] in counters
        what = f"python_calls {calls}, frameworks {sorted(counters)}"
    print(("ok   " if ok else "FAIL ") + f"fw-gate {fw}: status {status}, {what}")
    failures += not ok
sys.exit(1 if failures else 0)
