#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The frameworks' own counters (libgpuspy(7), "FRAMEWORK COUNTERS";
docs/format.md, "fw" and "frameworks"), through the pretend PaddlePaddle,
JAX, CuPy (fake_fw/) and PyTorch (fake_torch/): a program that imports
them and runs under the library on the fake driver has, in its history as
`gpuspy report --format csv` prints it, exactly the figures the
frameworks' documented calls return, before and after it changes them;
its snapshot and report carry the latest.  A JAX whose backends the
program never initialised is never initialised by gpuspy; a framework
not imported, or GPUSPY_FRAMEWORKS=0, adds nothing.  A framework is
asked only once its native library is loaded (each pretend framework
loads one of the real one's file name and layout): a Python program that
imports none runs no Python call of gpuspy's at all (report.json's
python_calls), nor does one whose pretend frameworks load no library; a
framework imported late, after the first allocation, is asked from then
on.  The metrics endpoint (GPUSPY_PROMETHEUS) and gpuspy exporter serve
each framework's pool per device with exactly its figures.  A JAX that
leaks 4 MiB a step for 3 s while XLA's pool doubles its regions (four
levels, which the rule does not flag) is caught through JAX's own
allocated counter: flagged in "frameworks.growth" with the pool's site,
which is called growing "by framework", on stderr, in report.txt and by
`gpuspy report` (text and JSON); held still afterwards,
the same verdict is "grew, then stopped" everywhere.  An adapter that raises gives
one line on stderr and is off, the others go on, and the program's
output and exit status are those of a run without gpuspy.
Usage: fw_counters.py LIBGPUSPY LIBPYALLOC FAKE_DIR GPUSPY LIBC10_CUDA
       LIBPADDLE XLA_EXTENSION CUPY_CORE"""
import csv
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

lib, pyalloc, fake_dir, cli, c10 = sys.argv[1:6]
lib = harness.preload(lib)
here = os.path.dirname(os.path.abspath(__file__))
# the frameworks' native libraries, laid out as in site-packages
native = harness.tempdir()
for built, rel in zip(sys.argv[6:9], ("paddle/base", "jaxlib", "cupy/_core")):
    os.makedirs(os.path.join(native, rel))
    shutil.copy(built, os.path.join(native, rel))
os.environ["FAKE_FW_NATIVE"] = native
prog = os.path.join(here, "fw_prog.py")
path = os.pathsep.join((os.path.join(here, "fake_fw"), os.path.join(here, "fake_torch")))
sys.path[:0] = path.split(os.pathsep)
# the pretend modules: their figures are the expected ones; imported here
# without their native libraries (built with the sanitizer in a sanitizer
# build, whose runtime this process does not have)
os.environ["FAKE_FW_NO_NATIVE"] = "1"
import cupy  # noqa: E402
import jax._src.xla_bridge as xb  # noqa: E402
import paddle.device.cuda as pcuda  # noqa: E402

del os.environ["FAKE_FW_NO_NATIVE"]

MIB = 1 << 20


def run(names, seconds=0.6, preload=True, **extra):
    out = harness.tempdir()
    env = dict(os.environ, GPUSPY_OUTPUT_DIR=out, LD_LIBRARY_PATH=fake_dir,
               GPUSPY_INTERVAL="10ms", PYTHONPATH=path, FAKE_C10_CUDA=os.path.abspath(c10),
               GPUSPY_QUIET="1")
    env.update(extra)
    for k in ("GPUSPY_FRAMEWORKS", "GPUSPY_TORCH", "FAKE_FW_RAISE", "FAKE_FW_NO_NATIVE",
              "GPUSPY_PROMETHEUS"):
        if k not in extra:
            env.pop(k, None)
    if preload:
        env["LD_PRELOAD"] = lib
    elif os.environ.get("SANITIZER_PRELOAD"):
        # the program's own libraries are built with the sanitizer too
        env["LD_PRELOAD"] = os.environ["SANITIZER_PRELOAD"]
    r = subprocess.run([sys.executable, prog, pyalloc, str(seconds)] + names, env=env,
                       capture_output=True, text=True, timeout=120)
    return out, r


def csv_fw(out):
    """fw:... rows of the CLI's CSV: {series: [last values in order]}."""
    rep = subprocess.run([cli, "report", "--format", "csv", out], capture_output=True, text=True)
    series = {}
    for x in csv.DictReader(rep.stdout.splitlines()):
        if x["series"].startswith("fw:"):
            series.setdefault(x["series"], []).append(int(x["last"]))
    return rep, series


