#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Run README.md's command blocks as a user would, after an install, so
that the README cannot drift from what works.

    test_readme.py README BUILD_DIR FAKE_DIR MESON    (meson test: a staged install)
    test_readme.py --system README FAKE_DIR           (an installed system: scripts/fresh-check)
    test_readme.py --print-setup README               (the setup block, for scripts/fresh-check)

What README.md marks, on the line before a fenced block:

    <!-- setup -->      the setup command; scripts/fresh-check runs it in a
                        fresh Debian 12, this test does not (it installs
                        packages and writes to /usr/local)
    <!-- test -->       run each command of the block, in order, in one
                        directory; each must exit 0 (<!-- test: status N -->:
                        the last one must exit N)
    <!-- output -->     what the last command of the block before prints,
                        standard output then standard error, compared after
                        the normalization below (<!-- output: lines -->:
                        each line shown is one of them, in their order; a
                        few lines of a longer output)

With BUILD_DIR, the build is installed with `meson install --destdir`
into a temporary directory, and the blocks run with its bin/ first on
PATH. What stands in for what, and why:

  - the loader's cache after `ldconfig` (scripts/setup runs it; only root
    may): LD_LIBRARY_PATH names the staged libdir, which ld.so searches for
    LD_PRELOAD=libgpuspy.so as it would search its cache;
  - pkg-config's default search path and the real prefix:
    PKG_CONFIG_PATH names the staged pkgconfig directory and
    PKG_CONFIG_SYSROOT_DIR the staging directory, which is then taken out of
    what is printed;
  - the NVIDIA driver and CUDA runtime: the fake ones of FAKE_DIR, on
    LD_LIBRARY_PATH (also with --system: there is no GPU);
  - `python train.py`, a training script: train.py below, which allocates
    device memory through the CUDA runtime with ctypes and keeps some of
    it, and `python` runs python3 (Debian 12 has no `python` command);
  - runs/main and runs/my-branch, the runs of two commits that the top
    block compares: two `gpuspy run -o runs/NAME -- python train.py`
    before the blocks run;
  - notebook.ipynb, a notebook: NOTEBOOK below, whose first cell loads the
    extension and whose second keeps 8 MiB of device memory, through the
    CUDA runtime with ctypes;
  - test_model.py, a project's tests: TEST_MODEL_PY below, a test within
    its gpu_limit_memory and one that leaves 4 MiB under gpu_no_leak;
    `pytest` is Debian's (python3-pytest), which finds the plugin by the
    package's entry point in PYTHONPATH, as in the dist-packages of an
    install;
  - where Jupyter and Debian's python3 look under /usr/local for the
    kernel and the package: JUPYTER_PATH and PYTHONPATH name the staged
    share/jupyter and lib/python3.X/dist-packages; Jupyter's and
    IPython's own files go into the block's directory, not the home.

Normalized in both the expected and the actual output: trailing blanks,
the staged libdir and prefix (as the default install's:
/usr/local/lib/x86_64-linux-gnu, /usr/local, whatever the build was
configured for), the block's directory (as ~), process
directories (<host>-<pid> as HOST-PID) and "pid N" (as "pid PID").
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

MARK = re.compile(r"^<!--\s*(setup|test|output)(?:\s*:\s*(.*?))?\s*-->$")

TRAIN_PY = '''\
# Stands in for a training script (tests/cli/test_readme.py): 3 "steps"
# of 1 MiB kept, one 2 MiB temporary freed, through the CUDA runtime.
import ctypes
cudart = ctypes.CDLL("libcudart.so.13")
cudart.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
cudart.cudaFree.argtypes = [ctypes.c_void_p]


def alloc(n):
    p = ctypes.c_void_p()
    if cudart.cudaMalloc(ctypes.byref(p), n) != 0:
        raise SystemExit("train.py: cudaMalloc failed")
    return p


def step(kept):
    tmp = alloc(2 << 20)
    kept.append(alloc(1 << 20))
    cudart.cudaFree(tmp)


kept = []
for _ in range(3):
    step(kept)
print("train.py: 3 steps")
'''


TEST_MODEL_PY = '''\
# Stands in for a project's tests (tests/cli/test_readme.py): a forward
# pass within its limit, a training step that keeps 4 MiB of device
# memory, through the CUDA runtime.
import ctypes

import pytest

cudart = ctypes.CDLL("libcudart.so.13")
cudart.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
cudart.cudaFree.argtypes = [ctypes.c_void_p]
history = []


def step(n):
    p = ctypes.c_void_p()
    assert cudart.cudaMalloc(ctypes.byref(p), n) == 0
    return p


@pytest.mark.gpu_limit_memory("512 MiB")
def test_forward():
    p = ctypes.c_void_p()
    assert cudart.cudaMalloc(ctypes.byref(p), 64 << 20) == 0
    cudart.cudaFree(p)


@pytest.mark.gpu_no_leak
def test_step():
    history.append(step(4 << 20))
'''


