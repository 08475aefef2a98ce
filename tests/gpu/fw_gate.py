"""The frameworks' gate on a GPU (scripts/gpu-check, case fw-gate): the
frameworks' counters wait until one of the frameworks' native libraries
is loaded (libgpuspy(7), FRAMEWORK COUNTERS).  With FRAMEWORK "none" the
program allocates through the driver by ctypes and idles in Python: its
report.json must say python_calls 0.  With torch, jax, cupy or paddle
(skipped where not installed: EVIDENCE/skipped) it imports the framework,
allocates, idles, and writes into EVIDENCE/loaded.txt the objects loaded
in the process that lie under the framework's package directories (what
the gate's names must match); its report.json must have python_calls
above 0 and the framework's counters (tests/gpu/fw_gate_check.py).
Usage: fw_gate.py FRAMEWORK EVIDENCE   (under libgpuspy.so)"""
import ctypes
import importlib.util
import os
import sys
import time

fw, evidence = sys.argv[1:3]
os.makedirs(evidence, exist_ok=True)
MIB = 1 << 20


def idle(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        time.sleep(0.01)


if fw != "none" and importlib.util.find_spec(fw) is None:
    open(os.path.join(evidence, "skipped"), "w").write(f"{fw} is not installed\n")
    sys.exit(0)
if fw == "none":
    cu = ctypes.CDLL("libcuda.so.1")
    dev, ctx, ptr = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_uint64()
    rc = [cu.cuInit(0), cu.cuDeviceGet(ctypes.byref(dev), 0),
          cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), cu.cuCtxSetCurrent(ctx),
          cu.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(64 * MIB))]
    if any(rc):
        sys.exit(f"the driver said {rc}")
elif fw == "torch":
    import torch
    keep = torch.empty(64 * MIB, dtype=torch.uint8, device="cuda")
elif fw == "jax":
    import jax.numpy as jnp
    keep = jnp.zeros(16 * MIB, dtype=jnp.float32).block_until_ready()
elif fw == "cupy":
    import cupy
    keep = cupy.zeros(64 * MIB, dtype=cupy.uint8)
elif fw == "paddle":
    import paddle
    keep = paddle.zeros([64 * MIB], dtype="uint8")
idle(2)
with open("/proc/self/maps") as f:
    paths = sorted({x.split()[-1] for x in f if x.rstrip().endswith(".so") or ".so." in x})
pkgs = ("torch/", "jaxlib/", "jax_plugins/", "cupy/", "cupy_backends/", "paddle/")
with open(os.path.join(evidence, "loaded.txt"), "w") as f:
    f.writelines(p + "\n" for p in paths if any(k in p for k in pkgs))
print("done", fw)
