#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The live figures of the C API (include/gpuspy.h) through the Python
package gpuspy of this source tree (python/), in programs preloaded with
libgpuspy.so over the fake CUDA runtime (api_child.py):
 - the package's ctypes structures have the C compiler's layout;
 - without the library, or with the stub preloaded, the package says so in
   one line and the program runs on;
 - a scope's totals: live bytes before and after, the peak inside (16 MiB
   taken and freed: the peak 16 MiB above, no change); nested and
   overlapping scopes each keep the peak since their own opening;
 - the sites that grew or shrank in a scope, with the report's one names;
   the sites of gpuspy_sites() have exactly the names and key digests that
   `gpuspy report` gives the same sites afterwards, two sites named alike
   told apart as the report tells them;
 - bad arguments are refused (-1), a smaller structure is written no
   further than its size, a larger one's unknown tail is zeroed;
 - threads allocating and freeing while scopes open, read and close, and
   sites are ranked: every figure consistent, no crash;
 - a forked child that gpuspy leaves silent gets no figures, and no error;
 - the frameworks' counters (the pretend PyTorch): what torch.cuda says,
   its pool's segments told apart as "PyTorch".
Usage: api_live.py LIBGPUSPY LIBSTUB LIBPYALLOC FAKE_DIR GPUSPY API_LAYOUT PYTHON_DIR LIBC10_CUDA"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

lib, stub, pyalloc, fake_dir, cli, layout, pydir, c10 = sys.argv[1:9]
lib = harness.preload(lib)
here = os.path.dirname(os.path.abspath(__file__))
child = os.path.join(here, "api_child.py")
line_of = {}
for i, text in enumerate(open(child).read().splitlines()):
    if "# LINE " in text:
        line_of[text.split("# LINE ")[1].strip()] = i + 1
MIB = 1 << 20


