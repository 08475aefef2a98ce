#!/usr/bin/env python3
"""On-demand snapshots and marks:
 - `gpuspy snapshot PID LABEL` makes a running process write
   snapshot-N.json with that label (signal SIGUSR2, thread woken at once,
   also with GPUSPY_INTERVAL=0);
 - gpuspy_mark / gpuspy_snapshot from C (a program linked with the stub
   library, which answers on its own without gpuspy) and from Python
   through ctypes.
Usage: ondemand.py LIBGPUSPY GPUSPY FAKE_DIR GROWTH_PROGRAM API_PROGRAM LIBPYALLOC"""
import glob, json, os, subprocess, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

lib, cli, fake, growth, api, pyalloc = sys.argv[1:7]
lib = harness.preload(lib)
env = harness.clean_env(fake)


# 1. A signal-requested snapshot, with its label.
out = harness.tempdir()
p = subprocess.Popen([growth, "40", "20", "hang"], stdout=subprocess.PIPE, text=True,
                     env=dict(env, LD_PRELOAD=lib, GPUSPY_OUTPUT_DIR=out, GPUSPY_INTERVAL="0"))
p.stdout.readline()  # halfway
r1 = subprocess.run([cli, "snapshot", str(p.pid), "epoch 3"], capture_output=True, text=True)
r2 = subprocess.run([cli, "snapshot", str(p.pid)], capture_output=True, text=True)
p.kill()
p.wait()
check(r1.returncode == 0 and r1.stdout.strip().endswith("snapshot-1.json"), f"gpuspy snapshot: {r1.stdout.strip()} {r1.stderr.strip()}")
s1 = json.load(open(r1.stdout.strip())) if r1.returncode == 0 else {}
s2 = json.load(open(r2.stdout.strip())) if r2.returncode == 0 else {}
check(s1.get("snapshot", {}).get("label") == "epoch 3", "the snapshot carries its label")
check(s2.get("snapshot", {}).get("label") == "snapshot" and s2["snapshot"]["number"] == 2,
      "a second one, default label")
leak = [s for s in s1.get("sites", []) if any(f.get("symbol") == "leak_step" for f in s["frames"])]
check(leak and leak[0]["live_bytes"] == 20 << 20, "what was live when asked (20 steps' leak)")
bad = subprocess.run([cli, "snapshot", "999999999"], capture_output=True, text=True)
check(bad.returncode == 2 and len(bad.stderr.splitlines()) == 1, "an unknown pid: one line, exit 2")

# 2. The C API through the stub library, with and without gpuspy.
plain = subprocess.run([api], env=env, capture_output=True, text=True)
check(plain.stdout == "mark 0\nsnapshot -1\n", f"without gpuspy the stub answers: {plain.stdout!r}")
out = harness.tempdir()
spied = subprocess.run([api], env=dict(env, LD_PRELOAD=lib, GPUSPY_OUTPUT_DIR=out, GPUSPY_QUIET="1"),
                       capture_output=True, text=True)
check(spied.stdout == "mark 0\nsnapshot 0\n", f"with gpuspy the library answers: {spied.stdout!r}")
snaps = glob.glob(os.path.join(out, "*", "snapshot-1.json"))
s = json.load(open(snaps[0])) if snaps else {}
check(s.get("snapshot", {}).get("label") == "after epoch 1" and s.get("mark") == "epoch 1",
      "the snapshot is labelled and tagged with the mark")
rep = json.load(open(glob.glob(os.path.join(out, "*", "report.json"))[0]))
marks = rep.get("marks", [])
check([m["label"] for m in marks] == ["epoch 1", "epoch 2"], "the exit report lists the marks")
check([m.get("live_bytes") for m in marks] == [3 << 20, 1 << 20],
      "each mark has the GPU memory live at that moment")
live = [{x["site"]: x["live_bytes"] for x in m.get("sites", [])} for m in marks]
check(len(live) == 2 and sorted(live[0].values()) == [3 << 20] and
      sorted(live[1].values()) == [1 << 20] and set(live[0]) != set(live[1]),
      f"... and which site held it: {live}")
d = subprocess.run([cli, "diff", "--format", "json", "--at", "epoch 2", out, out],
                   capture_output=True, text=True)
dj = json.loads(d.stdout) if d.returncode == 0 else {}
check(dj.get("totals", {}).get("at") == {"old": 1 << 20, "new": 1 << 20, "delta": 0},
      f"gpuspy diff --at reads them: {d.returncode} {d.stderr.strip()}")

# 3. From Python, through ctypes.
code = f"""
import ctypes
lib = ctypes.CDLL({pyalloc!r})
lib.pyalloc_leak.argtypes = [ctypes.c_size_t, ctypes.c_int]
lib.pyalloc_leak(1 << 20, 1)
me = ctypes.CDLL(None)
print(me.gpuspy_mark(b"epoch 2"), me.gpuspy_snapshot(b"from python"))
"""
out = harness.tempdir()
r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                   env=dict(env, LD_PRELOAD=lib, GPUSPY_OUTPUT_DIR=out, GPUSPY_QUIET="1"))
snaps = glob.glob(os.path.join(out, "*", "snapshot-1.json"))
s = json.load(open(snaps[0])) if snaps else {}
check(r.stdout.strip() == "0 0" and s.get("snapshot", {}).get("label") == "from python"
      and s.get("mark") == "epoch 2", f"ctypes: {r.stdout.strip()} {r.stderr.strip()[:200]}")
sys.exit(harness.done())
