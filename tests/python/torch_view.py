#!/usr/bin/env python3
"""gpuspy's PyTorch view (src/preload/3-out/torch_probe.c, torch_view.py) against the
pretend PyTorch of fake_torch/, for every CPython 3.10-3.13 on this machine:
libgpuspy's snapshot thread must start the view once "torch" has
initialized CUDA, torch.json must name the leaking line as the largest and
growing holder (also after the program's exit, from the atexit sample), a
freed line must show nothing live, a block allocated before the view
started (without a segment gpuspy saw) has no frames, and `gpuspy report` must show it all.  Another
allocator backend or GPUSPY_TORCH=0 leaves the view off.
Usage: torch_view.py LIBGPUSPY LIBPYALLOC FAKE_DIR GPUSPY LIBC10_CUDA"""
import glob
import json
import os
import shutil
import subprocess
import sys

from pythons import interpreters

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

lib, pyalloc, fake_dir, cli, c10 = sys.argv[1:6]
lib = harness.preload(lib)
here = os.path.dirname(os.path.abspath(__file__))
script = os.path.join(here, "torch_leak.py")
src = open(script).read().splitlines()
line_of = {l.split("# LINE ")[-1]: i + 1 for i, l in enumerate(src) if "# LINE " in l}
STEPS = 150
MIB = 1 << 20


def run(py, out, **extra):
    env = dict(os.environ, LD_PRELOAD=lib, GPUSPY_OUTPUT_DIR=out, LD_LIBRARY_PATH=fake_dir,
               GPUSPY_INTERVAL="10ms", PYTHONPATH=os.path.join(here, "fake_torch"),
               FAKE_C10_CUDA=os.path.abspath(c10))
    env.pop("GPUSPY_TORCH", None)
    env.update(extra)
    return subprocess.run([py, script, pyalloc, str(STEPS)], env=env, capture_output=True,
                          text=True, timeout=120)


def innermost(site):
    f = site["frames"][0] if site["frames"] else {}
    return (os.path.basename(f.get("file", "")), f.get("line"))


found = interpreters()
for minor in (10, 11, 12, 13):
    if minor not in found:
        print(f"3.{minor}: not installed, skipped")
