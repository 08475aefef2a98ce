#!/usr/bin/env python3
"""The arrows between the modules of src/ (a module: a .c and its .h of
one folder, or of one stage of it).

 - Between folders, one way: cli -> read -> common, preload -> common;
   an #include against them is refused.
 - src/preload is in stages, a subfolder each (1-ground, 2-record, 3-out,
   4-top): a module uses only modules of its own stage and those before
   it, by #include or by call.
 - Inside a folder, no circle of modules, by #include (the .c and .h
   files' own includes of the folder's headers) or by call (the symbols
   each object file of the build defines and uses, nm).
Usage: layers.py SRC_DIR BUILD_DIR"""
import glob, os, re, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import check, done  # noqa: E402

src, build = sys.argv[1:3]
FOLDERS = ("common", "preload", "read", "cli")
# what each folder may include of the others
MAY = {"common": set(), "preload": {"common"}, "read": {"common"}, "cli": {"read", "common"}}
# the stages of a folder, in order: a subfolder each
STAGES = {"preload": ["1-ground", "2-record", "3-out", "4-top"]}


def sources(folder, pattern):
    """the folder's files matching PATTERN, its stages' included"""
    return sorted(glob.glob(os.path.join(src, folder, pattern)) +
                  glob.glob(os.path.join(src, folder, "*", pattern)))


def module_stage(folder):
    """module -> its stage's number, for a folder in stages"""
    st = {}
    for i, name in enumerate(STAGES.get(folder, ())):
        for f in glob.glob(os.path.join(src, folder, name, "*.[ch]")):
            st[os.path.basename(f).rsplit(".", 1)[0]] = i
    return st


def headers():
    """header base name -> the folders that have it"""
    where = {}
    for f in FOLDERS:
        for h in sources(f, "*.h"):
            where.setdefault(os.path.basename(h), set()).add(f)
    return where


def include_graph(folder, where):
    g, wrong = {}, []
    for path in sources(folder, "*.[ch]"):
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
        for st in STAGES.get(folder, ()):  # meson names it STAGE_MODULE.c.o
            if mod.startswith(st + "_"):
                mod = mod[len(st) + 1:]
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


def judge(kind, folder, g):
    found = circles(g)
    check(not found, f"{kind}: src/{folder}: no circle of modules "
          f"({'; '.join(' -> '.join(sorted(c)) for c in found) or 'none'})")
    st = module_stage(folder)
    if not st:
        return
    up = sorted(f"{m} ({STAGES[folder][st[m]]}) -> {d} ({STAGES[folder][st[d]]})"
                for m in g for d in g[m] if m in st and d in st and st[d] > st[m])
    check(not up, f"{kind}: src/{folder}: each stage uses only itself and the stages before it "
          f"({'; '.join(up) or f'{len(st)} modules in {len(STAGES[folder])} stages'})")


where = headers()
for folder in FOLDERS:
    g, wrong = include_graph(folder, where)
    check(not wrong, f"include: src/{folder} includes only {sorted(MAY[folder]) or 'nothing'} "
          f"of the other folders: {wrong}")
    judge("include", folder, g)
    cg, nobj = call_graph(folder)
    check(nobj > 0, f"call: src/{folder}: its objects are built ({nobj})")
    judge("call", folder, cg)
for folder, names in STAGES.items():
    loose = [f for f in os.listdir(os.path.join(src, folder)) if f.endswith((".c", ".h"))]
    check(not loose and all(os.path.isdir(os.path.join(src, folder, n)) for n in names),
          f"src/{folder}: every source in a stage's folder, the folders in flow order "
          f"({' '.join(sorted(os.listdir(os.path.join(src, folder))))})")
sys.exit(done())
