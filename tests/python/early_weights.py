"""A module of the PyTorch-view-from-the-start test (torch_early.py) that
allocates its weights on import, through the pretend PyTorch of
fake_torch/: 3 tensors of 2 MiB, each a segment of the pretend pool."""
import torch

W0 = torch.empty(2 << 20)  # LINE import-weights
W1 = torch.empty(2 << 20)  # LINE import-weights
W2 = torch.empty(2 << 20)  # LINE import-weights
