#!/usr/bin/env python3
"""`gpuspy snapshot` signals a process as its libgpuspy reads GPUSPY_SIGNAL
(src/common/env.c): a value the library refused ("10x", "99999") means
SIGUSR2 to both, and the command says so in one line; before, it sent
signal 10, which killed the process.
Usage: snapshot_signal.py LIBGPUSPY LIBPYALLOC FAKE_DIR GPUSPY"""
import glob
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

lib, pyalloc, fake_dir, cli = sys.argv[1:5]
lib = harness.preload(lib)
code = f"""
import ctypes, sys, time
ctypes.CDLL({pyalloc!r}).pyalloc_leak(ctypes.c_size_t(1 << 20), 1)
print("ready", flush=True)
time.sleep(30)
"""


for value, warned, sig_ok in (("10x", True, True), ("99999", True, True), ("USR1", False, True),
                              ("12", False, True), ("", False, True), ("off", False, False)):
    out = harness.tempdir()
    env = harness.clean_env()
    env.update(LD_PRELOAD=lib, LD_LIBRARY_PATH=fake_dir, GPUSPY_OUTPUT_DIR=out,
               GPUSPY_INTERVAL="0", GPUSPY_QUIET="1", GPUSPY_SIGNAL=value)
    p = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    p.stdout.readline()
    r = subprocess.run([cli, "snapshot", str(p.pid), "asked"], capture_output=True, text=True,
                       timeout=30)
    alive = p.poll() is None
    p.kill()
    p.wait()
    lib_warned = f"GPUSPY_SIGNAL={value} is not" in p.stderr.read()
    tag = f"GPUSPY_SIGNAL={value!r}"
    if sig_ok:
        check(r.returncode == 0 and r.stdout.strip().endswith("snapshot-1.json") and alive and
              glob.glob(os.path.join(out, "*", "snapshot-1.json")),
              f"{tag}: snapshot written, the process alive: {r.returncode} {r.stdout.strip()!r}")
    else:
        check(r.returncode == 2 and "GPUSPY_SIGNAL=off" in r.stderr and alive,
              f"{tag}: refused: {r.returncode} {r.stderr.strip()!r}")
    want = [f"gpuspy snapshot: GPUSPY_SIGNAL={value}: not SIGUSR1, SIGUSR2, a number or off; "
            f"process {p.pid} uses SIGUSR2"] if warned else []
    lines = r.stderr.splitlines() if sig_ok else want
    check(lines == want and lib_warned == warned,
          f"{tag}: the command warns {'in one line' if warned else 'not'}, as the library "
          f"did: {lines}")
    shutil.rmtree(out)
sys.exit(harness.done())
