#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The exit summary names a C++ frame demangled, also when libstdc++ came
with a library loaded RTLD_LOCAL (as PyTorch's does, through CPython), and
never by a mangled name; with its source line (the one marked in the
library's source), which the process reads through libdw.
Usage: summary_demangle.py LIBGPUSPY FAKE_DIR DLOPEN_CXX LIBCXX_ALLOC CXX_ALLOC_SOURCE"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

lib, fake, prog, cxx, source = sys.argv[1:6]
with open(source) as f:
    line = next(i for i, l in enumerate(f, 1) if "// the leaking line" in l)
env = harness.clean_env()
with tempfile.TemporaryDirectory() as out:
    r = subprocess.run([prog, os.path.abspath(cxx), str(3 << 20)],
                       env=dict(env, LD_PRELOAD=harness.preload(lib), LD_LIBRARY_PATH=fake, GPUSPY_OUTPUT_DIR=out),
                       capture_output=True, text=True, timeout=60)
lines = [l for l in r.stderr.splitlines() if l.startswith("gpuspy:   ")]
check(r.returncode == 0 and len(lines) == 1 and
      lines[0] == "gpuspy:   3.0 MiB in 1 from gstest::leak_cxx(unsigned long) "
      f"(cxx_alloc.cc:{line})" and "_Z" not in r.stderr,
      f"the exit summary names gstest::leak_cxx(unsigned long) (cxx_alloc.cc:{line})",
      "status %d, stderr:\n%s" % (r.returncode, r.stderr))
sys.exit(harness.done())
