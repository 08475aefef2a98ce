#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""'gpuspy commits': memory per commit, over three runs of a program on
the fake driver, each at a commit of a git repository made here:

 - the commit recorded: by gpuspy run from `git rev-parse HEAD` and from
   $GITHUB_SHA (run.json), by the library from $CI_COMMIT_SHA (a process
   preloaded without gpuspy run); a commit variable that is not one is
   said and not recorded; run.json's commit checked when read;
 - the table in the order given, by time and by commit (git's dates);
   leaked and peak per run as gpuspy report says them; the top sites;
 - CSV read by Python's csv module; the HTML page in headless Chromium:
   no request, no error, both charts drawn with the runs' figures;
 - an output directory stands for its runs; bad usage and bad runs.

    test_commits.py GPUSPY LIBGPUSPY FAKE_DIR LEAKER
"""
import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chromium  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

gpuspy, lib, fake, leaker = [os.path.abspath(a) for a in sys.argv[1:5]]
KIB = 1024
CI_VARS = ("GIT_COMMIT", "CI_COMMIT_SHA", "GITHUB_SHA")
env = {k: v for k, v in os.environ.items()
       if not k.startswith(("GPUSPY_", "GIT_")) and k not in ("LD_PRELOAD",) + CI_VARS}
env.update(LD_LIBRARY_PATH=fake, GPUSPY_QUIET="1", GPUSPY_LIBRARY=lib, GPUSPY_INTERVAL="50ms")


def run(args, cwd, extra=None, text=True):
    e = dict(env)
    e.update(extra or {})
    return subprocess.run(args, cwd=cwd, env=e, capture_output=True, text=text, timeout=60)


def git(repo, *args, date=None):
    extra = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
             "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}
    if date:
        extra.update(GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    p = run(["git"] + list(args), repo, extra)
    if p.returncode != 0:
        sys.exit("git %s: %s" % (" ".join(args), p.stderr))
    return p.stdout.strip()


def commits(*args, cwd=None, text=True):
    return run([gpuspy, "commits"] + list(args), cwd or tmp, text=text)


def report_json(path):
    return json.loads(run([gpuspy, "report", "--format", "json", path], tmp).stdout)


if not shutil.which("git"):
    harness.skip("no git")

tmp = harness.tempdir()
try:
    repo = os.path.join(tmp, "repo")
    os.mkdir(repo)
    git(repo, "init", "-q")
    shas = []
    for i, date in enumerate(("2026-01-01T10:00:00Z", "2026-01-02T10:00:00Z",
                              "2026-01-03T10:00:00Z")):
        with open(os.path.join(repo, "f"), "w") as f:
            f.write(str(i))
        git(repo, "add", "f")
        git(repo, "commit", "-q", "-m", "c%d" % i, date=date)
        shas.append(git(repo, "rev-parse", "HEAD"))
    runs = [os.path.join(tmp, "runs", "c%d" % i) for i in range(3)]

    # commit 0: gpuspy run in the repository, at that commit: from git
    git(repo, "checkout", "-q", shas[0])
    p = run([gpuspy, "run", "-o", runs[0], "--", leaker, "2", "1", "64"], repo)
    check(p.returncode == 0, "run at commit 0", p.stderr)
    rj = json.load(open(os.path.join(runs[0], "run.json")))
    check(rj.get("commit") == shas[0] and rj.get("commit_from") == "git",
          "gpuspy run in a repository: run.json has HEAD, from git", rj)
    # commit 1: preloaded by hand, $CI_COMMIT_SHA in the process's environment
    p = run([leaker, "3", "1", "64"], tmp, {"LD_PRELOAD": lib, "GPUSPY_OUTPUT_DIR": runs[1],
                                           "CI_COMMIT_SHA": shas[1]})
    check(p.returncode == 0 and not os.path.exists(os.path.join(runs[1], "run.json")),
          "run at commit 1, without gpuspy run", p.stderr)
    envs = [report_json(runs[1])]
    # commit 2: gpuspy run outside the repository, $GITHUB_SHA set
    p = run([gpuspy, "run", "-o", runs[2], "--", leaker, "4", "1", "128"], tmp,
            {"GITHUB_SHA": shas[2]})
    rj = json.load(open(os.path.join(runs[2], "run.json")))
    check(p.returncode == 0 and rj.get("commit") == shas[2] and
          rj.get("commit_from") == "GITHUB_SHA", "$GITHUB_SHA: recorded, from GITHUB_SHA", rj)

    # a variable that is no commit is said, and git asked instead
    bad = os.path.join(tmp, "bad-var")
    p = run([gpuspy, "run", "-o", bad, "--", leaker, "1", "1", "1"], repo,
            {"GIT_COMMIT": "evil \x1b[31m"})
    rj = json.load(open(os.path.join(bad, "run.json")))
    check("$GIT_COMMIT is not a commit" in p.stderr and "\x1b" not in p.stderr and
          rj.get("commit_from") == "git", "a $GIT_COMMIT that is no commit: said, git asked",
          (p.stderr, rj))
    # outside a repository, nothing set: no commit
    none = os.path.join(tmp, "no-commit")
    p = run([gpuspy, "run", "-o", none, "--", leaker, "1", "1", "1"], tmp)
    check("commit" not in json.load(open(os.path.join(none, "run.json"))),
          "no variable, no repository: no commit recorded")

    # ---- the table, in the order given ----
    figures = []
    for r in runs:
        j = report_json(r)
        figures.append((j["leaked"]["program"]["bytes"] if "program" in j["leaked"]
                        else j["leaked"]["bytes"], j["peak"]["bytes"]))
    check([f[0] for f in figures] == [128 * KIB, 192 * KIB, 512 * KIB],
          "the three runs leak 128, 192 and 512 KiB (%r)" % figures)
    p = commits(runs[2], runs[0], runs[1])
    check(p.returncode == 0 and p.stderr == "", "commits of three runs: status 0", p.stderr)
    rows = re.findall(r"^  (\d+)\s+(\S+)\s+\S+ \S+\s+(\S+ \S+)\s+(\S+ \S+)", p.stdout, re.M)
    check([r[1] for r in rows] == [shas[2][:12], shas[0][:12], shas[1][:12]],
          "in the order given, each by its commit", rows)
    check([r[2] for r in rows] == ["512.0 KiB", "128.0 KiB", "192.0 KiB"],
          "each run's leak, as gpuspy report says it", rows)
    check("keep_output (leaker.c:" in p.stdout and "TOP SITES BY PEAK" in p.stdout,
          "the top sites, by their names", p.stdout)
    check("commit %s from run.json" % shas[0] in p.stdout and
          "commit %s from CI_COMMIT_SHA" % shas[1] in p.stdout,
          "where each commit came from: run.json, the process's environment", p.stdout)

    p = commits("--order", "time", runs[2], runs[0], runs[1])
    rows = re.findall(r"^  \d+\s+(\S+)", p.stdout.split("\n\n")[1], re.M)
    check(rows == [s[:12] for s in shas], "--order time: the order they ran", rows)
    p = commits("--order", "commit", runs[2], runs[1], runs[0], cwd=repo)
    rows = re.findall(r"^  \d+\s+(\S+)", p.stdout.split("\n\n")[1], re.M)
    check(p.returncode == 0 and rows == [s[:12] for s in shas],
          "--order commit: by git's commit dates", (rows, p.stderr))
    p = commits("--order", "commit", runs[0], none, cwd=repo)
    check(p.returncode == 2 and len(p.stderr.splitlines()) == 1 and "no commit" in p.stderr,
          "--order commit with a run without a commit: 2, one line", p.stderr)
    p = commits("--order", "commit", runs[0], runs[1], cwd=tmp)
    check(p.returncode == 2 and len(p.stderr.splitlines()) == 1 and "git" in p.stderr,
          "--order commit outside the repository: 2, one line", p.stderr)

    # ---- CSV ----
    p = commits("--format", "csv", *runs)
    table = list(csv.reader(io.StringIO(p.stdout)))
    head, body = table[0], table[1:]
    check(head[:10] == ["run", "commit", "commit_from", "run_id", "path", "start_time",
                        "processes", "leaked_bytes", "pool_bytes", "peak_bytes"] and
          any(h.startswith("peak_bytes: keep_output (leaker.c:") for h in head[10:]),
          "csv: its header, a column per top site", head)
    check(len(body) == 3 and [r[1] for r in body] == shas and
          [(int(r[7]), int(r[9])) for r in body] == figures,
          "csv: a row per run, its commit, leak and peak", body)
    check([r[2] for r in body] == ["run.json", "CI_COMMIT_SHA", "run.json"],
          "csv: where each commit came from")

    # ---- HTML ----
    p = commits("--format", "html", *runs, text=False)
    html = p.stdout
    path = os.path.join(tmp, "commits.html")
    with open(path, "wb") as f:
        f.write(html)
    m = re.search(rb'<script type="application/json" id="gpuspy-data">(.*?)</script>', html,
                  re.S)
    data = json.loads(m.group(1)) if m else {}
    check(data.get("format") == "gpuspy-commits/1" and
          [r["commit"] for r in data.get("runs", [])] == shas and
          [(r["leaked"], r["peak"]) for r in data["runs"]] == figures,
          "html: the runs' data (gpuspy-commits/1)", data)
    check(b"default-src 'none'" in html and not re.search(rb"<(link|img|iframe)\b|\bsrc=", html),
          "html: no request possible (CSP), nothing loaded")
    if check(chromium.chromium_path() is not None, "chromium is installed"):
        with chromium.Browser(width=1200, height=1600) as b:
            page = b.open(path)
            check(page.errors == [] and page.exceptions() == [],
                  "chromium: no error, no exception", (page.errors, page.exceptions()))
            check(page.requests == ["file://" + path], "chromium: no request but the page",
                  page.requests)
            plots = page.eval("window.__gpuspyPlots.map(p => p.data.map(s => Array.from(s)))")
            check(len(plots) == 2 and plots[0][1] == [f[0] for f in figures] and
                  plots[0][2] == [f[1] for f in figures],
                  "chromium: the first chart plots leaked and peak per run", plots)
            check(len(plots) == 2 and len(plots[1]) - 1 == len(data["sites"]) and
                  all(plots[1][k + 1] == s["peaks"] for k, s in enumerate(data["sites"])),
                  "chromium: the second chart each top site's peak per run")
            n = page.eval("document.querySelectorAll('#totals canvas, #sites canvas').length")
            rows = page.eval("document.querySelectorAll('#runs tr').length")
            check(n == 2 and rows == 4, "chromium: two canvases drawn, a table row per run",
                  (n, rows))
            png = page.screenshot("#totals")
            w, h, rows = chromium.png_decode(png)
            # the leak's series is drawn in #d62728
            red = sum(1 for row in rows for (r, g, b) in row if r > 180 and g < 90 and b < 90)
            check(red > 50, "chromium: the leak's line is drawn (%d red pixels)" % red)

    # ---- an output directory stands for every run in it ----
    work = os.path.join(tmp, "work")
    os.mkdir(work)
    for i in range(2):
        run([gpuspy, "run", "--", leaker, "1", "1", str(16 * (i + 1))], work,
            {"GITHUB_SHA": shas[i]})
    p = commits("gpuspy-out", cwd=work)
    rows = re.findall(r"^  \d+\s+(\S+)", p.stdout.split("\n\n")[1], re.M)
    check(p.returncode == 0 and rows == [shas[0][:12], shas[1][:12]],
          "an output directory: every run in it, oldest first", (rows, p.stderr))

    # ---- bad usage, bad runs ----
    for args, what in ((["--order", "sideways", runs[0]], "an unknown order"),
                       (["--format", "pdf", runs[0]], "an unknown format"),
                       ([], "no RUN"),
                       ([runs[0], os.path.join(tmp, "missing")], "a RUN that is not there")):
        p = commits(*args)
        check(p.returncode == 2 and p.stdout == "" and len(p.stderr.splitlines()) == 1,
              "%s: status 2, one line" % what, (p.returncode, p.stderr))
    hostile = os.path.join(tmp, "hostile")
    shutil.copytree(runs[0], hostile)
    rj = json.load(open(os.path.join(hostile, "run.json")))
    for value, what in (("a b", "a blank"), ("x" * 129, "129 bytes"), ("\u00e9", "not ASCII"),
                        (7, "not a string")):
        rj["commit"] = value
        with open(os.path.join(hostile, "run.json"), "w") as f:
            json.dump(rj, f)
        p = commits(hostile)
        check(p.returncode == 2 and len(p.stderr.splitlines()) == 1 and "run.json" in p.stderr
              and "commit" in p.stderr, "run.json's commit of %s: refused, one line" % what,
              p.stderr)
    rj["commit"] = shas[0]
    rj["commit_from"] = "SOMEWHERE"
    with open(os.path.join(hostile, "run.json"), "w") as f:
        json.dump(rj, f)
    p = commits(hostile)
    check(p.returncode == 2 and "commit_from" in p.stderr, "an unknown commit_from: refused")
finally:
    shutil.rmtree(tmp)

sys.exit(harness.done())
