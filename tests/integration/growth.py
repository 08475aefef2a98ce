#!/usr/bin/env python3
"""Memory over time on the fake driver (tests/integration/growth.c):
 - a site that grows every step is flagged growing, named once on stderr
   while the job runs; a site that allocates and frees, and a pool that
   warms up then plateaus, are not;
 - a run killed with SIGKILL leaves a readable snapshot.json;
 - thousands of intervals leave one snapshot.json of bounded size.
Usage: growth.py LIBGPUSPY GPUSPY FAKE_DIR GROWTH_PROGRAM"""
import glob, json, os, signal, subprocess, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

lib, cli, fake, prog = sys.argv[1:5]
lib = harness.preload(lib)
env = harness.clean_env(fake, GPUSPY_INTERVAL="100ms")


def by_function(rep, name):
    return [s for s in rep["sites"] if any(f.get("symbol") == name for f in s["frames"])]


# 1. 30 steps of 60 ms: leak_step grows, churn_step and warm_pool do not.
out = harness.tempdir()
r = subprocess.run([prog, "30", "60"], env=dict(env, LD_PRELOAD=lib, GPUSPY_OUTPUT_DIR=out),
                   capture_output=True, text=True, timeout=60)
check(r.returncode == 0, "the program ran")
rep = json.load(open(glob.glob(os.path.join(out, "*", "report.json"))[0]))
leak, churn, warm = (by_function(rep, n) for n in ("leak_step", "churn_step", "warm_pool"))
check(len(leak) == 1 and leak[0]["growing"] is True, "leak_step is growing")
check(len(churn) == 1 and churn[0]["growing"] is False, "churn_step (alloc + free) is not")
check(len(warm) == 1 and warm[0]["growing"] is False, "warm_pool (warms up, plateaus) is not")
notices = [l for l in r.stderr.splitlines() if l.startswith("gpuspy: growing: ")]
check(len(notices) == 1 and "leak_step" in notices[0], f"named once on stderr: {notices}")
j = json.loads(subprocess.run([cli, "report", "--format", "json", out], capture_output=True,
                              text=True, check=True).stdout)
grow = [s for s in j["sites"] if s.get("growing")]
check(len(grow) == 1 and any(f.get("function") == "leak_step" for f in grow[0]["frames"]),
      "gpuspy report flags leak_step as growing")

# 2. SIGKILL halfway: the last snapshot is there and readable.
out = harness.tempdir()
p = subprocess.Popen([prog, "40", "60", "hang"], env=dict(env, LD_PRELOAD=lib, GPUSPY_OUTPUT_DIR=out,
                     GPUSPY_QUIET="1"), stdout=subprocess.PIPE, text=True)
p.stdout.readline()  # "halfway"
# the snapshot thread has written the halfway state (20 steps of 1 MiB)
seen = harness.wait_snapshot(
    out, lambda s: [x["live_bytes"] for x in by_function(s, "leak_step")] == [20 << 20], proc=p)
check(seen is not None, "the halfway state reaches snapshot.json while the job runs")
p.send_signal(signal.SIGKILL)
p.wait()
d = glob.glob(os.path.join(out, "*"))
files = sorted(os.listdir(d[0])) if d else []
check("snapshot.json" in files and "report.json" not in files, f"killed: snapshot only ({files})")
snap = json.load(open(os.path.join(d[0], "snapshot.json")))
lk = by_function(snap, "leak_step")
check(snap["format"] == "gpuspy-process/1" and lk and lk[0]["live_bytes"] == 20 << 20,
      "the snapshot holds the 20 steps' 20 MiB at leak_step")
r = subprocess.run([cli, "report", out], capture_output=True, text=True)
check(r.returncode == 0 and "leak_step" in r.stdout, "gpuspy report reads the killed run")

# 3. Thousands of intervals of 0.5 ms while allocating: one bounded file.
# How many intervals go by depends on the machine's load; that the count
# keeps growing and the files stay a report's size does not.
out = harness.tempdir()
p = subprocess.Popen([prog, "5000", "1"], env=dict(env, LD_PRELOAD=lib, GPUSPY_OUTPUT_DIR=out,
                     GPUSPY_INTERVAL="500us", GPUSPY_QUIET="1"), stdout=subprocess.DEVNULL)
found = harness.wait_snapshot(out, proc=p)
mid = found[1] if found else None
rc = p.wait(timeout=120)
d = glob.glob(os.path.join(out, "*"))[0]
snap = json.load(open(os.path.join(d, "snapshot.json")))
size = sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d)
           if f not in ("history.jsonl", "allocations.json"))
check(rc == 0 and mid is not None and snap["snapshot"]["samples"] > mid["snapshot"]["samples"],
      f"the intervals go on: {mid and mid['snapshot']['samples']} then "
      f"{snap['snapshot']['samples']}")
check(sorted(os.listdir(d)) == ["allocations.json", "history.jsonl", "report.json", "report.txt",
                                "snapshot.json"]
      and size < 64 << 10, f"files stay a report's size: {size} bytes")
# allocations.json lists what is live at exit, a line each, whatever the
# intervals: about a hundred bytes an allocation
live = json.load(open(os.path.join(d, "report.json")))["leaked"]["allocations"]
asize = os.path.getsize(os.path.join(d, "allocations.json"))
check(asize < 128 * live + 1024, f"allocations.json: {asize} bytes for {live} allocations")
# the history is bounded apart (libgpuspy(7)): at most 2 MiB with few sites
hsize = os.path.getsize(os.path.join(d, "history.jsonl"))
check(hsize <= 2 << 20, f"history.jsonl stays bounded: {hsize} bytes")
sys.exit(harness.done())
