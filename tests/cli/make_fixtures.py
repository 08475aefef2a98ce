#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The input fixtures of the gpuspy(1) tests, made from a short description.

tests/cli/fixtures/spec.py describes each generated gpuspy-process/1 file in
a few lines: a call to doc() whose keyword arguments are the document's
members in file order, with helpers for what repeats (counters, kinds,
sites, frames, modules).  The keys of counters, sites and frames are read
from src/common/schema.h, the tables the library and the reader compile, so
a fixture spells them as both sides do.  The files are JSON as
json.dumps(indent=2) writes it, one newline at the end.

    make_fixtures.py --check [FIXTURES]   each generated file must equal the
                                          one in FIXTURES (exit 1: a list of
                                          those that differ); meson's
                                          fixtures-generated test
    make_fixtures.py --write [FIXTURES]   write them (then review `git diff`
                                          and run golden.py --update if an
                                          expected output must change)
    make_fixtures.py --describe FILE      print a spec entry for an existing
                                          report, to start describing it

FIXTURES defaults to tests/cli/fixtures beside this script.  Files that are
not in spec.py are left alone: hostile/ (bytes no writer makes, on purpose),
outside/ and frameworks/ (kept as a real run on a GPU machine wrote them),
killed/run.json (a gpuspy-run/1 file).
"""
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA_H = os.path.join(HERE, "..", "..", "src", "common", "schema.h")


def schema_tables(path=SCHEMA_H):
    """{"SCHEMA_COUNTERS": ["live_bytes", ...], ...} from schema.h's X-macros."""
    tables, name = {}, None
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"#define (SCHEMA_[A-Z]+)\(X\)", line)
            if m:
                name = m.group(1)
                tables[name] = []
                continue
            m = re.search(r'X\(\w+, "([^"]+)"\)', line)
            if name and m:
                tables[name].append(m.group(1))
            if not line.rstrip().endswith("\\"):
                name = None
    return tables


T = schema_tables()
COUNTERS = T["SCHEMA_COUNTERS"]
SITE = dict(zip(["id", "kind", "api", "door"], T["SCHEMA_SITE"][:4]))
FRAME = T["SCHEMA_FRAME"]
PYFRAME = T["SCHEMA_PYFRAME"]
KINDS = ["device", "managed", "vmm", "pinned"]  # names.c's order


def C(*v):
    """A site's or a kind's counters, in schema.h's order: live_bytes,
    live_allocations, peak_bytes, allocated_bytes, allocations,
    freed_bytes, frees."""
    assert len(v) == len(COUNTERS), v
    return dict(zip(COUNTERS, v))


ZERO = (0,) * 7


def K(**kinds):
    """"kinds": every kind, those not given with zero counters."""
    for k in kinds:
        assert k in KINDS, k
    return {k: C(*kinds.get(k, ZERO)) for k in KINDS}


def F(*frames):
    """A site's native frames: (module, offset[, symbol]) each."""
    return [dict(zip(FRAME, fr)) for fr in frames]


def PY(*frames):
    """A site's Python frames: (file, function, line) each."""
    return [dict(zip(PYFRAME, fr)) for fr in frames]


def S(id, kind, api, door, counters, **rest):
    """A site: its id, kind, api and door, its counters (a tuple for C),
    then the other members in the order given (first_seq, frames=F(...),
    python=PY(...), growing, growth...)."""
    s = {SITE["id"]: id, SITE["kind"]: kind, SITE["api"]: api, SITE["door"]: door}
    s.update(C(*counters))
    s.update(rest)
    return s


def M(*modules):
    """"modules": (path, build_id, base) each."""
    return [{"path": p, "build_id": b, "base": base} for p, b, base in modules]


def doc(**members):
    """A gpuspy-process/1 document: "format" first, then MEMBERS in order
    (gpuspy_version "0.1.0" unless given)."""
    d = {"format": "gpuspy-process/1", "gpuspy_version": members.pop("gpuspy_version", "0.1.0")}
    d.update(members)
    return d


def render(d):
    return json.dumps(d, indent=2, ensure_ascii=False) + "\n"


def load_spec():
    """{relative path: document} from spec.py, evaluated with the helpers."""
    path = os.path.join(HERE, "fixtures", "spec.py")
    env = {"C": C, "K": K, "F": F, "PY": PY, "S": S, "M": M, "doc": doc, "ZERO": ZERO}
    with open(path, encoding="utf-8") as f:
        exec(compile(f.read(), path, "exec"), env)  # our own file, in the tree
    return env["FIXTURES"]


