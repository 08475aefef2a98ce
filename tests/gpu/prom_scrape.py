#!/usr/bin/env python3
"""Scrapes the metrics endpoint of the one process that writes into
RUN_DIR, every INTERVAL seconds, until PID ends (scripts/gpu-check,
prom-workload).  It finds the address in <host>-<pid>/prometheus, and
writes OUT.jsonl (one line per scrape: time, status, seconds it took,
gpuspy_tracked_bytes summed over devices, sample time) and OUT.last.txt
(the last page).
Usage: prom_scrape.py RUN_DIR PID OUT [INTERVAL]"""
import glob, json, os, re, sys, time, urllib.request

run_dir, pid, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
interval = float(sys.argv[4]) if len(sys.argv) > 4 else 1.0


def alive():
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False


addr = None
while alive() and not addr:
    f = glob.glob(os.path.join(run_dir, "*", "prometheus"))
    if f:
        a = open(f[0]).read()
        addr = a.strip() if a.endswith("\n") else None
    time.sleep(0.1)
if not addr:
    print("prom_scrape: no endpoint came up", file=sys.stderr)
    sys.exit(1)

n = 0
with open(out + ".jsonl", "w") as log:
    nxt = time.time()
    while alive():
        t0 = time.time()
        rec = {"t": t0}
        try:
            with urllib.request.urlopen(f"http://{addr}/metrics", timeout=5) as r:
                text = r.read().decode()
                rec["status"] = r.status
            tracked = [float(v) for v in
                       re.findall(r"^gpuspy_tracked_bytes\{[^}]*\} (\S+)$", text, re.M)]
            st = re.findall(r"^gpuspy_sample_time_seconds (\S+)$", text, re.M)
            rec.update(tracked=sum(tracked), sample_time=float(st[0]) if st else None)
            with open(out + ".last.txt", "w") as f:
                f.write(text)
        except Exception as e:  # the process may be on its way out
            rec["error"] = str(e)
        rec["took"] = time.time() - t0
        log.write(json.dumps(rec) + "\n")
        log.flush()
        n += 1
        nxt += interval
        time.sleep(max(0.0, nxt - time.time()))
print(f"prom_scrape: {n} scrapes of {addr}")
