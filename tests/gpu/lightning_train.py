"""A small Lightning run on one GPU: an MLP on random data, a few dozen
steps, no logger and no checkpoint.  Under gpuspy, PyTorch's view must
name every tensor's line, the weights included (issue: every tensor has
a line, from the first).

  lightning_train.py [STEPS]"""
import sys

import torch
from torch.utils.data import DataLoader, TensorDataset

try:
    import lightning as L
except ImportError:  # the older package name
    import pytorch_lightning as L

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 40


class Net(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(),
                                       torch.nn.Linear(4096, 4096), torch.nn.ReLU(),
                                       torch.nn.Linear(4096, 10))

    def training_step(self, batch, _):
        x, y = batch
        return torch.nn.functional.cross_entropy(self.net(x), y)

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-3)

    def on_train_end(self):
        # Lightning moves the module back to the CPU after fit: the GPU
        # storage of its weights kept, so that what is live at exit says
        # where they were allocated
        self.kept = [p.detach() for p in self.parameters()]


data = TensorDataset(torch.randn(steps * 64, 1024), torch.randint(0, 10, (steps * 64,)))
trainer = L.Trainer(accelerator="gpu", devices=1, max_steps=steps, logger=False,
                    enable_checkpointing=False, enable_progress_bar=False,
                    enable_model_summary=False)
net = Net()
trainer.fit(net, DataLoader(data, batch_size=64))
kept = sum(t.numel() * t.element_size() for t in net.kept if t.is_cuda)
print(f"lightning_train: {steps} steps, {kept / 2**20:.1f} MiB of weights kept on the GPU",
      flush=True)
