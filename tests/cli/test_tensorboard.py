#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""gpuspy export --tensorboard, read back by a reader of its own
(tests/cli/tbread.py: the framing, its CRC32C and the protobuf fields
decoded by hand) and compared with what history.jsonl says:
 - the timeline fixture (a bucket, marks, NVML, two sites): --step time
   and mark, --top 1 (one site folded into sites/other) and 0; its sites
   given one headline (one tag, their sum), headlines alike up to the
   cut of a tag (" #2"), a function named "other";
 - a run of tests/integration/shapes.c ("marked": 2 MiB kept and a mark
   each period) on the fake driver: both steps, the leaking site's tag by
   its user line, its last value the report's leaked bytes;
 - hostile: a corrupt history (status 2, one line naming it, nothing
   made), LOGDIR a symbolic link, a file, a run directory under it that
   is a link, an export over an earlier one; usage errors.
Usage: test_tensorboard.py GPUSPY FIXTURES LIBGPUSPY FAKE_DIR SHAPES"""
import json, os, shutil, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tbread  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

cli, fixtures, lib, fake, shapes = sys.argv[1:6]
lib = harness.preload(lib)
env = {k: v for k, v in os.environ.items() if not k.startswith(("GPUSPY_", "LC_", "LANG"))}
env.update(LD_LIBRARY_PATH=fake, GPUSPY_QUIET="1", LC_ALL="C")
tmp = harness.tempdir()


gpuspy = harness.Cli(cli, env=env)


def event_files(logdir):
    out = []
    for d, _, names in os.walk(logdir):
        out += [os.path.join(d, n) for n in names]
    return sorted(out)


def compare(what, path, history, names, mode, top):
    """The file at PATH against the history's scalars."""
    try:
        evs = tbread.read_events(path)
    except (tbread.Bad, OSError, UnicodeDecodeError) as e:
        check(False, f"{what}: the file decodes", e)
        return None
    start, want = tbread.expected(history, names, mode, top)
    check(evs and evs[0]["file_version"] == "brain.Event:2" and evs[0]["values"] is None
          and abs(evs[0]["wall_time"] - start) < 1e-6,
          f"{what}: first record: brain.Event:2 at the start", evs[:1])
    got = [(e["step"], e["wall_time"], dict(e["values"] or [])) for e in evs[1:]]
    check(all(len(e["values"]) == len(dict(e["values"])) for e in evs[1:]),
          f"{what}: no tag twice in a step")
    ok = len(got) == len(want) and all(
        g[0] == w[0] and abs(g[1] - w[1]) < 1e-6 and g[2] == w[2] for g, w in zip(got, want))
    check(ok, f"{what}: {len(want)} steps, tags, wall times and values as the history's",
          "\n".join(f"got  {g}\nwant {w}" for g, w in zip(got, want) if g != w)
          or f"got {len(got)} steps, want {len(want)}")
    return got


# 1. The fixture: a bucket (its max), marks, NVML, two sites.
fx = os.path.join(fixtures, "timeline", "node7-4242")
with open(os.path.join(fx, "history.jsonl")) as f:
    fx_hist = f.read()
names = tbread.site_names_from_report(gpuspy("report", "--format", "json", "--top", "0", fx).stdout)
check({k: names.get(k) for k in (1, 2)} == {1: "leak_driver (leaky)", 2: "train_step (leaky)"},
      "fixture: site names", names)
