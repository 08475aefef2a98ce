#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The growth of a site read back by 'gpuspy report', 'gpuspy diff' and
'gpuspy top' - the verdict the process recorded (sites[].growth), and its
history (history.jsonl) for the sparklines - on programs run on the fake
driver (tests/cli/leaker.c: keep_output() keeps KIB KiB per step):
 - report: the growing site's rate, since when and sparkline (UTF-8 and
   ASCII), its JSON "growth", exactly the process's verdict; a staircase
   (where the library flags it); two processes: the faster one's figures;
 - diff: a leak of 1 MiB per step against 2 MiB: the rates double;
 - top: on a job that leaked before top was started, the first frame's
   sparkline already rises;
 - a corrupted history.jsonl beside a good report: left out with one line
   (--strict: status 2); without one, the recorded verdict without a
   sparkline;
 - a report of an older gpuspy, which recorded no verdict: its history
   replayed through the rule ("recorded": false).
Usage: growth_read.py LIBGPUSPY GPUSPY FAKE_DIR LEAKER"""
import glob, json, os, re, shutil, subprocess, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

lib, cli, fake, prog = sys.argv[1:5]
lib = harness.preload(lib)
env = {k: v for k, v in os.environ.items() if not k.startswith(("GPUSPY_", "LC_", "LANG"))}
env.update(LD_LIBRARY_PATH=fake, GPUSPY_INTERVAL="100ms", GPUSPY_QUIET="1")
MiB = 1 << 20
BLOCKS = "\u2581\u2582\u2583\u2584\u2585\u2586\u2587\u2588"
STEPS, STEP_MS = 40, 50


def leak(kib, out, *extra):
    r = subprocess.run([prog, str(STEPS), str(STEP_MS), str(kib)] + list(extra),
                       env=dict(env, LD_PRELOAD=lib, GPUSPY_OUTPUT_DIR=out),
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, f"leaker {kib} KiB per step ran", r.stderr)


gpuspy = harness.Cli(cli, env=dict(env, LC_ALL="C.UTF-8"))


def after_last_step(run, live):
    """Whether a snapshot.json under RUN holds LIVE bytes at keep_output."""
    for path in glob.glob(os.path.join(run, "*", "snapshot.json")):
        try:
            with open(path) as f:
                sites = json.load(f)["sites"]
        except (OSError, ValueError, KeyError):
            continue
        if [s["live_bytes"] for s in sites if any(fr.get("symbol") == "keep_output"
                                                  for fr in s["frames"])] == [live]:
            return True
    return False


def growth_line(text):
    """(rate MiB/min, since s, shape, sparkline, rest) of the first
    'growth:' line, or None."""
    m = re.search(r"^    growth: ([+-][0-9.]+) MiB/min since ([0-9.]+) (s|min|h) \(([a-z-]+)\) "
                  r"(\S+) from (.*)$", text, re.M)
    if not m:
        return None
    scale = {"s": 1, "min": 60, "h": 3600}[m.group(3)]
    return float(m.group(1)), float(m.group(2)) * scale, m.group(4), m.group(5), m.group(6)


# Expected: KIB per step of STEP_MS ms (the sleep; the step takes a little
# longer, so the rate is at most this and, on a loaded machine, less).
def expected_mib_per_min(kib):
    return kib / 1024 * 60000 / STEP_MS


# 1. report: one process leaking 1 MiB per step.
one = harness.tempdir()
leak(1024, one)
r = gpuspy("report", one)
g = growth_line(r.stdout)
want = expected_mib_per_min(1024)
check(r.returncode == 0 and g is not None, "report: a growth line under GROWTH SUSPECTS",
      r.stdout[:2000])
if g:
    rate, since, shape, spark, _ = g
    check(0.4 * want <= rate <= 1.3 * want, f"report: rate {rate} MiB/min, about {want:.0f}")
    check(0 <= since < 1.5, f"report: since {since} s (the leak starts at once)")
    check(shape in ("per-sample", "staircase", "drift"), f"report: shape {shape}")
    check(len(spark) >= 10 and all(c in BLOCKS for c in spark)
          and [BLOCKS.index(c) for c in spark] == sorted(BLOCKS.index(c) for c in spark)
          and spark[0] == BLOCKS[0] and spark[-1] == BLOCKS[7],
          f"report: the sparkline rises from the lowest block to the highest: {spark}")
    sect = r.stdout.split("\nGROWTH SUSPECTS", 1)[-1].split("\n\n", 1)[0]
    check("growth:" in sect and "keep_output" in sect, "report: in GROWTH SUSPECTS, keep_output's")
r = gpuspy("report", one, env=dict(env, LC_ALL="C"))
g = growth_line(r.stdout)
check(g is not None and set(g[3]) <= set("_.-=#") and g[3][0] == "_" and g[3][-1] == "#",
      "report: ASCII sparkline when the locale is not UTF-8", g)
r = gpuspy("report", "--format", "json", one)
j = json.loads(r.stdout) if r.returncode == 0 else {}
sites = [s for s in j.get("sites", []) if s.get("growing")]
gj = sites[0].get("growth") if sites else None
check(len(sites) == 1 and gj is not None
      and set(gj) == {"since_s", "rate_bytes_per_s", "shape", "stopped", "until_s", "recorded",
                      "by", "samples", "process"} and gj["recorded"] is True
      and gj["stopped"] is False and gj["by"] == "samples",
      "json: the growing site has a growth object, the process's verdict",
      json.dumps(sites)[:1000])
# ... exactly the one report.json recorded
rec = [s for s in json.load(open(glob.glob(os.path.join(one, "*", "report.json"))[0]))["sites"]
       if s.get("growth")]
check(len(rec) == 1 and gj is not None
      and all(gj[k] == rec[0]["growth"][k] for k in ("shape", "stopped", "by"))
      and all(abs(gj[k] - rec[0]["growth"][k]) < 1e-3 for k in ("since_s", "until_s"))
      and abs(gj["rate_bytes_per_s"] - rec[0]["growth"]["rate_bytes_per_s"]) < 1,
      "json: the verdict report.json recorded, not a replay of the history",
      (rec[0].get("growth") if rec else None, gj))
if gj:
    rate = gj["rate_bytes_per_s"] * 60 / MiB
    pts = gj["samples"]
    check(0.4 * want <= rate <= 1.3 * want, f"json: rate_bytes_per_s is {rate:.0f} MiB/min")
    check(gj["shape"] != "none" and gj["process"] == 0 and 0 <= gj["since_s"] < 1.5,
          f"json: shape {gj['shape']}, process 0, since {gj['since_s']}")
    check(10 <= len(pts) <= 64 and all(len(p) == 2 for p in pts)
          and all(b[0] >= a[0] and b[1] >= a[1] for a, b in zip(pts, pts[1:]))
          and pts[-1][1] == STEPS * MiB,
          f"json: {len(pts)} samples [t, bytes], rising to {STEPS} MiB", pts[-3:])
check(not [s for s in j.get("sites", []) if not s.get("growing") and "growth" in s],
      "json: no growth object on a site that does not grow")

# 1b. An "epoch" leak, a staircase: steps of 300 ms sampled every 50 ms.
# Where the library's rule flags it, the replay names its shape and rate.
stair = harness.tempdir()
r = subprocess.run([prog, "10", "300", "1024"],
                   env=dict(env, LD_PRELOAD=lib, GPUSPY_OUTPUT_DIR=stair, GPUSPY_INTERVAL="50ms"),
                   capture_output=True, text=True, timeout=60)
r = gpuspy("report", stair)
g = growth_line(r.stdout)
if "[growing]" not in r.stdout:
    print("skip staircase: the library does not flag it")
else:
    want_stair = 1 * 60000 / 300
    check(g is not None and g[2] == "staircase" and 0.4 * want_stair <= g[0] <= 1.3 * want_stair,
          f"staircase: its shape and a rate of about {want_stair:.0f} MiB/min", g)

# 2. diff: 1 MiB per step against 2 MiB per step.
two = harness.tempdir()
leak(2048, two)
r = gpuspy("diff", one, two)
m = re.search(r"growth ([+-][0-9.]+) MiB/min \u2192 ([+-][0-9.]+) MiB/min", r.stdout)
check(r.returncode == 0 and m is not None, "diff: old rate -> new rate in CHANGED", r.stdout)
if m:
    o, n = float(m.group(1)), float(m.group(2))
    check(o > 0 and 1.5 <= n / o <= 2.7, f"diff: the rate doubles: {o} -> {n} MiB/min")
r = gpuspy("diff", "--format", "json", one, two)
rows = [s for s in json.loads(r.stdout)["sites"] if "growth_rate_bytes_per_s" in s] \
    if r.returncode == 0 else []
check(len(rows) == 1, "diff json: one site with growth_rate_bytes_per_s", r.stdout[-1500:])
if rows:
    gr = rows[0]["growth_rate_bytes_per_s"]
    check(gr["old"] > 0 and 1.5 <= gr["new"] / gr["old"] <= 2.7,
          f"diff json: {gr['old']:.0f} -> {gr['new']:.0f} bytes/s")

# 3. Two processes of one run: the fastest-growing one's figures, named.
both = harness.tempdir()
leak(1024, both)
leak(2048, both)
pids = {}
for d in glob.glob(os.path.join(both, "*")):
    rep = json.load(open(os.path.join(d, "report.json")))
    pids[rep["pid"]] = rep
fast = max(pids, key=lambda p: max(s["live_bytes"] for s in pids[p]["sites"]))
r = gpuspy("report", both)
g = growth_line(r.stdout)
check(g is not None and g[4].endswith(f", in pid {fast}")
      and 0.4 * 2 * want <= g[0] <= 1.3 * 2 * want,
      f"two processes: the rate of pid {fast}, the one leaking 2 MiB per step", g)

# 4. top on a job that leaked before top was started: its first frame rises.
run = harness.tempdir()
p = subprocess.Popen([prog, str(STEPS), str(STEP_MS), "1024", "hang"],
                     env=dict(env, LD_PRELOAD=lib, GPUSPY_OUTPUT_DIR=run),
                     stdout=subprocess.PIPE, text=True)
try:
    check(p.stdout.readline() == "leaked\n", "top: the job leaked, and runs on")
    # a snapshot after the last step (its sample is in the history: the
    # snapshot thread samples before it writes), waited for rather than
    # timed
    harness.wait_for(lambda: after_last_step(run, STEPS << 20), proc=p)
    r = gpuspy("top", "--count", "1", run)
    line = [l for l in r.stdout.splitlines() if "keep_output" in l]
    spark = "".join(c for c in (line[0] if line else "") if c in BLOCKS)
    levels = [BLOCKS.index(c) for c in spark]
    check(r.returncode == 0 and len(levels) == 20 and levels == sorted(levels)
          and levels[0] <= 1 and levels[-1] == 7,
          "top: the first frame's sparkline rises from the job's start", r.stdout)
finally:
    p.kill()
    p.wait()

# 5. A corrupted history beside a good report: read around, one line
# naming it, the output that without it, for report (text and json) and
# diff; --strict: status 2, one line; without one, as before.
bad = harness.tempdir()
shutil.copytree(one, bad, dirs_exist_ok=True)
hist = glob.glob(os.path.join(bad, "*", "history.jsonl"))[0]
shutil.move(hist, hist + ".away")
CASES = (["report", bad], ["report", "--format", "json", bad], ["diff", one, bad])
without = [gpuspy(*args).stdout for args in CASES]
shutil.move(hist + ".away", hist)
with open(hist, "a") as f:
    f.write('{"t":1e12,"dev":{}}\n')
for args, want in zip(CASES, without):
    r = gpuspy(*args)
    check(r.returncode == 0 and r.stdout == want and r.stderr.count("\n") == 1
          and hist in r.stderr and "warning:" in r.stderr,
          f"{args[0]} {args[1]}: a corrupted history: left out, one line",
          (r.returncode, r.stdout[:300], r.stderr))
    r = gpuspy(args[0], "--strict", *args[1:])
    check(r.returncode == 2 and r.stdout == "" and r.stderr.count("\n") == 1
          and hist in r.stderr, f"{args[0]} --strict: a corrupted history: status 2, one line",
          (r.returncode, r.stdout[:300], r.stderr))
os.unlink(hist)
r = gpuspy("report", bad)
gl = [l for l in r.stdout.splitlines() if l.startswith("    growth: ")]
check(r.returncode == 0 and "[growing]" in r.stdout and len(gl) == 1
      and re.match(r"^    growth: \+[0-9.]+ MiB/min since [0-9.]+ s \((per-sample|staircase|drift)\)$",
                   gl[0]),
      "report without history.jsonl: the recorded verdict, without a sparkline", r.stdout[:1500])
r = gpuspy("report", "--format", "json", bad)
jb = json.loads(r.stdout) if r.returncode == 0 else {}
gb = [s["growth"] for s in jb.get("sites", []) if "growth" in s]
check(len(gb) == 1 and gb[0]["recorded"] is True and gb[0]["samples"] == [],
      "json without history.jsonl: the recorded growth, no samples", gb)

# 6. A report of a gpuspy that recorded no verdict (before 0.4): its
# history replayed through the rule, said so; still readable.
old = harness.tempdir()
shutil.copytree(one, old, dirs_exist_ok=True)
rj = glob.glob(os.path.join(old, "*", "report.json"))[0]
doc = json.load(open(rj))
for s in doc["sites"]:
    s.pop("growth", None)
json.dump(doc, open(rj, "w"))
r = gpuspy("report", "--format", "json", old)
jo = json.loads(r.stdout) if r.returncode == 0 else {}
go = [s["growth"] for s in jo.get("sites", []) if "growth" in s]
check(len(go) == 1 and go[0]["recorded"] is False and go[0]["since_s"] is not None
      and len(go[0]["samples"]) >= 10,
      "an older report: the history replayed (recorded false)", (r.stderr, go))
r = gpuspy("report", old)
check(r.returncode == 0 and growth_line(r.stdout) is not None,
      "... and the text report's growth line with its sparkline", r.stdout[:1500])

for d in (one, stair, two, both, run, bad, old):
    shutil.rmtree(d, ignore_errors=True)
sys.exit(harness.done())
