#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""'gpuspy exporter': the metrics of every running process of a run
directory, programs on the fake driver (tests/cli/leaker.c), fetched over
HTTP:
 - four processes, RANK 0, 1, 1 again and none: rank labels 0, 1, 1.1,
   none (that one under GPUSPY_LIMIT=1G: gpuspy_limit_bytes for it
   alone); host and rank on every series, pid on gpuspy_info only; each
   process's leaking site with the value 'gpuspy report' gives it; a
   process that exited (report.json) and a stale snapshot (a killed one)
   are not served; 'promtool check metrics' is clean;
 - hostile run directories: a half-written and a corrupt snapshot (one
   line each, said once, the others served), a process directory that
   vanishes, the run directory that vanishes and comes back, one that does
   not exist yet, an output directory whose 'latest' points outside it;
 - the rate limit: scrapes within a second get one reading, a burst of
   requests no more readings than seconds;
 - SIGINT and SIGTERM end it with 0; a non-loopback address is said; bad
   usage is status 2 with one line;
 - its server: 404, 405, garbage; a slow client and 200 connections at
   once do not keep another client from its page.

    test_exporter.py GPUSPY LIBGPUSPY FAKE_DIR LEAKER
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request

import promtest
from promtest import Exporter, parse, series

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

gpuspy, lib, fake, prog = (os.path.abspath(a) for a in sys.argv[1:5])
host = os.uname().nodename
KiB = 1024


run = harness.Cli(gpuspy, timeout=30, env=promtest.clean_env(fake))


def site_value(samples, **labels):
    """The value of the keep_output site's series with LABELS, or None."""
    s = [x for x in series(samples, "gpuspy_site_live_bytes", **labels)
         if x[1].get("name", "").startswith("keep_output ")]
    return s[0][2] if len(s) == 1 else None


def report_site(path):
    """(key, leaked bytes) of the keep_output site in 'gpuspy report' of PATH."""
    p = run("report", "--format", "json", path)
    if p.returncode != 0:
        return None
    for s in json.loads(p.stdout)["sites"]:
        h = s.get("headline") or {}
        if h.get("function") == "keep_output":
            return s["key"], s["leaked_bytes"]
    return None


def usage():
    for args, what in (([], "no RUN_DIR"), (["a", "b"], "two RUN_DIRs"),
                       (["--listen", "localhost:1", "d"], "a host name for --listen"),
                       (["--listen", "1.2.3:80", "d"], "a bad address"),
                       (["--listen", "127.0.0.1:65536", "d"], "a port out of range"),
                       (["--listen"], "--listen without a value"),
                       (["--bogus", "d"], "an unknown option")):
        p = run("exporter", *args)
        lines = p.stderr.strip().split("\n")
        check(p.returncode == 2 and len(lines) == 1 and lines[0].startswith("gpuspy exporter: "),
              f"usage: {what}: status 2, one line", (p.returncode, p.stderr))


def latest_outside(tmp):
    """An output directory whose 'latest' leads out of it is refused, as
    'gpuspy report' refuses it; one whose 'latest' is a run there is that run."""
    out = os.path.join(tmp, "gpuspy-out")
    elsewhere = os.path.join(tmp, "elsewhere", "20261201T000000Z-x-1")
    os.makedirs(elsewhere)
    os.makedirs(out)
    os.symlink(elsewhere, os.path.join(out, "latest"))
    p = run("exporter", "--listen", "127.0.0.1:0", out, timeout=10)
    lines = p.stderr.strip().split("\n")
    check(p.returncode == 2 and len(lines) == 1 and "latest" in lines[0]
          and "outside" in lines[0], "latest pointing outside: status 2, one line naming it",
          (p.returncode, p.stderr))
    os.unlink(os.path.join(out, "latest"))
    run_dir = os.path.join(out, "20261201T000000Z-x-2")
    os.makedirs(run_dir)
    os.symlink("20261201T000000Z-x-2", os.path.join(out, "latest"))
    x = Exporter(gpuspy, out)
    lines = x.before + [x.first] + x.drain()
    check(any("reading " + run_dir in l for l in x.before) and x.url is not None,
          "an output directory: its latest run is served", lines)
    check(x.stop() == 0, "SIGTERM: status 0")


