"""The program of the PyTorch-view-from-the-start test (torch_early.py):
imports the pretend PyTorch, then a module that allocates 6 MiB of weights
at its import (early_weights.py, CUDA's start), then 8 MiB more at once
(LINE weights) and 2 MiB in the first millisecond after (LINE first), then
a few steps of 2 MiB kept (LINE step), 10 ms apart.  With "cuda-first", one
allocation through the fake runtime (pyalloc, by ctypes) comes before
PyTorch is imported, which starts CUDA and gpuspy's snapshot thread first.
With "short", the steps do not wait: the program ends a few milliseconds
after CUDA starts, before the snapshot thread asks for the view's start.
Usage: torch_early_prog.py LIBPYALLOC [cuda-first] [short]"""
import ctypes
import sys
import time

if "cuda-first" in sys.argv[2:]:
    pyalloc = ctypes.CDLL(sys.argv[1])
    pyalloc.pyalloc_leak.argtypes = [ctypes.c_size_t, ctypes.c_int]
    pyalloc.pyalloc_leak(1 << 20, 1)
import torch  # noqa: E402

import early_weights  # noqa: E402,F401

w0 = torch.empty(2 << 20)  # LINE weights
w1 = torch.empty(2 << 20)  # LINE weights
w2 = torch.empty(2 << 20)  # LINE weights
w3 = torch.empty(2 << 20)  # LINE weights
first = torch.empty(2 << 20)  # LINE first
kept = []
for _ in range(5):
    kept.append(torch.empty(2 << 20))  # LINE step
    if "short" not in sys.argv[2:]:
        time.sleep(0.01)
print("done")
