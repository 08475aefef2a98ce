#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The kernel spec meson installs (python/meson.build): kernel.json as it
is, or, for a prefix the loader and python3 do not search, with the
library's path in LD_PRELOAD and the package's directory in PYTHONPATH.
Usage: kernelspec.py KERNEL_JSON OUT [LIBRARY_PATH [PYTHON_DIR]]"""
import json
import sys

src, out = sys.argv[1:3]
lib = sys.argv[3] if len(sys.argv) > 3 else ""
pydir = sys.argv[4] if len(sys.argv) > 4 else ""
spec = json.load(open(src))
if lib:
    spec["env"]["LD_PRELOAD"] = lib
    spec.get("metadata", {}).pop("gpuspy", None)  # its note is of the bare name
if pydir:
    spec["env"]["PYTHONPATH"] = pydir
with open(out, "w") as f:
    json.dump(spec, f, indent=2)
    f.write("\n")
