#!/usr/bin/env python3
"""The endpoint never holds the job (GPUSPY_PROMETHEUS, libgpuspy(7)
PROMETHEUS): a program of 1 s on the fake driver (tests/integration/growth.c,
10 steps of 100 ms) serving /metrics exits within 0.5 s of the same program
with no client, with its report.json written and naming the endpoint, when
 - 40 clients hold idle connections (connected, nothing sent);
 - 40 clients hold a request half sent (a slow client each);
 - libmicrohttpd's stop itself takes 30 s (tests/integration/slow_mhd.c:
   the stop is left at its deadline);
and the report is written before the server stops: the stop finds it
there.  Each comparison is against a run without
clients measured in this same run (the median of three), not a fixed time.
Usage: prometheus_exit.py LIBGPUSPY FAKE_DIR GROWTH SLOW_MHD"""
import glob, json, os, socket, statistics, subprocess, sys, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

lib, fake, growth, slow_mhd = sys.argv[1:5]
lib = harness.preload(lib)
base = harness.clean_env(RANK=None, LOCAL_RANK=None)
base.update(LD_LIBRARY_PATH=fake, LD_PRELOAD=lib, GPUSPY_INTERVAL="100ms", GPUSPY_QUIET="1",
            GPUSPY_PROMETHEUS="127.0.0.1:0")
base.update(kv.split("=", 1) for kv in os.environ.get("SANITIZER_GPUSPY", "").split() if "=" in kv)
SLACK = 0.5


def run(clients=0, partial=False, **env):
    """(seconds from start to exit, report.json written and naming the
    endpoint, stderr).  CLIENTS
    connect once the endpoint is up and hold their sockets past the exit."""
    out = harness.tempdir()
    t0 = time.monotonic()
    p = subprocess.Popen([growth, "10", "100"], env=dict(base, GPUSPY_OUTPUT_DIR=out, **env),
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    addr = harness.wait_file(os.path.join(out, "*", "prometheus"), lambda t: t.endswith("\n"),
                             timeout=10, proc=p, every=0.005)
    addr = addr.strip() if addr else None
    held = []
    if addr:
        host, port = addr.rsplit(":", 1)
        # from several loopback addresses: past the limit of one address,
        # past the server's own limit too
        for i in range(clients):
            c = socket.create_connection((host, int(port)), timeout=30,
                                         source_address=("127.0.0.%d" % (2 + i % 8), 0))
            if partial:
                c.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
            held.append(c)
    p.wait(60)
    took = time.monotonic() - t0
    for c in held:
        c.close()
    rep = glob.glob(os.path.join(out, "*", "report.json"))
    named = False
    if rep:
        with open(rep[0]) as f:
            doc = json.load(f)
        named = doc.get("prometheus") == addr or addr in json.dumps(doc)
    return took, bool(rep) and named and p.returncode == 0, p.stderr.read()


baseline = statistics.median(run()[0] for _ in range(3))
print(f"     a run without clients: {baseline:.2f} s (median of three)")
for what, kw in (("40 idle clients", dict(clients=40)),
                 ("40 clients with a request half sent", dict(clients=40, partial=True)),
                 ("a stop of libmicrohttpd that takes 30 s",
                  dict(GPUSPY_LIBMICROHTTPD=slow_mhd, SLOW_MHD_STOP_S="30")),
                 ("that stop and 40 idle clients",
                  dict(clients=40, GPUSPY_LIBMICROHTTPD=slow_mhd, SLOW_MHD_STOP_S="30"))):
    took, ok, err = run(**kw)
    check(took < baseline + SLACK and ok,
          f"{what}: exits in {took:.2f} s (without: {baseline:.2f} s, at most {SLACK} s more), "
          "its report written, naming the endpoint", err)

# the report is written before the server is stopped: the stop finds it
mark = os.path.join(harness.tempdir(), "mark")
took, ok, err = run(GPUSPY_LIBMICROHTTPD=slow_mhd, SLOW_MHD_MARK=mark)
said = open(mark).read() if os.path.exists(mark) else None
check(ok and said == "1\n", "the report is written before the server stops", (said, err))

sys.exit(harness.done())