def notebook(cells):
    return json.dumps({"cells": [{"cell_type": "code", "execution_count": None, "metadata": {},
                                  "outputs": [], "source": c} for c in cells],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 4}, indent=1)


# Stands in for a notebook (see above): 8 MiB kept by cell 2.
NOTEBOOK = notebook([
    "%load_ext gpuspy\nimport ctypes\ncudart = ctypes.CDLL(\"libcudart.so.13\")\n"
    "cudart.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]\n"
    "weights = ctypes.c_void_p()",
    "err = cudart.cudaMalloc(ctypes.byref(weights), 8 << 20)",
    "print(err)",
])


def blocks(readme):
    """[(mark, argument, text, line)] of README's fenced blocks; mark is
    None for a block without one."""
    out = []
    lines = open(readme, encoding="utf-8").read().split("\n")
    i = 0
    prev = ""
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            start = i
            body = []
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            m = MARK.match(prev.strip())
            out.append((m.group(1) if m else None, m.group(2) if m else None,
                        "\n".join(body), start + 1))
            prev = ""
        elif line.strip():
            prev = line
        i += 1
    return out


def commands(text):
    """The block's commands: its lines, a trailing backslash joining the
    next one; blank and comment-only lines left out."""
    cmds, cur = [], ""
    for line in text.split("\n"):
        if line.endswith("\\"):
            cur += line[:-1] + " "
            continue
        cur += line
        if cur.strip() and not cur.strip().startswith("#"):
            cmds.append(cur)
        cur = ""
    return cmds


def normalize(text, stage, work):
    """STAGE: [(staged path, what the README's default install has there)],
    longest first."""
    for path, shown in stage or []:
        text = text.replace(path, shown)
    text = text.replace(work, "~")
    text = re.sub(r"(gpuspy-out|runs/[\w.-]+|out)/[\w.-]+-\d+\b", r"\1/HOST-PID", text)
    text = re.sub(r"\bpid \d+", "pid PID", text)
    return "\n".join(line.rstrip() for line in text.strip("\n").split("\n"))


def run_blocks(readme, env, stage):
    bs = blocks(readme)
    tested = [b for b in bs if b[0] == "test"]
    check(any(b[0] == "setup" for b in bs), "README has a setup block (<!-- setup -->)")
    check(len(tested) >= 1, "README has blocks to test (<!-- test -->)")
    with tempfile.TemporaryDirectory(prefix="gpuspy-readme-") as work:
        work = os.path.realpath(work)
        with open(os.path.join(work, "train.py"), "w") as f:
            f.write(TRAIN_PY)
        with open(os.path.join(work, "notebook.ipynb"), "w") as f:
            f.write(NOTEBOOK)
        with open(os.path.join(work, "test_model.py"), "w") as f:
            f.write(TEST_MODEL_PY)
        env = dict(env, IPYTHONDIR=os.path.join(work, ".ipython"),
                   JUPYTER_DATA_DIR=os.path.join(work, ".jupyter-data"),
                   JUPYTER_RUNTIME_DIR=os.path.join(work, ".jupyter-runtime"),
                   JUPYTER_CONFIG_DIR=os.path.join(work, ".jupyter"))

        def sh(cmd):
            return subprocess.run(["bash", "-o", "pipefail", "-c", cmd], cwd=work, env=env,
                                  capture_output=True, text=True, timeout=180)

        for name in ("main", "my-branch"):
            p = sh(f"gpuspy run -o runs/{name} -- python train.py")
            check(p.returncode == 0 and any(
                os.path.isfile(os.path.join(work, "runs", name, d, "report.json"))
                for d in os.listdir(os.path.join(work, "runs", name)))
                if os.path.isdir(os.path.join(work, "runs", name)) else False,
                f"gpuspy run -o runs/{name} -- python train.py (stand-in)", p.stdout + p.stderr)
        for n, (mark, arg, text, line) in enumerate(bs):
            if mark != "test":
                continue
            want = 0
            if arg:
                m = re.fullmatch(r"status (\d+)", arg)
                check(m is not None, f"README.md:{line}: test mark", arg)
                want = int(m.group(1)) if m else 0
            cmds = commands(text)
            check(len(cmds) > 0, f"README.md:{line}: the block has commands", text)
            p = None
            for k, cmd in enumerate(cmds):
                p = sh(cmd)
                expect = want if k == len(cmds) - 1 else 0
                # ld.so only warns, and the program runs untracked
                check(p.returncode == expect and "cannot be preloaded" not in p.stderr,
                      f"README.md:{line}: {cmd.strip()}",
                      f"status {p.returncode} (expected {expect})\n" + p.stdout + p.stderr)
            if n + 1 < len(bs) and bs[n + 1][0] == "output" and p is not None:
                expected = normalize(bs[n + 1][2], None, work)
                actual = normalize(p.stdout + p.stderr, stage, work)
                if bs[n + 1][1] == "lines":
                    have = iter(actual.split("\n"))
                    same = all(line in have for line in expected.split("\n"))
                else:
                    check(bs[n + 1][1] is None, f"README.md:{bs[n + 1][3]}: output mark",
                          bs[n + 1][1])
                    same = actual == expected
                check(same, f"README.md:{bs[n + 1][3]}: the output shown",
                      f"--- README\n{expected}\n--- actual\n{actual}")


