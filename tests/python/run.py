#!/usr/bin/env python3
"""Python frames through ctypes, for every CPython 3.10-3.13 on this
machine: runs leak.py under libgpuspy.so with each interpreter found and
checks that the sites name leak.py's file, function and line.
Interpreters that are absent are skipped (and said so); at least one must
be present.  Usage: run.py LIBGPUSPY LIBPYALLOC FAKE_DIR GPUSPY"""
import glob, json, os, shutil, subprocess, sys

from pythons import interpreters

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

lib, pyalloc, fake_dir, cli = sys.argv[1:5]
lib = harness.preload(lib)
here = os.path.dirname(os.path.abspath(__file__))
script = os.path.join(here, "leak.py")
src = open(script).read().splitlines()
line_of = {tag: i + 1 for i, l in enumerate(src) for tag in [l.split("# LINE ")[-1]] if "# LINE " in l}


found = interpreters()
for minor in (10, 11, 12, 13):
    if minor not in found:
        print(f"3.{minor}: not installed, skipped")
runs = [(minor, py) for minor, pys in sorted(found.items()) for py in pys]
for minor, py in runs:
    out = harness.tempdir()
    env = dict(os.environ, LD_PRELOAD=lib, GPUSPY_OUTPUT_DIR=out, GPUSPY_QUIET="1",
               LD_LIBRARY_PATH=fake_dir)
    r = subprocess.run([py, script, pyalloc], env=env, capture_output=True, text=True)
    reps = glob.glob(os.path.join(out, "*", "report.json"))
    if not check(r.returncode == 0 and len(reps) == 1, f"3.{minor} ({py}): runs, one report",
                 f"status {r.returncode}, {len(reps)} reports\n{r.stderr}"):
        continue
    rep = json.load(open(reps[0]))
    want = {("leak_from_function", line_of["leak_from_function"], 3 << 20),
            ("Model.grow" if minor >= 11 else "grow", line_of["grow"], 2 << 20)}
    got = set()
    for s in rep["sites"]:
        for fr in s.get("python", [])[:1]:
            if fr["file"] == script:
                got.add((fr["function"], fr["line"], s["live_bytes"]))
    outer_seen = any(any(fr["function"] == "outer" for fr in s.get("python", [])) for s in rep["sites"])
    ok = want <= got and outer_seen and rep.get("python", {}).get("supported") is True
    check(ok, f"3.{minor} ({py}): python {rep.get('python')}; innermost frames {sorted(got)}")
    # The CLI places the Python frames into the merged stack.
    j = json.loads(subprocess.run([cli, "report", "--format", "json", out], capture_output=True,
                                  text=True, check=True).stdout)
    py_frames = [f for s in j["sites"] for f in s["frames"] if f.get("kind") == "python"]
    check(any(f.get("function") == "leak_from_function" and
              f.get("line") == line_of["leak_from_function"] for f in py_frames),
          f"3.{minor}: gpuspy report shows the Python frame of leak_from_function")
    shutil.rmtree(out)

check(found, "a CPython 3.10-3.13 is installed")
print(f"{len(runs)} interpreters run")
sys.exit(harness.done())
