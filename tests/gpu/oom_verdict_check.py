"""Checks the evidence of tests/gpu/oom_verdict.py (scripts/gpu-check, case
oom-verdict): the reference workload under GPUSPY_LIMIT=8G on a large GPU,
at a batch that fits 8 GiB and one that does not, with PyTorch's default
allocator and with expandable_segments, against what PyTorch itself says.

DIR holds, per run NAME, NAME.stdout (the program's RESULT line),
NAME.stderr, NAME.status and NAME/ (the run's GPUSPY_OUTPUT_DIR):
  MODE-fit, MODE-nofit     MODE default or expandable, under gpuspy with
                           GPUSPY_LIMIT=8G
  plain-nofit              the batch that does not fit 8 GiB, without
                           gpuspy: the card itself has room for it
  time-R-off, time-R-on    the batch that fits, under gpuspy without and
                           with GPUSPY_LIMIT=8G (which it never reaches),
                           in turn, R = 1, 2 ...: the step time's ratio

What must hold:
 - a run that fits: no error, and PyTorch sees an 8 GiB card
   (torch.cuda.mem_get_info()'s total);
 - a run that does not fit: PyTorch raised OutOfMemoryError on "a total
   capacity of 8.00 GiB"; gpuspy said so on stderr, with a verdict, after
   the last failed request; that event's post-mortem carries PyTorch's
   figures, which agree with the figures of PyTorch's own message (the
   block it tried, reserved less allocated) and with memory_stats() then
   (reserved, exactly: nothing is given back in between); the verdict is
   fragmentation exactly when PyTorch's "reserved but unallocated" holds
   the block it tried (PyTorch's own numbers, the rule's criterion), else
   the cap (or memory outside the pool, where gpuspy saw enough of it);
   with expandable segments on, a fragmentation verdict says so; with
   GPUSPY_CLI, `gpuspy report` gives that event the same class;
 - without gpuspy the same batch trains (the limit is what it hit);
 - the step time with the limit set but not reached, over without it:
   printed, a ratio of the same run (not judged here).
Usage: oom_verdict_check.py DIR [GPUSPY_CLI]"""
import glob
import json
import os
import re
import statistics
import subprocess
import sys

d = sys.argv[1]
cli = sys.argv[2] if len(sys.argv) > 2 and sys.argv[2] else None
GiB = 1 << 30
failures = 0


def check(ok, what):
    global failures
    print(("ok   " if ok else "FAIL ") + "oom-verdict " + what, flush=True)
    failures += not ok


def read(name, ext):
    p = os.path.join(d, name + ext)
    return open(p, errors="replace").read() if os.path.exists(p) else ""


def result(name):
    for line in read(name, ".stdout").splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    return None


def close(a, b, rel=0.01, slack=2 << 20):
    """Two byte counts alike, one of them from PyTorch's two-decimal text."""
    return a is not None and b is not None and abs(a - b) <= max(rel * max(a, b), slack)


def decisive(stderr):
    """gpuspy's verdict line said when PyTorch raised OutOfMemoryError."""
    lines = stderr.splitlines()
    for i, l in enumerate(lines):
        if "PyTorch raised OutOfMemoryError" in l and i + 1 < len(lines):
            return l, lines[i + 1].replace("gpuspy:   ", "", 1)
    return None, None