def run(mode, preload=lib, **extra):
    out = harness.tempdir()
    env = harness.clean_env()
    env.pop("LD_PRELOAD", None)
    env.update(GPUSPY_OUTPUT_DIR=out, LD_LIBRARY_PATH=fake_dir, GPUSPY_QUIET="1",
               PYTHONPATH=pydir)
    if preload:
        env["LD_PRELOAD"] = preload
    env.update(extra)
    p = subprocess.run([sys.executable, child, pyalloc, mode], env=env, capture_output=True,
                       text=True, timeout=120)
    try:
        res = json.loads(p.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        res = None
    check(p.returncode == 0 and res is not None, f"{mode}: the program ran",
          f"status {p.returncode}\n{p.stdout}\n{p.stderr}")
    return res or {}, out, p


# the layouts
sys.path.insert(0, pydir)
from gpuspy import _lib  # noqa: E402

c_layout = {}
for text in subprocess.run([layout], capture_output=True, text=True, check=True).stdout.splitlines():
    struct, field, off, size = text.split()
    c_layout[(struct, field)] = (int(off), int(size))
for cname, py in (("gpuspy_totals", _lib._Totals), ("gpuspy_scope_totals", _lib._ScopeTotals),
                  ("gpuspy_site", _lib._Site), ("gpuspy_framework", _lib._Framework)):
    mine = {(cname, f): (getattr(py, f).offset, getattr(py, f).size) for f, _ in py._fields_}
    mine[(cname, "-")] = (0, __import__("ctypes").sizeof(py))
    theirs = {k: v for k, v in c_layout.items() if k[0] == cname}
    check(mine == theirs, f"{cname}: the ctypes layout is the C one",
          f"ctypes {sorted(mine.items())}\nC      {sorted(theirs.items())}")

# without the library, and with the stub in its place
stub = harness.preload(stub)
for what, pre in (("not preloaded", None), ("the stub preloaded", stub)):
    res, _, p = run("basic", preload=pre)
    check(res.get("found") is False and "not preloaded" in (res.get("why") or "")
          and "contrib/jupyter" in res.get("why", "") and "\n" not in res.get("why", ""),
          f"{what}: one line says how to start with the library", res)

# names against the report's
res, out, _ = run("names")
rep = subprocess.run([cli, "report", "--format", "json", out], capture_output=True, text=True)
check(rep.returncode == 0, "names: gpuspy report --format json", rep.stderr)
report = {s["key"]: s for s in json.loads(rep.stdout)["sites"]} if rep.returncode == 0 else {}
top = res.get("top", [])
check(len(top) == 2 and all(s["named"] for s in top),
      "names: gpuspy_sites ranks the two sites holding memory, both named", top)
for s in top:
    r = report.get(s["key"])
    check(r is not None and r["name"] == s["name"] and r["leaked_bytes"] == s["live_bytes"],
          f"names: {s['name']!r} is the report's name for key {s['key']}",
          f"API {s}\nreport {r and {k: r[k] for k in ('name', 'key', 'leaked_bytes')}}")
names = sorted(s["name"] for s in top)
check(len(names) == 2 and names[0] != names[1]
      and all(n.startswith(f"keep (api_child.py:{line_of['keep']})") for n in names)
      and any(f"other (api_child.py:{line_of['other']})" in n for n in names),
      "names: the two calls of keep() told apart by their callers", names)
check([s["live_bytes"] for s in top] == [5 * MIB, 4 * MIB]
      and [s["live_allocs"] for s in top] == [1, 2],
      "names: most first, their live bytes and allocations", top)

# scopes
res, out, _ = run("basic")
t0 = res.get("t0") or {}
check(t0.get("live_bytes") == 0 and t0.get("events") == 0 and t0.get("tracking") is True,
      "totals before any allocation: nothing, tracking", t0)
inner = res.get("inner") or {}
check(inner.get("before_bytes") == 8 * MIB and inner.get("live_bytes") == 8 * MIB
      and inner.get("peak_bytes") == 24 * MIB and inner.get("events") == 2,
      "inner scope: 16 MiB taken and freed: peak 16 MiB above its start, no change", inner)
check(res.get("inner_grown") == [] and res.get("inner_shrunk") == [],
      "inner scope: no site grew or shrank", [res.get("inner_grown"), res.get("inner_shrunk")])
outer = res.get("outer") or {}
check(outer.get("before_bytes") == 0 and outer.get("live_bytes") == 8 * MIB
      and outer.get("peak_bytes") == 24 * MIB and outer.get("events") == 3,
      "outer scope: 8 MiB kept, its peak includes the inner scope's", outer)
g = res.get("outer_grown") or []
check(len(g) == 1 and g[0]["change_bytes"] == 8 * MIB and g[0]["live_bytes"] == 8 * MIB
      and g[0]["named"] and g[0]["name"] == f"keep (api_child.py:{line_of['keep']})"
      and g[0]["kind"] == "device" and g[0]["pool"] == "" and len(g[0]["key"]) == 16,
      "outer scope: the site that kept 8 MiB, by its one name", g)
top = res.get("top") or []
check(len(top) == 1 and top[0]["name"] == f"keep (api_child.py:{line_of['keep']})",
      "gpuspy_sites: the one site holding memory", top)
tt = res.get("totals") or {}
check(tt.get("live_bytes") == 8 * MIB and tt.get("live_allocs") == 1
      and tt.get("peak_bytes") == 24 * MIB and tt.get("events") == 3,
      "totals: live, allocations, the process's peak, events", tt)
d = res.get("dir") or ""
check(os.path.dirname(d) == out and os.path.isdir(d), "gpuspy_process_dir: the process's directory",
      f"{d} in {out}")
a, b, b2 = res.get("a") or {}, res.get("b") or {}, res.get("b_after_a") or {}
check(a.get("peak_bytes") == 12 * MIB and b.get("peak_bytes") == 10 * MIB
      and b2.get("peak_bytes") == 10 * MIB,
      "overlapping scopes: each its own peak (A: 4 MiB above, B: 2 MiB above)", [a, b, b2])
check(res.get("closed_read") is None, "a closed scope reads nothing", res.get("closed_read"))
fr = res.get("free_read") or {}
sh = res.get("free_shrunk") or []
check(fr.get("before_bytes") == 8 * MIB and fr.get("live_bytes") == 0
      and len(sh) == 1 and sh[0]["change_bytes"] == -8 * MIB and sh[0]["live_bytes"] == 0
      and sh[0]["name"] == f"keep (api_child.py:{line_of['keep']})"
      and res.get("free_grown") == [],
      "freed in a scope: the site shrank by 8 MiB, none grew", [fr, sh, res.get("free_grown")])
m = res.get("misuse") or {}
check(m == {"totals_null": -1, "totals_size0": -1, "totals_huge": -1, "close_unknown": -1,
            "close_twice": [0, -1], "read_negative": -1, "sites_sign0": -1, "sites_n0": 0,
            "sites_null": -1, "dir_small": -1},
      "bad arguments: -1 (no scope closed twice, none read by a bad number)", m)
check(res.get("small_rc") == 0 and res.get("small_rest") == [0xAB] * 56
      and res.get("small_live") == 0,
      "a structure of 8 bytes: the live bytes only, nothing past them",
      [res.get("small_rc"), res.get("small_live"), res.get("small_rest")])
check(res.get("large_rc") == 0 and set(res.get("large_rest") or [1]) == {0},
      "a larger structure: its unknown tail zeroed", res.get("large_rest"))
docs = [json.load(open(os.path.join(out, d, "report.json"))) for d in os.listdir(out)
        if os.path.isfile(os.path.join(out, d, "report.json"))]
marks = [(m["label"], m["live_bytes"]) for doc in docs for m in doc.get("marks", [])]
check(marks == [("after kept", 8 * MIB)],
      "gpuspy_mark through the package: report.json has the mark", marks)

# threads
res, _, p = run("threads", GPUSPY_INTERVAL="5ms")
check(res.get("rounds", 0) > 20 and res.get("bad") == [],
      f"threads: {res.get('rounds')} rounds of scopes and rankings while 3 threads allocate: "
      "every figure consistent", res.get("bad"))
end = res.get("end") or {}
check(end.get("live_bytes") == 0 and end.get("tracking") is True,
      "threads: nothing live at the end, still tracking", end)

# fork
res, _, p = run("fork")
ch = res.get("child") or {}
check(ch.get("totals") is None and ch.get("scope") is True and ch.get("sites") == []
      and ch.get("found") is True and "forked child" in (ch.get("why") or ""),
      "fork: the silent child gets no figures and one line why", ch)
check((res.get("parent") or {}).get("live_bytes") == MIB, "fork: the parent's figures go on",
      res.get("parent"))

# the frameworks' counters and the pool
fake_torch = os.path.join(here, "fake_torch")
res, _, p = run("torch", GPUSPY_INTERVAL="10ms", FAKE_C10_CUDA=os.path.abspath(c10),
                FAKE_TORCH_SEGMENTS="1", PYTHONPATH=os.pathsep.join((pydir, fake_torch)))
fws = [f for f in res.get("frameworks", []) if f["name"] == "pytorch"]
allocated, reserved = res.get("torch") or [None, None]
check(len(fws) == 1 and fws[0]["device"] == 0 and fws[0]["allocated"] == allocated
      and fws[0]["reserved"] == reserved and fws[0]["limit"] is None and fws[0]["age"] >= 0,
      "frameworks: PyTorch's own counters on device 0, as torch.cuda says them",
      [fws, allocated, reserved])
pools = [s for s in res.get("top", []) if s["pool"] == "PyTorch"]
check(len(pools) == 1 and pools[0]["live_bytes"] == reserved,
      "frameworks: the pool's segments told apart as PyTorch's", res.get("top"))

sys.exit(harness.done())