# --describe: an existing report as a spec entry.
def _lit(v):
    return json.dumps(v, ensure_ascii=False)


def _py(v, indent):
    """V as a Python literal, on one line where it fits, else one member
    a line (JSON's true, false and null spelled as Python's)."""
    def one(x):
        t = json.dumps(x, ensure_ascii=False)
        t = re.sub(r'\btrue\b(?=(?:[^"\\]|\\.|"(?:[^"\\]|\\.)*")*$)', "True", t)
        t = re.sub(r'\bfalse\b(?=(?:[^"\\]|\\.|"(?:[^"\\]|\\.)*")*$)', "False", t)
        return re.sub(r'\bnull\b(?=(?:[^"\\]|\\.|"(?:[^"\\]|\\.)*")*$)', "None", t)

    text = one(v)
    if len(text) + indent <= 100 or not isinstance(v, (list, dict)) or not v:
        return text
    pad = " " * (indent + 4)
    if isinstance(v, list):
        body = "".join("%s%s,\n" % (pad, _py(x, indent + 4)) for x in v)
        return "[\n" + body + " " * indent + "]"
    body = "".join("%s%s: %s,\n" % (pad, _lit(k), _py(x, indent + 4)) for k, x in v.items())
    return "{\n" + body + " " * indent + "}"


def _counters(d):
    if list(d) != COUNTERS:
        return None
    return "(" + ", ".join(str(d[k]) for k in COUNTERS) + ")"


def _frames(arr, keys, name):
    out = []
    for fr in arr:
        if list(fr) != keys[: len(fr)]:
            return None
        out.append("(" + ", ".join(_lit(fr[k]) for k in fr) + ")")
    return name + "(" + ", ".join(out) + ")"


def _site(s):
    head = list(s)[:4]
    if head != list(SITE.values()) or list(s)[4:11] != COUNTERS:
        return None
    parts = [_lit(s[k]) for k in head] + [_counters({k: s[k] for k in COUNTERS})]
    for k in list(s)[11:]:
        v = s[k]
        if k == "frames" and _frames(v, FRAME, "F"):
            parts.append("frames=" + _frames(v, FRAME, "F"))
        elif k == "python" and _frames(v, PYFRAME, "PY"):
            parts.append("python=" + _frames(v, PYFRAME, "PY"))
        else:
            parts.append("%s=%s" % (k, _py(v, 8)))
    text = "S(" + ", ".join(parts) + ")"
    if len(text) + 8 <= 100:
        return text
    return "S(" + ", ".join(parts[:5]) + "".join(",\n          " + x for x in parts[5:]) + ")"


def describe(path):
    with open(path, encoding="utf-8") as f:
        d = json.load(f)
    lines = ["doc("]
    for k, v in d.items():
        if k == "format" or (k == "gpuspy_version" and v == "0.1.0"):
            continue
        if k == "kinds" and list(v) == KINDS and all(_counters(c) for c in v.values()):
            given = ["%s=%s" % (n, _counters(c)) for n, c in v.items() if _counters(c) != str(ZERO)]
            text = "K(" + ", ".join(given) + ")"
        elif k == "modules" and all(list(m) == ["path", "build_id", "base"] for m in v):
            text = "M(\n" + "".join("        (%s, %s, %d),\n" % (_lit(m["path"]), _lit(m["build_id"]), m["base"]) for m in v) + "    )"
        elif k == "sites" and all(_site(s) for s in v):
            text = "[\n" + "".join("        %s,\n" % _site(s) for s in v) + "    ]"
        else:
            text = _py(v, 4)
        lines.append("    %s=%s," % (k, text))
    lines.append(")")
    return "\n".join(lines)


def main(argv):
    if len(argv) == 3 and argv[1] == "--describe":
        print(describe(argv[2]))
        return 0
    if len(argv) not in (2, 3) or argv[1] not in ("--check", "--write"):
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    root = argv[2] if len(argv) == 3 else os.path.join(HERE, "fixtures")
    differ = []
    for rel, d in load_spec().items():
        text = render(d)
        path = os.path.join(root, rel)
        if argv[1] == "--write":
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            continue
        try:
            with open(path, encoding="utf-8") as f:
                same = f.read() == text
        except OSError:
            same = False
        if not same:
            differ.append(rel)
    if differ:
        print("not what spec.py describes (make_fixtures.py --write, then review):", file=sys.stderr)
        for rel in differ:
            print("  " + rel, file=sys.stderr)
        return 1
    print("%d fixtures %s" % (len(load_spec()), "written" if argv[1] == "--write" else "as spec.py describes them"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
