#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Rewrite the fuzz targets' seed corpora (corpus/process, corpus/torch,
corpus/history, corpus/dir) from tests/cli/fixtures: every report under
16 KB, compacted; the PyTorch views; histories of the shape of
history_bad.py's valid one; process directories joined as fuzz_dir.c
reads them.  And, made here: corpus/allocations, allocations.json files
of fuzz.c's report of pid 66 (a trace, none, VMM memory, an overlap, an
event that fits nothing); corpus/budget, budget files (globs, units,
comments, the default, bad lines); corpus/elf, small ELF files of the
shapes elfsym.c reads (symbol tables, a build-id note in a section or
only in the program headers).

    make_corpus.py [KIND...]      (default: all of them)
"""
import glob
import json
import os
import shutil
import struct
import sys

here = os.path.dirname(os.path.abspath(__file__))
fixtures = os.path.join(here, "..", "cli", "fixtures")
SEP = b"\n--gpuspy-fuzz--\n"
DIR_NAMES = ["report.json", "oom-1.json", "oom-2.json", "snapshot.json", "torch.json",
             "history.jsonl"]


def line(o):
    return json.dumps(o, separators=(",", ":")) + "\n"


def history(pid):
    """A valid history.jsonl of PID, sites 1 and 2: header, a bucket,
    samples, a mark, an out-of-memory event, NVML's view."""
    header = {"format": "gpuspy-history/1", "pid": pid, "start": 1764510000.5,
              "interval_s": 1.0, "recent": 256, "buckets": 256, "top": 32, "max_sites": 64}
    return (line(header) + line({"site": 1, "kind": "device"})
            + line({"site": 2, "kind": "device"})
            + line({"t0": 0.5, "t1": 3.5, "n": 4, "dev": {"0": [0, 9 << 20, 3 << 20]},
                    "sites": {"1": [0, 9 << 20, 3 << 20]}, "other": [0, 0, 0]})
            + line({"t": 4.5, "dev": {"0": 4 << 20}, "sites": {"1": 4 << 20, "2": 0},
                    "other": 0})
            + line({"t": 4.5, "event": "mark", "label": "epoch 1"})
            + line({"t": 5.6, "event": "oom", "n": 1})
            + line({"t": 6.5, "dev": {"0": 6 << 20, "-1": 0}, "sites": {"1": 6 << 20},
                    "other": 0, "outside": {"0": 7 << 20}})).encode()


