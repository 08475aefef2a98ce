#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""'gpuspy report' and 'gpuspy merge' on the fixtures must print exactly the
expected files.

    golden.py GPUSPY FIXTURES [--update]

The expected files were checked by hand against the numbers in
fixtures/README.md; --update rewrites them from the current output (review
the diff before committing it).
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

CASES = [
    (["report", "run"], "run.expected.txt"),
    (["report", "--format", "json", "run"], "run.expected.json"),
    (["report", "--top", "1", "run/node7-101"], "run-node7-101-top1.expected.txt"),
    (["report", "process/node7-4242"], "process.expected.txt"),
    (["report", "--format=json", "process"], "process.expected.json"),
    (["report", "--top", "1", "process"], "process-top1.expected.txt"),
    (["report", "python"], "python.expected.txt"),
    (["report", "--format", "json", "python"], "python.expected.json"),
    (["report", "pools"], "pools.expected.txt"),
    (["report", "--format", "json", "pools"], "pools.expected.json"),
    (["report", "--top", "1", "pools"], "pools-top1.expected.txt"),
    (["report", "oom"], "oom.expected.txt"),
    (["report", "--format", "json", "oom"], "oom.expected.json"),
    (["report", "--top", "2", "oom/node9-500/oom-2.json"], "oom-file-top2.expected.txt"),
    # a real H200 snapshot (tests/gpu/outside.py): killed-process fallback
    # to snapshot.json, the outside view beside the inside one
    (["report", "--top", "1", "outside"], "outside.expected.txt"),
    (["report", "--format", "json", "outside"], "outside.expected.json"),
    # the ledger: the frameworks' counters beside gpuspy's and NVML's
    (["report", "--top", "1", "frameworks"], "frameworks.expected.txt"),
    (["report", "--format", "json", "frameworks"], "frameworks.expected.json"),
    # growing sites; killed processes read from snapshot.json, or from an
    # oom-N.json newer than it; a snapshot.json named directly
    (["report", "growth"], "growth.expected.txt"),
    (["report", "--format", "json", "growth"], "growth.expected.json"),
    (["report", "--top", "1", "growth"], "growth-top1.expected.txt"),
    (["report", "growth/node4-302/snapshot.json"], "growth-node4-302-snapshot.expected.txt"),
    # a run whose command was killed by SIGKILL (run.json): one process
    # exited, one is read from its last snapshot, 3.1 s before the end
    (["report", "killed"], "killed.expected.txt"),
    (["report", "--format", "json", "killed"], "killed.expected.json"),
    (["report", "killed/node8-400"], "killed-node8-400.expected.txt"),
    # a process whose files folded sites past GPUSPY_MAX_SITES
    (["report", "folded"], "folded.expected.txt"),
    (["report", "--format", "json", "folded"], "folded.expected.json"),
    # what was live at a mark and at the peak, beside the rest: the sites
    # by what they held then, by the names the other lists give them
    (["report", "--at", "epoch 2", "timeline"], "timeline-at-epoch2.expected.txt"),
    (["report", "--format", "json", "--at", "epoch 2", "timeline"],
     "timeline-at-epoch2.expected.json"),
    (["report", "--peak", "--top", "2", "timeline"], "timeline-peak-top2.expected.txt"),
    # four ranks of one job, rank 2 the outlier
    (["report", "ranks"], "ranks.expected.txt"),
    (["report", "--format", "json", "ranks"], "ranks.expected.json"),
]


def merge_cases(fixtures):
    """'gpuspy merge' on each fixture that has an expected merge file:
    NAME-merge.expected.txt (text), NAME-merge.expected.json (JSON)."""
    cases = []
    for name in sorted(os.listdir(fixtures)):
        for suffix, fmt in (("-merge.expected.txt", []),
                            ("-merge.expected.json", ["--format", "json"])):
            if name.endswith(suffix):
                cases.append((["merge"] + fmt + [name[: -len(suffix)]], name))
    return cases