def packages(readme):
    """The Debian packages README.md lists are those scripts/setup installs."""
    setup = open(os.path.join(os.path.dirname(readme), "scripts", "setup")).read()
    m = re.search(r"^pkgs=\(([^)]*)\)", setup, re.M)
    check(m is not None, "scripts/setup has its package list")
    # prose only: fenced blocks would pair their backticks with the text's
    text = re.sub(r"^```.*?^```", "", open(readme, encoding="utf-8").read(), flags=re.M | re.S)
    lists = [t for t in re.findall(r"`([^`]+)`", text, re.S) if "ninja-build" in t]
    check(len(lists) == 1, "README.md lists the Debian packages once", "\n".join(lists))
    if m and len(lists) == 1:
        want, have = set(m.group(1).split()), set(lists[0].split())
        check(want == have, "README.md's packages are scripts/setup's",
              f"only in scripts/setup: {sorted(want - have)}; only in README.md: "
              f"{sorted(have - want)}")


def staged_install(build, meson, stage, src_man):
    p = subprocess.run([meson, "install", "-C", build, "--no-rebuild", "--quiet",
                        "--destdir", stage], capture_output=True, text=True, timeout=300)
    check(p.returncode == 0, "meson install --destdir", p.stdout + p.stderr)
    found = {}
    for root, _dirs, files in os.walk(stage):
        for f in files:
            found[os.path.relpath(os.path.join(root, f), stage)] = True
    gpuspy = [f for f in found if f.endswith("/bin/gpuspy")]
    check(len(gpuspy) == 1, "gpuspy installed into bin/", "\n".join(sorted(found)))
    if len(gpuspy) != 1:
        return None, None
    prefix = "/" + gpuspy[0][: -len("/bin/gpuspy")]
    libs = [f for f in found if f.endswith("/libgpuspy.so")]
    check(len(libs) == 1, "libgpuspy.so installed", "\n".join(sorted(found)))
    libdir = "/" + os.path.dirname(libs[0]) if libs else prefix + "/lib"
    # what a user of the install needs: the library, the stub, the command,
    # the header and pkg-config file, completion, the man pages, every
    # page of man/ (when the build has scdoc)
    want = [libdir + "/libgpuspy.so", libdir + "/libgpuspy_stub.so",
            prefix + "/bin/gpuspy", prefix + "/include/gpuspy.h",
            libdir + "/pkgconfig/gpuspy.pc",
            prefix + "/share/bash-completion/completions/gpuspy",
            prefix + "/share/zsh/site-functions/_gpuspy"]
    if os.path.exists(os.path.join(build, "man", "gpuspy.1")):
        want += [prefix + "/share/man/man" + page[-1] + "/" + page
                 for page in sorted(f[:-len(".scd")] for f in os.listdir(src_man)
                                    if f.endswith(".scd"))]
    # the notebook's kernel and the Python package, where Jupyter and
    # Debian's python3 look under /usr/local
    want.append(prefix + "/share/jupyter/kernels/python3-gpuspy/kernel.json")
    pyver = subprocess.run(["/usr/bin/python3", "-c", "import sys; print('%d.%d' % "
                            "sys.version_info[:2])"], capture_output=True, text=True).stdout.strip()
    site = "dist-packages" if prefix == "/usr/local" else "site-packages"
    for f in ("__init__.py", "_lib.py", "notebook.py", "pytest_plugin.py"):
        want.append(f"{prefix}/lib/python{pyver}/{site}/gpuspy/{f}")
    # its metadata, where pytest finds the plugin's entry point
    info = subprocess.run([meson, "introspect", "--projectinfo", build], capture_output=True,
                          text=True)
    version = json.loads(info.stdout)["version"] if info.returncode == 0 else "?"
    for f in ("METADATA", "entry_points.txt"):
        want.append(f"{prefix}/lib/python{pyver}/{site}/gpuspy-{version}.dist-info/{f}")
    for w in want:
        check(w[1:] in found, f"installed: {w}", "\n".join(sorted(found)))
    return prefix, libdir


