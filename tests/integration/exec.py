#!/usr/bin/env python3
"""A process whose programs exec one another, each allocating, on the fake
driver: program 1 leaks 3 MiB, execs program 2 (the same pid), which leaks
6 MiB and execs program 3, which leaks 9 MiB and exits.  Each program
execs only once its snapshot.json and history.jsonl hold its leak.
Checks that no program's files are lost: the earlier programs' directories
are kept as <host>-<pid>.image1 and .image2 (libgpuspy(7), EXEC), each with
its own snapshot and history, the last program's <host>-<pid> has its
report; that gpuspy report reads the three as processes of their own (the
text, JSON and CSV of the history), says the first two were replaced by
exec, and counts each one's leak once.
Usage: exec.py LIBGPUSPY GPUSPY FAKE_DIR EXEC_IMAGE"""
import csv, glob, io, json, os, subprocess, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

lib, cli, fake, prog = sys.argv[1:5]
lib = harness.preload(lib)
env = harness.clean_env()
MiB = 1 << 20
UNIT = 3 * MiB
N = 3


def holds(pdir, live):
    """Whether PDIR's snapshot.json has LIVE bytes leaked and its
    history.jsonl a sample of LIVE bytes on device 0."""
    try:
        with open(os.path.join(pdir, "snapshot.json")) as f:
            snap = json.load(f)
        with open(os.path.join(pdir, "history.jsonl")) as f:
            hist = [json.loads(x) for x in f if x.endswith("\n")]
    except (OSError, ValueError):
        return False
    return snap.get("leaked", {}).get("bytes") == live and any(
        h.get("dev", {}).get("0") == live for h in hist)


out = harness.tempdir()
p = subprocess.Popen([prog, str(UNIT), "1", str(N)],
                     env=dict(env, LD_LIBRARY_PATH=fake, LD_PRELOAD=lib, GPUSPY_OUTPUT_DIR=out,
                              GPUSPY_INTERVAL="20ms", GPUSPY_QUIET="1"),
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                     text=True)
pid = None
for k in range(1, N + 1):
    line = p.stdout.readline()
    check(line.startswith(f"exec_image: program {k} of pid "), f"program {k}: {line.strip()}")
    got = int(line.split()[5]) if line.startswith("exec_image: program") else -1
    check(pid is None or got == pid, f"program {k} runs as pid {got}, the same process")
    pid = pid or got
    if k == N:
        break
    # waits on the library's writes, not on a time: the snapshot thread
    # writes every 20 ms
    dirs = harness.wait_for(lambda: [d for d in glob.glob(os.path.join(out, f"*-{pid}"))
                                     if holds(d, k * UNIT)], timeout=60, proc=p)
    check(dirs and holds(dirs[0], k * UNIT),
          f"program {k}'s snapshot and history hold its {k * UNIT} bytes")
    p.stdin.write("go\n")
    p.stdin.flush()
_, err = p.communicate(timeout=60)
check(p.returncode == 0, f"the last program exited {p.returncode}")
# GPUSPY_QUIET keeps the exit summary off; a warning would show
check(err == "", f"nothing on stderr: {err!r}")

# the files: every program's, each in a directory of its own
names = sorted(os.listdir(out))
last = [n for n in names if n.endswith(f"-{pid}")]
check(len(last) == 1, f"one <host>-{pid}: {names}")
host = last[0][: -len(f"-{pid}")] if last else "?"
want = [f"{host}-{pid}", f"{host}-{pid}.image1", f"{host}-{pid}.image2"]
check(names == want, f"the run directory holds {want}: {names}")
for k in (1, 2):
    d = os.path.join(out, f"{host}-{pid}.image{k}")
    check(holds(d, k * UNIT), f"{os.path.basename(d)}: its snapshot and history hold "
          f"program {k}'s {k * UNIT} bytes")
    check(not os.path.exists(os.path.join(d, "report.json")),
          f"{os.path.basename(d)}: no report.json (an exec runs no exit handler)")
with open(os.path.join(out, f"{host}-{pid}", "report.json")) as f:
    rep = json.load(f)
check(rep["leaked"]["bytes"] == N * UNIT, f"the last program's report: {rep['leaked']['bytes']} "
      f"bytes leaked, its own {N * UNIT}")
with open(os.path.join(out, f"{host}-{pid}", "history.jsonl")) as f:
    samples = [json.loads(x) for x in f if '"dev"' in x]
check(samples and all(s["dev"].get("0", 0) <= N * UNIT for s in samples)
      and not any(s["dev"].get("0") in (UNIT, 2 * UNIT) for s in samples),
      "the last program's history is its own: no sample of the earlier programs' bytes")

# the reader
r = subprocess.run([cli, "report", "--format", "json", out], capture_output=True, text=True)
check(r.returncode == 0 and r.stderr == "", f"report --format json: {r.returncode} {r.stderr}")
j = json.loads(r.stdout) if r.returncode == 0 else {"processes": []}
procs = {os.path.basename(x["path"]): x for x in j["processes"]}
check(sorted(procs) == want, f"three processes read: {sorted(procs)}")
for k in (1, 2):
    x = procs.get(f"{host}-{pid}.image{k}", {})
    check(x.get("state") == "exec" and x.get("image") == k and x.get("pid") == pid,
          f"image{k}: state exec, image {k}, pid {pid}: {x.get('state')} {x.get('image')} "
          f"{x.get('pid')}")
    check(x.get("leaked", {}).get("bytes") == k * UNIT,
          f"image{k}: {x.get('leaked', {}).get('bytes')} bytes live at its last snapshot")
x = procs.get(f"{host}-{pid}", {})
check("state" not in x and x.get("leaked", {}).get("bytes") == N * UNIT,
      f"the last program: exited, {x.get('leaked', {}).get('bytes')} bytes leaked")
check(j.get("leaked", {}).get("bytes") == 6 * UNIT,
      f"the run: {j.get('leaked', {}).get('bytes')} bytes, each program's leak once")

r = subprocess.run([cli, "report", out], capture_output=True, text=True)
check(r.returncode == 0 and r.stderr == "", f"report: {r.returncode} {r.stderr}")
for k in (1, 2):
    check(f"replaced by exec (program {k} of pid {pid}" in r.stdout,
          f"the text says program {k} was replaced by exec")
check("did not exit:     2 processes (2 replaced by exec)" in r.stdout,
      "the summary counts the two programs replaced by exec")

r = subprocess.run([cli, "report", "--format", "html", out], capture_output=True, text=True)
check(r.returncode == 0 and r.stderr == "", f"report --format html: {r.returncode} {r.stderr}")
check(r.returncode == 0 and f"{host}-{pid}.image2" in r.stdout,
      "the HTML page's data holds the programs replaced by exec")

r = subprocess.run([cli, "report", "--format", "csv", out], capture_output=True, text=True)
check(r.returncode == 0 and r.stderr == "", f"report --format csv: {r.returncode} {r.stderr}")
rows = list(csv.DictReader(io.StringIO(r.stdout))) if r.returncode == 0 else []
for k in (1, 2, 3):
    check(any(x["series"] == "device:0" and int(x["last"]) == k * UNIT for x in rows),
          f"the history's CSV has program {k}'s device series at {k * UNIT} bytes")

subprocess.run(["rm", "-rf", out])
sys.exit(harness.done())
