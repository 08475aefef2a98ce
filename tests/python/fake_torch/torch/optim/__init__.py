"""A stand-in for torch.optim: an optimizer whose state is tensors of the
pretend pool, each allocated here, in torch/optim/, which is how gpuspy's
PyTorch view tells optimizer state by its stack."""
import torch


class Adam:
    """Each step() keeps NBYTES of state."""

    def __init__(self, nbytes):
        self.nbytes = nbytes
        self.state = []

    def step(self):
        self.state.append(torch.empty(self.nbytes))  # LINE state
