#!/usr/bin/env python3
"""The PyTorch view samples at every interval on a job that runs Python:
a loop of N seconds (tests/python/torch_busy.py) under GPUSPY_INTERVAL of
1 s and of 100 ms leaves a torch.json of at least 0.8 N / interval
samples (its cost bound stretches the period only for a sample that costs
more than about 1/200 of it).  Its steps are shorter than the interval: the view
runs between two bytecodes of the main thread, never inside one.
Usage: torch_rate.py LIBGPUSPY LIBPYALLOC FAKE_DIR LIBC10_CUDA"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

lib, pyalloc, fake_dir, c10 = sys.argv[1:5]
# A sanitizer's runtime must come first in LD_PRELOAD (scripts/sanitize).
lib = ":".join(filter(None, (os.environ.get("SANITIZER_PRELOAD"), lib)))
here = os.path.dirname(os.path.abspath(__file__))
failures = 0



def samples_of(interval, seconds, step_ms):
    out = tempfile.mkdtemp()
    env = dict(os.environ, LD_PRELOAD=lib, GPUSPY_OUTPUT_DIR=out, LD_LIBRARY_PATH=fake_dir,
               GPUSPY_INTERVAL="%dms" % (interval * 1000), GPUSPY_QUIET="1",
               PYTHONPATH=os.path.join(here, "fake_torch"), FAKE_C10_CUDA=os.path.abspath(c10))
    env.pop("GPUSPY_TORCH", None)
    r = subprocess.run([sys.executable, os.path.join(here, "torch_busy.py"), pyalloc,
                        str(seconds), str(step_ms)], env=env, capture_output=True, text=True,
                       timeout=120)
    views = glob.glob(os.path.join(out, "*", "torch.json"))
    samples = json.load(open(views[0]))["samples"] if views else 0
    shutil.rmtree(out)
    return r, samples


# At 100 ms the cost bound is 0.5 ms of CPU a sample, which a loaded
# machine can pass: there, one more try.
for interval, seconds, step_ms, tries in ((1.0, 8, 20, 1), (1.0, 8, 300, 1), (0.1, 4, 5, 2)):
    want = 0.8 * seconds / interval
    for attempt in range(tries):
        r, samples = samples_of(interval, seconds, step_ms)
        ok = r.returncode == 0 and samples >= want
        if ok:
            break
    print(("ok   " if ok else "FAIL ") + "%g s at %g s, steps of %d ms: %d samples (%g wanted, "
          "try %d) %s" % (seconds, interval, step_ms, samples, want, attempt + 1,
                          r.stderr.strip()[-200:]))
    failures += not ok
print("%d failures" % failures)
sys.exit(1 if failures else 0)
