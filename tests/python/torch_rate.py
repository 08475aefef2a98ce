#!/usr/bin/env python3
"""The PyTorch view samples at every interval on a job that runs Python:
a loop (tests/python/torch_busy.py) that runs until the library's own
history holds N samples, under GPUSPY_INTERVAL of 1 s and of 100 ms,
leaves a report.json whose python_calls (the view's calls that the main
thread ran) and a torch.json whose samples are each at least 0.8 N.  Its
steps are shorter than the interval: the view runs between two bytecodes
of the main thread, never inside one.  Counted against the library's
samples rather than the clock, so that a loaded machine, where the
snapshot thread itself runs late, changes the run's length and not the
verdict.

The view's cost bound stretches its period after a sample that costs more
than about 0.5% of the interval (rounded to the nearest whole interval,
so at most 0.75%).  At 1 s a sample of the pretend PyTorch (0.5 to 2 ms of
CPU on a 2-core machine, as its load goes) is far below it.  At 100 ms it is not,
and it is not the same from one run to the next: there the program gives
the view a cost clock of its own (torch_busy.py's COST_US) by which each
sample costs exactly 0.5 ms, 0.5% of the interval - the case that once
lost every other sample, before the rounding.
Usage: torch_rate.py LIBGPUSPY LIBPYALLOC FAKE_DIR LIBC10_CUDA"""
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


def run(interval, intervals, step_ms, cost_us=None):
    """(the run, report.json, torch.json's samples)"""
    out = harness.tempdir()
    env = dict(os.environ, LD_PRELOAD=lib, GPUSPY_OUTPUT_DIR=out, LD_LIBRARY_PATH=fake_dir,
               GPUSPY_INTERVAL="%dms" % (interval * 1000), GPUSPY_QUIET="1",
               PYTHONPATH=os.path.join(here, "fake_torch"), FAKE_C10_CUDA=os.path.abspath(c10))
    env.pop("GPUSPY_TORCH", None)
    cmd = [sys.executable, os.path.join(here, "torch_busy.py"), pyalloc, str(intervals),
           str(step_ms)] + ([str(cost_us)] if cost_us is not None else [])
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=240)
    reports = glob.glob(os.path.join(out, "*", "report.json"))
    views = glob.glob(os.path.join(out, "*", "torch.json"))
    report = json.load(open(reports[0])) if reports else {}
    samples = json.load(open(views[0]))["samples"] if views else 0
    shutil.rmtree(out)
    return r, report, samples


for interval, intervals, step_ms, cost_us in ((1.0, 8, 20, None), (1.0, 8, 300, None),
                                              (0.1, 40, 5, 500)):
    tag = "%d intervals of %g s, steps of %d ms%s" % (
        intervals, interval, step_ms, "" if cost_us is None else ", samples of %d us" % cost_us)
    r, report, samples = run(interval, intervals, step_ms, cost_us)
    want = 0.8 * intervals
    check(r.returncode == 0 and "python_calls" in report,
          "%s: runs (%d) %s" % (tag, r.returncode, r.stderr.strip()[-300:]))
    calls = report.get("python_calls", 0)
    check(calls >= want, "%s: the main thread ran the view's call %d times (%g wanted)"
          % (tag, calls, want))
    check(samples >= want, "%s: %d samples in torch.json (%g wanted)" % (tag, samples, want))
sys.exit(harness.done())
