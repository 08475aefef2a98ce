#!/usr/bin/env python3
"""Names found inside the process (libgpuspy(7), CALL SITES), on the fake
driver, for tests/integration/names.c: a program built without -rdynamic
whose allocating function is static, so that only its .symtab names it.

 - it is named "staircase_here (names.c:LINE)", LINE the one marked in the
   source, on every surface the process prints: the growth line while it
   runs, /metrics' name label, the exit summary and report.txt (whose
   stack row adds module and offset), as `gpuspy report` names it;
 - with libdw made unavailable (GPUSPY_LIBDW): "staircase_here (names)",
   and one line saying why; with GPUSPY_SYMBOLS=0, or stripped: the
   module and the frame's offset, as report.json gives them;
 - a library's static function likewise, named from the library's file;
 - the program or the library replaced (a build of the same code whose
   function is impostor_*, renamed over it), deleted, or replaced by a
   truncated copy or by garbage, before anything in the process named the
   site: module+0xoffset everywhere, never the impostor's name, and the
   program runs to its end;
 - with and without a GNU build-id (the check is then the file's device
   and inode against the mapping's);
 - what the loader's dynamic symbols name is named still where the file
   cannot be used (GPUSPY_SYMBOLS=0, the library replaced): main of a
   program linked with -rdynamic, the library's exported function.
Usage: names.py LIBGPUSPY GPUSPY FAKE_DIR NAMES NAMES_IMPOSTOR NAMES_NOBID
       NAMES_NOBID_IMPOSTOR NAMES_STRIPPED NAMES_DYN LIBNAMES LIBNAMES_IMPOSTOR
       NAMES_C NAMES_LIB_C"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

(lib, cli, fake, prog, impostor, nobid, nobid_impostor, stripped, dyn, libnames, libimpostor,
 source, lib_source) = sys.argv[1:14]
lib = harness.preload(lib)
env = harness.clean_env(fake, LD_PRELOAD=lib)
env.update(kv.split("=", 1) for kv in os.environ.get("SANITIZER_GPUSPY", "").split() if "=" in kv)
made = []
STEPS = 20
MIB = 1 << 20


def marked(path, marker):
    with open(path) as f:
        return next(i for i, line in enumerate(f, 1) if marker in line)


LINE = marked(source, "/* the growing line */")
LIB_LINE = marked(lib_source, "/* the library's growing line */")


def metrics_names(addr, want_bytes):
    """The name labels of /metrics' sites once one holds WANT_BYTES."""
    def names():
        try:
            with urllib.request.urlopen(f"http://{addr}/metrics", timeout=5) as r:
                page = r.read().decode()
        except OSError:
            page = ""
        got = re.findall(r'^gpuspy_site_live_bytes\{site="[0-9a-f]{16}",name="((?:[^"\\]|\\.)*)",'
                         r'kind="device"\} (\d+)$', page, re.M)
        return [n for n, _ in got] if any(int(v) >= want_bytes for _, v in got) else None
    return harness.wait_for(names, timeout=20)