def link_with_pkg_config(env, tmp):
    """A program that calls the header's functions, built with what
    pkg-config says, runs: against the stub without gpuspy."""
    src = os.path.join(tmp, "app.c")
    with open(src, "w") as f:
        f.write('#include <gpuspy.h>\n#include <stdio.h>\n'
                'int main(void) { printf("%d %d\\n", gpuspy_mark("x"), gpuspy_snapshot("y")); '
                'return 0; }\n')
    exe = os.path.join(tmp, "app")
    p = subprocess.run(f'cc -o {exe} {src} $(pkg-config --cflags --libs gpuspy)', shell=True,
                       env=env, capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, "cc $(pkg-config --cflags --libs gpuspy)", p.stdout + p.stderr)
    if p.returncode == 0:
        p = subprocess.run([exe], env=env, capture_output=True, text=True, timeout=30)
        check(p.returncode == 0 and p.stdout == "0 -1\n", "the program runs on the stub",
              p.stdout + p.stderr)


def base_env(fake_dir, standin, path_first, ld_first):
    env = harness.clean_env(LD_PRELOAD=None, PKG_CONFIG_PATH=None, PKG_CONFIG_SYSROOT_DIR=None)
    env["PATH"] = ":".join(path_first + [standin, env.get("PATH", "/usr/bin:/bin")])
    env["LD_LIBRARY_PATH"] = ":".join(ld_first + [fake_dir])
    return env


def make_standin(tmp):
    d = os.path.join(tmp, "standin")
    os.mkdir(d)
    with open(os.path.join(d, "python"), "w") as f:
        f.write('#!/bin/sh\nexec python3 "$@"\n')
    os.chmod(os.path.join(d, "python"), 0o755)
    return d


def main():
    args = sys.argv[1:]
    if args[:1] == ["--print-setup"]:
        setup = [b for b in blocks(args[1]) if b[0] == "setup"]
        if len(setup) != 1:
            sys.exit("test_readme.py: README.md needs exactly one <!-- setup --> block")
        print(setup[0][2])
        return 0
    with tempfile.TemporaryDirectory(prefix="gpuspy-readme-") as tmp:
        tmp = os.path.realpath(tmp)
        standin = make_standin(tmp)
        if args[:1] == ["--system"]:
            readme, fake_dir = args[1], os.path.realpath(args[2])
            env = base_env(fake_dir, standin, [], [])
            run_blocks(readme, env, None)
            link_with_pkg_config(env, tmp)
        else:
            readme, build, fake_dir, meson = (args[0], os.path.realpath(args[1]),
                                              os.path.realpath(args[2]), args[3])
            stage = os.path.join(tmp, "stage")
            prefix, libdir = staged_install(build, meson, stage,
                                            os.path.join(os.path.dirname(readme), "man"))
            if prefix is None:
                return 1
            env = base_env(fake_dir, standin, [stage + prefix + "/bin"], [stage + libdir])
            env["PKG_CONFIG_PATH"] = stage + libdir + "/pkgconfig"
            env["PKG_CONFIG_SYSROOT_DIR"] = stage
            env["JUPYTER_PATH"] = stage + prefix + "/share/jupyter"
            env["PYTHONPATH"] = ":".join(
                os.path.join(stage + prefix, "lib", d, "dist-packages")
                for d in sorted(os.listdir(stage + prefix + "/lib")) if d.startswith("python3"))
            # 'gpuspy run' of the staged tree (the stand-in runs below)
            # preloads the staged library
            p = subprocess.run(["gpuspy", "--lib"], env=env, capture_output=True, text=True,
                               timeout=30)
            check(p.returncode == 0 and p.stdout == stage + libdir + "/libgpuspy.so\n",
                  "the staged gpuspy finds the staged library", p.stdout + p.stderr)
            # the README shows the default install (scripts/setup: /usr/local,
            # Debian's multiarch libdir) whatever this build was configured for
            run_blocks(readme, env, [(stage + libdir, "/usr/local/lib/x86_64-linux-gnu"),
                                     (stage + prefix, "/usr/local"), (stage, "")])
            link_with_pkg_config(env, tmp)
            packages(readme)
    return harness.done()


if __name__ == "__main__":
    sys.exit(main())
