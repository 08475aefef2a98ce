#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Symbolization for real: make_symreport (PIE) and make_symreport_nopie
(ET_EXEC) record return addresses into libsymtarget.so, into themselves and
into C++ code, with the lines the calls are on; 'gpuspy report' must name
the functions (demangled), files and lines.  With a wrong build-id the
modules must not be symbolized, only the report's own names used.

    test_symbolize.py GPUSPY MAKE_SYMREPORT MAKE_SYMREPORT_NOPIE
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402


def fnv1a64(text):
    h = 0xcbf29ce484222325
    for b in text.encode():
        h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
    return "%016x" % h


def report(gpuspy, path, fmt="json"):
    p = subprocess.run([gpuspy, "report", "--format", fmt, path], capture_output=True)
    if p.returncode != 0 or p.stderr:
        raise SystemExit("gpuspy report %s: status %d, %r" % (path, p.returncode, p.stderr))
    return json.loads(p.stdout) if fmt == "json" else p.stdout.decode()


def make(helper, out, mode):
    p = subprocess.run([helper, out, mode], capture_output=True, check=True)
    procdir = p.stdout.decode().strip()
    with open(os.path.join(procdir, "report.json")) as f:
        return procdir, json.load(f)["expect"]


def main():
    gpuspy = os.path.abspath(sys.argv[1])
    helpers = [os.path.abspath(h) for h in sys.argv[2:4]]
    with tempfile.TemporaryDirectory(prefix="gpuspy-sym-") as tmp:
        for helper, exe_type in zip(helpers, ("DYN", "EXEC")):
            tag = os.path.basename(helper)
            procdir, expect = make(helper, os.path.join(tmp, tag), "ok")
            check(expect["exe_type"] == exe_type, "%s is ET_%s" % (tag, exe_type))
            check(expect["lib_build_id"] != "", "%s: libsymtarget.so has a build-id" % tag)
            r = report(gpuspy, procdir)
            frames = r["sites"][0]["frames"]
            want = [("symtarget_caller", "libsymtarget.so", "symtarget.c", expect["lib_line"]),
                    ("main", os.path.basename(helper), "make_symreport.c", expect["main_line"])]
            if expect["cpp_line"]:
                want.append(("gstest::cpp_caller(int)", "libsymtarget.so", "symtarget_cpp.cc",
                             expect["cpp_line"]))
            check(len(frames) == len(want), "%s: %d frames" % (tag, len(want)))
            for f, (fn, mod, src, line) in zip(frames, want):
                got = "%s (%s) %s:%s" % (f.get("function"), f.get("module"),
                                         f.get("file"), f.get("line"))
                check(f.get("function") == fn and f.get("module") == mod
                      and os.path.basename(f.get("file", "")) == src
                      and f.get("line") == line and f.get("kind") == "native",
                      "%s: %s is %s (%s) %s:%d" % (tag, got, fn, mod, src, line))
                # meson compiles ../tests/cli/x.c: the path must be clean
                check("/../" not in f.get("file", "/../") and os.path.isabs(f["file"])
                      and os.path.exists(f["file"]), "%s: %s exists" % (tag, f.get("file")))
            # the key is the digest of the names (docs/format.md), never
            # of addresses: computed here from what the key text must be
            site = r["sites"][0]
            text = site["api"] + "|" + ";".join(
                "%s!%s" % (f["module"], f["function"]) for f in site["frames"]
                if not f.get("noise"))
            check(text.startswith("cuMemAlloc_v2|libsymtarget.so!symtarget_caller;%s!main"
                                  % os.path.basename(helper)), "%s: key text %s" % (tag, text))
            check(site["key"] == fnv1a64(text),
                  "%s: key %s is the digest of %s" % (tag, site["key"], text))
            text = report(gpuspy, procdir, "text")
            check("symtarget_caller (libsymtarget.so) " in text
                  and "symtarget.c:%d" % expect["lib_line"] in text,
                  "%s: the text report shows the frame" % tag)

            # rebuilt binaries: names from the report only, no file or line
            procdir, expect = make(helper, os.path.join(tmp, tag + "-wrong"), "wrong-build-id")
            r = report(gpuspy, procdir)
            frames = r["sites"][0]["frames"]
            check(all(f.get("function") == "fallback_name" and "file" not in f
                      and "line" not in f for f in frames),
                  "%s: wrong build-id: no module symbolized" % tag)
    return harness.done()


if __name__ == "__main__":
    sys.exit(main())