def elf(with_sections=True, dynsym=False):
    """A 64-bit little-endian ET_DYN: functions in .text (aliases, a
    versioned name, one without size), a string table, .symtab or
    .dynsym, and a GNU build-id note (in a section, or without a section
    table in a PT_NOTE)."""
    names = [b"", b"main", b"alias_main", b"helper@@V1", b"nosize", b"data"]
    strtab = b"\0".join(names) + b"\0"
    off = {n: strtab.index(b"\0" + n + b"\0") + 1 if n else 0 for n in names}
    # name, info (bind << 4 | type), shndx, value, size
    syms = [(b"", 0, 0, 0, 0), (b"main", 0x12, 1, 0x1000, 0x20),
            (b"alias_main", 0x02, 1, 0x1000, 0x20), (b"helper@@V1", 0x22, 1, 0x1040, 0x10),
            (b"nosize", 0x12, 1, 0x1080, 0), (b"data", 0x11, 1, 0x10c0, 8)]
    symtab = b"".join(struct.pack("<IBBHQQ", off[n], info, 0, shndx, value, size)
                      for n, info, shndx, value, size in syms)
    note = struct.pack("<III", 4, 8, 3) + b"GNU\0" + bytes(range(8))
    ehsize, phsize, shsize = 64, 56, 64
    o_ph = ehsize
    o_str = o_ph + phsize
    o_sym = (o_str + len(strtab) + 7) & ~7
    o_note = o_sym + len(symtab)
    o_sh = (o_note + len(note) + 7) & ~7
    shdrs = [
        (0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
        (1, 8, 0x6, 0x1000, 0, 0x100, 0, 0, 16, 0),  # .text, NOBITS, ALLOC|EXEC
        (2, 3, 0, 0, o_str, len(strtab), 0, 0, 1, 0),  # .strtab
        (3, 11 if dynsym else 2, 0, 0, o_sym, len(symtab), 2, 1, 8, 24),  # .symtab/.dynsym
        (4, 7, 0x2, 0, o_note, len(note), 0, 0, 4, 0),  # .note.gnu.build-id
    ]
    sh = b"".join(struct.pack("<IIQQQQIIQQ", *h) for h in shdrs)
    eh = (b"\x7fELF\x02\x01\x01" + bytes(9) +
          struct.pack("<HHIQQQIHHHHHH", 3, 62, 1, 0x1000, o_ph, o_sh if with_sections else 0, 0,
                      ehsize, phsize, 1, shsize, len(shdrs) if with_sections else 0, 0))
    ph = struct.pack("<IIQQQQQQ", 4, 4, o_note, 0, 0, len(note), len(note), 4)  # PT_NOTE
    out = bytearray(eh + ph)
    for at, data in ((o_str, strtab), (o_sym, symtab), (o_note, note), (o_sh, sh)):
        out += bytes(at - len(out)) + data
    return bytes(out)


def compact(path):
    with open(path) as f:
        return json.dumps(json.load(f), separators=(",", ":")).encode()


def put(kind, name, data):
    with open(os.path.join(here, "corpus", kind, name), "wb") as f:
        f.write(data)


def allocations(trace=True, **extra):
    """An allocations.json of fuzz.c's report (host node6, pid 66, sites 1
    and 2): two device segments and a stream's, a VMM one mapped nowhere,
    and a trace that leads to them."""
    a, b, c = 0x7f0000000000, 0x7f0000200000, 0x7f0000400000
    doc = {"format": "gpuspy-allocations/1", "gpuspy_version": "0.1.0", "host": "node6",
           "pid": 66, "start_time": 1764510000.5, "allocations": [
               {"address": a, "size": 2 << 20, "kind": "device", "device": 0, "site": 1},
               {"address": b, "size": 1 << 20, "kind": "managed", "device": 0, "site": 2},
               {"address": c, "size": 4096, "kind": "device", "device": 1, "site": 2,
                "stream": 94811030413312},
               {"size": 2 << 20, "kind": "vmm", "device": 0, "site": 1}]}
    ev = lambda action, addr, size, site, **k: dict(  # noqa: E731
        {"action": action, "time": 1764510001.25, "size": size, "kind": "device",
         "device": 0, "site": site}, **({"address": addr} if addr else {}), **k)
    if trace:
        doc["trace"] = {"capacity": 16, "recorded": 9, "dropped": 2, "events": [
            ev("free", 0x7f0000600000, 8192, 2),
            ev("alloc", a, 2 << 20, 1),
            ev("alloc", 0x7f0000600000, 8192, 2),
            ev("free", 0x7f0000600000, 8192, 2),
            ev("oom", None, 1 << 40, 1, free_bytes=1 << 30),
            ev("alloc", b, 1 << 20, 2, kind="managed"),
            ev("alloc", None, 2 << 20, 1, kind="vmm")]}
    doc.update(extra)
    return json.dumps(doc, separators=(",", ":")).encode()


kinds = sys.argv[1:] or ["process", "torch", "history", "dir", "allocations", "budget", "elf"]
for kind in kinds:
    shutil.rmtree(os.path.join(here, "corpus", kind), ignore_errors=True)
    os.makedirs(os.path.join(here, "corpus", kind))

if "elf" in kinds:
    put("elf", "symtab", elf())
    put("elf", "dynsym", elf(dynsym=True))
    put("elf", "no-sections", elf(with_sections=False))
if "allocations" in kinds:
    put("allocations", "trace", allocations())
    put("allocations", "no-trace", allocations(trace=False))
    over = json.loads(allocations())
    over["allocations"].append(dict(over["allocations"][0], address=0x7f0000100000))
    over["trace"]["events"].append(dict(over["trace"]["events"][1], address=0x7f0000900000))
    over["trace"]["recorded"] += 1
    put("allocations", "overlap-misfit", json.dumps(over, separators=(",", ":")).encode())
    put("allocations", "left-out",
        allocations(allocations_left_out={"allocations": 3, "bytes": 12288}))
if "budget" in kinds:
    put("budget", "globs", b"# per site\nstep*  1MiB\nforward (*)  2 GB\n*  0\n")
    put("budget", "units", b"step 1.5 GiB\n\n   # indented comment\nforward 512k\n* 1T\n")
    put("budget", "bad-line", b"step\n* 1MiB\n")
    put("budget", "bad-size", b"step 12 parsecs\n")
if kinds and all(k in ("elf", "allocations", "budget") for k in kinds):
    sys.exit(0)

reports = sorted(glob.glob(os.path.join(fixtures, "*", "*", "*.json")))
for path in reports:
    if os.path.basename(path) == "torch.json" or os.path.getsize(path) > 16384:
        continue
    rel = os.path.relpath(path, fixtures)
    put("process", rel.replace("/", "_"), compact(path))

torch = json.loads(compact(os.path.join(fixtures, "hostile", "node6-66", "torch.json")))
put("torch", "hostile", json.dumps(torch, separators=(",", ":")).encode())
plain = dict(torch, final=False, samples=40,
             devices=[{"device": 0, "reserved_bytes": 8 << 20, "allocated_bytes": 6 << 20},
                      {"device": 1, "reserved_bytes": 2 << 20, "allocated_bytes": 0}],
             sites=[{"live_bytes": 4 << 20, "live_blocks": 2, "peak_bytes": 6 << 20,
                     "growing": True,
                     "frames": [{"file": "/home/u/model.py", "function": "forward", "line": 42},
                                {"file": "/home/u/train.py", "function": "step", "line": 17}]},
                    {"live_bytes": 2 << 20, "live_blocks": 1, "peak_bytes": 2 << 20,
                     "growing": False, "frames": []}])
put("torch", "plain", json.dumps(plain, separators=(",", ":")).encode())
# the verdicts the view records: one line growing, one grown then stopped
verdicts = dict(plain, sites=[
    dict(plain["sites"][0], growth={"shape": "staircase", "since_s": 12.0,
                                    "rate_bytes_per_s": 1048576.0, "stopped": False,
                                    "until_s": 40.0}),
    dict(plain["sites"][1], growth={"shape": "per-sample", "since_s": 0.1,
                                    "rate_bytes_per_s": 10485760.0, "stopped": True,
                                    "until_s": 0.4})])
put("torch", "verdicts", json.dumps(verdicts, separators=(",", ":")).encode())

# a report with the verdicts libgpuspy records (gpuspy 0.4 on): a site
# growing by its samples, one grown then stopped, one by JAX's counter
doc = json.loads(compact(os.path.join(fixtures, "growth", "node4-300", "report.json")))
grow = [x for x in doc["sites"] if x.get("growing")]
rest = [x for x in doc["sites"] if not x.get("growing")]
if grow:
    grow[0]["growth"] = {"shape": "staircase", "since_s": 1.5, "rate_bytes_per_s": 699050.7,
                         "stopped": False, "until_s": 30.0, "by": "samples"}
if len(grow) > 1:
    grow[1]["growth"] = {"shape": "per-sample", "since_s": 2.0, "rate_bytes_per_s": 4096.0,
                         "stopped": False, "until_s": 9.0, "by": "framework",
                         "framework": "jax", "place": "0"}
if rest:
    rest[0]["growth"] = {"shape": "per-sample", "since_s": 0.1, "rate_bytes_per_s": 1e7,
                         "stopped": True, "until_s": 0.4, "by": "marks"}
doc["frameworks"] = {"time": doc.get("end_time", 1764510040.0), "counters": {
    "jax": {"0": {"allocated": 8 << 20, "reserved": 16 << 20}}},
    "growth": {"jax": {"0": {"counter": "allocated", "shape": "per-sample", "since_s": 2.0,
                             "rate_bytes_per_s": 4096.0, "stopped": False, "until_s": 9.0,
                             "site": grow[1]["id"] if len(grow) > 1 else 1}}}}
put("process", "verdicts_report.json", json.dumps(doc, separators=(",", ":")).encode())

put("history", "valid", history(66))
put("history", "cut-last-line", history(66) + b'{"t":7.5,"dev":{"0":1')

for d in sorted(glob.glob(os.path.join(fixtures, "*", "*"))):
    if not os.path.isdir(d):
        continue
    parts = []
    for name in DIR_NAMES:
        path = os.path.join(d, name)
        if os.path.exists(path) and name == "history.jsonl":
            with open(path, "rb") as f:
                parts.append(f.read())
        elif os.path.exists(path):
            parts.append(compact(path))
        elif name == "history.jsonl" and parts[0]:
            # a history of the report's process, for report --format csv
            parts.append(history(json.loads(parts[0])["pid"]))
        else:
            parts.append(b"")
    if not any(parts) or sum(map(len, parts)) > 40000:
        continue
    put("dir", os.path.relpath(d, fixtures).replace("/", "_"), SEP.join(parts))

# Names no printer may choke on (tests/cli/test_hostile_names.py runs them
# through every printer from a real module): the process fixture with its
# symbols, paths and a mark's label made of multi-byte characters that any
# byte limit cuts inside one (after 0 to 3 ASCII bytes), control characters,
# ';', 5,000 bytes; and, as JSON cannot carry bytes that are not UTF-8,
# those raw (refused, whole file) and as lone surrogates (\ud800).
HOSTILE = ["\u00e9" * 300, "x" + "\u20ac" * 200, "xy" + "\U0001F600" * 150,
           "xyz" + "\u00e9" * 150, "esc\x1b[2J\x07;tab\tdel\x7f c1\u009b", "h" * 5000 + "\u00e9"]
doc = json.loads(compact(os.path.join(fixtures, "process", "node7-4242", "report.json")))
for i, s in enumerate(doc["sites"]):
    for k, fr in enumerate(s["frames"]):
        fr["symbol"] = HOSTILE[(i + k) % len(HOSTILE)]
for i, m in enumerate(doc["modules"]):
    m["path"] = "/nonexistent/" + HOSTILE[i % len(HOSTILE)][:200]
doc["marks"] = [{"time": doc["start_time"] + 1, "label": HOSTILE[0], "live_bytes": 0,
                 "sites": []}]
names = json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()
put("process", "names_multibyte", names)
put("process", "names_not_utf8", names.replace("\u00e9".encode(), b"\xff\xc3", 3))
put("process", "names_lone_surrogate",
    json.dumps(doc, separators=(",", ":")).replace("\\u00e9", "\\ud800", 3).encode())
put("history", "names", history(4242).replace(b'"epoch 1"', json.dumps(HOSTILE[2]).encode()))
put("dir", "names", SEP.join([names, b"", b"", b"", b"", history(4242)]))
