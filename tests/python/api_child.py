# SPDX-License-Identifier: MIT
"""The program of api_live.py: the gpuspy package over the preloaded
library's C API, allocating through the fake CUDA runtime by ctypes.
Prints one JSON object of what it saw; api_live.py judges it.
Usage: api_child.py LIBPYALLOC MODE   (MODE: names, basic, threads, fork, torch)"""
import ctypes
import json
import os
import sys
import threading
import time

import gpuspy
from gpuspy import _lib

MIB = 1 << 20
mode = sys.argv[2]
out = {}
lib = gpuspy.library()
out["found"] = lib is not None
out["why"] = gpuspy.why()
if lib is None:
    print(json.dumps(out))
    sys.exit(0)
cudart = ctypes.CDLL("libcudart.so.13")
cudart.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
cudart.cudaFree.argtypes = [ctypes.c_void_p]
pyalloc = ctypes.CDLL(sys.argv[1])
pyalloc.pyalloc_pairs.argtypes = [ctypes.c_long]
pyalloc.pyalloc_pairs.restype = ctypes.c_double


def totals(t):
    return {k: getattr(t, k) for k in t.__slots__} if t is not None else None


def sites(ss):
    return [{k: getattr(s, k) for k in s.__slots__} for s in ss]


def scope_totals(t):
    return {k: getattr(t, k) for k in t.__slots__} if t is not None else None




def keep(n):
    p = ctypes.c_void_p()
    cudart.cudaMalloc(ctypes.byref(p), n)  # LINE keep
    return p


def temporary(n):
    q = ctypes.c_void_p()
    cudart.cudaMalloc(ctypes.byref(q), n)  # LINE temporary
    cudart.cudaFree(q)


def other(n):
    return keep(n)  # LINE other


if mode == "names":
    # held until exit: the report at exit names the sites as they were
    held = [keep(3 * MIB), other(5 * MIB), keep(1 * MIB)]
    temporary(2 * MIB)
    out["top"] = sites(lib.sites(wait_ms=5000))
elif mode == "basic":
    out["t0"] = totals(lib.totals())
    outer = lib.scope()
    kept = keep(8 * MIB)
    inner = lib.scope()
    temporary(16 * MIB)
    out["inner"] = scope_totals(inner.read())
    out["inner_grown"] = sites(inner.grown())
    out["inner_shrunk"] = sites(inner.shrunk())
    inner.close()
    out["outer"] = scope_totals(outer.read())
    out["outer_grown"] = sites(outer.grown(wait_ms=5000))
    out["top"] = sites(lib.sites(wait_ms=5000))
    out["totals"] = totals(lib.totals())
    out["dir"] = lib.process_dir()
    out["mark"] = lib.mark("after kept")
    # overlapping scopes: A sees 4 MiB above its start, B (opened after
    # A's peak) only its own 2 MiB
    a = lib.scope()
    temporary(4 * MIB)
    b = lib.scope()
    temporary(2 * MIB)
    out["a"] = scope_totals(a.read())
    out["b"] = scope_totals(b.read())
    a.close()
    out["b_after_a"] = scope_totals(b.read())
    b.close()
    out["closed_read"] = scope_totals(b.read())
    # freeing the kept buffer: the site shrinks by what it held
    with lib.scope() as s:
        cudart.cudaFree(kept)
        out["free_read"] = scope_totals(s.read())
        out["free_shrunk"] = sites(s.shrunk(wait_ms=5000))
        out["free_grown"] = sites(s.grown())
    # the calls misused, straight through ctypes
    f = lib._f
    t = _lib._Totals()
    out["misuse"] = {
        "totals_null": f["gpuspy_totals"](None, ctypes.sizeof(t)),
        "totals_size0": f["gpuspy_totals"](ctypes.byref(t), 0),
        "totals_huge": f["gpuspy_totals"](ctypes.byref(t), 1 << 40),
        "close_unknown": f["gpuspy_scope_close"](123456789),
        "close_twice": [f["gpuspy_scope_close"](x) for x in [f["gpuspy_scope_open"]()] * 2],
        "read_negative": f["gpuspy_scope_read"](-5, ctypes.byref(_lib._ScopeTotals()), 40),
        "sites_sign0": f["gpuspy_scope_sites"](lib.scope().id, 0, (_lib._Site * 1)(), 1,
                                               ctypes.sizeof(_lib._Site), 0),
        "sites_n0": f["gpuspy_sites"]((_lib._Site * 1)(), 0, ctypes.sizeof(_lib._Site), 0),
        "sites_null": f["gpuspy_sites"](None, 4, ctypes.sizeof(_lib._Site), 0),
        "dir_small": f["gpuspy_process_dir"](ctypes.create_string_buffer(1), 1),
    }
    # an older caller's smaller structure: the library writes no more
    buf = (ctypes.c_ubyte * 64)(*([0xAB] * 64))
    out["small_rc"] = f["gpuspy_totals"](ctypes.cast(buf, ctypes.POINTER(_lib._Totals)), 8)
    out["small_rest"] = list(buf[8:])
    out["small_live"] = ctypes.c_longlong.from_buffer(buf).value
    # a newer caller's larger one: what this library does not know is 0
    out["large_rc"] = f["gpuspy_totals"](ctypes.cast(buf, ctypes.POINTER(_lib._Totals)), 64)
    out["large_rest"] = list(buf[ctypes.sizeof(_lib._Totals):])
