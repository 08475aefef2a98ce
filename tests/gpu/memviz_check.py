#!/usr/bin/env python3
"""scripts/gpu-check case memory-viz: gpuspy export --memory-viz read by
PyTorch's own module.  Runs, under LIB with GPUSPY_TRACE, a small PyTorch
program (tests/gpu/memviz_torch.py), the CUDA C program CUDA_PROG (case
cuda-static's: memory PyTorch's own snapshot cannot see) and, when CuPy
is installed, tests/gpu/cupy_check.py; exports each with GPUSPY_CLI and
loads the pickle with torch.cuda._memory_viz: segsum, trace, memory,
segments and compare (their flame-graph text, without flamegraph.pl),
segment_plot and trace_plot (both views) must return without error; the
segments' total must be the live bytes at exit of the library's own
report.json; the trace must hold events and replay as the viewer replays
it (from the segments backwards, each block inside a segment); for
PyTorch, every segment of PyTorch's own snapshot (its caching
allocator's cudaMalloc) must be one of gpuspy's, address and size.
Writes each run and pickle under CASEDIR; prints one PASS/FAIL line per
check.  Usage: memviz_check.py LIB GPUSPY_CLI CUDA_PROG CASEDIR"""
import glob
import json
import os
import pickle
import subprocess
import sys

lib, cli, cuda_prog, d = sys.argv[1:5]
here = os.path.dirname(os.path.abspath(__file__))
failed = 0


def check(cond, what, detail=""):
    global failed
    print(("PASS " if cond else "FAIL ") + what + (f": {detail}" if detail and not cond else ""),
          flush=True)
    failed += not cond
    return cond


def under_gpuspy(name, argv, trace=100000):
    """ARGV under gpuspy into CASEDIR/NAME: its process directory."""
    run = os.path.join(d, name)
    env = dict(os.environ, LD_PRELOAD=lib, GPUSPY_OUTPUT_DIR=run, GPUSPY_TRACE=str(trace))
    with open(os.path.join(d, name + ".stdout"), "w") as out, \
            open(os.path.join(d, name + ".stderr"), "w") as err:
        rc = subprocess.run(argv, env=env, stdout=out, stderr=err).returncode
    check(rc == 0, f"{name}: the program runs under gpuspy (status {rc})")
    procs = glob.glob(os.path.join(run, "*", "allocations.json"))
    check(len(procs) == 1, f"{name}: one process wrote allocations.json", str(procs))
    return os.path.dirname(procs[0]) if procs else None


def replay(snap, device):
    """'' when DEVICE's trace replays backwards from the segments as the
    viewer replays it, else the first event that does not fit."""
    segs = {s["address"]: s["total_size"] for s in snap["segments"] if s["device"] == device}
    blocks = {b["address"]: b["size"] for s in snap["segments"] if s["device"] == device
              for b in s["blocks"] if b["state"] == "active_allocated"}
    for i, e in reversed(list(enumerate(snap["device_traces"][device]))):
        act, addr, size = e["action"], e.get("addr"), e["size"]
        if act == "free_completed":
            blocks[addr] = size
        elif act == "free_requested" and addr not in blocks:
            return f"event {i}: free_requested of no block"
        elif act == "alloc":
            if blocks.pop(addr, None) is None:
                return f"event {i}: alloc of no block"
        elif act == "segment_free":
            segs[addr] = size
        elif act == "segment_alloc" and segs.pop(addr, None) is None:
            return f"event {i}: segment_alloc of no segment"
        for b, n in blocks.items():
            if not any(a <= b and b + n <= a + m for a, m in segs.items()):
                return f"event {i}: block {b:#x} in no segment"
    return ""


