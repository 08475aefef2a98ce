"""Out of memory in the pretend PyTorch's real pool (fake_torch/,
FAKE_TORCH_POOL=1), for tests/integration/oom_verdict.py.  The program
waits for gpuspy's PyTorch view to start (its out-of-memory observer is
then attached), then:
  fragment  28 tensors of 1 MiB (LINE keep) fill 14 segments of 2 MiB;
            every second one is freed, so that each segment holds 1 MiB
            free that no 3 MiB tensor fits in; then a 3 MiB tensor (LINE ask)
  outside   a cuBLAS workspace of 20 MiB (LIBCUBLAS), 20 tensors of 2 MiB
            (LINE keep); then an 8 MiB tensor (LINE ask)
  state     20 steps of an optimizer (fake_torch/torch/optim) keeping 2 MiB of
            state each; then a 32 MiB tensor (LINE ask)
It catches torch.cuda.OutOfMemoryError as a training script would, frees
what it kept, asks again, and prints what happened.
Usage: oom_pool.py fragment|outside|state [LIBCUBLAS]"""
import ctypes
import sys
import time

import torch

MiB = 1 << 20
mode = sys.argv[1]
first = torch.empty(2 * MiB)    # the first segment: gpuspy starts, then its view
deadline = time.monotonic() + 30
while not torch._C.observers and time.monotonic() < deadline:
    time.sleep(0.005)
if not torch._C.observers:
    sys.exit("oom_pool: gpuspy's PyTorch view never attached its observer")
del first
kept = []


def build(n, size):
    for _ in range(n):
        kept.append(torch.empty(size))  # LINE keep


def ask(size):
    return torch.empty(size)  # LINE ask


if mode == "fragment":
    build(28, MiB)
    del kept[1::2]
    size = 3 * MiB
elif mode == "state":
    import torch.optim

    opt = torch.optim.Adam(2 * MiB)
    for _ in range(20):
        opt.step()
    size = 32 * MiB
else:
    cublas = ctypes.CDLL(sys.argv[2])
    cublas.cublas_fake_workspace.argtypes = [ctypes.c_size_t]
    if cublas.cublas_fake_workspace(20 * MiB) != 0:
        sys.exit("oom_pool: the workspace failed")
    build(20, 2 * MiB)
    size = 8 * MiB
try:
    t = ask(size)
    print("oom_pool: no error")
except torch.cuda.OutOfMemoryError as e:
    print("oom_pool: caught OutOfMemoryError:", e)
    kept.clear()
    if mode == "state":
        opt.state.clear()
    t = ask(size)
    print("oom_pool: asked again after freeing: ok")