elif mode == "threads":
    # threads allocating and freeing (in C, the GIL released) while this
    # thread opens, reads and closes scopes and ranks the sites
    stop = []

    def churn():
        while not stop:
            pyalloc.pyalloc_pairs(2000)

    workers = [threading.Thread(target=churn) for _ in range(3)]
    for w in workers:
        w.start()
    bad, rounds, scopes = [], 0, []
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        scopes.append(lib.scope())
        if len(scopes) > 4:
            s = scopes.pop(0)
            t = s.read()
            if t is None or t.peak_bytes < t.live_bytes or t.peak_bytes < t.before_bytes \
                    or t.live_bytes < 0:
                bad.append(scope_totals(t))
            s.grown(3, wait_ms=0)
            s.shrunk(3, wait_ms=0)
            s.close()
        tt = lib.totals()
        if tt is None or tt.live_bytes < 0 or tt.peak_bytes < tt.live_bytes:
            bad.append(totals(tt))
        lib.sites(3, wait_ms=0)
        rounds += 1
    stop.append(1)
    for w in workers:
        w.join()
    for s in scopes:
        s.close()
    out["rounds"], out["bad"] = rounds, bad
    out["end"] = totals(lib.totals())
elif mode == "fork":
    p = ctypes.c_void_p()
    cudart.cudaMalloc(ctypes.byref(p), MIB)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        seen = {"totals": totals(lib.totals()), "scope": lib.scope() is None,
                "sites": sites(lib.sites(wait_ms=100)), "found": _lib.Library.find() is None,
                "why": _lib.Library.why}
        os.write(w, json.dumps(seen).encode())
        os._exit(0)
    os.close(w)
    data = b""
    while True:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        data += chunk
    os.waitpid(pid, 0)
    out["child"] = json.loads(data)
    out["parent"] = totals(lib.totals())
elif mode == "torch":
    import torch
    kept = torch.empty(3 * MIB)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        fws = lib.frameworks()
        if any(f.name == "pytorch" and f.allocated == torch.cuda.memory_allocated()
               for f in fws):
            break
        time.sleep(0.02)
    out["frameworks"] = [{k: getattr(f, k) for k in f.__slots__} for f in lib.frameworks()]
    out["torch"] = [torch.cuda.memory_allocated(), torch.cuda.memory_reserved()]
    out["top"] = sites(lib.sites(wait_ms=5000))
print(json.dumps(out))
