"""A PyTorch training loop that leaks on purpose: every step keeps a copy
of the activations in a list (the line marked LEAK).  gpuspy must name
that file and line as the top leaked or growing site, in every allocator
mode: with the caching allocator, through the PyTorch view (torch.json)."""
import sys
import time

import torch

model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(),
                            torch.nn.Linear(4096, 1024)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
history = []


def train_step(x):
    y = model(x)
    history.append(y.detach().clone())  # LEAK
    loss = y.square().mean()
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()


for step in range(300):
    train_step(torch.randn(2048, 1024, device="cuda"))  # 8 MiB kept per step
    time.sleep(0.01)  # a data loader's pause: growth needs samples over time
torch.cuda.synchronize()
print(f"torch_leak: kept {len(history)} tensors, "
      f"{sum(t.numel() * t.element_size() for t in history) >> 20} MiB", flush=True)
