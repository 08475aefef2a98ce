#!/usr/bin/env python3
"""The out-of-memory verdict (src/common/oom_rule.c), one case per class,
each a real failure on the fake driver under LD_PRELOAD, each naming its
numbers: the line libgpuspy prints at the failure, the figures oom-N.json
records for it, and the verdict `gpuspy report` gives in text, JSON and
HTML (opened by headless Chromium), which must be the same class.

  shortage       oom_verdict holds 48 MiB of a 64 MiB device, asks 32 MiB
  cap            the same on an 80 GiB device under GPUSPY_LIMIT=64M
  other-process  a 64 MiB device, 40 MiB of it another process's (the
                 fake driver's GPUSPY_FAKE_MEM_ELSEWHERE, listed by the fake
                 NVML with a real pid, a sleep of ours); holds 16, asks 16;
                 NVML without this process in its list (a container) can
                 blame no one: shortage
  fragmentation  the pretend PyTorch's real pool (oom_pool.py fragment):
                 14 segments of 2 MiB, each half free, a 3 MiB tensor; with
                 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True the line
                 says it is on already
  outside        a cuBLAS workspace of 20 MiB beside a 40 MiB pool on a
                 64 MiB device, an 8 MiB tensor (oom_pool.py outside)
  cap, PyTorch   40 MiB of a pretend optimizer's state under GPUSPY_LIMIT=64M,
                 a 32 MiB tensor (oom_pool.py state): the holder named by its
                 line, "optimizer state" by its stack

Usage: oom_verdict.py LIBGPUSPY GPUSPY FAKE_DIR NVML_DIR OOM_VERDICT
                      C10_POOL CUBLAS_FAKE"""
import atexit
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "cli"))
import chromium  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

lib, cli, fake, nvml_dir, prog, c10_pool, cublas = sys.argv[1:8]
lib = harness.preload(lib)
pool_py = os.path.join(here, "..", "python", "oom_pool.py")
MiB = 1 << 20
base = {k: v for k, v in os.environ.items()
        if not k.startswith(("GPUSPY_", "FAKE_", "PYTORCH_"))}
base.update(LD_LIBRARY_PATH=fake, GPUSPY_INTERVAL="10ms")


def line_of(path, tag):
    for i, text in enumerate(open(path), 1):
        if "# LINE " + tag in text:
            return i
    raise SystemExit("no LINE %s in %s" % (tag, path))


def run(argv, **env):
    out = harness.tempdir()
    e = dict(base, LD_PRELOAD=lib, GPUSPY_OUTPUT_DIR=out, **env)
    r = subprocess.run(argv, env=e, capture_output=True, text=True, timeout=120)
    procs = glob.glob(os.path.join(out, "*-*"))
    return r, out, procs[0] if len(procs) == 1 else None


def verdicts(stderr):
    """The verdict lines of the library, in order: '  CLASS: ...'."""
    return [l[len("gpuspy:   "):] for l in stderr.splitlines()
            if re.match(r"gpuspy:   [a-z-]+: ", l)]


def report(out):
    j = subprocess.run([cli, "report", "--format", "json", out], capture_output=True,
                       text=True)
    t = subprocess.run([cli, "report", out], capture_output=True, text=True)
    h = subprocess.run([cli, "report", "--format", "html", out], capture_output=True,
                       text=True)
    ok = j.returncode == 0 and t.returncode == 0 and h.returncode == 0
    check(ok, "gpuspy report reads it: %s" % (j.stderr + t.stderr + h.stderr).strip()[:300])
    return (json.loads(j.stdout) if ok else {}), t.stdout, h.stdout


browser = None


def html_text(page_html):
    """The page's out-of-memory section and first lines as Chromium draws
    them: one browser for every case (its start is most of a page's cost)."""
    global browser
    f = tempfile.NamedTemporaryFile("w", suffix=".html", delete=False)
    f.write(page_html)
    f.close()
    try:
        if browser is None:
            browser = chromium.Browser()
            atexit.register(browser.close)
        p = browser.open(f.name)
        return (p.eval("document.getElementById('oom').innerText"),
                p.eval("document.getElementById('verdict-list').innerText"),
                p.eval("document.getElementById('summary').innerText"), p.errors)
    except chromium.BrowserError as e:
        check(False, "Chromium opens the page: %s" % e)
        return "", "", "", []
    finally:
        os.unlink(f.name)


