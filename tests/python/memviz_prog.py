"""Allocates and frees device memory from known Python lines, through
ctypes and the fake runtime, for tests/python/memviz.py, and prints each
call as a JSON line, in order: {"action": "alloc"|"free", "address",
"size", "stream", "line"}.  Usage: memviz_prog.py LIBPYALLOC STEPS"""
import ctypes
import json
import sys

lib = ctypes.CDLL(sys.argv[1])
for name in ("pyalloc_alloc", "pyalloc_managed", "pyalloc_async", "pyalloc_stream"):
    getattr(lib, name).restype = ctypes.c_size_t
lib.pyalloc_alloc.argtypes = lib.pyalloc_managed.argtypes = [ctypes.c_size_t]
lib.pyalloc_async.argtypes = [ctypes.c_size_t, ctypes.c_size_t]
lib.pyalloc_free.argtypes = [ctypes.c_size_t]
steps = int(sys.argv[2])
sizes = {}


def said(action, address, size, line, stream=0):
    if not address:
        sys.exit(f"memviz_prog.py: {action} of {size} bytes failed")
    print(json.dumps({"action": action, "address": address, "size": size, "stream": stream,
                      "line": line}), flush=True)
    return address


def make_weights():
    return [said("alloc", lib.pyalloc_alloc(4 << 20), 4 << 20, "weights")  # LINE weights
            for _ in range(3)]


def step(i):
    size = (1 << 20) + i * 4096
    tmp = said("alloc", lib.pyalloc_alloc(size), size, "step")  # LINE step
    if lib.pyalloc_free(tmp) != 0:
        sys.exit("memviz_prog.py: free failed")
    said("free", tmp, size, "step")


def keep_managed():
    return said("alloc", lib.pyalloc_managed(3 << 20), 3 << 20, "managed")  # LINE managed


def keep_async(stream):
    return said("alloc", lib.pyalloc_async(2 << 20, stream), 2 << 20, "async",  # LINE async
                stream)


weights = make_weights()
for i in range(steps):
    step(i)
managed = keep_managed()
s = lib.pyalloc_stream()
if not s:
    sys.exit("memviz_prog.py: no stream")
kept = keep_async(s)
# one of the weights goes: its free is the trace's last event
lib.pyalloc_free(weights[1])
said("free", weights[1], 4 << 20, "weights")
