#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""One directory per run, the latest pointer, and saying when nothing was
recorded: gpuspy run and plain LD_PRELOAD on the fake driver, read back by
gpuspy report, diff and top as a user runs them.

    test_rundir.py GPUSPY LIBGPUSPY FAKE_DIR GROWTH PYALLOC
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

gpuspy, lib, fake, growth, pyalloc = (os.path.abspath(a) for a in sys.argv[1:6])
env = harness.clean_env(fake, LD_PRELOAD=None, GPUSPY_QUIET="1", GPUSPY_LIBRARY=lib,
                        GPUSPY_INTERVAL="50ms")
RUN_ID = re.compile(r"\d{8}T\d{6}Z-[A-Za-z0-9._+-]+-[1-9]\d*")


def run(args, cwd, **kw):
    e = dict(env)
    e.update(kw)
    return subprocess.run(args, cwd=cwd, env=e, capture_output=True, text=True, timeout=60)


def report_json(cwd, *paths):
    p = run([gpuspy, "report", "--format", "json"] + list(paths), cwd)
    try:
        return p, json.loads(p.stdout)
    except ValueError:
        return p, None


def runs_in(out):
    if not os.path.isdir(out):
        return []
    return sorted(n for n in os.listdir(out) if RUN_ID.fullmatch(n))


def remove(path):
    if os.path.lexists(path):
        os.remove(path)


def one_line(p):
    return p.returncode == 2 and p.stdout == "" and p.stderr.count("\n") == 1


