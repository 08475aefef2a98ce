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
# (src/preload/3-out/torch_probe.c), which runs `status, tick = start(...)` until the
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
# sites: GPUSPY_TREND_INIT, GPUSPY_TREND_PUSH, GPUSPY_TREND_STATE,
# GPUSPY_TREND_QUERY and GPUSPY_TREND_SHAPE_NAME are the addresses of its
# functions, GPUSPY_TREND_SIZE the size of the state they keep (struct
# gs_trend), GPUSPY_START the process's start (time.time()), from which
# samples are timed as the library times its own.  GPUSPY_HISTORY_TORCH and
# GPUSPY_HISTORY_TORCH_LINE (src/preload/3-out/history.h), where given, put each
# sample's pool totals and its largest lines into the process's history.
# Each stack's verdict is the rule's, recorded as the library records a
# site's ("growing", and "growth": shape, since, rate, stopped, until;
# docs/format.md).  The first time a stack is found growing, one line on
# stderr names it, in the library's form, and another when it stops (grew,
# then stopped) or grows again.  An
# atexit handler takes the last sample, before the interpreter frees the
# program's globals.  When PyTorch raises OutOfMemoryError, its
# out-of-memory observer (torch._C._cuda_attach_out_of_memory_observer)
# gives the library PyTorch's own figures of that moment through
# GPUSPY_TORCH_OOM (events_torch_oom of src/preload/3-out/events.h), for the
# verdict of the failure it follows.  Any error turns the view off with one line; the
# program never sees an exception.
#
# The view starts before the first block where it can.  Until CUDA is
# initialized, start() "arms" it: torch.cuda keeps a queue of calls that
# its lazy initialization makes once CUDA is up and before any tensor
# (what torch.cuda.manual_seed uses), and the start of the memory history
# joins it, so that every block has its stack; start() says "armed".  A
# block from before the history (a program that touched CUDA before the
# view could arm) is named from gpuspy's own record of the segment that
# holds it: GPUSPY_SEGMENT_SITE (torch_segment_site of
# src/preload/3-out/torch_probe.c) gives the site and the Python frames gpuspy
# recorded when that segment was allocated, and torch.json says
# "source": "segment" of those.
status, tick = "wait", None
_gpuspy_armed = {}


def _gpuspy_torch_start(files, trend, interval, quiet, history=(None, None), summary=None,
                        oom=None, segment_fn=None, at_exit=False):
    import sys

    torch = sys.modules.get("torch")
    # torch.cuda while torch is still importing it is in sys.modules only;
    # arming takes nothing but its queue, so it may be half made
    cuda = getattr(torch, "cuda", None) or sys.modules.get("torch.cuda")
    if torch is not None and cuda is not None and not _gpuspy_cuda_up(cuda):
        return _gpuspy_arm(cuda, _gpuspy_armed, sys), None
    if _importing():
        return "wait", None
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
    # Armed, the history started with CUDA: not again.
    if not _gpuspy_armed.get("on") and not any(memory._snapshot().get("device_traces") or ()):
        memory._record_memory_history(enabled="state", context="alloc", stacks="python")

    new_series, push, verdict = _gpuspy_trend(*trend)
    segment = _gpuspy_segments(segment_fn) if segment_fn else None
    record = _gpuspy_history(*history) if all(history) else None
    tell = _gpuspy_summary(summary) if summary else None
    sites = {}      # stack -> {"series": its rule's state, "peak", "state": its verdict's}
    state = {"samples": 0, "off": False, "busy": False}
    path, tmp, fmt = files

    def sample(final):
        snap = memory._snapshot()
        live, devices = {}, {}
        for seg in snap.get("segments", ()):
            d = devices.setdefault(seg.get("device", -1), [0, 0])
            d[0] += seg.get("total_size", 0)
            d[1] += seg.get("allocated_size", 0)
            of_segment = None   # gpuspy's record of it, once a block needs it
            for b in seg.get("blocks", ()):
                if b.get("state") != "active_allocated":
                    continue
                key = tuple((f.get("filename", "?"), f.get("name", "?"), f.get("line", 0))
                            for f in b.get("frames", ()))
                # no stack of PyTorch's: from before the history started
                if not key and segment:
                    if of_segment is None:
                        of_segment = segment(seg.get("address"))
                    key = of_segment
                e = live.get(key)
                if e is None:
                    live[key] = e = [0, 0]
                e[0] += b.get("size", 0)
                e[1] += 1
        state["samples"] += 1
        for key in live:
            if key not in sites:
                sites[key] = {"series": new_series(), "peak": 0, "state": 0}
        out = []
        for key, s in sites.items():
            b, n = live.get(key, (0, 0))
            s["peak"] = max(s["peak"], b)
            # the rule's verdict, as a call site's: a teardown that frees
            # what leaked leaves it growing, a level held long enough after
            # the growth makes it stopped
            was, now = s["state"], push(s["series"], b)
            s["state"] = now
            v = verdict(s["series"]) if now else None
            if now != was and not quiet:
                _notice(key, b, was, now, *v)
            if b == 0 and not s["peak"]:
                continue
            e = {"frames": [{"file": f, "function": fn, "line": ln}
                            for f, fn, ln in _frames_of(key)],
                 "live_bytes": b, "live_blocks": n, "peak_bytes": s["peak"],
                 "growing": now == 1}
            if _of_segment(key):
                e["source"], e["site"] = "segment", key[1]
            if v:
                e["growth"] = {"shape": v[2], "since_s": round(v[0], 3),
                               "rate_bytes_per_s": round(v[1], 1), "stopped": now == 2,
                               "until_s": round(v[3], 3)}
            out.append(e)
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

    if at_exit:
        # started by the exit itself (exit_hook): its one sample is the last
        guarded(True)
        return "ok", tick
    atexit.register(guarded, True)
    timing["next"] = time.monotonic() + min(200 * guarded(False), 10 * interval)
    attach = getattr(getattr(torch, "_C", None), "_cuda_attach_out_of_memory_observer", None)
    if oom and attach:
        attach(_gpuspy_oom(memory, oom, quiet))
    return "ok", tick


