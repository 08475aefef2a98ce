#!/usr/bin/env python3
"""The arrows between the modules of src/ (a module: a .c and its .h of
one folder).

 - Between folders, one way: cli -> read -> common, preload -> common;
   an #include against them is refused.
 - Inside a folder, no circle of modules, by #include (the .c and .h
   files' own includes of the folder's headers) or by call (the symbols
   each object file of the build defines and uses, nm).

The circles that are left are listed in KNOWN, each to be broken: a
circle not there fails the test (a new one, or a known one grown), and so
does a known one that is gone or smaller (take it off the list, so that it
cannot come back).
Usage: layers.py SRC_DIR BUILD_DIR"""
import glob, os, re, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import check, done  # noqa: E402

src, build = sys.argv[1:3]
FOLDERS = ("common", "preload", "read", "cli")
# what each folder may include of the others
MAY = {"common": set(), "preload": {"common"}, "read": {"common"}, "cli": {"read", "common"}}
# the circles left, by folder: each a set of modules
KNOWN = {"include": {}, "call": {}}


def headers():
    """header base name -> the folders that have it"""
    where = {}
    for f in FOLDERS:
        for h in glob.glob(os.path.join(src, f, "*.h")):
            where.setdefault(os.path.basename(h), set()).add(f)
    return where


def include_graph(folder, where):
    g, wrong = {}, []
    for path in sorted(glob.glob(os.path.join(src, folder, "*.[ch]"))):
        mod = os.path.basename(path).rsplit(".", 1)[0]
        g.setdefault(mod, set())
        for n, line in enumerate(open(path, encoding="utf-8"), 1):
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if not m:
                continue
            name = os.path.basename(m.group(1))
            if folder in where.get(name, ()):
                if name.rsplit(".", 1)[0] != mod:
                    g[mod].add(name.rsplit(".", 1)[0])
                continue
            others = where.get(name, set()) - {folder}
            if others and not others & MAY[folder]:
                wrong.append(f"src/{folder}/{os.path.basename(path)}:{n} includes {name} of "
                             f"src/{'/'.join(sorted(others))}")
    return g, wrong


def call_graph(folder):
    """module -> modules whose functions or data it uses, from the objects
    of every target built from the folder"""
    defs, uses = {}, {}
    objs = glob.glob(os.path.join(build, "src", folder, "*.p", "*.c.o"))
    for o in objs:
        mod = os.path.basename(o)[:-len(".c.o")]
        r = subprocess.run(["nm", "--defined-only", "-g", o], capture_output=True, text=True)
        for line in r.stdout.splitlines():
            parts = line.split()
            if len(parts) == 3:
                defs.setdefault(parts[2], set()).add(mod)
        r = subprocess.run(["nm", "-u", o], capture_output=True, text=True)
        uses.setdefault(mod, set()).update(l.split()[-1] for l in r.stdout.splitlines() if l.strip())
    g = {}
    for mod, syms in uses.items():
        g.setdefault(mod, set())
        for s in syms:
            for d in defs.get(s, ()):
                if d != mod:
                    g[mod].add(d)
    return g, len(objs)


def circles(g):
    """the strongly connected components of more than one module (Tarjan)"""
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(g.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)
    sys.setrecursionlimit(10000)
    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def judge(kind, folder, found):
    known = KNOWN[kind].get(folder, [])
    for c in found:
        check(c in known, f"{kind}: src/{folder}: no circle but the known ones: "
              f"{' -> '.join(sorted(c))}{'' if c in known else ' is new, or a known one grown'}")
    for k in known:
        check(k in found, f"{kind}: src/{folder}: the known circle {', '.join(sorted(k))} "
              "is still there as listed (gone or smaller: take it off KNOWN)")


where = headers()
for folder in FOLDERS:
    g, wrong = include_graph(folder, where)
    check(not wrong, f"include: src/{folder} includes only {sorted(MAY[folder]) or 'nothing'} "
          f"of the other folders: {wrong}")
    judge("include", folder, circles(g))
    cg, nobj = call_graph(folder)
    check(nobj > 0, f"call: src/{folder}: its objects are built ({nobj})")
    judge("call", folder, circles(cg))
sys.exit(done())
