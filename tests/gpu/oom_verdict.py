"""The reference workload (shared/bench/train_step.py's model: a 6-layer
transformer encoder, d_model 512, AdamW) at one batch size, for the
out-of-memory verdict and GPUSPY_LIMIT (scripts/gpu-check, case
oom-verdict; checked by tests/gpu/oom_verdict_check.py).

Five warm-up steps at batch 8 first, until gpuspy's PyTorch view has
started (a new block's stack is recorded: the view then has PyTorch's
out-of-memory observer attached), then STEPS steps at BATCH, sequences of
256 tokens.  A torch.OutOfMemoryError is caught as a training script
would catch it: PyTorch's own message, memory_stats() and memory_summary()
of that moment are kept, and the program stops training and exits 0.
Writes PREFIX.summary.txt (memory_summary() at the error, or at the end)
and prints one line, "RESULT " and a JSON object:
  batch, steps (done at BATCH), median_ms (of those after the second),
  mem_get_info [free, total] and total_memory (the device's properties)
  as the program sees them, view_started, and oom: null or {message,
  tried, capacity, free, allocated, unallocated (the message's figures in
  bytes), stats (memory_stats() then, the figures named below)}.
Usage: oom_verdict.py BATCH STEPS PREFIX"""
import json
import re
import statistics
import sys
import time

import torch

batch, steps, prefix = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
torch.manual_seed(0)
dev = "cuda"
layer = torch.nn.TransformerEncoderLayer(d_model=512, nhead=8, dim_feedforward=2048, batch_first=True)
model = torch.nn.Sequential(torch.nn.Embedding(8000, 512), torch.nn.TransformerEncoder(layer, num_layers=6),
                            torch.nn.Linear(512, 8000)).to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}
STATS = ("allocated_bytes.all.current", "reserved_bytes.all.current",
         "inactive_split_bytes.all.current", "num_ooms", "num_alloc_retries")


def step(bs):
    x = torch.randint(0, 8000, (bs, 256), device=dev)
    out = model(x)
    loss = torch.nn.functional.cross_entropy(out.view(-1, 8000), x.view(-1))
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()


def view_started():
    # the view records each new block's Python stack once it has started
    probe = torch.empty(1 << 20, dtype=torch.uint8, device=dev)
    try:
        for seg in torch.cuda.memory._snapshot().get("segments", ()):
            for b in seg.get("blocks", ()):
                if b.get("state") == "active_allocated" and b.get("frames"):
                    return True
        return False
    finally:
        del probe


def size_of(text):
    m = re.fullmatch(r"([\d.]+) (\w+)", text.strip())
    return int(float(m.group(1)) * UNITS[m.group(2)]) if m and m.group(2) in UNITS else None


def parse(message):
    # PyTorch's own words (c10/cuda/CUDACachingAllocator.cpp), sizes as
    # its format_size writes them (two decimals)
    def find(pattern):
        m = re.search(pattern, message)
        return size_of(m.group(1)) if m else None

    return {"tried": find(r"Tried to allocate ([\d.]+ \w+)"),
            "capacity": find(r"total capacity of ([\d.]+ \w+)"),
            "free": find(r"of which ([\d.]+ \w+) is free"),
            "allocated": find(r"([\d.]+ \w+) is allocated by PyTorch"),
            "unallocated": find(r"([\d.]+ \w+) is reserved by PyTorch but unallocated")}


for _ in range(5):
    step(8)
started, deadline = False, time.monotonic() + 20
while not started and time.monotonic() < deadline:
    started = view_started()
    if not started:
        time.sleep(0.02)
torch.cuda.synchronize()
times, oom = [], None
for i in range(steps):
    t = time.perf_counter()
    try:
        step(batch)
        torch.cuda.synchronize()
    except torch.OutOfMemoryError as e:
        stats = torch.cuda.memory_stats()
        oom = dict(parse(str(e)), message=str(e).splitlines()[0][:2000],
                   stats={k: stats.get(k) for k in STATS})
        with open(prefix + ".summary.txt", "w") as f:
            f.write(torch.cuda.memory_summary())
        break
    times.append(time.perf_counter() - t)
if oom is None:
    with open(prefix + ".summary.txt", "w") as f:
        f.write(torch.cuda.memory_summary())
free, total = torch.cuda.mem_get_info()
print("RESULT " + json.dumps({
    "batch": batch, "steps": len(times),
    "median_ms": 1000 * statistics.median(times[2:] or times) if times else None,
    "mem_get_info": [free, total],
    "total_memory": torch.cuda.get_device_properties(0).total_memory,
    "view_started": started, "oom": oom}), flush=True)
