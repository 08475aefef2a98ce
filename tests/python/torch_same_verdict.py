#!/usr/bin/env python3
"""One series, one verdict, in one process: torch_growth.py holds each of
two series both through a Python line (the PyTorch view's torch.json)
and through a C call site (libgpuspy's report.json), sampled every 10 ms.
Its lines appear only after seconds of samples: the series of each
starts at its own first sample, and "grow" must be growing on both
sides, "plateau" (a warm-up, then nothing) on neither.
Usage: torch_same_verdict.py LIBGPUSPY LIBPYALLOC FAKE_DIR LIBC10_CUDA"""
import glob
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

lib, pyalloc, fake_dir, c10 = sys.argv[1:5]
lib = harness.preload(lib)
here = os.path.dirname(os.path.abspath(__file__))
script = os.path.join(here, "torch_growth.py")
src = open(script).read().splitlines()
line_of = {l.split("# LINE ")[-1]: i + 1 for i, l in enumerate(src) if "# LINE " in l}
IDLE, STEPS, STEP_MS = 5, 1000, 3


out = harness.tempdir()
env = dict(os.environ, LD_PRELOAD=lib, GPUSPY_OUTPUT_DIR=out, LD_LIBRARY_PATH=fake_dir,
           GPUSPY_INTERVAL="10ms", GPUSPY_QUIET="1", PYTHONPATH=os.path.join(here, "fake_torch"),
           FAKE_C10_CUDA=os.path.abspath(c10))
env.pop("GPUSPY_TORCH", None)
r = subprocess.run([sys.executable, script, pyalloc, str(IDLE), str(STEPS), str(STEP_MS)],
                   env=env, capture_output=True, text=True, timeout=60)
check(r.returncode == 0 and r.stdout == f"kept {STEPS + 5}\n" and "PyTorch view" not in r.stderr,
      f"the program runs: {r.returncode} {r.stdout!r} {r.stderr.strip()[-200:]!r}")
reports = glob.glob(os.path.join(out, "*", "report.json"))
views = glob.glob(os.path.join(out, "*", "torch.json"))
check(len(reports) == 1 and len(views) == 1, "report.json and torch.json written")
rep = json.load(open(reports[0])) if reports else {"sites": []}
view = json.load(open(views[0])) if views else {"sites": [], "samples": 0}
print(f"samples: {view['samples']} of the view")


def c_site(tag):
    s = [s for s in rep["sites"] if s.get("python") and s["python"][0]["file"] == script and
         s["python"][0]["line"] == line_of[tag]]
    return s[0] if len(s) == 1 else {}


def py_line(tag):
    s = [s for s in view["sites"] if s["frames"] and s["frames"][0]["file"] == script and
         s["frames"][0]["line"] == line_of[tag]]
    return s[0] if len(s) == 1 else {}


for series, want in (("grow", True), ("plateau", False)):
    c, py = c_site("c_" + series), py_line("py_" + series)
    n = STEPS if want else 5
    check(c.get("live_bytes") == n << 16 and py.get("live_bytes") == n << 16,
          f"{series}: both hold {n} blocks: {c.get('live_bytes')} {py.get('live_bytes')}")
    check(c.get("growing") is want and py.get("growing") is want,
          f"{series}: growing {want} for the C site and for the Python line: "
          f"{c.get('growing')} {py.get('growing')}")
shutil.rmtree(out)
sys.exit(harness.done())
