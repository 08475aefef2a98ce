#!/usr/bin/env python3
"""Write a large, valid gpuspy-process/1 report: many call sites, each with
its own frames, all live at the peak and at every mark.

  make_big_report.py OUT [--sites N] [--entries N] [--frames N] [--pid N]

--entries is the number of at_peak and marks entries together (at least
--sites: at_peak lists every site; the marks share out the rest, at most
64 of them, as a process keeps).  The default, 50,000 sites and 330,000
entries, is the shape of a real run's 23 MB report that took 33 s to
read when the reader was quadratic in sites.
"""
import argparse
import json
import sys

MIB = 1 << 20


def site(i, nframes):
    live = (i % 7 + 1) * 4096
    frames = [{"module": 0, "offset": 0x1000 + 16 * i, "symbol": f"alloc_{i}"}]
    for k in range(1, nframes):
        frames.append({"module": k % 2, "offset": 0x800 + k, "symbol": f"caller_{k}"})
    return {
        "id": i + 1,
        "kind": "device",
        "api": "cudaMalloc",
        "door": "runtime",
        "live_bytes": live,
        "live_allocations": 1,
        "peak_bytes": 2 * live,
        "allocated_bytes": 2 * live,
        "allocations": 2,
        "freed_bytes": live,
        "frees": 1,
        "first_seq": i + 1,
        "frames": frames,
    }


def counters(sites):
    keys = ("live_bytes", "live_allocations", "peak_bytes", "allocated_bytes",
            "allocations", "freed_bytes", "frees")
    return {k: sum(s[k] for s in sites) for k in keys}


def zero():
    return {k: 0 for k in ("live_bytes", "live_allocations", "peak_bytes",
                           "allocated_bytes", "allocations", "freed_bytes", "frees")}


def report(nsites, nentries, nframes, pid):
    sites = [site(i, nframes) for i in range(nsites)]
    device = counters(sites)
    at_peak_sites = [{"site": s["id"], "live_bytes": s["live_bytes"]} for s in sites]
    rest = max(0, nentries - len(at_peak_sites))
    marks = []
    if nsites and rest:
        nmarks = min(64, -(-rest // nsites))
        per = -(-rest // nmarks)
        for m in range(nmarks):
            n = min(per, rest)
            rest -= n
            chosen = [sites[(m * 7919 + k) % nsites] for k in range(n)]
            marks.append({
                "time": 1764510001.0 + m,
                "label": f"step {m}",
                "live_bytes": sum(s["live_bytes"] for s in chosen),
                "sites": [{"site": s["id"], "live_bytes": s["live_bytes"]} for s in chosen],
            })
    r = {
        "format": "gpuspy-process/1",
        "gpuspy_version": "0.1.0",
        "host": "bignode",
        "pid": pid,
        "exe": "/nonexistent/gpuspy-fixture/bigapp",
        "command": ["./bigapp"],
        "start_time": 1764510000.0,
        "end_time": 1764510100.0,
        "complete": True,
        "depth": 16,
        "leaked": {"bytes": device["live_bytes"], "allocations": device["live_allocations"]},
        "peak": {"bytes": device["peak_bytes"]},
        "kinds": {"device": device, "managed": zero(), "vmm": zero(), "pinned": zero()},
        "untracked_frees": 0,
        "devices": [{"device": 0, "live_bytes": device["live_bytes"],
                     "live_allocations": device["live_allocations"]}],
        "modules": [
            {"path": "/nonexistent/gpuspy-fixture/bigapp", "build_id": "b16b00b5",
             "base": 93824992231424},
            {"path": "/nonexistent/gpuspy-fixture/libc.so.6", "build_id": "",
             "base": 140737351856128},
        ],
        "sites": sites,
        "at_peak": {"bytes": device["live_bytes"], "time": 1764510050.0,
                    "devices": [{"device": 0, "live_bytes": device["live_bytes"]}],
                    "sites": at_peak_sites},
    }
    if marks:
        r["marks"] = marks
        r["mark"] = marks[-1]["label"]
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--sites", type=int, default=50000)
    ap.add_argument("--entries", type=int, default=330000)
    ap.add_argument("--frames", type=int, default=3)
    ap.add_argument("--pid", type=int, default=4000)
    a = ap.parse_args()
    r = report(a.sites, a.entries, a.frames, a.pid)
    with (sys.stdout if a.out == "-" else open(a.out, "w")) as f:
        json.dump(r, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