for mode in ("time", "mark"):
    for top in (1, 0):
        logdir = os.path.join(tmp, f"fx-{mode}-{top}")
        r = gpuspy("export", "--tensorboard", logdir, "--step", mode, "--top", str(top), fx)
        files = event_files(logdir)
        want_file = os.path.join(logdir, "node7-4242",
                                 "events.out.tfevents.1764510000.node7.4242.gpuspy")
        check(r.returncode == 0 and files == [want_file],
              f"fixture --step {mode} --top {top}: one file, named for TensorBoard",
              (r.returncode, r.stderr, files))
        if files:
            got = compare(f"fixture --step {mode} --top {top}", files[0], fx_hist, names, mode,
                          top)
            tags = set(k for g in got or [] for k in g[2])
            want = {"device/0", "nvml/0", "sites/other", "sites/train_step (leaky)"}
            if top == 0:
                want.add("sites/leak_driver (leaky)")
            check(tags == want, f"fixture --step {mode} --top {top}: the tags", tags)
            if mode == "mark":
                check([g[0] for g in got] == [0, 1, 2, 3],
                      "fixture --step mark: steps 0 to 3 (three marks)", got)
# the bucket of 10 samples gives its max at t1 = 9.5
r = gpuspy("export", "--tensorboard", os.path.join(tmp, "fx-b"), fx)
evs = tbread.read_events(event_files(os.path.join(tmp, "fx-b"))[0])
check(evs[1]["step"] == 9 and dict(evs[1]["values"])["device/0"] == 9437184.0
      and abs(evs[1]["wall_time"] - 1764510009.625) < 1e-6,
      "fixture: the bucket is its max, at its t1", evs[1])


def variant(name, symbols, module=True):
    """The fixture with the innermost frame of site I made SYMBOLS[I] (its
    stack and API still its own), its frames without a module when not
    MODULE."""
    d = os.path.join(tmp, name, "node7-4242")
    shutil.copytree(fx, d)
    with open(os.path.join(d, "report.json")) as f:
        rep = json.load(f)
    for s in rep["sites"]:
        if s["id"] in symbols:
            s["frames"][0]["symbol"] = symbols[s["id"]]
            for fr in s["frames"] if not module else []:
                fr["module"] = -1
    with open(os.path.join(d, "report.json"), "w") as f:
        json.dump(rep, f)
    return d


def export_variant(what, d, top="0"):
    """D exported, checked against its history with the names its CSV
    report gives; the tags and the values of its last step."""
    names = tbread.site_names_from_report(gpuspy("report", "--format", "json", "--top", "0", d).stdout)
    logdir = d + "-logs"
    r = gpuspy("export", "--tensorboard", logdir, "--top", top, d)
    files = event_files(logdir)
    check(r.returncode == 0 and len(files) == 1, f"{what}: exported", r.stderr)
    got = compare(what, files[0], fx_hist, names, "time", int(top)) if files else None
    return names, set(k for g in got or [] for k in g[2]), got


# Two sites of one headline (site 2's innermost frame made leak_driver
# too), told apart as every surface tells them (by their APIs): two tags,
# each its own site's values.  By hand from the fixture's history: at
# 12.5 s site 1 holds 3 MiB and site 2 8 MiB; the bucket has maxima 1 and
# 8 MiB.
A, B = "leak_driver (leaky) by cuMemAlloc_v2", "leak_driver (leaky) by cudaMalloc"
names, tags, got = export_variant("two sites of one headline",
                                  variant("twin", {2: "leak_driver"}))
check({names.get(1), names.get(2)} == {A, B}, "two sites of one headline: two names", names)
check(tags == {"device/0", "nvml/0", "sites/other", "sites/" + A, "sites/" + B},
      "two sites of one headline: a tag each, no #2", tags)
by_step = {g[0]: g[2] for g in got or []}
check(by_step.get(12, {}).get("sites/" + A) == 3145728
      and by_step.get(12, {}).get("sites/" + B) == 8388608
      and by_step.get(9, {}).get("sites/" + A) == 1048576
      and by_step.get(9, {}).get("sites/" + B) == 8388608,
      "two sites of one headline: each its own, in a sample and in a bucket",
      {k: (v.get("sites/" + A), v.get("sites/" + B)) for k, v in by_step.items()})
# --top 1: the higher peak's tag, the other site in other
names, tags, got = export_variant("two sites of one headline, --top 1",
                                  variant("twin1", {2: "leak_driver"}), "1")