def main_case(tmp):
    run_dir = os.path.join(tmp, "run")
    procs = {}
    try:
        for name, kib, rank in (("a", 1024, "0"), ("b", 2048, "1"), ("c", 3072, "1"),
                                ("d", 512, None)):
            extra = {"RANK": rank} if rank is not None else {}
            # a capped run (GPUSPY_LIMIT), which it never reaches
            if name == "d":
                extra["GPUSPY_LIMIT"] = "1G"
            procs[name] = promtest.start_leaker(lib, fake, prog, run_dir, kib=kib, **extra)
        # a process that exited: its report.json is not served
        r = subprocess.run([prog, "2", "1", "64"], capture_output=True, timeout=30,
                           env=dict(promtest.clean_env(fake), LD_PRELOAD=promtest.preload(lib),
                                    GPUSPY_OUTPUT_DIR=run_dir, GPUSPY_INTERVAL="100ms"))
        check(r.returncode == 0, "a leaker that exits ran")
        exited = [d for d in os.listdir(run_dir)
                  if os.path.exists(os.path.join(run_dir, d, "report.json"))]
        check(len(exited) == 1, "it wrote its report.json", os.listdir(run_dir))
        # a killed process's last snapshot, an hour old: not served
        a_dir = os.path.join(run_dir, f"{host}-{procs['a'].pid}")
        doc = json.load(open(os.path.join(a_dir, "snapshot.json")))
        for k in ("start_time", "end_time"):
            doc[k] -= 3600
        stale = os.path.join(run_dir, f"{host}-999999")
        os.makedirs(stale)
        doc["pid"] = 999999
        json.dump(doc, open(os.path.join(stale, "snapshot.json"), "w"))
        check(run("report", stale).returncode == 0, "the stale snapshot is a valid report",
              run("report", stale).stderr)

        # a running process that allocated nothing for an hour: its
        # snapshot is that old (and its start no longer its pid's), its
        # history, a line every interval, says it runs
        b_snap = os.path.join(run_dir, f"{host}-{procs['b'].pid}", "snapshot.json")
        doc = json.load(open(b_snap))
        for k in ("start_time", "end_time"):
            doc[k] -= 3600
        json.dump(doc, open(b_snap + ".tmp", "w"))
        os.rename(b_snap + ".tmp", b_snap)

        x = Exporter(gpuspy, run_dir)
        check(x.url is not None, "exporter: it says where it serves", x.first)
        status, ctype, page = x.get()
        check(status == 200 and ctype.startswith("text/plain; version=0.0.4"),
              "GET /metrics: 200, the exposition format", (status, ctype))
        samples = parse(page)
        info = series(samples, "gpuspy_info")
        ranks = {s[1]["pid"]: s[1]["rank"] for s in info}
        want = {str(procs["a"].pid): "0", str(procs["b"].pid): "1",
                str(procs["c"].pid): "1.1", str(procs["d"].pid): "none"}
        check(ranks == want, "the running processes, with their rank labels "
              "(a second RANK=1 is 1.1; none without RANK)", (ranks, want))
        check(all(s[1].get("host") == host and "rank" in s[1] for s in samples),
              "host and rank on every series",
              [s for s in samples if "rank" not in s[1] or s[1].get("host") != host][:3])
        check(not [s for s in samples if "pid" in s[1] and s[0] != "gpuspy_info"],
              "pid on gpuspy_info only")
        for name, kib in (("a", 1024), ("b", 2048), ("c", 3072), ("d", 512)):
            rank = want[str(procs[name].pid)]
            got = site_value(samples, rank=rank)
            rep = report_site(os.path.join(run_dir, f"{host}-{procs[name].pid}"))
            check(rep is not None and got == rep[1] == 3 * kib * KiB,
                  f"rank {rank}: keep_output's series holds what gpuspy report says "
                  f"({3 * kib} KiB)", (got, rep))
            if rep:
                s = series(samples, "gpuspy_site_live_bytes", rank=rank, site=rep[0])
                check(len(s) == 1, f"rank {rank}: its site label is the report's key {rep[0]}",
                      series(samples, "gpuspy_site_live_bytes", rank=rank))
        lim = series(samples, "gpuspy_limit_bytes")
        check([(s[1]["rank"], s[2]) for s in lim] == [("none", float(1 << 30))],
              "gpuspy_limit_bytes: the capped process's limit, for it alone", lim)
        t = series(samples, "gpuspy_sample_time_seconds", rank="1")
        check(t and abs(t[0][2] - time.time()) < 10,
              "an old snapshot beside a fresh history: served, its sample time the history's",
              (t, time.time()))
        if shutil.which("promtool"):
            p = subprocess.run(["promtool", "check", "metrics"], input=page,
                               capture_output=True, text=True, timeout=30)
            check(p.returncode == 0 and not p.stdout.strip() and not p.stderr.strip(),
                  "promtool check metrics: clean", p.stdout + p.stderr)
        else:
            print("skip promtool check metrics: no promtool")
        check(x.drain() == [], "nothing said on stderr", x.said)

        # a process directory named itself: that one process
        one = Exporter(gpuspy, a_dir)
        status, _, page = one.get() if one.url else (0, "", "")
        info = series(parse(page), "gpuspy_info") if status == 200 else []
        check([s[1]["pid"] for s in info] == [str(procs["a"].pid)],
              "a process directory as RUN_DIR: that process", info)
        one.stop()

        hostile(x, run_dir, procs, samples)
        rate_limit(x)
        vanish(x, run_dir, tmp)
        check(x.stop(signal.SIGINT) == 0, "SIGINT: status 0")
    finally:
        for p in procs.values():
            promtest.stop(p)


