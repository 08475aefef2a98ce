#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The text report of 'gpuspy report' on a program of the fake driver
(tests/cli/two_lines.c):
 - each stack is printed once, under CALL SITES, and the lists refer to it
   by its number, the user's line first;
 - a site merged from calls at two lines of one function (a leaking line
   and a temporary line) keeps both lines, each with its own figures, in
   the text and in the JSON ("lines");
 - sites tied on leaked and peak bytes are ordered by size, not by key;
 - each list says what share of its total it covers; TOTALS ends it;
 - --sections picks the sections; an unknown one is a usage error;
 - two PyTorch-view stacks that print alike are one line in the text (the
   JSON keeps both);
 - the site key is a short digest.
Usage: test_layout.py LIBGPUSPY GPUSPY FAKE_DIR TWO_LINES TWO_LINES_C"""
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

lib, cli, fake, prog, source = sys.argv[1:6]
env = {k: v for k, v in os.environ.items() if not k.startswith(("GPUSPY_", "LC_", "LANG"))}
env.update(LD_LIBRARY_PATH=fake, GPUSPY_QUIET="1")
line_of = {l.split("/* LINE ")[-1].split(" ")[0]: i + 1
           for i, l in enumerate(open(source).read().splitlines()) if "/* LINE " in l}
STEPS, SIZE = 3, 1 << 20


gpuspy = harness.Cli(cli, env=env)


def section(text, title):
    """The lines of the section whose heading starts with TITLE."""
    at = text.find("\n" + title)
    return text[at + 1:].split("\n\n", 1)[0].splitlines() if at >= 0 else []


out = harness.tempdir()
try:
    r = subprocess.run([prog, str(STEPS), str(SIZE)], env=dict(env, LD_PRELOAD=lib,
                       GPUSPY_OUTPUT_DIR=out), capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, "two_lines ran", r.stderr)
    t = gpuspy("report", out)
    j = gpuspy("report", "--format", "json", out)
    check(t.returncode == 0 and j.returncode == 0, "report: text and json", t.stderr + j.stderr)
    text, rep = t.stdout, json.loads(j.stdout or "{}")
    sites = rep.get("sites", [])

    # the merged site keeps both lines, each with its own figures
    step = [s for s in sites if s.get("headline", {}).get("function") == "step"]
    check(len(step) == 1, "one site for step()'s two calls", [s.get("headline") for s in sites])
    lines = {l.get("line"): l for l in (step[0].get("lines", []) if step else [])}
    leak, temp = lines.get(line_of["leak"], {}), lines.get(line_of["temp"], {})
    check(set(lines) == {line_of["leak"], line_of["temp"]},
          "json: its lines are the leaking and the temporary line", list(lines))
    check(leak.get("leaked_bytes") == STEPS * SIZE and leak.get("allocations") == STEPS
          and temp.get("leaked_bytes") == 0 and temp.get("allocations") == STEPS
          and temp.get("frees") == STEPS and temp.get("peak_bytes") == SIZE,
          "json: each line has its own leaked, peak and count", (leak, temp))
    check(step and step[0]["headline"].get("lines") == sorted(line_of.values())
          and "line" not in step[0]["headline"],
          "json: the headline frame lists both lines", step and step[0]["headline"])
    base = os.path.basename(source)
    # its one name: the line that holds the memory first, then how many
    # more, in the text's rows and the JSON alike
    want = "step (%s:%d +1 line)" % (base, line_of["leak"])
    check(any(want in l for l in section(text, "LEAKED AT EXIT")),
          "text: the row names the leaking line first: " + want, text)
    check(step and step[0].get("name") == want, "json: the same name", step and step[0].get("name"))
    by_line = [l for l in text.splitlines() if l.startswith("    by line: %s:%d "
                                                            % (base, line_of["leak"]))]
    check(len(by_line) == 1 and ("%s:%d leaked 3.0 MiB in 3," % (base, line_of["leak"]))
          in by_line[0] and ("%s:%d peak 1.0 MiB, 3 of 3.0 MiB" % (base, line_of["temp"]))
          in by_line[0], "text: each line's own figures under the stack", by_line)

    # each stack once: the full path of a frame appears in one line only,
    # and every "#N" of the lists has its stack under CALL SITES
    full = [l for l in text.splitlines() if "/%s:" % base in l]
    check(len(full) == len(set(full)) and len(full) >= 3,
          "text: no frame line printed twice", "\n".join(full))
    calls = section(text, "CALL SITES")
    numbers = {m for m in re.findall(r"^  #(\d+) ", text, re.M)}
    heads = [m for m in re.findall(r"^#(\d+) ", "\n".join(calls), re.M)]
    check(numbers and set(heads) == numbers and len(heads) == len(numbers),
          "text: each listed site's stack once under CALL SITES", (numbers, heads))
    for n in numbers:
        s = sites[int(n) - 1]
        head = [l for l in calls if l.startswith("#%s " % n)]
        check(head and head[0].startswith("#%s %s " % (n, s["headline"]["function"])),
              "#%s is the JSON's sites[%d]" % (n, int(n) - 1), head)

    # ties by size: tie_z_big allocated twice what tie_a_small did
    order = [s["headline"]["function"] for s in sites
             if s["headline"]["function"].startswith("tie_")]
    check(order == ["tie_z_big", "tie_a_small"], "json: the tie goes to the larger site", order)
    leaked = [l for l in section(text, "LEAKED AT EXIT") if "tie_" in l]
    check(len(leaked) == 2 and "tie_z_big" in leaked[0], "text: the same order", leaked)

    # shares and totals
    head = section(text, "LEAKED AT EXIT")[:1]
    check(head and head[0] == "LEAKED AT EXIT (3 call sites, 100% of 5.0 MiB leaked)",
          "the list says what share it covers", head)
    r1 = gpuspy("report", "--top", "1", out)
    head = section(r1.stdout, "MOST ALLOCATIONS")[:1]
    check(head and head[0].startswith("MOST ALLOCATIONS (top 1 of 3 call sites, 66% of 9 "
                                      "allocations; --top 0 lists all)"),
          "--top 1: the share of the top site", head)
    tot = section(text, "TOTALS")
    check(tot[:1] == ["TOTALS (by kind of memory; 0 untracked frees)"] and len(tot) == 2
          and tot[1].split() == ["device", "9", "allocations", "of", "9.0", "MiB,", "4", "frees",
                                 "of", "4.0", "MiB;", "leaked", "5.0", "MiB", "in", "5,", "peak",
                                 "5.0", "MiB"],
          "TOTALS: allocations, frees, leaked and peak of the kind", tot)
    check(re.search(r"\nnext: gpuspy diff %s NEW_RUN_DIR" % re.escape(out), text) is not None,
          "the next command to run", text[-300:])
    for s in sites:
        check(re.fullmatch(r"[0-9a-f]{16}", s["key"]) is not None, "key %s: a digest" % s["key"])

    # --sections
    r2 = gpuspy("report", "--sections", "leaks,totals", out)
    heads = re.findall(r"^[A-Z][A-Z ]+", r2.stdout, re.M)
    check(r2.returncode == 0 and heads == ["LEAKED AT EXIT ", "TOTALS "],
          "--sections leaks,totals: those two", heads)
    r3 = gpuspy("report", "--sections", "leaks,bogus", out)
    check(r3.returncode == 2 and r3.stdout == "" and "unknown section 'bogus'" in r3.stderr,
          "--sections with an unknown name: status 2, one line", (r3.returncode, r3.stderr))

    # the PyTorch view: two stacks alike but for a library frame
    pdir = [os.path.join(out, d) for d in os.listdir(out)
            if os.path.isdir(os.path.join(out, d))][0]
    user = {"file": "/home/u/train.py", "function": "train", "line": 7}
    lib_frame = [{"file": "/py/lib/python3.12/site-packages/torch/nn/a.py", "function": "f",
                  "line": n} for n in (1, 2)]
    pid = int(pdir.rsplit("-", 1)[1])
    view = {"format": "gpuspy-torch/1", "pid": pid, "time": 1.0, "final": True, "samples": 3,
            "devices": [{"device": 0, "reserved_bytes": 8 << 20, "allocated_bytes": 6 << 20}],
            "sites": [{"frames": [lib_frame[k], user], "live_bytes": (k + 2) << 20,
                       "live_blocks": 1, "peak_bytes": (k + 2) << 20, "growing": False}
                      for k in (0, 1)]}
    with open(os.path.join(pdir, "torch.json"), "w") as f:
        json.dump(view, f)
    t = gpuspy("report", "--sections", "torch", out)
    tv = section(t.stdout, "PYTORCH TENSORS")
    rows = [l for l in tv[1:] if not l.startswith(" ")]
    check(t.returncode == 0 and rows == ["5.0 MiB live in 2 blocks (peak 5.0 MiB, summed)"]
          and "  (2 stacks that differ only in library frames)" in tv,
          "torch: two stacks that print alike are one line", t.stdout + t.stderr)
    j = json.loads(gpuspy("report", "--format", "json", out).stdout or "{}")
    check(len(j.get("torch", {}).get("sites", [])) == 2, "torch: the JSON keeps both")
finally:
    shutil.rmtree(out)
sys.exit(harness.done())
