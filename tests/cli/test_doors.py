#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""'gpuspy report' warns, one line on stderr per process, when an outside
view shows GPU memory that no door of gpuspy saw: NVML's figure for the
process beyond what gpuspy tracked, the graph pool's slack and 1 GiB per
GPU for the CUDA context and libraries; or the driver's graph memory
beyond the graph memory gpuspy counted.  And the text and JSON reports
show the graph memory and the calls per door.

    test_doors.py GPUSPY FIXTURES

The snapshots are made here from the fixture outside/vm-564/snapshot.json
(a real H200 snapshot: gpuspy tracked 2.0 GiB, NVML said 2.5 GiB).
"""
import copy
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

GiB = 2**30
MiB = 2**20


def report(gpuspy, doc, tmp, name, fmt="text"):
    """gpuspy report --format FMT of a process whose snapshot is DOC."""
    d = harness.process_dir(os.path.join(tmp, name), doc, "snapshot.json", host="vm", pid=564)
    return harness.run([gpuspy, "report", "--format", fmt, d])


def nvml(doc, used):
    doc = copy.deepcopy(doc)
    doc["outside"]["devices"][0]["processes"][1]["used_bytes"] = used
    return doc


def graph(doc, live, used, reserved):
    doc = copy.deepcopy(doc)
    doc["graph"] = {"alloc_nodes": 1, "alloc_node_bytes": GiB, "reserved_bytes": 0,
                    "launches": 1, "live_bytes": live, "live_allocations": 1 if live else 0,
                    "peak_bytes": GiB, "trims": 0,
                    "devices": [{"device": 0, "used_current": used, "used_high": GiB,
                                 "reserved_current": reserved, "reserved_high": GiB}]}
    return doc


def warnings(p):
    return [x for x in p.stderr.splitlines() if x.startswith("gpuspy report: warning: ")]


def main():
    gpuspy, fixtures = sys.argv[1], sys.argv[2]
    with open(os.path.join(fixtures, "outside", "vm-564", "snapshot.json")) as f:
        base = json.load(f)
    with tempfile.TemporaryDirectory(prefix="gpuspy-doors-") as tmp:
        p = report(gpuspy, base, tmp, "within")
        check(p.returncode == 0 and not warnings(p),
              "0.5 GiB beyond the tracked 2 GiB: within the allowance, no warning", p.stderr)

        p = report(gpuspy, nvml(base, 6 * GiB), tmp, "beyond")
        w = warnings(p)
        want = ("NVML says the process holds 6.0 GiB on 1 GPU, gpuspy tracked 2.0 GiB "
                "(allowed beside it: 1.0 GiB for the CUDA context and libraries, 0 B of "
                "graph pool): 3.0 GiB seen through no door gpuspy hooks")
        check(p.returncode == 0 and len(w) == 1 and w[0].endswith(want) and "vm-564" in w[0],
              "6 GiB by NVML: one line naming the figures",
              repr(p.stderr))

        p = report(gpuspy, nvml(base, 6 * GiB), tmp, "json", fmt="json")
        try:
            json.loads(p.stdout)
            is_json = True
        except ValueError:
            is_json = False
        check(p.returncode == 0 and is_json and len(warnings(p)) == 1,
              "--format json: the warning on stderr, stdout a document", repr(p.stderr))

        # the graph pool's slack (reserved 1 GiB, used 0) is memory CUDA holds
        # for the graphs: allowed
        doc = graph(nvml(base, int(3.4 * GiB)), 0, 0, GiB)
        p = report(gpuspy, doc, tmp, "slack")
        check(p.returncode == 0 and not warnings(p),
              "3.4 GiB by NVML with a 1 GiB graph pool: no warning", p.stderr)
        # the ledger names the pool's unused part on its own line, out of
        # the context's remainder
        p = report(gpuspy, doc, tmp, "slack-json", fmt="json")
        led = json.loads(p.stdout)["processes"][0].get("ledger") or [{}]
        dev0 = [d for d in led if d.get("device") == 0] or [{}]
        check(dev0[0].get("graph_pool_bytes") == GiB,
              "the ledger's graph pool: reserved 1 GiB less used 0", repr(led))
        p = report(gpuspy, graph(nvml(base, int(3.4 * GiB)), 0, 256 * MiB, GiB), tmp, "slack-txt")
        check(any(x.split()[:4] == ["+", "graph", "pool", "768.0"] for x in p.stdout.splitlines()),
              "the text ledger's graph pool: 768 MiB unused",
              p.stdout[:3000])

        doc = graph(base, 0, 512 * MiB, 512 * MiB)
        p = report(gpuspy, doc, tmp, "graph")
        w = warnings(p)
        want = ("the driver says CUDA graphs use 512.0 MiB, gpuspy saw 0 B of graph memory: "
                "graph memory made through a door gpuspy does not hook")
        check(p.returncode == 0 and len(w) == 1 and w[0].endswith(want),
              "graph memory the driver has and gpuspy did not see: one line", repr(p.stderr))

        doc = graph(base, 512 * MiB, 512 * MiB, 512 * MiB)
        doc["calls"] = {"runtime": 7, "driver": 0, "getproc": 7, "graph": 5}
        p = report(gpuspy, doc, tmp, "graph-seen")
        check(p.returncode == 0 and not warnings(p), "graph memory gpuspy saw: no warning",
              p.stderr)
        lines = p.stdout.splitlines()
        for want in ["    CUDA graphs: 1 memory node (1.0 GiB), 0 B still reserved by graphs; "
                     "1 launch; live 512.0 MiB in 1, peak 1.0 GiB; 0 trims",
                     "    GPU 0 graph pool (driver): used 512.0 MiB (high 1.0 GiB), "
                     "reserved 512.0 MiB (high 1.0 GiB)",
                     "    calls per door: runtime 7, driver 0, getproc 7, graph 5"]:
            check(want in lines, "the text report says %r" % want.strip(), p.stdout[:3000])
        p = report(gpuspy, doc, tmp, "graph-json", fmt="json")
        proc = json.loads(p.stdout)["processes"][0]
        check(proc.get("graph") == doc["graph"] and proc.get("calls") == doc["calls"],
              "--format json carries graph and calls",
              repr((proc.get("graph"), proc.get("calls"))))
    return harness.done()


if __name__ == "__main__":
    sys.exit(main())
