#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every tensor has a line, from the first (libgpuspy(7), "PYTORCH VIEW"):
a program (torch_early_prog.py) whose pretend PyTorch (fake_torch/,
installed as a package in a site-packages directory, its pool's segments
from the fake runtime: FAKE_TORCH_POOL=1) allocates its weights at the
import of a module and in the first milliseconds, with GPUSPY_INTERVAL=5s
(the view's interval would see none of them).
- as PyTorch is: the view arms as CUDA starts, in torch.cuda's lazy
  initialization, and PyTorch's own history names every block's line;
- with CUDA started before PyTorch is imported (cuda-first), the same:
  the view arms while PyTorch is imported (which goes on after its CUDA
  library is loaded, FAKE_TORCH_IMPORT_S);
- a program that ends a few milliseconds after CUDA starts (short): the
  view, armed, never asked to start by the snapshot thread, starts at the
  program's exit (its atexit handler) and writes torch.json then;
- a PyTorch without torch.cuda's queue of calls (FAKE_TORCH_NO_QUEUE=1):
  the view cannot arm and starts after the import's blocks, which are
  named from gpuspy's record of the segment holding each
  ("source": "segment"), at the module's line.
In each, torch.json, `gpuspy report` (text and JSON) and the exit summary
say nothing "before the view started", and every block is at its line.
Usage: torch_early.py LIBGPUSPY LIBPYALLOC FAKE_DIR GPUSPY LIBC10_CUDA(pool)"""
import glob
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

lib, pyalloc, fake_dir, cli, c10 = sys.argv[1:6]
lib = harness.preload(lib)
here = os.path.dirname(os.path.abspath(__file__))
MIB = 1 << 20


def lines_of(name):
    src = open(os.path.join(here, name)).read().splitlines()
    out = {}
    for i, l in enumerate(src):
        if "# LINE " in l:
            out.setdefault(l.split("# LINE ")[-1].split()[0], set()).add(i + 1)
    return out


prog_lines, mod_lines = lines_of("torch_early_prog.py"), lines_of("early_weights.py")
# where a block belongs: (file, line) -> MiB
expected = {("early_weights.py", l): 2 for l in mod_lines["import-weights"]}
expected.update({("torch_early_prog.py", l): 2 for l in prog_lines["weights"]})
expected[("torch_early_prog.py", min(prog_lines["first"]))] = 2
expected[("torch_early_prog.py", min(prog_lines["step"]))] = 10

# the pretend PyTorch as pip lays it out: its frames are a library's
site = harness.tempdir()
packages = os.path.join(site, "lib", "python3", "site-packages")
shutil.copytree(os.path.join(here, "fake_torch", "torch"), os.path.join(packages, "torch"))


def user_frame(frames):
    for f in frames:
        if "/site-packages/" not in f["file"]:
            return f
    return None


def run(what, *args, **extra):
    out = harness.tempdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GPUSPY_", "FAKE_"))}
    env.update(LD_PRELOAD=lib, GPUSPY_OUTPUT_DIR=out, LD_LIBRARY_PATH=fake_dir,
               GPUSPY_INTERVAL="5s", PYTHONPATH=os.pathsep.join((packages, here)),
               FAKE_C10_CUDA=os.path.abspath(c10), FAKE_TORCH_POOL="1")
    env.update(extra)
    r = subprocess.run([sys.executable, os.path.join(here, "torch_early_prog.py"), pyalloc]
                       + list(args), env=env, capture_output=True, text=True, timeout=120)
    check(r.returncode == 0 and r.stdout == "done\n", f"{what}: the program runs",
          r.stderr[-1500:])
    files = glob.glob(os.path.join(out, "*", "torch.json"))
    check(len(files) == 1, f"{what}: torch.json written")
    if not files:
        return None
    t = json.load(open(files[0]))
    by_line, nowhere, segment = {}, 0, {}
    for s in t["sites"]:
        f = user_frame(s["frames"])
        if f is None:
            nowhere += s["live_bytes"]
            continue
        key = (os.path.basename(f["file"]), f["line"])
        by_line[key] = by_line.get(key, 0) + s["live_bytes"] // MIB
        if s.get("source") == "segment":
            segment[key] = segment.get(key, 0) + s["live_bytes"] // MIB
            check(type(s.get("site")) is int and s["site"] >= 0,
                  f"{what}: a line from gpuspy's record names its site", s)
    check(nowhere == 0, f"{what}: torch.json: {nowhere} bytes without a line (none)",
          json.dumps(t["sites"])[:3000])
    check(by_line == expected, f"{what}: torch.json: every block at its line, in MiB",
          f"{sorted(by_line.items())} != {sorted(expected.items())}")
    summary = [x for x in r.stderr.splitlines() if "[PyTorch view]" in x]
    check(summary and not any("before the view" in x for x in summary),
          f"{what}: the exit summary names no block from before the view", r.stderr)
    rep = subprocess.run([cli, "report", out], capture_output=True, text=True)
    sec = rep.stdout[rep.stdout.find("\nPYTORCH TENSORS"):]
    sec = sec[:sec.find("\n\n", 2)] if "\n\n" in sec[2:] else sec
    check(rep.returncode == 0 and "PYTORCH TENSORS" in sec and "before" not in sec,
          f"{what}: gpuspy report: nothing from before the view started", sec[:2000])
    j = subprocess.run([cli, "report", "--format", "json", out], capture_output=True, text=True)
    ts = json.loads(j.stdout).get("torch", {}).get("sites", []) if j.returncode == 0 else []
    check(ts and all("headline" in s for s in ts if s["live_bytes"]),
          f"{what}: gpuspy report --format json: every line with live blocks has a headline",
          json.dumps(ts)[:2000])
    return {"segment": segment, "text": sec, "json": ts, "stderr": r.stderr}


# as PyTorch is, and with CUDA started before PyTorch: PyTorch's own record
# (PyTorch's import goes on after its CUDA library is loaded: here until
# the view arms, 10 s at most)
for what, args, extra in (("lazy", (), {}),
                          ("cuda-first", ("cuda-first",), {"FAKE_TORCH_IMPORT_S": "10"})):
    got = run(what, *args, **extra)
    if got:
        check(got["segment"] == {}, f"{what}: every block named by PyTorch's own record",
              got["segment"])

# a program that ends a few milliseconds after CUDA starts, before the
# snapshot thread asks for the view's start: the view starts at its exit,
# from the interpreter's exit handlers, and takes its last sample then
got = run("short", "short")
if got:
    check(got["segment"] == {}, "short: every block named by PyTorch's own record",
          got["segment"])

# no queue to arm in: the import's weights from gpuspy's record of their
# segments, said so everywhere
got = run("no queue", FAKE_TORCH_NO_QUEUE="1")
if got:
    weights = {k: v for k, v in expected.items() if k[0] == "early_weights.py"}
    check(set(weights) <= set(got["segment"]) and
          all(got["segment"][k] == v for k, v in weights.items()),
          "no queue: the import's weights named from gpuspy's record of their segments",
          got["segment"])
    line = min(mod_lines["import-weights"])
    check(f"<module> (early_weights.py:{line}) (from gpuspy's record of its segment)"
          in got["text"], "no queue: gpuspy report says where the name comes from",
          got["text"][:2000])
    check(any(s.get("source") == "segment" and s["headline"]["line"] in
              mod_lines["import-weights"] for s in got["json"] if "headline" in s),
          "no queue: ... and so does its JSON", json.dumps(got["json"])[:2000])
    check("from gpuspy's record of its segment" in got["stderr"],
          "no queue: ... and the exit summary", got["stderr"])
shutil.rmtree(site)
sys.exit(harness.done())