def doc_fw(out, name):
    files = glob.glob(os.path.join(out, "*", name))
    return json.load(open(files[0])).get("frameworks") if files else "no " + name


# PaddlePaddle, JAX and CuPy together: every documented figure, per device
out, r = run(["paddle", "jax", "cupy"])
check(r.returncode == 0 and r.stdout == "done paddle jax cupy\n",
      f"the program runs: {r.returncode} {r.stdout!r} {r.stderr[-300:]!r}")
rep, fw = csv_fw(out)
check(rep.returncode == 0 and rep.stderr == "", f"gpuspy report --format csv: {rep.stderr!r}")
first = {}
for d, (a, res, pa, pr) in pcuda.FIGURES.items():
    first.update({f"fw:paddle:{d}:allocated": a, f"fw:paddle:{d}:reserved": res,
                  f"fw:paddle:{d}:peak_allocated": pa, f"fw:paddle:{d}:peak_reserved": pr})
for d, st in xb.STATS.items():
    first.update({f"fw:jax:{d}:allocated": st["bytes_in_use"],
                  f"fw:jax:{d}:peak_allocated": st["peak_bytes_in_use"],
                  f"fw:jax:{d}:reserved": st.get("pool_bytes", st.get("bytes_reserved")),
                  f"fw:jax:{d}:limit": st["bytes_limit"]})
    if "peak_pool_bytes" in st:
        first[f"fw:jax:{d}:peak_reserved"] = st["peak_pool_bytes"]
first.update({"fw:cupy:0:allocated": cupy.POOL["used"], "fw:cupy:0:reserved": cupy.POOL["total"],
              "fw:cupy:0:free_blocks": cupy.POOL["free_blocks"],
              "fw:cupy:host:reserved": cupy.PINNED["total"],
              "fw:cupy:host:free_blocks": cupy.PINNED["free_blocks"]})
later = dict(first, **{"fw:paddle:0:allocated": 7 * MIB, "fw:cupy:0:allocated": 9 * MIB})
check(set(fw) == set(first), f"one series per framework, place and counter: "
      f"{sorted(set(fw) ^ set(first))} differ")
check(all(fw[k][0] == v for k, v in first.items() if k in fw),
      "the first sample of each: the framework's figure "
      + str({k: (fw[k][0], v) for k, v in first.items() if k in fw and fw[k][0] != v}))
check(all(fw[k][-1] == v for k, v in later.items() if k in fw),
      "the last: the figures the program changed to "
      + str({k: (fw[k][-1], v) for k, v in later.items() if k in fw and fw[k][-1] != v}))
check(len(fw.get("fw:paddle:0:allocated", [])) >= 10,
      f"... sampled every interval: {len(fw.get('fw:paddle:0:allocated', []))} samples")


def flat(doc):
    c = doc.get("counters", {}) if isinstance(doc, dict) else {}
    return {f"fw:{f}:{p}:{k}": v for f, ps in c.items() for p, ks in ps.items()
            for k, v in ks.items()}


for name in ("snapshot.json", "report.json"):
    doc = doc_fw(out, name)
    check(isinstance(doc, dict) and flat(doc) == later,
          f"{name} carries the latest figures: {doc if not isinstance(doc, dict) else ''}")
