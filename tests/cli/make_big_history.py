#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write a process directory of SITES call sites and SAMPLES samples: its
report.json (make_big_report.py's, 3 frames a site) and a history.jsonl of
SAMPLES samples at 1 s, in gpuspy-history/1 as the library writes it (the
64 largest sites a series each, the rest summed in "other").

  make_big_history.py DIR [--sites 1000] [--samples 10000]

Each site's live bytes follow a sawtooth of its own period and phase;
site 1 also leaks 4 KiB a sample, the step pattern of a leak."""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_big_report  # noqa: E402

SERIES = 64


def value(i, j):
    base = (i % 7 + 1) * 4096
    v = base * (1 + (j + 13 * i) % (10 + i % 20))
    return v + (4096 * j if i == 0 else 0)


def write(d, nsites, nsamples, pid=4000):
    r = make_big_report.report(nsites, nsites, 3, pid)
    end = nsamples
    last = [value(i, end - 1) for i in range(nsites)]
    for i, s in enumerate(r["sites"]):
        s["live_bytes"] = last[i]
        s["peak_bytes"] = max(value(i, j) for j in range(0, nsamples, max(1, nsamples // 500)))
        s["peak_bytes"] = max(s["peak_bytes"], last[i])
        s["allocated_bytes"] = s["peak_bytes"] + last[i]
        s["freed_bytes"] = s["allocated_bytes"] - last[i]
    keys = ("live_bytes", "live_allocations", "peak_bytes", "allocated_bytes",
            "allocations", "freed_bytes", "frees")
    dev = {k: sum(s[k] for s in r["sites"]) for k in keys}
    r["kinds"]["device"] = dev
    r["leaked"] = {"bytes": dev["live_bytes"], "allocations": dev["live_allocations"]}
    r["peak"] = {"bytes": dev["peak_bytes"]}
    r["devices"] = [{"device": 0, "live_bytes": dev["live_bytes"],
                     "live_allocations": dev["live_allocations"]}]
    r["end_time"] = r["start_time"] + end + 0.5
    r["at_peak"]["bytes"] = sum(e["live_bytes"] for e in r["at_peak"]["sites"])
    r["at_peak"]["devices"] = [{"device": 0, "live_bytes": r["at_peak"]["bytes"]}]
    r["peak"]["bytes"] = max(r["peak"]["bytes"], r["at_peak"]["bytes"])
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "report.json"), "w") as f:
        json.dump(r, f, separators=(",", ":"))
        f.write("\n")
    with open(os.path.join(d, "history.jsonl"), "w") as f:
        f.write(json.dumps({"format": "gpuspy-history/1", "pid": pid, "start": r["start_time"],
                            "interval_s": 1.0, "recent": 256, "buckets": 256, "top": 32,
                            "max_sites": 64}, separators=(",", ":")) + "\n")
        for i in range(SERIES):
            f.write('{"site":%d,"kind":"device"}\n' % (i + 1))
        for j in range(nsamples):
            vals = [value(i, j) for i in range(nsites)]
            sites = ",".join('"%d":%d' % (i + 1, vals[i]) for i in range(SERIES))
            f.write('{"t":%d.5,"dev":{"0":%d},"sites":{%s},"other":%d}\n'
                    % (j, sum(vals), sites, sum(vals[SERIES:])))
            if j % 1000 == 999:
                f.write('{"t":%d.75,"event":"mark","label":"epoch %d"}\n' % (j, j // 1000))
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--sites", type=int, default=1000)
    ap.add_argument("--samples", type=int, default=10000)
    a = ap.parse_args()
    write(a.dir, a.sites, a.samples)


if __name__ == "__main__":
    main()
