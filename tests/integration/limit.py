#!/usr/bin/env python3
"""GPUSPY_LIMIT (libgpuspy(7)): a smaller card on purpose, on the fake
driver, every door.

 - limit_doors (shared runtime) and limit_doors_static (static runtime)
   hold 48 MiB and ask 32 MiB of every allocating entry point, by every
   door, under GPUSPY_LIMIT=64M on an 80 GiB device: their output (codes,
   pointers left untouched, cudaMemGetInfo, cuMemGetInfo_v2 and
   cuDeviceTotalMem_v2, the program going on after freeing) must be what
   the same program prints without gpuspy on a 64 MiB device; no refused
   call may reach the driver (the fake's own count), pinned host memory
   is never refused; each refusal is an event of the limit's, with a "cap"
   verdict on stderr;
 - 8 threads at once, 200 times, race for room for one: one wins each time;
 - the report says the run was capped (text, JSON "limit", the process),
   and so does /metrics (gpuspy_limit_bytes);
 - a value refused is one line and no limit; 0 is no limit; under
   GPUSPY_DISABLE=1 nothing is capped.
Usage: limit.py LIBGPUSPY GPUSPY FAKE_DIR LIMIT_DOORS LIMIT_DOORS_STATIC GROWTH"""
import glob
import json
import os
import re
import subprocess
import sys
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

lib, cli, fake, doors, doors_static, growth = sys.argv[1:7]
lib = harness.preload(lib)
MiB = 1 << 20
HOLD, ASK, LIMIT = 48 * MiB, 32 * MiB, 64 * MiB
base = {k: v for k, v in os.environ.items() if not k.startswith(("GPUSPY_", "FAKE_"))}
base.update(LD_LIBRARY_PATH=fake)
REFUSED = ["cudaMalloc", "cudaMallocManaged", "cudaMallocPitch", "cudaMallocAsync",
           "cudaMallocFromPoolAsync", "cuMemAlloc_v2", "cuMemAllocManaged", "cuMemAllocPitch_v2",
           "cuMemAllocAsync", "cuMemAllocFromPoolAsync", "cuMemCreate", "dlsym cuMemAlloc_v2",
           "getproc cuMemAlloc", "getproc cuMemCreate"]


def reached(stderr):
    return {m.group(1): int(m.group(2)) for m in
            re.finditer(r"limit_doors: (.+) reached the driver: (\d+)", stderr)}


def spied(argv, **env):
    out = harness.tempdir()
    r = subprocess.run(argv, capture_output=True, text=True, timeout=120,
                       env=dict(base, LD_PRELOAD=lib, GPUSPY_OUTPUT_DIR=out, **env))
    return r, out


for prog in (doors, doors_static):
    tag = os.path.basename(prog)
    plain = subprocess.run([prog, str(HOLD), str(ASK)], capture_output=True, text=True,
                           env=dict(base, GPUSPY_FAKE_MEM_TOTAL=str(LIMIT)), timeout=60)
    r, out = spied([prog, str(HOLD), str(ASK)], GPUSPY_LIMIT="64M", GPUSPY_INTERVAL="0")
    check(plain.returncode == 0 and r.returncode == 0 and plain.stdout == r.stdout,
          "%s: under the limit it prints what it prints on a 64 MiB device (status %d, %d)"
          % (tag, plain.returncode, r.returncode))
    if plain.stdout != r.stdout:
        print("--- on a 64 MiB device\n" + plain.stdout + "--- under GPUSPY_LIMIT\n" + r.stdout)
    check(all("-> 2" in l and "untouched" in l for l in r.stdout.splitlines()
              if any(l.startswith("limit_doors: %s ->" % d) for d in REFUSED)) and
          r.stdout.count("-> 2") == len(REFUSED),
          "%s: %d doors refused, each with the out-of-memory code, the pointer untouched"
          % (tag, len(REFUSED)))
    check("limit_doors: holding: cudaMemGetInfo free %d total %d" % (LIMIT - HOLD, LIMIT)
          in r.stdout and "limit_doors: holding: cuMemGetInfo_v2 free %d total %d" %
          (LIMIT - HOLD, LIMIT) in r.stdout and
          "limit_doors: holding: cuDeviceTotalMem_v2 %d" % LIMIT in r.stdout and
          "limit_doors: freed: cudaMemGetInfo free %d total %d" % (LIMIT, LIMIT) in r.stdout,
          "%s: cudaMemGetInfo, cuMemGetInfo_v2 and cuDeviceTotalMem_v2 say 16 of 64 MiB free, "
          "then 64" % tag)
    got, want = reached(r.stderr), reached(plain.stderr)
    check(all(got.get(d) == 0 for d in REFUSED) and all(want.get(d) == 1 for d in REFUSED),
          "%s: no refused call reached the driver (without gpuspy each did): %r" % (tag, got))
    check(got.get("cudaMallocHost") == 1 and "cudaMallocHost -> 0" in r.stdout,
          "%s: pinned host memory is not capped" % tag)
    check(r.stderr.count("gpuspy: GPUSPY_LIMIT: each device capped at 64.0 MiB") == 1,
          "%s: the limit said once on stderr" % tag)
    told = [l for l in r.stderr.splitlines() if re.match(r"gpuspy:   [a-z-]+: ", l)]
    check(len(told) == len(REFUSED) and all(l.startswith(
        "gpuspy:   cap: GPUSPY_LIMIT 64.0 MiB per device reached: the program holds 48.0 MiB "
        "and asked 32.0 MiB more, 16.0 MiB left under the limit") for l in told),
          "%s: each refusal's verdict is the cap's, with its numbers: %s" % (tag, told[:1]))
    reps = glob.glob(os.path.join(out, "*", "report.json"))
    rep = json.load(open(reps[0])) if len(reps) == 1 else {}
    ev = rep.get("oom", [])
    check(len(ev) == len(REFUSED) and
          all(e.get("capped") is True and e.get("limit_bytes") == LIMIT and
              e.get("requested_bytes") == ASK and e.get("device_live_bytes") == HOLD
              for e in ev) and rep.get("limit") == {"bytes": LIMIT},
          "%s: report.json: %d events, each capped at 64 MiB with 48 MiB tracked; "
          "\"limit\" %r" % (tag, len(ev), rep.get("limit")))
    check(rep.get("leaked") == {"bytes": 0, "allocations": 0},
          "%s: nothing refused was recorded as allocated: %r" % (tag, rep.get("leaked")))
    if prog == doors:
        j = json.loads(subprocess.run([cli, "report", "--format", "json", out],
                                      capture_output=True, text=True).stdout or "{}")
        text = subprocess.run([cli, "report", out], capture_output=True, text=True).stdout
        check(j.get("limit") == {"processes": 1, "bytes": LIMIT,
                                 "text": "capped at 64.0 MiB per device"} and
              j["processes"][0].get("limit_bytes") == LIMIT,
              "the JSON report: %r" % j.get("limit"))
        check("  capped:           at 64.0 MiB per device (GPUSPY_LIMIT)\n" in text and
              ", capped at 64.0 MiB per device\n" in text,
              "the text report says the run was capped, in SUMMARY and for the process")
        check(all(o.get("verdict", {}).get("class") == "cap" for o in j.get("oom", [])) and
              len(j.get("oom", [])) == len(REFUSED),
              "the report's verdict of each event is the cap")

