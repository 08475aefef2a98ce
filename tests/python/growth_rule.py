#!/usr/bin/env python3
"""One series, one verdict: rule-2 series (src/common/trend.h;
tests/unit/test_common_trend.c has the full table), sample by sample,
through the PyTorch view (src/preload/3-out/torch_view.py, run whole over a
pretend torch whose one stack holds the series) and through the library's
rule as the snapshot thread applies it to a call site (trend_push from the
first sample with live bytes, trend_state as its verdict).  Both must
first find the series growing at the same sample, in the same shape, and
by the sample the table says at the latest (never, for those that must
not grow), and end with the same verdict - growing, grew then stopped
(torch.json's "growth": "stopped"), or never - which the table says for
each; the view names the line on stderr when it is first found growing,
and again when it stops.
Usage: growth_rule.py TORCH_VIEW_PY LIBGROWTH_ABI"""
import builtins
import ctypes
import io
import json
import os
import random
import shutil
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

view_py, abi_so = sys.argv[1:3]
MIB = 1 << 20


def stair(epoch, step=8 * MIB, base=64 * MIB):
    return lambda i: base + step * (i // epoch)


rnd = random.Random(7)
NOISE = [rnd.randrange(32 * MIB) for _ in range(400)]

def doubling(base, levels):
    # a pool that doubles its segments each time it fills: base x (2^(k+1) - 1)
    # from sample 2^k - 1
    return lambda i: base * ((2 << min(levels - 1, (i + 1).bit_length() - 1)) - 1)


# name, live bytes at sample i (from 0), samples, latest first sample
# (from 1) found growing (0: never growing; None: either, while it rises
# it cannot be told), shape when growing, the verdict at the end (1
# growing, 2 grew then stopped, 0 never; None: as the first sample says,
# growing when found growing)
VECTORS = [
    ("per-sample leak", lambda i: 8 * MIB * (i + 1), 64, 6, "per-sample"),
    ("appears at sample 100, then grows", lambda i: 0 if i < 99 else 4 * MIB * (i - 98), 299,
     106, "per-sample"),
    ("staircase, 10-sample epochs", stair(10), 120, 61, "staircase"),
    ("staircase, 25-sample epochs on a base", stair(25, step=32 * MIB, base=512 * MIB), 250, 151,
     "staircase"),
    ("staircase, 1-sample epochs after 2-sample ones",
     lambda i: 64 * MIB + 8 * MIB * (i // 2 if i < 40 else i - 20), 120, 12, None),
    ("flat", lambda i: MIB, 300, 0, None),
    ("never allocates", lambda i: 0, 300, 0, None),
    ("sawtooth alloc/free", lambda i: (i % 4 + 1) * 64 * MIB, 300, 0, None),
    ("cycle at random phase", lambda i: 256 * MIB + NOISE[i], 400, 0, None),
    ("warm-up of 3 steps, then plateau", lambda i: min(i // 10 + 1, 4) * 64 * MIB, 300, 0,
     None),
    ("one big allocation", lambda i: 0 if i < 3 else 1 << 30, 300, 0, None),
    ("pool grows to a bound and stays", lambda i: min(i // 50 + 1, 4) * 128 * MIB, 300, 0,
     None),
    ("freed", lambda i: 512 * MIB if i < 100 else 0, 300, 0, None),
    # grew, then stopped: flagged while rising, stopped once flat
    ("warm-up, 8 x 512 KiB, then flat for 90 samples",
     lambda i: (min(i, 7) + 1) * 512 * 1024, 98, None, None, 2),
    ("cache filling over 16 samples, then flat for 9",
     lambda i: (min(i, 15) + 1) * 32 * MIB, 25, None, None, 2),
    ("pool doubling 8 times, then flat", doubling(16 * MIB, 8), 450, None, None, 2),
    # JAX leaking 4 MiB a step, 4 steps a sample: its pool's segments
    # double (16, 48, 112, 240 MiB) and are never flagged; its own
    # allocated counter climbs, and is
    ("JAX's pool segments, 16 to 240 MiB", doubling(16 * MIB, 4), 15, 0, None),
    ("JAX's allocated counter, 8 + 16 MiB a sample", lambda i: 8 * MIB + 16 * MIB * i, 15, 6,
     "per-sample", 1),
    # per-step and per-epoch leaks still flagged, and growing at the end
    ("staircase, 50-sample epochs, 12 of them", stair(50), 600, 301, "staircase", 1),
]
VECTORS = [v + (None,) * (6 - len(v)) for v in VECTORS]

abi = (ctypes.c_size_t * 6)()
ctypes.CDLL(abi_so).growth_abi(abi)
TREND = tuple(abi)
init = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(TREND[0])
push = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_double, ctypes.c_longlong)(TREND[1])
state = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_double))(TREND[2])
query = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_double),
                         ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_int))(TREND[3])
shape_name = ctypes.CFUNCTYPE(ctypes.c_char_p, ctypes.c_int)(TREND[4])


