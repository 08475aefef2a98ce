"""A program of torch_pool_leak.py: 12 MiB of pretend PyTorch tensors
(fake_torch/, its pool's segments taken from the fake CUDA runtime with
FAKE_TORCH_SEGMENTS=1) held until the end, and 1 MiB of the program's own
leaked through the fake runtime directly (pyalloc, by ctypes).
Usage: torch_pool_prog.py LIBPYALLOC"""
import ctypes
import sys

import torch

pyalloc = ctypes.CDLL(sys.argv[1])
pyalloc.pyalloc_leak.argtypes = [ctypes.c_size_t, ctypes.c_int]
kept = [torch.empty(3 << 20) for _ in range(4)]
if pyalloc.pyalloc_leak(1 << 20, 1) != 0:
    sys.exit("pyalloc_leak failed")
print("done")
