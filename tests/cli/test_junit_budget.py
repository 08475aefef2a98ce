#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The gates' JUnit XML (--junit FILE) and per-site budgets (diff --budget
FILE), on runs made here from the fixtures:

 - --junit parsed with xml.etree and checked against the JUnit schema's
   shape (junit_check.py): one failure naming the site that grew, by its
   one name; none when within the limit; report --fail-on-leak's failure
   naming the sites that hold the leak; nothing allocated: one case that
   passes; markup and control characters in a name keep it well-formed;
   a link at FILE is replaced, never written through;
 - budgets: within -> 0, over -> 1 naming every site over, its peak, its
   budget and its line; first match wins; '*' the default; '1.5 GB';
   unmatched sites not judged (skipped in JUnit); the peak of one
   process, not the ranks' sum; malformed files -> 2 with one line
   naming the file and the line.

    test_junit_budget.py GPUSPY FIXTURES
"""
import copy
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import junit_check  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

cli, fixtures = sys.argv[1:3]
BASE = json.load(open(os.path.join(fixtures, "process", "node7-4242", "report.json")))
MIB = 1 << 20


def write_run(tmp, name, docs):
    """A run directory of one process directory per report in DOCS."""
    run = os.path.join(tmp, name)
    for i, doc in enumerate(docs):
        d = os.path.join(run, "node7-%d" % doc["pid"])
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "report.json"), "w") as f:
            json.dump(doc, f)
    return run


def run(*argv):
    return subprocess.run([cli] + list(argv), capture_output=True, text=True, timeout=60)


def junit(path):
    root, problems = junit_check.parse(path)
    check(problems == [], "%s: the JUnit schema's shape" % os.path.basename(path), problems)
    return junit_check.cases(root)


def grown(doc, site_id, peak):
    """DOC with site SITE_ID's peak raised to PEAK (and the totals with it)."""
    doc = copy.deepcopy(doc)
    for s in doc["sites"]:
        if s["id"] == site_id:
            more = peak - s["peak_bytes"]
            s["peak_bytes"] = peak
            s["allocated_bytes"] += more
            doc["peak"]["bytes"] += more
            doc["kinds"][s["kind"]]["peak_bytes"] += more
    return doc


def names_of(run_dir):
    """{headline function: one name} of the sites of RUN_DIR, as gpuspy names them."""
    p = run("report", "--format", "json", run_dir)
    out = {}
    for s in json.loads(p.stdout)["sites"]:
        out[(s.get("headline") or {}).get("function")] = s["name"]
    return out


