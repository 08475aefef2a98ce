#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A run survives one bad process: a run of three processes (tests/cli/
leaker.c under 'gpuspy run' on the fake driver), one of them damaged as a
full disk, a killed writer, a newer gpuspy or a permission leaves it:

 - its report.json cut in half, torn (the start of one write and the end of
   another), of a newer format ("gpuspy-process/2"), not readable (mode
   000, read as an unprivileged user): report (text, json, html, csv, pprof,
   perfetto, collapsed), merge (text, json), diff (text, json), top and
   export --tensorboard exit 0, say on stderr in one line which process
   could not be read and why, say it in the output (text: near the top;
   JSON: "unreadable"; HTML: the page's data), and print exactly what they
   print for the run without that process (its directory hidden);
 - its history.jsonl cut inside its last record: every process read, one
   warning naming the file, the output that of the history without that
   record; of a newer format: one line naming it, the output that of the
   run without that history;
 - the gates judge what they can see (--fail-on-leak, --fail-on-growth);
   --strict makes the bad process fatal (exit 2, nothing on stdout); three
   bad processes leave nothing: exit 2, one line each.

Usage: test_read_around.py GPUSPY LIBGPUSPY FAKE_DIR LEAKER"""
import gzip, json, os, pwd, re, shutil, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tbread  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

cli, lib, fake, prog = (os.path.abspath(a) for a in sys.argv[1:5])
lib = harness.preload(lib)
env = {k: v for k, v in os.environ.items() if not k.startswith(("GPUSPY_", "LC_", "LANG"))}
env.update(LD_LIBRARY_PATH=fake, GPUSPY_INTERVAL="50ms", GPUSPY_QUIET="1", LC_ALL="C",
           GPUSPY_LIBRARY=lib)
tmp = harness.tempdir()
os.chmod(tmp, 0o755)
HAVE_GO = shutil.which("go") is not None


# --- the run: three processes of one gpuspy run -------------------------

run = os.path.join(tmp, "run")
r = subprocess.run([cli, "run", "-o", run, "--", "sh", "-c",
                    f"for k in 8 16 24; do '{prog}' 6 40 $k & done; wait"],
                   env=env, capture_output=True, text=True, timeout=120)
procs = sorted(d for d in os.listdir(run) if os.path.isdir(os.path.join(run, d)))
if not check(r.returncode == 0 and len(procs) == 3
             and all(os.path.exists(os.path.join(run, d, "report.json")) and
                     os.path.exists(os.path.join(run, d, "history.jsonl")) for d in procs),
             "three processes of one run, each with report.json and history.jsonl",
             (r.returncode, r.stderr, procs)):
    sys.exit(1)
BAD = procs[1]
bad_dir = os.path.join(run, BAD)
good_pids = sorted(int(d.rsplit("-", 1)[1]) for d in procs if d != BAD)
all_pids = sorted(int(d.rsplit("-", 1)[1]) for d in procs)
pristine = os.path.join(tmp, "pristine")
shutil.copytree(run, pristine)
# an unprivileged user, for a file of mode 000 (root reads any file)
nobody = pwd.getpwnam("nobody") if os.geteuid() == 0 else None
logn = [0]


def gpuspy(args, as_nobody=False):
    cmd = [cli] + args
    if as_nobody:
        cmd = ["setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}",
               "--clear-groups", "--"] + cmd
    return subprocess.run(cmd, env=env, capture_output=True, timeout=120, cwd=tmp)


def logdir():
    logn[0] += 1
    d = os.path.join(tmp, "logs", str(logn[0]))
    os.makedirs(os.path.dirname(d), exist_ok=True)
    os.chmod(os.path.dirname(d), 0o1777)
    return d


def html_data(out):
    m = re.search(rb'<script type="application/json" id="gpuspy-data">(.*?)</script>', out, re.S)
    return json.loads(m.group(1)) if m else None


def tb_events(d):
    """{relative path: decoded events} of every event file under D."""
    got = {}
    for root, _, names in os.walk(d):
        for n in names:
            p = os.path.join(root, n)
            got[os.path.relpath(p, d).split("/")[0]] = tbread.read_events(p)
    return got


def pprof_raw(data):
    if not HAVE_GO:
        return gzip.decompress(data)
    with tempfile.NamedTemporaryFile(suffix=".pb.gz") as f:
        f.write(data)
        f.flush()
        p = subprocess.run(["go", "tool", "pprof", "-raw", f.name], env=env,
                           capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout


NOTE = re.compile(r"^(?:OLD: |NEW: )?(\d+) of (\d+) process(?:es)? could not be read, left out "
                  r"of every figure:$")


def drop_note(text):
    """TEXT less the lines that say which processes could not be read,
    and those lines' (count, total, paths)."""
    lines, kept, said = text.split("\n"), [], []
    i = 0
    while i < len(lines):
        m = NOTE.match(lines[i])
        if m:
            i += 1
            paths = []
            while i < len(lines) and lines[i].startswith("  ") and ": " in lines[i]:
                paths.append(lines[i][2:].split(": ", 1)[0])
                i += 1
            said.append((int(m.group(1)), int(m.group(2)), paths))
            continue
        kept.append(lines[i])
        i += 1
    return "\n".join(kept), said


def drop_top_stamp(text):
    return re.sub(r"^--- gpuspy top .* ---$", "---", text, flags=re.M)


# Each command: (name, args with RUN for the run read, how to compare)
OUTPUTS = [
    ("report text", ["report", "RUN"], "text"),
    ("report json", ["report", "--format", "json", "RUN"], "json"),
    ("report html", ["report", "--format", "html", "RUN"], "html"),
    ("report csv", ["report", "--format", "csv", "RUN"], "same"),
    ("report pprof", ["report", "--format", "pprof", "RUN"], "pprof"),
    ("report perfetto", ["report", "--format", "perfetto", "RUN"], "same"),
    ("report collapsed", ["report", "--format", "collapsed", "RUN"], "same"),
    ("merge text", ["merge", "RUN"], "text"),
    ("merge json", ["merge", "--format", "json", "RUN"], "json"),
    ("diff text", ["diff", pristine, "RUN"], "text"),
    ("diff json", ["diff", "--format", "json", pristine, "RUN"], "diffjson"),
    ("top", ["top", "--count", "1", "RUN"], "top"),
    ("export tensorboard", ["export", "--tensorboard", "LOGDIR", "RUN"], "tb"),
]


def run_output(args, as_nobody=False):
    """(status, stdout, stderr text, event files) of one command."""
    ld = logdir() if "LOGDIR" in args else None
    a = [ld if x == "LOGDIR" else run if x == "RUN" else x for x in args]
    p = gpuspy(a, as_nobody)
    tb = None
    if ld:
        try:
            tb = tb_events(ld)
        except (tbread.Bad, OSError) as e:
            tb = repr(e)
    return p.returncode, p.stdout, p.stderr.decode(errors="replace"), tb


def hidden(fn):
    """FN() with the bad process's directory out of the run (a name with a
    leading dot is no process of it): what a run of the two others gives."""
    os.rename(bad_dir, os.path.join(run, "." + BAD))
    try:
        return fn()
    finally:
        os.rename(os.path.join(run, "." + BAD), bad_dir)


def compare(case, name, how, ref, got, unread_line):
    pids_read = good_pids if unread_line else all_pids
    """GOT (status, stdout, stderr, tb) against REF, the run without the
    bad process; UNREAD_LINE: whether one 'could not be read' line must be
    on stderr (else one warning)."""
    rs, rout, rerr, rtb = ref
    s, out, err, tb = got
    what = f"{case}: {name}"
    lines = err.splitlines()
    if unread_line:
        want = [x for x in lines if "could not be read:" in x]
        ok_err = (len(lines) == 1 and len(want) == 1 and bad_dir in want[0]
                  and re.search(r"1 of 3 processes could not be read: .*: \S", want[0]))
    else:
        ok_err = lines == [] or (len(lines) == 1 and "warning:" in lines[0]
                                 and os.path.join(bad_dir, "history.jsonl") in lines[0])
    check(s == 0 and rs == 0 and ok_err, f"{what}: status 0, one line naming {BAD}",
          (s, rs, err, rerr))
    if how in ("text", "top"):
        t, said = drop_note(out.decode())
        rt = rout.decode()
        if how == "top":
            t, rt = drop_top_stamp(t), drop_top_stamp(rt)
        want_said = [(1, 3, [bad_dir])] if unread_line else []
        check(said == want_said, f"{what}: the text says which process was left out", said)
        check(t == rt, f"{what}: the rest is the run without it",
              "\n".join(x for x in t.splitlines() if x not in rt.splitlines())[:1500])
    elif how in ("json", "diffjson"):
        try:
            j, rj = json.loads(out), json.loads(rout)
        except ValueError as e:
            check(False, f"{what}: JSON", e)
            return
        holder = j["new"] if how == "diffjson" else j
        un = holder.pop("unreadable", None)
        if unread_line:
            check(isinstance(un, list) and len(un) == 1 and un[0]["path"] == bad_dir
                  and un[0]["reason"], f"{what}: \"unreadable\" names it, with why", un)
        else:
            check(un is None, f"{what}: no \"unreadable\"", un)
        check(j == rj, f"{what}: the rest is the run without it")
        if how == "json" and "processes" in j:
            pids = sorted(p["pid"] for p in j["processes"])
            check(pids == pids_read, f"{what}: the processes read", pids)
    elif how == "html":
        d, rd = html_data(out), html_data(rout)
        if not check(d is not None and rd is not None, f"{what}: the page's data"):
            return
        un = d["report"].pop("unreadable", None)
        if unread_line:
            check(un and un[0]["path"] == bad_dir, f"{what}: the page says it", un)
        check(d == rd, f"{what}: the rest is the run without it")
        check(sorted(p["pid"] for p in d["processes"]) == pids_read,
              f"{what}: the processes read are drawn")
    elif how == "pprof":
        check(pprof_raw(out) == pprof_raw(rout),
              f"{what}: the profile{' (go tool pprof -raw)' if HAVE_GO else ''} is the run's "
              "without it")
    elif how == "tb":
        check(isinstance(tb, dict) and tb == rtb and len(tb) >= 2,
              f"{what}: the event files of the run without it", (tb if not isinstance(tb, dict)
                                                             else sorted(tb), sorted(rtb or {})))
    else:
        check(out == rout and len(out) > 0, f"{what}: the output is the run's without it",
              (out[:300], rout[:300]))


def damage_report(case):
    """Damage the bad process's report.json as CASE says."""
    path = os.path.join(bad_dir, "report.json")
    with open(os.path.join(pristine, BAD, "report.json"), "rb") as f:
        text = f.read()
    with open(os.path.join(pristine, BAD, "snapshot.json"), "rb") as f:
        other = f.read()
    if case == "cut in half":
        data = text[:len(text) // 2]
    elif case == "torn":
        # the first part of one write, the end of another
        data = text[:len(text) * 3 // 5] + other[len(other) * 2 // 3:]
    elif case == "of a newer format":
        data = text.replace(b'"gpuspy-process/1"', b'"gpuspy-process/2"', 1)
    else:
        data = text
    with open(path, "wb") as f:
        f.write(data)
    if case == "not readable":
        os.chmod(path, 0)


def restore():
    shutil.rmtree(run)
    shutil.copytree(pristine, run)


REASONS = {"cut in half": "cut short at byte", "torn": "invalid JSON",
           "of a newer format": "a newer gpuspy wrote it", "not readable": "Permission denied"}

for case in ("cut in half", "torn", "of a newer format", "not readable"):
    as_nobody = case == "not readable"
    if as_nobody and not nobody:
        print("skip not readable: not root, mode 000 checked by the owner")
        as_nobody = False
    restore()
    if as_nobody:
        for root, dirs, files in os.walk(tmp):
            for n in dirs + files:
                os.lchown(os.path.join(root, n), nobody.pw_uid, nobody.pw_gid)
        os.lchown(tmp, nobody.pw_uid, nobody.pw_gid)
    refs = hidden(lambda: [run_output(a, as_nobody) for _, a, _ in OUTPUTS])
    damage_report(case)
    for (name, args, how), ref in zip(OUTPUTS, refs):
        got = run_output(args, as_nobody)
        compare(case, name, how, ref, got, True)
        if name == "report text":
            check(REASONS[case] in got[2], f"{case}: the reason says what is wrong",
                  got[2])
    # the gates: judged on what could be read
    s = gpuspy(["report", "--fail-on-leak", "0", run], as_nobody)
    check(s.returncode == 1, f"{case}: --fail-on-leak 0 fails on the two read", s.returncode)
    s = gpuspy(["report", "--fail-on-leak", "1G", run], as_nobody)
    check(s.returncode == 0, f"{case}: --fail-on-leak 1G passes", s.returncode)
    s = gpuspy(["diff", "--fail-on-growth", "0", run, pristine], as_nobody)
    check(s.returncode == 1, f"{case}: diff --fail-on-growth: the third process is growth",
          s.returncode)
    s = gpuspy(["diff", "--fail-on-growth", "0", pristine, run], as_nobody)
    check(s.returncode == 0, f"{case}: diff --fail-on-growth: less is no growth",
          (s.returncode, s.stderr))
    # --strict: any process that cannot be read is fatal
    for args in (["report", "--strict", run], ["merge", "--strict", run],
                 ["report", "--strict", "--format", "csv", run],
                 ["diff", "--strict", pristine, run],
                 ["export", "--strict", "--tensorboard", logdir(), run]):
        s = gpuspy(args, as_nobody)
        err = s.stderr.decode(errors="replace").splitlines()
        check(s.returncode == 2 and s.stdout == b"" and len(err) == 1 and bad_dir in err[0],
              f"{case}: {' '.join(args[:2])}: status 2, nothing on stdout, one line",
              (s.returncode, err, s.stdout[:200]))
    if as_nobody:
        for root, dirs, files in os.walk(tmp):
            for n in dirs + files:
                os.lchown(os.path.join(root, n), 0, 0)
        os.lchown(tmp, 0, 0)

# every process bad: nothing usable is left
restore()
for d in procs:
    with open(os.path.join(run, d, "report.json"), "r+b") as f:
        f.truncate(100)
for args in (["report", run], ["report", "--format", "json", run], ["merge", run],
             ["diff", pristine, run], ["top", "--count", "1", run],
             ["export", "--tensorboard", logdir(), run]):
    s = gpuspy(args)
    err = s.stderr.decode(errors="replace").splitlines()
    named = procs[:1] if args[0] == "top" else procs
    check(s.returncode == 2 and s.stdout == b"" and len(err) == len(named)
          and all(os.path.join(run, d) in s.stderr.decode() for d in named),
          f"all three bad: {args[0]} exits 2, one line per process (top: the first)",
          (s.returncode, err))

# history.jsonl cut inside its last record: every process, one warning
HIST_OUTPUTS = [o for o in OUTPUTS if o[0] in ("report text", "report json", "report csv",
                                               "report perfetto", "report html", "top",
                                               "export tensorboard")]
restore()
hist = os.path.join(bad_dir, "history.jsonl")
with open(hist, "rb") as f:
    h = f.read()
last = h.rstrip(b"\n").rfind(b"\n") + 1
with open(hist, "wb") as f:
    f.write(h[:last])
refs = [run_output(a) for _, a, _ in HIST_OUTPUTS]
with open(hist, "wb") as f:
    f.write(h[:last] + h[last:last + (len(h) - last) // 2])
for (name, args, how), ref in zip(HIST_OUTPUTS, refs):
    got = run_output(args)
    compare("history cut in its last record", name, how, ref, got, False)
    if name != "top":
        check(len(got[2].splitlines()) == 1 and "last record is cut short" in got[2],
              f"history cut in its last record: {name}: one warning naming the file",
              got[2])

# history.jsonl of a newer format: the others' histories are read
restore()
with open(hist, "rb") as f:
    h = f.read()
os.remove(hist)
refs = [run_output(a) for _, a, _ in HIST_OUTPUTS]
with open(hist, "wb") as f:
    f.write(h.replace(b'"gpuspy-history/1"', b'"gpuspy-history/2"', 1))
for (name, args, how), ref in zip(HIST_OUTPUTS, refs):
    got = run_output(args)
    compare("history of a newer format", name, how, ref, got, False)
    if name != "top":
        check(len(got[2].splitlines()) == 1 and "unsupported format" in got[2],
              f"history of a newer format: {name}: one line naming the file", got[2])
s = gpuspy(["report", "--strict", "--format", "csv", run])
check(s.returncode == 2 and s.stdout == b"" and hist in s.stderr.decode(),
      "history of a newer format: --strict: status 2, nothing on stdout", s.stderr)

shutil.rmtree(tmp, ignore_errors=True)
sys.exit(harness.done())
