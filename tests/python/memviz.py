#!/usr/bin/env python3
"""gpuspy export --memory-viz: a Python program allocates and frees
through ctypes and the fake runtime (memviz_prog.py, with device pointers
that span their size: GPUSPY_FAKE_DEVICE_VA), the export's pickle is
loaded by Python's own pickle module and checked:
 - the structure of PyTorch's snapshot: segments with their keys and one
   active block each, device_traces of events with theirs;
 - the segments are the allocations live at exit, address by address,
   their total the report's live bytes, their frames the Python line that
   allocated them, the stream of a stream-ordered one;
 - the trace is the program's calls, in order (an allocation a
   segment_alloc and an alloc, a free a free_requested, a free_completed
   and a segment_free), all of them under a ring large enough, the last N
   under GPUSPY_TRACE=N (the export says how many were dropped), none
   without GPUSPY_TRACE (the export says so);
 - the viewer's replay holds: from the segments backwards, every event
   fits (each block inside a segment, nothing freed twice);
 - only opcodes that PyTorch's memory viewer decodes, one list of frames
   per site;
 - bad input: an allocations.json that is refused (status 2, one line
   naming the file, no file written), one with overlapping allocations
   and a trace event that fits nothing (left out, said), a report without
   one, two processes, a process that did not exit.
Usage: memviz.py LIBGPUSPY LIBPYALLOC FAKE_DIR GPUSPY"""
import glob
import json
import os
import pickle
import pickletools
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check, same  # noqa: E402


lib, pyalloc, fake, cli = sys.argv[1:5]
here = os.path.dirname(os.path.abspath(__file__))
prog = os.path.join(here, "memviz_prog.py")
src = open(prog).read().splitlines()
line_of = {l.split("# LINE ")[-1]: i + 1 for i, l in enumerate(src) if "# LINE " in l}
gpuspy = harness.Cli(cli, env=harness.clean_env(fake))
STEPS = 5

# The opcodes MemoryViz.js's own decoder handles (the page refuses any
# other): PyTorch's torch/utils/viz/MemoryViz.js, function unpickle.
VIEWER_OPS = {"PROTO", "APPEND", "APPENDS", "LIST", "TUPLE", "NEWFALSE", "NEWTRUE", "NONE",
              "BINGET", "BININT", "BININT1", "BININT2", "EMPTY_DICT", "EMPTY_LIST", "FRAME",
              "LONG1", "LONG_BINGET", "MARK", "MEMOIZE", "BINPUT", "LONG_BINPUT", "SETITEMS",
              "SETITEM", "DICT", "SHORT_BINUNICODE", "BINUNICODE", "STOP", "EMPTY_TUPLE",
              "TUPLE1", "TUPLE2", "TUPLE3", "BINFLOAT"}
SEGMENT_KEYS = {"device", "address", "total_size", "allocated_size", "active_size",
                "requested_size", "stream", "segment_type", "segment_pool_id", "is_expandable",
                "frames", "blocks"}
BLOCK_KEYS = {"address", "size", "requested_size", "state", "frames"}
EVENT_KEYS = {"action", "addr", "size", "stream", "time_us", "frames"}


def equal(what, want, have):
    """A check that two values are equal, saying both."""
    return check(want == have, what, f"want {want!r}\nhave {have!r}")


def run_prog(out, **settings):
    """memviz_prog.py under gpuspy into OUT: its calls, and its process
    directory."""
    env = harness.clean_env(fake, LD_PRELOAD=harness.preload(lib), GPUSPY_OUTPUT_DIR=out,
                            GPUSPY_QUIET=1, GPUSPY_FAKE_DEVICE_VA=1, **settings)
    r = harness.run([sys.executable, prog, pyalloc, str(STEPS)], env=env)
    check(r.returncode == 0, f"memviz_prog.py runs ({settings})", r.stderr)
    calls = [json.loads(l) for l in r.stdout.splitlines()]
    dirs = glob.glob(os.path.join(out, "*", "report.json"))
    check(len(dirs) == 1, "one process, one report", str(dirs))
    return calls, os.path.dirname(dirs[0]) if dirs else out