tmp = harness.tempdir()
try:
    old = write_run(tmp, "old", [BASE])
    # train_step (site 2) peaks 8 MiB in OLD, 12 MiB in NEW
    new = write_run(tmp, "new", [grown(BASE, 2, 12 * MIB)])
    names = names_of(new)
    train = names.get("train_step")
    check(train is not None, "the fixture's train_step site has a name (%r)" % train)
    nsites = len(BASE["sites"])

    # ---- diff --fail-on-growth --junit ----
    xml = os.path.join(tmp, "growth.xml")
    p = run("diff", "--fail-on-growth", "1M", "--junit", xml, old, new)
    check(p.returncode == 1 and p.stderr == "", "grew by 4 MiB over 1M: status 1",
          (p.returncode, p.stderr))
    cs = junit(xml)
    failed = [c for c in cs if c[3] is not None]
    check(len(cs) == nsites, "a test case per site (%d)" % len(cs))
    check(len(failed) == 1 and failed[0][2] == train,
          "one failure, named by the site's one name", [(c[2]) for c in failed])
    if failed:
        msg = failed[0][3].get("message")
        check("+4.0 MiB" in msg and "1.0 MiB" in msg, "its message: the growth and the limit",
              msg)
        check(train in failed[0][3].text and "peak 8.0 MiB -> 12.0 MiB" in failed[0][3].text,
              "its text: the name and the figures on both sides", failed[0][3].text)
        check(failed[0][3].get("type") == "fail-on-growth", "its type is the gate")
    check(all(c[1] == "gpuspy.diff.growth" for c in cs), "classname gpuspy.diff.growth")

    p = run("diff", "--fail-on-growth", "8M", "--junit", xml, old, new)
    cs = junit(xml)
    check(p.returncode == 0 and len(cs) == nsites and all(c[3] is None for c in cs),
          "within the limit: status 0, every case passes", (p.returncode, cs))

    # a run diffed with itself, --fail-on-growth 0: nothing grew
    p = run("diff", "--fail-on-growth", "0", "--junit", xml, old, old)
    check(p.returncode == 0 and all(c[3] is None for c in junit(xml)),
          "a run against itself, --fail-on-growth 0: no failure")

    # ---- a link at FILE is replaced, never followed ----
    victim = os.path.join(tmp, "victim")
    with open(victim, "w") as f:
        f.write("precious\n")
    link = os.path.join(tmp, "link.xml")
    os.symlink(victim, link)
    p = run("diff", "--fail-on-growth", "1M", "--junit", link, old, new)
    check(p.returncode == 1 and open(victim).read() == "precious\n" and
          not os.path.islink(link) and os.path.isfile(link),
          "a symbolic link at FILE: replaced by the file, its target untouched")
    check(not [n for n in os.listdir(tmp) if n.endswith(".tmp")], "no temporary left behind")
    p = run("diff", "--fail-on-growth", "1M", "--junit", os.path.join(tmp, "no", "x.xml"),
            old, new)
    check(p.returncode == 1 and len(p.stderr.splitlines()) == 1 and "x.xml" in p.stderr,
          "FILE in a missing directory: one line naming it, status 1", (p.returncode, p.stderr))
    p = run("diff", "--fail-on-growth", "1M", "--junit", tmp, old, new)
    check(p.returncode == 1 and len(p.stderr.splitlines()) == 1,
          "FILE a directory: one line, status 1", (p.returncode, p.stderr))

    # --junit alone is bad usage; bad input writes nothing
    p = run("diff", "--junit", xml, old, new)
    check(p.returncode == 2 and len(p.stderr.splitlines()) == 1, "--junit without a gate: 2")
    os.unlink(xml)
    p = run("diff", "--fail-on-growth", "1M", "--junit", xml, old, os.path.join(tmp, "nope"))
    check(p.returncode == 2 and not os.path.exists(xml), "bad input: status 2, no JUnit file")

    # ---- markup in a name ----
    hostile = copy.deepcopy(BASE)
    hostile["sites"][1]["frames"][0]["symbol"] = 'evil<&>"\'\x01\x7f\u2192f'
    hostile_new = grown(hostile, 2, 12 * MIB)
    hold = write_run(tmp, "hold", [hostile])
    hnew = write_run(tmp, "hnew", [hostile_new])
    p = run("diff", "--fail-on-growth", "1M", "--junit", xml, hold, hnew)
    cs = junit(xml)
    bad = [c for c in cs if c[3] is not None]
    check(p.returncode == 1 and len(bad) == 1 and bad[0][2].startswith('evil<&>"\'') and
          "\x01" not in bad[0][2] and "\u2192" in bad[0][2],
          "a name of markup and control characters: well-formed, the markup kept, the "
          "controls replaced", bad and bad[0][2])

    # ---- report --fail-on-leak --junit ----
    p = run("report", "--fail-on-leak", "1M", "--junit", xml, old)
    cs = junit(xml)
    check(p.returncode == 1 and len(cs) == 1 and cs[0][3] is not None,
          "report: more than 1M live: status 1, one failed case", (p.returncode, cs))
    if cs and cs[0][3] is not None:
        text = cs[0][3].text
        check(names["leak_driver"] in text and "3.0 MiB in 2 allocations" in text,
              "its failure names the leaking site with its figures", text)
        check("alloc_pinned" not in text, "pinned host memory is not named (not counted)", text)
        check(cs[0][3].get("type") == "fail-on-leak" and "more than 1.0 MiB" in
              cs[0][3].get("message"), "its message: the leak and the limit")
    p = run("report", "--fail-on-leak", "4M", "--junit=" + xml, "--format", "json", old)
    cs = junit(xml)
    check(p.returncode == 0 and len(cs) == 1 and cs[0][3] is None and json.loads(p.stdout),
          "within the limit, --format json: status 0, the case passes, JSON on stdout")
    empty = os.path.join(tmp, "empty")
    os.mkdir(empty)
    p = run("report", "--fail-on-leak", "0", "--junit", xml, empty)
    cs = junit(xml)
    check(p.returncode == 0 and len(cs) == 1 and cs[0][3] is None,
          "nothing allocated: one case that passes", (p.returncode, p.stderr))
    p = run("report", "--junit", xml, old)
    check(p.returncode == 2 and len(p.stderr.splitlines()) == 1,
          "report --junit without --fail-on-leak: 2")

    # ---- budgets ----
    def budget(text, name="budget.txt", raw=False):
        path = os.path.join(tmp, name)
        with open(path, "wb" if raw else "w") as f:
            f.write(text)
        return path

    ok = budget("# budgets of the fixture\n\ntrain_step*   12 MiB\n*  4MiB\n", "ok.txt")
    p = run("diff", "--budget", ok, old, new)
    check(p.returncode == 0 and p.stdout.splitlines()[-1].startswith(
          "OK: %d sites within their budget" % nsites),
          "within: status 0, the verdict last", (p.returncode, p.stdout[-300:], p.stderr))

    over = budget("train_step*   10 MiB\n*  4MiB\n", "over.txt")
    p = run("diff", "--budget", over, old, new)
    lines = p.stdout.splitlines()
    check(p.returncode == 1 and lines[-1].startswith("FAIL: 1 site over its budget"),
          "over: status 1, FAIL last", (p.returncode, lines[-3:]))
    check("  %s: peak 12.0 MiB, budget 10.0 MiB (%s:1: train_step*)" % (train, over) in lines,
          "the site over its budget named, with its peak, budget and line", lines[-4:])

    # first match wins; '1.5 GB' is a size; a site no line matches is not judged
    first = budget("train_step*  1.5 GB\ntrain_step*  1K\nleak_driver* 3 MiB\n", "first.txt")
    p = run("diff", "--budget", first, "--junit", xml, old, new)
    cs = junit(xml)
    check(p.returncode == 0 and "2 sites match no budget line: not judged" in p.stdout,
          "first match wins, '1.5 GB' read, unmatched sites not judged",
          (p.returncode, p.stdout[-300:]))
    check(sum(c[4] for c in cs) == 2 and all(c[3] is None for c in cs) and len(cs) == nsites,
          "JUnit: the unmatched sites skipped, none failed", cs)

    # both gates, and JSON: the verdict on stderr
    p = run("diff", "--format", "json", "--fail-on-growth", "1M", "--budget", over, "--junit",
            xml, old, new)
    cs = junit(xml)
    suites = {c[0] for c in cs}
    check(p.returncode == 1 and json.loads(p.stdout)["format"] == "gpuspy-diff/1" and
          "FAIL: 1 site over its budget" in p.stderr,
          "--format json: JSON on stdout, the budget's verdict on stderr",
          (p.returncode, p.stderr))
    check(len(suites) == 2 and sum(c[3] is not None for c in cs) == 2 and
          all(c[2] == train for c in cs if c[3] is not None),
          "two gates: two suites, each failing on the site", [(c[0], c[2]) for c in cs])

    # ranks: a budget is per process, never the ranks' sum
    r1, r2 = copy.deepcopy(BASE), copy.deepcopy(BASE)
    r2["pid"] = 4243
    ranks = write_run(tmp, "ranks", [r1, r2])
    p = run("diff", "--budget", budget("train_step*  8MiB\n", "ranks.txt"), old, ranks)
    check(p.returncode == 0, "two ranks of 8 MiB each within a budget of 8 MiB: status 0",
          (p.returncode, p.stdout[-300:]))

    # malformed: status 2, one line naming the file and the line, nothing read
    bad_files = [
        ("no size", "train_step*\n", "line 1"),
        ("a word that is not a size", "# c\n* lots\n", "line 2"),
        ("a negative size", "* -1M\n", "line 1"),
        ("a size alone", "\n  512MiB\n", "line 2"),
        ("a unit alone", "MiB\n", "line 1"),
        ("a NUL byte", b"* 1M\n\x00* 2M\n", "line 2"),
        ("a control character", "tr\x1bain* 1M\n", "line 1"),
        ("bytes that are not UTF-8", b"\xff\xfe* 1M\n", "line 1"),
        ("a line too long", "x" * 5000 + " 1M\n", "line 1"),
        ("no rule", "# only comments\n\n", "no budget"),
        ("an empty file", "", "no budget"),
    ]
    for what, text, where in bad_files:
        path = budget(text, "bad.txt", raw=isinstance(text, bytes))
        p = run("diff", "--budget", path, "--junit", xml, old, new)
        check(p.returncode == 2 and p.stdout == "" and len(p.stderr.splitlines()) == 1 and
              path in p.stderr and where in p.stderr,
              "budget with %s: status 2, one line naming the file and %s" % (what, where),
              (p.returncode, p.stderr))
    big = budget("* 1M\n" * (1 << 18), "big.txt")
    p = run("diff", "--budget", big, old, new)
    check(p.returncode == 2 and len(p.stderr.splitlines()) == 1 and "big.txt" in p.stderr,
          "a budget file over 1 MiB: 2, one line", p.stderr)
    for what, path in (("missing", os.path.join(tmp, "missing.txt")), ("a directory", tmp)):
        p = run("diff", "--budget", path, old, new)
        check(p.returncode == 2 and len(p.stderr.splitlines()) == 1 and path in p.stderr,
              "a budget file %s: 2, one line naming it" % what, p.stderr)
    fifo = os.path.join(tmp, "fifo")
    os.mkfifo(fifo)
    p = run("diff", "--budget", fifo, old, new)
    check(p.returncode == 2 and "not a regular file" in p.stderr,
          "a FIFO as the budget file: refused at once, not waited on", p.stderr)
    p = run("diff", "--budget", over, old, os.path.join(tmp, "nope"))
    check(p.returncode == 2, "a good budget, a missing run: 2")
    # CRLF, blanks and tabs around
    crlf = budget("\t train_step (leaky)\t10MiB \r\n*\t4 MiB\r\n", "crlf.txt")
    p = run("diff", "--budget", crlf, old, new)
    check(p.returncode == 1 and "(%s:1: train_step (leaky))" % crlf in p.stdout,
          "CRLF lines, tabs: read; a pattern with blanks, the site's whole name",
          p.stdout[-300:])

    # documented: the man page's example budget file is one gpuspy reads
    man = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "man",
                            "gpuspy-diff.1.scd")).read()
    block = man.split("# BUDGETS", 1)[1].split("```\n", 2)[1]
    p = run("diff", "--budget", budget(block.replace("\\*", "*"), "man.txt"), old, new)
    check(p.returncode == 0 and "OK:" in p.stdout, "gpuspy-diff(1)'s example budget file reads",
          (p.returncode, p.stderr))
finally:
    shutil.rmtree(tmp)

sys.exit(harness.done())