def decisive(stderr):
    """The library's verdict that decides: the one said when PyTorch raised
    OutOfMemoryError (with its own figures), else the last one."""
    lines = stderr.splitlines()
    for i, l in enumerate(lines):
        if "PyTorch raised OutOfMemoryError" in l and i + 1 < len(lines):
            return lines[i + 1][len("gpuspy:   "):]
    told = verdicts(stderr)
    return told[-1] if told else None


def same_class(tag, stderr, j, text, page):
    """The report's verdict of the deciding event (PyTorch's figures, else
    the last) is the library's."""
    ooms = j.get("oom") or [{}]
    withtorch = [o for o in ooms if "pool_reserved_bytes" in o.get("verdict", {})]
    last = (withtorch or ooms)[-1].get("verdict", {})
    said = decisive(stderr)
    cls = said.split(":", 1)[0] if said else None
    # one rule, the same figures: the same line, but for a native holder's
    # name, which the process knows without its source line
    holder = r"the largest holder: ([^ ]+)[^;]*? \((\d+\.\d \w+|\d+ B)\)"
    same = re.sub(holder, r"the largest holder: \1 (\2)", last.get("line") or "?")
    check(same == re.sub(holder, r"the largest holder: \1 (\2)", said or ""),
          "%s: the report's verdict line is the library's: %s" % (tag, said))
    check(cls and last.get("class") == cls,
          "%s: the report's verdict is the library's: %s / %s" % (tag, last.get("class"), cls))
    check(last.get("line") and ("  why: " + last["line"]) in text,
          "%s: the text report says it: why: %s" % (tag, last.get("line", "")[:80]))
    oom, first, _, errors = html_text(page)
    check("Why (%s): %s" % (cls, last.get("line")) in oom and not errors,
          "%s: the HTML page says it in its out-of-memory section, no console error %s"
          % (tag, errors[:2]))
    check("Why: " + last.get("line", "?") in first, "%s: and in its first lines" % tag)
    return last


# --- shortage: 48 MiB held of 64, 32 asked --------------------------------
src = os.path.join(here, "oom_verdict.c")
r, out, pdir = run([prog, str(48 * MiB), str(32 * MiB)], GPUSPY_FAKE_MEM_TOTAL=str(64 * MiB))
told = verdicts(r.stderr)
check(r.returncode == 0 and "ask -> 2 (out of memory)" in r.stdout and
      "asked again after freeing -> 0" in r.stdout,
      "shortage: the program caught the error and went on: %r" % r.stdout)
want = ("shortage: the program holds 48.0 MiB and asked 32.0 MiB more, 16.0 MiB free of "
        "64.0 MiB: at most 16.0 MiB would have fit; the largest holder: hold_memory "
        "(oom_verdict) (48.0 MiB)")
check(told == [want], "shortage: the library's line: %s" % told)
ev = json.load(open(os.path.join(pdir, "oom-1.json")))["event"] if pdir else {}
check(ev.get("device_live_bytes") == 48 * MiB and ev.get("free_bytes") == 16 * MiB and
      ev.get("total_bytes") == 64 * MiB and "limit_bytes" not in ev and "pool" not in ev,
      "shortage: oom-1.json records 48 MiB tracked on the device, 16 of 64 MiB free: %r" % ev)
j, text, page = report(out)
v = same_class("shortage", r.stderr, j, text, page)
check(v.get("held_bytes") == 48 * MiB and v.get("fits_bytes") == 16 * MiB and
      v.get("missing_bytes") == 16 * MiB and v.get("card_bytes") == 64 * MiB and
      v.get("holder", {}).get("bytes") == 48 * MiB and
      "hold_memory (oom_verdict.c:" in v.get("holder", {}).get("name", ""),
      "shortage: JSON verdict: held 48, fits 16, missing 16 of a 64 MiB card, holder "
      "hold_memory by its line: %r" % v)