def scrape(x):
    status, _, page = x.get()
    return parse(page) if status == 200 else None


def hostile(x, run_dir, procs, before):
    n = len(series(before, "gpuspy_info"))
    bad = os.path.join(run_dir, f"{host}-4242420")
    os.makedirs(bad)
    snap = os.path.join(bad, "snapshot.json")
    with open(snap, "w") as f:
        f.write('{"format": "gpuspy-process/1", "pid": 4242420, "sites": [')
    time.sleep(1.1)  # not a wait: the exporter reads at most once a second
    s1 = scrape(x)
    time.sleep(1.1)  # not a wait: the exporter reads at most once a second
    s2 = scrape(x)
    said = x.drain()
    check(s1 is not None and len(series(s1, "gpuspy_info")) == n and s2 is not None
          and len(series(s2, "gpuspy_info")) == n,
          "a half-written snapshot: the other processes are served")
    check(len(said) == 1 and snap in said[0], "a half-written snapshot: one line naming it, "
          "said once over two refreshes", said)
    with open(snap, "wb") as f:
        f.write(b"\x00\x1b[31m not json")
    time.sleep(1.1)  # not a wait: the exporter reads at most once a second
    s3 = scrape(x)
    said = x.drain()
    check(s3 is not None and len(series(s3, "gpuspy_info")) == n,
          "a corrupt snapshot: the others served")
    check(len(said) == 1 and snap in said[0] and "\x1b" not in said[0],
          "a corrupt snapshot: one new line (what is wrong changed), no control characters",
          said)
    shutil.rmtree(bad)

    # a good snapshot beside a corrupt history.jsonl: left out, one line
    a_dir = os.path.join(run_dir, f"{host}-{procs['a'].pid}")
    bad = os.path.join(run_dir, f"{host}-4242421")
    os.makedirs(bad)
    doc = json.load(open(os.path.join(a_dir, "snapshot.json")))
    doc["pid"] = 4242421
    doc["end_time"] = time.time()
    json.dump(doc, open(os.path.join(bad, "snapshot.json"), "w"))
    hist = os.path.join(bad, "history.jsonl")
    with open(hist, "w") as f:
        f.write('{"format": "gpuspy-history/1"}\nnot json\n')
    time.sleep(1.1)  # not a wait: the exporter reads at most once a second
    s5 = scrape(x)
    said = x.drain()
    check(s5 is not None and len(series(s5, "gpuspy_info")) == n,
          "a corrupt history.jsonl: that process left out, the others served")
    check(len(said) == 1 and hist in said[0], "a corrupt history.jsonl: one line naming it",
          said)
    shutil.rmtree(bad)

    # a process directory that vanishes: that process's series go
    d = procs["d"]
    promtest.stop(d)
    shutil.rmtree(os.path.join(run_dir, f"{host}-{d.pid}"))
    time.sleep(1.1)  # not a wait: the exporter reads at most once a second
    s4 = scrape(x)
    ranks = sorted(s[1]["rank"] for s in series(s4 or [], "gpuspy_info"))
    check(ranks == ["0", "1", "1.1"], "a process directory removed: its series go", ranks)
    check(not series(s4 or [], "gpuspy_site_live_bytes", rank="none"),
          "a process directory removed: no series of it left")
    check(x.drain() == [], "a process directory removed: nothing said", x.said[-3:])