def check_ranks_outlier(gpuspy, fixtures):
    """The acceptance check of 'gpuspy merge', spelled out: of the four
    ranks, rank 2 is the outlier of site A (cache_batch) and of the leaked
    total; site B (bucket_alloc) has no outlier at all."""
    p = subprocess.run([gpuspy, "merge", "--format", "json", "ranks"], cwd=fixtures,
                       capture_output=True)
    if p.returncode != 0 or p.stderr:
        return "status %d, stderr %r" % (p.returncode, p.stderr)
    doc = json.loads(p.stdout)
    procs = doc["processes"]
    sites = {s["headline"]["function"]: s for s in doc["sites"]}

    def rank_of(spread):
        return procs[spread["outlier"]]["rank"] if "outlier" in spread else None

    if len(procs) != 4:
        return "%d processes, expected 4" % len(procs)
    if rank_of(doc["spread"]["leaked"]) != 2:
        return "the outlier of the leaked total is not rank 2: %r" % doc["spread"]["leaked"]
    if rank_of(sites["cache_batch"]["spread"]["leaked"]) != 2:
        return "the outlier of site A is not rank 2: %r" % sites["cache_batch"]["spread"]
    if any("outlier" in v for v in sites["bucket_alloc"]["spread"].values()):
        return "site B has an outlier: %r" % sites["bucket_alloc"]["spread"]
    return None


def check_many_processes(gpuspy, fixtures):
    """Beyond 8 processes 'gpuspy merge' gives min, median and max rather
    than a column each; processes on several hosts are named with theirs.
    Nine copies of the ranks/ reports, five on one host, four on another,
    two of them leaking 9 MiB: the first of those is the outlier."""
    with tempfile.TemporaryDirectory(prefix="gpuspy-merge-") as tmp:
        for i in range(9):
            with open(os.path.join(fixtures, "ranks", "node2-%d" % (200 + i % 4),
                                   "report.json")) as f:
                doc = json.load(f)
            doc["host"] = "nodeA" if i < 5 else "nodeB"
            doc["pid"] = 300 + i
            doc["environment"]["RANK"] = str(i)
            d = os.path.join(tmp, "%s-%d" % (doc["host"], doc["pid"]))
            os.makedirs(d)
            with open(os.path.join(d, "report.json"), "w") as f:
                json.dump(doc, f)
        p = subprocess.run([gpuspy, "merge", tmp], capture_output=True)
    if p.returncode != 0 or p.stderr:
        return "status %d, stderr %r" % (p.returncode, p.stderr)
    out = p.stdout.decode()
    for want in ("gpuspy merge: 9 processes, 2 call sites\n",
                 "  8  rank 8 on nodeB  nodeB  308     8  1.0 MiB   5.0 MiB",
                 "  leaked       min 1.0 MiB, median 1.0 MiB, max 9.0 MiB\n",
                 "  outlier: leaked rank 2 on nodeA (9.0 MiB), peak rank 2 on nodeA (9.0 MiB)\n",
                 "  outlier: none\n"):
        if want not in out:
            return "no %r in:\n%s" % (want, out)
    if "rank 0 on nodeA  rank 1" in out:
        return "a column per process for 9 processes:\n" + out
    return None


def main():
    gpuspy, fixtures = os.path.abspath(sys.argv[1]), sys.argv[2]
    update = "--update" in sys.argv[3:]
    for args, expected in CASES + merge_cases(fixtures):
        # relative paths, so that the output does not depend on the checkout
        p = subprocess.run([gpuspy] + args, cwd=fixtures, capture_output=True)
        path = os.path.join(fixtures, expected)
        what = "gpuspy " + " ".join(args)
        if not check(p.returncode == 0 and not p.stderr, what + ": runs",
                     "status %d, stderr %r" % (p.returncode, p.stderr)):
            continue
        if expected.endswith(".json"):
            json.loads(p.stdout)  # valid JSON, whatever else
        if update:
            with open(path, "wb") as f:
                f.write(p.stdout)
            print("updated", expected)
            continue
        with open(path, "rb") as f:
            want = f.read()
        if not check(p.stdout == want, "%s: as %s" % (what, expected)):
            subprocess.run(["diff", "-u", path, "-"], input=p.stdout)
    for what, fn in (("ranks: rank 2 the outlier of site A and of the leaked total, "
                         "none of site B", check_ranks_outlier),
                        ("of 9 processes on 2 hosts", check_many_processes)):
        why = fn(gpuspy, fixtures)
        check(not why, "gpuspy merge " + what, why)
    return harness.done()


if __name__ == "__main__":
    sys.exit(main())
