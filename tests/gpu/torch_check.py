"""PyTorch under gpuspy: allocate, compute, keep some tensors; print the
framework's own view as one JSON line for scripts/gpu-results.py."""
import json, os, sys
import torch

dev = "cuda"
keep = []
a = torch.randn(4096, 4096, device=dev)          # 64 MiB
b = torch.randn(4096, 4096, device=dev)
for i in range(8):
    c = a @ b                                      # cuBLAS workspace, temporaries
    keep.append(torch.empty((i + 1) * 1024 * 1024, dtype=torch.uint8, device=dev))
    del c
small = [torch.ones(1000 + i, device=dev) for i in range(100)]
del small
torch.cuda.synchronize()
view = {
    "mode": sys.argv[1] if len(sys.argv) > 1 else "default",
    "max_memory_reserved": torch.cuda.max_memory_reserved(),
    "memory_reserved": torch.cuda.memory_reserved(),
    "max_memory_allocated": torch.cuda.max_memory_allocated(),
    "memory_allocated": torch.cuda.memory_allocated(),
}
print("FRAMEWORK " + json.dumps(view), flush=True)
