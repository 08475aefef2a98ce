"""The reference workload (shared/bench/train_step.py: a 6-layer transformer
encoder, AdamW) at one fixed batch size, for `gpuspy diff` between batch
sizes.  The model, the optimizer step, the forward pass and the loss are
each on a line of their own, so that a diff can say which of them grew.
Marks "after step 2" and "end" when run under gpuspy.
Usage: train_bs.py BATCH [STEPS]"""
import ctypes
import sys

import torch

bs = int(sys.argv[1])
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 12
mark = getattr(ctypes.CDLL(None), "gpuspy_mark", None)  # only under gpuspy
torch.manual_seed(0)
dev = "cuda"


def build():
    layer = torch.nn.TransformerEncoderLayer(d_model=512, nhead=8, dim_feedforward=2048, batch_first=True)
    model = torch.nn.Sequential(torch.nn.Embedding(8000, 512), torch.nn.TransformerEncoder(layer, num_layers=6),
                                torch.nn.Linear(512, 8000))
    return model.to(dev)  # PARAMETERS


model = build()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)


def step(x):
    out = model(x)  # FORWARD
    loss = torch.nn.functional.cross_entropy(out.view(-1, 8000), x.view(-1))  # LOSS
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()  # OPTIMIZER


for i in range(steps):
    x = torch.randint(0, 8000, (bs, 256), device=dev)  # INPUT
    step(x)
    if i == 1 and mark:
        torch.cuda.synchronize()
        mark(b"after step 2")
torch.cuda.synchronize()
if mark:
    mark(b"end")
print(f"bs={bs} steps={steps} peak_MB={torch.cuda.max_memory_allocated() / 2**20:.0f}")
