#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Each man page, as built by scdoc, renders with man(1): 'man -l' at 100
columns, with groff's warnings on, prints the page without a warning (its
length is printed); it
opens with NAME and the page's own name; and every gpuspy page that a page
refers to (*gpuspy-report*(1), *libgpuspy*(7), ...) is one of the pages.

    test_man.py SOURCE_MAN_DIR PAGE...

PAGE: the built pages (build/man/gpuspy.1, ...).  Exit 77 (skipped)
without man(1).
"""
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402


def main():
    src, pages = sys.argv[1], sys.argv[2:]
    if not shutil.which("man"):
        print("skip: no man(1)")
        return 77
    names = {os.path.basename(p) for p in pages}
    sources = {f[:-len(".scd")] for f in os.listdir(src) if f.endswith(".scd")}
    check(names == sources, "every page of man/ is built",
          f"only in man/: {sorted(sources - names)}; only built: {sorted(names - sources)}")
    env = dict(os.environ, MANWIDTH="100", LC_ALL="C.UTF-8", MAN_KEEP_FORMATTING="0")
    env.pop("MANPAGER", None)
    env.pop("PAGER", None)
    for page in sorted(pages):
        name = os.path.basename(page)
        title, section = name.rsplit(".", 1)
        p = subprocess.run(["man", "--warnings", "-l", page], env=env, capture_output=True,
                           text=True, timeout=60)
        check(p.returncode == 0 and p.stderr == "", f"man -l {name}",
              f"status {p.returncode}\n{p.stderr}")
        # man writes bold and underline as overstrikes into a pipe
        out = re.sub(r".\x08", "", p.stdout)
        lines = out.split("\n")
        check(len(lines) > 20 and re.match(r"^" + re.escape(f"{title}({section})"), lines[0])
              is not None, f"{name}: its title", "\n".join(lines[:3]))
        check(re.search(r"^NAME\n\s+" + re.escape(title) + r"(\.so)? - \S", out, re.M) is not None,
              f"{name}: NAME names it", out[:400])
        print(f"   {name}: {len(lines)} lines at 100 columns")
        text = open(os.path.join(src, name + ".scd")).read()
        for ref in sorted(set(re.findall(r"\*((?:lib)?gpuspy(?:-[a-z]+)?)\*\((\d)\)", text))):
            check(f"{ref[0]}.{ref[1]}" in names, f"{name}: refers to {ref[0]}({ref[1]}), a page")
    return harness.done()


if __name__ == "__main__":
    sys.exit(main())
