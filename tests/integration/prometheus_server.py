#!/usr/bin/env python3
"""A real Prometheus server (Debian's prometheus), started on loopback with
a scrape configuration for a program on the fake driver that serves its
metrics (GPUSPY_PROMETHEUS, tests/integration/growth.c halted halfway):
Prometheus' HTTP API finds the target up, and the leaking site's series
with its live bytes (20 steps of 1 MiB).
Usage: prometheus_server.py LIBGPUSPY FAKE_DIR GROWTH PROMETHEUS"""
import json, os, shutil, signal, socket, subprocess, sys
import urllib.parse, urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

lib, fake, growth, prometheus = sys.argv[1:5]
lib = harness.preload(lib)
env = harness.clean_env(RANK=None, LOCAL_RANK=None)
env.update(kv.split("=", 1) for kv in os.environ.get("SANITIZER_GPUSPY", "").split() if "=" in kv)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def query(port, q):
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": q})
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            j = json.load(r)
    except OSError:
        return None
    return j["data"]["result"] if j.get("status") == "success" else None


work = harness.tempdir()
out = os.path.join(work, "run")
prog = subprocess.Popen([growth, "40", "30", "hang"], stdout=subprocess.PIPE, text=True,
                        env=dict(env, LD_LIBRARY_PATH=fake, LD_PRELOAD=lib, GPUSPY_OUTPUT_DIR=out,
                                 GPUSPY_INTERVAL="100ms", GPUSPY_QUIET="1",
                                 GPUSPY_PROMETHEUS="127.0.0.1:0"))
server = None
try:
    check(prog.stdout.readline().startswith("growth: halfway"), "the program ran halfway")
    addr = harness.wait_file(os.path.join(out, "*", "prometheus"), lambda t: t.endswith("\n"),
                             timeout=5, proc=prog)
    addr = addr.strip() if addr else None
    check(addr is not None, f"the endpoint's address ({addr})")
    port = free_port()
    cfg = os.path.join(work, "prometheus.yml")
    with open(cfg, "w") as f:
        f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                "scrape_configs:\n  - job_name: gpuspy\n"
                f"    static_configs:\n      - targets: ['{addr}']\n")
    # the server's own environment: nothing of gpuspy's
    server = subprocess.Popen([prometheus, "--config.file=" + cfg,
                               "--storage.tsdb.path=" + os.path.join(work, "tsdb"),
                               "--web.listen-address=127.0.0.1:%d" % port],
                              env={k: v for k, v in os.environ.items()
                                   if k not in ("LD_PRELOAD", "LD_LIBRARY_PATH")},
                              stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "log"), "w"))
    got = {}

    def scraped():
        got["up"] = query(port, 'up{job="gpuspy"} == 1')
        got["leak"] = query(port, 'gpuspy_site_live_bytes{name=~"leak_step.*"}')
        return got["up"] and got["leak"]
    harness.wait_for(scraped, timeout=60, every=0.5)
    up, leak = got["up"], got["leak"]
    check(bool(up), f"Prometheus scraped the target: up == 1 ({up})")
    check(leak is not None and len(leak) == 1 and float(leak[0]["value"][1]) == 20 << 20,
          f"the leaking site's series: 20 MiB ({leak})")
    tracked = query(port, "gpuspy_tracked_bytes")
    check(tracked is not None and len(tracked) == 1 and tracked[0]["metric"].get("device") == "0",
          f"gpuspy_tracked_bytes by device ({tracked})")
finally:
    for p in (server, prog):
        if p:
            p.kill()
            p.wait()
if harness.failed():
    print(open(os.path.join(work, "log")).read()[-2000:] if os.path.exists(os.path.join(work, "log")) else "")
shutil.rmtree(work, ignore_errors=True)
sys.exit(harness.done())
