#!/usr/bin/env python3
"""One series, one verdict: the series of tests/unit/test_common_growth.c,
sample by sample, through the PyTorch view (src/preload/torch_view.py,
run whole over a pretend torch whose one stack holds the series) and
through the library's rule as the snapshot thread applies it to a call
site (growth_push and growth_judge, a sticky flag).  Both must first find
the series growing at the same sample, the table's.  A line that appears
at sample 100 and grows every sample is found growing at sample 115.
Usage: growth_rule.py TORCH_VIEW_PY LIBGROWTH_ABI"""
import builtins
import ctypes
import json
import os
import shutil
import sys
import tempfile

view_py, abi_so = sys.argv[1:3]
MIB = 1 << 20

# name, live bytes at sample i (from 0), samples, first sample (from 1)
# found growing, 0 for never: tests/unit/test_common_growth.c's table
VECTORS = [
    ("steady per-sample growth", lambda i: 1000 * (i + 1), 64, 16),
    ("appears at sample 100, then grows", lambda i: 0 if i < 99 else 4096 * (i - 98), 299, 115),
    ("flat", lambda i: MIB, 300, 0),
    ("never allocates", lambda i: 0, 300, 0),
    ("sawtooth alloc/free", lambda i: (i % 10 + 1) * 100, 300, 0),
    ("warm-up of 12 samples, then plateau", lambda i: min(i + 1, 12) * 1000, 300, 0),
    ("warm-up of 40 samples, then plateau", lambda i: min(i + 1, 40) * 1000, 300, 16),
    ("one big allocation", lambda i: 0 if i < 3 else 1 << 30, 300, 0),
    ("pool grows to a bound and stays", lambda i: min(i // 8 + 1, 8) * MIB, 300, 0),
    ("slow drift, 3 samples of 4", lambda i: 1000 + i - i // 4, 300, 16),
    ("slow drift, 2 samples of 3", lambda i: 1000 + i - i // 3, 300, 0),
    ("flat for 200 samples, then grows", lambda i: 5000 if i < 200 else 4801 + i, 500, 320),
    ("flat for 1000 samples, then grows", lambda i: 5000 if i < 1000 else 4001 + i, 1300, 1192),
    ("drop at the end of the first window", lambda i: i + 1 if i < 15 else 0 if i == 15 else i,
     36, 17),
    ("leak with frees between", lambda i: 1000 + 10 * (i // 2 + 1) - (3 if i % 2 else 0), 300, 0),
]

abi = (ctypes.c_size_t * 4)()
ctypes.CDLL(abi_so).growth_abi(abi)
GROWTH = tuple(abi)
init = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(GROWTH[0])
push = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_longlong)(GROWTH[1])
judge = ctypes.CFUNCTYPE(ctypes.c_bool, ctypes.c_void_p)(GROWTH[2])


def library_first(live):
    """The first sample at which the snapshot thread flags a site."""
    g = ctypes.create_string_buffer(GROWTH[3])
    init(g)
    for i, b in enumerate(live):
        push(g, b)
        if judge(g):
            return i + 1
    return 0


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
    growing: torch_view.py in a namespace as torch_probe.c makes it, its
    interval 0 so that each tick() takes a sample."""
    torch = Torch(live)
    sys.modules["torch"] = torch
    path = os.path.join(out, "torch.json")
    ns = {"__builtins__": builtins, "GPUSPY_DIR": out, "GPUSPY_TORCH_PATH": path,
          "GPUSPY_TORCH_TMP": os.path.join(out, ".torch.json.tmp"),
          "GPUSPY_TORCH_FORMAT": "gpuspy-torch/1", "GPUSPY_INTERVAL": 0.0, "GPUSPY_QUIET": True,
          "GPUSPY_GROWTH_INIT": GROWTH[0], "GPUSPY_GROWTH_PUSH": GROWTH[1],
          "GPUSPY_GROWTH_JUDGE": GROWTH[2], "GPUSPY_GROWTH_SIZE": GROWTH[3]}
    exec(compile(open(view_py).read(), view_py, "exec"), ns)
    status, tick = ns["start"]()     # its first sample, live[0]
    if status != "ok":
        return "view did not start: %s" % status
    for j in range(len(live)):
        if j:
            torch.cuda.memory.j = j
            tick()
        doc = json.load(open(path))
        if doc["samples"] != j + 1:
            return "view took %d samples for %d" % (doc["samples"], j + 1)
        if any(s["growing"] for s in doc["sites"]):
            return j + 1
    return 0


failures = 0
for name, f, n, first in VECTORS:
    live = [f(i) for i in range(n)]
    out = tempfile.mkdtemp()
    lib, view = library_first(live), view_first(live, out)
    shutil.rmtree(out)
    ok = lib == view == first
    print(("ok   " if ok else "FAIL ") + "%s: first growing at sample %s in the library, %s in "
          "the PyTorch view (%s expected)" % (name, lib, view, first))
    failures += not ok
print("%d failures" % failures)
sys.exit(1 if failures else 0)
