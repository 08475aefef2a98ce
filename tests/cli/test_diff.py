#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""'gpuspy diff' on reports made here from the fixtures:

 - --at LABEL compares live bytes per site at the last mark of that label;
   a label one side lacks is one line and status 2;
 - the settings of both runs side by side, differences starred;
 - sizes: 512K, 1.5M, 2MiB, 64kb; bad sizes and bad usage: status 2;
 - the noise threshold hides small changes in the text, never in the JSON;
 - 20+ corrupted inputs, on either side: status 2 and exactly one line on
   stderr naming the file at fault.

    test_diff.py GPUSPY FIXTURES
"""
import copy
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

cli, fixtures = sys.argv[1:3]
BASE = json.load(open(os.path.join(fixtures, "process", "node7-4242", "report.json")))
MIB = 1 << 20


def write(tmp, name, doc, raw=None):
    """A run NAME under TMP of one process whose report.json is DOC (or
    RAW, as it is)."""
    harness.process_dir(os.path.join(tmp, name), doc if raw is None else raw, host="node7")
    return os.path.join(tmp, name)


diff = harness.Cli(cli, "diff", timeout=30)


def with_marks(doc, marks):
    doc = copy.deepcopy(doc)
    doc["marks"] = marks
    doc["mark"] = marks[-1]["label"]
    return doc


tmp = harness.tempdir()
try:
    # --- --at: site 1 (leak_driver) holds 1 then 3 MiB at "epoch 1" in OLD,
    # and 2 MiB in NEW (its last "epoch 1"); site 2 (train_step) 8 MiB in both.
    old = write(tmp, "old", with_marks(BASE, [
        {"time": 1764510001.0, "label": "warmup", "live_bytes": 0, "sites": []},
        {"time": 1764510002.0, "label": "epoch 1", "live_bytes": 9 * MIB,
         "sites": [{"site": 1, "live_bytes": MIB}, {"site": 2, "live_bytes": 8 * MIB}]},
        {"time": 1764510003.0, "label": "epoch 1", "live_bytes": 11 * MIB,
         "sites": [{"site": 1, "live_bytes": 3 * MIB}, {"site": 2, "live_bytes": 8 * MIB}]}]))
    new_doc = with_marks(BASE, [
        {"time": 1764510002.0, "label": "epoch 1", "live_bytes": 10 * MIB,
         "sites": [{"site": 1, "live_bytes": 2 * MIB}, {"site": 2, "live_bytes": 8 * MIB}]}])
    new_doc["environment"] = dict(BASE.get("environment", {}),
                                  PYTORCH_CUDA_ALLOC_CONF="backend:cudaMallocAsync")
    new_doc["cuda"] = {"driver_version": 13000, "devices": [
        {"device": 0, "name": "NVIDIA H200", "total_bytes": 150754820096}]}
    new = write(tmp, "new", new_doc)

    p = diff("--at", "epoch 1", "--format", "json", old, new)
    check(p.returncode == 0 and p.stderr == "", "--at epoch 1: status %d %r" % (p.returncode, p.stderr))
    j = json.loads(p.stdout) if p.returncode == 0 else {"sites": [], "totals": {}}
    at = {s["headline"].get("function"): s["at"] for s in j["sites"] if "at" in s and "headline" in s}
    check(at.get("leak_driver") == {"old": 3 * MIB, "new": 2 * MIB, "delta": -MIB},
          "the last 'epoch 1' of each side: leak_driver 3 MiB -> 2 MiB (%r)" % at.get("leak_driver"))
    check(at.get("train_step") == {"old": 8 * MIB, "new": 8 * MIB, "delta": 0},
          "train_step 8 MiB at both marks")
    check(j.get("totals", {}).get("at") == {"old": 11 * MIB, "new": 10 * MIB, "delta": -MIB},
          "the marks' totals")
    check(j.get("at") == "epoch 1" and j["old"].get("marked_processes") == 1,
          "the JSON says which mark, and how many processes carry it")
    check(j["sites"] and j["sites"][0]["headline"]["function"] == "leak_driver",
          "sorted by the change at the mark")

    p = diff("--at", "epoch 1", "--fail-on-growth", "0", old, new)
    check(p.returncode == 0, "--at: a site that shrank at the mark is not growth (status %d)" % p.returncode)
    p = diff("--at", "epoch 1", "--fail-on-growth", "512K", new, old)
    check(p.returncode == 1 and "FAIL: 1 site grew" in p.stdout,
          "--at, the other way round: +1 MiB at the mark fails 512K (status %d)" % p.returncode)
    check('live at "epoch 1"' in p.stdout and "at the mark 2.0 MiB" in p.stdout,
          "the text shows the live bytes at the mark")

    p = diff("--at", "epoch 2", old, new)
    check(p.returncode == 2 and len(p.stderr.splitlines()) == 1 and old in p.stderr and
          '"epoch 2"' in p.stderr and '"warmup", "epoch 1"' in p.stderr,
          "an unknown mark: one line naming the run and its marks: %r" % p.stderr)
    p = diff("--at", "warmup", old, new)
    check(p.returncode == 2 and new in p.stderr and "no marks" not in p.stderr,
          "a mark only OLD has: one line naming NEW: %r" % p.stderr)
    p = diff("--at", "x", os.path.join(fixtures, "process"), new)
    check(p.returncode == 2 and "it has no marks" in p.stderr,
          "a run without marks: says so: %r" % p.stderr)

    # --- settings side by side
    p = diff(old, new)
    lines = p.stdout.splitlines()
    alloc = [l for l in lines if "PYTORCH_CUDA_ALLOC_CONF" in l]
    check(len(alloc) == 1 and alloc[0].startswith("*") and "expandable_segments:True" in alloc[0]
          and "backend:cudaMallocAsync" in alloc[0],
          "the allocator setting, both values, starred: %r" % alloc)
    gpus = [l for l in lines if l[2:].startswith("GPUs")]
    check(len(gpus) == 1 and gpus[0].startswith("*") and "NVIDIA H200 (140.4 GiB)" in gpus[0]
          and " - " in gpus[0], "the GPU, absent from OLD: %r" % gpus)
    same = [l for l in lines if l[2:].startswith("gpuspy ")]
    check(len(same) == 1 and same[0].startswith(" "), "equal settings are not starred")
    check(lines.index(alloc[0]) < lines.index(next(l for l in lines if l.startswith("TOTALS"))),
          "settings come before the totals")

    # --- threshold: 1 KiB of managed memory is below the default 64 KiB
    small = copy.deepcopy(BASE)
    for s in small["sites"]:
        if s["kind"] == "managed":
            s["allocated_bytes"] += 512
            s["live_bytes"] += 512
            s["peak_bytes"] += 512
    small["kinds"]["managed"]["allocated_bytes"] += 512
    small["kinds"]["managed"]["live_bytes"] += 512
    small["kinds"]["managed"]["peak_bytes"] += 512
    small["leaked"]["bytes"] += 512
    small["peak"]["bytes"] += 512
    sm = write(tmp, "small", small)
    base = write(tmp, "base", BASE)
    p = diff(base, sm)
    check(p.returncode == 0 and "  none" in p.stdout and "1 other site changed less" in p.stdout,
          "a 512 B change is below the default threshold: %r" % p.stdout[-300:])
    p = diff("--threshold", "0", base, sm)
    check("CHANGED   +512 B" in p.stdout, "--threshold 0 lists it")
    p = diff("--format", "json", base, sm)
    j = json.loads(p.stdout)
    ch = [s for s in j["sites"] if s["status"] == "changed"]
    check(len(ch) == 1 and ch[0]["leaked"]["delta"] == 512 and j["threshold"] == 65536,
          "the JSON has every site, the threshold too")
    for size, ok in (("511", 1), ("512", 0), ("0.5K", 0), ("0.4k", 1), ("1KiB", 0), ("1kb", 0)):
        p = diff("--fail-on-growth", size, base, sm)
        check(p.returncode == ok, "--fail-on-growth %s against +512 B: status %d" % (size, p.returncode))

    # --- usage
    for argv, what in (([], "no runs"), ([base], "one run"), ([base, base, base], "three runs"),
                       (["--fail-on-growth", "1Q", base, base], "a bad size"),
                       (["--fail-on-growth", "-1", base, base], "a negative size"),
                       (["--fail-on-growth", "99999999999T", base, base], "a size beyond 64 bits"),
                       (["--fail-on-growth", "", base, base], "an empty size"),
                       (["--fail-on-growth", "1 ", base, base], "a size and a blank"),
                       (["--fail-on-growth", "1 iB", base, base], "a blank before iB"),
                       (["--threshold", "1.K", base, base], "a bad threshold"),
                       (["--format", "xml", base, base], "a bad format"),
                       (["--top", "x", base, base], "a bad --top"),
                       (["--at", "", base, base], "an empty label"),
                       (["--old", base, base, base], "--old with positional runs"),
                       (["--old", base], "--old without --new"),
                       (["--bogus", base, base], "an unknown option"),
                       (["--fail-on-growth"], "a missing value")):
        p = diff(*argv)
        check(p.returncode == 2 and len(p.stderr.splitlines()) == 1 and p.stdout == "",
              "usage, %s: status %d, %r" % (what, p.returncode, p.stderr))

    # --- corrupted inputs, each on either side
    def corrupt(name, doc=None, raw=None):
        return name, write(tmp, "bad-" + name, doc, raw)

    def changed(path, value):
        doc = copy.deepcopy(BASE)
        obj = doc
        keys = path.split(".")
        for k in keys[:-1]:
            obj = obj[int(k)] if k.isdigit() else obj[k]
        if value is None:
            del obj[keys[-1]]
        else:
            obj[int(keys[-1]) if keys[-1].isdigit() else keys[-1]] = value
        return doc

    text = json.dumps(BASE)
    good_marks = with_marks(BASE, [{"time": 1.0, "label": "a", "live_bytes": 0, "sites": []}])
    bad = [
        corrupt("empty", raw=""),
        corrupt("truncated-half", raw=text[: len(text) // 2]),
        corrupt("truncated-1", raw=text[:-1]),
        corrupt("garbage", raw="\x00\x01\xffgarbage\n"),
        corrupt("not-utf8", raw=b"{\"format\": \"gpuspy-process/1\", \"host\": \"\xff\xfe\"}"),
        corrupt("array", raw="[1, 2, 3]"),
        corrupt("wrong-version", changed("format", "gpuspy-process/2")),
        corrupt("wrong-format", changed("format", "gpuspy-diff/1")),
        corrupt("no-format", changed("format", None)),
        corrupt("pid-string", changed("pid", "4242")),
        corrupt("leaked-negative", changed("leaked.bytes", -1)),
        corrupt("peak-real", changed("peak.bytes", 1.5)),
        corrupt("sites-object", changed("sites", {})),
        corrupt("site-kind", changed("sites.0.kind", "cpu")),
        corrupt("site-live-string", changed("sites.0.live_bytes", "3")),
        corrupt("frame-null", changed("sites.0.frames", [None])),
        corrupt("modules-string", changed("modules", "a")),
        corrupt("environment-int", changed("environment", {"RANK": 1})),
        corrupt("cuda-string", dict(copy.deepcopy(BASE), cuda="13.0")),
        corrupt("cuda-devices-missing", dict(copy.deepcopy(BASE), cuda={"driver_version": 13000})),
        corrupt("cuda-name-int", dict(copy.deepcopy(BASE), cuda={"driver_version": 13000,
                                                               "devices": [{"device": 0, "name": 7,
                                                                            "total_bytes": 1}]})),
        corrupt("marks-object", dict(copy.deepcopy(good_marks), marks={})),
        corrupt("mark-label-int", dict(copy.deepcopy(good_marks),
                                       marks=[{"time": 1.0, "label": 3, "sites": []}])),
        corrupt("mark-unknown-site", with_marks(BASE, [{"time": 1.0, "label": "a", "live_bytes": 1,
                                                        "sites": [{"site": 99, "live_bytes": 1}]}])),
        corrupt("mark-negative", with_marks(BASE, [{"time": 1.0, "label": "a", "live_bytes": -5,
                                                    "sites": []}])),
        corrupt("mark-no-time", with_marks(BASE, [{"label": "a", "sites": []}])),
        corrupt("version-int", changed("gpuspy_version", 1)),
    ]
    check(len(bad) >= 20, "%d corrupted inputs" % len(bad))
    for name, path in bad:
        report = os.path.join(path, "node7-4242", "report.json")
        for argv, side in (([base, path], "NEW"), ([path, base], "OLD"),
                           (["--strict", "--old", base, "--old", path, "--new", base],
                            "second OLD, --strict")):
            p = diff(*argv)
            want = ("gpuspy diff: 1 of 2 processes could not be read: " +
                    os.path.join(path, "node7-4242") + ": report.json: ") if "strict" in side \
                else "gpuspy diff: " + report + ":"
            check(p.returncode == 2 and len(p.stderr.splitlines()) == 1 and
                  p.stderr.startswith(want) and p.stdout == "",
                  "%s as %s: status %d, %r" % (name, side, p.returncode, p.stderr.strip()[:150]))
        # beside a good process of its side: read around, said, the diff goes on
        p = diff("--old", base, "--old", path, "--new", base)
        check(p.returncode == 0 and len(p.stderr.splitlines()) == 1 and
              p.stderr.startswith("gpuspy diff: 1 of 2 processes could not be read: " +
                                  os.path.join(path, "node7-4242") + ": report.json: ") and
              "OLD: 1 of 2 processes could not be read" in p.stdout,
              "%s as second OLD: read around: status %d, %r" % (name, p.returncode,
                                                               p.stderr.strip()[:150]))
    p = diff(base, os.path.join(tmp, "does-not-exist"))
    check(p.returncode == 2 and len(p.stderr.splitlines()) == 1 and "does-not-exist" in p.stderr,
          "a missing path: one line naming it")
    os.makedirs(os.path.join(tmp, "empty-run"))
    p = diff(os.path.join(tmp, "empty-run"), base)
    check(p.returncode == 2 and len(p.stderr.splitlines()) == 1 and "empty-run" in p.stderr,
          "a directory without reports: one line naming it: %r" % p.stderr)
finally:
    shutil.rmtree(tmp)

sys.exit(harness.done())
