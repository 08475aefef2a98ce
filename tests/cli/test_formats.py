#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""'gpuspy report --format pprof|perfetto|collapsed', read by the tools a
user would open them with:
 - golden files on the fixtures (fixtures/*.expected.collapsed,
   *.expected.trace.json, and *.expected.pprof.txt: 'go tool pprof -raw'
   of the profile);
 - pprof: 'go tool pprof' (Debian's golang-go) -top lists the leaking
   function with its bytes, -sample_index=inuse_objects its count,
   -tagfocus device=N and rank=N keep one process;
 - perfetto: every event checked against the trace-event format (ph, ts,
   pid, numeric counters, timestamps in order on every track), each
   process its own pid and name, the counters those of the history;
 - collapsed: speedscope's own importer (npm 'speedscope', run headless by
   speedscope_import.js) reads it, and its total is the live bytes;
 - the moment: --at LABEL (the last mark of that label), --peak, exit;
 - a run directory of four ranks; a process killed with SIGKILL (read
   from its snapshot) and one run on the fake driver;
 - every corrupted report of bad_inputs.py, and corrupted histories for
   perfetto: status 2, one line naming the file, nothing on stdout.

    test_formats.py GPUSPY FIXTURES LIBGPUSPY FAKE_DIR LEAKER [--update]

speedscope is fetched with 'npm pack' into a cache outside the tree
($GPUSPY_TEST_CACHE, default ~/.cache/gpuspy-tests); the speedscope check
is skipped, with a SKIP line, only when neither node nor the package can be
had.
"""
import gzip
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bad_inputs  # noqa: E402  the corrupted reports the other commands get

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

gpuspy, fixtures, lib, fake, leaker = [os.path.abspath(a) for a in sys.argv[1:6]]
fixtures = os.path.abspath(fixtures)
UPDATE = "--update" in sys.argv[6:]
SPEEDSCOPE = "speedscope@1.25.0"
MiB = 1 << 20
ENV = {k: v for k, v in os.environ.items() if not k.startswith(("GPUSPY_", "LC_", "LANG"))}
ENV["TZ"] = "UTC"


report = harness.Cli(gpuspy, "report", cwd=fixtures, env=ENV, text=False)


def go_pprof(data, *args):
    """go tool pprof ARGS on the profile DATA: (status, stdout, stderr)."""
    with tempfile.NamedTemporaryFile(suffix=".pb.gz") as f:
        f.write(data)
        f.flush()
        p = subprocess.run(["go", "tool", "pprof"] + list(args) + [f.name], env=ENV,
                           capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def pprof_top(data, *args):
    """{function: (flat, cum)} of 'go tool pprof -top -unit=B ARGS'."""
    rc, out, err = go_pprof(data, "-top", "-unit=B", "-nodefraction=0", *args)
    rows = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 6 and re.fullmatch(r"\d+B?", f[0]) and re.fullmatch(r"\d+B?", f[3]):
            rows[" ".join(f[5:])] = (int(f[0].rstrip("B")), int(f[3].rstrip("B")))
    return rc, rows, out + err


def pprof_count_top(data, *args):
    rc, out, err = go_pprof(data, "-top", "-nodefraction=0", *args)
    rows = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 6 and f[0].isdigit():
            rows[" ".join(f[5:])] = (int(f[0]), int(f[3]))
    return rc, rows, out + err


# --- the trace-event format (Chrome's "Trace Event Format" document) ------

PHASES = set("BEXiIC" "bne" "sft" "PONDM" "Rc")


def validate_trace(doc):
    """The list of what breaks the trace-event format in DOC; [] if none."""
    bad = []
    events = doc.get("traceEvents") if isinstance(doc, dict) else doc
    if not isinstance(events, list):
        return ["no traceEvents array"]
    last = {}
    for i, ev in enumerate(events):
        where = "event %d %r" % (i, ev)[:200]
        if not isinstance(ev, dict):
            bad.append(where + ": not an object")
            continue
        ph = ev.get("ph")
        if ph not in PHASES:
            bad.append(where + ": ph %r" % (ph,))
        if not isinstance(ev.get("ts"), (int, float)) or isinstance(ev.get("ts"), bool) \
                or ev["ts"] < 0:
            bad.append(where + ": ts not a number >= 0")
        if not isinstance(ev.get("pid"), int) or isinstance(ev.get("pid"), bool):
            bad.append(where + ": pid not an integer")
        if "tid" in ev and not isinstance(ev["tid"], int):
            bad.append(where + ": tid not an integer")
        if not isinstance(ev.get("name"), str) or not ev["name"]:
            bad.append(where + ": no name")
        if ph == "C":
            args = ev.get("args")
            if not isinstance(args, dict) or not args or not all(
                    isinstance(v, (int, float)) and not isinstance(v, bool)
                    for v in args.values()):
                bad.append(where + ": counter args not all numeric")
        if ph == "X" and (not isinstance(ev.get("dur"), (int, float)) or ev["dur"] < 0):
            bad.append(where + ": complete event without dur >= 0")
        if ph == "i" and ev.get("s", "t") not in ("g", "p", "t"):
            bad.append(where + ": instant scope %r" % ev.get("s"))
        if ph == "M":
            continue
        # a track: a counter by (pid, name), anything else by (pid, tid)
        track = (ev.get("pid"), "C", ev.get("name")) if ph == "C" else \
            (ev.get("pid"), ph, ev.get("tid"))
        ts = ev.get("ts")
        if isinstance(ts, (int, float)):
            if track in last and ts < last[track]:
                bad.append(where + ": ts goes back on its track (%r < %r)" % (ts, last[track]))
            last[track] = ts
    return bad


def counters(doc, pid=None):
    """{name: [(ts, bytes)]} of the counter events (of PID)."""
    out = {}
    for ev in doc["traceEvents"]:
        if ev["ph"] == "C" and (pid is None or ev["pid"] == pid):
            out.setdefault(ev["name"], []).append((ev["ts"], ev["args"]["bytes"]))
    return out


# --- speedscope, from npm --------------------------------------------------

def speedscope_dir():
    """The unpacked npm package, or None (and a reason) when it cannot be had."""
    if not shutil.which("node"):
        return None, "node is not installed"
    cache = os.environ.get("GPUSPY_TEST_CACHE") or os.path.join(
        os.path.expanduser("~"), ".cache", "gpuspy-tests")
    pkg = os.path.join(cache, SPEEDSCOPE.replace("@", "-"), "package")
    if os.path.isfile(os.path.join(pkg, "package.json")):
        return pkg, None
    if not shutil.which("npm"):
        return None, "npm is not installed and %s is not cached in %s" % (SPEEDSCOPE, cache)
    os.makedirs(os.path.dirname(pkg), exist_ok=True)
    p = subprocess.run(["npm", "pack", "--silent", SPEEDSCOPE, "--pack-destination",
                        os.path.dirname(pkg)], capture_output=True, text=True, timeout=300)
    tgz = [f for f in os.listdir(os.path.dirname(pkg)) if f.endswith(".tgz")]
    if p.returncode != 0 or not tgz:
        return None, "npm pack %s failed: %s" % (SPEEDSCOPE, p.stderr.strip()[-300:])
    subprocess.run(["tar", "xzf", tgz[0]], cwd=os.path.dirname(pkg), check=True)
    return pkg, None


SS_PKG, SS_WHY = speedscope_dir()
if not SS_PKG:
    print("SKIP speedscope checks: " + SS_WHY)


def speedscope(text):
    """What speedscope's importer makes of TEXT: {"total", "frames"}, or None."""
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as f:
        f.write(text)
        f.flush()
        p = subprocess.run(["node", os.path.join(HERE, "speedscope_import.js"), SS_PKG, f.name],
                           capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        check(False, "speedscope imports the collapsed stacks", p.stderr)
        return None
    return json.loads(p.stdout)


def collapsed_total(text):
    return sum(int(line.rsplit(" ", 1)[1]) for line in text.splitlines())


# --- 1. golden files ------------------------------------------------------

GOLDEN = [
    (["--format", "collapsed", "python"], "python.expected.collapsed"),
    (["--format", "collapsed", "run"], "run.expected.collapsed"),
    (["--format", "collapsed", "--peak", "run"], "run-peak.expected.collapsed"),
    (["--format", "collapsed", "pools"], "pools.expected.collapsed"),
    (["--format", "collapsed", "killed"], "killed.expected.collapsed"),
    (["--format", "collapsed", "--at", "epoch 2", "timeline"], "timeline-epoch2.expected.collapsed"),
    (["--format", "perfetto", "timeline"], "timeline.expected.trace.json"),
    (["--format", "perfetto", "ranks"], "ranks.expected.trace.json"),
    (["--format", "perfetto", "killed"], "killed.expected.trace.json"),
    (["--format", "perfetto", "oom"], "oom.expected.trace.json"),
    (["--format", "pprof", "ranks"], "ranks.expected.pprof.txt"),
    (["--format", "pprof", "--at", "epoch 1", "timeline"], "timeline-epoch1.expected.pprof.txt"),
    (["--format", "pprof", "python"], "python.expected.pprof.txt"),
]

for args, name in GOLDEN:
    p = report(*args)
    ok = check(p.returncode == 0 and not p.stderr, "golden: report %s runs" % " ".join(args),
               p.stderr.decode(errors="replace"))
    if not ok:
        continue
    out = p.stdout
    if name.endswith(".pprof.txt"):
        rc, raw, err = go_pprof(out, "-raw")
        if not check(rc == 0, "go tool pprof -raw reads %s" % name, err):
            continue
        out = raw.encode()
    path = os.path.join(fixtures, name)
    if UPDATE:
        with open(path, "wb") as f:
            f.write(out)
        print("updated " + name)
        continue
    with open(path, "rb") as f:
        want = f.read()
    check(out == want, "golden: %s" % name,
          "got:\n" + out.decode(errors="replace")[:2000])

# --- 2. pprof, read by go tool pprof ---------------------------------------

p = report("--format", "pprof", "ranks")
prof = p.stdout
check(prof[:2] == b"\x1f\x8b" and len(gzip.decompress(prof)) > 0,
      "pprof: a gzip stream of a profile")
rc, top, out = pprof_top(prof)
# ranks: cache_batch leaks 1 MiB in ranks 0, 1, 3 and 9 MiB in rank 2
check(rc == 0 and top.get("cache_batch") == (12 * MiB, 12 * MiB),
      "pprof -top: cache_batch holds 12 MiB, flat and cumulative", out)
check("Type: inuse_space" in out, "pprof: inuse_space is the default sample type", out)
rc, top, out = pprof_count_top(prof, "-sample_index=inuse_objects")
check(rc == 0 and top.get("cache_batch") == (4, 4),
      "pprof -sample_index=inuse_objects: 4 live allocations of cache_batch", out)
rc, top, out = pprof_top(prof, "-sample_index=alloc_space")
check(rc == 0 and top.get("all_reduce", (0, 0))[1] == 4 * 8 * MiB,
      "pprof -sample_index=alloc_space: bucket_alloc's 8 MiB per rank under all_reduce", out)
for dev, want in ((0, MiB), (2, 9 * MiB)):
    rc, top, out = pprof_top(prof, "-tagfocus", "device=%d" % dev)
    check(rc == 0 and top.get("cache_batch") == (want, want),
          "pprof -tagfocus device=%d keeps that device's %d MiB" % (dev, want // MiB), out)
rc, top, out = pprof_top(prof, "-tagfocus", "rank=2")
check(rc == 0 and top.get("cache_batch") == (9 * MiB, 9 * MiB),
      "pprof -tagfocus rank=2 keeps the outlier's 9 MiB", out)
rc, out, err = go_pprof(prof, "-tags")
check(rc == 0 and all(k in out for k in (" kind:", " device:", " rank:", " api:", " process:")),
      "pprof -tags: kind, device, rank, api and process labels", out + err)
rc, out, err = go_pprof(report("--format", "pprof", "python").stdout, "-tags")
check(rc == 0 and " library:" in out and "NCCL" in out and " pool:" in out
      and "PyTorch caching allocator" in out,
      "pprof -tags: library (NCCL) and pool labels where they apply", out + err)
rc, out, err = go_pprof(report("--format", "pprof", "python").stdout, "-raw")
check(rc == 0 and "Model.forward" in out and "model.py:42" in out and "Mappings" in out,
      "pprof -raw: Python frames with their files and lines, and mappings", out[-1500:])
rc, out, err = go_pprof(prof, "-raw")
check(rc == 0 and "d0d0feed00c0ffee" in out.split("Mappings", 1)[-1],
      "pprof: the mapping carries the module's build id", out[-800:])

# --- 3. the moment: exit, --peak, --at LABEL --------------------------------

# timeline/node7-4242: marks "epoch 1" (twice: the last one, 3 MiB + 1 KiB)
# and "epoch 2" (6 MiB + 1 KiB); at the peak 11 MiB + 1 KiB; pinned never
for args, want, what in (([], 3 * MiB + 1024, "at exit"),
                         (["--peak"], 11 * MiB + 1024, "at the peak"),
                         (["--at", "epoch 1"], 3 * MiB + 1024, "at the last mark 'epoch 1'"),
                         (["--at", "epoch 2"], 6 * MiB + 1024, "at the mark 'epoch 2'")):
    p = report("--format", "collapsed", *args, "timeline")
    check(p.returncode == 0 and collapsed_total(p.stdout.decode()) == want,
          "collapsed %s: %d bytes" % (what, want), p.stdout.decode() + p.stderr.decode())
    rc, top, out = pprof_top(report("--format", "pprof", *args, "timeline").stdout)
    check(rc == 0 and sum(v[0] for v in top.values()) == want,
          "pprof %s: the flat bytes add up to %d" % (what, want), out)
rc, top, out = pprof_top(report("--format", "pprof", "--at", "epoch 2", "timeline").stdout)
check(top.get("train_step") == (4 * MiB, 4 * MiB) and top.get("leak_driver") == (2 * MiB, 2 * MiB),
      "pprof --at 'epoch 2': train_step 4 MiB, leak_driver 2 MiB", out)
for args, what in ((["--format", "collapsed", "--at", "nope", "timeline"], "an unknown mark"),
                   (["--format", "pprof", "--peak", "process"], "--peak without a peak copy")):
    p = report(*args)
    err = p.stderr.decode()
    check(p.returncode == 2 and not p.stdout and len(err.splitlines()) == 1
          and "report.json" in err, "%s: status 2, one line naming the file" % what, err)
for args in (["--format", "perfetto", "--at", "x"], ["--format", "csv", "--peak"],
             ["--format", "pprof", "--peak", "--at", "x"], ["--format", "svg"]):
    p = report(*(args + ["timeline"]))
    check(p.returncode == 2 and not p.stdout and len(p.stderr.splitlines()) == 1,
          "usage: %s is refused" % " ".join(args), p.stderr)
p = subprocess.run([gpuspy, "merge", "--format", "pprof", "ranks"], cwd=fixtures,
                   capture_output=True)
check(p.returncode == 2 and not p.stdout, "gpuspy merge has no pprof format", p.stderr)

# --- 4. perfetto -----------------------------------------------------------

for fixture in ("timeline", "ranks", "killed", "oom", "run", "python", "growth", "hostile"):
    p = report("--format", "perfetto", fixture)
    try:
        doc = json.loads(p.stdout)
    except ValueError as e:
        check(False, "perfetto %s: JSON" % fixture, e)
        continue
    bad = validate_trace(doc)
    check(p.returncode == 0 and not bad, "perfetto %s: valid trace events" % fixture,
          "\n".join(bad[:10]) + p.stderr.decode())
doc = json.loads(report("--format", "perfetto", "ranks").stdout)
names = {ev["pid"]: ev["args"]["name"] for ev in doc["traceEvents"]
         if ev["ph"] == "M" and ev["name"] == "process_name"}
check(names == {200 + r: "rank %d (node2-%d)" % (r, 200 + r) for r in range(4)},
      "perfetto ranks: each rank its own process, named", names)
check(all("GPU memory, device %d" % (pid - 200) in counters(doc, pid) for pid in names),
      "perfetto ranks: a counter track per device in each rank's group",
      {pid: list(counters(doc, pid)) for pid in names})
doc = json.loads(report("--format", "perfetto", "timeline").stdout)
c = counters(doc)
dev = c.get("GPU memory, device 0", [])
check(max(v for _, v in dev) == 11 * MiB + 1024 and dev[-1][1] == 3 * MiB + 1024,
      "perfetto timeline: device 0 reaches the peak, ends at 3 MiB + 1 KiB", dev)
# each site's track as the text report lists it: "#N NAME"
sites = [n for n in c if n.startswith("#")]
check(len(sites) == 2 and any("leak_driver" in n for n in sites)
      and any("train_step" in n for n in sites) and "other sites" in c
      and any(n.startswith("NVML") for n in c),
      "perfetto timeline: a counter per top site, the rest, NVML", list(c))
inst = [ev["name"] for ev in doc["traceEvents"] if ev["ph"] == "i"]
check(inst == ["mark: epoch 1", "peak: 11.0 MiB", "mark: epoch 2",
               "out of memory 1: cudaMalloc of 64.0 GiB", "snapshot 1: signal", "mark: epoch 1"],
      "perfetto timeline: marks, the peak, the OOM, the snapshot, in order", inst)
mark2 = [ev["ts"] for ev in doc["traceEvents"] if ev["name"] == "mark: epoch 2"]
x = [ev for ev in doc["traceEvents"] if ev["ph"] == "X"]
check(mark2 == [20375000] and x and x[0]["ts"] == 0 and x[0]["dur"] == 42250000,
      "perfetto timeline: times in microseconds from the process's start", (mark2, x))

# --- 5. collapsed, read by speedscope ---------------------------------------

for fixture, args in (("python", []), ("ranks", []), ("run", ["--peak"]),
                      ("timeline", ["--at", "epoch 2"]), ("killed", [])):
    p = report("--format", "collapsed", *args, fixture)
    text = p.stdout.decode()
    lines = text.splitlines()
    check(p.returncode == 0 and lines and all(";" in x and x.rsplit(" ", 1)[1].isdigit()
                                              for x in lines),
          "collapsed %s: 'frame;...;frame BYTES' lines" % fixture, text)
    j = json.loads(report("--format", "json", fixture).stdout)
    if args == ["--peak"]:
        live = j["at_peak"]["bytes"]
    elif args:
        live = 6 * MiB + 1024
    else:
        live = j["leaked"]["bytes"]
    check(collapsed_total(text) == live, "collapsed %s: the total is the live bytes %d"
          % (fixture, live), text)
    if SS_PKG:
        ss = speedscope(text)
        check(ss is not None and ss["total"] == live,
              "speedscope imports collapsed %s: total %d" % (fixture, live), ss)
# several runs at once: their sum, each process its own track group
both = report("--format", "collapsed", "run", "ranks").stdout.decode()
check(collapsed_total(both) == json.loads(report("--format", "json", "run", "ranks").stdout)
      ["leaked"]["bytes"] == 3670016 + 12 * MiB, "collapsed of two runs: the live bytes of both",
      both)
doc = json.loads(report("--format", "perfetto", "run", "ranks").stdout)
pids = {ev["pid"] for ev in doc["traceEvents"] if ev["name"] == "process_name"}
check(not validate_trace(doc) and len(pids) == 6, "perfetto of two runs: six processes", pids)
p = report("--format", "collapsed", "python")
check(p.stdout.decode().startswith("<module> (train.py:30);step (train.py);Model.forward "
                                   "(model.py:42);"),
      "collapsed: root first, Python frames with file and line", p.stdout.decode())
p = report("--format", "collapsed", "hostile")
check(p.returncode == 0 and not any(ch in p.stdout.decode()
                                    for ch in "\x1b\x07\x7f\r\x9b"),
      "collapsed hostile: no control character reaches the output", repr(p.stdout[:500]))

# --- 6. real programs on the fake driver: one that exits, one killed --------

run_env = dict(ENV, LD_LIBRARY_PATH=fake, GPUSPY_INTERVAL="100ms", GPUSPY_QUIET="1")
tmp = harness.tempdir()
out_exit = os.path.join(tmp, "exit")
r = subprocess.run([leaker, "20", "20", "512"], env=dict(run_env, LD_PRELOAD=lib,
                   GPUSPY_OUTPUT_DIR=out_exit), capture_output=True, text=True, timeout=60)
check(r.returncode == 0, "leaker ran on the fake driver", r.stderr)
prof = report("--format", "pprof", out_exit, cwd=tmp).stdout
rc, top, out = pprof_top(prof)
check(rc == 0 and top.get("keep_output", (0, 0))[1] == 20 * 512 * 1024,
      "pprof -top of a real run: keep_output holds 10 MiB (cumulative)", out)
rc, top, out = pprof_count_top(prof, "-sample_index=inuse_objects")
check(rc == 0 and top.get("keep_output", (0, 0))[1] == 20,
      "pprof -sample_index=inuse_objects: its 20 allocations", out)
doc = json.loads(report("--format", "perfetto", out_exit, cwd=tmp).stdout)
dev = counters(doc).get("GPU memory, device 0", [])
check(not validate_trace(doc) and len(dev) >= 5
      and [v for _, v in dev] == sorted(v for _, v in dev)
      and dev[-1][1] <= 20 * 512 * 1024,
      "perfetto of a real run: device 0 from its history, rising", dev)

out_kill = os.path.join(tmp, "killed")
proc = subprocess.Popen([leaker, "10", "20", "1024", "hang"],
                        env=dict(run_env, LD_PRELOAD=lib, GPUSPY_OUTPUT_DIR=out_kill),
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
proc.stdout.readline()
found = harness.wait_snapshot(out_kill, lambda doc: doc["leaked"]["bytes"] == 10 * MiB,
                              timeout=20, proc=proc)
snap = os.path.join(found[0], "snapshot.json") if found else None
proc.send_signal(signal.SIGKILL)
proc.wait()
check(snap is not None, "the killed job left a snapshot with its 10 MiB")
if snap:
    check(not os.path.exists(os.path.join(os.path.dirname(snap), "report.json")),
          "... and no report.json")
    p = report("--format", "collapsed", out_kill, cwd=tmp)
    check(p.returncode == 0 and collapsed_total(p.stdout.decode()) == 10 * MiB
          and "keep_output;cudaMalloc" in p.stdout.decode(),
          "collapsed of the killed process: 10 MiB from keep_output", p.stdout + p.stderr)
    rc, top, out = pprof_top(report("--format", "pprof", out_kill, cwd=tmp).stdout)
    check(rc == 0 and top.get("keep_output", (0, 0))[1] == 10 * MiB,
          "pprof of the killed process: keep_output 10 MiB", out)
    doc = json.loads(report("--format", "perfetto", out_kill, cwd=tmp).stdout)
    x = [ev for ev in doc["traceEvents"] if ev["ph"] == "X"]
    check(not validate_trace(doc) and x and x[0]["args"]["end"].startswith("did not exit"),
          "perfetto of the killed process: valid, its slice says it did not exit", x)

# --- 7. corrupted inputs ----------------------------------------------------

FORMATS = (["pprof"], ["perfetto"], ["collapsed"], ["collapsed", "--peak"])


def expect_bad(name, path, named):
    for fmt in FORMATS:
        p = subprocess.run([gpuspy, "report", "--format"] + fmt + [path], env=ENV,
                           capture_output=True, timeout=30)
        err = p.stderr.decode(errors="replace")
        lines = err.splitlines()
        why = None
        if p.returncode != 2:
            why = "status %d" % p.returncode
        elif len(lines) != 1 or not err.endswith("\n") or not lines[0].startswith("gpuspy"):
            why = "%d lines on stderr" % len(lines)
        elif named not in lines[0]:
            why = "the line does not name " + named
        elif p.stdout:
            why = "%d bytes on stdout" % len(p.stdout)
        if why:
            check(False, "corrupted %s, --format %s" % (name, " ".join(fmt)), why + ": " + err)
            return False
    return True


valid_path = os.path.join(fixtures, "process", "node7-4242", "report.json")
with open(valid_path, "rb") as f:
    valid_text = f.read()
valid_doc = json.loads(valid_text)
bad_dir = os.path.join(tmp, "bad")
cases = bad_inputs.mutations(valid_doc, valid_text)
ok = 0
for i, (name, content) in enumerate(cases):
    d = os.path.join(bad_dir, "case%d" % i, "node7-4242")
    os.makedirs(d)
    with open(os.path.join(d, "report.json"), "wb") as f:
        f.write(content)
    ok += expect_bad(name, os.path.dirname(d), os.path.join(d, "report.json"))
check(ok == len(cases), "%d of %d corrupted reports refused by every format" % (ok, len(cases)))

HIST = open(os.path.join(fixtures, "timeline", "node7-4242", "history.jsonl")).read()
BAD_HIST = {
    "empty history": "",
    "history of another pid": HIST.replace('"pid":4242', '"pid":4243'),
    "history not JSON": HIST + "{\"t\": 50,\n",
    "history going back in time": HIST + '{"t":1.0,"dev":{"0":1},"sites":{},"other":0}\n',
    "history value of an undeclared site": HIST + '{"t":50,"dev":{"0":1},"sites":{"9":1},"other":0}\n',
    "history with a negative value": HIST + '{"t":50,"dev":{"0":-1},"sites":{},"other":0}\n',
    "history with a NUL": HIST + "\0\n",
}
# a bad history is left out with one line: the trace is the one drawn
# from the report alone (as without history.jsonl); --strict refuses it
for name, text in BAD_HIST.items():
    d = os.path.join(bad_dir, name.replace(" ", "-"), "node7-4242")
    shutil.copytree(os.path.join(fixtures, "timeline", "node7-4242"), d)
    os.remove(os.path.join(d, "history.jsonl"))
    cmd = [gpuspy, "report", "--format", "perfetto", os.path.dirname(d)]
    without = subprocess.run(cmd, env=ENV, capture_output=True, timeout=30).stdout
    with open(os.path.join(d, "history.jsonl"), "w") as f:
        f.write(text)
    p = subprocess.run(cmd, env=ENV, capture_output=True, timeout=30)
    err = p.stderr.decode()
    check(p.returncode == 0 and p.stdout == without and without and len(err.splitlines()) == 1
          and os.path.join(d, "history.jsonl") in err and "left out" in err,
          "perfetto, %s: left out with one line naming it, the trace of the report" % name, err)
    p = subprocess.run(cmd[:2] + ["--strict"] + cmd[2:], env=ENV, capture_output=True, timeout=30)
    err = p.stderr.decode()
    check(p.returncode == 2 and not p.stdout and len(err.splitlines()) == 1
          and os.path.join(d, "history.jsonl") in err,
          "perfetto --strict, %s: status 2, one line naming it, nothing on stdout" % name, err)

shutil.rmtree(tmp, ignore_errors=True)
sys.exit(harness.done())
