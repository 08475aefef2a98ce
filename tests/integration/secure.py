#!/usr/bin/env python3
"""gpuspy in a privileged program (libgpuspy(7), FILES AND FAILURES): a
set-user-ID root copy of tests/integration/secure_prog.c (libgpuspy.so and
the fake driver linked by absolute run paths, which the loader honours in
secure-execution mode) run by nobody from a directory of nobody's: it runs
with gpuspy loaded and AT_SECURE set, exits 0, and leaves nothing in that
directory (no root-owned gpuspy-out there), nor anything on stderr.
Skipped unless run as root on a file system that honours set-user-ID.
Usage: secure.py SECURE_PROG"""
import os, pwd, shutil, subprocess, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

prog = os.path.abspath(sys.argv[1])
if os.geteuid() != 0 or not shutil.which("setpriv"):
    harness.skip("needs root and setpriv")
nobody = pwd.getpwnam("nobody")
top = harness.tempdir()
os.chmod(top, 0o755)
copy = os.path.join(top, "secure_prog")
shutil.copy(prog, copy)
os.chown(copy, 0, 0)
os.chmod(copy, 0o4755)
cwd = os.path.join(top, "cwd")
os.mkdir(cwd)
os.chown(cwd, nobody.pw_uid, nobody.pw_gid)
env = {"PATH": "/usr/bin:/bin", "GPUSPY_OUTPUT_DIR": cwd + "/out"}
r = subprocess.run(["setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}",
                    "--clear-groups", "--", copy], cwd=cwd, env=env, capture_output=True,
                   text=True, timeout=60)
if r.stdout.strip() != "secure=1 gpuspy=1":
    shutil.rmtree(top)
    harness.skip(f"not in secure-execution mode with gpuspy ({r.stdout.strip()!r}, "
                 f"{r.stderr.strip()[:200]!r})")
left = os.listdir(cwd)
check(r.returncode == 0 and not left and not r.stderr,
      "a set-user-ID program: gpuspy writes nothing, says nothing",
      f"status {r.returncode}, left {left}, stderr {r.stderr.strip()[:200]!r}")
shutil.rmtree(top)
sys.exit(harness.done())
