#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Names from the system are data, never a path: under a host name that is
"../../esc", "a/b", "..", ".", ".hidden", "-", "" or holds control
characters and a newline (tests/cli/fakehost.c, preloaded before
libgpuspy.so, answers gethostname and uname), and a command whose name holds
'/'-free but hostile bytes, a run of tests/cli/leaker.c under 'gpuspy run -o
RUN' writes nothing outside RUN, makes one process directory there whose
name is one component, not hidden, without a control character, and
'gpuspy report RUN' reads it, with the host name as it was (JSON "host").

Usage: test_hostile_host.py GPUSPY LIBGPUSPY FAKE_DIR LEAKER FAKEHOST"""
import json, os, shutil, subprocess, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

cli, lib, fake, prog, fakehost = (os.path.abspath(a) for a in sys.argv[1:6])
env = {k: v for k, v in os.environ.items()
       if not k.startswith(("GPUSPY_", "LC_", "LANG")) and k != "LD_PRELOAD"}
env.update(LD_LIBRARY_PATH=fake, GPUSPY_QUIET="1", GPUSPY_INTERVAL="100ms", LC_ALL="C.UTF-8",
           GPUSPY_LIBRARY=lib)
# gpuspy run puts libgpuspy.so before it: the shim still comes before libc
faked = dict(env, LD_PRELOAD=harness.preload(fakehost))


def tree(top):
    out = set()
    for d, dirs, files in os.walk(top):
        for n in dirs + files:
            out.add(os.path.relpath(os.path.join(d, n), top))
    return out


def pct(b):
    return "".join("%%%02X" % c for c in b)


HOSTS = [b"../../esc", b"a/b", b"..", b".", b".hidden", b"-", b"", b"ctl\x1b[2J\nx\ty",
         b"x" * 30 + b"/../" + b"y" * 30, "h\u00e9te".encode()]
for host in HOSTS:
    # three levels, so that "../../esc" from the run directory stays in TOP
    top = harness.tempdir()
    run = os.path.join(top, "a", "b", "run")
    os.makedirs(os.path.dirname(run))
    before = tree(top)
    r = subprocess.run([cli, "run", "-o", run, "--", prog, "3", "20", "64"],
                       env=dict(faked, FAKE_HOSTNAME=pct(host)), capture_output=True, timeout=60)
    what = "host %r" % host
    new = tree(top) - before
    outside = sorted(p for p in new if not (p + "/").startswith("a/b/run/")
                     and p not in ("a/b/run",))
    check(r.returncode == 0 and not outside, f"{what}: nothing written outside the run directory",
          (r.returncode, outside, r.stderr[-300:]))
    procs = [d for d in os.listdir(run) if os.path.isdir(os.path.join(run, d))] \
        if os.path.isdir(run) else []
    check(len(procs) == 1 and not procs[0].startswith(".") and "/" not in procs[0]
          and procs[0] not in (".", "..") and all(0x20 < ord(c) < 0x7f for c in procs[0])
          and os.path.exists(os.path.join(run, procs[0], "report.json")),
          f"{what}: one process directory, a plain component: {procs}")
    j = subprocess.run([cli, "report", "--format", "json", run], env=env, capture_output=True,
                       timeout=60)
    doc = json.loads(j.stdout) if j.returncode == 0 else None
    want = host.decode("utf-8") if host else None
    got = doc["processes"][0]["host"] if doc else None
    # an empty name is "unknown" (readers refuse an empty host)
    check(doc is not None and len(doc["processes"]) == 1
          and got == (want if host else "unknown"),
          f"{what}: report reads it, its host as it was ({got!r})", j.stderr[-300:])
    shutil.rmtree(top, ignore_errors=True)

# a command whose name holds control characters and dots: the run id made
# of it is one plain component of the output directory
top = harness.tempdir()
odd = os.path.join(top, "..x\x1b[2J\n..")
os.symlink(prog, odd)
out = os.path.join(top, "out")
os.makedirs(out)
before = tree(top)
r = subprocess.run([cli, "run", "--", odd, "2", "20", "64"], env=env, cwd=out,
                   capture_output=True, timeout=60)
new = tree(top) - before
runs = [d for d in os.listdir(os.path.join(out, "gpuspy-out")) if d != "latest"] \
    if os.path.isdir(os.path.join(out, "gpuspy-out")) else []
check(r.returncode == 0 and all(p.startswith("out/") for p in new) and len(runs) == 1
      and not runs[0].startswith(".") and all(0x20 < ord(c) < 0x7f for c in runs[0]),
      f"a command named {os.path.basename(odd)!r}: one plain run directory {runs}",
      (r.returncode, sorted(new)[:5], r.stderr[-300:]))
shutil.rmtree(top, ignore_errors=True)

# an output directory with a newline and an escape in its name: each line
# the library and gpuspy run say is one line, without the control bytes
top = harness.tempdir()
odd = os.path.join(top, "out\nnext\x1b[2J")
for argv, e in (([cli, "run", "-o", odd, "--", prog, "2", "20", "64"], env),
                ([prog, "2", "20", "64"], dict(env, LD_PRELOAD=lib, GPUSPY_OUTPUT_DIR=odd,
                                               GPUSPY_QUIET="0"))):
    r = subprocess.run(argv, env=dict(e, GPUSPY_QUIET="0"), capture_output=True, timeout=60)
    err = r.stderr.decode(errors="replace")
    lines = err.splitlines()
    check(r.returncode == 0 and lines and all(l.startswith("gpuspy") for l in lines)
          and "\x1b" not in err and any("out?next?[2J" in l for l in lines),
          f"an output directory with a newline, {os.path.basename(argv[0])}: one line each, "
          "the control bytes as '?'", lines)
shutil.rmtree(top, ignore_errors=True)

sys.exit(harness.done())