for minor, py in [(m, p) for m, ps in sorted(found.items()) for p in ps]:
    tag = f"3.{minor} ({py})"
    out = harness.tempdir()
    r = run(py, out)
    check(r.returncode == 0 and r.stdout == f"kept {STEPS}\n",
          f"{tag}: the program runs as without gpuspy: {r.returncode} {r.stdout!r}")
    check("PyTorch view off" not in r.stderr,
          f"{tag}: no complaint on stderr: {r.stderr.strip()[:200]!r}")
    told = [l for l in r.stderr.splitlines() if l.startswith("gpuspy: growing: ")]
    check(len(told) == 1 and f"at step ({script}:{line_of['leak']}) [PyTorch view]; " in told[0],
          f"{tag}: the leak line named once on stderr as growing: {told}")
    files = glob.glob(os.path.join(out, "*", "torch.json"))
    check(len(files) == 1, f"{tag}: torch.json written")
    if not files:
        continue
    t = json.load(open(files[0]))
    sites = {innermost(s): s for s in t["sites"]}
    leak = sites.get(("torch_leak.py", line_of["leak"]), {})
    scratch = sites.get(("torch_leak.py", line_of["scratch"]), {})
    early = [s for s in t["sites"] if not s["frames"]]
    check(t["format"] == "gpuspy-torch/1" and t["final"] is True and t["samples"] >= 16,
          f"{tag}: format, final sample at exit, {t['samples']} samples")
    # the weights, allocated as the pretend PyTorch initialized CUDA: at
    # their line when the view armed in time (CUDA started before it here,
    # through pyalloc: torch_early.py says when it must), else without
    # frames (the pretend pool's segments are not CUDA's: gpuspy has no
    # record of them to name them from)
    weights = sites.get(("torch_leak.py", line_of["weights"]), {})
    early_bytes = sum(s["live_bytes"] for s in early)
    check(len(early) <= 1 and weights.get("live_bytes", 0) in (0, 8 * MIB) and
          early_bytes + weights.get("live_bytes", 0) >= 8 * MIB and
          leak.get("live_bytes", 0) + early_bytes + weights.get("live_bytes", 0) ==
          (8 + STEPS) * MIB and leak.get("live_blocks", 0) >= STEPS - 4,
          f"{tag}: the leak line holds {leak.get('live_bytes', 0) // MIB} MiB at exit, "
          f"the weights {weights.get('live_bytes', 0) // MIB} MiB at their line, "
          f"{early_bytes // MIB} MiB allocated before the view started")
    check(t["sites"] and t["sites"][0] is leak, f"{tag}: ... the most of any line")
    check(leak.get("growing") is True, f"{tag}: ... and is growing")
    check([f["function"] for f in leak.get("frames", [])][:2] == ["step", "<module>"],
          f"{tag}: its frames, innermost first: {[f['function'] for f in leak.get('frames', [])]}")
    # freed in the step that made it: live in no sample
    check(scratch.get("live_bytes", 0) == 0 and not scratch.get("growing"),
          f"{tag}: the scratch line holds nothing")
    check(t["devices"] and t["devices"][0]["allocated_bytes"] == (8 + STEPS) * MIB,
          f"{tag}: the pool's totals")
    rep = subprocess.run([cli, "report", out], capture_output=True, text=True)
    text = rep.stdout
    sec = text[text.find("\nPYTORCH TENSORS") + 1:].splitlines()
    check(rep.returncode == 0 and len(sec) > 3 and sec[2].endswith(", GROWING") and
          sec[3] == f"  at step (torch_leak.py:{line_of['leak']})",
          f"{tag}: gpuspy report lists the leak line first, growing: {sec[:4]}")
    summary = [l for l in text.splitlines() if l.startswith("  PyTorch tensors:")]
    check(len(summary) == 1 and f"most by step (torch_leak.py:{line_of['leak']}), growing" in summary[0],
          f"{tag}: ... and names it in the summary: {summary}")
    j = json.loads(subprocess.run([cli, "report", "--format", "json", out], capture_output=True,
                                  text=True).stdout)
    ts = j.get("torch", {}).get("sites", [])
    check(ts and ts[0]["live_bytes"] == leak.get("live_bytes") and ts[0]["growing"] and
          ts[0]["headline"]["line"] == line_of["leak"], f"{tag}: ... and so does its JSON")
    top = subprocess.run([cli, "top", "--count", "1", out], capture_output=True, text=True)
    lines = top.stdout.splitlines()
    at = next((i for i, l in enumerate(lines) if "PYTORCH TENSORS" in l), None)
    check(top.returncode == 0 and at is not None and
          lines[at + 1].rstrip().endswith(f"GROWING  step (torch_leak.py:{line_of['leak']})"),
          f"{tag}: gpuspy top shows the view's lines: {lines[at:at + 2] if at else lines}")
    if minor == max(found):
        # a torch.json that is not right fails the report like any bad file
        good = open(files[0]).read()
        doc = json.loads(good)
        for name, text in (("empty", ""), ("truncated", good[:len(good) // 2]),
                           ("garbage", "\x01garbage"), ("array", "[]"),
                           ("format", json.dumps(dict(doc, format="gpuspy-torch/9"))),
                           ("pid", json.dumps(dict(doc, pid=doc["pid"] + 1))),
                           ("samples", json.dumps(dict(doc, samples=-1))),
                           ("sites", json.dumps(dict(doc, sites={}))),
                           ("frames", json.dumps(dict(doc, sites=[dict(doc["sites"][0], frames=[3])]))),
                           ("live over peak", json.dumps(dict(doc, sites=[dict(
                               doc["sites"][0], live_bytes=doc["sites"][0]["peak_bytes"] + 1)]))),
                           ("devices", json.dumps(dict(doc, devices=[{"device": 0}])))):
            with open(files[0], "w") as f:
                f.write(text)
            p = subprocess.run([cli, "report", out], capture_output=True, text=True)
            check(p.returncode == 2 and len(p.stderr.splitlines()) == 1 and
                  p.stderr.startswith("gpuspy report: " + files[0] + ":"),
                  f"a bad torch.json ({name}): status {p.returncode}, {p.stderr.strip()!r}")
    shutil.rmtree(out)

# gpuspy diff compares the views: the same program, leaking 60 steps more.
py = shutil.which("python3")
runs = []
for steps in (40, 100):
    out = harness.tempdir()
    env = dict(os.environ, LD_PRELOAD=lib, GPUSPY_OUTPUT_DIR=out, LD_LIBRARY_PATH=fake_dir,
               GPUSPY_INTERVAL="10ms", PYTHONPATH=os.path.join(here, "fake_torch"),
               FAKE_C10_CUDA=os.path.abspath(c10), GPUSPY_QUIET="1")
    subprocess.run([py, script, pyalloc, str(steps)], env=env, capture_output=True, timeout=60)
    runs.append(out)
d = subprocess.run([cli, "diff", "--format", "json", "--fail-on-growth", "10M"] + runs,
                   capture_output=True, text=True)
j = json.loads(d.stdout) if d.stdout else {}
grew = [t for t in j.get("torch_sites", []) if t["live"]["delta"] > 0]
check(d.returncode == 1 and len(grew) == 1 and grew[0]["live"]["delta"] == 60 * MIB and
      grew[0]["headline"]["line"] == line_of["leak"] and grew[0]["status"] == "changed",
      f"gpuspy diff: the leak line's blocks grew by 60 MiB, --fail-on-growth 10M fails: "
      f"{d.returncode} {[(t['key'], t['live']['delta']) for t in grew]}")
t = subprocess.run([cli, "diff"] + runs, capture_output=True, text=True)
check("PYTORCH TENSORS CHANGED" in t.stdout and
      f"+60.0 MiB  step ({os.path.basename(script)}:{line_of['leak']})" in t.stdout, "... and says so in text")
for out in runs:
    shutil.rmtree(out)

# A forked child that exits through atexit leaves the parent's view alone.
out = harness.tempdir()
env = dict(os.environ, LD_PRELOAD=lib, GPUSPY_OUTPUT_DIR=out, LD_LIBRARY_PATH=fake_dir,
           GPUSPY_INTERVAL="10ms", PYTHONPATH=os.path.join(here, "fake_torch"),
           FAKE_C10_CUDA=os.path.abspath(c10))
# the child keeps stderr open until it exits: run() returns after both
r = harness.run([py, script, pyalloc, "20", "fork"], env=env)
files = glob.glob(os.path.join(out, "*", "torch.json"))
rep = subprocess.run([cli, "report", out], capture_output=True, text=True)
# the exit summary names sites "[PyTorch view]"; nothing else may speak of it
said = [l for l in r.stderr.splitlines() if "PyTorch view" in l and "[PyTorch view]" not in l]
check(r.returncode == 0 and len(files) == 1 and json.load(open(files[0]))["final"] and
      rep.returncode == 0 and not said,
      f"a forked child at exit: one view, the parent's: {r.returncode} {rep.stderr.strip()!r} "
      f"{r.stderr.strip()[-200:]!r}")
shutil.rmtree(out)

# While it waits (the program importing), the view is asked every 50 ms,
# not every interval: with the default 1 s, it starts in time all the same.
late = os.path.join(here, "torch_late.py")
late_line = next(i + 1 for i, l in enumerate(open(late)) if "# LINE after" in l)
out = harness.tempdir()
env = dict(os.environ, LD_PRELOAD=lib, GPUSPY_OUTPUT_DIR=out, LD_LIBRARY_PATH=fake_dir,
           PYTHONPATH=os.path.join(here, "fake_torch") + ":" + here,
           FAKE_C10_CUDA=os.path.abspath(c10), GPUSPY_QUIET="1")
env.pop("GPUSPY_INTERVAL", None)
r = subprocess.run([py, late, pyalloc], env=env, capture_output=True, text=True, timeout=60)
files = glob.glob(os.path.join(out, "*", "torch.json"))
t = json.load(open(files[0])) if files else {"sites": []}
hit = [s for s in t["sites"] if s["frames"] and s["frames"][0]["line"] == late_line]
check(r.stdout == "done\n" and len(hit) == 1 and hit[0]["live_bytes"] == 2 * MIB,
      f"the view starts soon after an import, before the first interval: {r.stdout!r} "
      f"{[(s['frames'][:1], s['live_bytes']) for s in t['sites']]}")
shutil.rmtree(out)

# Off: another allocator backend (gpuspy sees each allocation), or asked.
py = shutil.which("python3")
out = harness.tempdir()
r = run(py, out, FAKE_TORCH_BACKEND="cudaMallocAsync")
check(r.returncode == 0 and not glob.glob(os.path.join(out, "*", "torch.json")) and
      r.stderr.count("PyTorch view off: allocator backend cudaMallocAsync") == 1,
      f"backend cudaMallocAsync: no view, one line: {r.stderr.strip()!r}")
shutil.rmtree(out)
out = harness.tempdir()
r = run(py, out, GPUSPY_TORCH="0")
# ... its framework counters still run: PyTorch's own allocated counter,
# which grows with the leak, is what is said of it (once), not the view
said = [x for x in r.stderr.splitlines() if "PyTorch" in x]
check(r.returncode == 0 and not glob.glob(os.path.join(out, "*", "torch.json")) and
      len(said) <= 1 and all(x.startswith("gpuspy: growing: ") and
                             " in PyTorch's own allocated bytes on device 0" in x and
                             "[PyTorch view]" not in x for x in said),
      f"GPUSPY_TORCH=0: no view, nothing said of one: {said}")
shutil.rmtree(out)
sys.exit(harness.done())