def export(path, dest, status=0):
    r = gpuspy("export", "--memory-viz", dest, path)
    check(r.returncode == status, f"export --memory-viz {os.path.basename(dest)}: status {status}",
          f"status {r.returncode}\n{r.stdout}{r.stderr}")
    return r


def load(dest):
    with open(dest, "rb") as f:
        data = f.read()
    ops = {op.name for op, _, _ in pickletools.genops(data)}
    check(ops <= VIEWER_OPS, "only opcodes the memory viewer decodes", str(ops - VIEWER_OPS))
    return pickle.loads(data)


def expected_events(calls):
    """The trace the export must write for CALLS, as (action, addr, size)."""
    out = []
    for c in calls:
        acts = (["segment_alloc", "alloc"] if c["action"] == "alloc" else
                ["free_requested", "free_completed", "segment_free"])
        out += [(a, c["address"], c["size"]) for a in acts]
    return out


def replay(snap, device):
    """The viewer's replay of DEVICE's trace, backwards from the segments:
    '' when every event fits, else what does not."""
    segs = {s["address"]: s["total_size"] for s in snap["segments"] if s["device"] == device}
    blocks = {b["address"]: b["size"] for s in snap["segments"] if s["device"] == device
              for b in s["blocks"] if b["state"] == "active_allocated"}

    def fits():
        ranges = sorted(segs.items())
        for (a, n), (b, _) in zip(ranges, ranges[1:]):
            if a + n > b:
                return f"segments overlap at {a:#x}"
        for b, n in blocks.items():
            if not any(a <= b and b + n <= a + m for a, m in segs.items()):
                return f"block {b:#x} lies in no segment"
        return ""

    why = fits()
    for i, e in reversed(list(enumerate(snap["device_traces"][device]))):
        act, addr, size = e["action"], e.get("addr"), e["size"]
        if act == "free_completed":
            blocks[addr] = size
        elif act == "free_requested" and addr not in blocks:
            why = f"event {i}: free_requested of no block"
        elif act == "alloc":
            if addr not in blocks:
                why = f"event {i}: alloc of no block"
            blocks.pop(addr, None)
        elif act == "segment_free":
            segs[addr] = size
        elif act == "segment_alloc":
            if addr not in segs:
                why = f"event {i}: segment_alloc of no segment"
            segs.pop(addr, None)
        why = why or fits()
        if why:
            return why
    return why


def python_frames(frames):
    return {(f["name"], f["line"]) for f in frames if f["filename"] == prog}


# 1. A ring larger than the run: every call in the trace.
out = harness.tempdir()
calls, pdir = run_prog(out, GPUSPY_TRACE=1000)
dest = os.path.join(out, "snap.pickle")
r = export(pdir, dest)
check("a trace of %d events" % len(calls) in r.stdout and r.stderr == "",
      "the export says what the file holds", r.stdout + r.stderr)
snap = load(dest)
same("the snapshot's keys", {"segments", "device_traces"}, set(snap))
rep = json.load(open(os.path.join(pdir, "report.json")))
j = json.loads(gpuspy("report", "--format", "json", pdir).stdout)
segs = snap["segments"]
for s in segs:
    same(f"segment {s['address']:#x}: its keys", SEGMENT_KEYS, set(s))
    check(len(s["blocks"]) == 1 and set(s["blocks"][0]) == BLOCK_KEYS and
          s["blocks"][0]["state"] == "active_allocated" and
          s["blocks"][0]["address"] == s["address"] and
          s["blocks"][0]["size"] == s["total_size"] == s["allocated_size"] ==
          s["active_size"] == s["requested_size"] == s["blocks"][0]["requested_size"],
          f"segment {s['address']:#x}: one active block of its size", str(s))
    check(s["device"] == 0 and s["segment_pool_id"] == (0, 0) and s["is_expandable"] is False
          and s["segment_type"] == ("large" if s["total_size"] > 1 << 20 else "small"),
          f"segment {s['address']:#x}: device, pool, kind", str(s))
    check(all(set(f) == {"filename", "line", "name"} and isinstance(f["line"], int)
              for f in s["frames"]), f"segment {s['address']:#x}: frames of the viewer's keys")