# --- cap: the same under GPUSPY_LIMIT=64M on an 80 GiB device --------------
r, out, pdir = run([prog, str(48 * MiB), str(32 * MiB)], GPUSPY_LIMIT="64M")
told = verdicts(r.stderr)
check("asked again after freeing -> 0" in r.stdout, "cap: the program went on")
want = ("cap: GPUSPY_LIMIT 64.0 MiB per device reached: the program holds 48.0 MiB and asked "
        "32.0 MiB more, 16.0 MiB left under the limit: at most 16.0 MiB would have fit; the "
        "largest holder: hold_memory (oom_verdict) (48.0 MiB)")
check(told == [want], "cap: the library's line: %s" % told)
ev = json.load(open(os.path.join(pdir, "oom-1.json")))["event"] if pdir else {}
check(ev.get("limit_bytes") == 64 * MiB and ev.get("capped") is True and
      ev.get("total_bytes") == 80 << 30,
      "cap: oom-1.json: limit 64 MiB, capped, the real device's 80 GiB total: %r" %
      {k: ev.get(k) for k in ("limit_bytes", "capped", "total_bytes")})
j, text, page = report(out)
v = same_class("cap", r.stderr, j, text, page)
check(v.get("capped") is True and v.get("limit_bytes") == 64 * MiB and
      v.get("card_bytes") == 64 * MiB and v.get("available_bytes") == 16 * MiB,
      "cap: JSON verdict: capped, a 64 MiB card, 16 MiB available: %r" % v)

# --- other-process: 40 MiB of the device held by a sleep of ours ----------
sleeper = subprocess.Popen(["sleep", "60"])
try:
    nv = dict(LD_LIBRARY_PATH=nvml_dir + ":" + fake, GPUSPY_FAKE_MEM_TOTAL=str(64 * MiB),
              GPUSPY_FAKE_MEM_ELSEWHERE=str(40 * MiB), FAKE_NVML_TOTAL=str(64 * MiB),
              FAKE_NVML_USED=str(56 * MiB), FAKE_NVML_PROCESS_USED=str(16 * MiB),
              FAKE_NVML_OTHERS="%d:%d" % (sleeper.pid, 40 * MiB))
    r, out, pdir = run([prog, str(16 * MiB), str(16 * MiB)], **nv)
    told = verdicts(r.stderr)
    want = ("other-process: other processes hold 40.0 MiB of this device, the most pid %d "
            "(sleep) with 40.0 MiB; 8.0 MiB more was needed for 16.0 MiB: free them or use "
            "another device" % sleeper.pid)
    check(told == [want], "other-process: the library's line: %s" % told)
    ev = json.load(open(os.path.join(pdir, "oom-1.json")))["event"] if pdir else {}
    check(ev.get("others") == {"bytes": 40 * MiB, "processes": [
        {"pid": sleeper.pid, "name": "sleep", "used_bytes": 40 * MiB}]},
        "other-process: oom-1.json names pid, name and bytes: %r" % ev.get("others"))
    j, text, page = report(out)
    v = same_class("other-process", r.stderr, j, text, page)
    check(v.get("others_bytes") == 40 * MiB and v.get("missing_bytes") == 8 * MiB and
          "    other process: pid %d (sleep) holds 40.0 MiB" % sleeper.pid in text,
          "other-process: JSON others 40 MiB, missing 8 MiB; the text lists the process")
    # a container: NVML's pids are not ours, and this process is not among
    # them: which of them is this one cannot be told, so no one is blamed
    r, out, pdir = run([prog, str(16 * MiB), str(16 * MiB)], FAKE_NVML_NO_SELF="1", **nv)
    told = verdicts(r.stderr)
    check(len(told) == 1 and told[0].startswith("shortage: the program holds 16.0 MiB"),
          "other-process: NVML without this process: shortage, no one blamed: %s" % told)
    ev = json.load(open(os.path.join(pdir, "oom-1.json")))["event"] if pdir else {}
    check("others" not in ev, "other-process: and oom-1.json records no others")