with tempfile.TemporaryDirectory(prefix="gpuspy-rundir-") as tmp:
    tmp = os.path.realpath(tmp)
    out = os.path.join(tmp, "gpuspy-out")

    # Problem 1: three runs of one program, then one of another, into the
    # default directory; the report of the latest is that last run alone.
    for _ in range(3):
        run([gpuspy, "run", "--", growth, "3", "1"], tmp)
    p = run([gpuspy, "run", "--", "python3", "-c",
             "import ctypes; ctypes.CDLL(%r).pyalloc_leak(1 << 20, 2)" % pyalloc], tmp)
    names = runs_in(out)
    check(len(names) == 4 and [n.split("-")[1] for n in names] == ["growth"] * 3 + ["python3"],
          "four runs, four run directories named by time and command", names)
    lat = os.path.join(out, "latest")
    latest = os.readlink(lat) if os.path.islink(lat) else None
    check(names and latest == names[-1], "latest points at the last run", latest)
    check(all(oct(os.stat(os.path.join(out, n)).st_mode & 0o777) == "0o700" for n in names),
          "run directories are 0700")
    p, j = report_json(tmp)
    check(j is not None and len(j["processes"]) == 1 and j["leaked"]["bytes"] == 2 << 20,
          "gpuspy report without a path: the latest run only", (p.stderr, j and j["leaked"]))
    check(p.stderr == "gpuspy report: reading %s/%s, the latest of 4 runs in gpuspy-out\n"
          % ("gpuspy-out", latest), "and says which, in one line", p.stderr)
    p, j = report_json(tmp, "gpuspy-out")
    check(j is not None and len(j["processes"]) == 1 and "the latest of 4 runs" in p.stderr,
          "gpuspy report gpuspy-out: its latest run, said", p.stderr)
    p = run([gpuspy, "report", os.path.join(out, (names + ["none"])[0])], tmp)
    check(p.returncode == 0 and p.stderr == "", "a run directory named is read as it is",
          p.stderr)

    # The processes of those runs copied into one directory: said to mix.
    mixed = os.path.join(tmp, "mixed")
    os.makedirs(mixed)
    for n in names:
        for d in os.listdir(os.path.join(out, n)):
            if d != "run.json":
                shutil.copytree(os.path.join(out, n, d), os.path.join(mixed, d))
    p = run([gpuspy, "report", mixed], tmp)
    check(p.returncode == 0 and p.stderr == "gpuspy report: %s mixes 4 runs of 2 commands "
          "(growth, python3): their figures are added together; give each run its own "
          "directory\n" % mixed, "a directory of mixed runs is reported as such", p.stderr)

    # An explicit directory stays the run directory; a second run into it
    # is warned about.
    p = run([gpuspy, "run", "-o", "runs/a", "--", growth, "3", "1"], tmp)
    check(p.returncode == 0 and "already holds" not in p.stderr
          and any(RUN_ID.fullmatch(n) is None and n != "run.json"
                  for n in os.listdir(os.path.join(tmp, "runs/a"))),
          "-o DIR: process directories in DIR itself", p.stderr)
    p = run([gpuspy, "run", "-o", "runs/a", "--", growth, "3", "1"], tmp)
    check(p.stderr.startswith("gpuspy run: %s/runs/a already holds 1 process directory of an "
                              "earlier run" % tmp), "a second run into DIR: warned", p.stderr)
    p = run([gpuspy, "report", "runs/a"], tmp)
    check("runs/a mixes 2 runs of 1 command (growth)" in p.stderr,
          "and its report says it mixes two runs", p.stderr)

    # Plain LD_PRELOAD: a shell that allocates nothing, a process it forks
    # that allocates (a data-loader worker) and one it execs (a rank) all
    # land in the one run directory the shell chose; the shell's own
    # environment carries the run to them.
    plain = os.path.join(tmp, "plain")
    os.makedirs(plain)
    script = ("import ctypes, os, subprocess, sys\n"
              "pid = os.fork()\n"
              "if pid == 0:\n"
              "    ctypes.CDLL(%r).pyalloc_leak(1 << 20, 1)\n"
              "    os._exit(0)\n"
              "os.waitpid(pid, 0)\n"
              "subprocess.run([%r, '3', '1'], check=True)\n"
              "print(os.environ['GPUSPY_RUN_ID'])\n" % (pyalloc, growth))
    p = run(["python3", "-c", script], plain, LD_PRELOAD=lib)
    pout = os.path.join(plain, "gpuspy-out")
    names = runs_in(pout)
    procs = os.listdir(os.path.join(pout, names[0])) if names else []
    check(p.returncode == 0 and names == p.stdout.split()[-1:] and len(procs) == 2,
          "fork and exec children: one run directory, the parent's, two processes",
          (p.returncode, p.stderr, names, procs))
    check(os.path.islink(os.path.join(pout, "latest")), "plain LD_PRELOAD points latest too")
    run(["python3", "-c", script], plain, LD_PRELOAD=lib)
    check(len(runs_in(pout)) == 2, "a second plain LD_PRELOAD job: a second run directory",
          runs_in(pout))
    p = run([gpuspy, "diff", "--format", "json"], plain)
    check(p.returncode == 0 and p.stderr.count("\n") == 2
          and "the one before the latest" in p.stderr,
          "gpuspy diff without paths: the latest against the one before", p.stderr)
    p = run([gpuspy, "diff", "gpuspy-out/" + (runs_in(pout) + ["none"])[0]], plain)
    check(p.returncode == 0 and "the latest of 2 runs" in p.stderr,
          "gpuspy diff OLD: against the latest", p.stderr)
    check("GPUSPY_RUN" not in p.stdout, "the run's own variables are no setting to compare",
          p.stdout)
    # the first process of a run, which exported its run to its children
    # only, is found by its pid (gpuspy top PID, gpuspy snapshot PID)
    e = dict(env, LD_PRELOAD=lib)
    hang = subprocess.Popen([growth, "10", "1", "hang"], cwd=plain, env=e,
                            stdout=subprocess.PIPE, text=True)
    try:
        hang.stdout.readline()
        harness.wait_snapshot(pout, lambda doc: doc.get("pid") == hang.pid, proc=hang)
        p = run([gpuspy, "top", "--count", "1", str(hang.pid)], plain)
        check(p.returncode == 0 and "leak_step" in p.stdout,
              "gpuspy top PID: the root's directory in its own run", (p.stdout, p.stderr))
        p = run([gpuspy, "snapshot", str(hang.pid), "now"], plain)
        check(p.returncode == 0, "gpuspy snapshot PID finds it too", p.stderr)
    finally:
        hang.kill()
        hang.wait()

    # processes that never allocate create nothing, not even gpuspy-out
    quiet = os.path.join(tmp, "quiet")
    os.makedirs(quiet)
    run(["sh", "-c", "true; /bin/true"], quiet, LD_PRELOAD=lib)
    check(os.listdir(quiet) == [], "no allocation, no directory", os.listdir(quiet))

    # Problem 3: nothing recorded.
    p = run([gpuspy, "run", "-o", "out", "--", "python3", "-c", "print(1)"], tmp)
    check(p.returncode == 0 and p.stderr.count("\n") == 1 and p.stderr.startswith(
        "gpuspy run: no process of python3 allocated GPU memory through CUDA")
        and "libgpuspy(7), NOTHING RECORDED" in p.stderr, "gpuspy run: one line", p.stderr)
    p = run([gpuspy, "report", "out"], tmp)
    check(one_line(p) and "out: no process of this run allocated GPU memory through CUDA "
          "(run.json: python3 -c print(1), exited 0)" in p.stderr,
          "gpuspy report: what happened, not 'No such file'", p.stderr)
    p = run([gpuspy, "report", "nowhere"], tmp)
    check(one_line(p) and "NOTHING RECORDED" in p.stderr, "a missing directory: why, too",
          p.stderr)
    # a process directory without a report beside one with: listed, with why
    a = os.path.join(tmp, "runs/a")
    host = ([n for n in os.listdir(a) if n != "run.json"] + ["x-1"])[0].rsplit("-", 1)[0]
    lone = os.path.join(a, "%s-2147483645" % host)
    os.makedirs(lone)
    with open(os.path.join(lone, "history.jsonl"), "w") as f:
        f.write("")
    p, j = report_json(tmp, "runs/a")
    un = [u for u in (j or {}).get("unreported", []) if u["pid"] == 2147483645]
    check(len(un) == 1 and un[0]["empty"] is False, "a directory without a report: listed",
          j and j.get("unreported"))
    p = run([gpuspy, "report", "runs/a"], tmp)
    check("runs/a/%s-2147483645: pid 2147483645 on %s, no report:" % (host, host) in p.stdout
          and "holds no report.json, snapshot.json nor oom-N.json" in p.stdout,
          "and the text says why", p.stdout)

    # A latest that is not what gpuspy leaves: refused, one line.
    os.makedirs(out, exist_ok=True)
    lat = os.path.join(out, "latest")
    hostile = [("/etc", "points outside"), ("../mixed", "points outside"),
               ("20991231T000000Z-x-1", "not a run directory")]
    for target, what in hostile:
        remove(lat)
        os.symlink(target, lat)
        p = run([gpuspy, "report"], tmp)
        check(one_line(p) and what in p.stderr, "latest -> %s: refused" % target, p.stderr)
    remove(lat)
    open(os.path.join(out, "20991231T000000Z-x-2"), "w").close()
    os.symlink("20991231T000000Z-x-2", lat)
    p = run([gpuspy, "report"], tmp)
    check(one_line(p) and "not a run directory" in p.stderr, "latest -> a file: refused",
          p.stderr)
    p = run([gpuspy, "top", "--count", "1"], tmp)
    check(one_line(p) and "not a run directory" in p.stderr, "top refuses it too", p.stderr)
    remove(lat)
    p = run([gpuspy, "report", "--format", "json"], tmp)
    check(p.returncode == 0 and "the latest of 4 runs" in p.stderr,
          "no latest: the newest run by name", p.stderr)

sys.exit(harness.done())
