# SPDX-License-Identifier: MIT
#
# gpuspy's view into PyTorch's caching allocator.
#
# The allocator asks CUDA for segments and cuts tensors out of them, so the
# driver calls gpuspy sees are pool growth, made by whichever request found
# the pool full (often on the autograd thread, which runs no Python).  To
# name the line that holds the memory, this asks PyTorch itself: its memory
# history in "state" mode keeps, for each live block, the Python stack that
# allocated it (PyTorch measures it at no visible cost on a training step),
# and torch.cuda.memory._snapshot() lists the live blocks.
#
# It runs in the program's main thread, between two of its bytecodes: each
# interval libgpuspy's snapshot thread asks CPython for a pending call
# (src/preload/torch_probe.c), which runs `status, tick = start(...)` until the
# view has started, then `tick()`.  The main thread, not a thread of
# gpuspy's, so that nothing here ever imports a module concurrently with
# the program; and never while any module is being imported.  The names
# GPUSPY_DIR (the process directory), GPUSPY_INTERVAL (seconds) and
# GPUSPY_QUIET are given, and the file's names from src/common/names.h:
# GPUSPY_TORCH_PATH (GPUSPY_DIR/torch.json), GPUSPY_TORCH_TMP (where it is
# written before its rename) and GPUSPY_TORCH_FORMAT ("gpuspy-torch/1",
# docs/format.md).  Samples of the live blocks, aggregated by stack,
# rewrite that file, each stack judged growing or not by the library's own
# rule (src/common/trend.h), which the snapshot thread applies to call
# sites: GPUSPY_TREND_INIT, GPUSPY_TREND_PUSH, GPUSPY_TREND_EVER,
# GPUSPY_TREND_QUERY and GPUSPY_TREND_SHAPE_NAME are the addresses of its
# functions, GPUSPY_TREND_SIZE the size of the state they keep (struct
# gs_trend), GPUSPY_START the process's start (time.time()), from which
# samples are timed as the library times its own.  GPUSPY_HISTORY_TORCH and
# GPUSPY_HISTORY_TORCH_LINE (src/preload/history.h), where given, put each
# sample's pool totals and its largest lines into the process's history.
# The first time a stack is
# found growing, one line on stderr names it, in the library's form.  An
# atexit handler takes the last sample, before the interpreter frees the
# program's globals.  Any error turns the view off with one line; the
# program never sees an exception.
status, tick = "wait", None


