#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A real Prometheus server (Debian's prometheus) scrapes gpuspy: started
here on loopback, in a temporary directory, on free ports, with a scrape
config of a 1 s interval for two targets:
 - inproc: a running job on the fake driver (tests/cli/prom_job.py: a
   leaking site, the pretend PyTorch's pool, the fake NVML of
   tests/fake/nvml; rank 1 of two fake devices, allocating on device 0) with GPUSPY_PROMETHEUS=127.0.0.1:0 (the port it took
   is read from its process directory's "prometheus" file);
 - exporter: 'gpuspy exporter' over that job's run directory.
Once both targets are up, Prometheus' HTTP API (/api/v1/query) must give
the leaking site's series from both, with the value 'gpuspy report' gives
that site; 'promtool check metrics' must be clean over both pages (fetched
with curl). The names of the gpuspy_* metrics scraped are written to
SCRAPED; when the Grafana dashboard contrib/grafana/gpuspy.json exists,
every gpuspy_* name in its panels' "expr" queries must be one of them.
Exits 77 (skipped) when prometheus is not installed.

    test_prometheus.py GPUSPY LIBGPUSPY FAKE_DIR FAKE_NVML_DIR LIBPYALLOC LIBC10_CUDA
                       FAKE_TORCH_DIR SOURCE_DIR SCRAPED
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
from promtest import Exporter

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

(gpuspy, lib, fake, fake_nvml, pyalloc, c10, fake_torch, src,
 scraped_file) = (os.path.abspath(a) for a in sys.argv[1:10])
here = os.path.dirname(os.path.abspath(__file__))
job_script = os.path.join(here, "prom_job.py")
leak_line = next(i + 1 for i, l in enumerate(open(job_script)) if "# LINE leak" in l)
MiB = 1 << 20
LEAK_MIB = 3


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def api(base, path, **params):
    url = base + path + ("?" + urllib.parse.urlencode(params) if params else "")
    with urllib.request.urlopen(url, timeout=10) as r:
        doc = json.loads(r.read())
    if doc.get("status") != "success":
        raise RuntimeError(f"{url}: {doc}")
    return doc["data"]


def start_job(run_dir):
    env = dict(promtest.clean_env(fake), LD_LIBRARY_PATH=fake + ":" + fake_nvml,
               LD_PRELOAD=promtest.preload(lib),
               GPUSPY_OUTPUT_DIR=run_dir, GPUSPY_INTERVAL="200ms",
               GPUSPY_PROMETHEUS="127.0.0.1:0", PYTHONPATH=fake_torch, FAKE_C10_CUDA=c10,
               # rank 1 of two devices, allocating on device 0: the wrong
               # device (gpuspy_wrong_device_bytes, the dashboard's Per rank)
               RANK="1", LOCAL_RANK="1", GPUSPY_FAKE_DEVICES="2")
    p = subprocess.Popen([sys.executable, job_script, pyalloc, str(LEAK_MIB)], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    if line.strip() != "ready":
        p.kill()
        raise RuntimeError("the job did not start: " + line + p.stderr.read())
    # the address it bound, written into its process directory
    addr_file = os.path.join(run_dir, f"{os.uname().nodename}-{p.pid}", "prometheus")
    addr = harness.wait_file(addr_file, lambda t: t.strip(), proc=p)
    if addr:
        return p, addr.strip()
    p.kill()
    raise RuntimeError("no " + addr_file + ": " + p.stderr.read())


def start_prometheus(tmp, targets):
    """Prometheus on a free loopback port, scraping TARGETS {job: addr}
    every second; (process, base URL)."""
    conf = os.path.join(tmp, "prometheus.yml")
    with open(conf, "w") as f:
        f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n")
        for job, addr in targets.items():
            f.write(f"  - job_name: {job}\n    static_configs:\n"
                    f"      - targets: ['{addr}']\n")
    p = subprocess.run(["promtool", "check", "config", conf], capture_output=True, text=True,
                       timeout=30)
    check(p.returncode == 0, "promtool check config: the generated scrape config",
          p.stdout + p.stderr)
    # a port free now may be taken before Prometheus binds it: try again
    for _ in range(3):
        port = free_port()
        log = open(os.path.join(tmp, "prometheus.log"), "w")
        prom = subprocess.Popen(
            ["prometheus", "--config.file=" + conf,
             "--storage.tsdb.path=" + os.path.join(tmp, "data"),
             f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
            stdout=log, stderr=subprocess.STDOUT, cwd=tmp)
        base = f"http://127.0.0.1:{port}"

        def ready():
            try:
                with urllib.request.urlopen(base + "/-/ready", timeout=2) as r:
                    return r.status == 200
            except OSError:
                return False
        if harness.wait_for(ready, timeout=30, proc=prom, every=0.1):
            return prom, base
        promtest.stop(prom)
    raise RuntimeError("prometheus did not start: " + open(os.path.join(tmp,
                                                                       "prometheus.log")).read())


def wait_up(base, jobs, timeout=30):
    """Whether every job's target is up, and what /api/v1/targets said."""
    health = {}

    def all_up():
        health.clear()
        health.update({t["labels"]["job"]: (t["health"], t.get("lastError"))
                       for t in api(base, "/api/v1/targets")["activeTargets"]})
        return all(health.get(j, ("",))[0] == "up" for j in jobs)
    return bool(harness.wait_for(all_up, timeout, every=0.25)), health


def query(base, q, want_jobs, timeout=20):
    """The result of instant query Q once it holds a series of every job."""
    res = []

    def has_every_job():
        res[:] = api(base, "/api/v1/query", query=q)["result"]
        return want_jobs <= {r["metric"].get("job") for r in res}
    harness.wait_for(has_every_job, timeout, every=0.25)
    return res


def report_site(run_dir):
    """(key, leaked bytes, headline file, line) of leak_buffers in 'gpuspy report'."""
    p = subprocess.run([gpuspy, "report", "--format", "json", run_dir], capture_output=True,
                       text=True, timeout=60, env=promtest.clean_env(fake))
    check(p.returncode == 0, "gpuspy report --format json of the job", p.stderr)
    for s in json.loads(p.stdout)["sites"] if p.returncode == 0 else []:
        h = s.get("headline") or {}
        if h.get("function") == "leak_buffers":
            return s["key"], s["leaked_bytes"], h.get("file"), h.get("line")
    return None


def dashboard_names():
    """The gpuspy_* names in the "expr" queries of the dashboard's panels
    (rows' panels included), or None without a dashboard."""
    path = os.path.join(src, "contrib", "grafana", "gpuspy.json")
    if not os.path.exists(path):
        return None
    exprs = []

    def walk(o):
        if isinstance(o, dict):
            for k, v in o.items():
                if k == "expr" and isinstance(v, str):
                    exprs.append(v)
                else:
                    walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)

    walk(json.load(open(path)).get("panels", []))
    return exprs, {n for e in exprs for n in re.findall(r"\bgpuspy_[A-Za-z0-9_]*", e)}


def main():
    if not shutil.which("prometheus") or not shutil.which("promtool"):
        print("skip: prometheus is not installed (Debian: apt-get install prometheus)")
        return 77
    tmp = harness.tempdir()
    job = exporter = prom = None
    start = time.monotonic()
    try:
        run_dir = os.path.join(tmp, "run")
        job, inproc = start_job(run_dir)
        exporter = Exporter(gpuspy, run_dir)
        check(exporter.url is not None, "gpuspy exporter serves", exporter.first)
        exp_addr = urllib.parse.urlparse(exporter.url).netloc
        prom, base = start_prometheus(tmp, {"inproc": inproc, "exporter": exp_addr})
        up, health = wait_up(base, {"inproc", "exporter"})
        check(up, "Prometheus: both targets up", health)

        rep = report_site(run_dir)
        check(rep is not None and rep[1] == LEAK_MIB * MiB,
              f"gpuspy report: leak_buffers leaked {LEAK_MIB} MiB", rep)
        res = query(base, "gpuspy_site_live_bytes", {"inproc", "exporter"})
        # the report's headline as its lists print it: what both pages
        # must name the site, to the letter
        want = rep and f"leak_buffers ({os.path.basename(rep[2] or '?')}:{rep[3]})"
        by_job, names = {}, {}
        for r in res:
            m = r["metric"]
            if m.get("site") != "other":
                names.setdefault(m["job"], set()).add((m.get("name"), m.get("kind")))
            if m.get("name") == want:
                by_job.setdefault(m["job"], []).append((m, float(r["value"][1])))
        for j in ("inproc", "exporter"):
            got = by_job.get(j, [])
            check(len(got) == 1 and rep is not None and got[0][1] == rep[1],
                  f"{j}: the leaking site's series, named {want!r}, {LEAK_MIB} MiB as "
                  "gpuspy report says", (got, rep, res))
        check(names.get("inproc") and names.get("inproc") == names.get("exporter"),
              "the name labels of the sites: the same from the process and the exporter",
              names)
        if rep and by_job.get("exporter"):
            m = by_job["exporter"][0][0]
            check(m.get("site") == rep[0] and m.get("host") == os.uname().nodename
                  and m.get("rank") == "1",
                  "exporter: site is the report's key, host and rank labels", m)
        if by_job.get("inproc"):
            # the process's own digest (libgpuspy(7), PROMETHEUS): of the
            # same form, stable for the site, not the report's key
            site = by_job["inproc"][0][0].get("site", "")
            check(re.fullmatch(r"[0-9a-f]{16}", site) is not None,
                  "inproc: site is a 16-hex digest", site)
        tracked = query(base, "gpuspy_tracked_bytes", {"inproc", "exporter"})
        vals = {r["metric"]["job"]: float(r["value"][1]) for r in tracked}
        check(vals.get("inproc") == vals.get("exporter") == LEAK_MIB * MiB,
              "gpuspy_tracked_bytes: the same from both", vals)

        # the pages themselves, as curl fetches them, through promtool
        curl = shutil.which("curl")
        if not curl:
            print("note: no curl (CI installs it): the pages are fetched by urllib")
        for j, addr in (("inproc", inproc), ("exporter", exp_addr)):
            if curl:
                p = subprocess.run([curl, "-sfS", f"http://{addr}/metrics"],
                                   capture_output=True, text=True, timeout=30)
                page, err = p.stdout if p.returncode == 0 else "", p.stderr
            else:
                with urllib.request.urlopen(f"http://{addr}/metrics", timeout=10) as r:
                    page, err = r.read().decode(), ""
            check("gpuspy_info" in page, f"{j}: GET /metrics", err)
            p = subprocess.run(["promtool", "check", "metrics"], input=page,
                               capture_output=True, text=True, timeout=30)
            check(p.returncode == 0 and not (p.stdout + p.stderr).strip(),
                  f"{j}: promtool check metrics is clean", p.stdout + p.stderr)

        # every gpuspy metric Prometheus holds from the two targets
        names = {}
        for j in ("inproc", "exporter"):
            series = api(base, "/api/v1/series", **{"match[]": f'{{job="{j}"}}'})
            names[j] = {s["__name__"] for s in series if s["__name__"].startswith("gpuspy_")}
        check(names["inproc"] == names["exporter"],
              "the same families from both targets",
              (sorted(names["inproc"] - names["exporter"]),
               sorted(names["exporter"] - names["inproc"])))
        scraped = names["inproc"] | names["exporter"]
        with open(scraped_file, "w") as f:
            f.write("".join(n + "\n" for n in sorted(scraped)))
        print(f"{len(scraped)} gpuspy metrics scraped, written to {scraped_file}")
        dash = dashboard_names()
        if dash is None:
            print("skip the dashboard check: no contrib/grafana/gpuspy.json")
        else:
            exprs, used = dash
            check(exprs and used, "the dashboard's panels query gpuspy metrics",
                  f"{len(exprs)} queries")
            check(used <= scraped, "the dashboard's queries use only metrics the scrape returned",
                  sorted(used - scraped))
    finally:
        if exporter:
            check(exporter.stop() == 0, "gpuspy exporter: SIGTERM, status 0")
        promtest.stop(prom, signal.SIGTERM)
        promtest.stop(job)
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"took {time.monotonic() - start:.1f} s")
    return harness.done()


if __name__ == "__main__":
    sys.exit(main())
