#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The wrong-device verdict of 'gpuspy report' and 'gpuspy merge'
(gpuspy-report(1), WRONG DEVICE) on hand-made processes: which device a
rank owns from the RANK and LOCAL_RANK it recorded and the devices it saw,
what it holds elsewhere (tracked allocations, and NVML's figure beyond
them: a context), in text and JSON; no verdict without a rank, with one
device, or where the rank keeps to its own; a rank that cannot be parsed
is no rank; an allocations.json that cannot be read leaves the finding
without its sites, said in one line.

    test_wrong_device.py GPUSPY FIXTURES

The processes are made from the fixture outside/vm-564/snapshot.json (a
real H200 snapshot: 2.0 GiB tracked on device 0, NVML's 2690646016 bytes
for the process there).
"""
import copy
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

GiB = 2**30
TRACKED, NVML = 2 * GiB, 2690646016

gpuspy, fixtures = sys.argv[1:3]
base = json.load(open(os.path.join(fixtures, "outside", "vm-564", "snapshot.json")))


def doc(env, ndevices=2, outside=True):
    d = copy.deepcopy(base)
    d["environment"] = dict(d["environment"], **env)
    d["cuda"] = {"driver_version": 13000,
                 "devices": [{"device": i, "name": "NVIDIA H200", "total_bytes": 150754820096}
                             for i in range(ndevices)]}
    if not outside:
        del d["outside"]
    return d


def run(name, d, file="snapshot.json", extra=None):
    where = os.path.join(harness.tempdir(), name)
    pd = harness.process_dir(where, d, file, host="vm", pid=564)
    for fname, text in (extra or {}).items():
        with open(os.path.join(pd, fname), "w") as f:
            f.write(text)
    text = harness.run([gpuspy, "report", where])
    rj = harness.run([gpuspy, "report", "--format", "json", where])
    mj = harness.run([gpuspy, "merge", "--format", "json", where])
    ok = text.returncode == rj.returncode == mj.returncode == 0
    check(ok, name + ": report and merge read it", text.stderr + rj.stderr + mj.stderr)
    if not ok:
        return text, [], []
    return (text, json.loads(rj.stdout).get("wrong_device"),
            json.loads(mj.stdout).get("wrong_device"))


def wrong_section(text):
    parts = text.split("\nWRONG DEVICE\n", 1)
    return parts[1].split("\n\n", 1)[0].splitlines() if len(parts) == 2 else None


KEYS = ("rank", "local_rank", "own_device", "device", "bytes", "allocations_bytes",
        "context_bytes", "nvml", "what", "line")

# name, environment, devices seen, NVML's view, the finding (None: none)
CASES = [
    ("rank 1 on device 0, NVML's view", {"RANK": "1", "LOCAL_RANK": "1"}, 2, True,
     dict(rank=1, local_rank=1, own_device=1, device=0, bytes=NVML, allocations_bytes=TRACKED,
          context_bytes=NVML - TRACKED, nvml=True, what="context and allocations",
          line="rank 1 (LOCAL_RANK 1, its device 1) holds 2.5 GiB on device 0: "
               "context and allocations")),
    ("rank 1 on device 0, no NVML", {"RANK": "1", "LOCAL_RANK": "1"}, 2, False,
     dict(rank=1, local_rank=1, own_device=1, device=0, bytes=TRACKED,
          allocations_bytes=TRACKED, context_bytes=0, nvml=False, what="allocations",
          line="rank 1 (LOCAL_RANK 1, its device 1) holds 2.0 GiB on device 0: allocations")),
    # no LOCAL_RANK: RANK mod the devices
    ("rank 3 without LOCAL_RANK", {"RANK": "3"}, 2, False,
     dict(rank=3, local_rank=None, own_device=1, device=0, bytes=TRACKED,
          allocations_bytes=TRACKED, context_bytes=0, nvml=False, what="allocations",
          line="rank 3 (its device 1) holds 2.0 GiB on device 0: allocations")),
    # a LOCAL_RANK that is no number is no LOCAL_RANK
    ("a hostile LOCAL_RANK", {"RANK": "1", "LOCAL_RANK": "1\u00e9"}, 2, False,
     dict(rank=1, local_rank=None, own_device=1, device=0, bytes=TRACKED,
          allocations_bytes=TRACKED, context_bytes=0, nvml=False, what="allocations",
          line="rank 1 (its device 1) holds 2.0 GiB on device 0: allocations")),
    ("rank 2 of the second node on its device 0", {"RANK": "2", "LOCAL_RANK": "0"}, 2, True,
     None),
    ("rank 1 seeing one device", {"RANK": "1", "LOCAL_RANK": "1"}, 1, True, None),
    ("no rank", {}, 2, True, None),
    ("a hostile RANK alone", {"RANK": "-1"}, 2, True, None),
]

for name, env, ndev, outside, want in CASES:
    text, rw, mw = run(name.replace(" ", "-"), doc(env, ndev, outside))
    sec = wrong_section(text.stdout)
    if want is None:
        check(sec is None and "wrong device:" not in text.stdout,
              name + ": no WRONG DEVICE in the text", text.stdout[:600])
        check(rw is None and mw is None, name + ": no wrong_device in report's and merge's JSON")
        continue
    check(sec is not None and sec[:1] == ["  " + want["line"]], name + ": the verdict's line",
          text.stdout[:1500])
    check(sec is not None and sec[-1] == "    (its call sites are named from the live "
          "allocations at exit: this process did not exit)", name + ": why no site is named",
          sec)
    for what, w in (("report", rw), ("merge", mw)):
        have = [{k: x.get(k) for k in KEYS} for x in (w or [])]
        check(have == [want], "%s: %s's wrong_device" % (name, what),
              "want %r\nhave %r" % ([want], have))
        check(all("sites" not in x for x in (w or [])),
              "%s: %s: no sites from a snapshot" % (name, what))
    if want["allocations_bytes"] and want["context_bytes"]:
        check(sec is not None and "    allocations: 2.0 GiB; context: 518.0 MiB (NVML's figure "
              "beyond them)" in sec, name + ": the split of allocations and context", sec)

# The same process at exit, its allocations.json torn: the finding stays,
# without its sites, and the file is named in one warning line.
d = doc({"RANK": "1", "LOCAL_RANK": "1"}, 2, False)
del d["snapshot"]
text, rw, mw = run("torn-allocations", d, "report.json", {"allocations.json": '{"format": '})
warn = [l for l in text.stderr.splitlines() if "allocations.json" in l]
check(len(warn) == 1 and "warning" in warn[0] and "not named" in warn[0],
      "a torn allocations.json: one warning line naming it", text.stderr)
check(wrong_section(text.stdout)[-1:] == ["    (its call sites are not named: its allocations.json "
                                          "could not be read)"],
      "a torn allocations.json: said so in WRONG DEVICE", text.stdout[:1200])
check(rw is not None and len(rw) == 1 and rw[0].get("bytes") == TRACKED and "sites" not in rw[0],
      "a torn allocations.json: the finding without sites", rw)

sys.exit(harness.done())
