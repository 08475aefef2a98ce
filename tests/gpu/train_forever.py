"""A training loop that runs until it is stopped: scripts/gpu-check stops
it with SIGTERM mid-run, under `gpuspy run`, and `gpuspy report` must read
what it left (the last snapshot of the process).  It keeps one tensor per
step (the line marked LEAK) so there is something to find."""
import os
import time

import torch

model = torch.nn.Linear(1024, 1024).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
kept = []
print(f"train_forever: started {os.getpid()}", flush=True)
while True:
    y = model(torch.randn(1024, 1024, device="cuda"))  # LEAK
    kept.append(y.detach())
    y.square().mean().backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    time.sleep(0.05)