def _gpuspy_torch_start(files, trend, interval, quiet, history=(None, None), summary=None):
    import sys

    if _importing():
        return "wait", None
    torch = sys.modules.get("torch")
    cuda = getattr(torch, "cuda", None)
    if cuda is None or not hasattr(cuda, "is_initialized") or not cuda.is_initialized():
        return "wait", None
    import atexit
    import json
    import os
    import time

    memory = getattr(cuda, "memory", None)
    if memory is None or not hasattr(memory, "_snapshot") or \
            not hasattr(memory, "_record_memory_history"):
        return "off: this PyTorch has no memory history", None
    backend = "native"
    if hasattr(cuda, "get_allocator_backend"):
        backend = cuda.get_allocator_backend()
    if backend != "native":
        return "off: allocator backend %s: gpuspy sees each of its allocations" % backend, None
    if os.environ.get("PYTORCH_NO_CUDA_MEMORY_CACHING", "0") not in ("", "0"):
        return "off: caching is off: gpuspy sees each tensor's allocation", None
    # A program that records its own history (enabled="all") keeps it:
    # its blocks carry their stacks already.
    if not any(memory._snapshot().get("device_traces") or ()):
        memory._record_memory_history(enabled="state", context="alloc", stacks="python")

    new_series, push, verdict = _gpuspy_trend(*trend)
    record = _gpuspy_history(*history) if all(history) else None
    tell = _gpuspy_summary(summary) if summary else None
    sites = {}      # stack -> {"series": its rule's state, "peak", "grew"}
    state = {"samples": 0, "off": False, "busy": False}
    path, tmp, fmt = files

    def sample(final):
        snap = memory._snapshot()
        live, devices = {}, {}
        for seg in snap.get("segments", ()):
            d = devices.setdefault(seg.get("device", -1), [0, 0])
            d[0] += seg.get("total_size", 0)
            d[1] += seg.get("allocated_size", 0)
            for b in seg.get("blocks", ()):
                if b.get("state") != "active_allocated":
                    continue
                key = tuple((f.get("filename", "?"), f.get("name", "?"), f.get("line", 0))
                            for f in b.get("frames", ()))
                e = live.get(key)
                if e is None:
                    live[key] = e = [0, 0]
                e[0] += b.get("size", 0)
                e[1] += 1
        state["samples"] += 1
        for key in live:
            if key not in sites:
                sites[key] = {"series": new_series(), "peak": 0, "grew": False}
        out = []
        for key, s in sites.items():
            b, n = live.get(key, (0, 0))
            s["peak"] = max(s["peak"], b)
            # once found growing, a stack stays so, as a call site does:
            # the frees of a program's teardown must not clear its leak
            if push(s["series"], b) and not s["grew"]:
                s["grew"] = True
                if not quiet:
                    _notice(key, b, *verdict(s["series"]))
            if b == 0 and not s["peak"]:
                continue
            out.append({"frames": [{"file": f, "function": fn, "line": ln}
                                   for f, fn, ln in key],
                        "live_bytes": b, "live_blocks": n, "peak_bytes": s["peak"],
                        "growing": s["grew"]})
        out.sort(key=lambda x: -x["live_bytes"])
        if tell:
            tell(out)
        if record:
            record(devices, sites, live)
        doc = {"format": fmt, "pid": os.getpid(), "time": time.time(),
               "final": final, "samples": state["samples"],
               "devices": [{"device": d, "reserved_bytes": v[0], "allocated_bytes": v[1]}
                           for d, v in sorted(devices.items())],
               "sites": out}
        # never through a planted link, 0600 whatever the umask; a
        # temporary file left by this user is replaced (os.unlink)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            fd = os.open(tmp, flags, 0o600)
        except FileExistsError:
            st = os.lstat(tmp)
            if not (os.path.stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid()):
                raise
            os.unlink(tmp)
            fd = os.open(tmp, flags, 0o600)
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump(doc, f)
        os.replace(tmp, path)

    owner = os.getpid()

    def guarded(final):
        # a child forked with the program's state (a data-loader worker)
        # is not the process this view writes for
        # is not the process this view writes for.  Never one sample inside
        # another: the last, at exit, runs from atexit, outside CPython's
        # pending calls, which then run between its bytecodes (the
        # interpreter is not finalizing yet, so the snapshot thread still
        # queues them); a tick there would replace the temporary file the
        # last sample is writing, and its rename would fail.
        if state["off"] or state["busy"] or os.getpid() != owner:
            return 0.0
        state["busy"] = True
        t0 = time.thread_time()
        try:
            sample(final)
        except Exception as e:  # the program must never see it
            state["off"] = True
            if not quiet:
                sys.stderr.write("gpuspy: PyTorch view off: %s: %s\n" % (type(e).__name__, e))
        finally:
            state["busy"] = False
        return time.thread_time() - t0

    timing = {"next": 0.0}

    def tick():
        # never between the lines of a module being imported: what a
        # sample imports could meet it half made
        if state["off"] or _importing():
            return
        now = time.monotonic()
        # calls come once an interval, a little early or late each time:
        # the wait is rounded to the nearest whole interval
        if now < timing["next"] - interval / 2:
            return
        # about 0.5% of the time goes to sampling, however large the pool
        # grows (0.75% at most, from the rounding): after a sample that
        # took c seconds the next waits 200 c, ten intervals at most; a
        # cheap one waits only for the next interval's call, which the
        # snapshot thread queues
        timing["next"] = now + min(200 * guarded(False), 10 * interval)

    atexit.register(guarded, True)
    timing["next"] = time.monotonic() + min(200 * guarded(False), 10 * interval)
    return "ok", tick


def _gpuspy_trend(init, push, ever, query, shape_name, size, start):
    # The growth rule of libgpuspy(7), the library's: new() is the state
    # of one stack's series, from its first sample; push(state, live) adds
    # a sample, timed as the library times its own, and says whether the
    # series was ever found growing; verdict(state) is (since, rate in
    # bytes per second, shape).  Called from start(), in the main thread
    # and outside any import.  PYFUNCTYPE: the calls are short and keep
    # the GIL.
    import ctypes
    import time

    state, dbl = ctypes.c_void_p, ctypes.POINTER(ctypes.c_double)
    t_init = ctypes.PYFUNCTYPE(None, state)(init)
    t_push = ctypes.PYFUNCTYPE(None, state, ctypes.c_double, ctypes.c_longlong)(push)
    t_ever = ctypes.PYFUNCTYPE(ctypes.c_bool, state)(ever)
    t_query = ctypes.PYFUNCTYPE(ctypes.c_int, state, dbl, dbl,
                                ctypes.POINTER(ctypes.c_int))(query)
    t_name = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.c_int)(shape_name)

    def new():
        g = ctypes.create_string_buffer(size)
        t_init(g)
        return g

    def add(g, live):
        t_push(g, time.time() - start, live)
        return t_ever(g)

    def verdict(g):
        since, rate, shape = ctypes.c_double(), ctypes.c_double(), ctypes.c_int()
        t_query(g, ctypes.byref(since), ctypes.byref(rate), ctypes.byref(shape))
        return since.value, rate.value, t_name(shape.value).decode()

    return new, add, verdict


