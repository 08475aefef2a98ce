#!/usr/bin/env python3
"""Checks of scripts/gpu-check case malloc3d (tests/gpu/malloc3d.cu) on
what it left in CASEDIR: the same exit status and stdout with and without
gpuspy; in gpuspy's report (report.json as the library wrote it) the site
of leak_volume() leaks one allocation of pitch x height x depth bytes,
with the pitch the runtime printed; with the shared cudart (CASEDIR ends
in -shared) it is reported as cudaMalloc3D, the runtime's nested driver
call not counted again; with the static one, whose calls only the driver
doors see, as the driver call it made; and compute-sanitizer's leak
summary, beside it, at least width x height x depth bytes.  Prints one
PASS/FAIL line per check.  Usage: malloc3d_check.py CASEDIR"""
import glob
import json
import os
import re
import sys

d = sys.argv[1]
failed = 0


def check(cond, what):
    global failed
    print(("PASS " if cond else "FAIL ") + what)
    failed += not cond


def read(name):
    try:
        with open(os.path.join(d, name)) as f:
            return f.read()
    except OSError:
        return ""


plain, spied = read("plain.stdout"), read("gpuspy.stdout")
check(read("plain.status").strip() == "0" and read("gpuspy.status").strip() == "0",
      "exit status 0 plain and under gpuspy")
check(plain == spied and plain != "", "the same stdout with and without gpuspy")
m = re.search(r"^malloc3d: width (\d+) height (\d+) depth (\d+) pitch (\d+)$", spied, re.M)
check(m is not None, "the program printed its extent and pitch")
if not m:
    sys.exit(1)
w, h, dep, pitch = (int(x) for x in m.groups())
check(pitch >= w, f"the pitch {pitch} is at least the width {w}")

reports = glob.glob(os.path.join(d, "run", "*", "report.json"))
check(len(reports) == 1, "one process report")
if len(reports) != 1:
    sys.exit(1)
rep = json.load(open(reports[0]))
sites = [s for s in rep.get("sites", [])
         if any("leak_volume" in (f.get("symbol") or f.get("function") or "")
                for f in s.get("frames", []))]
check(len(sites) == 1, f"one site in leak_volume ({len(sites)})")
if sites:
    s = sites[0]
    shared = d.rstrip("/").endswith("-shared")
    check(s.get("leaked_bytes") == pitch * h * dep and s.get("leaked_allocations") == 1,
          f"leak_volume leaks 1 allocation of {pitch} x {h} x {dep} = {pitch * h * dep} bytes "
          f"({s.get('leaked_allocations')} of {s.get('leaked_bytes')})")
    if shared:
        check(s.get("api") == "cudaMalloc3D", f"reported as cudaMalloc3D ({s.get('api')})")
    else:
        check(str(s.get("api", "")).startswith("cuMem"),
              f"reported as the driver call ({s.get('api')})")
san = read("sanitizer.txt")
t = re.search(r"LEAK SUMMARY: (\d+) bytes leaked in (\d+) allocations", san)
check(t is not None and int(t.group(1)) >= w * h * dep,
      "compute-sanitizer: at least width x height x depth leaked "
      f"({t.group(0) if t else 'no summary'})")
sys.exit(1 if failed else 0)
