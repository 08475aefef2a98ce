# SPDX-License-Identifier: MIT
#
# The frameworks' own counters: what PyTorch, PaddlePaddle, JAX and CuPy
# say they allocated and reserved, per device, beside what gpuspy saw of
# their pools from below.
#
# It runs as the PyTorch view does (torch_view.py, whose namespace it
# shares, and src/preload/3-out/torch_probe.c): in the program's main thread,
# between two of its bytecodes, from a pending call the snapshot thread
# queues each interval, and never while a module is being imported.  A
# framework is asked only once the program imported it (sys.modules) and
# only through its public calls; none is imported here, and nothing that
# would initialise a device or a backend the program has not is called.
# GPUSPY_FW_PUT is the address of fw_counters_put (src/preload/3-out/fw_counters.h);
# GPUSPY_INTERVAL and GPUSPY_QUIET are given.  A failure inside one
# framework's adapter turns that adapter off with one line on stderr; the
# program never sees an exception.
_gpuspy_fw = None


def _gpuspy_fw_setup(put_fn, interval, quiet):
    import atexit
    import ctypes
    import os
    import sys
    import time

    ll = ctypes.c_longlong
    put = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_uint, ctypes.POINTER(ll), ctypes.c_uint)(put_fn)
    # in the order of names.h: enum gs_fw, enum gs_fw_counter, GS_FW_HOST
    frameworks = ("torch", "paddle", "jax", "cupy")
    titles = ("PyTorch", "PaddlePaddle", "JAX", "CuPy")
    counters = {"allocated": 0, "reserved": 1, "peak_allocated": 2, "peak_reserved": 3,
                "limit": 4, "free_blocks": 5}
    host = 16
    adapters = (_gpuspy_fw_torch, _gpuspy_fw_paddle, _gpuspy_fw_jax, _gpuspy_fw_cupy)
    off = [False] * len(frameworks)
    # what each adapter reported once, by place: 0 when it says nothing
    # of it later, not gone (a pool emptied)
    seen = [{} for _ in frameworks]
    owner = os.getpid()
    timing = {"next": 0.0}

    def one(i, mod):
        got = adapters[i](mod, sys)
        if got is None:
            return
        for place, values in got.items():
            if type(place) is int and 0 <= place <= host:
                seen[i].setdefault(place, set()).update(
                    k for k, v in values.items() if v is not None)
        flat = []
        for place in sorted(seen[i]):
            values = got.get(place, {})
            for name in sorted(seen[i][place], key=counters.get):
                value = values.get(name)
                value = 0 if value is None else int(value)
                if value < 0:
                    raise ValueError("%s is %d" % (name, value))
                flat += (place, counters[name], value)
        if put(i, (ll * len(flat))(*flat), len(flat) // 3) != 0:
            raise ValueError("a figure out of range")

    def sample():
        for i, name in enumerate(frameworks):
            mod = sys.modules.get(name)
            if off[i] or mod is None:
                continue
            try:
                one(i, mod)
            except Exception as e:  # the program must never see it
                off[i] = True
                put(i, None, 0)
                if not quiet:
                    sys.stderr.write("gpuspy: %s counters off: %s: %s\n" %
                                     (titles[i], type(e).__name__, e))

    def tick(final=False):
        # a child forked with the program's state is not this process
        if os.getpid() != owner or (not final and _importing()):
            return
        now = time.monotonic()
        if not final and now < timing["next"]:
            return
        t0 = time.thread_time()
        sample()
        # the PyTorch view's bound: after a sample that took c seconds
        # the next waits 200 c, ten intervals at most, rounded to the
        # nearest whole interval (calls come once an interval, a little
        # early or late); and at least most of one, since calls come every
        # 50 ms while the PyTorch view waits to start
        wait = min(200 * (time.thread_time() - t0), 10 * interval)
        timing["next"] = now + max(wait - interval / 2, 0.9 * interval)

    atexit.register(tick, True)
    return tick


def _gpuspy_fw_per_device(cuda):
    # torch.cuda and paddle.device.cuda name their four counters alike
    out = {}
    for d in range(min(cuda.device_count(), 16)):
        reserved, peak = cuda.memory_reserved(d), cuda.max_memory_allocated(d)
        if reserved or peak:
            out[d] = {"allocated": cuda.memory_allocated(d), "reserved": reserved,
                      "peak_allocated": peak, "peak_reserved": cuda.max_memory_reserved(d)}
    return out


def _gpuspy_fw_torch(torch, sys):
    # torch.cuda's counters, once the program initialised CUDA through it
    cuda = getattr(torch, "cuda", None)
    if cuda is None or not hasattr(cuda, "is_initialized") or not cuda.is_initialized():
        return None
    return _gpuspy_fw_per_device(cuda)


def _gpuspy_fw_paddle(paddle, sys):
    # paddle.device.cuda's counters: host-side statistics of its allocator
    device = getattr(paddle, "device", None)
    cuda = getattr(device, "cuda", None)
    if cuda is None or not paddle.is_compiled_with_cuda():
        return None
    return _gpuspy_fw_per_device(cuda)


def _gpuspy_fw_jax(jax, sys):
    # Device.memory_stats() of the GPU backends the program initialised:
    # jax.local_devices() would initialise the others, so the backends
    # are taken from where JAX keeps those it made
    bridge = sys.modules.get("jax._src.xla_bridge")
    backends = getattr(bridge, "_backends", None)
    if not isinstance(backends, dict) or not backends:
        return None
    out = {}
    for backend in list(backends.values()):
        for dev in backend.local_devices():
            if getattr(dev, "platform", None) != "gpu":
                continue
            stats = dev.memory_stats() or {}
            d = getattr(dev, "local_hardware_id", None)
            d = dev.id if d is None else d
            if type(d) is not int or not 0 <= d < 16 or "bytes_in_use" not in stats:
                continue
            # XLA's BFC allocator says what it holds from CUDA as
            # pool_bytes; bytes_reserved where it does not
            out[d] = {"allocated": stats["bytes_in_use"],
                      "peak_allocated": stats.get("peak_bytes_in_use"),
                      "reserved": stats.get("pool_bytes", stats.get("bytes_reserved")),
                      "peak_reserved": stats.get("peak_pool_bytes",
                                                 stats.get("peak_bytes_reserved")),
                      "limit": stats.get("bytes_limit")}
    return out


def _gpuspy_fw_cupy(cupy, sys):
    # The default pools.  CuPy counts its device pool per device, for the
    # current one: asking of another would switch to it (and create a
    # context there), so only the main thread's current device is read.
    cuda = getattr(cupy, "cuda", None)
    if cuda is None or not hasattr(cupy, "get_default_memory_pool"):
        return None
    out = {}
    pool = cupy.get_default_memory_pool()
    total = pool.total_bytes()
    if total:
        out[cuda.runtime.getDevice()] = {"allocated": pool.used_bytes(), "reserved": total,
                                         "free_blocks": pool.n_free_blocks()}
    pinned = cupy.get_default_pinned_memory_pool()
    mine = {"free_blocks": pinned.n_free_blocks()}
    if hasattr(pinned, "total_bytes"):
        mine["reserved"] = pinned.total_bytes()
    if hasattr(pinned, "used_bytes"):
        mine["allocated"] = pinned.used_bytes()
    if any(mine.values()):
        out[16] = mine
    return out


def fw_tick():
    global _gpuspy_fw
    if _gpuspy_fw is None:
        if _importing():
            return
        _gpuspy_fw = _gpuspy_fw_setup(GPUSPY_FW_PUT, GPUSPY_INTERVAL, GPUSPY_QUIET)
    _gpuspy_fw()