check(tags == {"device/0", "nvml/0", "sites/other", "sites/" + B}
      and by_step and all(g[2].get("sites/other") == 1024 + by_step[g[0]].get("sites/" + A, 0)
                          for g in got or []),
      "two sites of one headline, --top 1: the higher peak's tag, the other in other", got)

# Two headlines alike for 158 bytes, then a 2-byte character: cut to 158
# bytes (before it) they would be one tag; the higher peak's (site 2's)
# stays plain, the other gets " #2".  A function named "other" (no
# module) is not the rest: "sites/other #2".
long_a, long_b = "f" * 158 + "\u00e9a", "f" * 158 + "\u00e9b"
names, tags, got = export_variant("headlines alike to the cut",
                                  variant("cut", {1: long_a, 2: long_b}))
at12 = {g[0]: g[2] for g in got or []}.get(12, {})
check(tags == {"device/0", "nvml/0", "sites/other", "sites/" + "f" * 158,
               "sites/" + "f" * 158 + " #2"}
      and at12.get("sites/" + "f" * 158) == 8388608
      and at12.get("sites/" + "f" * 158 + " #2") == 3145728,
      "headlines alike to the cut: #2 for the lower peak", (tags, at12))
names, tags, got = export_variant("a function named other",
                                  variant("other", {2: "other"}, module=False))
check({names.get(1), names.get(2)} == {"leak_driver (leaky)", "other"}
      and tags == {"device/0", "nvml/0", "sites/other", "sites/leak_driver (leaky)",
                   "sites/other #2"}
      and all(g[2].get("sites/other") == 1024 for g in got or []),
      "a function named other: sites/other #2, sites/other the rest only", (names, tags))

# 2. A real run on the fake driver: 2 MiB kept and a mark each period.
PERIODS, PERIOD_MS = 6, 400
out = os.path.join(tmp, "run")
r = subprocess.run([shapes, "marked", str(PERIODS), str(PERIOD_MS)],
                   env=dict(env, LD_PRELOAD=harness.preload(lib),
                            GPUSPY_OUTPUT_DIR=out, GPUSPY_INTERVAL="50ms"),
                   capture_output=True, text=True, timeout=120)
check(r.returncode == 0, "shapes marked ran", r.stderr)
procs = [os.path.join(out, d) for d in os.listdir(out)] if os.path.isdir(out) else []
check(len(procs) == 1, "one process directory", procs)
if procs:
    pdir = procs[0]
    with open(os.path.join(pdir, "history.jsonl")) as f:
        hist = f.read()
    with open(os.path.join(pdir, "report.json")) as f:
        leaked = json.load(f)
    leaked = sum(s["live_bytes"] for s in leaked["sites"] if s.get("kind") == "device")
    names = tbread.site_names_from_report(gpuspy("report", "--format", "json", "--top", "0", out).stdout)
    keep = [n for n in names.values() if n.startswith("keep (shapes.c:")]
    check(len(keep) == 1, "run: the leaking site by its user line, keep (shapes.c:N)", names)
    nmarks = hist.count('"event":"mark"')
    check(nmarks == PERIODS, f"run: {PERIODS} marks in the history", nmarks)
    for mode in ("time", "mark"):
        logdir = os.path.join(tmp, f"run-{mode}")
        r = gpuspy("export", "--tensorboard", logdir, "--step", mode, out)
        files = event_files(logdir)
        check(r.returncode == 0 and len(files) == 1 and r.stdout.count("\n") == 1,
              f"run --step {mode}: one file, one line said", (r.returncode, r.stderr, r.stdout))
        if not files:
            continue
        got = compare(f"run --step {mode}", files[0], hist, names, mode, 10)
        if got and keep:
            tag = "sites/" + keep[0]
            last = [g[2][tag] for g in got if tag in g[2]]
            check(all("device/0" in g[2] for g in got), f"run --step {mode}: device/0 always")
            # after the last mark only what was kept is live (the scratch
            # is freed before each mark); a second's value may hold one
            if mode == "mark":
                check(last and last[-1] == tbread.f32(leaked),
                      f"run --step mark: {tag} ends at the report's {leaked} live bytes",
                      last[-3:])
                steps = [g[0] for g in got]
                check(steps == sorted(set(steps)) and steps[-1] == PERIODS,
                      f"run --step mark: increasing steps up to {PERIODS}", steps)

    # without PATH: $GPUSPY_OUTPUT_DIR, as for report; the same file
    logdir = os.path.join(tmp, "run-default")
    r = subprocess.run([cli, "export", "--tensorboard", logdir], capture_output=True, text=True,
                       env=dict(env, GPUSPY_OUTPUT_DIR=out), timeout=60)
    a, b = event_files(logdir), event_files(os.path.join(tmp, "run-time"))
    check(r.returncode == 0 and len(a) == 1 and len(b) == 1
          and open(a[0], "rb").read() == open(b[0], "rb").read(),
          "without PATH: $GPUSPY_OUTPUT_DIR's run, the same file", (r.returncode, r.stderr))

