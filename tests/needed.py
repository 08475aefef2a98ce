#!/usr/bin/env python3
"""libgpuspy.so is preloaded into every child of a job (shells, ptxas):
it must need nothing but the C library, and export no symbol outside its
hooks.  Usage: needed.py LIBGPUSPY"""
import re, subprocess, sys

lib = sys.argv[1]
dyn = subprocess.run(["readelf", "-dW", lib], capture_output=True, text=True, check=True).stdout
needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", dyn)
allowed = {"libc.so.6", "libdl.so.2", "libpthread.so.0"}
bad = [n for n in needed if n not in allowed]
syms = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True, check=True).stdout
exported = [l.split()[-1] for l in syms.splitlines() if l.split()[1] in "TtWwDdBb" and l.split()[1].isupper()]
stray = [s for s in exported if not (s.startswith("cu") or s == "dlsym" or s.startswith("gpuspy_"))]
print("NEEDED:", needed)
print("exported:", len(exported), "symbols")
if bad or stray:
    print("unexpected NEEDED:", bad, "unexpected exports:", stray)
    sys.exit(1)
