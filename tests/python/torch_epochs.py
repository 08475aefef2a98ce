"""An epoch leak through the pretend PyTorch of fake_torch/, for
tests/python/torch_epoch_leak.py: EPOCHS epochs of EPOCH_MS, each keeping
8 MiB (LINE epoch_leak) and, in the first 3 only, 8 MiB more (LINE
plateau); every 10 ms of an epoch a scratch tensor comes and goes (LINE
scratch).  One real allocation through the fake CUDA driver (pyalloc, by
ctypes) starts gpuspy's snapshot thread.  "done" on stdout at the end.
Usage: torch_epochs.py LIBPYALLOC EPOCHS EPOCH_MS"""
import ctypes
import sys
import time

import torch

pyalloc = ctypes.CDLL(sys.argv[1])
pyalloc.pyalloc_leak.argtypes = [ctypes.c_size_t, ctypes.c_int]
pyalloc.pyalloc_leak(1 << 20, 1)
epochs, epoch_s = int(sys.argv[2]), float(sys.argv[3]) / 1000
kept, cache = [], []


def epoch(i):
    kept.append(torch.empty(8 << 20))  # LINE epoch_leak
    if i < 3:
        cache.append(torch.empty(8 << 20))  # LINE plateau
    end = time.monotonic() + epoch_s
    while time.monotonic() < end:
        scratch = torch.empty(4 << 20)  # LINE scratch
        time.sleep(0.01)
        del scratch


for i in range(epochs):
    epoch(i)
print("done", flush=True)