finally:
    sleeper.kill()
    sleeper.wait()

# --- fragmentation: the pretend PyTorch's pool -----------------------------
torch_env = dict(PYTHONPATH=os.path.join(here, "..", "python", "fake_torch"),
                 FAKE_TORCH_POOL="1", FAKE_C10_CUDA=os.path.abspath(c10_pool))
keep = line_of(pool_py, "keep")
for expandable in (False, True):
    tag = "fragmentation" + (" (expandable on)" if expandable else "")
    extra = dict(PYTORCH_CUDA_ALLOC_CONF="expandable_segments:True") if expandable else {}
    r, out, pdir = run([sys.executable, pool_py, "fragment"], GPUSPY_FAKE_MEM_TOTAL=str(30 * MiB),
                       **torch_env, **extra)
    told = verdicts(r.stderr)
    check(r.returncode == 0 and "caught OutOfMemoryError" in r.stdout and
          "asked again after freeing: ok" in r.stdout,
          "%s: the program caught PyTorch's error and went on: %r %s" %
          (tag, r.stdout, r.stderr[-300:]))
    want = ("fragmentation: the PyTorch caching allocator held 14.0 MiB free of 28.0 MiB "
            "reserved, but no free block of 3.0 MiB (the largest: 1.0 MiB); pinned most by "
            "build (oom_pool.py:%d) (14.0 MiB); " % keep)
    want += ("expandable_segments is on already: free or reuse the blocks that pin the "
             "segments" if expandable else "try PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True")
    frag = [t for t in told if t.startswith("fragmentation")]
    check(frag == [want], "%s: the line when PyTorch raised: %s" % (tag, frag))
    # its two failed cudaMalloc calls first, before PyTorch's own figures
    check(len(told) >= 3 and told[0].startswith("shortage: the program holds 28.0 MiB and "
                                                "asked 4.0 MiB more") and
          told[0].endswith("it may empty its cache and retry"),
          "%s: each failed cudaMalloc before it: the pool may retry: %s" % (tag, told[:1]))
    ev = json.load(open(os.path.join(pdir, "oom-2.json")))["event"] if pdir else {}
    t = ev.get("torch", {})
    check(t.get("requested_bytes") == 3 * MiB and t.get("reserved_bytes") == 28 * MiB and
          t.get("allocated_bytes") == 14 * MiB and t.get("largest_free_bytes") == MiB and
          [(l["bytes"], l["blocks"], l["frames"][0]["line"]) for l in t.get("lines", [])] ==
          [(14 * MiB, 14, keep)],
          "%s: oom-2.json, written again: PyTorch's 3 MiB block, 14 of 28 MiB, largest 1 MiB, "
          "14 blocks pinning at line %d: %r" % (tag, keep, t))
    check(ev.get("pool", {}).get("label") == "PyTorch caching allocator" and
          ev["pool"].get("requested") is True and ev["pool"].get("bytes") == 28 * MiB,
          "%s: the request was the pool's, its segments 28 MiB: %r" % (tag, ev.get("pool")))
    j, text, page = report(out)
    frags = [o["verdict"] for o in j.get("oom", []) if o.get("verdict", {}).get("class") ==
             "fragmentation"]
    check(len(frags) == 1 and frags[0]["line"] == want and
          frags[0].get("pool_slack_bytes") == 14 * MiB and
          frags[0].get("pool_largest_free_bytes") == MiB and
          frags[0].get("expandable_segments") is expandable and
          [p["name"] for p in frags[0].get("pinned_by", [])] ==
          ["build (oom_pool.py:%d)" % keep],
          "%s: the report's JSON verdict: slack 14 MiB, largest 1 MiB, pinned by build: %r" %
          (tag, frags[:1]))
    check("  why: " + want in text and
          "    pinned: 14.0 MiB in 14 blocks at build (oom_pool.py:%d)" % keep in text,
          "%s: the text report: why, and the pinning line" % tag)
    oom, first, _, errors = html_text(page)
    check("Why (fragmentation): " + want in oom and "Why: " + want in first and not errors,
          "%s: the HTML page: the verdict first, and in its section" % tag)

