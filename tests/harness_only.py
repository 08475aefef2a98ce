#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The Python tests have one harness, tests/harness.py, and no copy of a
piece of it: no test file defines its own check(), makes a directory
that outlives it (tempfile.mkdtemp: harness.tempdir) or builds
LD_PRELOAD around a sanitizer's runtime (harness.preload); each ends
with harness.done(); and none waits on the clock: a time.sleep is where
time itself is the matter, and says so on its line ("# not a wait:
why"); the waits are harness.wait_for and its kin.  A file that runs as
the program under test (it imports no harness) is not a test file, nor
one that the tests import (promtest.py).

    harness_only.py TESTS_DIR
"""
import ast
import glob
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402


def sleeps(tree):
    """The lines of TREE's time.sleep calls."""
    return sorted({n.lineno for n in ast.walk(tree)
                   if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and
                   n.func.attr == "sleep" and getattr(n.func.value, "id", "") == "time"})


def main():
    top = sys.argv[1]
    files = sorted(f for d in ("cli", "integration", "python", "cxx")
                   for f in glob.glob(os.path.join(top, d, "*.py")))
    modules = set()
    for f in files:
        for n in ast.walk(ast.parse(open(f, encoding="utf-8").read(), f)):
            if isinstance(n, ast.Import):
                modules.update(a.name for a in n.names)
    tests = []
    for f in files:
        text = open(f, encoding="utf-8").read()
        tree = ast.parse(text, f)
        name = os.path.relpath(f, top)
        imports = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        defs = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
        check("check" not in defs, f"{name}: no check() of its own")
        check("tempfile.mkdtemp(" not in text or "harness" not in imports,
              f"{name}: no tempfile.mkdtemp (harness.tempdir)")
        check('os.environ.get("SANITIZER_PRELOAD"), ' not in text,
              f"{name}: LD_PRELOAD through harness.preload")
        if "harness" in imports and os.path.basename(f)[:-3] not in modules:
            tests.append(name)
            check("harness.done(" in text, f"{name}: ends with harness.done()")
            lines = text.split("\n")
            bare = [n for n in sleeps(tree) if "# not a wait: " not in lines[n - 1]]
            check(not bare, f"{name}: no wait on the clock (harness.wait_for), or it says why",
                  f"time.sleep on lines {bare}")
    # the files meson runs as tests are those that import the harness
    check(len(tests) >= 50, f"{len(tests)} test files on the harness")
    return harness.done()


if __name__ == "__main__":
    sys.exit(main())