# ... and the report's ledger of device 0 adds them up, beside what gpuspy
# tracked (1 MiB through the fake runtime; no NVML on the fake driver)
rep = subprocess.run([cli, "report", "--format", "json", out], capture_output=True, text=True)
ledger = json.loads(rep.stdout)["processes"][0].get("ledger", []) if rep.returncode == 0 else []
dev0 = next((x for x in ledger if x["device"] == 0), {})
alloc0 = later["fw:paddle:0:allocated"] + later["fw:jax:0:allocated"] + later["fw:cupy:0:allocated"]
res0 = later["fw:paddle:0:reserved"] + later["fw:jax:0:reserved"] + later["fw:cupy:0:reserved"]
check(dev0.get("framework_allocated_bytes") == alloc0
      and dev0.get("framework_reserved_bytes") == res0
      and dev0.get("pool_slack_bytes") == res0 - alloc0 and dev0.get("tracked_bytes") == MIB
      and dev0.get("untracked_bytes") == res0 - MIB and "nvml_process_bytes" not in dev0
      and sorted(dev0.get("frameworks", {})) == ["cupy", "jax", "paddle"]
      and [x["device"] for x in ledger] == [0, 1],
      f"gpuspy report's ledger: the frameworks' figures summed per device: {dev0}")
shutil.rmtree(out)

# JAX imported, its backends never initialised: gpuspy initialises none
out, r = run(["jax-lazy"])
check(r.stdout == "jax backends 0\ndone jax-lazy\n",
      f"JAX's backends stay uninitialised: {r.stdout!r} {r.stderr[-300:]!r}")
rep, fw = csv_fw(out)
check(rep.returncode == 0 and fw == {}, f"... and it has no figures: {sorted(fw)}")
shutil.rmtree(out)

# PyTorch: torch.cuda's counters of the pretend pool (a 3 MiB tensor in
# 2 MiB segments, one spare: 6 MiB reserved)
out, r = run(["torch"])
rep, fw = csv_fw(out)
want = {"fw:pytorch:0:allocated": 3 * MIB, "fw:pytorch:0:reserved": 6 * MIB,
        "fw:pytorch:0:peak_allocated": 3 * MIB, "fw:pytorch:0:peak_reserved": 6 * MIB}
check(r.stdout == "done torch\n" and {k: v[-1] for k, v in fw.items()} == want,
      f"PyTorch's counters: {({k: v[-1] for k, v in fw.items()})} {r.stderr[-300:]!r}")
shutil.rmtree(out)
# ... also with the PyTorch view off: the counters are not the view
out, r = run(["torch"], GPUSPY_TORCH="0")
rep, fw = csv_fw(out)
check({k: v[-1] for k, v in fw.items()} == want and not glob.glob(os.path.join(out, "*",
                                                                                "torch.json")),
      f"... with GPUSPY_TORCH=0 too, and no torch.json: {sorted(fw)}")
shutil.rmtree(out)


def python_calls(out):
    files = glob.glob(os.path.join(out, "*", "report.json"))
    return json.load(open(files[0])).get("python_calls") if files else "no report.json"


# nothing imported, or GPUSPY_FRAMEWORKS=0, or frameworks without their
# native libraries: nothing, and no Python call of gpuspy's but for
# GPUSPY_FRAMEWORKS=0 (where PyTorch's gate is the view's)
for names, extra, what in (([], {}, "no framework imported"),
                           (["paddle", "cupy"], {"GPUSPY_FRAMEWORKS": "0"}, "GPUSPY_FRAMEWORKS=0"),
                           (["paddle", "jax", "cupy"], {"FAKE_FW_NO_NATIVE": "1"},
                            "frameworks whose native libraries are not loaded")):
    out, r = run(names, 0.3, **extra)
    rep, fw = csv_fw(out)
    hist = "".join(open(f).read() for f in glob.glob(os.path.join(out, "*", "history.jsonl")))
    check(r.returncode == 0 and hist and '"fw"' not in hist and fw == {}
          and doc_fw(out, "report.json") is None, f"{what}: no counters anywhere")
    calls = python_calls(out)
    check(calls == 0, f"... and no Python call of gpuspy's in the program: {calls}")
    shutil.rmtree(out)
