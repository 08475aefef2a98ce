#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""One site, one name, one verdict, on every surface.

    one_name.py LIBGPUSPY GPUSPY FAKE_DIR PROG SOURCE TESTS_CLI_DIR

PROG (one_name.c) runs a per-epoch staircase, a warm-up, a sawtooth, one
big allocation and the standard leak under libgpuspy, with its Prometheus
endpoint on, and waits at the end.  Each surface below is asked for the
staircase's name, which must be

    staircase (one_name.c:KEEP +1 line)

with KEEP the line of one_name.c marked STAIRCASE-KEEP (the growing line
leads its function's two), and none may name a function of the program
by an address (one_name+0x...): only its .symtab names them.  Of the five
sites, the staircase is the only one any surface calls growing.
"""
import csv
import glob
import io
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import urllib.request
import zlib

lib, cli, fake, prog, source, cli_tests = sys.argv[1:7]
sys.path.insert(0, cli_tests)
import promtest  # noqa: E402
import tbread  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402


def line_of(marker):
    with open(source) as f:
        for n, text in enumerate(f, 1):
            if marker in text and "#define" not in text:
                return n
    raise SystemExit("no line marked " + marker)


KEEP = line_of("/* STAIRCASE-KEEP */")
WANT = "staircase (one_name.c:%d +1 line)" % KEEP
# an address in place of a name; report.txt's stack rows give the module
# and offset beside the name, "staircase (one_name.c:49, one_name+0x13b5)",
# "_start (one_name+0x1101)"
ADDRESS = re.compile(r"(?<!\()(?<!, )one_name\+0x[0-9a-f]+")
OTHERS = ("warm_up", "sawtooth", "big_once", "leak_once")
EPOCHS, EPOCH_MS = 8, 500

env = promtest.clean_env(fake)
# a sample every 100 ms: the warm-up's 400 ms are at most four rises, too
# few for the rule (TREND_RISES), the staircase's epochs five samples each
env.update(LD_PRELOAD=promtest.preload(lib), GPUSPY_INTERVAL="100ms", GPUSPY_PROMETHEUS="0")
env.pop("GPUSPY_QUIET", None)
out = harness.tempdir()
env["GPUSPY_OUTPUT_DIR"] = out
p = subprocess.Popen([prog, str(EPOCHS), str(EPOCH_MS)], env=env, stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
ready = p.stdout.readline().strip()
check(ready == "one_name: ready", "the program ran its epochs", ready)
pdirs = glob.glob(os.path.join(out, "*-%d" % p.pid))
pdir = pdirs[0] if pdirs else os.path.join(out, "none")

# --- while it runs: /metrics of the process and of the exporter ------------


def scrape(addr):
    try:
        with urllib.request.urlopen("http://%s/metrics" % addr, timeout=10) as r:
            return r.read().decode()
    except (OSError, ValueError):
        return ""


def sample_time(page):
    t = [s[2] for s in promtest.parse(page) if s[0] == "gpuspy_sample_time_seconds"]
    return t[0] if t else None


# the endpoint's page is made at each sample: two samples after the last
# epoch, what it shows is the end of the run (at most 10 s)
apath = os.path.join(pdir, "prometheus")
addr = (harness.wait_file(apath, lambda t: t.strip(), timeout=10) or "").split()
addr = addr[0] if addr else ""
page, seen = "", []


def sampled_thrice():
    global page
    page = scrape(addr)
    t = sample_time(page) if page else None
    if t is not None and t not in seen:
        seen.append(t)
    return len(seen) >= 3


harness.wait_for(sampled_thrice, timeout=10, every=0.025)
check(len(seen) >= 3, "the endpoint answers, sampled twice after the last epoch", seen)
samples = promtest.parse(page) if page else []
names = {s[1].get("name") for s in samples if s[0] == "gpuspy_site_live_bytes"}
surfaces = {"/metrics": (page, names)}
growing = promtest.series(samples, "gpuspy_growing_sites")
check(growing and growing[0][2] == 1, "/metrics: gpuspy_growing_sites is 1 at the end", growing)
flagged = [s[1].get("name") for s in samples if s[0] == "gpuspy_site_growing" and s[2] == 1]
check(flagged == [WANT], "/metrics: only the staircase is flagged growing", flagged)
ex = promtest.Exporter(cli, out)
try:
    st, _, xpage = ex.get() if ex.url else (0, None, "")
    xs = promtest.parse(xpage) if st == 200 else []
    surfaces["exporter"] = (xpage, {s[1].get("name") for s in xs
                                    if s[0] == "gpuspy_site_live_bytes"})
    xg = [s[1].get("name") for s in xs if s[0] == "gpuspy_site_growing" and s[2] == 1]
    check(xg == [WANT], "exporter: only the staircase is flagged growing", xg)
    ranks = {s[1].get("rank") for s in xs} | {s[1].get("rank") for s in samples
                                             if s[0] == "gpuspy_info"}
    check(ranks == {"none"}, "exporter and endpoint: one spelling of no rank", ranks)
finally:
    ex.stop()

p.stdin.close()
stderr = p.stderr.read()
p.wait(timeout=60)
check(p.returncode == 0, "the program exited 0", p.returncode)

# --- what the process printed and wrote -------------------------------------
live = [l for l in stderr.splitlines() if l.startswith("gpuspy: growing:")]
check(len(live) == 1 and ("at %s;" % WANT) in live[0],
      "stderr: one growth line, naming " + WANT, stderr)
summary = [l for l in stderr.splitlines() if l.startswith("gpuspy:")]
surfaces["exit summary"] = ("\n".join(summary), None)
try:
    with open(os.path.join(pdir, "report.txt")) as f:
        surfaces["report.txt"] = (f.read(), None)
except OSError as e:
    check(False, "report.txt written", e)


def gpuspy(*args):
    r = subprocess.run([cli] + list(args), capture_output=True, timeout=120)
    check(r.returncode in (0, 1), "gpuspy %s: ran" % " ".join(args[:3]), r.stderr[-400:])
    return r.stdout


text = gpuspy("report", out).decode()
surfaces["report"] = (text, None)
rep = json.loads(gpuspy("report", "--format", "json", out) or b"{}")
surfaces["report --format json"] = (json.dumps(rep), {s["name"] for s in rep.get("sites", [])})
json_growing = [s["name"] for s in rep.get("sites", []) if s.get("growing")]
check(json_growing == [WANT], "json: only the staircase is growing", json_growing)
html = gpuspy("report", "--format", "html", out).decode()
m = re.search(r'<script type="application/json" id="gpuspy-data">(.*?)</script>', html, re.S)
hdoc = json.loads(m.group(1)) if m else {}
hsites = hdoc.get("report", {}).get("sites", [])
surfaces["report --format html"] = (m.group(1) if m else "",
                                    {s.get("name") for s in hsites})
check([s["name"] for s in hsites if s.get("growing")] == [WANT],
      "html: only the staircase is growing", [s["name"] for s in hsites if s.get("growing")])
rows = list(csv.DictReader(io.StringIO(gpuspy("report", "--format", "csv", out).decode())))
surfaces["report --format csv"] = ("\n".join(r["label"] for r in rows),
                                   {r["label"] for r in rows if r["series"].startswith("#")})
stair = {r["series"] for r in rows if r["label"] == WANT}
check(len(stair) == 1, "csv: one series for the staircase's two lines", stair)
prof = os.path.join(out, "profile.pb.gz")
with open(prof, "wb") as f:
    f.write(gpuspy("report", "--format", "pprof", out))
go = shutil.which("go")
if go:
    r = subprocess.run([go, "tool", "pprof", "-traces", "-lines", prof], capture_output=True,
                       text=True, timeout=300)
    traces = r.stdout
    # pprof prints a Location its own way ("staircase one_name.c:49"):
    # checked here by its function and line, not by the name below
    check(re.search(r"staircase .*one_name\.c:%d\b" % KEEP, traces) is not None,
          "pprof: the staircase's Location has its function and line %d" % KEEP, traces)
else:
    print("skip pprof: no go tool")
trace = json.loads(gpuspy("report", "--format", "perfetto", out) or b"{}")
tracks = {e["name"] for e in trace.get("traceEvents", []) if e.get("ph") == "C"}
surfaces["report --format perfetto"] = ("\n".join(tracks),
                                        {re.sub(r"^#\d+ ", "", t) for t in tracks
                                         if t.startswith("#")})
collapsed = gpuspy("report", "--format", "collapsed", out).decode()
check(re.search(r"(^|;)staircase;cudaMalloc \d+$", collapsed, re.M) is not None,
      "collapsed: the staircase's stack keeps its function frame", collapsed)
check(not ADDRESS.search(collapsed), "collapsed: no address for a named function", collapsed)
surfaces["merge"] = (gpuspy("merge", out).decode(), None)
d = json.loads(gpuspy("diff", "--format", "json", out, out) or b"{}")
surfaces["diff --format json"] = (json.dumps(d), {r.get("name") for r in d.get("sites", [])})
surfaces["diff"] = (gpuspy("diff", "--top", "0", out, out).decode(), None)
top = gpuspy("top", "--count", "1", "--top", "0", out).decode()
surfaces["top"] = (top, None)
grows = [l for l in top.splitlines() if "GROWING" in l]
check(len(grows) == 1 and WANT in grows[0], "top: only the staircase's row is GROWING", top)
logdir = os.path.join(out, "tb")
subprocess.run([cli, "export", "--tensorboard", logdir, "--top", "0", out], capture_output=True,
               timeout=120)
tags = set()
for f in glob.glob(os.path.join(logdir, "*", "events.out.tfevents.*")):
    for ev in tbread.read_events(f):
        tags |= {k for k, _ in (ev.get("values") or [])}
surfaces["export --tensorboard"] = ("\n".join(tags), {t[len("sites/"):] for t in tags
                                                      if t.startswith("sites/")})

# --- the table: every surface names it alike, none by address ---------------
for name, (content, listed) in surfaces.items():
    if name == "diff":
        # diff prints what changed, and a run against itself changed nothing
        check(ADDRESS.search(content) is None, "%s: no address for a named function" % name,
              ADDRESS.findall(content))
        continue
    check(WANT in content, "%s: names the staircase %s" % (name, WANT), content)
    if name in ("report", "report.txt", "exit summary", "merge", "top"):
        said = [l for l in content.splitlines() if re.search(r"\bgrowing\b", l)
                and not re.search(r"grew, then stopped|growing:\s+0|0 call sites? keeps? growing", l)]
        check(all("staircase" in l or not any(fn in l for fn in OTHERS) for l in said),
              "%s: no other site called growing" % name, said)
    if listed is not None:
        check(WANT in listed and not any(n and n.startswith("staircase") and n != WANT
                                         for n in listed),
              "%s: the staircase's one name, no other spelling" % name, sorted(map(str, listed)))
    check(ADDRESS.search(content) is None, "%s: no address for a named function" % name,
          ADDRESS.findall(content))
    for fn in OTHERS:
        if name in ("exit summary", "report.txt", "top") and fn not in ("leak_once", "warm_up"):
            continue  # they list what is live at the end
        if name.startswith("report --format csv") or name in ("/metrics", "exporter",
                                                               "export --tensorboard"):
            continue  # series of what held memory over time, not every site
        check(re.search(r"\b%s \(one_name\.c:\d+\)" % fn, content) is not None,
              "%s: %s by function and line" % (name, fn), content)

# the text report: GROWTH SUSPECTS lists only the staircase
sec = text[text.find("\nGROWTH SUSPECTS"):]
sec = sec[:sec.find("\n\n", 1)] if "\n\n" in sec[1:] else sec
rows_g = [l for l in sec.splitlines() if l.startswith("  #") and "[growing]" in l]
check(len(rows_g) == 1 and WANT in rows_g[0],
      "report: GROWTH SUSPECTS calls only the staircase growing (a warm-up: grew, then stopped)",
      sec)

shutil.rmtree(out, ignore_errors=True)
sys.exit(harness.done())
