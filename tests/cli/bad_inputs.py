#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""'gpuspy report' and 'gpuspy merge' on corrupted input: exit status 2 and
exactly one line on stderr, "gpuspy COMMAND: FILE: ...", naming the file at fault;
never a crash.

    bad_inputs.py GPUSPY FIXTURES [--valgrind VALGRIND [--all]]

The corrupted reports are made here, in a temporary directory, from the
valid fixture process/node7-4242/report.json.  Each input goes to both
commands, in text and in JSON.  With --valgrind they run under valgrind,
which must find no error and no definite leak, on a sample (test
bad-inputs-valgrind, in the CI): of the corrupted reports, one of each
family (parse errors, types, ranges, indices, events, snapshots); of the
other bad inputs, one in three; every valid one; each once, to one
command in one format, in turn, so that each command and each format
meets a quarter of them.  Every input, both ways, also runs under ASan
and UBSan (test bad-inputs in scripts/sanitize asan).  With --all as
well, every input to both commands in both formats (test
bad-inputs-valgrind-full, the full tier: scripts/test --full).
"""
import copy
import json
import os
import random
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

MAX_I64 = 2**63 - 1


def set_path(doc, path, value):
    """Set doc[a][b]... (path "a.b.0.c"); value DELETE removes the key."""
    keys = [int(k) if k.lstrip("-").isdigit() else k for k in path.split(".")]
    obj = doc
    for k in keys[:-1]:
        obj = obj[k]
    if value is DELETE:
        del obj[keys[-1]]
    else:
        obj[keys[-1]] = value


DELETE = object()

# valid Python parts, each mutated below
PYFRAME = {"file": "/home/u/train.py", "function": "step", "line": 17}
PYTHON = {"version": "3.12.3", "supported": True}
# a valid out-of-memory event of the fixture (site 2 exists there)
EVENT = {"type": "oom", "number": 1, "time": 1764510040.5, "api": "cudaMalloc",
         "kind": "device", "requested_bytes": 2**36, "device": 0,
         "live_bytes": 3 * 2**20, "free_bytes": 2**20, "total_bytes": 2**37, "site": 2}
OOM = dict(EVENT, file="oom-1.json")
# the figures of its verdict (docs/format.md, "event"), all valid
TORCH_LINE = {"frames": [PYFRAME], "bytes": 2**20, "blocks": 2, "role": "activations"}
FACTS = {"device_live_bytes": 3 * 2**20, "limit_bytes": 2**33, "capped": True,
         "pool": {"label": "PyTorch caching allocator", "bytes": 2**20, "requested": True},
         "library": {"bytes": 2**20, "top": "cuBLAS", "top_bytes": 2**20}, "graph_bytes": 5,
         "others": {"bytes": 7, "processes": [{"pid": 9, "name": "sleep", "used_bytes": 7}]},
         "torch": {"requested_bytes": 2**20, "allocated_bytes": 2**20, "reserved_bytes": 2**21,
                   "largest_free_bytes": 2**19, "lines": [TORCH_LINE],
                   "holders": [TORCH_LINE]}}
OOMF = dict(OOM, **FACTS)
# a valid "at_peak" of the fixture (sites 1 and 2 exist there)
AT_PEAK = {"bytes": 11 * 2**20, "time": 1764510012.5,
           "devices": [{"device": 0, "live_bytes": 11 * 2**20}],
           "sites": [{"site": 1, "live_bytes": 3 * 2**20}, {"site": 2, "live_bytes": 8 * 2**20}]}
# a valid "folded" entry (docs/format.md, "Folded sites")
FOLDED = {"kind": "device", "sites": 3, "growing": 1, "live_bytes": 2 * 2**20,
          "live_allocations": 2, "peak_bytes": 4 * 2**20, "allocated_bytes": 6 * 2**20,
          "allocations": 5, "freed_bytes": 4 * 2**20, "frees": 3}
# valid framework counters ("frameworks", docs/format.md)
FWC = {"pytorch": {"0": {"allocated": 1, "reserved": 2}}, "cupy": {"host": {"free_blocks": 1}}}
FWDOC = {"time": 1764510012.5, "counters": FWC}
# a valid verdict of a site that grew, then stopped (docs/format.md,
# "growth"; the fixture's sites are not growing)
STOPPED = {"shape": "per-sample", "since_s": 0.1, "rate_bytes_per_s": 1e7, "stopped": True,
           "until_s": 0.4, "by": "samples"}
FWGROWTH = {"pytorch": {"0": {"counter": "allocated", "shape": "drift", "since_s": 1.0,
                              "rate_bytes_per_s": 5.0, "stopped": False, "until_s": 2.0}}}
# a valid "graph" of the fixture (docs/format.md, "CUDA graph memory"): its
# live memory is part of the fixture's device memory (3 MiB in 2)
GDEV = {"device": 0, "used_current": 2 * 2**20, "used_high": 4 * 2**20,
        "reserved_current": 2 * 2**20, "reserved_high": 4 * 2**20, "as_of": 1764510040.5}
GRAPH = {"alloc_nodes": 3, "alloc_node_bytes": 6 * 2**20, "reserved_bytes": 2 * 2**20,
         "launches": 5, "live_bytes": 2 * 2**20, "live_allocations": 1,
         "peak_bytes": 4 * 2**20, "trims": 1, "devices": [GDEV]}
CALLS = {"runtime": 12, "driver": 0, "dlsym": 0, "getproc": 40, "getproc_v1_lookups": 0,
         "getproc_v2_lookups": 60, "per_thread": 0, "vmm": 0, "graph": 9}
APDEV = AT_PEAK["devices"][0]
APSITE = AT_PEAK["sites"][0]


def drop_deleted(value):
    """VALUE without the dictionary keys set to DELETE, at any depth."""
    if isinstance(value, dict):
        return {k: drop_deleted(v) for k, v in value.items() if v is not DELETE}
    if isinstance(value, list):
        return [drop_deleted(v) for v in value]
    return value


def mutations(valid_doc, valid_text):
    """(name, bytes) of every corrupted report.json."""
    def mut(path, value):
        d = copy.deepcopy(valid_doc)
        set_path(d, path, drop_deleted(value))
        return json.dumps(d, indent=1).encode()

    def mutfw(path, value):
        # a valid "frameworks" first, then the change
        d = copy.deepcopy(valid_doc)
        d["frameworks"] = copy.deepcopy(FWDOC)
        obj, keys = d, path.split(".")  # "0" is a key here, not an index
        for k in keys[:-1]:
            obj = obj[k]
        obj[keys[-1]] = drop_deleted(value)
        return json.dumps(d, indent=1).encode()

    n = len(valid_text)
    rnd = random.Random(1234)
    cases = [
        ("empty file", b""),
        ("truncated after 1 byte", valid_text[:1]),
        ("truncated at 10%", valid_text[: n // 10]),
        ("truncated at 50%", valid_text[: n // 2]),
        ("truncated before the last brace", valid_text.rstrip()[:-1]),
        ("garbage text", b"hello, this is not json\n"),
        ("binary junk", bytes(rnd.randrange(256) for _ in range(4096))),
        ("NUL bytes", b"\0" * 64),
        ("NUL in a string", valid_text.replace(b'"node7"', b'"no\\u0000de7"', 1)),
        # a raw NUL byte, where jansson would take what came before it as
        # the whole document
        ("NUL after a number", valid_text.replace(b'"pid": 4242', b'"pid": 4242\0', 1)),
        ("NUL between members", valid_text.replace(b',\n', b',\0\n', 1)),
        ("NUL inside a string", valid_text.replace(b'"node7"', b'"no\0de7"', 1)),
        ("NUL at the end", valid_text + b"\0"),
        ("NUL then garbage", valid_text + b"\0garbage"),
        ("invalid UTF-8", valid_text.replace(b'"node7"', b'"no\xffde7"', 1)),
        ("trailing garbage", valid_text + b"{}"),
        ("duplicate key", valid_text.replace(b'"pid": 4242', b'"pid": 4242, "pid": 1', 1)),
        ("deep nesting", b"[" * 100000),
        ("top level array", b"[]"),
        ("top level null", b"null"),
        ("no format", mut("format", DELETE)),
        ("format version 2", mut("format", "gpuspy-process/2")),
        ("format of a merged report", mut("format", "gpuspy-report/1")),
        ("format not a string", mut("format", 1)),
        ("host missing", mut("host", DELETE)),
        ("pid a string", mut("pid", "4242")),
        ("pid negative", mut("pid", -1)),
        ("pid zero", mut("pid", 0)),
        ("pid huge", mut("pid", 2**40)),
        ("integer beyond 64 bits",
         valid_text.replace(b'"pid": 4242', b'"pid": 99999999999999999999999', 1)),
        ("pid a real number", mut("pid", 4242.5)),
        ("command not an array", mut("command", "./leaky")),
        ("command element not a string", mut("command.1", 7)),
        ("complete a string", mut("complete", "yes")),
        ("leaked a string", mut("leaked", "3 MiB")),
        ("leaked.bytes a string", mut("leaked.bytes", "3145728")),
        ("leaked.bytes negative", mut("leaked.bytes", -4096)),
        ("leaked above peak", mut("leaked.bytes", 12 * 2**20)),
        ("peak missing", mut("peak", DELETE)),
        ("kinds an array", mut("kinds", [])),
        ("kinds.pinned missing", mut("kinds.pinned", DELETE)),
        ("kinds.device.live_bytes negative", mut("kinds.device.live_bytes", -1)),
        ("kinds.vmm.frees null", mut("kinds.vmm.frees", None)),
        ("untracked_frees a real number", mut("untracked_frees", 1.5)),
        ("environment value not a string", mut("environment.PYTORCH_CUDA_ALLOC_CONF", 1)),
        ("devices not an array", mut("devices", {})),
        ("doors.driver negative", mut("doors.driver", -2)),
        ("modules not an array", mut("modules", {"path": "x"})),
        ("module path not a string", mut("modules.0.path", 17)),
        ("module build_id not hex", mut("modules.0.build_id", "xyz")),
        ("module base negative", mut("modules.1.base", -4096)),
        ("sites an object", mut("sites", {})),
        ("site not an object", mut("sites.1", "cudaMalloc")),
        ("site kind unknown", mut("sites.0.kind", "texture")),
        ("folded an object", mut("folded", dict(FOLDED))),
        ("folded kind unknown", mut("folded", [dict(FOLDED, kind="texture")])),
        ("folded kind twice", mut("folded", [FOLDED, FOLDED])),
        ("folded of no site", mut("folded", [dict(FOLDED, sites=0)])),
        ("folded growing above its sites", mut("folded", [dict(FOLDED, growing=4)])),
        ("folded live above its peak", mut("folded", [dict(FOLDED, live_bytes=5 * 2**20)])),
        ("folded frees missing", mut("folded", [dict(FOLDED, frees=DELETE)])),
        ("max_sites negative", mut("max_sites", -1)),
        ("at_peak folded of no site",
         mut("at_peak", dict(AT_PEAK, folded={"sites": 0, "live_bytes": 1}))),
        ("at_peak folded bytes negative",
         mut("at_peak", dict(AT_PEAK, folded={"sites": 1, "live_bytes": -1}))),
        ("site api empty", mut("sites.0.api", "")),
        ("site growing a string", mut("sites.0.growing", "yes")),
        # the process's verdict: one, said twice ("growing", "growth")
        ("site growth growing, the site not", mut("sites.0.growth", dict(STOPPED, stopped=False))),
        ("site growth an array", mut("sites.0.growth", [STOPPED])),
        ("site growth shape unknown", mut("sites.0.growth", dict(STOPPED, shape="wobbly"))),
        ("site growth shape none", mut("sites.0.growth", dict(STOPPED, shape="none"))),
        ("site growth rate negative", mut("sites.0.growth", dict(STOPPED, rate_bytes_per_s=-1))),
        ("site growth since missing", mut("sites.0.growth", dict(STOPPED, since_s=DELETE))),
        ("site growth stopped a string", mut("sites.0.growth", dict(STOPPED, stopped="yes"))),
        ("site growth by unknown", mut("sites.0.growth", dict(STOPPED, by="luck"))),
        ("site growth by framework without place",
         mut("sites.0.growth", dict(STOPPED, by="framework", framework="jax"))),
        ("site growth by an unknown framework",
         mut("sites.0.growth", dict(STOPPED, by="framework", framework="mxnet", place="0"))),
        ("frameworks growth of reserved",
         mutfw("frameworks.growth", {"pytorch": {"0": dict(FWGROWTH["pytorch"]["0"],
                                                           counter="reserved")}})),
        ("frameworks growth device 16",
         mutfw("frameworks.growth", {"pytorch": {"16": FWGROWTH["pytorch"]["0"]}})),
        ("frameworks growth unknown framework",
         mutfw("frameworks.growth", {"mxnet": FWGROWTH["pytorch"]})),
        ("frameworks growth shape missing",
         mutfw("frameworks.growth", {"pytorch": {"0": dict(FWGROWTH["pytorch"]["0"],
                                                           shape=DELETE)}})),
        # the frameworks' counters at the report's moment
        ("frameworks an array", mut("frameworks", [1])),
        ("frameworks without time", mut("frameworks", {"counters": FWC})),
        ("frameworks without counters", mut("frameworks", {"time": 1764510012.5})),
        ("frameworks time a string", mut("frameworks", dict(FWDOC, time="now"))),
        ("frameworks unknown member", mut("frameworks", dict(FWDOC, source="x"))),
        ("frameworks counters empty", mut("frameworks", dict(FWDOC, counters={}))),
        ("frameworks unknown framework", mutfw("frameworks.counters.mxnet", FWC["pytorch"])),
        ("frameworks framework empty", mutfw("frameworks.counters.pytorch", {})),
        ("frameworks device 16", mutfw("frameworks.counters.pytorch", {"16": {"allocated": 1}})),
        ("frameworks device 00", mutfw("frameworks.counters.pytorch", {"00": {"allocated": 1}})),
        ("frameworks place not an object", mutfw("frameworks.counters.pytorch.0", 7)),
        ("frameworks place empty", mutfw("frameworks.counters.pytorch.0", {})),
        ("frameworks unknown counter", mutfw("frameworks.counters.pytorch.0.cached", 1)),
        ("frameworks counter negative", mutfw("frameworks.counters.pytorch.0.reserved", -2)),
        ("frameworks counter a float", mutfw("frameworks.counters.pytorch.0.reserved", 2.5)),
        ("frameworks counter a list", mutfw("frameworks.counters.pytorch.0.reserved", [2, 2, 2])),
        ("outside an array", mut("outside", [1])),
        ("outside devices missing", mut("outside", {"source": "nvml"})),
        ("outside device not an object", mut("outside", {"devices": [1]})),
        ("outside used a string", mut("outside", {"devices": [{"index": 0, "total_bytes": 1, "used_bytes": "1", "processes": []}]})),
        ("outside pid negative", mut("outside", {"devices": [{"index": 0, "total_bytes": 1, "used_bytes": 1, "processes": [{"pid": -1, "used_bytes": 1}]}]})),
        ("site growing a number", mut("sites.0.growing", 1)),
        ("calls an array", mut("calls", [1])),
        ("calls count negative", mut("calls", dict(CALLS, graph=-1))),
        ("calls count a string", mut("calls", dict(CALLS, runtime="12"))),
        ("calls count fractional", mut("calls", dict(CALLS, vmm=1.5))),
        ("graph an array", mut("graph", [GRAPH])),
        ("graph launches missing", mut("graph", dict(GRAPH, launches=DELETE))),
        ("graph devices missing", mut("graph", dict(GRAPH, devices=DELETE))),
        ("graph live negative", mut("graph", dict(GRAPH, live_bytes=-1))),
        ("graph trims a string", mut("graph", dict(GRAPH, trims="1"))),
        ("graph live above its peak", mut("graph", dict(GRAPH, peak_bytes=2**20))),
        ("graph live above the device kind",
         mut("graph", dict(GRAPH, live_bytes=4 * 2**20, peak_bytes=4 * 2**20))),
        ("graph live allocations above the device kind",
         mut("graph", dict(GRAPH, live_allocations=3))),
        ("graph live bytes in no allocation", mut("graph", dict(GRAPH, live_allocations=0))),
        ("graph reserved above its nodes", mut("graph", dict(GRAPH, reserved_bytes=7 * 2**20))),
        ("graph node bytes without nodes", mut("graph", dict(GRAPH, alloc_nodes=0))),
        ("graph device not an object", mut("graph", dict(GRAPH, devices=[1]))),
        ("graph device negative", mut("graph", dict(GRAPH, devices=[dict(GDEV, device=-1)]))),
        ("graph device twice", mut("graph", dict(GRAPH, devices=[GDEV, GDEV]))),
        ("graph device used above its high",
         mut("graph", dict(GRAPH, devices=[dict(GDEV, used_high=2**20)]))),
        ("graph device used above reserved",
         mut("graph", dict(GRAPH, devices=[dict(GDEV, reserved_current=2**20)]))),
        ("graph device reserved high missing",
         mut("graph", dict(GRAPH, devices=[dict(GDEV, reserved_high=DELETE)]))),
        ("graph device as_of a string",
         mut("graph", dict(GRAPH, devices=[dict(GDEV, as_of="now")]))),
        ("graph device as_of negative",
         mut("graph", dict(GRAPH, devices=[dict(GDEV, as_of=-5)]))),
        ("graph device used a float",
         mut("graph", dict(GRAPH, devices=[dict(GDEV, used_current=0.5)]))),
        ("snapshot an array", mut("snapshot", [1])),
        ("snapshot samples negative", mut("snapshot", {"samples": -1, "interval_us": 1000})),
        ("snapshot interval a string", mut("snapshot", {"samples": 3, "interval_us": "1s"})),
        ("snapshot number zero", mut("snapshot", {"number": 0, "label": "x"})),
        ("snapshot label a number", mut("snapshot", {"number": 1, "label": 3})),
        ("site growing null", mut("sites.2.growing", None)),
        ("snapshot samples missing", mut("snapshot", {"interval_us": 1000})),
        ("snapshot interval_us missing", mut("snapshot", {"samples": 3})),
        ("snapshot interval_us negative", mut("snapshot", {"samples": 3, "interval_us": -1})),
        ("snapshot samples a real", mut("snapshot", {"samples": 3.5, "interval_us": 1000})),
        ("snapshot samples beyond 64 bits",
         mut("snapshot", {"samples": 3, "interval_us": 1000}).replace(
             b'"samples": 3', b'"samples": 99999999999999999999', 1)),
        ("snapshot empty object", mut("snapshot", {})),
        ("snapshot beside an event",
         json.dumps(dict(valid_doc, event=EVENT,
                         snapshot={"samples": 3, "interval_us": 1000})).encode()),
        ("site live_bytes negative", mut("sites.0.live_bytes", -5)),
        ("site allocations a string", mut("sites.1.allocations", "4")),
        ("site live above allocated", mut("sites.1.live_bytes", 2**40)),
        ("site frees above allocations", mut("sites.1.frees", 5)),
        ("site frames missing", mut("sites.0.frames", DELETE)),
        ("frame not an object", mut("sites.0.frames.0", 4660)),
        ("frame module index out of range", mut("sites.0.frames.1.module", 7)),
        ("frame module index below -1", mut("sites.0.frames.1.module", -2)),
        ("frame module a string", mut("sites.0.frames.1.module", "leaky")),
        ("frame offset negative", mut("sites.0.frames.0.offset", -1)),
        ("frame symbol not a string", mut("sites.0.frames.0.symbol", ["x"])),
        ("exe not a string", mut("exe", 7)),
        ("run not a string", mut("run", 7)),
        ("run empty", mut("run", "")),
        ("run not a run id", mut("run", "../../etc")),
        ("site python an object", mut("sites.0.python", PYFRAME)),
        ("site python null", mut("sites.0.python", None)),
        ("python frame not an object", mut("sites.0.python", ["train.py"])),
        ("python frame file missing", mut("sites.0.python", [dict(PYFRAME, file=DELETE)])),
        ("python frame file not a string", mut("sites.0.python", [dict(PYFRAME, file=3)])),
        ("python frame function missing",
         mut("sites.0.python", [PYFRAME, dict(PYFRAME, function=DELETE)])),
        ("python frame function null", mut("sites.0.python", [dict(PYFRAME, function=None)])),
        ("python frame line missing", mut("sites.0.python", [dict(PYFRAME, line=DELETE)])),
        ("python frame line negative", mut("sites.0.python", [dict(PYFRAME, line=-1)])),
        ("python frame line a string", mut("sites.0.python", [dict(PYFRAME, line="17")])),
        ("python frame line a real number", mut("sites.0.python", [dict(PYFRAME, line=1.5)])),
        ("python frame line huge", mut("sites.0.python", [dict(PYFRAME, line=2**40)])),
        ("process python an array", mut("python", [PYTHON])),
        ("process python a string", mut("python", "3.12.3")),
        ("process python version missing", mut("python", dict(PYTHON, version=DELETE))),
        ("process python version a number", mut("python", dict(PYTHON, version=3.12))),
        ("process python supported missing", mut("python", dict(PYTHON, supported=DELETE))),
        ("process python supported a string", mut("python", dict(PYTHON, supported="yes"))),
        ("process python note not a string",
         mut("python", dict(PYTHON, supported=False, note=["unknown"]))),
        ("oom an object", mut("oom", OOM)),
        ("oom entry not an object", mut("oom", [OOM, 1])),
        ("oom type missing", mut("oom", [dict(OOM, type=DELETE)])),
        ("oom type unknown", mut("oom", [dict(OOM, type="leak")])),
        ("oom type not a string", mut("oom", [dict(OOM, type=1)])),
        ("oom number zero", mut("oom", [dict(OOM, number=0)])),
        ("oom number a string", mut("oom", [dict(OOM, number="1")])),
        ("oom number missing", mut("oom", [dict(OOM, number=DELETE)])),
        ("oom time missing", mut("oom", [dict(OOM, time=DELETE)])),
        ("oom time a string", mut("oom", [dict(OOM, time="now")])),
        ("oom time negative", mut("oom", [dict(OOM, time=-1.5)])),
        ("oom api empty", mut("oom", [dict(OOM, api="")])),
        ("oom api missing", mut("oom", [dict(OOM, api=DELETE)])),
        ("oom kind unknown", mut("oom", [dict(OOM, kind="texture")])),
        ("oom kind null", mut("oom", [dict(OOM, kind=None)])),
        ("oom requested_bytes negative", mut("oom", [dict(OOM, requested_bytes=-1)])),
        ("oom requested_bytes a real number", mut("oom", [dict(OOM, requested_bytes=1e9)])),
        ("oom device below -1", mut("oom", [dict(OOM, device=-2)])),
        ("oom device huge", mut("oom", [dict(OOM, device=2**40)])),
        ("oom live_bytes negative", mut("oom", [dict(OOM, live_bytes=-1)])),
        ("oom free_bytes below -1", mut("oom", [dict(OOM, free_bytes=-2)])),
        ("oom free_bytes missing", mut("oom", [dict(OOM, free_bytes=DELETE)])),
        ("oom total_bytes a real number", mut("oom", [dict(OOM, total_bytes=1.5)])),
        ("oom site unknown", mut("oom", [dict(OOM, site=99)])),
        ("oom site negative", mut("oom", [dict(OOM, site=-1)])),
        ("oom site missing", mut("oom", [dict(OOM, site=DELETE)])),
        ("oom file outside the directory", mut("oom", [dict(OOM, file="../report.json")])),
        ("oom file another name", mut("oom", [dict(OOM, file="oom-1.json.tmp")])),
        ("oom file without a number", mut("oom", [dict(OOM, file="oom-.json")])),
        ("oom file an absolute path", mut("oom", [dict(OOM, file="/tmp/oom-1.json")])),
        ("oom file not a string", mut("oom", [dict(OOM, file=1)])),
        ("oom device_live_bytes negative", mut("oom", [dict(OOMF, device_live_bytes=-1)])),
        ("oom limit_bytes zero", mut("oom", [dict(OOMF, limit_bytes=0)])),
        ("oom limit_bytes without capped", mut("oom", [dict(OOMF, capped=DELETE)])),
        ("oom capped without limit_bytes", mut("oom", [dict(OOMF, limit_bytes=DELETE)])),
        ("oom capped a string", mut("oom", [dict(OOMF, capped="yes")])),
        ("oom graph_bytes negative", mut("oom", [dict(OOMF, graph_bytes=-5)])),
        ("oom pool not an object", mut("oom", [dict(OOMF, pool="PyTorch")])),
        ("oom pool label empty", mut("oom", [dict(OOMF, pool=dict(FACTS["pool"], label=""))])),
        ("oom pool bytes negative",
         mut("oom", [dict(OOMF, pool=dict(FACTS["pool"], bytes=-1))])),
        ("oom pool requested missing",
         mut("oom", [dict(OOMF, pool=dict(FACTS["pool"], requested=DELETE))])),
        ("oom library top above its bytes",
         mut("oom", [dict(OOMF, library=dict(FACTS["library"], top_bytes=2**21))])),
        ("oom library top missing",
         mut("oom", [dict(OOMF, library=dict(FACTS["library"], top=DELETE))])),
        ("oom others processes missing",
         mut("oom", [dict(OOMF, others={"bytes": 7})])),
        ("oom others pid zero",
         mut("oom", [dict(OOMF, others={"bytes": 7, "processes": [{"pid": 0, "used_bytes": 7}]})])),
        ("oom others used_bytes negative",
         mut("oom", [dict(OOMF, others={"bytes": 7, "processes": [{"pid": 9, "used_bytes": -7}]})])),
        ("oom others name a number",
         mut("oom", [dict(OOMF, others={"bytes": 7, "processes": [
             {"pid": 9, "name": 3, "used_bytes": 7}]})])),
        ("oom torch allocated above reserved",
         mut("oom", [dict(OOMF, torch=dict(FACTS["torch"], allocated_bytes=2**22))])),
        ("oom torch requested missing",
         mut("oom", [dict(OOMF, torch=dict(FACTS["torch"], requested_bytes=DELETE))])),
        ("oom torch largest_free negative",
         mut("oom", [dict(OOMF, torch=dict(FACTS["torch"], largest_free_bytes=-1))])),
        ("oom torch lines an object",
         mut("oom", [dict(OOMF, torch=dict(FACTS["torch"], lines=TORCH_LINE))])),
        ("oom torch line frames missing",
         mut("oom", [dict(OOMF, torch=dict(FACTS["torch"], lines=[
             dict(TORCH_LINE, frames=DELETE)]))])),
        ("oom torch line frame line negative",
         mut("oom", [dict(OOMF, torch=dict(FACTS["torch"], lines=[
             dict(TORCH_LINE, frames=[dict(PYFRAME, line=-1)])]))])),
        ("oom torch line role empty",
         mut("oom", [dict(OOMF, torch=dict(FACTS["torch"], lines=[
             dict(TORCH_LINE, role="")]))])),
        ("oom torch holders an object",
         mut("oom", [dict(OOMF, torch=dict(FACTS["torch"], holders=TORCH_LINE))])),
        ("oom torch holder role a number",
         mut("oom", [dict(OOMF, torch=dict(FACTS["torch"], holders=[
             dict(TORCH_LINE, role=3)]))])),
        ("oom torch line blocks a string",
         mut("oom", [dict(OOMF, torch=dict(FACTS["torch"], lines=[
             dict(TORCH_LINE, blocks="2")]))])),
        ("limit bytes zero", mut("limit", {"bytes": 0})),
        ("limit bytes missing", mut("limit", {})),
        ("limit a number", mut("limit", 2**33)),
        ("oom_dropped negative", mut("oom_dropped", -1)),
        ("oom_dropped a string", mut("oom_dropped", "2")),
        ("event an array", mut("event", [EVENT])),
        ("event kind unknown", mut("event", dict(EVENT, kind="host"))),
        ("event site unknown", mut("event", dict(EVENT, site=7))),
        ("event number negative", mut("event", dict(EVENT, number=-3))),
        ("at_peak an array", mut("at_peak", [AT_PEAK])),
        ("at_peak null", mut("at_peak", None)),
        ("at_peak bytes missing", mut("at_peak", dict(AT_PEAK, bytes=DELETE))),
        ("at_peak bytes negative", mut("at_peak", dict(AT_PEAK, bytes=-1))),
        ("at_peak bytes a string", mut("at_peak", dict(AT_PEAK, bytes="11 MiB"))),
        ("at_peak time missing", mut("at_peak", dict(AT_PEAK, time=DELETE))),
        ("at_peak time a string", mut("at_peak", dict(AT_PEAK, time="now"))),
        ("at_peak devices missing", mut("at_peak", dict(AT_PEAK, devices=DELETE))),
        ("at_peak devices an object", mut("at_peak", dict(AT_PEAK, devices=APDEV))),
        ("at_peak device not an object", mut("at_peak", dict(AT_PEAK, devices=[0]))),
        ("at_peak device below -1",
         mut("at_peak", dict(AT_PEAK, devices=[dict(APDEV, device=-2)]))),
        ("at_peak device missing",
         mut("at_peak", dict(AT_PEAK, devices=[dict(APDEV, device=DELETE)]))),
        ("at_peak device live_bytes negative",
         mut("at_peak", dict(AT_PEAK, devices=[APDEV, dict(APDEV, device=1, live_bytes=-1)]))),
        ("at_peak device live_bytes a real number",
         mut("at_peak", dict(AT_PEAK, devices=[dict(APDEV, live_bytes=1.5)]))),
        ("at_peak sites missing", mut("at_peak", dict(AT_PEAK, sites=DELETE))),
        ("at_peak sites an object", mut("at_peak", dict(AT_PEAK, sites=APSITE))),
        ("at_peak site not an object", mut("at_peak", dict(AT_PEAK, sites=[1]))),
        ("at_peak site unknown", mut("at_peak", dict(AT_PEAK, sites=[APSITE, dict(APSITE, site=99)]))),
        ("at_peak site negative", mut("at_peak", dict(AT_PEAK, sites=[dict(APSITE, site=-1)]))),
        ("at_peak site a string", mut("at_peak", dict(AT_PEAK, sites=[dict(APSITE, site="1")]))),
        ("at_peak site missing", mut("at_peak", dict(AT_PEAK, sites=[dict(APSITE, site=DELETE)]))),
        ("at_peak site live_bytes negative",
         mut("at_peak", dict(AT_PEAK, sites=[dict(APSITE, live_bytes=-1)]))),
        ("at_peak site live_bytes missing",
         mut("at_peak", dict(AT_PEAK, sites=[dict(APSITE, live_bytes=DELETE)]))),
    ]
    return cases


# Both read reports the same way (load_path, report_build): every input
# goes to each.
COMMANDS = ("report", "merge")
FORMATS = ([], ["--format", "json"])


class Checker:
    def __init__(self, gpuspy, valgrind, sample):
        self.gpuspy = gpuspy
        self.valgrind = valgrind
        # with SAMPLE, each input goes to one command in one format, the
        # next input to the next of them
        self.sample = sample
        self.turn = 0
        # with SAMPLE and THIN, only one bad input in three is run
        self.thin = False
        self.seen = 0

    def thinned(self):
        """True when this bad input is left out of the sample."""
        if not (self.sample and self.thin):
            return False
        self.seen += 1
        return (self.seen - 1) % 3 != 0

    def ways(self, ways):
        """WAYS, or with a sample the one whose turn it is."""
        if not self.sample:
            return ways
        self.turn += 1
        return [ways[(self.turn - 1) % len(ways)]]

    def prefix(self):
        if not self.valgrind:
            return []
        return [self.valgrind, "-q", "--error-exitcode=99", "--leak-check=full",
                "--errors-for-leak-kinds=definite", "--track-fds=no"]

    def expect_error(self, name, args, named, status=2, forbid=()):
        if self.thinned():
            return
        for command, fmt in self.ways([(c, f) for c in COMMANDS for f in FORMATS]):
            cmd = self.prefix() + [self.gpuspy, command] + fmt + args
            fmt = [command] + fmt
            try:
                p = harness.run(cmd, timeout=300 if self.valgrind else 20, text=False)
            except subprocess.TimeoutExpired:
                self.fail(name, fmt, "timed out")
                continue
            err = p.stderr.decode(errors="replace")
            lines = err.splitlines()
            why = None
            if p.returncode != status:
                why = "status %d, expected %d" % (p.returncode, status)
            elif len(lines) != 1 or not err.endswith("\n"):
                why = "%d lines on stderr" % len(lines)
            elif not lines[0].startswith("gpuspy"):
                why = "the line does not start with 'gpuspy'"
            elif named and named not in lines[0]:
                why = "the line does not name %s" % named
            elif p.stdout:
                why = "something was printed on stdout"
            elif any(w in lines[0] for w in forbid):
                why = "the line quotes the file"
            if why:
                self.fail(name, fmt, why + "; stderr: " + repr(err[:2000]))
            else:
                check(True, "%-40s %-6s %s" % (name, command, lines[0][:150]))

    def expect_read_around(self, name, args, named):
        """Status 0, the report printed, and one line on stderr naming the
        process NAMED that could not be read."""
        if self.thinned():
            return
        for command, fmt in self.ways([(c, f) for c in COMMANDS for f in FORMATS]):
            p = harness.run(self.prefix() + [self.gpuspy, command] + fmt + args, timeout=300,
                            text=False)
            lines = p.stderr.decode(errors="replace").splitlines()
            if (p.returncode != 0 or len(lines) != 1 or not p.stdout or
                    "1 of 2 processes could not be read: " + named + ": " not in lines[0]):
                self.fail(name, [command] + fmt, "status %d, stderr %r" % (
                    p.returncode, p.stderr[:2000]))
            else:
                check(True, "%-40s %-6s %s" % (name, command, lines[0][:150]))

    def expect_ok(self, name, args):
        for command in self.ways(COMMANDS):
            p = harness.run(self.prefix() + [self.gpuspy, command] + args, timeout=300, text=False)
            if p.returncode != 0 or p.stderr:
                self.fail(name, [command], "status %d, stderr %r" % (p.returncode,
                                                                     p.stderr[:2000]))
            else:
                check(True, "%s (%s)" % (name, command))

    def fail(self, name, fmt, why):
        check(False, "%s %s" % (name, " ".join(fmt)), why)


def main():
    gpuspy, fixtures = sys.argv[1], sys.argv[2]
    valgrind = None
    if sys.argv[3:5] and sys.argv[3] == "--valgrind":
        valgrind = sys.argv[4]
    every = valgrind is None or sys.argv[5:6] == ["--all"]
    valid_file = os.path.join(fixtures, "process", "node7-4242", "report.json")
    with open(valid_file, "rb") as f:
        valid_text = f.read()
    valid_doc = json.loads(valid_text)
    c = Checker(gpuspy, valgrind, sample=not every)

    with tempfile.TemporaryDirectory(prefix="gpuspy-bad-") as tmp:
        cases = mutations(valid_doc, valid_text)
        if not every:
            # one of every family: parse errors, types, ranges, indices
            pick = {"empty file", "truncated at 50%", "binary junk", "invalid UTF-8",
                    "deep nesting", "format version 2", "leaked a string",
                    "integer beyond 64 bits", "site live above allocated",
                    "frame module index out of range", "frame symbol not a string",
                    "python frame function missing", "process python note not a string",
                    "oom site unknown", "oom file outside the directory",
                    "event kind unknown", "at_peak site unknown",
                    "at_peak device live_bytes negative", "snapshot samples missing",
                    "snapshot beside an event", "site growing a string"}
            cases = [x for x in cases if x[0] in pick]
        for i, (name, content) in enumerate(cases):
            # a process directory of its own per case; every other case
            # names the file itself rather than its directory
            d = os.path.join(tmp, "case%02d" % i, "node-%d" % (1000 + i))
            os.makedirs(d)
            f = os.path.join(d, "report.json")
            with open(f, "wb") as out:
                out.write(content)
            c.expect_error(name, [f if i % 2 else d], f)

        # the same report with a valid "graph" and "calls" is read
        good = copy.deepcopy(valid_doc)
        good["graph"] = GRAPH
        good["calls"] = CALLS
        d = os.path.join(tmp, "graph-good", "node-1")
        os.makedirs(d)
        with open(os.path.join(d, "report.json"), "w") as out:
            json.dump(good, out)
        c.expect_ok("a valid graph and calls", [d])
        c.thin = True

        # paths that are not reports at all
        missing = os.path.join(tmp, "does-not-exist")
        c.expect_error("missing path", [missing], missing)
        empty_run = os.path.join(tmp, "empty-run")
        os.makedirs(os.path.join(empty_run, "node-1"))
        c.expect_error("run directory without reports", [empty_run], empty_run)
        c.expect_error("empty directory", [os.path.join(empty_run, "node-1")],
                       os.path.join(empty_run, "node-1"))
        isdir = os.path.join(tmp, "isdir", "node-2")
        os.makedirs(os.path.join(isdir, "report.json"))
        c.expect_error("report.json is a directory", [isdir],
                       os.path.join(isdir, "report.json"))
        fifo = os.path.join(tmp, "fifo.json")
        os.mkfifo(fifo)
        c.expect_error("a FIFO (must not hang)", [fifo], fifo)
        c.expect_error("a device", ["/dev/null"], "/dev/null")

        # a run directory with one good and one bad process: the good one
        # is read, the bad one named in one line (tests/cli/test_read_around.py
        # has the rest); with --strict, the bad one fails the command
        mixed = os.path.join(tmp, "mixed-run")
        for name, content in (("node-1", valid_text), ("node-2", valid_text[:100])):
            os.makedirs(os.path.join(mixed, name))
            with open(os.path.join(mixed, name, "report.json"), "wb") as out:
                out.write(content)
        c.expect_read_around("run directory with one bad report", [mixed],
                             os.path.join(mixed, "node-2"))
        c.expect_error("run directory with one bad report, --strict", ["--strict", mixed],
                       os.path.join(mixed, "node-2"))
        # a good path, then a bad one
        c.expect_error("good path then a missing one", [valid_file, missing], missing)

        # post-mortems (oom-N.json) that report.json names, or that stand
        # for a process without report.json: the bad one is named
        def post_mortem(number, **changes):
            d = copy.deepcopy(valid_doc)
            d["oom"] = [dict(OOM, number=n, file="oom-%d.json" % n)
                        for n in range(1, number + 1)]
            d["event"] = dict(EVENT, number=number)
            d.update(changes)
            return json.dumps(d, indent=1).encode()

        def with_oom(n):
            d = copy.deepcopy(valid_doc)
            d["oom"] = [dict(OOM, number=1, file="oom-%d.json" % n)]
            return json.dumps(d).encode()

        pm_cases = [
            ("post-mortem truncated", with_oom(1), "oom-1.json", post_mortem(1)[:200]),
            ("post-mortem without event", with_oom(1), "oom-1.json", valid_text),
            ("post-mortem of another event", with_oom(1), "oom-1.json", post_mortem(2)),
            ("post-mortem of another process", with_oom(1), "oom-1.json",
             post_mortem(1, pid=4243)),
            ("post-mortem of another host", with_oom(1), "oom-1.json",
             post_mortem(1, host="node8")),
            ("post-mortem a directory", with_oom(1), "oom-1.json", None),
            ("post-mortem with a bad event", with_oom(1), "oom-1.json",
             post_mortem(1, event=dict(EVENT, requested_bytes="big"))),
            # no report.json: the highest oom-N.json is the report
            ("only post-mortem invalid", None, "oom-2.json", post_mortem(2)[:-3]),
            ("only post-mortem not an event's", None, "oom-3.json", valid_text),
        ]
        for i, (name, report, bad_name, bad_content) in enumerate(pm_cases):
            d = os.path.join(tmp, "pm%02d" % i, "node-%d" % (2000 + i))
            os.makedirs(d)
            if report is not None:
                with open(os.path.join(d, "report.json"), "wb") as out:
                    out.write(report)
            else:
                # an earlier, valid one that the bad one names
                with open(os.path.join(d, "oom-1.json"), "wb") as out:
                    out.write(post_mortem(1))
            bad_file = os.path.join(d, bad_name)
            if bad_content is None:
                os.makedirs(bad_file)
            else:
                with open(bad_file, "wb") as out:
                    out.write(bad_content)
            # as a process directory, and within a run directory
            c.expect_error(name, [d if i % 2 else os.path.dirname(d)], bad_file)
        # the earlier post-mortem that the highest one names is bad
        d = os.path.join(tmp, "pm-earlier", "node-3000")
        os.makedirs(d)
        with open(os.path.join(d, "oom-2.json"), "wb") as out:
            out.write(post_mortem(2))
        with open(os.path.join(d, "oom-1.json"), "wb") as out:
            out.write(post_mortem(2))
        c.expect_error("earlier post-mortem of another event", [d],
                       os.path.join(d, "oom-1.json"))

        # killed processes: snapshot.json, alone or beside oom-N.json, is
        # read strictly; the bad one is named, as a process directory and
        # within a run directory
        def snapshot(end_time, **changes):
            d = copy.deepcopy(valid_doc)
            d["end_time"] = end_time
            d["snapshot"] = {"samples": 12, "interval_us": 100000}
            d.update(changes)
            return json.dumps(d, indent=1).encode()

        snap_cases = [
            ("snapshot.json without snapshot", {"snapshot.json": valid_text}, "snapshot.json"),
            ("snapshot.json truncated", {"snapshot.json": snapshot(1764510041.0)[:300]},
             "snapshot.json"),
            ("snapshot.json empty", {"snapshot.json": b""}, "snapshot.json"),
            ("snapshot.json growing a string",
             {"snapshot.json": snapshot(1764510041.0).replace(
                 b'"first_seq": 17', b'"growing": "yes", "first_seq": 17', 1)},
             "snapshot.json"),
            # unreadable: its time unknown, so it is the one read
            ("snapshot.json invalid beside a post-mortem",
             {"snapshot.json": b"{", "oom-1.json": post_mortem(1)}, "snapshot.json"),
            # newer than the post-mortem: read, and refused
            ("snapshot.json newer and bad",
             {"snapshot.json": snapshot(1764510099.0, snapshot={"samples": -1, "interval_us": 1}),
              "oom-1.json": post_mortem(1, end_time=1764510040.5)}, "snapshot.json"),
            # older: the post-mortem is read, and refused
            ("post-mortem newer than snapshot.json and bad",
             {"snapshot.json": snapshot(1764510001.0),
              "oom-1.json": post_mortem(1, end_time=1764510040.5, pid=0)}, "oom-1.json"),
            ("snapshot.json a directory", {"snapshot.json": None}, "snapshot.json"),
        ]
        for i, (name, files, bad_name) in enumerate(snap_cases):
            d = os.path.join(tmp, "snap%02d" % i, "node-%d" % (5000 + i))
            os.makedirs(d)
            for fname, content in files.items():
                if content is None:
                    os.makedirs(os.path.join(d, fname))
                else:
                    with open(os.path.join(d, fname), "wb") as out:
                        out.write(content)
            c.expect_error(name, [d if i % 2 else os.path.dirname(d)],
                           os.path.join(d, bad_name))
        # a valid snapshot.json is read, alone, named directly, or in a run
        good = os.path.join(tmp, "snap-good", "node-5100")
        os.makedirs(good)
        with open(os.path.join(good, "snapshot.json"), "wb") as out:
            out.write(snapshot(1764510041.0))
        c.expect_ok("valid snapshot.json", [good])
        c.expect_ok("valid snapshot.json, run directory", [os.path.dirname(good)])
        c.expect_ok("valid snapshot.json named", ["--format", "json",
                                                  os.path.join(good, "snapshot.json")])

        # each report is valid, but their sums do not fit in 64 bits
        big = os.path.join(tmp, "overflow-run")
        for name in ("node-1", "node-2"):
            d = copy.deepcopy(valid_doc)
            d["untracked_frees"] = MAX_I64
            os.makedirs(os.path.join(big, name))
            with open(os.path.join(big, name, "report.json"), "w") as out:
                json.dump(d, out)
        c.expect_error("counters overflow when merged", [big],
                       os.path.join(big, "node-2", "report.json"))

        # a valid at_peak is read
        good = os.path.join(tmp, "at-peak", "node-4000")
        os.makedirs(good)
        d = copy.deepcopy(valid_doc)
        d["at_peak"] = AT_PEAK
        with open(os.path.join(good, "report.json"), "w") as out:
            json.dump(d, out)
        c.expect_ok("valid at_peak", [good])
        c.expect_ok("valid at_peak, JSON", ["--format", "json", good])

        # a file that is not JSON, or not a report, is never quoted: the
        # message says where, not what (report.json may be a link to a
        # file the user may not read)
        secret = [b"hunter2", b"SECRETWORD"]
        quoted = [
            ("not JSON, quoted", b"SECRETWORD=hunter2\n"),
            ("a bare word in an object, quoted", b'{"SECRETWORD": hunter2}'),
            ("a missing comma, quoted", b'["SECRETWORD" "hunter2"]'),
            ("a duplicate key, quoted", b'{"SECRETWORD": 1, "SECRETWORD": 2, "hunter2": 3}'),
            ("a bad escape, quoted", b'{"a": "SECRETWORD\\qhunter2"}'),
            ("a bad number, quoted", b'{"a": -hunter2}'),
            ("invalid UTF-8, quoted", b'{"SECRETWORD": "hunter2\xff"}'),
            ("a NUL, quoted", b'{"SECRETWORD": "hunter2"}\0hunter2'),
        ]
        for i, (name, content) in enumerate(quoted):
            d = os.path.join(tmp, "quoted%02d" % i, "node-%d" % (6000 + i))
            os.makedirs(d)
            target = os.path.join(tmp, "quoted%02d" % i, "private")
            with open(target, "wb") as out:
                out.write(content)
            # report.json a link to that file
            os.symlink(target, os.path.join(d, "report.json"))
            c.expect_error(name, [d], os.path.join(d, "report.json"),
                           forbid=[w.decode() for w in secret])

        # torch.json beside a valid report: read with the same reader
        for i, (name, content) in enumerate([
                ("torch.json with a NUL byte", b'{"format": "gpuspy-torch/1"}\0'),
                ("torch.json not JSON, quoted", b"SECRETWORD=hunter2")]):
            d = os.path.join(tmp, "torch%02d" % i, "node-4242")
            os.makedirs(d)
            with open(os.path.join(d, "report.json"), "wb") as out:
                out.write(valid_text)
            with open(os.path.join(d, "torch.json"), "wb") as out:
                out.write(content)
            c.expect_error(name, [d], os.path.join(d, "torch.json"),
                           forbid=[w.decode() for w in secret])

        # two sites of one id (no gpuspy writes that, but it is read: the
        # first counts), named by an out-of-memory event: found by the
        # fuzzer (tests/fuzz/regress/process), the event's site leaked
        good = os.path.join(tmp, "site-id-twice", "node-4001")
        os.makedirs(good)
        d = copy.deepcopy(valid_doc)
        d["sites"][0]["id"] = d["sites"][1]["id"]
        d["oom"] = [dict(OOM, site=d["sites"][1]["id"])]
        with open(os.path.join(good, "report.json"), "w") as out:
            json.dump(d, out)
        c.expect_ok("two sites of one id, an event of that id", [good])

        # every figure of a verdict, valid: read, and judged
        good = os.path.join(tmp, "verdict-figures", "node-4002")
        os.makedirs(good)
        d = copy.deepcopy(valid_doc)
        d["oom"] = [dict(OOMF, site=d["sites"][1]["id"])]
        d["limit"] = {"bytes": 2**33}
        with open(os.path.join(good, "report.json"), "w") as out:
            json.dump(d, out)
        c.expect_ok("an event with every figure of its verdict", [good])
        c.expect_ok("an event with every figure of its verdict, JSON", ["--format", "json", good])
        c.expect_ok("two sites of one id, an event of that id, JSON", ["--format", "json", good])

        # control characters in a file name are not passed to the terminal
        weird = os.path.join(tmp, "line\nbreak\x1b[31m")
        c.expect_error("control characters in the name", [weird], None)

        # usage errors: status 2, one line
        for name, args in (("no PATH and no ./gpuspy-out", []),
                           ("unknown format", ["--format", "xml", "x"]),
                           ("bad --top", ["--top", "ten", "x"]),
                           ("negative --top", ["--top", "-1", "x"]),
                           ("unknown option", ["--frobnicate", "x"]),
                           ("missing option value", ["x", "--format"])):
            c.expect_error("usage: " + name, args, None)

        if valgrind:
            c.expect_ok("valid process (valgrind)", [os.path.join(fixtures, "process")])
            c.expect_ok("valid run (valgrind)", ["--format", "json", os.path.join(fixtures, "run")])
            c.expect_ok("valid Python run (valgrind)", [os.path.join(fixtures, "python")])
            c.expect_ok("valid Python run, JSON (valgrind)",
                        ["--format", "json", os.path.join(fixtures, "python")])
            c.expect_ok("valid out-of-memory run (valgrind)", [os.path.join(fixtures, "oom")])
            c.expect_ok("valid out-of-memory run, JSON (valgrind)",
                        ["--format", "json", os.path.join(fixtures, "oom")])
            c.expect_ok("valid growth run (valgrind)", [os.path.join(fixtures, "growth")])
            c.expect_ok("valid growth run, JSON (valgrind)",
                        ["--format", "json", os.path.join(fixtures, "growth")])
            c.expect_ok("valid ranks run (valgrind)", [os.path.join(fixtures, "ranks")])
            c.expect_ok("valid ranks run, JSON (valgrind)",
                        ["--format", "json", os.path.join(fixtures, "ranks")])
            c.expect_ok("a post-mortem named (valgrind)",
                        [os.path.join(fixtures, "oom", "node9-500", "oom-2.json")])

    return harness.done()


if __name__ == "__main__":
    sys.exit(main())
