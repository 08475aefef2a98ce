#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Killed and running jobs: 'gpuspy run' of a command killed by a signal
(one line on stderr, 128+N, run.json), and 'gpuspy report' of processes
that did not exit (killed by signal N, T s before the end; running; did
not exit), never under an "at exit" heading; a clean exit as before;
corrupted run.json files refused with one line naming the file.

    test_killed.py GPUSPY LIBGPUSPY FAKE_DIR GROWTH_PROGRAM
"""
import glob
import json
import os
import re
import signal
import socket
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

gpuspy, lib, fake, prog = (os.path.abspath(a) for a in sys.argv[1:5])
env = harness.clean_env(fake, LD_PRELOAD=None, GPUSPY_INTERVAL="100ms", GPUSPY_QUIET="1",
                        GPUSPY_LIBRARY=lib)


report = harness.Cli(gpuspy, "report", timeout=30)


def report_json(path):
    p = report("--format", "json", path)
    return json.loads(p.stdout) if p.returncode == 0 else None


def no_at_exit(text):
    return re.search(r"at exit", text, re.IGNORECASE) is None


def halfway(snap):
    """Whether SNAP holds the hanging program's halfway state: 20 steps of
    1 MiB at leak_step."""
    return [s["live_bytes"] for s in snap.get("sites", ())
            if any(f.get("symbol") == "leak_step" for f in s.get("frames", ()))] == [20 << 20]


def process_dir(out, proc):
    """The process directory of the one process under OUT, once its
    snapshot.json holds the halfway state (None when PROC ended first, or
    after 30 s): waited for as the snapshot thread writes it, not for a
    time that a loaded machine may not keep."""
    found = harness.wait_snapshot(out, halfway, proc=proc)
    return found[0] if found else None


def start_hanging(out, under_run):
    """The growth program, stopped halfway with its snapshots written,
    directly under LD_PRELOAD or under 'gpuspy run'; (Popen, pid of the
    program, its process directory)."""
    cmd = [prog, "40", "20", "hang"]
    if under_run:
        p = subprocess.Popen([gpuspy, "run", "-o", out, "--"] + cmd, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    else:
        p = subprocess.Popen(cmd, env=dict(env, LD_PRELOAD=lib, GPUSPY_OUTPUT_DIR=out),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    p.stdout.readline()  # "halfway"
    d = process_dir(out, p)
    pid = int(d.rsplit("-", 1)[1]) if d else None
    return p, pid, d


def killed_run(sig):
    """'gpuspy run' of a program that the test kills with SIG mid-run."""
    out = harness.tempdir()
    p, pid, d = start_hanging(out, True)
    check(d is not None, "%s: the program wrote a snapshot" % sig.name)
    if d is None:
        p.kill()
        p.wait()
        return
    os.kill(pid, sig)  # the command, not gpuspy run
    _, err = p.communicate(timeout=30)
    lines = err.splitlines()
    want = ("gpuspy run: %s was killed by signal %d (%s); the reports are partial: "
            "the last snapshot of each process" % (prog, sig, sig.name))
    check(p.returncode == 128 + sig, "%s: gpuspy run exits %d" % (sig.name, 128 + sig),
          p.returncode)
    check([l for l in lines if l.startswith("gpuspy run:")] == [want],
          "%s: one line on stderr says so" % sig.name, err)

    run = json.load(open(os.path.join(out, "run.json")))
    check(run.get("format") == "gpuspy-run/1" and run.get("signal") == sig
          and "exit_status" not in run and run.get("pid") == pid
          and run.get("command") == [prog, "40", "20", "hang"]
          and run["start_time"] <= run["end_time"]
          and run.get("host") == socket.gethostname(),
          "%s: run.json records signal %d" % (sig.name, sig), run)
    check(not [f for f in os.listdir(out) if f.startswith(".")], "no temporary left",
          os.listdir(out))

    r = report(out)
    m = re.search(r"killed by signal %d \(%s\): at the last snapshot, ([0-9.]+) s before "
                  r"the end \(read snapshot\.json" % (sig, sig.name), r.stdout)
    check(r.returncode == 0 and m is not None,
          "%s: report says killed by signal %d, at the last snapshot, T s before the end"
          % (sig.name, sig), r.stdout + r.stderr)
    check(no_at_exit(r.stdout), "%s: report never says 'at exit'" % sig.name, r.stdout)
    check("LIVE AT THE LAST SNAPSHOT" in r.stdout and "live at the end:" in r.stdout
          and "did not exit:     1 process (1 killed by signal %d (%s))" % (sig, sig.name)
          in r.stdout, "%s: headings and summary at the last snapshot" % sig.name, r.stdout)
    j = report_json(out)
    jp = j["processes"][0] if j else {}
    check(jp.get("state") == "killed" and jp.get("signal") == sig
          and abs(jp.get("end_time", 0) - run["end_time"]) < 1e-3
          and jp.get("last_snapshot_time", 1e12) <= jp.get("end_time", 0),
          "%s: JSON state, signal, end_time, last_snapshot_time" % sig.name, jp)
    if m and jp.get("end_time"):
        t = jp["end_time"] - jp["last_snapshot_time"]
        check(abs(float(m.group(1)) - t) < 0.06, "%s: T = the run's end - the last snapshot"
              % sig.name, (m.group(1), t))
    # the process directory alone finds run.json one level up
    r = report(d)
    check(r.returncode == 0 and "killed by signal %d" % sig in r.stdout,
          "%s: a process directory alone is read with its run's run.json" % sig.name,
          r.stdout + r.stderr)
    return out


def main():
    tmp = harness.tempdir()
    host = socket.gethostname()

    killed = killed_run(signal.SIGKILL)
    killed_run(signal.SIGTERM)

    # killed without leaving reports: the line says only that, then that
    # nothing was recorded; run.json says how the command ended
    out = os.path.join(tmp, "none")
    p = subprocess.run([gpuspy, "run", "-o", out, "--", "sh", "-c", "kill -9 $$"], env=env,
                       capture_output=True, text=True, timeout=60)
    lines = p.stderr.splitlines()
    rec = os.path.join(out, "run.json")
    check(p.returncode == 137 and len(lines) == 2
          and lines[0] == "gpuspy run: sh was killed by signal 9 (SIGKILL)"
          and lines[1].startswith("gpuspy run: no process of sh allocated GPU memory")
          and os.path.exists(rec) and json.load(open(rec)).get("signal") == 9,
          "killed without reports: the kill, nothing recorded, run.json",
          (p.returncode, p.stderr, os.path.exists(rec)))

    # a clean exit under gpuspy run: as before, with run.json saying so
    out = os.path.join(tmp, "clean")
    p = subprocess.run([gpuspy, "run", "-o", out, "--", prog, "5", "10"], env=env,
                       capture_output=True, text=True, timeout=60)
    run = json.load(open(os.path.join(out, "run.json")))
    check(p.returncode == 0 and "was killed" not in p.stderr and run.get("exit_status") == 0
          and "signal" not in run, "a clean exit: status 0, run.json exit_status 0",
          (p.returncode, p.stderr, run))
    r = report(out)
    check(r.returncode == 0 and "\nLEAKED AT EXIT (" in r.stdout
          and "leaked at exit:   " in r.stdout and "did not exit" not in r.stdout
          and "snapshot" not in r.stdout, "a clean exit: reported at exit", r.stdout)
    j = report_json(out)
    check(j and "state" not in j["processes"][0] and "unreported" not in j,
          "a clean exit: no state in the JSON", j and j["processes"][0])

    # a process still running, without gpuspy run: running, then killed
    out = os.path.join(tmp, "plain")
    p, pid, d = start_hanging(out, False)
    r = report(out)
    check(r.returncode == 0 and re.search(
        r"running: at the last snapshot, \d\d:\d\d:\d\d UTC, [0-9.]+ s ago", r.stdout)
        and no_at_exit(r.stdout) and "1 running" in r.stdout,
        "a running process is reported running", r.stdout + r.stderr)
    j = report_json(out)
    check(j and j["processes"][0].get("state") == "running"
          and "signal" not in j["processes"][0] and "end_time" not in j["processes"][0],
          "JSON: state running", j and j["processes"][0])
    p.kill()
    p.wait()
    r = report(out)
    check(r.returncode == 0 and re.search(
        r"did not exit \(no report\.json\): at the last snapshot, \d\d:\d\d:\d\d UTC "
        r"\(read snapshot\.json", r.stdout) and no_at_exit(r.stdout),
        "killed without gpuspy run: did not exit, at the last snapshot, HH:MM:SS",
        r.stdout + r.stderr)
    j = report_json(out)
    check(j and j["processes"][0].get("state") == "unknown", "JSON: state unknown",
          j and j["processes"][0])

    # under gpuspy run, while it runs: running (an older run.json is not its)
    out = os.path.join(tmp, "under-run")
    os.makedirs(out)
    with open(os.path.join(killed, "run.json")) as f:
        stale = json.load(f)
    with open(os.path.join(out, "run.json"), "w") as f:
        json.dump(stale, f)
    p, pid, d = start_hanging(out, True)
    r = report(out)
    check(r.returncode == 0 and "running: at the last snapshot" in r.stdout
          and "killed" not in r.stdout and no_at_exit(r.stdout),
          "running under gpuspy run, beside an earlier run's run.json", r.stdout + r.stderr)
    os.kill(pid, signal.SIGKILL)
    p.communicate(timeout=30)

    # pid reuse: the pid is alive (this test) but started at another time
    snap = json.load(open(os.path.join(d, "snapshot.json")))
    for name, edit, want in (
            ("another start time", lambda s: s.update(start_time=s["start_time"] - 1000),
             "did not exit (no report.json)"),
            ("no start time", lambda s: s.pop("start_time"),
             "may still be running (pid %d is alive on this host" % os.getpid())):
        out = os.path.join(tmp, "reuse-" + name.replace(" ", "-"))
        pd = os.path.join(out, "%s-%d" % (host, os.getpid()))
        os.makedirs(pd)
        s = dict(snap, pid=os.getpid(), host=host)
        edit(s)
        json.dump(s, open(os.path.join(pd, "snapshot.json"), "w"))
        r = report(out)
        check(r.returncode == 0 and want in r.stdout and "running:" not in r.stdout,
              "pid alive, " + name + ": " + want, r.stdout + r.stderr)

    # a rank killed before its first snapshot: an empty process directory
    empty = os.path.join(killed, "%s-%d" % (host, 2147483646))
    os.makedirs(empty)
    run = json.load(open(os.path.join(killed, "run.json")))
    os.utime(empty, (run["end_time"], run["end_time"]))
    r = report(killed)
    check(r.returncode == 0 and "1 more process wrote no report" in r.stdout and
          "%s: pid 2147483646 on %s, no report: killed by signal 9 (SIGKILL) before its "
          "first snapshot (its directory is empty)" % (empty, host) in r.stdout,
          "an empty process directory is listed, killed by signal 9", r.stdout + r.stderr)
    j = report_json(killed)
    check(j and j.get("unreported") == [{"path": empty, "host": host, "pid": 2147483646,
                                         "empty": True, "state": "killed", "signal": 9}],
          "JSON: unreported", j and j.get("unreported"))
    os.utime(empty, (run["start_time"] - 100, run["start_time"] - 100))
    r = report(killed)
    check("no report: did not exit, killed or crashed before its first snapshot" in r.stdout,
          "an empty directory of an earlier run: did not exit", r.stdout)
    only = os.path.join(tmp, "only-empty")
    os.makedirs(os.path.join(only, "%s-%d" % (host, 2147483646)))
    r = report(only)
    check(r.returncode == 2 and r.stderr.count("\n") == 1 and "1 process directory is empty"
          in r.stderr, "only empty directories: status 2, one line saying so", r.stderr)

    # corrupted run.json: status 2, one line naming the file
    good = json.load(open(os.path.join(killed, "run.json")))

    def edited(**kw):
        d = dict(good)
        for k, v in kw.items():
            if v is None:
                d.pop(k, None)
            else:
                d[k] = v
        return json.dumps(d)

    bad = [
        ("empty", ""),
        ("not JSON", "{\"format\": "),
        ("an array", "[]"),
        ("another format", edited(format="gpuspy-run/2")),
        ("a process report", edited(format="gpuspy-process/1")),
        ("no format", edited(format=None)),
        ("no command", edited(command=None)),
        ("an empty command", edited(command=[])),
        ("a command of numbers", edited(command=[1, 2])),
        ("a command string", edited(command="python3 train.py")),
        ("no host", edited(host=None)),
        ("an empty host", edited(host="")),
        ("pid 0", edited(pid=0)),
        ("a pid string", edited(pid="4242")),
        ("a pid too large", edited(pid=2 ** 40)),
        ("no start_time", edited(start_time=None)),
        ("a negative start_time", edited(start_time=-5)),
        ("end before start", edited(end_time=good["start_time"] - 10)),
        ("a time string", edited(end_time="now")),
        ("a time beyond any run", edited(start_time=1e300, end_time=1e301)),
        ("both exit_status and signal", edited(exit_status=0)),
        ("neither exit_status nor signal", edited(signal=None)),
        ("signal 0", edited(signal=0)),
        ("signal 65", edited(signal=65)),
        ("a signal string", edited(signal="SIGKILL")),
        ("exit_status 256", edited(signal=None, exit_status=256)),
        ("a version number", edited(gpuspy_version=1)),
        ("a duplicate key", edited()[:-1] + ", \"signal\": 15}"),
        ("a NUL byte", edited()[:-1] + ", \"x\": \"\\u0000\u0001\"" + "\x00}"),
    ]
    for name, text in bad:
        d = os.path.join(tmp, "bad")
        if os.path.isdir(d):
            subprocess.run(["rm", "-rf", d], check=True)
        os.makedirs(os.path.join(d, "%s-%d" % (host, 7)))
        with open(os.path.join(d, "%s-%d" % (host, 7), "snapshot.json"), "w") as f:
            json.dump(snap, f)
        f = os.path.join(d, "run.json")
        with open(f, "w") as fh:
            fh.write(text)
        for what, path in (("run directory", d), ("process directory",
                                                   os.path.join(d, "%s-%d" % (host, 7)))):
            r = report(path)
            check(r.returncode == 2 and r.stderr.count("\n") == 1 and r.stdout == ""
                  and r.stderr.startswith("gpuspy report: " + f + ": "),
                  "run.json %s (%s): status 2, one line naming the file" % (name, what),
                  (r.returncode, r.stderr))
    # not a regular file: a directory, a FIFO, a dangling link
    for name, make in (("a directory", os.mkdir), ("a FIFO", os.mkfifo),
                       ("a dangling link", lambda f: os.symlink("/nonexistent/run.json", f))):
        os.unlink(f) if os.path.lexists(f) and not os.path.isdir(f) else None
        if os.path.isdir(f):
            os.rmdir(f)
        make(f)
        r = report(d)
        check(r.returncode == 2 and r.stderr.count("\n") == 1 and f in r.stderr,
              "run.json %s: status 2, one line naming the file" % name, r.stderr)
    stale_temporaries(tmp)
    subprocess.run(["rm", "-rf", tmp], check=True)
    return harness.done()


def stale_temporaries(tmp):
    """What a process killed mid-write leaves (.snapshot.json.tmp) is
    removed by 'gpuspy run' once the command ended; a process still
    running keeps its own, and a link by such a name is not followed."""
    run_dir = os.path.join(tmp, "stale")
    victim = os.path.join(tmp, "victim")
    open(victim, "w").write("kept\n")
    # the one left running must not hold the pipes gpuspy run's output is
    # read from
    script = ('"$0" 40 20 hang >/dev/null 2>&1 & a=$!; '
              '"$0" 40 20 hang >/dev/null 2>&1 & b=$!; sleep 1; '
              'd="$1/$(hostname)"; : > "$d-$a/.snapshot.json.tmp"; '
              ': > "$d-$b/.snapshot.json.tmp"; ln -s "$2" "$d-$a/.link.tmp"; '
              'kill -9 $a; wait $a; echo $b')
    r = subprocess.run([gpuspy, "run", "-o", run_dir, "--", "sh", "-c", script, prog, run_dir,
                        victim], env=env, capture_output=True, text=True, timeout=60)
    left = r.stdout.split()[-1] if r.stdout.split() else None
    try:
        tmps = sorted(os.path.relpath(p, run_dir)
                      for p in glob.glob(os.path.join(run_dir, "*", ".*.tmp")))
        want = sorted([f"{socket.gethostname()}-{left}/.snapshot.json.tmp",
                       next((os.path.relpath(p, run_dir) for p in
                             glob.glob(os.path.join(run_dir, "*", ".link.tmp"))), "?")])
        check(r.returncode == 0 and tmps == want and open(victim).read() == "kept\n",
              "gpuspy run: a killed process's temporary removed, a running one's kept, a "
              "link left as it is", (r.returncode, tmps, want, r.stderr[-300:]))
    finally:
        if left and left.isdigit():
            os.kill(int(left), signal.SIGKILL)


if __name__ == "__main__":
    sys.exit(main())