# --- cap, in PyTorch: its lines holding most, optimizer state by its stack --
optim_py = os.path.join(here, "..", "python", "fake_torch", "torch", "optim", "__init__.py")
state = line_of(optim_py, "state")
r, out, pdir = run([sys.executable, pool_py, "state"], GPUSPY_LIMIT="64M", **torch_env)
want = ("cap: GPUSPY_LIMIT 64.0 MiB per device reached: the program holds 40.0 MiB and asked "
        "32.0 MiB more, 24.0 MiB left under the limit: at most 24.0 MiB would have fit; the "
        "largest holder: step (__init__.py:%d) [optimizer state] (40.0 MiB)" % state)
check(r.returncode == 0 and "caught OutOfMemoryError" in r.stdout and
      "asked again after freeing: ok" in r.stdout,
      "state: the program caught PyTorch's error and went on: %r" % r.stdout)
check(decisive(r.stderr) == want, "state: the line when PyTorch raised: %s" % decisive(r.stderr))
ev = json.load(open(os.path.join(pdir, "oom-2.json")))["event"] if pdir else {}
held = ev.get("torch", {}).get("holders", [])
check([(h["bytes"], h["blocks"], h.get("role"), h["frames"][0]["line"]) for h in held] ==
      [(40 * MiB, 20, "optimizer state", state)],
      "state: oom-2.json: PyTorch's holders, 20 blocks of optimizer state: %r" % held)
j, text, page = report(out)
v = same_class("state", r.stderr, j, text, page)
check([(h["name"], h["bytes"], h.get("role")) for h in v.get("held_by", [])] ==
      [("step (__init__.py:%d) [optimizer state]" % state, 40 * MiB, "optimizer state")] and
      "    held: 40.0 MiB in 20 blocks at step (__init__.py:%d) [optimizer state]" % state in text,
      "state: the report's verdict names the holders, with their role: %r" % v.get("held_by"))

# --- outside: a cuBLAS workspace beside the pool ---------------------------
r, out, pdir = run([sys.executable, pool_py, "outside", os.path.abspath(cublas)],
                   GPUSPY_FAKE_MEM_TOTAL=str(64 * MiB), **torch_env)
told = verdicts(r.stderr)
check(r.returncode == 0 and "caught OutOfMemoryError" in r.stdout and
      "asked again after freeing: ok" in r.stdout,
      "outside: the program caught PyTorch's error and went on: %r" % r.stdout)
want = ("outside-framework: 20.0 MiB of the program's memory is outside the PyTorch caching "
        "allocator (cuBLAS 20.0 MiB, CUDA graphs 0 B, other CUDA calls 0 B), where the pool "
        "cannot reuse it; 4.0 MiB more was needed for 8.0 MiB")
check(decisive(r.stderr) == want, "outside: the line when PyTorch raised: %s" %
      decisive(r.stderr))
ev = json.load(open(os.path.join(pdir, "oom-2.json")))["event"] if pdir else {}
check(ev.get("library") == {"bytes": 20 * MiB, "top": "cuBLAS", "top_bytes": 20 * MiB} and
      ev.get("pool", {}).get("bytes") == 40 * MiB and
      ev.get("torch", {}).get("reserved_bytes") == 40 * MiB,
      "outside: oom-2.json: cuBLAS 20 MiB, the pool's segments 40 MiB: %r" %
      {k: ev.get(k) for k in ("library", "pool")})
j, text, page = report(out)
v = same_class("outside", r.stderr, j, text, page)
check(v.get("outside_bytes") == 20 * MiB and v.get("library") == "cuBLAS" and
      v.get("missing_bytes") == 4 * MiB,
      "outside: JSON verdict: 20 MiB outside, cuBLAS, 4 MiB missing: %r" % v)

sys.exit(harness.done())
