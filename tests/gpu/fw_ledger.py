"""The ledger's framework figures against the framework's own, on a GPU
(scripts/gpu-check, case fw-ledger).  Allocates with FRAMEWORK (torch:
the default caching allocator; jax; cupy), frees part of it so that its
pool holds slack, then idles in Python (pending calls run between
bytecodes) for several intervals so that gpuspy reads the framework's
counters and rewrites snapshot.json; then prints what the framework says
at that moment, with NVML's figure for this process (nvidia-smi), into
EVIDENCE/figures.json, and copies its snapshot.json and history.jsonl
into EVIDENCE/ for `gpuspy report` (tests/gpu/fw_ledger_check.py).
Usage: fw_ledger.py FRAMEWORK EVIDENCE   (under libgpuspy.so, GPUSPY_INTERVAL=100ms)"""
import glob
import json
import os
import shutil
import subprocess
import sys
import time

fw, evidence = sys.argv[1:3]
os.makedirs(evidence, exist_ok=True)
MIB = 1 << 20


def idle(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        time.sleep(0.01)


if fw == "torch":
    import torch
    keep = [torch.empty(100 * MIB, dtype=torch.uint8, device="cuda") for _ in range(10)]
    del keep[::2]   # 500 MiB freed into the pool: slack
    torch.cuda.synchronize()

    def figures():
        return {"name": "pytorch", "device": 0, "allocated": torch.cuda.memory_allocated(0),
                "reserved": torch.cuda.memory_reserved(0)}
elif fw == "jax":
    import jax
    import jax.numpy as jnp
    keep = [jnp.zeros((64 * MIB,), dtype=jnp.uint8).block_until_ready() for _ in range(6)]
    del keep[::2]
    dev = jax.devices()[0]

    def figures():
        st = dev.memory_stats() or {}
        return {"name": "jax", "device": dev.local_hardware_id, "allocated": st.get("bytes_in_use"),
                "reserved": st.get("pool_bytes", st.get("bytes_reserved")), "stats": st}
elif fw == "cupy":
    import cupy as cp
    keep = [cp.ones(64 * MIB, dtype=cp.uint8) for _ in range(6)]
    del keep[::2]
    cp.cuda.Device().synchronize()
    pool = cp.get_default_memory_pool()

    def figures():
        return {"name": "cupy", "device": cp.cuda.runtime.getDevice(),
                "allocated": pool.used_bytes(), "reserved": pool.total_bytes()}
else:
    sys.exit("fw_ledger.py: torch, jax or cupy")

interval = 0.1
idle(15 * interval)
f = figures()
nvml = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory",
                       "--format=csv,noheader,nounits"], capture_output=True, text=True).stdout
f["nvidia_smi_bytes"] = next((int(x.split(",")[1]) * MIB for x in nvml.splitlines()
                              if x.split(",")[0].strip() == str(os.getpid())), None)
f["pid"] = os.getpid()
f["time"] = time.time()
idle(3 * interval)   # the snapshot after the figures were printed
out = os.environ.get("GPUSPY_OUTPUT_DIR", "")
for name in ("snapshot.json", "history.jsonl"):
    for p in glob.glob(os.path.join(out, "*-%d" % os.getpid(), name)):
        shutil.copy(p, os.path.join(evidence, name))
with open(os.path.join(evidence, "figures.json"), "w") as fh:
    json.dump(f, fh, indent=1)
print("FIGURES " + json.dumps(f), flush=True)
