#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""For scripts/gpu-check, case tensorboard-read: what 'gpuspy export
--tensorboard' wrote for a run, read by TensorBoard's own readers (the
records' CRCs checked as they are read): event_accumulator, whose
Scalars() are the simple values, and plugin_event_accumulator, what the
dashboard serves (the values migrated to tensors of the scalars plugin).
Both compared, tag by tag and step by step, with the scalars the run's
history.jsonl gives (tests/cli/tbread.py: the rules of docs/format.md,
the history's site series summed by their headline, as 'gpuspy report
--format csv' names each, before the top are chosen).  A framework's
sites under one line of the user's are one tag, never "#2".
One line per check; a JSON summary in OUT.
Usage: tensorboard_read.py GPUSPY RUN_DIR LOGDIR time|mark TOP OUT"""
import json, os, subprocess, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cli"))
import tbread  # noqa: E402
from tensorboard.backend.event_processing import event_accumulator as ea  # noqa: E402
from tensorboard.backend.event_processing import plugin_event_accumulator as pea  # noqa: E402
from tensorboard.util import tensor_util  # noqa: E402

cli, run_dir, logdir, mode, top, out = sys.argv[1:7]
top = int(top)
failures, summary = [], {"mode": mode, "top": top, "runs": {}}


def check(cond, what, detail=""):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)
        if detail:
            print("     " + str(detail)[:2000].replace("\n", "\n     "))


# each process directory of the run: its history, and its event file
# (found by the pid in the file's name)
procs = []
for d in sorted(os.listdir(run_dir)):
    h = os.path.join(run_dir, d, "history.jsonl")
    if os.path.isfile(h):
        procs.append((d, os.path.join(run_dir, d), h))
check(procs, "the run has processes with a history", run_dir)
runs = {}
for r in sorted(os.listdir(logdir)):
    for f in os.listdir(os.path.join(logdir, r)):
        if ".tfevents." in f:
            runs[f.split(".")[-2]] = os.path.join(logdir, r)
for name, pdir, hist in procs:
    pid = name.rsplit("-", 1)[-1]
    run = runs.get(pid)
    check(run is not None, f"{name}: an event file in a run of its own", sorted(runs))
    if run is None:
        continue
    rep = subprocess.run([cli, "report", "--format", "json", "--top", "0", pdir],
                         capture_output=True, text=True, timeout=120).stdout
    names = tbread.site_names_from_report(rep)
    with open(hist) as f:
        start, want = tbread.expected(f.read(), names, mode, top)
    acc = ea.EventAccumulator(run, size_guidance={ea.SCALARS: 0})
    acc.Reload()
    check(acc.file_version == 2.0, f"{name}: file_version brain.Event:2", acc.file_version)
    tags = sorted(acc.Tags()["scalars"])
    want_tags = sorted({t for _, _, vals in want for t in vals})
    check(tags == want_tags, f"{name}: {len(tags)} tags as the history's", (tags, want_tags))
    plug = pea.EventAccumulator(run, size_guidance={pea.TENSORS: 0})
    plug.Reload()
    plug_tags = sorted(plug.Tags()["tensors"])
    check(plug_tags == want_tags, f"{name}: the dashboard's reader: the same tags", plug_tags)
    # the headlines that several sites share: one tag each, no "#N"
    # (which only two headlines alike up to a tag's cut would get)
    heads = {}
    for n in names.values():
        heads[n] = heads.get(n, 0) + 1
    shared = {n: c for n, c in heads.items() if c > 1}
    split = [t for n in shared if tbread.cut(n) == n
             and not any(m.startswith(n + " #") for m in heads)
             for t in tags if t.startswith("sites/" + n + " #")]
    check(not split, f"{name}: {len(shared)} headlines of several sites "
          f"({sum(shared.values())} sites), one tag each", split)
    points, last = 0, {}
    for tag in want_tags:
        w = [(s, wall, vals[tag]) for s, wall, vals in want if tag in vals]
        g = [(e.step, e.wall_time, e.value) for e in acc.Scalars(tag)] if tag in tags else []
        ok = len(g) == len(w) and all(a[0] == b[0] and abs(a[1] - b[1]) < 1e-6 and a[2] == b[2]
                                      for a, b in zip(g, w))
        check(ok, f"{name}: {tag}: {len(w)} scalars, steps, wall times, values",
              "\n".join(f"tensorboard {a}\nhistory     {b}" for a, b in zip(g, w) if a != b)
              or f"{len(g)} read, {len(w)} expected")
        if tag in plug_tags:
            meta = plug.SummaryMetadata(tag).plugin_data.plugin_name
            g = [(e.step, e.wall_time, tensor_util.make_ndarray(e.tensor_proto).item())
                 for e in plug.Tensors(tag)]
            ok = meta == "scalars" and len(g) == len(w) and all(
                a[0] == b[0] and abs(a[1] - b[1]) < 1e-6 and a[2] == b[2] for a, b in zip(g, w))
            check(ok, f"{name}: {tag}: the dashboard's reader: plugin {meta}, the same values",
                  g[-3:])
        points += len(w)
        last[tag] = w[-1][2] if w else None
    summary["runs"][name] = {"run": os.path.relpath(run, logdir), "tags": tags,
                             "steps": len(want), "scalars": points, "last": last,
                             "shared_headlines": shared}
summary["failures"] = failures
with open(out, "w") as f:
    json.dump(summary, f, indent=1)
print(f"{len(failures)} failed" if failures else "all passed")
sys.exit(1 if failures else 0)
