"""An independent measure of the ledger's "CUDA context and libraries"
line (scripts/gpu-check, case fw-ledger): a process of its own, without
gpuspy, starts FRAMEWORK's CUDA as fw_ledger.py does and allocates one
small array, then prints NVML's figure for itself (nvidia-smi) less what
the framework reserved: the memory that is neither the framework's pool
nor anything an allocation holds.  fw_ledger_check.py compares it with
the context line of the ledger of the fw_ledger.py run.
Usage: fw_context.py FRAMEWORK OUT.json"""
import json
import os
import subprocess
import sys
import time

fw, out = sys.argv[1:3]
if fw == "torch":
    import torch
    x = torch.empty(1, dtype=torch.uint8, device="cuda")
    torch.cuda.synchronize()
    reserved = torch.cuda.memory_reserved(0)
elif fw == "jax":
    import jax.numpy as jnp
    import jax
    x = jnp.zeros((1,), dtype=jnp.uint8).block_until_ready()
    st = jax.devices()[0].memory_stats() or {}
    reserved = st.get("pool_bytes", st.get("bytes_reserved"))
elif fw == "cupy":
    import cupy as cp
    x = cp.ones(1, dtype=cp.uint8)
    cp.cuda.Device().synchronize()
    reserved = cp.get_default_memory_pool().total_bytes()
else:
    sys.exit("fw_context.py: torch, jax or cupy")
time.sleep(0.5)
smi = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory",
                      "--format=csv,noheader,nounits"], capture_output=True, text=True).stdout
used = next((int(l.split(",")[1]) << 20 for l in smi.splitlines()
             if l.split(",")[0].strip() == str(os.getpid())), None)
res = {"framework": fw, "nvidia_smi_bytes": used, "reserved_bytes": reserved,
       "context_bytes": None if used is None or reserved is None else used - reserved}
with open(out, "w") as f:
    json.dump(res, f)
print("CONTEXT " + json.dumps(res), flush=True)