for mode in ("default", "expandable"):
    name = mode + "-fit"
    r = result(name)
    status = read(name, ".status").strip()
    check(r is not None and status == "0" and r["oom"] is None and r["steps"] > 0,
          "%s: batch %s trains under GPUSPY_LIMIT=8G: status %s, %s steps, %s ms a step" %
          (name, r and r["batch"], status, r and r["steps"], r and r["median_ms"]))
    check(r is not None and r["mem_get_info"][1] == 8 * GiB,
          "%s: torch.cuda.mem_get_info() says an 8 GiB card: %s (total_memory %s)" %
          (name, r and r["mem_get_info"], r and r["total_memory"]))
    check("gpuspy: GPUSPY_LIMIT: each device capped at 8.0 GiB" in read(name, ".stderr"),
          "%s: the limit said on stderr" % name)

    name = mode + "-nofit"
    r = result(name)
    status = read(name, ".status").strip()
    oom = (r or {}).get("oom") or {}
    check(r is not None and status == "0" and bool(oom),
          "%s: batch %s raised OutOfMemoryError, caught: status %s, %s" %
          (name, r and r["batch"], status, oom.get("message", "")[:300]))
    if not oom:
        continue
    check(close(oom.get("capacity"), 8 * GiB),
          "%s: PyTorch's message names an 8 GiB card: %s" % (name, oom.get("capacity")))
    check((r or {}).get("view_started") is True,
          "%s: gpuspy's PyTorch view had started (its observer attached)" % name)
    said, line = decisive(read(name, ".stderr"))
    check(bool(line), "%s: gpuspy said PyTorch raised, then why: %s" % (name, line))
    reps = glob.glob(os.path.join(d, name, "*", "report.json"))
    rep = json.load(open(reps[0])) if len(reps) == 1 else {}
    events = [e for e in rep.get("oom", []) if e.get("torch")]
    ev = events[-1] if events else {}
    t = ev.get("torch", {})
    check(bool(t) and ev.get("capped") is True and ev.get("limit_bytes") == 8 * GiB,
          "%s: report.json: the event PyTorch raised after is capped at 8 GiB, with PyTorch's "
          "figures: %s" % (name, {k: t.get(k) for k in ("requested_bytes", "allocated_bytes",
                                                         "reserved_bytes", "largest_free_bytes")}))
    if not t:
        continue
    for h in t.get("holders", []):
        f = (h.get("frames") or [{}])[0]
        print("     oom-verdict %s: PyTorch's holder %d bytes in %d blocks, %s, at %s:%s %s" %
              (name, h["bytes"], h["blocks"], h.get("role", "no role told"),
               os.path.basename(f.get("file", "?")), f.get("line"), f.get("function")))
    slack = t["reserved_bytes"] - t["allocated_bytes"]
    check(close(t["requested_bytes"], oom.get("tried")),
          "%s: the block asked: gpuspy %d, PyTorch's message %s" %
          (name, t["requested_bytes"], oom.get("tried")))
    check(close(slack, oom.get("unallocated")),
          "%s: reserved less allocated: gpuspy %d, PyTorch's \"reserved but unallocated\" %s" %
          (name, slack, oom.get("unallocated")))
    check(t["reserved_bytes"] == oom["stats"].get("reserved_bytes.all.current"),
          "%s: reserved: gpuspy %d, memory_stats() at the error %s" %
          (name, t["reserved_bytes"], oom["stats"].get("reserved_bytes.all.current")))
    frag = oom.get("unallocated") is not None and oom.get("tried") is not None and \
        oom["unallocated"] >= oom["tried"]
    cls = (line or "").split(":", 1)[0]
    # not fragmentation: the cap, unless memory outside PyTorch's pool
    # (libraries' own, by gpuspy's figures) covers what was missing
    check(cls == "fragmentation" if frag else cls in ("cap", "outside-framework"),
          "%s: the verdict is %s; PyTorch's own numbers say %s (%s reserved but unallocated, "
          "%s tried)" % (name, cls, "fragmentation" if frag else "a shortage on the 8 GiB card",
                         oom.get("unallocated"), oom.get("tried")))
    if mode == "expandable" and cls == "fragmentation":
        check("expandable_segments is on already" in line,
              "%s: the fragmentation verdict says expandable_segments is on" % name)
    if cli:
        p = subprocess.run([cli, "report", "--format", "json", os.path.join(d, name)],
                           capture_output=True, text=True)
        j = json.loads(p.stdout) if p.returncode == 0 else {}
        got = [o["verdict"]["class"] for o in j.get("oom", [])
               if "pool_reserved_bytes" in o.get("verdict", {})]
        check(got[-1:] == [cls], "%s: gpuspy report's verdict of that event: %s %s" %
              (name, got[-1:], p.stderr.strip()[:200]))

r = result("plain-nofit")
check(r is not None and read("plain-nofit", ".status").strip() == "0" and r["oom"] is None,
      "plain-nofit: without gpuspy the batch that does not fit 8 GiB trains on the card: %s" %
      (r and (r["oom"] or {}).get("message", "no error")))

ratios = []
for run in sorted({m.group(1) for m in (re.match(r"time-(\d+)-on\.stdout$", f)
                                        for f in os.listdir(d)) if m}, key=int):
    off, on = result("time-%s-off" % run), result("time-%s-on" % run)
    if off and on and off["median_ms"] and on["median_ms"]:
        ratios.append(on["median_ms"] / off["median_ms"])
        print("     oom-verdict step time round %s: %.2f ms without the limit, %.2f ms with it "
              "(not reached): %.3fx" % (run, off["median_ms"], on["median_ms"], ratios[-1]))
check(bool(ratios), "step time with GPUSPY_LIMIT=8G not reached, over without: %s" %
      (("median %.3fx of %d rounds" % (statistics.median(ratios), len(ratios))) if ratios
       else "no rounds"))
print("oom-verdict: %d FAIL" % failures)
sys.exit(1 if failures else 0)