live = {}
for c in calls:
    if c["action"] == "alloc":
        live[c["address"]] = c
    else:
        del live[c["address"]]
equal("the segments: the allocations live at exit",
     sorted((a, c["size"]) for a, c in live.items()),
     [(s["address"], s["total_size"]) for s in segs])
total = sum(s["total_size"] for s in segs)
equal("the segments' total: the report's live bytes", rep["leaked"]["bytes"], total)
equal("the segments' total: gpuspy report's", j["leaked"]["bytes"], total)
for s in segs:
    c = live.get(s["address"], {})
    check(bool(c) and any(line == line_of[c["line"]] for _, line in python_frames(s["frames"])),
          f"segment {s['address']:#x}: named by its Python line ({c.get('line')})",
          str(s["frames"]))
    equal(f"segment {s['address']:#x}: its stream", c.get("stream", 0), s["stream"])
check(any(s["stream"] for s in segs), "a stream-ordered segment has its stream")
equal("device_traces: one device", 1, len(snap["device_traces"]))
trace = snap["device_traces"][0]
equal("the trace: the program's calls, in order", expected_events(calls),
     [(e["action"], e["addr"], e["size"]) for e in trace])
check(all(set(e) == EVENT_KEYS for e in trace), "the events: the viewer's keys",
      str([set(e) ^ EVENT_KEYS for e in trace if set(e) != EVENT_KEYS][:3]))
check(all(a["time_us"] <= b["time_us"] for a, b in zip(trace, trace[1:])) and
      abs(trace[-1]["time_us"] / 1e6 - rep["end_time"]) < 60,
      "the events' time_us: in order, microseconds since the epoch")
equal("the viewer's replay of the trace", "", replay(snap, 0))
steps = [e for e in trace if e["action"] == "alloc" and
         python_frames(e["frames"]) & {("step", line_of["step"])}]
equal("the steps' allocations, named by their line", STEPS, len(steps))
check(all(e["frames"] is steps[0]["frames"] for e in steps),
      "one site's frames: one list, shared by its events")
if os.path.exists("/usr/bin/python3"):
    r = harness.run(["/usr/bin/python3", "-c", "import pickle, sys; "
                     "d = pickle.load(open(sys.argv[1], 'rb')); "
                     "print(len(d['segments']), sum(map(len, d['device_traces'])))", dest])
    equal("Debian's python3 loads it", f"{len(segs)} {len(trace)}", r.stdout.strip())

# 2. A ring of 4: the last 4 calls.
out = harness.tempdir()
calls, pdir = run_prog(out, GPUSPY_TRACE=4)
dest = os.path.join(out, "last.pickle")
r = export(pdir, dest)
check(f"the last 4 of {len(calls)} events" in r.stdout,
      "the export says the trace dropped the older events", r.stdout)
snap = load(dest)
equal("GPUSPY_TRACE=4: the last 4 calls", expected_events(calls[-4:]),
     [(e["action"], e["addr"], e["size"]) for e in snap["device_traces"][0]])
equal("GPUSPY_TRACE=4: the viewer's replay", "", replay(snap, 0))

# 3. No trace: the segments only, and said.
out = harness.tempdir()
calls, pdir = run_prog(out)
dest = os.path.join(out, "notrace.pickle")
r = export(pdir, dest)
check("no trace" in r.stdout and "GPUSPY_TRACE=N" in r.stdout, "without a trace: said",
      r.stdout)
snap = load(dest)
equal("without a trace: no events", [[]], snap["device_traces"])
rep = json.load(open(os.path.join(pdir, "report.json")))
equal("without a trace: the segments all the same", rep["leaked"]["bytes"],
      sum(s["total_size"] for s in snap["segments"]))
check("trace" not in json.load(open(os.path.join(pdir, "allocations.json"))),
      "without GPUSPY_TRACE, no trace in allocations.json")

# 4. Bad input: refused with one line naming the file, nothing written.
base_rep = json.load(open(os.path.join(pdir, "report.json")))
base = json.load(open(os.path.join(pdir, "allocations.json")))