def rate_limit(x):
    """A scrape within a second of the last reading gets that reading:
    the sample time of a process that rewrites its snapshot every 100 ms
    does not move; a second later it does."""
    time.sleep(1.1)  # not a wait: the exporter reads at most once a second
    t0 = time.monotonic()
    a = scrape(x)
    b = scrape(x)
    t1 = time.monotonic()
    ta = [s[2] for s in series(a or [], "gpuspy_sample_time_seconds", rank="0")]
    tb = [s[2] for s in series(b or [], "gpuspy_sample_time_seconds", rank="0")]
    if t1 - t0 < 0.8:
        check(ta and ta == tb, "two scrapes within a second: one reading", (ta, tb, t1 - t0))
    else:
        print(f"skip the two-scrapes check: they took {t1 - t0:.2f} s")
    time.sleep(1.2)  # not a wait: past the exporter's second
    c = scrape(x)
    tc = [s[2] for s in series(c or [], "gpuspy_sample_time_seconds", rank="0")]
    check(ta and tc and tc[0] > ta[0], "a scrape a second later: a new reading", (ta, tc))
    # a burst: as many requests as it takes, no more readings than seconds
    seen, start, n = set(), time.monotonic(), 0
    while time.monotonic() - start < 2.0:
        s = scrape(x)
        n += 1
        if s is None:
            break
        seen.update(v[2] for v in series(s, "gpuspy_sample_time_seconds", rank="0"))
    took = time.monotonic() - start
    check(n >= 20 and len(seen) <= int(took) + 2,
          f"{n} requests in {took:.1f} s: {len(seen)} readings", seen)


def vanish(x, run_dir, tmp):
    moved = os.path.join(tmp, "moved")
    os.rename(run_dir, moved)
    time.sleep(1.1)  # not a wait: the exporter reads at most once a second
    s = scrape(x)
    check(s == [], "the run directory gone: 200 and an empty page", s and s[:3])
    time.sleep(1.1)  # not a wait: the exporter reads at most once a second
    s = scrape(x)
    said = x.drain()
    check(len(said) == 1 and run_dir in said[0] and "not there" in said[0],
          "the run directory gone: one line, said once", said)
    os.rename(moved, run_dir)
    time.sleep(1.1)  # not a wait: the exporter reads at most once a second
    s = scrape(x)
    check(s is not None and len(series(s, "gpuspy_info")) == 3,
          "the run directory back: served again", s and len(s))


