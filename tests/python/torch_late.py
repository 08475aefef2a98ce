"""The pretend PyTorch initializes CUDA, then the program imports a slow
module (the PyTorch view waits), then allocates (LINE after): the view
must have started by then, well before the first interval (1 s) is over.
Usage: torch_late.py LIBPYALLOC"""
import ctypes
import sys
import time

import torch

pyalloc = ctypes.CDLL(sys.argv[1])
pyalloc.pyalloc_leak.argtypes = [ctypes.c_size_t, ctypes.c_int]
pyalloc.pyalloc_leak(1 << 20, 1)
weights = torch.empty(8 << 20)
import slow_import  # noqa: E402,F401
time.sleep(0.2)
after = torch.empty(2 << 20)  # LINE after
time.sleep(0.1)
print("done")
