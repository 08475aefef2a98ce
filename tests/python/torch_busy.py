"""A Python loop through the pretend PyTorch of fake_torch/, a step every
STEP_MS, until the library's own history (history.jsonl, a line per
interval of the snapshot thread) holds INTERVALS samples: for
tests/python/torch_rate.py, which counts the PyTorch view's samples
against them.  The run's length is the library's count, not a time: a
loaded machine makes it longer, it does not change what is compared.
With COST_US, the views' cost clock (time.thread_time, with which they
time a sample to bound their share of the time) is replaced by one that
advances COST_US microseconds at each reading: each sample then costs
exactly that, whatever the machine.  One real allocation through the fake
CUDA driver (pyalloc, by ctypes) starts gpuspy's snapshot thread.
Exit status 1 when the history has not grown for 30 s.
Usage: torch_busy.py LIBPYALLOC INTERVALS STEP_MS [COST_US]"""
import ctypes
import glob
import itertools
import json
import os
import sys
import time

import torch

pyalloc = ctypes.CDLL(sys.argv[1])
pyalloc.pyalloc_leak.argtypes = [ctypes.c_size_t, ctypes.c_int]
intervals, step_s = int(sys.argv[2]), float(sys.argv[3]) / 1000
if len(sys.argv) > 4:
    ticks = itertools.count()
    cost = float(sys.argv[4]) / 1e6
    time.thread_time = lambda: next(ticks) * cost
history = os.path.join(os.environ["GPUSPY_OUTPUT_DIR"], "*-%d" % os.getpid(), "history.jsonl")


def library_samples():
    """Sample lines of this process's history so far (a line being
    written is not one yet)."""
    n = 0
    for path in glob.glob(history):
        try:
            with open(path) as f:
                for line in f:
                    try:
                        n += "dev" in json.loads(line)
                    except ValueError:
                        pass
        except OSError:
            pass
    return n


pyalloc.pyalloc_leak(1 << 20, 1)
weights = torch.empty(8 << 20)
steps, seen, grew = 0, 0, time.monotonic()
while seen < intervals:
    scratch = torch.empty(1 << 20)
    del scratch
    steps += 1
    time.sleep(step_s)
    n = library_samples()
    if n > seen:
        seen, grew = n, time.monotonic()
    elif time.monotonic() - grew > 30:
        sys.exit("torch_busy: the history stayed at %d samples for 30 s" % seen)
print("steps", steps, "intervals", seen)