def _gpuspy_history(torch_fn, line_fn, top=16, key_max=2000):
    # record(devices, sites, live): the sample into the library's history
    # (history_torch, history_torch_line of src/preload/history.h).  A
    # stack gets one of TOP series the first sample it ranks among the
    # largest by peak, and keeps it; the others are summed.  Its key is
    # its frames as torch.json writes them, innermost first, the outer
    # ones dropped to keep it under KEY_MAX bytes.
    import ctypes
    import json

    ll = ctypes.c_longlong
    t_torch = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.POINTER(ll), ctypes.c_uint,
                                ctypes.POINTER(ll), ctypes.c_uint, ll)(torch_fn)
    t_line = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_uint, ctypes.c_char_p)(line_fn)
    chosen = {}     # stack -> its series id
    refused = set()
    pools = set()   # devices seen: a pool emptied is 0, not gone

    def frames_json(key):
        frames = [{"file": f[:500], "function": fn[:200], "line": ln if type(ln) is int and
                   ln >= 0 else 0} for f, fn, ln in key]
        while True:
            text = json.dumps(frames, ensure_ascii=True, separators=(",", ":"))
            if len(text) < key_max or len(frames) <= 1:
                return text
            frames.pop()

    def record(devices, sites, live):
        if len(chosen) < top:
            for key in sorted(sites, key=lambda k: -sites[k]["peak"]):
                if len(chosen) >= top:
                    break
                if key in chosen or key in refused or not sites[key]["peak"]:
                    continue
                if t_line(len(chosen), frames_json(key).encode("ascii")) == 0:
                    chosen[key] = len(chosen)
                else:
                    refused.add(key)
        pools.update(d for d in devices if type(d) is int and 0 <= d < 16)
        pool = [x for d in sorted(pools) for x in (d, *devices.get(d, (0, 0)))]
        lines = [x for key, i in chosen.items() for x in (i, live.get(key, (0, 0))[0])]
        other = sum(v[0] for key, v in live.items() if key not in chosen)
        t_torch((ll * len(pool))(*pool), len(pool) // 3, (ll * len(lines))(*lines),
                len(lines) // 2, other)

    return record


def _gpuspy_summary(fn, top=3):
    # tell(sites): the largest live holders of this sample, by the user's
    # line, to the library (summary_torch_top of src/preload/summary.h),
    # which names them first in its summary at exit
    import ctypes

    t_top = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_uint, ctypes.c_char_p, ctypes.c_longlong,
                              ctypes.c_longlong)(fn)

    def tell(sites):
        live = [s for s in sites if s["live_bytes"] > 0][:top]
        if not live:
            t_top(0, b"", 0, 0)
            return
        for i, s in enumerate(live):
            f = _user_frame([(x["file"], x["function"], x["line"]) for x in s["frames"]])
            where = "%s (%s:%d)" % (f[1], f[0], f[2]) if f else \
                "no line (allocated before the view started)"
            t_top(i, where.encode("utf-8", "replace")[:255], s["live_bytes"], s["live_blocks"])

    return tell


def _user_frame(frames):
    # the innermost frame of the user's code, as `gpuspy report` picks its
    # headline: not the standard library, not an installed package
    import re

    for f in frames:
        if not re.search(r"/(site|dist)-packages/|/lib/python\d+\.\d+/|^<frozen", f[0]):
            return f
    return frames[0] if frames else None


def _human(b):
    v, u = float(b), 0
    while abs(v) >= 1024 and u < 4:
        v, u = v / 1024, u + 1
    return "%d B" % b if u == 0 else "%.1f %s" % (v, ("B", "KiB", "MiB", "GiB", "TiB")[u])


def _notice(key, live, since, rate, shape):
    # libgpuspy's growth notice (src/preload/summary.c), one write(2)
    import os

    f = _user_frame(key)
    where = "%s (%s:%d)" % (f[1], f[0], f[2]) if f else "blocks allocated before the view"
    line = "gpuspy: growing: %.1f MiB/min since %.0f s, %s, at %s [PyTorch view]; %s live " \
           "(pid %d)\n" % (rate * 60 / (1 << 20), since, shape, where, _human(live), os.getpid())
    os.write(2, line.encode("utf-8", "replace"))


def _importing():
    import sys

    locks = getattr(sys.modules.get("_frozen_importlib"), "_module_locks", None)
    return bool(locks)


def start():
    try:
        return _gpuspy_torch_start((GPUSPY_TORCH_PATH, GPUSPY_TORCH_TMP, GPUSPY_TORCH_FORMAT),
                                   (GPUSPY_TREND_INIT, GPUSPY_TREND_PUSH, GPUSPY_TREND_EVER,
                                    GPUSPY_TREND_QUERY, GPUSPY_TREND_SHAPE_NAME,
                                    GPUSPY_TREND_SIZE, GPUSPY_START),
                                   GPUSPY_INTERVAL, GPUSPY_QUIET,
                                   (globals().get("GPUSPY_HISTORY_TORCH"),
                                    globals().get("GPUSPY_HISTORY_TORCH_LINE")),
                                   globals().get("GPUSPY_SUMMARY_TORCH"))
    except Exception as e:
        return "off: %s: %s" % (type(e).__name__, e), None