def _gpuspy_trend(init, push, state, query, shape_name, size, start):
    # The growth rule of libgpuspy(7), the library's: new() is the state
    # of one stack's series, from its first sample; push(state, live) adds
    # a sample, timed as the library times its own, and returns the
    # verdict after it (trend_state: 0 never growing, 1 growing, 2 grew,
    # then stopped); verdict(state) is (since, rate in bytes per second,
    # shape, until: the latest rise).  Called from start(), in the main
    # thread and outside any import.  PYFUNCTYPE: the calls are short and
    # keep the GIL.
    import ctypes
    import time

    st, dbl = ctypes.c_void_p, ctypes.POINTER(ctypes.c_double)
    t_init = ctypes.PYFUNCTYPE(None, st)(init)
    t_push = ctypes.PYFUNCTYPE(None, st, ctypes.c_double, ctypes.c_longlong)(push)
    t_state = ctypes.PYFUNCTYPE(ctypes.c_int, st, dbl)(state)
    t_query = ctypes.PYFUNCTYPE(ctypes.c_int, st, dbl, dbl,
                                ctypes.POINTER(ctypes.c_int))(query)
    t_name = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.c_int)(shape_name)

    def new():
        g = ctypes.create_string_buffer(size)
        t_init(g)
        return g

    def add(g, live):
        t_push(g, time.time() - start, live)
        return t_state(g, None)

    def verdict(g):
        since, rate, shape, until = (ctypes.c_double(), ctypes.c_double(), ctypes.c_int(),
                                     ctypes.c_double())
        t_query(g, ctypes.byref(since), ctypes.byref(rate), ctypes.byref(shape))
        t_state(g, ctypes.byref(until))
        return since.value, rate.value, t_name(shape.value).decode(), until.value

    return new, add, verdict


def _gpuspy_history(torch_fn, line_fn, top=16, key_max=2000):
    # record(devices, sites, live): the sample into the library's history
    # (history_torch, history_torch_line of src/preload/3-out/history.h).  A
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
                   ln >= 0 else 0} for f, fn, ln in _frames_of(key)]
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