def process_dir(allocations, report=base_rep):
    """A process directory of REPORT and ALLOCATIONS (None: none)."""
    d = os.path.join(harness.tempdir(), "node-1")
    os.makedirs(d)
    for name, doc in (("report.json", report), ("allocations.json", allocations)):
        if doc is not None:
            with open(os.path.join(d, name), "w") as f:
                json.dump(doc, f)
    return d


for name, where, change in (
        ("a negative size", "allocations[0]", lambda d: d["allocations"][0].update(size=-1)),
        ("an unknown kind", "allocations[0]",
         lambda d: d["allocations"][0].update(kind="texture")),
        ("pinned memory", "allocations[0]", lambda d: d["allocations"][0].update(kind="pinned")),
        ("no address", "allocations[0]", lambda d: d["allocations"][0].pop("address")),
        ("a site none has", "allocations[0]", lambda d: d["allocations"][0].update(site=99999)),
        ("a range past 2^63", "allocations[0]",
         lambda d: d["allocations"][0].update(address=2**63 - 16)),
        ("an allocation not an object", "allocations[0]",
         lambda d: d["allocations"].__setitem__(0, 7)),
        ("another process's pid", "pid", lambda d: d.update(pid=d["pid"] + 1)),
        ("another format", "", lambda d: d.update(format="gpuspy-allocations/2")),
        ("a trace of more events than it keeps", "trace",
         lambda d: d.update(trace={"capacity": 1, "recorded": 2, "dropped": 0, "events": [
             {"action": "oom", "time": 1.0, "size": 1, "kind": "device", "device": 0,
              "site": d["allocations"][0]["site"], "free_bytes": 0}] * 2}))):
    doc = json.loads(json.dumps(base))
    change(doc)
    d = process_dir(doc)
    dest = os.path.join(d, "bad.pickle")
    r = export(d, dest, status=2)
    lines = r.stderr.splitlines()
    check(len(lines) == 1 and os.path.join(d, "allocations.json") in lines[0] and
          where in lines[0] and not r.stdout and not os.path.exists(dest),
          f"allocations.json with {name}: one line naming the file, nothing written", r.stderr)

# overlapping allocations, and an event that fits nothing: left out, said
doc = json.loads(json.dumps(base))
a = doc["allocations"][0]
doc["allocations"].append(dict(a, address=a["address"] + 256, size=4096))
doc["trace"] = {"capacity": 8, "recorded": 1, "dropped": 0, "events": [
    {"action": "free", "time": base_rep["end_time"], "address": a["address"], "size": 4096,
     "kind": "device", "device": 0, "site": a["site"]}]}
d = process_dir(doc)
dest = os.path.join(d, "overlap.pickle")
r = export(d, dest)
check("1 allocation over another one" in r.stdout and
      "1 event of the trace that do not fit" in r.stdout,
      "an overlapping allocation and an event that fits nothing: left out, said", r.stdout)
snap = load(dest)
equal("left out: the segments are the others", sorted(x["address"] for x in base["allocations"]),
      [s["address"] for s in snap["segments"]])
equal("left out: no event", [[]], snap["device_traces"])

# a report without allocations.json (a gpuspy before it)
d = process_dir(None)
r = export(d, os.path.join(d, "none.pickle"), status=2)
check("no allocations.json" in r.stderr and len(r.stderr.splitlines()) == 1,
      "a report without allocations.json: refused, one line", r.stderr)

# two processes; a process without report.json (a snapshot)
two = harness.tempdir()
for n in ("node-1", "node-2"):
    shutil.copytree(pdir, os.path.join(two, n))
r = export(two, os.path.join(two, "two.pickle"), status=2)
check("draws one process" in r.stderr and len(r.stderr.splitlines()) == 1,
      "two processes: refused, one line", r.stderr)
snapdoc = json.loads(json.dumps(base_rep))
snapdoc["snapshot"] = {"samples": 3, "interval_us": 1000000}
d = os.path.join(harness.tempdir(), "node-3")
os.makedirs(d)
with open(os.path.join(d, "snapshot.json"), "w") as f:
    json.dump(snapdoc, f)
r = export(d, os.path.join(d, "s.pickle"), status=2)
check("did not exit" in r.stderr and len(r.stderr.splitlines()) == 1,
      "a process that did not exit: refused, one line", r.stderr)

sys.exit(harness.done())