def not_yet(tmp):
    """A RUN_DIR that does not exist yet is waited for; a process that
    starts there later is served."""
    run_dir = os.path.join(tmp, "later")
    x = Exporter(gpuspy, run_dir)
    check(x.url is not None, "a RUN_DIR not made yet: served", x.first)
    status, _, page = x.get()
    check(status == 200 and parse(page) == [], "a RUN_DIR not made yet: an empty page",
          (status, page[:200]))
    said = x.before + x.drain()
    check(len(said) == 1 and "not there (yet)" in said[0], "a RUN_DIR not made yet: said once",
          said)
    p = promtest.start_leaker(lib, fake, prog, run_dir, kib=256)
    try:
        time.sleep(1.1)  # not a wait: the exporter reads at most once a second
        s = scrape(x)
        check(site_value(s or [], rank="none") == 3 * 256 * KiB,
              "a process that started there later: served", s and s[:5])
    finally:
        promtest.stop(p)
    check(x.stop() == 0, "SIGTERM: status 0")


def raw(url, data, timeout=10):
    """The status of the answer to DATA sent as it is, 0 for a closed socket."""
    host, port = urllib.parse.urlparse(url).netloc.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=timeout) as c:
        c.sendall(data)
        try:
            head = c.recv(64).decode(errors="replace")
        except (ConnectionResetError, socket.timeout):
            return 0
    m = re.match(r"HTTP/1\.[01] (\d{3})", head)
    return int(m.group(1)) if m else 0