# ... while the same program with its frameworks' libraries has one an
# interval or so (10 ms for 0.3 s)
out, r = run(["paddle", "jax", "cupy"], 0.3)
calls = python_calls(out)
check(isinstance(calls, int) and calls >= 10, f"with them: {calls} Python calls")
shutil.rmtree(out)
# the counters start at the framework's first allocation, not at the next
# interval: JAX imported after the process's first allocation, its XLA
# pool grown through the driver, GPUSPY_INTERVAL=5s, the program done in
# about 3 s (GPUSPY_TORCH=0: the view's waiting polls are not asked for)
out, r = run(["late", "jax-leak"], 0.2, GPUSPY_INTERVAL="5s", GPUSPY_TORCH="0")
calls = python_calls(out)
check(r.returncode == 0 and isinstance(calls, int) and calls >= 1,
      f"a framework's first allocation starts its counters at once: {calls} Python calls "
      "before the first interval")
shutil.rmtree(out)

# imported late, after the first allocation: counted from then on
out, r = run(["late", "paddle", "cupy"], 0.9)
rep, fw = csv_fw(out)
check(r.stdout == "done paddle cupy\n" and fw.get("fw:paddle:1:reserved", [None])[-1]
      == pcuda.FIGURES[1][1] and fw.get("fw:cupy:0:reserved", [None])[-1] == cupy.POOL["total"]
      and len(fw.get("fw:paddle:1:reserved", [])) >= 10,
      f"frameworks imported late: counted from then on: "
      f"{ {k: v[-1] for k, v in fw.items()} } {r.stderr[-300:]!r}")
shutil.rmtree(out)

# JAX leaking 4 MiB a step for 59 steps of 50 ms, sampled every 200 ms:
# its allocated counter climbs 8 -> 240 MiB, XLA's pool doubles its regions
# (16, 48, 112, 240 MiB: four levels).  Then, for SECONDS, still.
for still, want_state in ((0, "growing"), (3, "stopped")):
    tag = f"JAX leak, then {still} s still"
    out, r = run(["jax-leak"], still, GPUSPY_INTERVAL="200ms", GPUSPY_QUIET="0")
    files = glob.glob(os.path.join(out, "*", "report.json"))
    rep = json.load(open(files[0])) if files else {}
    fg = rep.get("frameworks", {}).get("growth", {}).get("jax", {}).get("0")
    pool = [x for x in rep.get("sites", []) if any("BFCAllocator" in (f.get("symbol") or "")
                                                    for f in x["frames"])]
    check(r.returncode == 0 and fg is not None and fg["counter"] == "allocated"
          and fg["stopped"] is (want_state == "stopped") and len(pool) == 1
          and fg.get("site") == pool[0]["id"],
          f"{tag}: JAX's allocated counter flagged in frameworks.growth, with its pool's site: "
          f"{fg} {r.stderr[-500:]!r}")
    pg = pool[0].get("growth", {}) if pool else {}
    check(pool and pool[0]["live_bytes"] == 240 * MIB and pool[0]["growing"] is
          (want_state == "growing") and pg.get("by") == "framework" and pg.get("framework") ==
          "jax" and pg.get("place") == "0" and pg.get("stopped") == fg.get("stopped")
          and pg.get("shape") == fg.get("shape") and pg.get("since_s") == fg.get("since_s"),
          f"{tag}: the pool's site says the counter's verdict, not its own (four levels): "
          f"{pool[0]['growing'] if pool else None} {pg}")
    said = [x for x in r.stderr.splitlines() if x.startswith("gpuspy: growing: ")]
    stops = [x for x in r.stderr.splitlines() if x.startswith("gpuspy: grew, then stopped: ")]
    check(len(said) == 1 and ", in JAX's own allocated bytes on device 0, its pool's segments at "
          in said[0] and len(stops) == (want_state == "stopped"),
          f"{tag}: named on stderr as JAX's growth, once; stopped: {len(stops)}: {said + stops}")
    txt = "".join(open(x).read() for x in glob.glob(os.path.join(out, "*", "report.txt")))
    word = "growing: " if want_state == "growing" else "grew, then stopped at "
    check(("\nGROWTH\n" + word) in txt and ", in JAX's own allocated bytes on device 0 at " in txt
          and "held by the JAX/XLA pool at exit" in txt,
          f"{tag}: report.txt says the verdict, and what the pool holds: {txt[:900]!r}")
    t = subprocess.run([cli, "report", out], capture_output=True, text=True)
    sect = t.stdout.split("\nGROWTH SUSPECTS", 1)[-1]
    tag_word = "[growing]" if want_state == "growing" else "[grew, then stopped]"
    check(t.returncode == 0 and tag_word in sect.split("\n\n")[0]
          and "in JAX's own allocated bytes on device 0" in sect
          and re.search(r"^  JAX allocated: +" + ("growing" if want_state == "growing" else "grew")
                        + r" .* device 0; its pool's segments: #\d+$", t.stdout, re.M),
          f"{tag}: gpuspy report says it, on the pool's site and in the summary: "
          f"{t.stdout[:1500]}")
    j = subprocess.run([cli, "report", "--format", "json", out], capture_output=True, text=True)
    jr = json.loads(j.stdout) if j.returncode == 0 else {}
    jg = [x for x in jr.get("sites", []) if x.get("growth", {}).get("by") == "framework"]
    pj = (jr.get("processes") or [{}])[0].get("framework_growth", [])
    check(len(jg) == 1 and jg[0]["growing"] is (want_state == "growing")
          and jg[0]["stopped"] is (want_state == "stopped") and jg[0]["growth"]["recorded"]
          and len(pj) == 1 and pj[0]["framework"] == "jax" and pj[0]["place"] == "0"
          and pj[0]["stopped"] is (want_state == "stopped"),
          f"{tag}: gpuspy report --format json: {jg[:1]} {pj}")
    shutil.rmtree(out)