def run(tag, argv, extra, prometheus=False):
    """Runs ARGV under gpuspy; what it printed, served and wrote."""
    out = harness.tempdir()
    made.append(out)
    e = dict(env, GPUSPY_OUTPUT_DIR=out, **extra)
    if prometheus:
        e["GPUSPY_PROMETHEUS"] = "127.0.0.1:0"
    p = subprocess.Popen(argv, env=e, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    held = p.stdout.readline().strip() == "names: held"
    names = None
    if held and prometheus:
        f = glob.glob(os.path.join(out, "*", "prometheus"))
        addr = open(f[0]).read().strip() if f else None
        names = metrics_names(addr, STEPS * MIB) if addr else None
    try:
        stdout, stderr = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        stdout, stderr = p.communicate()
    check(held and p.returncode == 0, f"{tag}: runs to its end (status {p.returncode})")
    d = glob.glob(os.path.join(out, "*"))
    r = {"stderr": stderr, "metrics": names, "out": out, "text": "", "json": {}}
    if d:
        try:
            r["text"] = open(os.path.join(d[0], "report.txt")).read()
            r["json"] = json.load(open(os.path.join(d[0], "report.json")))
        except (OSError, ValueError):
            pass
    return r


def frames_in(r, module):
    """The frames of the one site that lie in MODULE (a base name)."""
    rep = r["json"]
    mods = [os.path.basename(m["path"]) for m in rep.get("modules", [])]
    sites = rep.get("sites", [])
    return [f for f in (sites[0]["frames"] if len(sites) == 1 else [])
            if f["module"] >= 0 and mods[f["module"]] == module]


def frame_in(r, module):
    """The first frame of the one site in MODULE."""
    got = frames_in(r, module)
    return got[0] if got else None


def surfaces(tag, r, name, row, growth=True):
    """NAME on the growth line, the metrics (when served), the exit summary
    and report.txt's LEAKED AT EXIT, whose first stack row is ROW."""
    if growth:
        told = [l for l in r["stderr"].splitlines() if l.startswith("gpuspy: growing: ")]
        check(len(told) == 1 and f", at {name}; " in told[0],
              f"{tag}: the growth line names {name!r}: {told}")
    if r["metrics"] is not None or growth:
        check(r["metrics"] == [name], f"{tag}: /metrics names {name!r}: {r['metrics']}")
    exit_line = f"gpuspy:   {STEPS if growth else 3}.0 MiB in {STEPS if growth else 3} from {name}"
    check(exit_line in r["stderr"].splitlines(),
          f"{tag}: the exit summary names it: {r['stderr'].splitlines()[-2:]}")
    check(f" from {name} (device, cudaMalloc via runtime)" in r["text"],
          f"{tag}: report.txt names it")
    check(re.search(r"^    #0 " + re.escape(row), r["text"], re.M) is not None,
          f"{tag}: report.txt's stack starts with {row!r}")


def no_impostor(tag, r):
    said = r["stderr"] + r["text"] + json.dumps(r["json"]) + json.dumps(r["metrics"])
    check("impostor" not in said, f"{tag}: the impostor's name is nowhere")


live = {"GPUSPY_INTERVAL": "50ms"}
# no snapshot thread at all: nothing names a site before the exit
quiet_thread = {"GPUSPY_INTERVAL": "0", "GPUSPY_SIGNAL": "off"}
work = harness.tempdir()

# 1. Named from .symtab, with the line through libdw.
r = run("symtab", [prog, "exe", str(STEPS), "100"], live, prometheus=True)
name = f"staircase_here (names.c:{LINE})"
f = frame_in(r, "names")
surfaces("symtab", r, name, f"staircase_here (names.c:{LINE}, names+0x{f['offset']:x})"
         if f else "?")
check(f is not None and f.get("symbol") == "staircase_here",
      "symtab: report.json's frame has the symbol")
j = subprocess.run([cli, "report", "--format", "json", r["out"]], capture_output=True, text=True)
head = json.loads(j.stdout)["sites"][0]["headline"] if j.returncode == 0 else {}
check(head.get("function") == "staircase_here" and head.get("line") == LINE and
      os.path.basename(head.get("file", "")) == "names.c",
      f"symtab: gpuspy report names the same site alike: {head}")

# 2. libdw unavailable: function names without lines.
r = run("no libdw", [prog, "exe", str(STEPS), "100"],
        dict(live, GPUSPY_LIBDW="/nonexistent/libdw.so.1"), prometheus=True)
f = frame_in(r, "names")
surfaces("no libdw", r, "staircase_here (names)",
         f"staircase_here (names+0x{f['offset']:x})" if f else "?")
check(r["stderr"].count("GPUSPY_LIBDW=/nonexistent/libdw.so.1 cannot be loaded") == 1,
      "no libdw: one line says so")

# 3. Stripped: module and offset, the offset of report.json's frame.
r = run("stripped", [stripped, "exe", str(STEPS), "100"], live, prometheus=True)
f = frame_in(r, "names_stripped")
off = f"names_stripped+0x{f['offset']:x}" if f else "?"
surfaces("stripped", r, off, off)
check(f is not None and "symbol" not in f, "stripped: report.json's frame has no symbol")

# 4. GPUSPY_SYMBOLS=0: the dynamic symbols only, which name nothing here.
r = run("symbols off", [prog, "exe", "3", "10"], dict(quiet_thread, GPUSPY_SYMBOLS="0"))
f = frame_in(r, "names")
off = f"names+0x{f['offset']:x}" if f else "?"
surfaces("symbols off", r, off, off, growth=False)

# 5. A library's static function, from the library's .symtab (the
# stripped program: none of its own frames is named before the library's).
libpath = os.path.join(work, "libvictim.so")
shutil.copy2(libnames, libpath)
r = run("library", [stripped, "lib", str(STEPS), "100", libpath], live, prometheus=True)
f = frame_in(r, "libvictim.so")
surfaces("library", r, f"lib_staircase (names_lib.c:{LIB_LINE})",
         f"lib_staircase (names_lib.c:{LIB_LINE}, libvictim.so+0x{f['offset']:x})" if f else "?")

# 6. The library replaced by the impostor, or deleted, once loaded and
# before its first allocation (so also before anything named it).
for how in ("replaced", "deleted"):
    shutil.copy2(libnames, libpath)
    other = os.path.join(work, "libother.so")
    shutil.copy2(libimpostor, other)
    tag = f"library {how}"
    r = run(tag, [stripped, "lib", str(STEPS), "100", libpath, other if how == "replaced" else "-"],
            live, prometheus=True)
    f = frame_in(r, "libvictim.so")
    off = f"libvictim.so+0x{f['offset']:x}" if f else "?"
    surfaces(tag, r, off, off)
    no_impostor(tag, r)

# 6b. What the loader names is named where the file cannot be used: the
# library replaced, its exported function on the stack; a -rdynamic
# program's main with GPUSPY_SYMBOLS=0.  The headline is the one rule's,
# gpuspy report's (sitename_headline): the innermost frame that is not
# noise, named or not - the unnamed static function, by its offset.
shutil.copy2(libnames, libpath)
shutil.copy2(libimpostor, other)
tag = "library replaced, called through its exported function"
r = run(tag, [stripped, "lib-call", "3", "10", libpath, other], quiet_thread)
fs = frames_in(r, "libvictim.so")
check([f.get("symbol") for f in fs] == [None, "names_lib_call"],
      f"{tag}: report.json names the exported function only: {fs}")
head = f"libvictim.so+0x{fs[0]['offset']:x}" if fs else "?"
check(f"gpuspy:   3.0 MiB in 3 from {head}" in r["stderr"].splitlines(),
      f"{tag}: the exit summary names it {head}: {r['stderr'].splitlines()[-2:]}")
no_impostor(tag, r)
tag = "GPUSPY_SYMBOLS=0, -rdynamic"
r = run(tag, [dyn, "exe", "3", "10"], dict(quiet_thread, GPUSPY_SYMBOLS="0"))
fs = frames_in(r, "names_dyn")
# (and _start, where the unwinder reaches it: not frame pointers)
check([f.get("symbol") for f in fs][:2] == [None, "main"] and
      all(f.get("symbol") in (None, "_start") for f in fs[2:]),
      f"{tag}: report.json names main, not staircase_here: {fs}")
head = f"names_dyn+0x{fs[0]['offset']:x}" if fs else "?"
check(f"gpuspy:   3.0 MiB in 3 from {head}" in r["stderr"].splitlines(),
      f"{tag}: the exit summary names it {head}: {r['stderr'].splitlines()[-2:]}")

# 7. The program replaced (with and without a build-id; by the impostor, a
# truncated copy, garbage) or deleted after its first allocation, with no
# snapshot thread: the exit is the first to name the site.
with open(prog, "rb") as fh:
    whole = fh.read()
replacements = [
    ("replaced by the impostor", prog, impostor),
    ("without build-id, replaced by the impostor", nobid, nobid_impostor),
    ("replaced by a truncated copy", prog, whole[:len(whole) // 2]),
    ("replaced by garbage", prog, b"\x7fELF\x02\x01\x01" + bytes(range(256)) * 64),
    ("deleted", prog, None),
    ("without build-id, deleted", nobid, None),
]
for tag, exe, other in replacements:
    victim = os.path.join(work, "victim")
    shutil.copy2(exe, victim)
    argv = [victim, "exe-delete", "3", "10"]
    if other is not None:
        repl = os.path.join(work, "replacement")
        if isinstance(other, bytes):
            with open(repl, "wb") as fh:
                fh.write(other)
        else:
            shutil.copy2(other, repl)
        argv = [victim, "exe-replace", "3", "10", repl]
    r = run(tag, argv, quiet_thread)
    f = frame_in(r, "victim")
    off = f"victim+0x{f['offset']:x}" if f else "?"
    surfaces(tag, r, off, off, growth=False)
    check(f is not None and "symbol" not in f, f"{tag}: report.json's frame has no symbol")
    no_impostor(tag, r)
    if os.path.exists(victim):
        os.unlink(victim)

for d in made + [work]:
    shutil.rmtree(d, ignore_errors=True)
sys.exit(harness.done())
