"""Runs out of GPU memory on purpose: tensors of 8 GiB are kept until
cudaMalloc fails.  gpuspy's post-mortem must name the line marked HOLD as
the site holding the most."""
import torch

held = []


def fill():
    while True:
        held.append(torch.empty(8 << 30, dtype=torch.uint8, device="cuda"))  # HOLD


try:
    fill()
except torch.OutOfMemoryError:
    print(f"torch_oom: out of memory after {len(held)} tensors of 8 GiB", flush=True)
