#!/usr/bin/env python3
"""`gpuspy snapshot PID` sends nothing to a process that has no gpuspy
listening: the default action of SIGUSR2 (or of any GPUSPY_SIGNAL) ends a
process.  A plain `sleep` found through a stale process directory, and a
process with gpuspy loaded that never allocated (gpuspy has no handler
yet), are left alone, with one line and exit 2; a process under gpuspy
writes its snapshot, also when its GPUSPY_SIGNAL was refused (9, 15: the
library and the command both take SIGUSR2 then).
Usage: snapshot_checks.py LIBGPUSPY GPUSPY FAKE_DIR SIGNAL_PROG"""
import glob
import os
import shutil
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

lib, cli, fake, prog = sys.argv[1:5]
lib = harness.preload(lib)


def environment(out, preload, **settings):
    env = harness.clean_env()
    env.update(LD_LIBRARY_PATH=fake, GPUSPY_OUTPUT_DIR=out, GPUSPY_QUIET="1",
               GPUSPY_INTERVAL="0")
    if preload:
        env["LD_PRELOAD"] = lib
    env.update(settings)
    return env


def execed(pid, preload):
    """Whether PID runs sleep now (not the test's fork of itself), with
    libgpuspy.so mapped when PRELOAD."""
    try:
        exe = os.path.basename(os.readlink(f"/proc/{pid}/exe"))
        maps = open(f"/proc/{pid}/maps").read()
    except OSError:
        return False
    return exe == "sleep" and (not preload or "libgpuspy" in maps)


# 1. No gpuspy in the process, or gpuspy not started: a stale directory
# of its pid is there, yet nothing is sent.
for preload, what in ((False, "a plain sleep"), (True, "gpuspy loaded, no allocation yet")):
    out = harness.tempdir()
    p = subprocess.Popen(["sleep", "30"], env=environment(out, preload))
    harness.wait_for(lambda: execed(p.pid, preload), timeout=10, proc=p)
    os.mkdir(os.path.join(out, f"{socket.gethostname()}-{p.pid}"))
    r = subprocess.run([cli, "snapshot", str(p.pid)], capture_output=True, text=True, timeout=30)
    time.sleep(0.2)  # not a wait: the signal must not end it
    alive = p.poll() is None
    p.kill()
    p.wait()
    lines = r.stderr.splitlines()
    check(alive and r.returncode == 2 and len(lines) == 1 and "nothing sent" in lines[0] and
          not r.stdout,
          f"{what}: not signalled, alive ({alive}), exit {r.returncode}, {r.stderr.strip()!r}")
    if not preload:
        check(lines == [f"gpuspy snapshot: process {p.pid}: no gpuspy in this process; "
                        "nothing sent"], f"{what}: says so: {lines}")
    shutil.rmtree(out)

# 2. Under gpuspy: the snapshot is written, the process lives on; a refused
# GPUSPY_SIGNAL means SIGUSR2 on both sides.
for value in (None, "9", "15", "SIGRTMIN+1"):
    out = harness.tempdir()
    settings = {} if value is None else {"GPUSPY_SIGNAL": value}
    p = subprocess.Popen([prog, str(1 << 20), "sleep"], env=environment(out, True, **settings),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    p.stdout.readline()
    r = subprocess.run([cli, "snapshot", str(p.pid), "asked"], capture_output=True, text=True,
                       timeout=30)
    time.sleep(0.2)  # not a wait: the signal must not end it
    alive = p.poll() is None
    p.kill()
    p.wait()
    written = glob.glob(os.path.join(out, "*", "snapshot-1.json"))
    tag = f"GPUSPY_SIGNAL={value}" if value else "GPUSPY_SIGNAL unset"
    check(r.returncode == 0 and written and alive and r.stdout.strip() == written[0],
          f"{tag}: snapshot written, the process alive ({alive}): {r.returncode} "
          f"{r.stdout.strip()!r} {r.stderr.strip()!r}")
    if value in ("9", "15"):
        check(r.stderr.splitlines() == [f"gpuspy snapshot: GPUSPY_SIGNAL={value}: refused by "
                                        f"the library; process {p.pid} uses SIGUSR2"],
              f"{tag}: the command says it uses SIGUSR2, as the library does: "
              f"{r.stderr.strip()!r}")
    shutil.rmtree(out)

sys.exit(harness.done())
