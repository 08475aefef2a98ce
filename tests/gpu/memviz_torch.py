"""A small PyTorch program for tests/gpu/memviz_check.py, run under gpuspy
with GPUSPY_TRACE: tensors made and freed, a matrix product (cuBLAS and
its workspace), some kept; then PyTorch's own snapshot of its caching
allocator written to OWN (torch.cuda.memory._dump_snapshot, history
recorded from the start), and its figures as one JSON line.
Usage: memviz_torch.py OWN"""
import json
import pickle
import sys

import torch

own = sys.argv[1]
mem = torch.cuda.memory
try:
    mem._record_memory_history(max_entries=100000)  # torch 2.1 on
except TypeError:
    mem._record_memory_history(True)  # torch 2.0

keep = [torch.empty(n << 20, dtype=torch.uint8, device="cuda") for n in (1, 3, 5, 30)]
del keep[1]
a = torch.randn(2048, 2048, device="cuda")
b = a @ a
for i in range(20):
    t = torch.empty((i + 1) << 16, dtype=torch.uint8, device="cuda")
    del t
del a
torch.cuda.synchronize()
if hasattr(mem, "_dump_snapshot"):
    mem._dump_snapshot(own)
else:
    with open(own, "wb") as f:
        pickle.dump(mem._snapshot(), f)
print("memviz_torch " + json.dumps({"torch": torch.__version__,
                                    "memory_reserved": torch.cuda.memory_reserved(),
                                    "memory_allocated": torch.cuda.memory_allocated()}),
      flush=True)
