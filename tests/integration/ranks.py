#!/usr/bin/env python3
"""Two ranks of a data-parallel job on the fake driver's two devices
(GPUSPY_FAKE_DEVICES=2), run as torchrun runs them: one gpuspy run, one
process per rank with RANK and LOCAL_RANK set, each on cudaSetDevice(LOCAL_RANK)
(tests/integration/ranks_prog.c).

  A  rank 1 keeps to its device 1: no finding anywhere (no WRONG DEVICE,
     no "wrong_device" in the JSON of report and merge, no
     gpuspy_wrong_device_bytes series).
  B  rank 1 also makes device 0 current and holds 512 MiB there: report
     and merge name it in one line, "rank 1 (LOCAL_RANK 1, its device 1)
     holds 512.0 MiB on device 0: allocations", with the allocating call's
     line (ranks_prog.c, "LINE wrong"); their JSON has the exact bytes;
     rank 0 is named nowhere.  Rank 1's endpoint (GPUSPY_PROMETHEUS) serves
     gpuspy_wrong_device_bytes{device="0",own_device="1",rank="1"} with the
     exact bytes, and promtool finds the page clean.
  C  with the fake NVML (its one GPU is the fake driver's device 0), rank
     1 running: NVML says it holds 300 MiB on device 0 and it allocated
     nothing there (a context made there, the commonest form of the
     fault): report of its snapshot says "... holds 300.0 MiB on device 0:
     context", the endpoint the same bytes; with 512 MiB allocated there
     and NVML's 600 MiB, "600.0 MiB ...: context and allocations", 88 MiB
     of context.

Usage: ranks.py LIBGPUSPY GPUSPY FAKE_DIR NVML_DIR RANKS_PROG RANKS_PROG_C [PROMTOOL]"""
import os
import re
import subprocess
import sys
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

lib, cli, fake, nvml_dir, prog, prog_c = sys.argv[1:7]
promtool = sys.argv[7] if len(sys.argv) > 7 else ""
lib = harness.preload(os.path.abspath(lib))
prog = os.path.abspath(prog)
MiB = 1 << 20
OWN0, OWN1, WRONG = 1 * MiB, 2 * MiB, 512 * MiB
NCCL0, NCCL1 = 3 * MiB, 5 * MiB  # each communicator's buffers, on its rank's device
env = harness.clean_env(fake, RANK=None, LOCAL_RANK=None, GPUSPY_FAKE_DEVICES=2,
                        GPUSPY_LIBRARY=lib, GPUSPY_QUIET=1, GPUSPY_INTERVAL="20ms")
gpuspy = harness.Cli(cli, env=env)


def eq(what, want, have):
    """A check that HAVE is WANT, both said when not."""
    return check(want == have, what, "want %r\n have %r" % (want, have))


def line_of(tag):
    for i, text in enumerate(open(prog_c), 1):
        if "LINE " + tag in text:
            return i
    raise SystemExit("no LINE %s in %s" % (tag, prog_c))


def job(fault):
    """One gpuspy run of both ranks; its run directory."""
    out = os.path.join(harness.tempdir(), "out")
    rank1 = [prog, str(OWN1), str(NCCL1)] + (["wrong", "0", str(WRONG)] if fault else [])
    script = ('RANK=0 LOCAL_RANK=0 "$0" %d %d & RANK=1 LOCAL_RANK=1 "$0" %s; wait' %
              (OWN0, NCCL0, " ".join(rank1[1:])))
    r = gpuspy("run", "-o", out, "--", "sh", "-c", script, prog)
    check(r.returncode == 0, "gpuspy run of both ranks exits 0", r.stderr[-500:])
    eq("processes in the run directory", 2, len(harness.process_dirs(out)))
    return out


verdict = "rank 1 (LOCAL_RANK 1, its device 1) holds 512.0 MiB on device 0: allocations"
site = "512.0 MiB in 1 allocation by cudaMalloc at hold_wrong (ranks_prog.c:%d)" % line_of(
    "wrong")

