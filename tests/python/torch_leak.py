"""A training loop that leaks on purpose through the pretend PyTorch of
fake_torch/: each step keeps 1 MiB (LINE leak) and frees 4 MiB of
activations (LINE scratch).  One real allocation through the fake CUDA
driver (pyalloc, by ctypes) starts gpuspy's snapshot thread.
With "fork", a child forked at the end exits through atexit half a second
after the parent, as a worker may: the parent's view must stay the
parent's.
Usage: torch_leak.py LIBPYALLOC STEPS [fork]"""
import ctypes
import os
import sys
import time

import torch

pyalloc = ctypes.CDLL(sys.argv[1])
pyalloc.pyalloc_leak.argtypes = [ctypes.c_size_t, ctypes.c_int]
pyalloc.pyalloc_leak(1 << 20, 1)
weights = torch.empty(8 << 20)  # LINE weights
kept = []


def step():
    scratch = torch.empty(4 << 20)  # LINE scratch
    kept.append(torch.empty(1 << 20))  # LINE leak
    del scratch


for _ in range(int(sys.argv[2])):
    step()
    time.sleep(0.02)
if sys.argv[3:] == ["fork"]:
    if os.fork() == 0:
        os.close(1)
        time.sleep(0.5)
        sys.exit(0)
print("kept", len(kept))