# 2b. Ranks: a run each, rank-R, with host and pid when two share a rank;
# a history without marks under --step mark: said, all at step 0.
def copy_as(dst, pid, rank, marks=True):
    os.makedirs(dst)
    with open(os.path.join(fx, "report.json")) as f:
        rep = json.load(f)
    rep["pid"] = pid
    if rank is not None:
        rep["environment"]["RANK"] = str(rank)
    with open(os.path.join(dst, "report.json"), "w") as f:
        json.dump(rep, f)
    lines = fx_hist.split("\n")
    lines[0] = lines[0].replace('"pid":4242', f'"pid":{pid}')
    if not marks:
        lines = [x for x in lines if '"event":"mark"' not in x]
    with open(os.path.join(dst, "history.jsonl"), "w") as f:
        f.write("\n".join(lines))


ranks = os.path.join(tmp, "ranks")
copy_as(os.path.join(ranks, "node7-4242"), 4242, 0)
copy_as(os.path.join(ranks, "node7-4243"), 4243, 1)
logdir = os.path.join(tmp, "ranks-logs")
r = gpuspy("export", "--tensorboard", logdir, ranks)
check(r.returncode == 0 and sorted(os.listdir(logdir)) == ["rank-0", "rank-1"]
      and os.listdir(os.path.join(logdir, "rank-1"))
      == ["events.out.tfevents.1764510000.node7.4243.gpuspy"],
      "two ranks: rank-0 and rank-1, each its process's file",
      (r.returncode, r.stderr, os.listdir(logdir) if os.path.isdir(logdir) else None))
same = os.path.join(tmp, "same-rank")
copy_as(os.path.join(same, "node7-4242"), 4242, 3)
copy_as(os.path.join(same, "node7-4243"), 4243, 3, marks=False)
logdir = os.path.join(tmp, "same-logs")
r = gpuspy("export", "--tensorboard", logdir, "--step", "mark", same)
check(r.returncode == 0 and sorted(os.listdir(logdir)) == ["rank-3-node7-4242",
                                                           "rank-3-node7-4243"],
      "two processes of one rank: rank-3-HOST-PID each",
      (r.returncode, r.stderr, os.listdir(logdir) if os.path.isdir(logdir) else None))
check(r.stderr.count("\n") == 1 and "node7-4243" in r.stderr and "no mark" in r.stderr,
      "--step mark, a history without marks: one line says so", r.stderr)
if os.path.isdir(os.path.join(logdir, "rank-3-node7-4243")):
    f = os.path.join(logdir, "rank-3-node7-4243", os.listdir(
        os.path.join(logdir, "rank-3-node7-4243"))[0])
    check([e["step"] for e in tbread.read_events(f)[1:]] == [0],
          "--step mark without marks: one step, 0")

