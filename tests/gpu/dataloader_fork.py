"""Training with a DataLoader of four forked workers (the default start
method on Linux): gpuspy must not change what the program computes.  The
losses are printed to 6 digits; scripts/gpu-check compares them with and
without gpuspy.  The data is a function of the index, so both runs see the
same batches.

  dataloader_fork.py [STEPS]"""
import sys

import torch
from torch.utils.data import DataLoader, Dataset

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 40


class Synthetic(Dataset):
    def __len__(self):
        return 1 << 16

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        x = torch.randn(256, generator=g)
        return x, x[:16].sum().reshape(1)


torch.manual_seed(0)
torch.backends.cudnn.deterministic = True
torch.backends.cuda.matmul.allow_tf32 = False
model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(),
                            torch.nn.Linear(512, 1)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
loader = DataLoader(Synthetic(), batch_size=64, num_workers=4, shuffle=False)
for step, (x, y) in enumerate(loader):
    if step == steps:
        break
    loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.6f}", flush=True)
print(f"dataloader_fork: {step} steps, start method "
      f"{torch.multiprocessing.get_start_method()}", flush=True)
