#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What gpuspy says: unknown options, the report.txt path the library
names, singular and plural, ASCII when the locale is not UTF-8, colour
only where asked for, and one style of error line.

    test_messages.py GPUSPY LIBGPUSPY FAKE_DIR LEAKER FIXTURES

LEAKER (leaker.c) runs on the fake CUDA libraries in FAKE_DIR.
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402


def clean_env(**kw):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GPUSPY_", "LC_")) and k not in ("LD_PRELOAD", "LANG",
                                                                 "NO_COLOR")}
    env.update(kw)
    return env


def main():
    gpuspy, lib, fake, leaker, fixtures = (os.path.abspath(a) for a in sys.argv[1:6])

    # in a directory of its own: 'gpuspy run' without -o writes ./gpuspy-out
    work = harness.tempdir()

    def cli(*args, **env):
        return subprocess.run([gpuspy] + list(args), capture_output=True, cwd=work,
                              env=clean_env(**env), timeout=60)

    # an option before any command is an option, not a command
    p = cli("--frob")
    err = p.stderr.decode()
    check(p.returncode == 2 and err.startswith("gpuspy: unknown option '--frob'") and
          err.count("\n") == 1, "gpuspy --frob: unknown option, status 2", repr((p.returncode,
                                                                               err)))
    p = cli("frob")
    check(p.returncode == 2 and p.stderr.startswith(b"gpuspy: unknown command 'frob'"),
          "gpuspy frob: unknown command", repr(p.stderr))

    # every glyph beyond ASCII has an ASCII spelling when the locale's
    # character set is not UTF-8
    fx = lambda name: os.path.join(fixtures, name)
    outputs = [("report python", ["report", fx("python")]),
               ("report oom", ["report", fx("oom")]),
               ("report pools", ["report", fx("pools")]),
               ("report growth", ["report", fx("growth")]),
               ("diff", ["diff", fx("process"), fx("oom")]),
               ("diff settings", ["diff", fx("python"), fx("growth")]),
               ("merge", ["merge", fx("ranks")]),
               ("top", ["top", "--count", "2", "--interval", "0.05", fx("growth")])]
    wide = set()
    for what, args in outputs:
        u = cli(*args, LC_ALL="C.UTF-8")
        c = cli(*args, LC_ALL="C")
        wide |= {ch for ch in u.stdout.decode() if ord(ch) > 127}
        check(c.returncode == u.returncode == 0 and c.stdout.isascii() and c.stderr.isascii(),
              "LC_ALL=C: %s is ASCII" % what,
              repr((c.returncode, [l for l in c.stdout.decode("utf-8", "replace").splitlines()
                                   if not l.isascii()][:3])))
        p = cli(*args, LANG="C")
        check(p.stdout.isascii(), "LANG=C: %s is ASCII" % what)
    check({"\u2026", "\u2192", "\u2190", "\u2588"} <= wide,
          "in UTF-8 the same outputs use the glyphs (%s)" % "".join(sorted(wide)))

    with tempfile.TemporaryDirectory(prefix="gpuspy-msg-") as tmp:
        out = os.path.join(tmp, "out")
        # one allocation leaked: singular, in the summary and in report.txt
        p = subprocess.run([leaker, "1", "0", "4"], capture_output=True, timeout=60,
                           env=clean_env(LD_PRELOAD=lib, LD_LIBRARY_PATH=fake,
                                         GPUSPY_OUTPUT_DIR=out))
        err = p.stderr.decode()
        check(p.returncode == 0 and "4.0 KiB in 1 allocation of GPU memory still live" in err,
              "the exit summary: '1 allocation'", repr(err))
        texts = glob.glob(os.path.join(out, "*", "report.txt"))
        text = open(texts[0]).read() if texts else ""
        check("in 1 allocation (GPU memory)" in text and "in 1 allocations" not in text and
              "0 allocations still live" in text, "report.txt: '1 allocation', '0 allocations'",
              text[:300])

        # the path the summary names is the text report: read as its directory
        named = re.search(r"report: (\S+)", err)
        txt = named.group(1) if named else ""
        p = cli("report", txt)
        q = cli("report", os.path.dirname(txt))
        # the next-command hints repeat the PATH as given
        same = p.stdout.replace(txt.encode(), os.path.dirname(txt).encode()) == q.stdout
        check(p.returncode == 0 and same and p.stderr == b"",
              "report of the report.txt the library named: its directory's report",
              repr((p.returncode, p.stderr)))
        # gpuspy run's closing line, in ASCII too
        p = cli("run", "-o", os.path.join(tmp, "run"), "--", leaker, "1", "0", "4",
                LC_ALL="C", GPUSPY_LIBRARY=lib, LD_LIBRARY_PATH=fake)
        check(p.returncode == 0 and b"see: gpuspy report" in p.stderr and p.stderr.isascii(),
              "LC_ALL=C: gpuspy run's lines are ASCII", repr(p.stderr))
        p = cli("top", "--count", "1", txt)
        check(p.returncode == 0 and ("%s: 1 process" % os.path.dirname(txt)).encode() in p.stdout,
              "top of report.txt: its directory", repr((p.returncode, p.stdout[:200], p.stderr)))
        p = cli("merge", txt)
        check(p.returncode == 0, "merge of report.txt too", repr((p.returncode, p.stderr)))

        # one style of error line: "gpuspy COMMAND: FILE: what"
        garbage = os.path.join(tmp, "garbage", "h-1")
        os.makedirs(garbage)
        bad = os.path.join(garbage, "report.json")
        with open(bad, "w") as f:
            f.write("not JSON")
        missing = os.path.join(tmp, "missing")
        noexec = os.path.join(tmp, "noexec")
        with open(noexec, "w") as f:
            f.write("#!/bin/sh\n")
        for cmd, args, file, env in (
                ("report", [missing], missing, {}),
                ("report", [bad], bad, {}),
                ("merge", [os.path.dirname(garbage)], bad, {}),
                ("diff", [bad, fx("process")], bad, {}),
                ("top", [os.path.dirname(garbage)], bad, {}),
                ("report", ["--format", "csv", bad], bad, {}),
                ("run", ["--", noexec], noexec, {"GPUSPY_LIBRARY": lib}),
                ("run", ["--", "true"], missing, {"GPUSPY_LIBRARY": missing}),
                ("snapshot", ["abc"], None, {})):
            p = cli(cmd, *args, **env)
            err = p.stderr.decode()
            want = "gpuspy %s: " % cmd + (file + ": " if file else "")
            check(p.returncode in (2, 126) and err.count("\n") == 1 and err.startswith(want),
                  "error line of %s %s: %r" % (cmd, args[-1], want), repr(err))
    return harness.done()


if __name__ == "__main__":
    sys.exit(main())
