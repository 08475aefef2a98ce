#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""'gpuspy run': where the library is found, the environment the command
gets, the exit status passed on, signals, and the closing hint.

    test_run.py GPUSPY FAKE_LIBRARY

FAKE_LIBRARY is any harmless shared object (the real libgpuspy.so is not
under test here); it is copied to where gpuspy looks for libgpuspy.so.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

# The programs get SIGHUP's default action whatever this test inherited
# (nohup, or a CI runner, may start it with SIGHUP ignored; an ignored
# signal stays ignored across exec).
signal.signal(signal.SIGHUP, signal.SIG_DFL)


def env_with(**kw):
    env = dict(os.environ)
    for k in ("LD_PRELOAD", "GPUSPY_OUTPUT_DIR", "GPUSPY_LIBRARY"):
        env.pop(k, None)
    for k, v in kw.items():
        if v is not None:
            env[k] = v
    return env


def run(cmd, cwd=None, **kw):
    return subprocess.run(cmd, cwd=cwd, env=env_with(**kw), capture_output=True,
                          timeout=30)


def main():
    gpuspy, fake = os.path.abspath(sys.argv[1]), os.path.realpath(sys.argv[2])
    show = ["sh", "-c", 'printf "%s\\n%s\\n" "$LD_PRELOAD" "$GPUSPY_OUTPUT_DIR"']

    with tempfile.TemporaryDirectory(prefix="gpuspy-run-") as tmp:
        tmp = os.path.realpath(tmp)
        # a second harmless library, to be kept after ours in LD_PRELOAD
        other = os.path.join(tmp, "other.so")
        shutil.copy(fake, other)

        # GPUSPY_LIBRARY, relative, is made absolute; -o DIR too
        p = run([gpuspy, "run", "-o", "out", "--"] + show, cwd=tmp,
                GPUSPY_LIBRARY=os.path.relpath(fake, tmp))
        lines = p.stdout.decode().splitlines()
        check(p.returncode == 0 and lines == [fake, os.path.join(tmp, "out")],
              "GPUSPY_LIBRARY and -o, made absolute", repr((p.returncode, lines, p.stderr)))
        # nothing allocated (the fake library records nothing): one line
        # saying so and where the man page explains why
        check(p.stderr.count(b"\n") == 1 and p.stderr.startswith(
            b"gpuspy run: no process of sh allocated GPU memory through CUDA")
            and b"libgpuspy(7), NOTHING RECORDED" in p.stderr,
            "one line when nothing was recorded", repr(p.stderr))
        check(os.path.isfile(os.path.join(tmp, "out", "run.json")),
              "run.json even when nothing was recorded")

        # prepended to an existing LD_PRELOAD
        p = run([gpuspy, "run", "--"] + show, cwd=tmp, GPUSPY_LIBRARY=fake, LD_PRELOAD=other)
        lines = p.stdout.decode().splitlines()
        check(lines[:1] == [fake + ":" + other], "prepended to LD_PRELOAD", repr(lines))
        # by default, no GPUSPY_OUTPUT_DIR: a run directory of its own
        # under ./gpuspy-out, absolute, which "latest" points at
        check(lines[1:2] == [""], "no GPUSPY_OUTPUT_DIR by default", repr(lines))
        p = run([gpuspy, "run", "--", "sh", "-c", 'echo "$GPUSPY_RUN_DIR"; echo "$GPUSPY_RUN_ID"'],
                cwd=tmp, GPUSPY_LIBRARY=fake)
        rdir, rid = (p.stdout.decode().splitlines() + ["", ""])[:2]
        check(rdir == os.path.join(tmp, "gpuspy-out", rid)
              and re.fullmatch(r"\d{8}T\d{6}Z-sh-[1-9]\d*", rid) and os.path.isdir(rdir),
              "default: ./gpuspy-out/<time>-<command>-<pid>", repr((rdir, rid)))
        check(os.readlink(os.path.join(tmp, "gpuspy-out", "latest")) == rid,
              "gpuspy-out/latest points at the run", repr(rid))

        # not added twice
        p = run([gpuspy, "run"] + show, cwd=tmp, GPUSPY_LIBRARY=fake,
                LD_PRELOAD=other + " " + fake)
        lines = p.stdout.decode().splitlines()
        check(lines[:1] == [other + " " + fake], "not duplicated in LD_PRELOAD", repr(lines))

        # GPUSPY_OUTPUT_DIR from the environment, made absolute
        p = run([gpuspy, "run"] + show, cwd=tmp, GPUSPY_LIBRARY=fake,
                GPUSPY_OUTPUT_DIR="./runs/a")
        lines = p.stdout.decode().splitlines()
        check(lines[1:2] == [os.path.join(tmp, "runs/a")], "GPUSPY_OUTPUT_DIR absolute",
              repr(lines))
        # -o wins over the environment
        p = run([gpuspy, "run", "--output", "/x/y"] + show, cwd=tmp, GPUSPY_LIBRARY=fake,
                GPUSPY_OUTPUT_DIR="elsewhere")
        lines = p.stdout.decode().splitlines()
        check(lines[1:2] == ["/x/y"], "-o over GPUSPY_OUTPUT_DIR", repr(lines))

        # without "--", the command's options stay the command's
        p = run([gpuspy, "run", "sh", "-c", "echo $0 $1", "-o", "x"], cwd=tmp,
                GPUSPY_LIBRARY=fake)
        check(p.stdout == b"-o x\n", "options after CMD belong to CMD", repr(p.stdout))

        # the exit status is passed on
        for code in (0, 1, 3, 255):
            p = run([gpuspy, "run", "--", "sh", "-c", "exit %d" % code], cwd=tmp,
                    GPUSPY_LIBRARY=fake)
            check(p.returncode == code, "exit %d passed on" % code, repr(p.returncode))
        for sig in (signal.SIGTERM, signal.SIGKILL, signal.SIGSEGV):
            p = run([gpuspy, "run", "--", "sh", "-c", "kill -%d $$" % sig], cwd=tmp,
                    GPUSPY_LIBRARY=fake)
            check(p.returncode == 128 + sig, "killed by %s gives %d" % (sig.name, 128 + sig),
                  repr(p.returncode))

        # exec failure: 127 and one line
        p = run([gpuspy, "run", "--", "/nonexistent/program"], cwd=tmp, GPUSPY_LIBRARY=fake)
        check(p.returncode == 127 and p.stderr.count(b"\n") == 1
              and b"/nonexistent/program" in p.stderr, "exec failure: 127",
              repr((p.returncode, p.stderr)))

        # found but not executable: 126, as a shell gives; not on PATH: 127
        noexec = os.path.join(tmp, "noexec")
        with open(noexec, "w") as f:
            f.write("#!/bin/sh\necho hi\n")
        os.chmod(noexec, 0o644)
        shell = run(["sh", "-c", '"$0"', noexec], cwd=tmp).returncode
        p = run([gpuspy, "run", "--", noexec], cwd=tmp, GPUSPY_LIBRARY=fake)
        check(p.returncode == 126 == shell and p.stderr.count(b"\n") == 1
              and b"noexec: Permission denied" in p.stderr,
              "not executable: 126, as sh gives (%d)" % shell, repr((p.returncode, p.stderr)))
        p = run([gpuspy, "run", "--", tmp], cwd=tmp, GPUSPY_LIBRARY=fake)
        check(p.returncode == 126, "a directory: 126", repr((p.returncode, p.stderr)))
        p = run([gpuspy, "run", "--", "gpuspy-no-such-command"], cwd=tmp, GPUSPY_LIBRARY=fake)
        check(p.returncode == 127, "not on PATH: 127", repr((p.returncode, p.stderr)))

        # usage errors and no library: 2, one line
        for what, args, kw in (
                ("no command", ["run"], {"GPUSPY_LIBRARY": fake}),
                ("only --", ["run", "--"], {"GPUSPY_LIBRARY": fake}),
                ("unknown option", ["run", "--bogus", "true"], {"GPUSPY_LIBRARY": fake}),
                ("-o without a value", ["run", "-o"], {"GPUSPY_LIBRARY": fake}),
                ("GPUSPY_LIBRARY missing", ["run", "true"],
                 {"GPUSPY_LIBRARY": "/nonexistent/libgpuspy.so"}),
                ("unknown command", ["frobnicate"], {}),
                ("no command at all", [], {})):
            p = run([gpuspy] + args, cwd=tmp, **kw)
            lines = p.stderr.decode().splitlines()
            check(p.returncode == 2 and (len(lines) == 1 or not args), what + ": status 2",
                  repr((p.returncode, p.stderr)))

        # the lookup without GPUSPY_LIBRARY: next to the executable ...
        bindir = os.path.join(tmp, "inst", "bin")
        os.makedirs(bindir)
        shutil.copy(gpuspy, bindir)
        shutil.copy(fake, os.path.join(bindir, "libgpuspy.so"))
        p = run([os.path.join(bindir, "gpuspy"), "run"] + show, cwd=tmp)
        lines = p.stdout.decode().splitlines()
        check(lines[:1] == [os.path.join(bindir, "libgpuspy.so")], "found next to gpuspy",
              repr((lines, p.stderr)))
        # ... then in the build tree's ../preload ...
        build = os.path.join(tmp, "build", "src")
        os.makedirs(os.path.join(build, "cli"))
        os.makedirs(os.path.join(build, "preload"))
        shutil.copy(gpuspy, os.path.join(build, "cli"))
        shutil.copy(fake, os.path.join(build, "preload", "libgpuspy.so"))
        p = run([os.path.join(build, "cli", "gpuspy"), "run"] + show, cwd=tmp)
        lines = p.stdout.decode().splitlines()
        check(lines[:1] == [os.path.join(build, "preload", "libgpuspy.so")],
              "found in ../preload", repr((lines, p.stderr)))
        # ... and when nowhere: 2 and one line (unless installed on this machine)
        lone = os.path.join(tmp, "lone")
        os.makedirs(lone)
        shutil.copy(gpuspy, lone)
        p = run([os.path.join(lone, "gpuspy"), "run", "true"], cwd=tmp)
        if p.returncode == 0:
            print("skip not found: an installed libgpuspy.so was found")
        else:
            check(p.returncode == 2 and p.stderr.count(b"\n") == 1
                  and b"libgpuspy.so" in p.stderr, "not found: status 2, one line",
                  repr((p.returncode, p.stderr)))

        # SIGINT and SIGQUIT: ignored by gpuspy, default in the command
        p = run([gpuspy, "run", "--", "cat", "/proc/self/status"], cwd=tmp,
                GPUSPY_LIBRARY=fake)
        direct = run(["cat", "/proc/self/status"], cwd=tmp)

        def ignored(out):
            line = [l for l in out.decode().splitlines() if l.startswith("SigIgn:")]
            mask = int(line[0].split()[1], 16) if line else -1
            return mask & ((1 << (signal.SIGINT - 1)) | (1 << (signal.SIGQUIT - 1)))

        # compared with the same command started directly, since the test
        # itself may run with SIGINT ignored (a background job)
        check(ignored(p.stdout) == ignored(direct.stdout) >= 0,
              "the command gets SIGINT/SIGQUIT as gpuspy got them",
              repr((ignored(p.stdout), ignored(direct.stdout))))

        ready, go = os.path.join(tmp, "ready"), os.path.join(tmp, "go")
        script = ('trap "exit 7" TERM; touch %s; '
                  'while [ ! -e %s ]; do sleep 0.05; done; exit 5' % (ready, go))
        proc = subprocess.Popen([gpuspy, "run", "--", "sh", "-c", script], cwd=tmp,
                                env=env_with(GPUSPY_LIBRARY=fake))
        harness.wait_for(lambda: os.path.exists(ready), 10, proc)
        proc.send_signal(signal.SIGINT)
        proc.send_signal(signal.SIGQUIT)
        time.sleep(0.3)  # not a wait: the signals must do nothing
        check(proc.poll() is None, "gpuspy survives SIGINT and SIGQUIT sent to it alone")
        open(go, "w").close()
        check(proc.wait(timeout=30) == 5, "then the command's status", repr(proc.returncode))

        # SIGTERM and SIGHUP are forwarded to the command
        for sig, want in ((signal.SIGTERM, 7), (signal.SIGHUP, 128 + signal.SIGHUP)):
            os.unlink(ready)
            os.unlink(go)
            proc = subprocess.Popen([gpuspy, "run", "--", "sh", "-c", script], cwd=tmp,
                                    env=env_with(GPUSPY_LIBRARY=fake))
            harness.wait_for(lambda: os.path.exists(ready), 10, proc)
            proc.send_signal(sig)
            try:
                code = proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                code = None
            open(go, "w").close()
            check(code == want, "%s forwarded: status %s" % (sig.name, want), repr(code))

        # after a command that left reports, one line points to them
        out = os.path.join(tmp, "with-reports")
        p = run([gpuspy, "run", "-o", out, "--", "sh", "-c",
                 'mkdir -p "$GPUSPY_OUTPUT_DIR/h-1" && echo {} > "$GPUSPY_OUTPUT_DIR/h-1/report.json"'],
                cwd=tmp, GPUSPY_LIBRARY=fake)
        err = p.stderr.decode()
        check(p.returncode == 0 and err == "gpuspy: run directory %s \u2014 see: gpuspy report %s\n"
              % (out, out), "the run directory is shown", repr(err))

        # --prometheus ADDR: checked, and handed to every process as
        # GPUSPY_PROMETHEUS (over one in the environment)
        p = run([gpuspy, "run", "--prometheus", "[::1]:0", "--", "sh", "-c",
                 'echo "$GPUSPY_PROMETHEUS"'], cwd=tmp, GPUSPY_LIBRARY=fake,
                GPUSPY_PROMETHEUS="9999")
        check(p.returncode == 0 and p.stdout == b"[::1]:0\n", "--prometheus sets GPUSPY_PROMETHEUS",
              repr((p.returncode, p.stdout, p.stderr)))
        for bad in ("localhost:9464", ":9464", "70000", ""):
            p = run([gpuspy, "run", "--prometheus", bad, "--", "true"], cwd=tmp,
                    GPUSPY_LIBRARY=fake)
            check(p.returncode == 2 and p.stderr.count(b"\n") == 1 and b"--prometheus" in p.stderr,
                  "--prometheus %r: one line, status 2" % bad, repr((p.returncode, p.stderr)))

        # --help and --version
        p = run([gpuspy, "run", "--help"])
        check(p.returncode == 0 and b"Usage: gpuspy run" in p.stdout, "run --help")
        p = run([gpuspy, "--version"])
        check(p.returncode == 0 and p.stdout.startswith(b"gpuspy ") and
              p.stdout.count(b"\n") == 1, "--version", repr(p.stdout))
    return harness.done()


if __name__ == "__main__":
    sys.exit(main())
