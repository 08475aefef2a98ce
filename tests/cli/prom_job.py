"""For tests/cli/test_prometheus.py: a job on the fake driver that leaks
MIB MiB from leak_buffers() (LINE leak; through pyalloc, by ctypes), holds
tensors in the pool of the pretend PyTorch (tests/python/fake_torch),
prints "ready" and runs until it is killed.
Usage: prom_job.py LIBPYALLOC MIB"""
import ctypes
import sys
import time

import torch

pyalloc = ctypes.CDLL(sys.argv[1])
pyalloc.pyalloc_leak.argtypes = [ctypes.c_size_t, ctypes.c_int]


def leak_buffers(n):
    pyalloc.pyalloc_leak(1 << 20, n)  # LINE leak


leak_buffers(int(sys.argv[2]))
weights = torch.empty(8 << 20)
kept = [torch.empty(1 << 20) for _ in range(3)]
print("ready", flush=True)
# the PyTorch view samples on this thread, between its bytecodes
while True:
    time.sleep(0.05)
