#!/usr/bin/env python3
"""Out-of-memory post-mortems, end to end on the fake driver: the oom
program leaks SMALL from leak_oom(), then asks for BIG three ways
(cudaMalloc, cuMemAlloc_v2, cuMemAllocManaged), which the fake driver
refuses (GPUSPY_FAKE_OOM_SIZE).  Each refusal must leave an oom-N.json
naming the request and what was live, the errors must come back
unchanged, and gpuspy report must list the events.
Usage: oom_report.py LIBGPUSPY GPUSPY FAKE_DIR OOM_PROGRAM"""
import glob, json, os, subprocess, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

lib, cli, fake, prog = sys.argv[1:5]
lib = harness.preload(lib)
small, big = 12345, 3 << 30
env = harness.clean_env(fake, GPUSPY_FAKE_OOM_SIZE=str(1 << 30))


plain = subprocess.run([prog, str(small), str(big)], env=env, capture_output=True, text=True)
out = harness.tempdir()
spied = subprocess.run([prog, str(small), str(big)], capture_output=True, text=True,
                       env=dict(env, LD_PRELOAD=lib, GPUSPY_OUTPUT_DIR=out))
check(plain.stdout == spied.stdout and plain.returncode == spied.returncode,
      "stdout and status unchanged by gpuspy")
check(spied.stderr.count("gpuspy: out of memory:") == 3, "one stderr line per failed request")

procs = glob.glob(os.path.join(out, "*"))
check(len(procs) == 1, "one process directory")
files = sorted(os.path.basename(p) for p in glob.glob(os.path.join(procs[0], "oom-*.json")))
check(files == ["oom-1.json", "oom-2.json", "oom-3.json"], f"three post-mortems: {files}")
rep = json.load(open(os.path.join(procs[0], "report.json")))
apis = [e["api"] for e in rep.get("oom", [])]
check(apis == ["cudaMalloc", "cuMemAlloc_v2", "cuMemAllocManaged"], f"events in order: {apis}")
check(all(e["requested_bytes"] == big and e["live_bytes"] == small for e in rep.get("oom", [])),
      "each event: requested size and tracked live bytes")
check(rep["leaked"] == {"bytes": small, "allocations": 1}, "failed requests not recorded")

pm = json.load(open(os.path.join(procs[0], "oom-2.json")))
ev = pm.get("event", {})
check(ev.get("api") == "cuMemAlloc_v2" and ev.get("requested_bytes") == big, "oom-2.json's event")
live = [s for s in pm["sites"] if s["live_bytes"] > 0]
check(len(live) == 1 and live[0]["live_bytes"] == small and
      any(f.get("symbol") == "leak_oom" for f in live[0]["frames"]),
      "oom-2.json: what was live, and where (leak_oom)")
req = [s for s in pm["sites"] if s["id"] == ev.get("site")]
check(len(req) == 1 and any(f.get("symbol") == "try_big" for f in req[0]["frames"]),
      "the requesting site is try_big")

j = json.loads(subprocess.run([cli, "report", "--format", "json", out], capture_output=True,
                              text=True, check=True).stdout)
ooms = j.get("oom", [])
check(len(ooms) == 3 and all(o["requested_bytes"] == big for o in ooms), "gpuspy report lists them")
check(ooms and all(o.get("top_sites") and any("leak_oom" in (t.get("headline") or {}).get("function", "") for t in o["top_sites"])
          for o in ooms), "gpuspy report: top site at each OOM is leak_oom")
text = subprocess.run([cli, "report", out], capture_output=True, text=True, check=True).stdout
check("OUT OF MEMORY" in text, "text report has an OUT OF MEMORY section")
# More events than the library keeps (16 post-mortems): the rest are
# counted in report.json's "oom_dropped", read back by gpuspy report.
many = harness.tempdir()
subprocess.run([prog, str(small), str(big), "7"], capture_output=True, text=True,
               env=dict(env, LD_PRELOAD=lib, GPUSPY_OUTPUT_DIR=many, GPUSPY_QUIET="1"))
mp = glob.glob(os.path.join(many, "*"))
mrep = json.load(open(os.path.join(mp[0], "report.json"))) if len(mp) == 1 else {}
check(len(mrep.get("oom", [])) == 16 and mrep.get("oom_dropped") == 7 * 3 - 16,
      "21 events: 16 kept, 5 counted in report.json's oom_dropped: %r"
      % ((len(mrep.get("oom", [])), mrep.get("oom_dropped")),))
p = subprocess.run([cli, "report", "--format", "json", many], capture_output=True, text=True)
check(p.returncode == 0 and json.loads(p.stdout or "{}").get("oom_dropped") == 5,
      "gpuspy report reads the dropped count: %d %s" % (p.returncode, p.stderr.strip()))

sys.exit(harness.done())