for fault in (False, True):
    name = "B (rank 1 on device 0 too)" if fault else "A (each rank on its own)"
    out = job(fault)
    text = gpuspy("report", out)
    check(text.returncode == 0, name + ": report reads the run", text.stderr[-300:])
    merged = gpuspy("merge", out)
    check(merged.returncode == 0, name + ": merge reads the run", merged.stderr[-300:])
    rj = gpuspy.json("report", "--format", "json", out) or {}
    mj = gpuspy.json("merge", "--format", "json", out) or {}
    # PER RANK: each rank's memory on its device (NCCL's included), the
    # library's, elsewhere; rank 1 the outlier of elsewhere in B only
    pr = mj.get("per_rank", {})
    eq(name + ": merge's per_rank",
       [dict(index=0, own_device=0, own_device_bytes=OWN0 + NCCL0, library_bytes=NCCL0,
             elsewhere_bytes=0),
        dict(index=1, own_device=1, own_device_bytes=OWN1 + NCCL1, library_bytes=NCCL1,
             elsewhere_bytes=WRONG if fault else 0)], pr.get("processes"))
    eq(name + ": the outlier of elsewhere", 1 if fault else None,
       pr.get("spread", {}).get("elsewhere_bytes", {}).get("outlier", "absent"))
    want_row = "  1  rank 1        1        7.0 MiB  5.0 MiB  %s" % (
        "512.0 MiB" if fault else "      0 B")
    check(want_row in merged.stdout.splitlines(), name + ": merge's PER RANK row of rank 1",
          merged.stdout[:1500])
    check(("elsewhere      min 0 B, median 256.0 MiB, max 512.0 MiB; outlier: rank 1 "
           "(512.0 MiB)" if fault else "elsewhere      min 0 B, median 0 B, max 0 B")
          in merged.stdout, name + ": merge's spread of elsewhere", merged.stdout[:1500])
    check(re.search(r"^nccl_fake_init \(nccl_fake\.c:\d+\) by cudaMalloc \(device\) in 2 of 2 "
                    r"processes \[library memory: NCCL\]$", merged.stdout, re.M),
          name + ": merge labels the communicators' buffers NCCL", merged.stdout[:3000])
    if not fault:
        check("WRONG DEVICE" not in text.stdout and "wrong device" not in text.stdout,
              name + ": report names no wrong device", text.stdout[:800])
        check("WRONG DEVICE" not in merged.stdout, name + ": merge names none")
        check("wrong_device" not in rj and "wrong_device" not in mj,
              name + ": no wrong_device in the JSON of report and merge")
        continue
    for what, t in (("report", text.stdout), ("merge", merged.stdout)):
        sec = t.split("\nWRONG DEVICE\n", 1)
        check(len(sec) == 2, "%s: %s has a WRONG DEVICE section" % (name, what), t[:800])
        body = sec[-1].split("\n\n", 1)[0].splitlines()
        eq("%s: %s's WRONG DEVICE" % (name, what), ["  " + verdict, "    " + site], body)
    check("  wrong device:     rank 1 holds 512.0 MiB on device 0, not its device 1 "
          "(see WRONG DEVICE)" in text.stdout, name + ": report's SUMMARY says it")
    for what, doc in (("report", rj), ("merge", mj)):
        w = doc.get("wrong_device", [])
        eq("%s: %s's wrong_device findings" % (name, what), 1, len(w))
        if len(w) != 1:
            continue
        w = w[0]
        eq(name + ": " + what + ": the finding",
             dict(rank=1, local_rank=1, own_device=1, device=0, bytes=WRONG,
                  allocations_bytes=WRONG, context_bytes=0, what="allocations", line=verdict),
             {k: w.get(k) for k in ("rank", "local_rank", "own_device", "device", "bytes",
                                    "allocations_bytes", "context_bytes", "what", "line")})
        sites = w.get("sites", [])
        eq(name + ": " + what + ": its site",
             [("hold_wrong (ranks_prog.c:%d)" % line_of("wrong"), "cudaMalloc", WRONG, 1)],
             [(s.get("name"), s.get("api"), s.get("bytes"), s.get("allocations"))
              for s in sites])

