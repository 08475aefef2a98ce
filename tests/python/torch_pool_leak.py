#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What "leaked" means for a framework (libgpuspy(7), "What leaked means"):
a program whose pretend PyTorch pool (fake_torch/, segments from the fake
runtime) still holds 14 MiB in 7 segments at exit, beside 1 MiB the
program's own code leaked.  The exit summary on stderr, report.txt, the
first lines of `gpuspy report`, its JSON totals and `--fail-on-leak` all
say the program's own 1 MiB apart from what the PyTorch pool holds, and
the gate passes at 1M unless --include-pools counts the pool too.
Usage: torch_pool_leak.py LIBGPUSPY LIBPYALLOC FAKE_DIR GPUSPY LIBC10_CUDA"""
import glob
import json
import os
import re
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


out = harness.tempdir()
env = harness.clean_env()
env.update(LD_PRELOAD=lib, GPUSPY_OUTPUT_DIR=out, LD_LIBRARY_PATH=fake_dir,
           GPUSPY_INTERVAL="10ms", PYTHONPATH=os.path.join(here, "fake_torch"),
           FAKE_C10_CUDA=os.path.abspath(c10), FAKE_TORCH_SEGMENTS="1")
r = subprocess.run([sys.executable, os.path.join(here, "torch_pool_prog.py"), pyalloc], env=env,
                   capture_output=True, text=True, timeout=120)
check(r.returncode == 0 and r.stdout == "done\n", "the program runs", r.stderr[-1000:])

# the exit summary: the program's own first, the pool's cache apart
lines = [x for x in r.stderr.splitlines() if x.startswith("gpuspy:")]
first = next((i for i, x in enumerate(lines) if "still live at exit" in x), -1)
check(first >= 0 and re.match(r"^gpuspy: 1\.0 MiB in 1 allocation of GPU memory still live at "
                              r"exit from the program's own code, peak ", lines[first])
      and lines[first + 1] == "gpuspy:   14.0 MiB in 7 segments held by the PyTorch pool at exit "
      "(the framework's cache, not a leak)",
      "exit summary: the program's own 1 MiB, then the PyTorch pool's 14 MiB", lines)
named = [x for x in lines[first + 2:] if x.startswith("gpuspy:   ") and " from " in x
         and "[PyTorch view]" not in x]
check(len(named) == 1 and "1.0 MiB in 1 from <module> (" in named[0],
      "... the program's own site named, not the pool's segments", named)

# report.txt
txt = "".join(open(f).read() for f in glob.glob(os.path.join(out, "*", "report.txt")))
check("Leaked at exit:  1.0 MiB in 1 allocation (GPU memory left by the program's own code)\n"
      in txt and "Held by pools:   14.0 MiB in 7 segments held by the PyTorch pool at exit" in txt
      and txt.count(" [held by the PyTorch pool]") == 1,
      "report.txt: the same, and the pool's site tagged", txt[:1200])

# gpuspy report: its first lines
t = subprocess.run([cli, "report", out], capture_output=True, text=True)
summary = t.stdout.split("SUMMARY\n", 1)[-1].splitlines()
check(t.returncode == 0 and summary[0].startswith("  leaked at exit:   1.0 MiB in 1 allocation "
                                                  "(1048576 bytes")
      and summary[0].endswith(", by the program's own code)")
      and summary[1] == "  held by pools:    14.0 MiB in 7 segments of the PyTorch caching "
      "allocator (the framework's cache at exit, not a leak of the program's)",
      "gpuspy report: the program's own leak first, the pool's apart", "\n".join(summary[:4]))
j = subprocess.run([cli, "report", "--format", "json", out], capture_output=True, text=True)
lk = json.loads(j.stdout)["leaked"] if j.returncode == 0 else {}
check(lk.get("bytes") == 15 * MIB and lk.get("program") == {"bytes": MIB, "allocations": 1}
      and lk.get("pools") == {"bytes": 14 * MIB, "allocations": 7,
                              "by_pool": {"PyTorch caching allocator": 14 * MIB}},
      "gpuspy report --format json: leaked, its program's part and its pools'", lk)

# the gate: the program's own leak; --include-pools counts the pool
for args, status, words in (
        (["--fail-on-leak", "1M"], 0, "OK: 1.0 MiB live at exit, not more than 1.0 MiB "
         "(--fail-on-leak; 14.0 MiB more held by the pools, not counted (--include-pools counts "
         "it))"),
        (["--fail-on-leak", "512K"], 1, "FAIL: 1.0 MiB live at exit, more than 512.0 KiB"),
        (["--fail-on-leak", "1M", "--include-pools"], 1,
         "FAIL: 15.0 MiB live at exit, more than 1.0 MiB (--fail-on-leak; 14.0 MiB of it held by "
         "the pools, counted (--include-pools))"),
        (["--include-pools"], 2, "--include-pools goes with")):
    g = subprocess.run([cli, "report", "--sections", "summary"] + args + [out],
                       capture_output=True, text=True)
    said = (g.stdout + g.stderr).strip().splitlines()
    check(g.returncode == status and said and words in said[-1],
          f"gpuspy report {' '.join(args)}: status {status}, {words!r}", (g.returncode, said[-2:]))

shutil.rmtree(out)
sys.exit(harness.done())