# Racing threads: room for one 10 MiB request, 8 threads ask at once.
r, out = spied([doors, str(HOLD), str(10 * MiB), "race", "8", "200"], GPUSPY_LIMIT="64M",
               GPUSPY_QUIET="1", GPUSPY_INTERVAL="0")
rounds = re.findall(r"round \d+: (\d+) of 8 succeeded", r.stdout)
check(r.returncode == 0 and len(rounds) == 200 and set(rounds) == {"1"},
      "8 threads racing for room for one, 200 times: one wins each time: %s" %
      sorted(set(rounds)))

# Values: refused ones are one line and no limit; 0 is no limit; disabled.
for value, warn in (("8X", "GPUSPY_LIMIT=8X is not a size such as 8G, 512M or 24GiB; no limit"),
                    ("99999999T", "GPUSPY_LIMIT=99999999T is too large; no limit"), ("0", None)):
    r, out = spied([doors, str(HOLD), str(ASK)], GPUSPY_LIMIT=value, GPUSPY_INTERVAL="0")
    lines = [l for l in r.stderr.splitlines() if "GPUSPY_LIMIT" in l]
    check(r.returncode == 0 and "limit_doors: cudaMalloc -> 0" in r.stdout and
          lines == (["gpuspy: " + warn] if warn else []),
          "GPUSPY_LIMIT=%s: no limit, %s" % (value, "one line" if warn else "nothing said"))
r, out = spied([doors, str(HOLD), str(ASK)], GPUSPY_LIMIT="64M", GPUSPY_DISABLE="1")
check(r.returncode == 0 and "limit_doors: cudaMalloc -> 0" in r.stdout,
      "GPUSPY_DISABLE=1: nothing is capped")

# /metrics of a capped run.
out = harness.tempdir()
p = subprocess.Popen([growth, "40", "50"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                     env=dict(base, LD_PRELOAD=lib, GPUSPY_OUTPUT_DIR=out, GPUSPY_LIMIT="1G",
                              GPUSPY_QUIET="1", GPUSPY_INTERVAL="50ms",
                              GPUSPY_PROMETHEUS="127.0.0.1:0"))
page = ""


def served():
    global page
    f = glob.glob(os.path.join(out, "*", "prometheus"))
    addr = harness.read_text(f[0]) if f else None
    if addr and addr.endswith("\n"):
        try:
            with urllib.request.urlopen("http://%s/metrics" % addr.strip(), timeout=5) as resp:
                page = resp.read().decode()
        except OSError:
            pass
    return "gpuspy_limit_bytes" in page


try:
    harness.wait_for(served, timeout=20, proc=p)
finally:
    p.communicate(timeout=60)
check("\n# TYPE gpuspy_limit_bytes gauge\ngpuspy_limit_bytes %d\n" % (1 << 30) in page,
      "/metrics: gpuspy_limit_bytes %d" % (1 << 30))

sys.exit(harness.done())
