#!/usr/bin/env python3
"""The history of live bytes (history.jsonl, gpuspy-history/1) on the fake
driver, read back by 'gpuspy report --format csv':
 - a program that leaks 1 MiB per step, sampled every 20 ms: the leaking
   site's series rises to its 30 MiB, the site that allocates and frees
   stays at 0 between steps, the device's series holds both;
 - a run killed with SIGKILL: the history is readable and has samples up
   to its last interval before the kill;
 - marks and on-demand snapshots are points on it;
 - a run of two processes prints the rows of both.
Usage: history.py LIBGPUSPY GPUSPY FAKE_DIR GROWTH_PROGRAM API_PROGRAM"""
import csv, glob, io, json, os, signal, subprocess, sys, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

lib, cli, fake, prog, api = sys.argv[1:6]
lib = harness.preload(lib)
env = harness.clean_env(fake, GPUSPY_INTERVAL="20ms", GPUSPY_QUIET="1")
MiB = 1 << 20


def rows_of(path):
    r = subprocess.run([cli, "report", "--format", "csv", path], capture_output=True, text=True)
    check(r.returncode == 0 and r.stderr == "", f"report --format csv: {r.returncode} {r.stderr}")
    return list(csv.DictReader(io.StringIO(r.stdout)))


def series(rows, label_has):
    return [(float(x["t1"]), int(x["last"])) for x in rows
            if x["series"].startswith("#") and label_has in x["label"]]


# 1. 30 steps of 60 ms, a sample every 20 ms.
out = harness.tempdir()
r = subprocess.run([prog, "30", "60"], env=dict(env, LD_PRELOAD=lib, GPUSPY_OUTPUT_DIR=out),
                   capture_output=True, text=True, timeout=60)
check(r.returncode == 0, "the program ran")
rows = rows_of(out)
leak, churn = series(rows, "leak_step"), series(rows, "churn_step")
check(len(leak) >= 50, f"{len(leak)} samples of leak_step")
check(all(b[1] >= a[1] for a, b in zip(leak, leak[1:])) and leak[-1][1] == 30 * MiB
      and leak[0][1] <= 3 * MiB, f"leak_step rises to 30 MiB: {leak[0]} .. {leak[-1]}")
check(churn and max(v for _, v in churn) <= 8 * MiB, "churn_step holds at most its 8 MiB")
dev = [int(x["last"]) for x in rows if x["series"] == "device:0"]
check(dev and max(dev) >= 30 * MiB, f"device 0's series: up to {max(dev) if dev else 0}")

# 2. SIGKILL halfway: the history is there up to the last interval.
out = harness.tempdir()
p = subprocess.Popen([prog, "40", "60", "hang"],
                     env=dict(env, LD_PRELOAD=lib, GPUSPY_OUTPUT_DIR=out),
                     stdout=subprocess.PIPE, text=True)
p.stdout.readline()  # "halfway"


def halfway_sampled():
    """Whether history.jsonl has a sample of the halfway state: 20 steps
    of leak_step's 1 MiB and the warm pool's 5 MiB on device 0 (before the
    20th step there are 24 MiB, during one 33)."""
    return any(x.get("dev", {}).get("0") == 25 * MiB
               for d in harness.process_dirs(out) for x in harness.history_lines(d))


# killed once the snapshot thread has sampled the halfway state, not after
# a time that a loaded machine may not keep
harness.wait_for(halfway_sampled, proc=p, every=0.01)
killed = time.time()
p.send_signal(signal.SIGKILL)
p.wait()
d = glob.glob(os.path.join(out, "*"))[0]
header = json.loads(open(os.path.join(d, "history.jsonl")).readline())
rows = rows_of(out)
leak = series(rows, "leak_step")
last = header["start"] + leak[-1][0] if leak else 0
check(leak and leak[-1][1] == 20 * MiB, "the killed run's leak_step holds its 20 steps' 20 MiB")
check(killed - last < 0.25, f"the last sample {killed - last:.3f} s before the kill")

# 3. Marks and on-demand snapshots are points on it.
out = harness.tempdir()
r = subprocess.run([api], env=dict(env, LD_PRELOAD=lib, GPUSPY_OUTPUT_DIR=out),
                   capture_output=True, text=True, timeout=60)
rows = rows_of(out)
marks = [x["label"] for x in rows if x["series"] == "mark"]
snaps = [(x["n"], x["label"]) for x in rows if x["series"] == "snapshot"]
check(r.returncode == 0 and marks[:2] == ["epoch 1", "epoch 2"], f"marks: {marks}")
check(snaps and snaps[0] == ("1", "after epoch 1"), f"snapshots: {snaps}")
# 4. Two processes of one run (as a launcher's children inherit it): the
# rows of both, each with its own pid.
out = harness.tempdir()
pids = set()
one_run = dict(GPUSPY_RUN_ID="20261201T000000Z-growth-1", GPUSPY_RUN_DIR=out)
for _ in range(2):
    p = subprocess.run([prog, "10", "40"],
                       env=dict(env, LD_PRELOAD=lib, GPUSPY_OUTPUT_DIR=out, **one_run),
                       capture_output=True, text=True, timeout=60)
rows = rows_of(out)
pids = {x["pid"] for x in rows}
check(len(pids) == 2 and all(series([x for x in rows if x["pid"] == p], "leak_step")
                             for p in pids), f"a run of two processes: {sorted(pids)}")
sys.exit(harness.done())