# 3. Hostile input and LOGDIR.
bad = os.path.join(tmp, "bad", "node7-4242")
shutil.copytree(fx, bad)
with open(os.path.join(bad, "history.jsonl"), "a") as f:
    f.write('{"t":50.0,"dev":{"0":"many"},"sites":{},"other":0}\n')
logdir = os.path.join(tmp, "bad-logs")
r = gpuspy("export", "--tensorboard", logdir, bad)
lines = r.stderr.strip().split("\n")
check(r.returncode == 2 and len(lines) == 1 and "history.jsonl" in lines[0]
      and r.stdout == "" and not os.path.exists(logdir),
      "a corrupt history: status 2, one line naming it, nothing made", (r.returncode, r.stderr))

target = os.path.join(tmp, "target")
os.mkdir(target)
link = os.path.join(tmp, "link")
os.symlink(target, link)
for given in (link, link + "/"):
    r = gpuspy("export", "--tensorboard", given, fx)
    check(r.returncode == 2 and r.stderr.count("\n") == 1 and "symbolic link" in r.stderr
          and os.listdir(target) == [],
          f"LOGDIR {given[len(tmp):]} a symbolic link: refused, nothing written",
          (r.returncode, r.stderr, os.listdir(target)))

afile = os.path.join(tmp, "afile")
open(afile, "w").close()
r = gpuspy("export", "--tensorboard", afile, fx)
check(r.returncode == 2 and r.stderr.count("\n") == 1 and "not a directory" in r.stderr
      and os.path.getsize(afile) == 0, "LOGDIR a file: refused", (r.returncode, r.stderr))

logdir = os.path.join(tmp, "runlink")
os.mkdir(logdir)
os.symlink(target, os.path.join(logdir, "node7-4242"))
r = gpuspy("export", "--tensorboard", logdir, fx)
check(r.returncode == 2 and r.stderr.count("\n") == 1 and os.listdir(target) == [],
      "a run directory under LOGDIR that is a link: refused, nothing written there",
      (r.returncode, r.stderr))

# the second process's run directory is a link: the first one's file and
# directory, made by this export, are removed again
logdir = os.path.join(tmp, "half")
os.mkdir(logdir)
os.symlink(target, os.path.join(logdir, "rank-1"))
r = gpuspy("export", "--tensorboard", logdir, ranks)
check(r.returncode == 2 and r.stderr.count("\n") == 1 and "rank-1" in r.stderr
      and os.listdir(logdir) == ["rank-1"] and os.listdir(target) == [],
      "a refused run directory: nothing of the export left, the other's removed",
      (r.returncode, r.stderr, os.listdir(logdir)))

logdir = os.path.join(tmp, "twice")
gpuspy("export", "--tensorboard", logdir, fx)
before = {p: open(p, "rb").read() for p in event_files(logdir)}
r = gpuspy("export", "--tensorboard", logdir, fx)
check(r.returncode == 2 and "exists already" in r.stderr and r.stderr.count("\n") == 1
      and {p: open(p, "rb").read() for p in event_files(logdir)} == before,
      "an export over an earlier one: refused, the earlier file unchanged", r.stderr)

for args, what in ((["export", fx], "no --tensorboard"),
                   (["export", "--tensorboard", os.path.join(tmp, "u"), "--step", "epoch", fx],
                    "--step epoch"),
                   (["export", "--tensorboard", os.path.join(tmp, "u"), "--top", "x", fx],
                    "--top x"),
                   (["export", "--tensorboard"], "--tensorboard without a value")):
    r = gpuspy(*args)
    check(r.returncode == 2 and r.stderr.count("\n") == 1 and r.stdout == ""
          and not os.path.exists(os.path.join(tmp, "u")), f"usage: {what}: status 2, one line",
          (r.returncode, r.stderr))

shutil.rmtree(tmp)
sys.exit(harness.done())
