#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Rewrite the fuzz targets' seed corpora (corpus/process, corpus/torch,
corpus/history, corpus/dir) from tests/cli/fixtures: every report under
16 KB, compacted; the PyTorch views; histories of the shape of
history_bad.py's valid one; process directories joined as fuzz_dir.c
reads them.

    make_corpus.py
"""
import glob
import json
import os
import shutil

here = os.path.dirname(os.path.abspath(__file__))
fixtures = os.path.join(here, "..", "cli", "fixtures")
SEP = b"\n--gpuspy-fuzz--\n"
DIR_NAMES = ["report.json", "oom-1.json", "oom-2.json", "snapshot.json", "torch.json",
             "history.jsonl"]


def line(o):
    return json.dumps(o, separators=(",", ":")) + "\n"


def history(pid):
    """A valid history.jsonl of PID, sites 1 and 2: header, a bucket,
    samples, a mark, an out-of-memory event, NVML's view."""
    header = {"format": "gpuspy-history/1", "pid": pid, "start": 1764510000.5,
              "interval_s": 1.0, "recent": 256, "buckets": 256, "top": 32, "max_sites": 64}
    return (line(header) + line({"site": 1, "kind": "device"})
            + line({"site": 2, "kind": "device"})
            + line({"t0": 0.5, "t1": 3.5, "n": 4, "dev": {"0": [0, 9 << 20, 3 << 20]},
                    "sites": {"1": [0, 9 << 20, 3 << 20]}, "other": [0, 0, 0]})
            + line({"t": 4.5, "dev": {"0": 4 << 20}, "sites": {"1": 4 << 20, "2": 0},
                    "other": 0})
            + line({"t": 4.5, "event": "mark", "label": "epoch 1"})
            + line({"t": 5.6, "event": "oom", "n": 1})
            + line({"t": 6.5, "dev": {"0": 6 << 20, "-1": 0}, "sites": {"1": 6 << 20},
                    "other": 0, "outside": {"0": 7 << 20}})).encode()


def compact(path):
    with open(path) as f:
        return json.dumps(json.load(f), separators=(",", ":")).encode()


def put(kind, name, data):
    with open(os.path.join(here, "corpus", kind, name), "wb") as f:
        f.write(data)


for kind in ("process", "torch", "history", "dir"):
    shutil.rmtree(os.path.join(here, "corpus", kind), ignore_errors=True)
    os.makedirs(os.path.join(here, "corpus", kind))

reports = sorted(glob.glob(os.path.join(fixtures, "*", "*", "*.json")))
for path in reports:
    if os.path.basename(path) == "torch.json" or os.path.getsize(path) > 16384:
        continue
    rel = os.path.relpath(path, fixtures)
    put("process", rel.replace("/", "_"), compact(path))

torch = json.loads(compact(os.path.join(fixtures, "hostile", "node6-66", "torch.json")))
put("torch", "hostile", json.dumps(torch, separators=(",", ":")).encode())
plain = dict(torch, final=False, samples=40,
             devices=[{"device": 0, "reserved_bytes": 8 << 20, "allocated_bytes": 6 << 20},
                      {"device": 1, "reserved_bytes": 2 << 20, "allocated_bytes": 0}],
             sites=[{"live_bytes": 4 << 20, "live_blocks": 2, "peak_bytes": 6 << 20,
                     "growing": True,
                     "frames": [{"file": "/home/u/model.py", "function": "forward", "line": 42},
                                {"file": "/home/u/train.py", "function": "step", "line": 17}]},
                    {"live_bytes": 2 << 20, "live_blocks": 1, "peak_bytes": 2 << 20,
                     "growing": False, "frames": []}])
put("torch", "plain", json.dumps(plain, separators=(",", ":")).encode())
# the verdicts the view records: one line growing, one grown then stopped
verdicts = dict(plain, sites=[
    dict(plain["sites"][0], growth={"shape": "staircase", "since_s": 12.0,
                                    "rate_bytes_per_s": 1048576.0, "stopped": False,
                                    "until_s": 40.0}),
    dict(plain["sites"][1], growth={"shape": "per-sample", "since_s": 0.1,
                                    "rate_bytes_per_s": 10485760.0, "stopped": True,
                                    "until_s": 0.4})])
put("torch", "verdicts", json.dumps(verdicts, separators=(",", ":")).encode())

# a report with the verdicts libgpuspy records (gpuspy 0.4 on): a site
# growing by its samples, one grown then stopped, one by JAX's counter
doc = json.loads(compact(os.path.join(fixtures, "growth", "node4-300", "report.json")))
grow = [x for x in doc["sites"] if x.get("growing")]
rest = [x for x in doc["sites"] if not x.get("growing")]
if grow:
    grow[0]["growth"] = {"shape": "staircase", "since_s": 1.5, "rate_bytes_per_s": 699050.7,
                         "stopped": False, "until_s": 30.0, "by": "samples"}
if len(grow) > 1:
    grow[1]["growth"] = {"shape": "per-sample", "since_s": 2.0, "rate_bytes_per_s": 4096.0,
                         "stopped": False, "until_s": 9.0, "by": "framework",
                         "framework": "jax", "place": "0"}
if rest:
    rest[0]["growth"] = {"shape": "per-sample", "since_s": 0.1, "rate_bytes_per_s": 1e7,
                         "stopped": True, "until_s": 0.4, "by": "marks"}
doc["frameworks"] = {"time": doc.get("end_time", 1764510040.0), "counters": {
    "jax": {"0": {"allocated": 8 << 20, "reserved": 16 << 20}}},
    "growth": {"jax": {"0": {"counter": "allocated", "shape": "per-sample", "since_s": 2.0,
                             "rate_bytes_per_s": 4096.0, "stopped": False, "until_s": 9.0,
                             "site": grow[1]["id"] if len(grow) > 1 else 1}}}}
put("process", "verdicts_report.json", json.dumps(doc, separators=(",", ":")).encode())

put("history", "valid", history(66))
put("history", "cut-last-line", history(66) + b'{"t":7.5,"dev":{"0":1')

for d in sorted(glob.glob(os.path.join(fixtures, "*", "*"))):
    if not os.path.isdir(d):
        continue
    parts = []
    for name in DIR_NAMES:
        path = os.path.join(d, name)
        if os.path.exists(path):
            parts.append(compact(path))
        elif name == "history.jsonl" and parts[0]:
            # a history of the report's process, for report --format csv
            parts.append(history(json.loads(parts[0])["pid"]))
        else:
            parts.append(b"")
    if not any(parts) or sum(map(len, parts)) > 40000:
        continue
    put("dir", os.path.relpath(d, fixtures).replace("/", "_"), SEP.join(parts))
