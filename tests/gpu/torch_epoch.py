"""An epoch leak: each "epoch" (about a second) trains a few steps, then
runs a validation pass whose output is kept in a list (the line marked
LEAK, 8 MiB an epoch) - the most common real leak: flat within an epoch,
one step higher at each.  At the default GPUSPY_INTERVAL (1 s) gpuspy must
flag the LEAK line as growing while the job runs, in every allocator mode
(with the caching allocator through the PyTorch view).

  torch_epoch.py [EPOCHS] [SECONDS_PER_EPOCH] [noleak]"""
import sys
import time

import torch

epochs = int(sys.argv[1]) if len(sys.argv) > 1 else 25
seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
leak = "noleak" not in sys.argv[3:]

model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(),
                            torch.nn.Linear(4096, 1024)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
kept = []


def validate():
    with torch.no_grad():
        out = model(torch.randn(2048, 1024, device="cuda"))
    if leak:
        kept.append(out)  # LEAK: 8 MiB kept per epoch
    return out.float().mean().item()


for epoch in range(epochs):
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds * 0.8:
        x = torch.randn(512, 1024, device="cuda")
        loss = model(x).square().mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        torch.cuda.synchronize()
        time.sleep(0.02)
    validate()
    time.sleep(max(0.0, seconds - (time.monotonic() - t0)))
    print(f"epoch {epoch} done, {torch.cuda.memory_allocated() >> 20} MiB allocated",
          flush=True)
print(f"torch_epoch: kept {len(kept)} outputs", flush=True)
