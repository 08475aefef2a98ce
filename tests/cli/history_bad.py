#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""'gpuspy report --format csv' on history.jsonl (docs/format.md,
"gpuspy-history/1"): a valid history prints its series; a last line cut
short by a kill is dropped with one warning; each of 25+ corrupted histories
(the only one of the run) gives exit
status 2, exactly one line on stderr naming the file, and nothing on stdout
(among them 30 corrupted sections of the frameworks' counters).

    history_bad.py GPUSPY FIXTURES

The histories are written here, beside a copy of the valid fixture
process/node7-4242/report.json (pid 4242, sites 1 and 2 of device memory).
"""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

cli, fixtures = sys.argv[1:3]


HEADER = {"format": "gpuspy-history/1", "pid": 4242, "start": 1764510000.5, "interval_s": 1.0,
          "recent": 256, "buckets": 256, "top": 32, "max_sites": 64}


def line(o):
    return json.dumps(o, separators=(",", ":")) + "\n"


def sample(t, a, b=0, other=0):
    return line({"t": t, "dev": {"0": a + b}, "sites": {"1": a, "2": b}, "other": other})


VALID = (line(HEADER) + line({"site": 1, "kind": "device"}) + line({"site": 2, "kind": "device"})
         + line({"t0": 0.5, "t1": 3.5, "n": 4, "dev": {"0": [0, 9 << 20, 3 << 20]},
                 "sites": {"1": [0, 9 << 20, 3 << 20]}, "other": [0, 0, 0]})
         + sample(4.5, 4 << 20) + line({"t": 4.5, "event": "mark", "label": "epoch, \"1\""})
         + sample(5.5, 5 << 20, 1 << 20) + line({"t": 5.6, "event": "oom", "n": 1})
         + line({"t": 6.5, "dev": {"0": 6 << 20, "-1": 0}, "sites": {"1": 6 << 20}, "other": 0,
                 "outside": {"0": 7 << 20}}))

# the PyTorch view's members: the pool per device, a line's series
# declared by a torch line with its frames, the rest as torch_other
FRAMES = [{"file": "/src/train.py", "function": "step", "line": 41},
          {"file": "/src/train.py", "function": "<module>", "line": 60}]


def tsample(t, live, reserved=16 << 20, allocated=None, other=0):
    return line({"t": t, "dev": {"0": reserved}, "sites": {}, "other": 0,
                 "pool_reserved": {"0": reserved},
                 "pool_allocated": {"0": live if allocated is None else allocated},
                 "torch": {"3": live}, "torch_other": other})


TORCH = (line({"torch": 3, "frames": FRAMES}) + line({"torch": 0, "frames": []})
         + line({"t0": 7.0, "t1": 7.5, "n": 2, "dev": {"0": [1, 2, 2]}, "sites": {},
                 "other": [0, 0, 0], "pool_reserved": {"0": [1, 2, 2]},
                 "pool_allocated": {"0": [1, 1, 1]}, "torch": {"3": [1, 1, 1], "0": [0, 0, 0]},
                 "torch_other": [0, 0, 0]})
         + tsample(8.0, 1 << 20) + tsample(9.0, 2 << 20, other=5))

# the frameworks' own counters: per framework, place and counter
FW = {"pytorch": {"0": {"allocated": 3 << 20, "reserved": 8 << 20, "peak_allocated": 5 << 20}},
      "cupy": {"0": {"allocated": 1, "reserved": 2, "free_blocks": 3},
               "host": {"reserved": 4, "free_blocks": 1}}}


def fsample(t, fw):
    return line({"t": t, "dev": {}, "sites": {}, "other": 0, "fw": fw})


def fbucket(t, fw):
    return line({"t0": t, "t1": t + 0.5, "n": 2, "dev": {}, "sites": {}, "other": [0, 0, 0],
                 "fw": fw})


FWB = {"jax": {"1": {"allocated": [1, 5, 2], "limit": [9, 9, 9]}}}
FWOK = fbucket(7.0, FWB) + fsample(8.0, FW)


def fw_with(path, value):
    """FW with FW[a][b][c] (path "a.b.c") set to VALUE."""
    d = json.loads(json.dumps(FW))
    o, keys = d, path.split(".")
    for k in keys[:-1]:
        o = o[k]
    o[keys[-1]] = value
    return d


tmp = harness.tempdir()
proc = os.path.join(tmp, "node7-4242")
os.mkdir(proc)
shutil.copy(os.path.join(fixtures, "process", "node7-4242", "report.json"), proc)
hist = os.path.join(proc, "history.jsonl")


def run(content):
    with open(hist, "wb") as f:
        f.write(content if isinstance(content, bytes) else content.encode())
    return subprocess.run([cli, "report", "--format", "csv", proc], capture_output=True)


# the valid history, and one killed in the middle of a line
r = run(VALID)
rows = r.stdout.decode().splitlines()
check(r.returncode == 0 and r.stderr == b"", f"valid: status {r.returncode}, {r.stderr[:200]}")
check(rows[0] == "host,pid,rank,t0,t1,n,series,min,max,last,label", "the CSV header")
# the process's site 1 (leak_driver) is the report's #1
s1 = [x.split(",") for x in rows[1:] if ",#1," in x]
check([int(x[9]) for x in s1] == [3 << 20, 4 << 20, 5 << 20, 6 << 20] and s1[0][5] == "4"
      and int(s1[0][8]) == 9 << 20, f"site 1's series, the bucket's peak kept: {s1}")
check(any(',mark,,,,"epoch, ""1"""' in x for x in rows), "a mark, its label quoted")
check(any(",nvml:0," in x for x in rows) and any(",device:-1," in x for x in rows),
      "NVML's and the unknown device's series")
r = run(VALID + TORCH)
rows_t = r.stdout.decode().splitlines()
t3 = [x.split(",") for x in rows_t if ",torch:3," in x]
check(r.returncode == 0 and r.stderr == b"" and [int(x[9]) for x in t3] == [1, 1 << 20, 2 << 20]
      and all(x[10] == "/src/train.py:41" for x in t3),
      f"a PyTorch view's line: its series, labelled FILE:LINE: {t3}")
check(any(",torch:0,0,0,0," in x and x.endswith(",") for x in rows_t)
      and sum(",pool_reserved:0," in x for x in rows_t) == 3
      and sum(",pool_allocated:0," in x for x in rows_t) == 3
      and any(",torch_other,5,5,5," in x for x in rows_t),
      "... one without frames, unlabelled; the pool's series; torch_other")
r = run(VALID + FWOK)
fwrows = {}
for x in r.stdout.decode().splitlines():
    f = x.split(",")
    if f[6].startswith("fw:"):
        fwrows.setdefault(f[6], []).append(f[7:10])
check(r.returncode == 0 and r.stderr == b""
      and fwrows.get("fw:pytorch:0:allocated") == [[str(3 << 20)] * 3]
      and fwrows.get("fw:cupy:host:free_blocks") == [["1"] * 3]
      and fwrows.get("fw:jax:1:allocated") == [["1", "5", "2"]] and len(fwrows) == 10,
      f"the frameworks' counters: a series each, fw:FRAMEWORK:PLACE:COUNTER: {fwrows}")
r = run(VALID + '{"t":7.5,"dev":{"0":1')
err = r.stderr.decode().splitlines()
check(r.returncode == 0 and len(r.stdout.decode().splitlines()) == len(rows)
      and len(err) == 1 and err[0].startswith("gpuspy report: warning: " + hist + ": ")
      and "last record is cut short" in err[0],
      f"a last line without its newline is dropped, with one warning: {err}")

BAD = {
    "empty file": "",
    "only a cut header": line(HEADER)[:-5],
    "missing header": VALID.split("\n", 1)[1],
    "wrong format id": VALID.replace("gpuspy-history/1", "gpuspy-history/2"),
    "format not a string": VALID.replace('"gpuspy-history/1"', "1"),
    "pid of another process": VALID.replace('"pid":4242', '"pid":4243'),
    "pid zero": VALID.replace('"pid":4242', '"pid":0'),
    "negative interval": VALID.replace('"interval_s":1.0', '"interval_s":-1.0'),
    "a second header": VALID + line(HEADER),
    "bad JSON line": VALID + '{"t": 9.0, "dev": {\n',
    "not an object": VALID + "[1,2,3]\n",
    "empty line": VALID + "\n" + sample(9.0, 1),
    "NUL byte": VALID[:200] + "\0" + VALID[201:],
    "NUL byte in the cut last line": VALID + '{"t":\0',
    "negative bytes": VALID + sample(9.0, -5),
    "negative other": VALID + sample(9.0, 5, other=-1),
    "bytes a string": VALID + line({"t": 9.0, "dev": {"0": "5"}, "sites": {}, "other": 0}),
    "unknown series id": VALID + line({"t": 9.0, "dev": {}, "sites": {"7": 1}, "other": 0}),
    "site id not a number": VALID + line({"t": 9.0, "dev": {}, "sites": {"x": 1}, "other": 0}),
    "device out of range": VALID + line({"t": 9.0, "dev": {"64": 1}, "sites": {}, "other": 0}),
    "device key with a leading zero": VALID + line({"t": 9.0, "dev": {"01": 1}, "sites": {},
                                                    "other": 0}),
    "site declared twice": VALID + line({"site": 1, "kind": "device"}),
    "site of an unknown kind": VALID + line({"site": 9, "kind": "vram"}),
    "65 site series": VALID + "".join(line({"site": 100 + i, "kind": "device"})
                                      for i in range(63)),
    "t going backwards": VALID + sample(6.0, 1),
    "event before the last sample": VALID + line({"t": 6.0, "event": "mark"}),
    "bucket t0 before the last sample": VALID + line({"t0": 6.0, "t1": 9.0, "n": 2, "dev": {},
                                                      "sites": {}, "other": [0, 0, 0]}),
    "bucket t1 before t0": VALID + line({"t0": 9.0, "t1": 8.0, "n": 2, "dev": {}, "sites": {},
                                         "other": [0, 0, 0]}),
    "bucket last above max": VALID + line({"t0": 9.0, "t1": 9.5, "n": 2, "dev": {}, "sites": {},
                                           "other": [0, 1, 2]}),
    "bucket of two values": VALID + line({"t0": 9.0, "t1": 9.5, "n": 2, "dev": {}, "sites": {},
                                          "other": [0, 1]}),
    "bucket of no interval": VALID + line({"t0": 9.0, "t1": 9.5, "n": 0, "dev": {}, "sites": {},
                                           "other": [0, 0, 0]}),
    "huge integer": VALID + '{"t":9.0,"dev":{"0":99999999999999999999999},"sites":{},"other":0}\n',
    "huge time": VALID + '{"t":1e300,"dev":{},"sites":{},"other":0}\n',
    "time overflowing a double": VALID + '{"t":1e999,"dev":{},"sites":{},"other":0}\n',
    "negative time": VALID.replace('"t0":0.5', '"t0":-0.5'),
    "a line of 10 MB": VALID + '{"t":9.0,"event":"mark","label":"' + "x" * (10 << 20) + '"}\n',
    "unknown member": VALID + line({"t": 9.0, "dev": {}, "sites": {}, "other": 0, "x": 1}),
    "duplicate key": VALID + '{"t":9.0,"t":9.5,"dev":{},"sites":{},"other":0}\n',
    "missing other": VALID + line({"t": 9.0, "dev": {}, "sites": {}}),
    "unknown event": VALID + line({"t": 9.0, "event": "reboot"}),
    "event number zero": VALID + line({"t": 9.0, "event": "oom", "n": 0}),
    "label not a string": VALID + line({"t": 9.0, "event": "mark", "label": 5}),
    "not a history line": VALID + line({"hello": 1}),
    # the PyTorch view's members
    "torch line undeclared": VALID + line({"t": 9.0, "dev": {}, "sites": {}, "other": 0,
                                           "torch": {"4": 1}}),
    "torch line declared twice": VALID + TORCH + line({"torch": 3, "frames": []}),
    "torch line id negative": VALID + line({"torch": -1, "frames": []}),
    "torch line id a string": VALID + line({"torch": "3", "frames": []}),
    "torch line without frames": VALID + line({"torch": 3}),
    "torch frames not an array": VALID + line({"torch": 3, "frames": {"file": "a"}}),
    "torch frame not an object": VALID + line({"torch": 3, "frames": [3]}),
    "torch frame without a line": VALID + line({"torch": 3, "frames": [{"file": "a",
                                                                         "function": "f"}]}),
    "torch frame line negative": VALID + line({"torch": 3, "frames": [
        {"file": "a", "function": "f", "line": -2}]}),
    "torch frame unknown member": VALID + line({"torch": 3, "frames": [
        dict(FRAMES[0], address=5)]}),
    "torch line unknown member": VALID + line({"torch": 3, "frames": [], "kind": "device"}),
    "65 torch series": VALID + "".join(line({"torch": i, "frames": []}) for i in range(65)),
    "torch line id not a number": VALID + TORCH + line({"t": 10.0, "dev": {}, "sites": {},
                                                        "other": 0, "torch": {"x": 1}}),
    "torch not an object in a sample": VALID + TORCH + line({"t": 10.0, "dev": {}, "sites": {},
                                                             "other": 0, "torch": 3}),
    "pool bytes negative": VALID + TORCH + tsample(10.0, 1, allocated=-1),
    "pool bytes a float": VALID + TORCH + tsample(10.0, 1).replace('"pool_reserved":{"0":16777216}',
                                                                   '"pool_reserved":{"0":1.5}'),
    "pool device out of range": VALID + TORCH + tsample(10.0, 1).replace(
        '"pool_allocated":{"0"', '"pool_allocated":{"64"'),
    "pool device -1": VALID + TORCH + tsample(10.0, 1).replace('"pool_reserved":{"0"',
                                                               '"pool_reserved":{"-1"'),
    "pool not an object": VALID + TORCH + tsample(10.0, 1).replace(
        '"pool_reserved":{"0":16777216}', '"pool_reserved":[16777216]'),
    "torch_other negative": VALID + TORCH + tsample(10.0, 1, other=-3),
    "torch_other a bucket in a sample": VALID + TORCH + tsample(10.0, 1).replace(
        '"torch_other":0', '"torch_other":[0,0,0]'),
    "torch bucket last above max": VALID + TORCH + line(
        {"t0": 10.0, "t1": 11.0, "n": 2, "dev": {}, "sites": {}, "other": [0, 0, 0],
         "torch": {"3": [0, 1, 2]}}),
    "pool bucket of two values": VALID + TORCH + line(
        {"t0": 10.0, "t1": 11.0, "n": 2, "dev": {}, "sites": {}, "other": [0, 0, 0],
         "pool_reserved": {"0": [0, 1]}}),
    # the frameworks' counters
    "fw not an object": VALID + fsample(9.0, [1]),
    "fw null": VALID + fsample(9.0, None),
    "fw empty": VALID + fsample(9.0, {}),
    "fw unknown framework": VALID + fsample(9.0, {"tensorflow": FW["pytorch"]}),
    "fw framework name capitalised": VALID + fsample(9.0, {"PyTorch": FW["pytorch"]}),
    "fw framework not an object": VALID + fsample(9.0, {"pytorch": 5}),
    "fw framework empty": VALID + fsample(9.0, {"pytorch": {}}),
    "fw device 16": VALID + fsample(9.0, {"pytorch": {"16": {"allocated": 1}}}),
    "fw device -1": VALID + fsample(9.0, {"pytorch": {"-1": {"allocated": 1}}}),
    "fw device with a leading zero": VALID + fsample(9.0, {"pytorch": {"01": {"allocated": 1}}}),
    "fw device a name": VALID + fsample(9.0, {"pytorch": {"gpu0": {"allocated": 1}}}),
    "fw place Host": VALID + fsample(9.0, {"cupy": {"Host": {"reserved": 1}}}),
    "fw place not an object": VALID + fsample(9.0, {"pytorch": {"0": 5}}),
    "fw place empty": VALID + fsample(9.0, {"pytorch": {"0": {}}}),
    "fw unknown counter": VALID + fsample(9.0, fw_with("pytorch.0.used", 1)),
    "fw counter negative": VALID + fsample(9.0, fw_with("pytorch.0.allocated", -1)),
    "fw counter a float": VALID + fsample(9.0, fw_with("pytorch.0.reserved", 1.5)),
    "fw counter a string": VALID + fsample(9.0, fw_with("cupy.host.reserved", "4")),
    "fw counter true": VALID + fsample(9.0, fw_with("cupy.0.free_blocks", True)),
    "fw counter null": VALID + fsample(9.0, fw_with("cupy.0.free_blocks", None)),
    "fw counter a bucket's in a sample": VALID + fsample(9.0, fw_with("pytorch.0.allocated",
                                                                      [1, 1, 1])),
    "fw counter a sample's in a bucket": VALID + fbucket(9.0, {"jax": {"1": {"allocated": 1}}}),
    "fw bucket min above max": VALID + fbucket(9.0, {"jax": {"1": {"allocated": [5, 1, 1]}}}),
    "fw bucket last below min": VALID + fbucket(9.0, {"jax": {"1": {"limit": [5, 9, 4]}}}),
    "fw bucket of two values": VALID + fbucket(9.0, {"jax": {"1": {"limit": [5, 9]}}}),
    "fw bucket of strings": VALID + fbucket(9.0, {"jax": {"1": {"limit": ["5", "9", "9"]}}}),
    "fw counter huge": VALID + fsample(9.0, FW).replace(str(3 << 20), "9" * 30),
    "fw duplicate counter": VALID + fsample(9.0, FW).replace('"reserved":8388608',
                                                             '"allocated":8388608'),
    "fw 65 series": VALID + fsample(9.0, {"pytorch": {str(d): {c: 1 for c in (
        "allocated", "reserved", "peak_allocated", "peak_reserved", "limit")}
        for d in range(13)}}),
    "fw in an event": VALID + line({"t": 9.0, "event": "mark", "fw": FW}),
    "fw in a site line": VALID + line({"site": 9, "kind": "device", "fw": FW}),
    "invalid UTF-8": VALID + '{"t":9.0,"event":"mark","label":"\xff"}\n'.encode("latin-1").decode(
        "latin-1"),
}

for what, content in BAD.items():
    data = content.encode("latin-1") if what == "invalid UTF-8" else content.encode()
    r = run(data)
    err = r.stderr.decode(errors="replace").splitlines()
    check(r.returncode == 2 and r.stdout == b"" and len(err) == 1 and hist in err[0]
          and err[0].startswith("gpuspy report: "), f"{what}: status {r.returncode}, {err[:2]}")

# a line that is not JSON is never quoted: the message says where, not what
for what, content in (("not JSON, quoted", "SECRETWORD=hunter2\n"),
                      ("a bare word, quoted", '{"t": hunter2}\n'),
                      ("a missing comma, quoted", '["SECRETWORD" "hunter2"]\n')):
    r = run(VALID + content)
    err = r.stderr.decode(errors="replace")
    check(r.returncode == 2 and len(err.splitlines()) == 1 and hist in err
          and "SECRETWORD" not in err and "hunter2" not in err, f"{what}: {err.strip()}")

# a history that is not a regular file
os.remove(hist)
os.mkfifo(hist)
r = subprocess.run([cli, "report", "--format", "csv", proc], capture_output=True, timeout=10)
check(r.returncode == 2 and len(r.stderr.splitlines()) == 1 and r.stdout == b"",
      f"a FIFO: status {r.returncode}")
os.remove(hist)
r = subprocess.run([cli, "report", "--format", "csv", proc], capture_output=True)
check(r.returncode == 0 and r.stdout.decode().count("\n") == 1,
      "no history.jsonl: the CSV header only")
r = subprocess.run([cli, "merge", "--format", "csv", proc], capture_output=True)
check(r.returncode == 2, "merge has no csv format")

# a run directory: every process's rows, with its pid and rank; one bad
# history among them refuses the whole run
run_dir = os.path.join(tmp, "ranks")
shutil.copytree(os.path.join(fixtures, "ranks"), run_dir)
procs = sorted(os.listdir(run_dir))
for name in procs:
    pid = int(name.rsplit("-", 1)[1])
    with open(os.path.join(run_dir, name, "history.jsonl"), "w") as f:
        f.write(VALID.replace('"pid":4242', f'"pid":{pid}'))
r = subprocess.run([cli, "report", "--format", "csv", run_dir], capture_output=True, text=True)
got = {}
for x in r.stdout.splitlines()[1:]:
    f = x.split(",")
    got.setdefault(f[1], set()).add(f[2])
check(r.returncode == 0 and sorted(got) == [p.rsplit("-", 1)[1] for p in procs]
      and all(len(v) == 1 and v != {""} for v in got.values()),
      f"a run: the rows of {len(got)} processes, each with its rank: {got}")
bad = os.path.join(run_dir, procs[2], "history.jsonl")
with open(bad, "a") as f:
    f.write(sample(1.0, 5))
r = subprocess.run([cli, "report", "--format", "csv", run_dir], capture_output=True, text=True)
got = {x.split(",")[1] for x in r.stdout.splitlines()[1:]}
check(r.returncode == 0 and sorted(got) == [p.rsplit("-", 1)[1] for p in procs if p != procs[2]]
      and len(r.stderr.splitlines()) == 1 and bad in r.stderr and "warning:" in r.stderr,
      f"a run with one bad history: the others' rows, one line: {r.returncode}, {got}, "
      f"{r.stderr.strip()}")
r = subprocess.run([cli, "report", "--strict", "--format", "csv", run_dir], capture_output=True,
                   text=True)
check(r.returncode == 2 and r.stdout == "" and len(r.stderr.splitlines()) == 1
      and bad in r.stderr, f"... with --strict: status 2, one line: {r.returncode}, "
      f"{r.stderr.strip()}")
shutil.rmtree(tmp)
sys.exit(harness.done())