def library_first(live):
    """The first sample at which the snapshot thread flags a site, the
    shape it names, and its verdict after the last sample."""
    g = ctypes.create_string_buffer(TREND[5])
    init(g)
    started, first, shape = False, 0, None
    for i, b in enumerate(live):
        started = started or b > 0
        if not started:
            continue
        push(g, float(i), b)
        if not first and state(g, None):
            k = ctypes.c_int()
            query(g, None, None, ctypes.byref(k))
            first, shape = i + 1, shape_name(k.value).decode()
    return first, shape, state(g, None)


class Memory:
    """torch.cuda.memory: one stack, holding live[j] bytes when j is set."""

    def __init__(self, live):
        self.live, self.j = live, 0

    def _record_memory_history(self, **kw):
        pass

    def _snapshot(self):
        b = self.live[self.j]
        blocks = [{"size": b, "state": "active_allocated",
                   "frames": [{"filename": "train.py", "name": "step", "line": 7}]}] if b > 0 else []
        return {"segments": [{"device": 0, "total_size": b, "allocated_size": b,
                              "blocks": blocks}], "device_traces": [[]]}


class Cuda:
    def __init__(self, live):
        self.memory = Memory(live)

    def is_initialized(self):
        return True

    def get_allocator_backend(self):
        return "native"


class Torch:
    def __init__(self, live):
        self.cuda = Cuda(live)


def view_first(live, out):
    """The first sample at which the view's torch.json says the stack is
    growing, its verdict in the last torch.json (0 never, 1 growing, 2
    grew then stopped), and the notices it wrote on stderr: torch_view.py in a
    namespace as torch_probe.c makes it, its interval 0 so that each tick()
    takes a sample."""
    torch = Torch(live)
    sys.modules["torch"] = torch
    path = os.path.join(out, "torch.json")
    ns = {"__builtins__": builtins, "GPUSPY_DIR": out, "GPUSPY_TORCH_PATH": path,
          "GPUSPY_TORCH_TMP": os.path.join(out, ".torch.json.tmp"),
          "GPUSPY_TORCH_FORMAT": "gpuspy-torch/1", "GPUSPY_INTERVAL": 0.0, "GPUSPY_QUIET": False,
          "GPUSPY_START": time.time(), "GPUSPY_TREND_INIT": TREND[0], "GPUSPY_TREND_PUSH": TREND[1],
          "GPUSPY_TREND_STATE": TREND[2], "GPUSPY_TREND_QUERY": TREND[3],
          "GPUSPY_TREND_SHAPE_NAME": TREND[4], "GPUSPY_TREND_SIZE": TREND[5]}
    exec(compile(open(view_py).read(), view_py, "exec"), ns)
    # the notice is one write(2) on fd 2: catch it in a pipe
    r, w = os.pipe()
    saved = os.dup(2)
    os.dup2(w, 2)
    os.close(w)
    os.set_blocking(r, False)
    try:
        status, tick = ns["start"]()     # its first sample, live[0]
        if status != "ok":
            return "view did not start: %s" % status, None, []
        first, end = 0, 0
        for j in range(len(live)):
            if j:
                torch.cuda.memory.j = j
                tick()
            doc = json.load(open(path))
            if doc["samples"] != j + 1:
                return "view took %d samples for %d" % (doc["samples"], j + 1), None, []
            if not first and any(s["growing"] for s in doc["sites"]):
                first = j + 1
        for s in doc["sites"]:
            g = s.get("growth")
            # "growing" is the verdict growing; "growth" is there once flagged
            end = 0 if not g else 2 if g["stopped"] and not s["growing"] else \
                1 if s["growing"] and not g["stopped"] else "both %r" % s
    finally:
        os.dup2(saved, 2)
        os.close(saved)
    try:
        said = os.read(r, 65536).decode()
    except BlockingIOError:
        said = ""
    os.close(r)
    return first, end, said.splitlines()


for name, f, n, latest, want_shape, want_end in VECTORS:
    live = [f(i) for i in range(n)]
    out = harness.tempdir()
    (lib, shape, lib_end), (view, view_end, said) = library_first(live), view_first(live, out)
    shutil.rmtree(out)
    if want_end is None:
        want_end = 1 if lib else 0
    ok = lib == view and lib_end == view_end == want_end and \
        (latest is None or (lib == 0 if not latest else 0 < lib <= latest)) and \
        (want_shape is None or shape == want_shape)
    told = [l for l in said if l.startswith("gpuspy: growing: ")]
    stops = [l for l in said if l.startswith("gpuspy: grew, then stopped: ")]
    ok = ok and len(told) == (1 if lib else 0) and len(stops) == (1 if lib_end == 2 else 0) \
        and len(said) == len(told) + len(stops) and \
        all(f", {shape}, at step (train.py:7) [PyTorch view]; " in l for l in told + stops)
    check(ok, "%s: first growing at sample %s (%s) in the library, "
          "%s in the PyTorch view (by %s expected); at the end %s and %s (%s expected); "
          "said %s" % (name, lib, shape, view, latest, lib_end, view_end, want_end, said))
sys.exit(harness.done())
