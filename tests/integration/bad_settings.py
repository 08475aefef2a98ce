#!/usr/bin/env python3
"""Bad GPUSPY_* settings (libgpuspy(7), ENVIRONMENT):
 - inherited by processes that never allocate (five /bin/true), they print
   nothing; a process that allocates prints each warning once;
 - a refused value is the default: GPUSPY_INTERVAL=nan, inf, -0, 1e20us
   run the snapshot thread every second (snapshot.json appears) instead of
   never or not at all;
 - GPUSPY_SIGNAL refuses SIGTERM, SIGINT and SIGSEGV: the program can still
   be stopped, and a segfault still ends it.
Usage: bad_settings.py LIBGPUSPY FAKE_DIR SIGNAL_PROG TRUE"""
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

# The programs get SIGHUP's default action whatever this test inherited
# (nohup, or a CI runner, may start it with SIGHUP ignored; an ignored
# signal stays ignored across exec).
signal.signal(signal.SIGHUP, signal.SIG_DFL)

lib, fake, prog, true = sys.argv[1:5]
lib = harness.preload(lib)
SIZE = str(3 << 20)


def environment(out, **settings):
    env = harness.clean_env()
    env.update(LD_PRELOAD=lib, LD_LIBRARY_PATH=fake, GPUSPY_OUTPUT_DIR=out, GPUSPY_QUIET="1")
    env.update(settings)
    return env


BAD = dict(GPUSPY_INTERVAL="nan", GPUSPY_DEPTH="0x10", GPUSPY_PYTHON_DEPTH="-1",
           GPUSPY_SIGNAL="15", GPUSPY_UNWIND="bogus", GPUSPY_NVML="maybe",
           GPUSPY_TORCH="2", GPUSPY_DISABLE="please")

# 1. Five processes that never allocate: not a line.
out = harness.tempdir()
lines = []
for _ in range(5):
    r = subprocess.run([true], env=environment(out, **BAD), capture_output=True, text=True,
                       timeout=30)
    lines += r.stderr.splitlines()
check(lines == [], f"five /bin/true with bad settings print nothing: {len(lines)} lines {lines[:3]}")

# 2. One that allocates: each setting's warning, once.
p = subprocess.Popen([prog, SIZE, "sleep"], env=environment(out, **BAD), stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE, text=True)
p.stdout.readline()
p.send_signal(signal.SIGTERM)
try:
    _, err = p.communicate(timeout=10)
except subprocess.TimeoutExpired:
    p.kill()
    _, err = p.communicate()
warned = [l for l in err.splitlines() if l.startswith("gpuspy: GPUSPY_")]
for name in BAD:
    n = sum(l.startswith(f"gpuspy: {name}={BAD[name]} ") for l in warned)
    check(n == 1, f"{name}={BAD[name]}: warned once ({n})")
check(len(warned) == len(BAD), f"nothing else warned: {warned[:12]}")
check(p.returncode == -signal.SIGTERM,
      f"GPUSPY_SIGNAL=15 refused: SIGTERM still ends the program ({p.returncode})")
shutil.rmtree(out)

# 3. A refused interval is the default, 1 s: the thread runs and writes
# snapshot.json (nan meant never, inf, -0 and 1e20us meant no thread).
for value in ("nan", "inf", "-0", "1e20us", "0x10"):
    out = harness.tempdir()
    p = subprocess.Popen([prog, SIZE, "sleep"], env=environment(out, GPUSPY_INTERVAL=value),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    p.stdout.readline()
    written = bool(harness.wait_snapshot(out, timeout=5, proc=p))
    p.kill()
    _, err = p.communicate()
    check(written and f"GPUSPY_INTERVAL={value} is not a duration" in err,
          f"GPUSPY_INTERVAL={value}: the default 1s, with a warning "
          f"(snapshot.json {'written' if written else 'not written in 5 s'}; {err.strip()[:300]!r})")
    shutil.rmtree(out)

# 4. Signals the program must keep: it still ends as it should.
for value, how, expect in (("2", "SIGINT", -signal.SIGINT), ("15", "SIGTERM", -signal.SIGTERM),
                           ("SIGUSR1", None, None), ("11", "segv", -signal.SIGSEGV),
                           ("1", "SIGHUP", -signal.SIGHUP)):
    out = harness.tempdir()
    p = subprocess.Popen([prog, SIZE, "segv" if how == "segv" else "sleep"],
                         env=environment(out, GPUSPY_SIGNAL=value, GPUSPY_INTERVAL="0"),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    p.stdout.readline()
    if how is None:
        # taken: gpuspy's handler is there, the program lives on
        os.kill(p.pid, signal.SIGUSR1)
        time.sleep(0.3)  # not a wait: the signal must not end it
        alive = p.poll() is None
        p.kill()
        _, err = p.communicate()
        check(alive and "GPUSPY_SIGNAL" not in err,
              f"GPUSPY_SIGNAL={value}: taken, the program lives on after it ({err.strip()[:300]!r})")
    else:
        if how != "segv":
            os.kill(p.pid, getattr(signal, how))
        try:
            _, err = p.communicate(timeout=10)
            ended = p.returncode
        except subprocess.TimeoutExpired:
            p.kill()
            _, err = p.communicate()
            ended = "still running after 10 s"
        check(ended == expect and f"GPUSPY_SIGNAL={value} " in err and "refused" in err,
              f"GPUSPY_SIGNAL={value}: refused with a warning, {how} still ends the program "
              f"({ended}; {err.strip()[:300]!r})")
    shutil.rmtree(out)

sys.exit(harness.done())
