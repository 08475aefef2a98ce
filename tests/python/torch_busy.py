"""A Python loop that runs SECONDS through the pretend PyTorch of
fake_torch/, a step every STEP_MS: for tests/python/torch_rate.py, which
counts the PyTorch view's samples.  One real allocation through the fake
CUDA driver (pyalloc, by ctypes) starts gpuspy's snapshot thread.
Usage: torch_busy.py LIBPYALLOC SECONDS STEP_MS"""
import ctypes
import sys
import time

import torch

pyalloc = ctypes.CDLL(sys.argv[1])
pyalloc.pyalloc_leak.argtypes = [ctypes.c_size_t, ctypes.c_int]
pyalloc.pyalloc_leak(1 << 20, 1)
weights = torch.empty(8 << 20)
end = time.monotonic() + float(sys.argv[2])
step_s = float(sys.argv[3]) / 1000
steps = 0
while time.monotonic() < end:
    scratch = torch.empty(1 << 20)
    del scratch
    steps += 1
    time.sleep(step_s)
print("steps", steps)