def _gpuspy_role(key):
    # What a block's Python stack says it is, where it says it: None when
    # it says nothing (a block from PyTorch's autograd engine, say, which
    # runs no Python, or from before the view started)
    for f, fn, _ in key:
        if "/torch/optim/" in f:
            return "optimizer state"
    for f, fn, _ in key:
        if f.endswith("/torch/nn/modules/module.py") and fn in (
                "_apply", "to", "cuda", "load_state_dict", "_load_from_state_dict"):
            return "weights"
    for f, fn, _ in key:
        if fn == "backward" or "/torch/autograd/" in f:
            return "gradients"
    for f, fn, _ in key:
        if fn in ("forward", "_call_impl", "_wrapped_call_impl"):
            return "activations"
    return None


def _gpuspy_oom(memory, fn, quiet, top=5, lines_max=8000):
    # observer(device, alloc, total, free): called by PyTorch's caching
    # allocator when it gives up on a block of ALLOC bytes, after emptying
    # its cache and before raising OutOfMemoryError, on the thread that
    # asked (the autograd thread, often), which holds the GIL and not the
    # allocator's lock.  Its figures of DEVICE then go to the library
    # (events_torch_oom): the pool's reserved and allocated bytes, its
    # largest free block, the lines whose live blocks sit in segments that
    # hold free memory, which keep those segments from being given back
    # ("lines"), and the lines holding most ("holders", with what their
    # stacks say they are: weights, activations, optimizer state,
    # gradients): most first, TOP of each, their JSON under LINES_MAX
    # bytes.  Nothing is imported here (see the top of this file).
    import ctypes
    import json
    import sys

    ll, sp = ctypes.c_longlong, ctypes.c_char_p
    t_oom = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_int, ll, ll, ll, ll, sp, sp, ll, sp,
                              ll)(fn)
    state = {"off": False}

    def entries(table):
        out = []
        for key, v in sorted(table.items(), key=lambda kv: -kv[1][0])[:top]:
            e = {"frames": [{"file": f[:500], "function": fn[:200],
                             "line": ln if type(ln) is int and ln >= 0 else 0}
                            for f, fn, ln in key], "bytes": v[0], "blocks": v[1]}
            if _gpuspy_role(key):
                e["role"] = _gpuspy_role(key)
            out.append(e)
        return out

    def named(table, with_role):
        # the first of TABLE by the user's line, as the library names it
        if not table:
            return b"", 0
        key, v = max(table.items(), key=lambda kv: kv[1][0])
        f = _user_frame(key)
        where = "%s (%s:%d)" % (f[1], f[0].rsplit("/", 1)[-1], f[2]) if f else \
            "blocks from before the view started"
        if with_role and _gpuspy_role(key):
            where += " [%s]" % _gpuspy_role(key)
        return where.encode("utf-8", "replace")[:255], v[0]

    def figures(device, alloc):
        reserved = allocated = 0
        largest = -1
        pins, holders = {}, {}
        for seg in memory._snapshot().get("segments", ()):
            if seg.get("device") != device:
                continue
            reserved += seg.get("total_size", 0)
            blocks = seg.get("blocks", ())
            free = [b.get("size", 0) for b in blocks if b.get("state") == "inactive"]
            if free:
                largest = max(largest, max(free))
            for b in blocks:
                if b.get("state") != "active_allocated":
                    continue
                allocated += b.get("size", 0)
                key = tuple((f.get("filename", "?"), f.get("name", "?"), f.get("line", 0))
                            for f in b.get("frames", ()))
                for table in (holders, pins) if sum(free) else (holders,):
                    e = table.setdefault(key, [0, 0])
                    e[0] += b.get("size", 0)
                    e[1] += 1
        doc = {"lines": entries(pins), "holders": entries(holders)}
        text = json.dumps(doc, ensure_ascii=True, separators=(",", ":"))
        while len(text) >= lines_max and (doc["lines"] or doc["holders"]):
            longer = max(("lines", "holders"), key=lambda k: len(json.dumps(doc[k])))
            if len(doc[longer][-1]["frames"]) > 1:
                doc[longer][-1]["frames"].pop()
            else:
                doc[longer].pop()
            text = json.dumps(doc, ensure_ascii=True, separators=(",", ":"))
        return (int(alloc), allocated, reserved, largest, text.encode("ascii"),
                *named(pins, False), *named(holders, True))

    def observer(device, alloc, total, free):
        if state["off"]:
            return
        try:
            t_oom(int(device), *figures(int(device), alloc))
        except Exception as e:  # the program must see PyTorch's error, not ours
            state["off"] = True
            if not quiet:
                sys.stderr.write("gpuspy: PyTorch's out-of-memory figures off: %s: %s\n" %
                                 (type(e).__name__, e))

    return observer


