#!/usr/bin/env python3
"""Where the PyTorch view names a growing tensor's line, that line is the
verdict: the text report's SUMMARY and GROWTH SUSPECTS name it first, and
the pool segment that PyTorch's allocator took for it is said to be its
consequence - not the line to fix.  A run made from the pools fixture's
PyTorch process: its pool-segment site (train.py:12) flagged growing, and
a torch.json whose growing line (train.py:15, the logits kept for
logging) holds less than a flat one (train.py:14).  Without the
torch.json, the segment leads, with no such note.
Usage: test_torch_verdict.py GPUSPY FIXTURES_DIR"""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

gpuspy, fixtures = sys.argv[1:3]


def section(text, title):
    lines = text.splitlines()
    at = next((i for i, l in enumerate(lines) if l.startswith(title)), None)
    if at is None:
        return []
    out = []
    for l in lines[at + 1:]:
        if not l.strip():
            break
        out.append(l)
    return out


def frames(line, fn="step"):
    return [{"file": "/home/u/train.py", "function": fn, "line": line},
            {"file": "/home/u/train.py", "function": "<module>", "line": 30}]


work = harness.tempdir()
try:
    proc = os.path.join(work, "run", "node5-11")
    shutil.copytree(os.path.join(fixtures, "pools", "node5-11"), proc)
    path = os.path.join(proc, "report.json")
    report = json.load(open(path))
    segment = next(s for s in report["sites"] if s["api"] == "cudaMalloc")
    segment["growing"] = True
    segment["growth"] = {"shape": "staircase", "since_s": 10.0, "rate_bytes_per_s": 349525.3,
                         "stopped": False, "until_s": 99.0, "by": "samples"}
    json.dump(report, open(path, "w"))

    def run():
        r = subprocess.run([gpuspy, "report", os.path.join(work, "run")], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        return r.returncode, r.stdout

    rc, plain = run()
    growth = section(plain, "GROWTH SUSPECTS")
    check(rc == 0 and growth and "step (train.py:12)" in growth[0]
          and not any("its consequence" in l for l in growth),
          f"without the view: the segment leads GROWTH SUSPECTS, no consequence said: {growth[:1]}")

    view = {"format": "gpuspy-torch/1", "pid": report["pid"], "time": report["end_time"],
            "final": True, "samples": 90,
            "devices": [{"device": 0, "reserved_bytes": 20971520, "allocated_bytes": 18874368}],
            "sites": [
                {"frames": frames(14), "live_bytes": 12582912, "live_blocks": 3,
                 "peak_bytes": 12582912, "growing": False},
                {"frames": frames(15), "live_bytes": 6291456, "live_blocks": 6,
                 "peak_bytes": 6291456, "growing": True,
                 "growth": {"shape": "per-sample", "since_s": 8.0, "rate_bytes_per_s": 65536.0,
                            "stopped": False, "until_s": 99.0}}]}
    json.dump(view, open(os.path.join(proc, "torch.json"), "w"))
    rc, text = run()
    summary = section(text, "SUMMARY")
    said = [l for l in summary if l.lstrip().startswith("growing:")]
    check(rc == 0 and said and "step (train.py:15) [PyTorch view]" in said[0],
          f"the summary's first growing line is the tensors' line 15: {said[:1]}")
    growth = section(text, "GROWTH SUSPECTS")
    check(growth and growth[0].lstrip().startswith("PyTorch view")
          and "step (train.py:15)" in growth[0] and "[growing]" in growth[0],
          f"GROWTH SUSPECTS leads with the view's growing line: {growth[:1]}")
    check(len(growth) > 1 and growth[1].lstrip().startswith("growth: ")
          and "per-sample" in growth[1], f"with its verdict: {growth[1:2]}")
    seg = next((i for i, l in enumerate(growth) if "step (train.py:12)" in l), None)
    check(seg is not None and seg > 0 and
          any("its consequence" in l for l in growth[seg + 1:seg + 4]),
          "the pool segment follows, said to be its consequence")
    check(not any("train.py:14)" in l for l in growth),
          "the flat line that holds most is not a suspect")
finally:
    shutil.rmtree(work)
sys.exit(harness.done())