def requests(tmp):
    """What the server of the exporter answers: 404 and 405 as usual, 400
    or a closed socket for garbage; a slow client and 200 connections at
    once do not keep the others from their page."""
    empty = os.path.join(tmp, "empty")
    x = Exporter(gpuspy, empty)
    check(x.get("/nope")[0] == 404, "GET /nope: 404")
    check(raw(x.url, b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n") == 405,
          "POST /metrics: 405")
    check(raw(x.url, b"\x00\x01garbage\r\n\r\n") in (0, 400), "garbage: 400 or closed")
    host, port = urllib.parse.urlparse(x.url).netloc.rsplit(":", 1)
    slow = socket.create_connection((host, int(port)))
    slow.sendall(b"GET /metrics HTTP/1.1\r\nHost:")
    t0 = time.monotonic()
    status = x.get()[0]
    check(status == 200 and time.monotonic() - t0 < 5,
          "a slow client holding its socket: another gets its page", status)
    slow.close()
    # each sends its request at once, all are open together (connections
    # that send nothing wait for the server's timeout, 5 s, in its limit)
    socks = []
    for _ in range(200):
        try:
            c = socket.create_connection((host, int(port)), timeout=10)
            socks.append(c)
            c.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        except OSError:
            pass
    answered = closed = 0
    for c in socks:
        try:
            head = c.recv(16)
            answered += head.startswith(b"HTTP/1.1 200")
            closed += head == b""
        except OSError:
            closed += 1
        c.close()
    check(answered + closed == len(socks) and answered > 0,
          f"200 connections at once: {answered} answered, {closed} closed", len(socks))
    check(x.get()[0] == 200, "after them: served")
    check(x.stop() == 0, "SIGTERM: status 0")


def addresses(tmp):
    empty = os.path.join(tmp, "empty")
    os.makedirs(empty)
    x = Exporter(gpuspy, empty, listen="0.0.0.0:0")
    check(x.url is not None and "not a loopback address" in (x.first or ""),
          "--listen 0.0.0.0:0: said on stderr", x.first)
    x.stop()
    x = Exporter(gpuspy, empty)
    check("not a loopback" not in (x.first or ""), "a loopback address: nothing said", x.first)
    x.stop()
    # the default: 127.0.0.1:9463 (below the ranks' 9464 + LOCAL_RANK); a
    # program here may hold it: then the line that says so names it
    x = Exporter(gpuspy, empty, listen=None)
    said = x.before + [x.first or ""]
    check(any("127.0.0.1:9463" in l for l in said), "the default address is 127.0.0.1:9463",
          said)
    x.stop()


def fetch(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.read().decode()


def promtool_clean(page, what):
    if not shutil.which("promtool"):
        print("skip promtool check metrics: no promtool")
        return
    p = subprocess.run(["promtool", "check", "metrics"], input=page, capture_output=True,
                       text=True, timeout=30)
    check(p.returncode == 0 and not p.stdout.strip() and not p.stderr.strip(),
          what + ": promtool check metrics clean", p.stdout + p.stderr)


def kubernetes(tmp):
    """pod, namespace, container (the downward-API variables of contrib/k8s)
    and the MIG device on every series, of the exporter and of the
    endpoint in the process; values escaped; none without the variables."""
    run_dir = os.path.join(tmp, "k8s")
    mig = "MIG-4d9c1e58-7f3a-5b2e-9a61-0c2d3e4f5a6b"
    place = {"GPUSPY_POD_NAME": "train-7f9c-0", "GPUSPY_POD_NAMESPACE": "ml",
             "GPUSPY_CONTAINER_NAME": "train", "CUDA_VISIBLE_DEVICES": mig + ",1",
             "GPUSPY_PROMETHEUS": "127.0.0.1:0"}
    # a hostile pod name: quote, backslash, newline, and no MIG device
    odd = {"GPUSPY_POD_NAME": 'a"b\\c\nd', "GPUSPY_POD_NAMESPACE": "ml",
           "NVIDIA_VISIBLE_DEVICES": "GPU-0aa1"}
    procs = []
    try:
        procs.append(promtest.start_leaker(lib, fake, prog, run_dir, kib=64, **place))
        procs.append(promtest.start_leaker(lib, fake, prog, run_dir, kib=32, RANK="1", **odd))
        procs.append(promtest.start_leaker(lib, fake, prog, run_dir, kib=16, RANK="2"))
        x = Exporter(gpuspy, run_dir)
        status, _, page = x.get()
        samples = parse(page) if status == 200 else []
        by_pid = {s[1]["pid"]: s[1]["rank"] for s in series(samples, "gpuspy_info")}
        rank = [by_pid.get(str(p.pid)) for p in procs]
        want = {"pod": "train-7f9c-0", "namespace": "ml", "container": "train", "mig": mig}
        mine = [s for s in samples if s[1].get("rank") == rank[0]]
        check(mine and all({k: s[1].get(k) for k in want} == want for s in mine),
              "exporter: pod, namespace, container and mig on every series of the process",
              mine[:3])
        theirs = [s for s in samples if s[1].get("rank") == rank[1]]
        check(theirs and all(s[1].get("pod") == 'a"b\\c\nd' and "mig" not in s[1] and
                             "container" not in s[1] for s in theirs),
              "exporter: a pod name of quote, backslash and newline read back as it was; no "
              "MIG device, no container: no label", theirs[:2])
        plain = [s for s in samples if s[1].get("rank") == rank[2]]
        check(plain and not [s for s in plain if {"pod", "namespace", "container",
                                                  "mig"} & set(s[1])],
              "exporter: without the variables, no such label", plain[:2])
        promtool_clean(page, "exporter with Kubernetes labels")
        x.stop()

        # the endpoint in the process, the same labels
        addr_file = os.path.join(run_dir, f"{host}-{procs[0].pid}", "prometheus")
        addr = open(addr_file).read().strip()
        page = fetch("http://%s/metrics" % addr)
        samples = parse(page)
        check(samples and all({k: s[1].get(k) for k in want} == want for s in samples),
              "endpoint: pod, namespace, container and mig on every series", samples[:3])
        promtool_clean(page, "endpoint with Kubernetes labels")
    finally:
        for p in procs:
            promtest.stop(p)


def main():
    tmp = harness.tempdir()
    try:
        usage()
        latest_outside(tmp)
        addresses(tmp)
        requests(tmp)
        not_yet(tmp)
        kubernetes(tmp)
        main_case(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return harness.done()


if __name__ == "__main__":
    sys.exit(main())
