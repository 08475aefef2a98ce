"""Two series S, each held at once by a Python line through the pretend
PyTorch of fake_torch/ and by a C call site through the fake CUDA driver
(pyalloc, by ctypes), for tests/python/torch_same_verdict.py.  After IDLE
seconds of nothing new (samples of both sides go by), STEPS steps of
STEP_MS: "grow" keeps a block more each step (LINE py_grow, LINE c_grow),
"plateau" one more in each of the first 5 steps, then none (LINE
py_plateau, LINE c_plateau).
Usage: torch_growth.py LIBPYALLOC IDLE STEPS STEP_MS"""
import ctypes
import sys
import time

import torch

pyalloc = ctypes.CDLL(sys.argv[1])
pyalloc.pyalloc_leak.argtypes = [ctypes.c_size_t, ctypes.c_int]
idle, steps, step_s = float(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]) / 1000
BLOCK = 64 << 10
pyalloc.pyalloc_leak(BLOCK, 1)  # LINE start
weights = torch.empty(BLOCK)  # LINE weights
kept = []
end = time.monotonic() + idle
while time.monotonic() < end:
    time.sleep(0.005)


def grow():
    kept.append(torch.empty(BLOCK))  # LINE py_grow
    pyalloc.pyalloc_leak(BLOCK, 1)  # LINE c_grow


def plateau():
    kept.append(torch.empty(BLOCK))  # LINE py_plateau
    pyalloc.pyalloc_leak(BLOCK, 1)  # LINE c_plateau


for i in range(steps):
    grow()
    if i < 5:
        plateau()
    time.sleep(step_s)
print("kept", len(kept))
