"""Two ranks of DistributedDataParallel, for `gpuspy run -- torchrun
--nproc_per_node 2`: on two GPUs with NCCL when there are two, else both on
one GPU with gloo (NCCL refuses two ranks on one device).  Rank 1 leaks
4 MiB a step on purpose (LEAK line), rank 0 does not.
Usage: torchrun --standalone --nproc_per_node 2 ddp.py"""
import os

import torch
import torch.distributed as dist

rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
ngpu = torch.cuda.device_count()
dev = torch.device("cuda", int(os.environ["LOCAL_RANK"]) % ngpu)
torch.cuda.set_device(dev)
backend = "nccl" if ngpu >= world else "gloo"
dist.init_process_group(backend)
model = torch.nn.Linear(1024, 1024).to(dev)
ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=[dev.index])
opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
keep = []
for step in range(10):
    x = torch.randn(64, 1024, device=dev)
    loss = ddp(x).square().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if rank == 1:
        keep.append(torch.empty(1 << 20, device=dev))  # LEAK
torch.cuda.synchronize()
dist.barrier()
dist.destroy_process_group()
print(f"rank {rank} of {world} on {dev}, backend {backend}")