# Rank 1 alive, its endpoint scraped and its snapshot read meanwhile:
# A and B without NVML (allocations only), C with the fake NVML.
cases = [
    ("A", [], None, None),
    ("B", ["wrong", "0", str(WRONG)], None, WRONG),
    ("C, context only", [], 300 * MiB, 300 * MiB),
    ("C, context and allocations", ["wrong", "0", str(WRONG)], 600 * MiB, 600 * MiB),
]
for name, extra, nvml, want in cases:
    out = harness.tempdir()
    argv = [prog, str(OWN1), str(NCCL1)] + extra + ["hold"]
    e = dict(env, LD_PRELOAD=lib, GPUSPY_OUTPUT_DIR=out, RANK="1", LOCAL_RANK="1",
             GPUSPY_PROMETHEUS="127.0.0.1:0")
    if nvml is not None:
        e.update(LD_LIBRARY_PATH=fake + ":" + nvml_dir, FAKE_NVML_PROCESS_USED=str(nvml))
    p = subprocess.Popen(argv, env=e, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    addr = harness.wait_file(os.path.join(out, "*", "prometheus"), lambda t: t.endswith("\n"),
                             proc=p)
    check(addr is not None, name + ": rank 1's endpoint is up")
    want_tracked = 'gpuspy_tracked_bytes{device="1"} %d' % (OWN1 + NCCL1)

    def scrape():
        try:
            with urllib.request.urlopen("http://%s/metrics" % addr.strip(), timeout=5) as r:
                page = r.read().decode()
        except OSError:
            return None
        # the sample after the last allocation
        done = want_tracked in page and (not extra or 'device="0"} %d' % WRONG in page)
        return page if done else None

    page = harness.wait_for(scrape, proc=p) if addr else None
    check(page is not None, name + ": the endpoint serves the state after every allocation")
    snap = None
    if nvml is not None:
        # the snapshot after the last allocation, with NVML's view
        snap = harness.wait_snapshot(out, lambda d: d.get("outside") and (
            not extra or any(x.get("device") == 0 and x.get("live_bytes") == WRONG
                             for x in d.get("devices", []))), proc=p)
        check(snap is not None, name + ": a snapshot with NVML's view")
        rj = gpuspy.json("report", "--format", "json", out) or {}
        w = rj.get("wrong_device", [])
        ctx = want - (WRONG if extra else 0)
        what = "context and allocations" if extra else "context"
        eq(name + ": the finding of the snapshot",
           [dict(device=0, own_device=1, bytes=want, allocations_bytes=want - ctx,
                 context_bytes=ctx, nvml=True, what=what,
                 line="rank 1 (LOCAL_RANK 1, its device 1) holds %.1f MiB on device 0: %s"
                 % (want / MiB, what))],
           [{k: x.get(k) for k in ("device", "own_device", "bytes", "allocations_bytes",
                                   "context_bytes", "nvml", "what", "line")} for x in w])
        check(all("sites" not in x for x in w), name + ": a snapshot names no sites")
    p.stdin.close()
    p.wait(timeout=30)
    eq(name + ": rank 1 exits 0", 0, p.returncode)
    if page is None:
        continue
    series = re.findall(r"^gpuspy_wrong_device_bytes(\{[^}]*\}) (\d+)$", page, re.M)
    eq(name + ": gpuspy_wrong_device_bytes",
       [('{device="0",own_device="1",rank="1"}', str(want))] if want else [], series)
    if promtool:
        pt = harness.run([promtool, "check", "metrics"], input=page)
        check(pt.returncode == 0, name + ": promtool check metrics: clean",
              pt.stdout + pt.stderr)

sys.exit(harness.done())