# the metrics endpoint: each framework's pool per device, exactly its
# figures (CuPy's pinned pool has no device: left out)
series = re.compile(r'^gpuspy_pool_(reserved|allocated)_bytes\{([^}]*)\} (\S+)$', re.M)


def scrape_pools(names, want, **extra):
    """The pool series of /metrics, once they are WANT or 20 s passed."""
    out = harness.tempdir()
    env = dict(os.environ, GPUSPY_OUTPUT_DIR=out, LD_LIBRARY_PATH=fake_dir,
               GPUSPY_INTERVAL="10ms", PYTHONPATH=path, GPUSPY_QUIET="1", LD_PRELOAD=lib,
               GPUSPY_PROMETHEUS="127.0.0.1:0", FAKE_C10_CUDA=os.path.abspath(c10))
    for k in ("GPUSPY_FRAMEWORKS", "GPUSPY_TORCH", "FAKE_FW_RAISE", "FAKE_FW_NO_NATIVE"):
        env.pop(k, None)
    env.update(extra)
    p = subprocess.Popen([sys.executable, prog, pyalloc, "0", "hold"] + names, env=env,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    ready = p.stdout.readline()
    got = {}

    def served(url_of, timeout):
        """Whether the page at URL_OF() has the pools WANT (GOT: what it has)."""
        url = url_of()
        try:
            page = urllib.request.urlopen(url, timeout=timeout).read().decode() if url else ""
        except OSError:
            return False
        got.clear()
        got.update(pools_of(page))
        return got == want

    def endpoint():
        addr = glob.glob(os.path.join(out, "*", "prometheus"))
        a = (harness.read_text(addr[0]) or "").strip() if addr else ""
        return f"http://{a}/metrics" if a else None
    if ready == "ready\n":
        harness.wait_for(lambda: served(endpoint, 5), timeout=20, proc=p)
    pools = dict(got)
    # gpuspy exporter serves running processes: while it still runs
    x = subprocess.Popen([cli, "exporter", "--listen", "127.0.0.1:0", out],
                         stderr=subprocess.PIPE, text=True)
    m = re.search(r" on (http://\S+/metrics)", x.stderr.readline())
    got.clear()
    if m:
        harness.wait_for(lambda: served(lambda: m.group(1), 20), timeout=20, proc=x, every=0.2)
    xpools = dict(got)
    x.terminate()
    x.wait(timeout=20)
    p.stdin.write("\n")
    p.stdin.close()
    p.wait(timeout=60)
    shutil.rmtree(out)
    return pools, xpools, f"{sorted(set(pools.items()) ^ set(want.items()))} differ " \
        f"{p.stderr.read()[-300:]!r}"


def pools_of(page):
    pools = {}
    for kind, labels, value in series.findall(page):
        lab = dict(re.findall(r'(\w+)="([^"]*)"', labels))
        pools[(kind, lab.get("device"), lab.get("framework"))] = int(float(value))
    return pools


want = {}
for d, (a, res, _, _) in pcuda.FIGURES.items():
    want[("reserved", str(d), "paddle")], want[("allocated", str(d), "paddle")] = res, a
for d, st in xb.STATS.items():
    want[("reserved", str(d), "jax")] = st.get("pool_bytes", st.get("bytes_reserved"))
    want[("allocated", str(d), "jax")] = st["bytes_in_use"]
want[("reserved", "0", "cupy")] = cupy.POOL["total"]
want[("allocated", "0", "cupy")] = cupy.POOL["used"]
pools, xpools, why = scrape_pools(["paddle", "jax", "cupy"], want)
check(pools == want, f"/metrics: the pools of PaddlePaddle, JAX and CuPy per device: {why}")
# ... and gpuspy exporter over the run directory, from the process's files
check(xpools == want, f"gpuspy exporter: the same pools: "
      f"{sorted(set(xpools.items()) ^ set(want.items()))} differ")
# PyTorch's from its counters, and from the PyTorch view with them off
want = {("reserved", "0", "pytorch"): 6 * MIB, ("allocated", "0", "pytorch"): 3 * MIB}
for extra in ({"GPUSPY_TORCH": "0"}, {"GPUSPY_FRAMEWORKS": "0"}):
    pools, xpools, why = scrape_pools(["torch"], want, **extra)
    check(pools == want, f"/metrics: PyTorch's pool with {extra}: {why}")
    check(xpools == want, f"... and gpuspy exporter's: {sorted(xpools.items())}")

# an adapter that raises: one line, that adapter off, the others on, and
# the program as without gpuspy
for bad, title, also in (("paddle", "PaddlePaddle", "cupy"), ("jax", "JAX", "paddle"),
                         ("cupy", "CuPy", "jax")):
    names = ["paddle", "jax", "cupy"]
    plain = run(names, 0.3, preload=False, FAKE_FW_RAISE=bad)
    out, r = run(names, 0.3, FAKE_FW_RAISE=bad, GPUSPY_QUIET="0")
    lines = [x for x in r.stderr.splitlines() if "counters off" in x]
    check(len(lines) == 1 and lines[0].startswith(f"gpuspy: {title} counters off: RuntimeError: "
                                                  "pretend failure"),
          f"{bad} raising: one line: {lines}")
    check((r.returncode, r.stdout) == (plain[1].returncode, plain[1].stdout),
          f"... the program's output and status unchanged: {r.returncode} {r.stdout!r}")
    rep, fw = csv_fw(out)
    check(rep.returncode == 0 and not any(k.startswith(f"fw:{bad}:") for k in fw)
          and any(k.startswith(f"fw:{also}:") for k in fw),
          f"... no {bad} figures, {also}'s still: {sorted({k.split(':')[1] for k in fw})}")
    shutil.rmtree(plain[0])
    shutil.rmtree(out)

shutil.rmtree(native)
sys.exit(harness.done())
