#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The PyTorch view's series in history.jsonl (docs/format.md,
"gpuspy-history/1"), through the pretend PyTorch of fake_torch/: the
pool's reserved and allocated bytes per device, one series per line of
the view declared by a torch line with its frames, and the rest as
torch_other.  The leaking line's series rises step after step, the pool's
allocated bytes with it, and `gpuspy report --format csv` prints them all,
each line's series labelled with its innermost frame.
Usage: torch_history.py LIBGPUSPY LIBPYALLOC FAKE_DIR GPUSPY LIBC10_CUDA"""
import csv
import glob
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

lib, pyalloc, fake_dir, cli, c10 = sys.argv[1:6]
lib = harness.preload(lib)
here = os.path.dirname(os.path.abspath(__file__))
script = os.path.join(here, "torch_leak.py")
leak_line = next(i + 1 for i, l in enumerate(open(script)) if "# LINE leak" in l)
STEPS = 100
MIB = 1 << 20


out = harness.tempdir()
env = dict(os.environ, LD_PRELOAD=lib, GPUSPY_OUTPUT_DIR=out, LD_LIBRARY_PATH=fake_dir,
           GPUSPY_INTERVAL="10ms", PYTHONPATH=os.path.join(here, "fake_torch"),
           FAKE_C10_CUDA=os.path.abspath(c10), GPUSPY_QUIET="1")
env.pop("GPUSPY_TORCH", None)
r = subprocess.run([sys.executable, script, pyalloc, str(STEPS)], env=env, capture_output=True,
                   text=True, timeout=120)
check(r.returncode == 0 and r.stdout == f"kept {STEPS}\n", f"the program runs: {r.stdout!r}")
files = glob.glob(os.path.join(out, "*", "history.jsonl"))
check(len(files) == 1, "history.jsonl written")
if not files:
    sys.exit(1)
lines = [json.loads(x) for x in open(files[0])]
decl = {x["torch"]: x["frames"] for x in lines if "torch" in x and "t" not in x}
samples = [x for x in lines if "t" in x and "event" not in x]
leak = [i for i, f in decl.items() if f and os.path.basename(f[0]["file"]) == "torch_leak.py"
        and f[0]["line"] == leak_line]
check(len(leak) == 1 and [f["function"] for f in decl[leak[0]]][:2] == ["step", "<module>"],
      f"a torch line declares the leaking line's series, its frames innermost first: {decl}")
check(0 < len(decl) <= 16 and sorted(decl) == list(range(len(decl))),
      f"at most 16 lines, ids from 0: {sorted(decl)}")
with_pool = [x for x in samples if "pool_allocated" in x]
check(len(with_pool) >= 20 and all(x["pool_reserved"]["0"] >= x["pool_allocated"]["0"]
                                   for x in with_pool),
      f"{len(with_pool)} samples with the pool's totals, reserved >= allocated")
alloc = [x["pool_allocated"]["0"] for x in with_pool]
check(alloc[-1] >= (8 + STEPS - 10) * MIB and alloc[-1] > alloc[0],
      f"the pool's allocated bytes rise: {alloc[0] // MIB} to {alloc[-1] // MIB} MiB")
if leak:
    key = str(leak[0])
    series = [x["torch"][key] for x in samples if key in x.get("torch", {})]
    rises = sum(b > a for a, b in zip(series, series[1:]))
    check(len(series) >= 20 and all(b >= a for a, b in zip(series, series[1:]))
          and series[-1] >= (STEPS - 10) * MIB and rises >= 5,
          f"the leak line's series rises: {len(series)} samples, {rises} rises, "
          f"{series[-1] // MIB} MiB at the end")
check(all("torch_other" in x for x in with_pool), "torch_other in each sample with the view's")

rep = subprocess.run([cli, "report", "--format", "csv", out], capture_output=True, text=True)
rows = list(csv.DictReader(rep.stdout.splitlines()))
names = {x["series"] for x in rows}
check(rep.returncode == 0 and rep.stderr == "", f"gpuspy report --format csv: {rep.stderr!r}")
check({"pool_reserved:0", "pool_allocated:0", "torch_other"} <= names,
      f"... prints the pool's series and torch_other: {sorted(names)}")
if leak:
    mine = [x for x in rows if x["series"] == f"torch:{leak[0]}"]
    check(mine and all(x["label"] == f"{script}:{leak_line}" for x in mine)
          and int(mine[-1]["last"]) >= (STEPS - 10) * MIB,
          f"... and the leak line's, labelled with its innermost frame: "
          f"{mine[-1] if mine else None}")
shutil.rmtree(out)

# 24 lines: the first 16 hold the most at the start, then free it all; the
# last 8 grow past them later.  The 16 chosen first keep their series (each
# declared once), the 8 later ones are summed in torch_other.
out = harness.tempdir()
prog = os.path.join(out, "lines.py")
body = "".join(f"        keep.append(torch.empty(" + ("(1 << 20) * (step < 20)" if k < 16 else
                                                  "131072 * step * (step >= 20)") + f"))  # K{k}\n"
               for k in range(24))
with open(prog, "w") as f:
    f.write("import ctypes, sys, time\nimport torch\n"
            "p = ctypes.CDLL(sys.argv[1])\np.pyalloc_leak.argtypes = [ctypes.c_size_t, ctypes.c_int]\n"
            "p.pyalloc_leak(1 << 20, 1)\nkeep = []\nfor step in range(60):\n"
            "    if step == 20:\n        keep.clear()\n    for _ in (1,):\n" + body +
            "    time.sleep(0.02)\nprint('done')\n")
first = {k: i + 1 for i, l in enumerate(open(prog)) for k in [l.split("# K")[-1].strip()]
         if "# K" in l}
r = subprocess.run([sys.executable, prog, pyalloc], env=dict(env, GPUSPY_OUTPUT_DIR=out),
                   capture_output=True, text=True,
                   timeout=120)
files = glob.glob(os.path.join(out, "*", "history.jsonl"))
lines = [json.loads(x) for x in open(files[0])] if files else []
decl = [x for x in lines if "torch" in x and "t" not in x]
got = {f["frames"][0]["line"] for f in decl if f["frames"]}
early = {first[str(k)] for k in range(16)}
# (one may be the blocks allocated before the view started, without frames)
check(r.stdout == "done\n" and len(decl) == 16 and got <= early and len(got) >= 15,
      f"16 series, kept by the lines chosen first: {sorted(got)} {r.stderr[-200:]!r}")
last = [x for x in lines if "torch_other" in x][-1:] or [{}]
check(last[0].get("torch_other", 0) >= 8 * 131072 * 50,
      f"... the later lines in torch_other: {last[0].get('torch_other')}")
rep = subprocess.run([cli, "report", "--format", "csv", out], capture_output=True, text=True)
check(rep.returncode == 0 and len({x["series"] for x in csv.DictReader(rep.stdout.splitlines())
                                   if x["series"].startswith("torch:")}) == 16,
      f"... and the CSV has their 16 series: {rep.stderr!r}")
shutil.rmtree(out)
sys.exit(harness.done())
