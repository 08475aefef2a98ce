"""A program of the frameworks' counters test (fw_counters.py): imports the
pretend frameworks named on its command line (fake_fw/, fake_torch/),
allocates once through the fake CUDA runtime (pyalloc, by ctypes), which
starts gpuspy's snapshot thread, lets the counters be read for a while,
changes PaddlePaddle's and CuPy's figures halfway, and prints what it
did.  "jax" calls jax.devices() (which initialises JAX's backends);
"jax-lazy" imports JAX and never does.  "torch" allocates a tensor.
"jax-leak" leaks 4 MiB of JAX buffers a step for 59 steps of 50 ms (its
allocated counter, bytes_in_use, climbs from 8 to 240 MiB) while XLA's
pool doubles its regions through the fake driver under
tsl::BFCAllocator::Extend (16, 48, 112, 240 MiB reserved), then holds
still for SECONDS.
With "late" first, the frameworks are imported only after the allocation
and a third of SECONDS; with "hold" first, it prints "ready" after the
allocation and waits for a line on its standard input instead of
SECONDS, changing nothing.
Usage: fw_prog.py LIBPYALLOC SECONDS [late|hold] FRAMEWORK..."""
import ctypes
import select
import sys
import time

pyalloc = ctypes.CDLL(sys.argv[1])
pyalloc.pyalloc_leak.argtypes = [ctypes.c_size_t, ctypes.c_int]
seconds = float(sys.argv[2])
names = sys.argv[3:]
late, hold = names[:1] == ["late"], names[:1] == ["hold"]
if late or hold:
    names = names[1:]
if late:
    pyalloc.pyalloc_leak(1 << 20, 1)
    time.sleep(seconds / 3)
mods = {}
for name in names:
    mods[name] = __import__(name.split("-")[0])
if "jax" in names or "jax-leak" in names:
    sys.modules["jax"].devices()
if "torch" in names:
    kept = mods["torch"].empty(3 << 20)
if not late:
    pyalloc.pyalloc_leak(1 << 20, 1)
if hold:
    print("ready", flush=True)
    # between waits, so that gpuspy's pending calls run (never inside one)
    while not select.select([sys.stdin], [], [], 0.005)[0]:
        pass
    seconds = 0
if "jax-leak" in names:
    import os
    xla = ctypes.CDLL(os.path.join(os.environ["FAKE_FW_NATIVE"], "jaxlib", "xla_extension.so"))
    extend = getattr(xla, "_ZN3tsl12BFCAllocator6ExtendEmm")
    extend.argtypes = [ctypes.c_size_t, ctypes.c_size_t]
    st = sys.modules["jax._src.xla_bridge"].STATS[0]
    region = 16 << 20
    st["pool_bytes"] = 0
    for step in range(59):
        st["bytes_in_use"] = (8 << 20) + (4 << 20) * step
        # the BFC pool grows by a region twice the last when it is full
        while st["bytes_in_use"] > st["pool_bytes"]:
            if extend(256, region) != 0:
                sys.exit("the pool could not grow")
            st["pool_bytes"] += region
            region *= 2
        st["peak_bytes_in_use"] = st["bytes_in_use"]
        time.sleep(0.05)
end = time.monotonic() + seconds
half = False
while time.monotonic() < end:
    if not half and time.monotonic() > end - seconds / 2:
        half = True
        if "paddle" in mods:
            mods["paddle"].device.cuda.FIGURES[0][0] = 7 << 20
        if "cupy" in mods:
            mods["cupy"].POOL["used"] = 9 << 20
    time.sleep(0.005)
if "jax-lazy" in names:
    print("jax backends", len(sys.modules["jax._src.xla_bridge"]._backends))
print("done", " ".join(names))