def _gpuspy_summary(fn, top=3):
    # tell(sites): the largest live holders of this sample, by the user's
    # line, to the library (summary_torch_top of src/preload/3-out/summary.h),
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
            if s.get("source") == "segment":
                where = ("%s, from gpuspy's record of its segment" % where) if f else \
                    "gpuspy's call site %d, which made its segment" % s["site"]
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


def _secs(t):
    # seconds as the library's notices say them (src/preload/3-out/summary.c)
    return "%.1f s" % t if t < 10 else "%.0f s" % t


def _notice(key, live, was, now, since, rate, shape, until):
    # libgpuspy's growth notices (src/preload/3-out/summary.c), one write(2)
    # each: first found growing, then stopped, or growing again
    import os

    f = _user_frame(_frames_of(key))
    where = "%s (%s:%d)" % (f[1], f[0], f[2]) if f else "blocks allocated before the view"
    if _of_segment(key):
        where = ("%s, from gpuspy's record of its segment" % where) if f else \
            "gpuspy's call site %d, which made its segment" % key[1]
    mpm = rate * 60 / (1 << 20)
    if now == 2:
        head = "grew, then stopped: %.1f MiB/min from %s to %s, %s" % (mpm, _secs(since),
                                                                        _secs(until), shape)
    elif was:
        head = "growing again at %s: %.1f MiB/min since %s, %s" % (_secs(until), mpm,
                                                                   _secs(since), shape)
    else:
        head = "growing: %.1f MiB/min since %s, %s" % (mpm, _secs(since), shape)
    line = "gpuspy: %s, at %s [PyTorch view]; %s live (pid %d)\n" % (head, where, _human(live),
                                                                     os.getpid())
    os.write(2, line.encode("utf-8", "replace"))


def _gpuspy_cuda_up(cuda):
    # whether CUDA is initialized (a torch.cuda half imported: not yet)
    up = getattr(cuda, "is_initialized", None)
    return bool(up()) if up is not None else bool(getattr(cuda, "_initialized", False))


def _gpuspy_arm(cuda, armed, sys):
    # "armed" once the start of the memory history is in torch.cuda's queue
    # of calls that its lazy initialization makes (torch.cuda._lazy_call's
    # _queued_calls: each (callable, traceback), called in order once CUDA
    # is up, before _lazy_init returns and so before any tensor), else
    # "wait".  Nothing imported (the program may be importing), and the
    # initialization's lock only if free: a thread initializing CUDA now
    # is not waited for (start() then finds CUDA up).
    if "hook" in armed:
        return "armed"
    queue = getattr(cuda, "_queued_calls", None)
    if type(queue) is not list:
        return "wait"
    lock = getattr(cuda, "_initialization_lock", None)
    if lock is not None and not lock.acquire(False):
        # held: by this thread when it is inside _lazy_init (gpuspy asked
        # as CUDA started, at the first bytecode after it), which runs the
        # queue after; by another, which is not waited for
        code = getattr(getattr(cuda, "_lazy_init", None), "__code__", None)
        f = sys._getframe(1)
        while f is not None and f.f_code is not code:
            f = f.f_back
        if f is None or code is None:
            return "wait"
        lock = None
    try:
        if getattr(cuda, "_initialized", False):
            return "wait"

        def hook():
            # In _lazy_init, on the thread that initializes CUDA, with the
            # GIL and the initialization's lock: what it raises would be
            # the program's CUDA failing, so it raises nothing.  A program
            # that records its own history (enabled="all") keeps it.
            try:
                memory = getattr(cuda, "memory", None) or sys.modules.get("torch.cuda.memory")
                if not any(memory._snapshot().get("device_traces") or ()):
                    memory._record_memory_history(enabled="state", context="alloc",
                                                  stacks="python")
                armed["on"] = True
            except Exception:
                armed["on"] = False

        # no traceback: _lazy_init joins it into the message of an error
        # the hook never raises
        queue.append((hook, []))
        armed["hook"] = hook
    finally:
        if lock is not None:
            lock.release()
    return "armed"


