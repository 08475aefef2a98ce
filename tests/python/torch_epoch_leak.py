#!/usr/bin/env python3
"""The PyTorch view's growth rule on an epoch leak, through the pretend
PyTorch (tests/python/torch_epochs.py): the line that keeps 8 MiB per
epoch is growing in torch.json and named once on stderr, with [PyTorch
view], before the program's last line, and named first in the summary at
exit; the line that fills in 3 epochs and stays is neither.  Epochs of 1
and 8 samples of the view, at intervals of 100 and 50 ms: an epoch ends on
the view's count in torch.json, not on the clock, so that a machine too
loaded to sample at every interval (or the view's cost bound, which
stretches its period when a sample is costly) makes the run longer, not
the leak shorter.
Usage: torch_epoch_leak.py LIBGPUSPY LIBPYALLOC FAKE_DIR LIBC10_CUDA"""
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
script = os.path.join(here, "torch_epochs.py")
line_of = {l.split("# LINE ")[-1]: i + 1 for i, l in enumerate(open(script).read().splitlines())
           if "# LINE " in l}


for interval_ms, per in ((50, 8), (100, 1)):
    tag = f"epochs of {per} samples at {interval_ms} ms"
    out = harness.tempdir()
    env = dict(os.environ, LD_PRELOAD=lib, GPUSPY_OUTPUT_DIR=out, LD_LIBRARY_PATH=fake_dir,
               GPUSPY_INTERVAL=f"{interval_ms}ms", PYTHONPATH=os.path.join(here, "fake_torch"),
               FAKE_C10_CUDA=os.path.abspath(c10))
    env.pop("GPUSPY_TORCH", None)
    env.pop("GPUSPY_QUIET", None)
    r = subprocess.run([sys.executable, script, pyalloc, "12", str(per)], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    lines = r.stdout.splitlines()
    views = glob.glob(os.path.join(out, "*", "torch.json"))
    view = json.load(open(views[0])) if views else {"sites": []}
    shutil.rmtree(out)
    by_line = {s["frames"][0]["line"]: s for s in view["sites"]
               if s["frames"] and s["frames"][0]["file"] == script}
    leak, plateau = by_line.get(line_of["epoch_leak"], {}), by_line.get(line_of["plateau"], {})
    check(r.returncode == 0 and "done" in lines, f"{tag}: runs ({r.returncode})")
    # blocks of the first epoch may predate the view: they have no frames
    check(leak.get("live_bytes", 0) >= 64 << 20 and leak.get("growing") is True,
          f"{tag}: the epoch leak is growing in torch.json: {leak.get('growing')}")
    check(plateau.get("live_bytes", 0) > 0 and plateau.get("growing") is False,
          f"{tag}: the plateau is not: {plateau.get('growing')}")
    told = [i for i, l in enumerate(lines) if l.startswith("gpuspy: growing: ") and
            "[PyTorch view]" in l]
    want = f"at epoch ({script}:{line_of['epoch_leak']}) [PyTorch view]; "
    check(len(told) == 1 and want in lines[told[0]] and told[0] < lines.index("done"),
          f"{tag}: named once on stderr while it runs: {[lines[i] for i in told]}")
    # the exit summary leads with the Python line that holds the memory,
    # as the view knows it, before the CUDA sites (which name the pool)
    exit_at = next((i for i, l in enumerate(lines) if "still live at exit" in l), len(lines))
    named = [l for l in lines[exit_at + 1:] if l.startswith("gpuspy:   ")]
    want = f" from epoch ({script}:{line_of['epoch_leak']}) [PyTorch view]"
    check(bool(named) and named[0].endswith(want),
          f"{tag}: the exit summary's first line is the epoch leak's: {named[:1]}")
sys.exit(harness.done())
