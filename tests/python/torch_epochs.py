"""An epoch leak through the pretend PyTorch of fake_torch/, for
tests/python/torch_epoch_leak.py: EPOCHS epochs of PER samples of the
PyTorch view each, each epoch keeping 8 MiB (LINE epoch_leak) and, in the
first 3 only, 8 MiB more (LINE plateau); every 10 ms of an epoch a scratch
tensor comes and goes (LINE scratch).  An epoch ends once torch.json
counts PER more samples than at its start (the view rewrites it at each
sample, between two bytecodes of this thread), not after a time: the
view's rate is that of the machine and of its cost bound, and the rule
judges samples.  One real allocation through the fake CUDA driver
(pyalloc, by ctypes) starts gpuspy's snapshot thread.  "done" on stdout
at the end; exit status 1 when an epoch's samples take over 30 s.
Usage: torch_epochs.py LIBPYALLOC EPOCHS PER"""
import ctypes
import glob
import json
import os
import sys
import time

import torch

pyalloc = ctypes.CDLL(sys.argv[1])
pyalloc.pyalloc_leak.argtypes = [ctypes.c_size_t, ctypes.c_int]
pyalloc.pyalloc_leak(1 << 20, 1)
epochs, per = int(sys.argv[2]), int(sys.argv[3])
view = os.path.join(os.environ["GPUSPY_OUTPUT_DIR"], "*-%d" % os.getpid(), "torch.json")
kept, cache = [], []


def view_samples():
    """The view's samples so far, as torch.json says (0 before its first)."""
    for path in glob.glob(view):
        try:
            with open(path) as f:
                return json.load(f)["samples"]
        except (OSError, ValueError, KeyError):
            pass
    return 0


def epoch(i):
    kept.append(torch.empty(8 << 20))  # LINE epoch_leak
    if i < 3:
        cache.append(torch.empty(8 << 20))  # LINE plateau
    end = view_samples() + per
    deadline = time.monotonic() + 30
    while view_samples() < end:
        if time.monotonic() > deadline:
            sys.exit("torch_epochs: epoch %d: fewer than %d samples of the view in 30 s"
                     % (i, per))
        scratch = torch.empty(4 << 20)  # LINE scratch
        time.sleep(0.01)
        del scratch


for i in range(epochs):
    epoch(i)
print("done", flush=True)