_SEGMENT = "segment"


def _of_segment(key):
    # a key of blocks named from gpuspy's record of their segment:
    # (_SEGMENT, its site, its frames); any other is PyTorch's frames
    return len(key) == 3 and key[0] is _SEGMENT


def _frames_of(key):
    return key[2] if _of_segment(key) else key


def _gpuspy_segments(fn, size=65536):
    # key(address): the key of the blocks of the segment at ADDRESS that
    # have no stack of PyTorch's, from gpuspy's record of that segment's
    # allocation (torch_segment_site): (_SEGMENT, its site, its Python
    # frames); () when gpuspy holds none there.  The frames of a site are
    # kept: a site's never change.
    import ctypes
    import json

    t_site = ctypes.PYFUNCTYPE(ctypes.c_longlong, ctypes.c_ulonglong, ctypes.c_char_p,
                               ctypes.c_size_t)(fn)
    buf = ctypes.create_string_buffer(size)
    known = {}

    def key(address):
        if type(address) is not int or address <= 0 or address >= 1 << 64:
            return ()
        site = t_site(address, None, 0)
        if site < 0:
            return ()
        k = known.get(site)
        if k is None:
            got = t_site(address, buf, size)
            if got < 0 and got != -2:
                return ()
            frames = () if got == -2 else tuple(
                (f["file"], f["function"], f["line"])
                for f in json.loads(buf.value.decode("utf-8", "replace")))
            k = known[got if got >= 0 else site] = (_SEGMENT, got if got >= 0 else site,
                                                    frames)
        return k

    return key


def _importing():
    import sys

    locks = getattr(sys.modules.get("_frozen_importlib"), "_module_locks", None)
    return bool(locks)


def arm():
    # As CUDA starts (torch_cuda_starting of src/preload/3-out/torch_probe.c):
    # "armed" or "wait", never a start.
    try:
        import sys

        torch = sys.modules.get("torch")
        cuda = getattr(torch, "cuda", None) or sys.modules.get("torch.cuda")
        if torch is None or cuda is None or _gpuspy_cuda_up(cuda):
            return "wait"
        return _gpuspy_arm(cuda, _gpuspy_armed, sys)
    except Exception as e:
        return "off: %s: %s" % (type(e).__name__, e)


def exit_hook():
    # The first time the view waits (src/preload/3-out/torch_probe.c,
    # start_call): its start at the program's exit.  A short program
    # can end before the snapshot thread's next call: the handler, run
    # before the interpreter finalizes, starts the view then
    # (torch_exit_start, through GPUSPY_EXIT_START), and its one sample is
    # the last.  atexit is a built-in module of no other: importing it
    # while the program imports one of its own (CUDA starting at a
    # module's import) meets nothing half made.
    import atexit

    def at_exit():
        if status not in ("wait", "armed"):
            return
        try:
            import ctypes

            ctypes.PYFUNCTYPE(ctypes.c_int)(GPUSPY_EXIT_START)()
        except Exception:  # the program must never see it
            pass

    atexit.register(at_exit)


def start(at_exit=False):
    try:
        return _gpuspy_torch_start((GPUSPY_TORCH_PATH, GPUSPY_TORCH_TMP, GPUSPY_TORCH_FORMAT),
                                   (GPUSPY_TREND_INIT, GPUSPY_TREND_PUSH, GPUSPY_TREND_STATE,
                                    GPUSPY_TREND_QUERY, GPUSPY_TREND_SHAPE_NAME,
                                    GPUSPY_TREND_SIZE, GPUSPY_START),
                                   GPUSPY_INTERVAL, GPUSPY_QUIET,
                                   (globals().get("GPUSPY_HISTORY_TORCH"),
                                    globals().get("GPUSPY_HISTORY_TORCH_LINE")),
                                   globals().get("GPUSPY_SUMMARY_TORCH"),
                                   globals().get("GPUSPY_TORCH_OOM"),
                                   globals().get("GPUSPY_SEGMENT_SITE"), at_exit)
    except Exception as e:
        return "off: %s: %s" % (type(e).__name__, e), None