def viewer(name, proc):
    """Export PROC, load it, and run torch.cuda._memory_viz on it: the
    snapshot, or None."""
    from torch.cuda import _memory_viz as mv

    dest = os.path.join(d, name + ".pickle")
    r = subprocess.run([cli, "export", "--memory-viz", dest, proc], capture_output=True,
                       text=True)
    with open(os.path.join(d, name + ".export.txt"), "w") as f:
        f.write(r.stdout + r.stderr)
    if not check(r.returncode == 0, f"{name}: gpuspy export --memory-viz",
                 (r.stdout + r.stderr).strip()):
        return None
    with open(dest, "rb") as f:
        snap = pickle.load(f)
    same = lambda text: text  # noqa: E731  (the flame graph's input; no flamegraph.pl here)
    renders = {
        "segsum": lambda: mv.segsum(snap),
        "trace": lambda: mv.trace(snap),
        "memory": lambda: mv.memory(snap, format_flamegraph=same),
        "segments": lambda: mv.segments(snap, format_flamegraph=same),
        # against no segments before: every segment is new (the same
        # snapshot on both sides compares to nothing, an empty text)
        "compare": lambda: mv.compare([], snap["segments"], format_flamegraph=same),
        "segment_plot": lambda: mv.segment_plot(snap),
        "trace_plot": lambda: mv.trace_plot(snap),
        "trace_plot segments": lambda: mv.trace_plot(snap, plot_segments=True),
    }
    for what, fn in renders.items():
        try:
            out = fn()
            ok, why = isinstance(out, str) and out != "", f"returned {type(out).__name__}"
        except Exception as e:  # the check is that nothing is raised
            ok, why = False, f"{type(e).__name__}: {e}"
        if ok and what in ("segment_plot", "trace_plot"):
            with open(os.path.join(d, f"{name}.{what}.html"), "w") as f:
                f.write(out)
        check(ok, f"{name}: _memory_viz.{what} renders it", why)
    r = subprocess.run([sys.executable, "-m", "torch.cuda._memory_viz", "stats", dest],
                       capture_output=True, text=True)
    check(r.returncode == 0 and "total_reserved" in r.stdout,
          f"{name}: python -m torch.cuda._memory_viz stats", r.stderr[-400:])
    rep = json.load(open(os.path.join(proc, "report.json")))
    total = sum(s["total_size"] for s in snap["segments"])
    check(total == rep["leaked"]["bytes"],
          f"{name}: the segments' total is gpuspy's live bytes at exit ({total} bytes, "
          f"{len(snap['segments'])} segments)", f"report.json says {rep['leaked']['bytes']}")
    events = sum(len(t) for t in snap["device_traces"])
    check(events > 0, f"{name}: the trace holds {events} events")
    for dev in range(len(snap["device_traces"])):
        why = replay(snap, dev)
        check(why == "", f"{name}: device {dev}'s trace replays from the segments", why)
    print(f"     {name}: " + open(os.path.join(d, name + ".export.txt")).read().strip()
          .replace("\n", "\n     "), flush=True)
    return snap


try:
    import torch  # noqa: F401
    import torch.cuda._memory_viz  # noqa: F401
except ImportError as e:
    check(False, "torch and torch.cuda._memory_viz import", str(e))
    sys.exit(1)
print(f"     torch {torch.__version__}", flush=True)

# PyTorch: gpuspy's segments hold its caching allocator's own
own = os.path.join(d, "torch-own.pickle")
proc = under_gpuspy("torch", [sys.executable, os.path.join(here, "memviz_torch.py"), own])
snap = viewer("torch", proc) if proc else None
if snap and os.path.exists(own):
    with open(own, "rb") as f:
        theirs = pickle.load(f)
    want = {(s["address"], s["total_size"]) for s in theirs["segments"]}
    have = {(s["address"], s["total_size"]) for s in snap["segments"]}
    check(bool(want) and want <= have,
          f"torch: PyTorch's {len(want)} segments ({sum(n for _, n in want)} bytes) are "
          f"among gpuspy's {len(have)}", f"missing {sorted(want - have)[:5]}")

# CUDA C: no PyTorch in the process at all
proc = under_gpuspy("cuda", [cuda_prog], trace=4096)
if proc:
    viewer("cuda", proc)

# CuPy, where installed
if subprocess.run([sys.executable, "-c", "import cupy"], capture_output=True).returncode == 0:
    proc = under_gpuspy("cupy", [sys.executable, os.path.join(here, "cupy_check.py")])
    if proc:
        viewer("cupy", proc)
else:
    print("     cupy: not installed, skipped", flush=True)

print(f"memory-viz: {failed} failed", flush=True)
sys.exit(1 if failed else 0)
