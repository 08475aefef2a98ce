#!/usr/bin/env python3
"""Checks of scripts/gpu-check case graph-mem (tests/gpu/graph_mem.cu) on
what it left in CASEDIR: the program's exit status and stdout the same
with and without gpuspy; gpuspy's report (report.json as the library wrote
it) against the program's own figures and the driver's graph-memory
attributes it printed; and compute-sanitizer's leak summary beside it.
Prints one PASS/FAIL line per check.  Usage: graph_check.py CASEDIR"""
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

phases = {}
for m in re.finditer(r"^graph_mem: (\S+) used_current (\d+) used_high (\d+) "
                     r"reserved_current (\d+) reserved_high (\d+)$", spied, re.M):
    phases[m.group(1)] = [int(x) for x in m.groups()[1:]]
m = re.search(r"^graph_mem: expect graph_free_node (\d+)/(\d+) graph_cudafree (\d+)/(\d+) "
              r"graph_captured (\d+)/(\d+) leaked (\d+) in (\d+) peak (\d+)$", spied, re.M)
check(m is not None and "after-trim" in phases, "the program printed its figures")
if not m or "after-trim" not in phases:
    sys.exit(1)
want = [int(x) for x in m.groups()]
sites_want = {"graph_free_node": want[0:2], "graph_cudafree": want[2:4],
              "graph_captured": want[4:6]}
leaked, leaked_n, peak = want[6], want[7], want[8]

reports = glob.glob(os.path.join(d, "run", "*", "report.json"))
check(len(reports) == 1, "one process report (%d)" % len(reports))
if len(reports) != 1:
    sys.exit(1)
with open(reports[0]) as f:
    rep = json.load(f)

check(rep["leaked"]["bytes"] == leaked and rep["leaked"]["allocations"] == leaked_n,
      "leaked %d in %d (the program: %d in %d)" % (rep["leaked"]["bytes"],
                                                   rep["leaked"]["allocations"], leaked, leaked_n))
g = rep.get("graph")
check(g is not None, "the report has a graph section")
if g:
    used_now, used_high, res_now, res_high = phases["after-trim"]
    check(g["live_bytes"] == leaked and g["live_allocations"] == leaked_n,
          "graph live %d in %d" % (g["live_bytes"], g["live_allocations"]))
    check(g["peak_bytes"] == peak, "graph peak %d (the program: %d; the driver's high mark %d)"
          % (g["peak_bytes"], peak, used_high))
    check(g["trims"] == 1, "1 trim (%d)" % g["trims"])
    dev = next((x for x in g["devices"] if x["device"] == 0), None)
    check(dev is not None, "the driver's attributes of device 0 in the report")
    if dev:
        # the report is written at exit, after the program's last print
        check(dev["used_current"] == used_now,
              "driver used now %d in the report, %d printed" % (dev["used_current"], used_now))
        check(dev["used_current"] >= g["live_bytes"],
              "the driver's used memory (%d) covers what gpuspy counts live (%d)"
              % (dev["used_current"], g["live_bytes"]))
        check(dev["used_high"] >= g["peak_bytes"],
              "the driver's high mark (%d) covers gpuspy's graph peak (%d)"
              % (dev["used_high"], g["peak_bytes"]))
        check(dev["reserved_current"] == res_now,
              "reserved after the trim %d (printed %d)" % (dev["reserved_current"], res_now))
    print("INFO graph: %s" % json.dumps(g))

# sites: the function that made each node is on its stack
mods = rep["modules"]
for func, (allocs, frees) in sites_want.items():
    got_a = got_f = 0
    apis = set()
    for s in rep["sites"]:
        if any(func in (f.get("function"), f.get("symbol")) for f in s["frames"]):
            got_a += s["allocations"]
            got_f += s["frees"]
            apis.add(s["api"])
    check(got_a == allocs and got_f == frees,
          "%s: %d allocations, %d frees (the program: %d, %d) by %s"
          % (func, got_a, got_f, allocs, frees, ",".join(sorted(apis)) or "no site"))
calls = rep.get("calls", {})
check(calls.get("graph", 0) > 0, "calls: %s" % json.dumps(calls))

san = read("sanitizer.txt")
sm = re.search(r"LEAK SUMMARY: (\d+) bytes leaked in (\d+) allocations", san)
print("INFO compute-sanitizer: %s; gpuspy: %d bytes in %d" %
      (sm.group(0) if sm else "no leak summary", rep["leaked"]["bytes"],
       rep["leaked"]["allocations"]))
check(re.search(r"^graph_mem: expect", san, re.M) is not None,
      "the program ran to its end under compute-sanitizer")
sys.exit(1 if failed else 0)
