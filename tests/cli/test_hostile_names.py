#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every printer total over any bytes: the call sites of
tests/cli/hostile_names.c (symbols that are not UTF-8, names of 2-, 3- and
4-byte characters that any byte limit cuts mid-character, control
characters, ';', a name of 5,000 bytes; a source file name that is not
UTF-8) run on the fake driver, then read by every printer, each output
checked by the client that reads it:

 - report text, json, html, csv, pprof (go tool pprof), perfetto (JSON and
   the trace-event fields), collapsed (one "stack BYTES" a line), merge,
   diff, top, export --tensorboard (tbread's decoder, UTF-8 tags): status
   0, strict UTF-8, no control character in the text outputs, every site
   there, the JSON names valid where they were not;
 - /metrics of the job's endpoint and of 'gpuspy exporter' over its run:
   strict UTF-8, promtool check metrics (when there), every site named.

Usage: test_hostile_names.py GPUSPY LIBGPUSPY FAKE_DIR HOSTILE_NAMES [PROMTOOL]"""
import glob, gzip, json, os, re, select, shutil, subprocess, sys, tempfile
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import promtest  # noqa: E402
import tbread  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

cli, lib, fake, prog = (os.path.abspath(a) for a in sys.argv[1:5])
promtool = sys.argv[5] if len(sys.argv) > 5 else None
env = dict(promtest.clean_env(fake), LC_ALL="C.UTF-8", GPUSPY_INTERVAL="100ms",
           GPUSPY_LIBRARY=lib)
tmp = harness.tempdir()
NSITES = 9
# a piece of each site's name that survives a printer's cut and its '?'
MARKS = ["bad", "\u00e9" * 8, "x" + "\u20ac" * 8, "xy" + "\U0001F600" * 4, "xyz" + "\u00e9" * 8,
         "cut", "over", "h" * 40, "c1"]
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def utf8(data, what):
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        check(False, f"{what}: strict UTF-8", e)
        return None


gpuspy = harness.Cli(cli, env=env, timeout=120, text=False)


def marks_in(text, what, want=MARKS):
    missing = [m for m in want if m not in text]
    check(not missing, f"{what}: every site is there", missing)


# --- a run, its endpoint scraped and the exporter over it meanwhile ------

run = os.path.join(tmp, "run")
p = subprocess.Popen([cli, "run", "-o", run, "--", prog, "4", "wait"],
                     env=dict(env, GPUSPY_PROMETHEUS="127.0.0.1:0", GPUSPY_PROMETHEUS_TOP="20"),
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
ready, _, _ = select.select([p.stdout], [], [], 60)
check(ready and p.stdout.readline() == b"ready\n", "the program ran its sites")
# the snapshot after the last allocation (the exporter reads it), and the
# endpoint's page of a sample after it (made after each sample)
harness.wait_snapshot(run, lambda doc: all(m in json.dumps(doc, ensure_ascii=False)
                                           for m in MARKS), proc=p)
addr = harness.wait_file(os.path.join(run, "*", "prometheus"), lambda t: t.endswith("\n"),
                         proc=p)
addr = addr.strip() if addr else None


def page_has_marks(url):
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            page = r.read().decode("utf-8", errors="replace")
    except OSError:
        return False
    return all(m in page for m in MARKS)


if addr:
    harness.wait_for(lambda: page_has_marks(f"http://{addr}/metrics"), proc=p)


def metrics(url, what):
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            body = r.read()
    except OSError as e:
        check(False, f"{what}: /metrics answers", e)
        return
    page = utf8(body, what + " /metrics")
    if page is None:
        return
    check(promtest.parse(page) is not None, f"{what}: every line a sample or a comment")
    names = [s[1].get("name", "") for s in promtest.parse(page)
             if s[0] == "gpuspy_site_live_bytes"]
    marks_in("\n".join(names), f"{what}: gpuspy_site_live_bytes")
    check(not any(CONTROL.search(n) for n in names), f"{what}: no control character in a name",
          [n for n in names if CONTROL.search(n)][:3])
    if promtool:
        pt = subprocess.run([promtool, "check", "metrics"], input=body, capture_output=True)
        check(pt.returncode == 0, f"{what}: promtool check metrics",
              (pt.stdout + pt.stderr).decode(errors="replace"))


if check(addr is not None, "the endpoint says where it serves"):
    metrics(f"http://{addr}/metrics", "the endpoint")
x = promtest.Exporter(cli, run, env=dict(env, GPUSPY_PROMETHEUS_TOP="20"))
if check(x.url is not None, "the exporter serves the run", x.first):
    metrics(x.url, "the exporter")
x.stop()
p.stdin.close()
p.wait(60)
check(p.returncode == 0 and glob.glob(os.path.join(run, "*", "report.json")),
      "the program exited, its report written", p.stderr.read())

# --- every printer of the reader -----------------------------------------

other = os.path.join(tmp, "other")
r = subprocess.run([cli, "run", "-o", other, "--", prog, "2"], env=env, capture_output=True,
                   timeout=60)
check(r.returncode == 0, "a second run, for diff", r.stderr)


def text_output(args, what, marks=MARKS):
    r = gpuspy(*args)
    if not check(r.returncode == 0, f"{what}: status 0", r.stderr[-500:]):
        return None
    t = utf8(r.stdout, what)
    if t is None:
        return None
    check(not CONTROL.search(t.replace("\t", " ")), f"{what}: no control character",
          CONTROL.findall(t)[:5])
    marks_in(t, what, marks)
    return t


text_output(["report", "--top", "0", run], "report text")
# merge and diff name a site by a shorter headline: the start of each
short = [m[:3] for m in MARKS]
text_output(["merge", "--top", "0", run], "merge text", short)
text_output(["diff", "--top", "0", "--threshold", "0", other, run], "diff text", short)
r = subprocess.run([cli, "top", "--count", "1", "--top", "0", run], env=env,
                   capture_output=True, timeout=60)
t = utf8(r.stdout, "top")
check(r.returncode == 0 and t is not None and not CONTROL.search(t.replace("\t", " ")),
      "top: status 0, UTF-8, no control character", r.stderr)


def json_output(args, what):
    r = gpuspy(*args)
    if not check(r.returncode == 0, f"{what}: status 0", r.stderr[-500:]):
        return None
    try:
        return json.loads(r.stdout)
    except ValueError as e:
        check(False, f"{what}: JSON", e)
        return None


j = json_output(["report", "--format", "json", run], "report json")
if j:
    fns = [s.get("headline", {}).get("function", "") for s in j["sites"]]
    marks_in("\n".join(fns), "report json: headlines")
    check("bad??; name (x)\x1b[31m\x07" in fns,
          "report json: the bytes that are not UTF-8 are '?', the rest of the name kept",
          [f for f in fns if f.startswith("bad")])
    check(any(len(f) >= 5000 for f in fns), "report json: the 5,000-byte name whole")
    files = {s.get("headline", {}).get("file", "") for s in j["sites"]}
    check(any(os.path.basename(f) == "hostile?\x1b[2J??.c" for f in files),
          "report json: the source file name, not UTF-8, with '?'", files)
for args, what in ((["merge", "--format", "json", run], "merge json"),
                   (["diff", "--format", "json", other, run], "diff json")):
    d = json_output(args, what)
    check(d is not None and len(d["sites"]) >= NSITES, f"{what}: every site", d and len(d["sites"]))

r = gpuspy("report", "--format", "html", run)
page = utf8(r.stdout, "report html") if r.returncode == 0 else None
m = re.search(r'<script type="application/json" id="gpuspy-data">(.*?)</script>', page or "",
              re.S)
try:
    data = json.loads(m.group(1)) if m else None
except ValueError:
    data = None
check(r.returncode == 0 and data is not None and len(data["report"]["sites"]) >= NSITES,
      "report html: status 0, UTF-8, its data every site", r.stderr[-500:])

r = gpuspy("report", "--format", "csv", run)
check(r.returncode == 0 and utf8(r.stdout, "report csv") is not None
      and r.stdout.count(b"\n") > NSITES, "report csv: status 0, UTF-8, its rows", r.stderr)

r = gpuspy("report", "--format", "perfetto", run)
trace = None
if check(r.returncode == 0, "report perfetto: status 0", r.stderr[-500:]):
    try:
        trace = json.loads(r.stdout)
    except ValueError as e:
        check(False, "report perfetto: JSON", e)
if trace:
    ev = trace["traceEvents"] if isinstance(trace, dict) else trace
    counters = [e for e in ev if e.get("ph") == "C"]
    names = "\n".join(k for e in counters for k in e.get("args", {}))
    names += "\n".join(e.get("name", "") for e in ev)
    check(all(isinstance(e.get("name", ""), str) and e.get("ph") and "pid" in e for e in ev),
          "report perfetto: every event has its phase, name and pid")
    # the names are cut at 120 bytes, never inside a character
    marks_in(names, "report perfetto", [m[:3] for m in MARKS])
    check(not CONTROL.search(names), "report perfetto: no control character in a name")

r = gpuspy("report", "--format", "collapsed", run)
t = utf8(r.stdout, "report collapsed") if r.returncode == 0 else None
lines = t.splitlines() if t else []
check(r.returncode == 0 and len(lines) >= NSITES
      and all(re.fullmatch(r"[^\x00-\x1f\x7f]+ \d+", x) and x.rsplit(" ", 1)[0].count(";") >= 1
              for x in lines),
      "report collapsed: one 'stack BYTES' a line, a stack of frames each", lines[:3])
marks_in(t or "", "report collapsed")

r = gpuspy("report", "--format", "pprof", run)
if check(r.returncode == 0 and r.stdout[:2] == b"\x1f\x8b", "report pprof: status 0, gzip'ed",
         r.stderr[-500:]):
    gzip.decompress(r.stdout)
    if shutil.which("go"):
        with tempfile.NamedTemporaryFile(suffix=".pb.gz") as f:
            f.write(r.stdout)
            f.flush()
            pp = subprocess.run(["go", "tool", "pprof", "-top", "-nodefraction=0", f.name],
                                env=env, capture_output=True, timeout=120)
        top = utf8(pp.stdout, "go tool pprof -top")
        check(pp.returncode == 0 and top is not None, "go tool pprof -top reads it",
              pp.stderr[-500:])
        marks_in(top or "", "go tool pprof -top", [m[:3] for m in MARKS])
    else:
        print("skip go tool pprof: no go")

logdir = os.path.join(tmp, "tb")
r = gpuspy("export", "--tensorboard", logdir, "--top", "0", run)
tags = []
if check(r.returncode == 0, "export --tensorboard: status 0", r.stderr[-500:]):
    for d, _, fs in os.walk(logdir):
        for n in fs:
            try:
                for e in tbread.read_events(os.path.join(d, n)):
                    tags += [v[0] if isinstance(v, tuple) else v for v in (e.get("values") or [])]
            except (tbread.Bad, UnicodeDecodeError) as e:
                check(False, "export --tensorboard: the event file decodes, tags UTF-8", e)
    tags = [t if isinstance(t, str) else str(t) for t in tags]
    check(any(t.startswith("sites/") for t in tags), "export --tensorboard: a tag per site",
          tags[:5])
    check(not any(CONTROL.search(t) for t in tags), "export --tensorboard: no control character")

shutil.rmtree(tmp, ignore_errors=True)
sys.exit(harness.done())
