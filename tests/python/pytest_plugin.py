#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""pytest --gpuspy (python/gpuspy/pytest_plugin.py) in Debian's pytest,
running the tests of TESTS below, which allocate through the fake CUDA
runtime by ctypes, with the build's libgpuspy.so preloaded and the
package of this source tree:
 - a test that leaves memory under gpu_no_leak fails, naming the line that
   holds it (in the test, in the code under test, in a unittest case); a
   test whose peak is over its gpu_limit_memory fails, naming its peak;
   the clean ones pass, those within their limits too;
 - a first call's cache fails gpu_no_leak, and passes with warmup=1,
   whose body ran twice; a reference cycle the garbage collector frees is
   no leak; the PyTorch pool's segment is its cache, apart, unless
   --gpuspy-include-pools; a unittest case's setUp and tearDown are inside
   the test; a test that fails on its own fails as it would; a marker's
   bad size is an error of the test's setup;
 - --junitxml, parsed: the failures as ordinary ones, their messages;
 - the summary: the largest peaks, every test that left memory (marked or
   not), what the pools held;
 - --gpuspy-leak-default fails the unmarked leak too;
 - without the library: one line (also with -q), and the tests run as
   they would; with it but without --gpuspy: nothing of gpuspy;
 - the plugin found by its entry point (the package's dist-info, as meson
   installs it), and -p gpuspy.pytest_plugin beside it;
 - parse_size() reads sizes as GPUSPY_LIMIT's parser (env_size) does.
Exit 77 (skipped) when python3-pytest is missing.
Usage: pytest_plugin.py LIBGPUSPY FAKE_DIR PYTHON_DIR LIBC10_CUDA METADATA LIBSIZE_ABI"""
import ctypes
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

PYTHON = "/usr/bin/python3"
if subprocess.run([PYTHON, "-c", "import pytest"], capture_output=True).returncode != 0:
    harness.skip("python3-pytest not installed for %s (scripts/setup installs it)" % PYTHON)

lib, fake_dir, pydir, c10, metadata, size_abi = (os.path.abspath(a) for a in sys.argv[1:7])
lib = harness.preload(lib)
MIB = 1 << 20

MODEL_PY = '''\
# the code under test
import ctypes
cudart = ctypes.CDLL("libcudart.so.13")
cudart.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]


def load(n):
    p = ctypes.c_void_p()
    cudart.cudaMalloc(ctypes.byref(p), n)  # LINE load
    return p
'''

TESTS = '''\
import ctypes
import gc
import json
import os
import unittest

import pytest

import model

cudart = ctypes.CDLL("libcudart.so.13")
cudart.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
cudart.cudaFree.argtypes = [ctypes.c_void_p]
# a segment of the PyTorch caching allocator, as the pretend libc10_cuda.so makes one
alloc_block = getattr(ctypes.CDLL(os.environ["C10_CUDA"]), "_ZN3c104cuda20CUDACachingAllocator"
                      "6Native22DeviceCachingAllocator11alloc_blockEm")
alloc_block.argtypes = [ctypes.c_size_t]
# a cycle stays until the plugin collects it
gc.disable()
MIB = 1 << 20
kept = []
runs = {}
cache = {}


def alloc(n):
    p = ctypes.c_void_p()
    assert cudart.cudaMalloc(ctypes.byref(p), n) == 0  # LINE alloc
    return p


def free(p):
    assert cudart.cudaFree(p) == 0


def workspace(key):
    """A first call's cache."""
    if key not in cache:
        cache[key] = alloc(2 * MIB)  # LINE workspace
    return cache[key]


class Holder:
    def __init__(self, p):
        self.p, self.me = p, self

    def __del__(self):
        free(self.p)


@pytest.mark.gpu_no_leak
def test_leaks():
    p = ctypes.c_void_p()
    cudart.cudaMalloc(ctypes.byref(p), 4 * MIB)  # LINE leaks
    kept.append(p)


@pytest.mark.gpu_no_leak
def test_leaks_in_code_under_test():
    kept.append(model.load(3 * MIB))


@pytest.mark.gpu_no_leak
@pytest.mark.gpu_limit_memory("32 MiB")
def test_clean():
    free(alloc(16 * MIB))


@pytest.mark.gpu_limit_memory("8 MiB")
def test_over_limit():
    free(alloc(24 * MIB))


@pytest.mark.gpu_limit_memory("512 MiB")
def test_within_limit():
    a, b = alloc(64 * MIB), alloc(64 * MIB)
    free(a)
    free(b)


def test_unmarked_leak():
    kept.append(alloc(1 * MIB))  # LINE unmarked


@pytest.mark.gpu_no_leak(warmup=1)
def test_first_call_cache_warm():
    runs["warm"] = runs.get("warm", 0) + 1
    workspace("warm")


@pytest.mark.gpu_no_leak
def test_first_call_cache_cold():
    workspace("cold")  # LINE cold


@pytest.mark.gpu_no_leak
def test_pool_keeps_its_cache():
    assert alloc_block(2 * MIB) == 0


@pytest.mark.gpu_no_leak
def test_cycle_collected():
    Holder(alloc(5 * MIB))


@pytest.mark.gpu_no_leak
def test_fails_on_its_own():
    kept.append(alloc(1 * MIB))
    assert False, "its own failure"


@pytest.mark.gpu_limit_memory("lots")
def test_bad_limit():
    pass


class TestCase(unittest.TestCase):
    def setUp(self):
        self.buf = alloc(6 * MIB)

    def tearDown(self):
        free(self.buf)

    @pytest.mark.gpu_no_leak
    def test_freed_in_teardown(self):
        pass

    @pytest.mark.gpu_no_leak
    def test_leaks_in_unittest(self):
        p = ctypes.c_void_p()
        cudart.cudaMalloc(ctypes.byref(p), 7 * MIB)  # LINE unittest
        kept.append(p)


def test_record_runs():
    with open(os.environ["RUNS_FILE"], "w") as f:
        json.dump(runs, f)
'''


def lines_of(text):
    return {t.split("# LINE ")[1].strip(): i + 1 for i, t in enumerate(text.splitlines())
            if "# LINE " in t}


LINE = lines_of(TESTS)
MODEL_LINE = lines_of(MODEL_PY)
# the report's names of sites whose innermost line is alloc's: with the
# lines that tell them apart
COLD = ("alloc (test_gpu.py:%d) from workspace (test_gpu.py:%d) from test_first_call_cache_cold "
        "(test_gpu.py:%d)" % (LINE["alloc"], LINE["workspace"], LINE["cold"]))
UNMARKED = "alloc (test_gpu.py:%d) from test_unmarked_leak (test_gpu.py:%d)" % (
    LINE["alloc"], LINE["unmarked"])

work = harness.tempdir()
with open(os.path.join(work, "test_gpu.py"), "w") as f:
    f.write(TESTS)
with open(os.path.join(work, "model.py"), "w") as f:
    f.write(MODEL_PY)
# the package as meson installs it: the package and its dist-info
site = harness.tempdir()
os.symlink(os.path.join(pydir, "gpuspy"), os.path.join(site, "gpuspy"))
info = os.path.join(site, "gpuspy-0.dist-info")
os.mkdir(info)
with open(metadata) as f, open(os.path.join(info, "METADATA"), "w") as g:
    g.write(f.read())
with open(os.path.join(pydir, "dist-info", "entry_points.txt")) as f, \
        open(os.path.join(info, "entry_points.txt"), "w") as g:
    g.write(f.read())


def pytest(*args, preload=True, path=pydir, plugin=True, report=True):
    """pytest on test_gpu.py: (status, output, {test: outcome}, junit
    testcases by name, runs of the warm test); REPORT: the JUnit report
    must be there."""
    out = harness.tempdir()
    runs = os.path.join(out, "runs.json")
    junit = os.path.join(out, "junit.xml")
    env = harness.clean_env(fake_dir, LD_PRELOAD=lib if preload else None,
                            GPUSPY_OUTPUT_DIR=out, GPUSPY_QUIET=1, PYTHONPATH=path,
                            C10_CUDA=c10, RUNS_FILE=runs, PYTEST_ADDOPTS=None,
                            PYTEST_DISABLE_PLUGIN_AUTOLOAD=None)
    argv = [PYTHON, "-m", "pytest", "-p", "no:cacheprovider", "-rA", "--strict-markers",
            "--junitxml", junit] + (["-p", "gpuspy.pytest_plugin"] if plugin else [])
    p = harness.run(argv + list(args) + ["test_gpu.py"], env=env, cwd=work, timeout=120)
    # the test's own directories, whose names say gpuspy
    text = re.sub(r"\S*gpuspy-test-\S*", "DIR", p.stdout + p.stderr)
    outcomes = {name: word for word, name in re.findall(
        r"^(PASSED|FAILED|ERROR) test_gpu\.py::(\S+)", text, re.M)}
    cases = {}
    try:
        for tc in ET.parse(junit).getroot().iter("testcase"):
            name = tc.get("name")
            if tc.get("classname", "").endswith("TestCase"):
                name = "TestCase::" + name
            cases[name] = tc
    except (OSError, ET.ParseError) as e:
        check(not report, "pytest %s: --junitxml wrote its report" % " ".join(args), e)
    return p.returncode, text, outcomes, cases, harness.read_json(runs)


def section(text):
    """The summary's lines: after its separator, up to pytest's next."""
    m = re.search(r"^=+ gpuspy: GPU memory per test =+\n(.*?)^=+ ", text, re.M | re.S)
    return m.group(1).splitlines() if m else []


def failure(case):
    """A JUnit testcase's failure: (message, text), or None."""
    f = case.find("failure") if case is not None else None
    return (f.get("message"), f.text or "") if f is not None else None


GPUSPY_FAILS = {"test_leaks", "test_leaks_in_code_under_test", "test_over_limit",
                "test_first_call_cache_cold", "TestCase::test_leaks_in_unittest"}
PASSES = {"test_clean", "test_within_limit", "test_unmarked_leak", "test_first_call_cache_warm",
          "test_pool_keeps_its_cache", "test_cycle_collected", "TestCase::test_freed_in_teardown",
          "test_record_runs"}
ALL = GPUSPY_FAILS | PASSES | {"test_fails_on_its_own", "test_bad_limit"}

# --gpuspy
status, text, outcomes, cases, runs = pytest("--gpuspy")
print(text)
check(status == 1, "pytest --gpuspy: status 1 (tests failed)", status)
check({n for n, o in outcomes.items() if o == "PASSED"} == PASSES, "the clean tests pass",
      outcomes)
check({n for n, o in outcomes.items() if o == "FAILED"} == GPUSPY_FAILS | {"test_fails_on_its_own"},
      "the leaking tests and the one over its limit fail", outcomes)
check(outcomes.get("test_bad_limit") == "ERROR" and
      "gpuspy: gpu_limit_memory('lots'): not a size" in text,
      "a marker's bad size: an error of the test's setup, said", outcomes)
check(set(cases) == ALL, "--junitxml: every test", sorted(cases))

want = {
    "test_leaks": ["gpuspy: test_leaks left 4.0 MiB of GPU memory live (gpu_no_leak)",
                   "gpuspy:   4.0 MiB from test_leaks (test_gpu.py:%d)" % LINE["leaks"]],
    "test_leaks_in_code_under_test": [
        "gpuspy: test_leaks_in_code_under_test left 3.0 MiB of GPU memory live (gpu_no_leak)",
        "gpuspy:   3.0 MiB from load (model.py:%d)" % MODEL_LINE["load"]],
    "test_over_limit": ["gpuspy: test_over_limit's peak, 24.0 MiB of GPU memory, is over its "
                        "limit of 8.0 MiB (gpu_limit_memory)"],
    "test_first_call_cache_cold": [
        "gpuspy: test_first_call_cache_cold left 2.0 MiB of GPU memory live (gpu_no_leak)",
        "gpuspy:   2.0 MiB from %s" % COLD],
    "TestCase::test_leaks_in_unittest": [
        "gpuspy: test_leaks_in_unittest left 7.0 MiB of GPU memory live (gpu_no_leak)",
        "gpuspy:   7.0 MiB from TestCase.test_leaks_in_unittest (test_gpu.py:%d)"
        % LINE["unittest"]],
}
for name, lines in want.items():
    f = failure(cases.get(name))
    check(f == (lines[0], "\n".join(lines)),
          "--junitxml: %s's failure, its message and its lines" % name, f)
    check("\n".join(lines) in text, "%s's failure in the terminal" % name, lines)
    check(re.search(r"^FAILED test_gpu\.py::%s - gpuspy: " % re.escape(name), text, re.M),
          "%s: its reason in the short summary" % name)
f = failure(cases.get("test_fails_on_its_own"))
check(f is not None and "its own failure" in f[0] and "gpuspy" not in f[1],
      "a test that fails on its own fails as it would, gpuspy adding nothing", f)
check(all(failure(cases.get(n)) is None and cases.get(n) is not None
          and cases[n].find("error") is None for n in PASSES),
      "--junitxml: the clean tests passed")
check(runs == {"warm": 2}, "gpu_no_leak(warmup=1): the body ran twice", runs)

summary = section(text)
print("the summary:\n  " + "\n  ".join(summary))
peaks = summary[1:6] if summary else []
check(summary[:1] == ["the largest peaks, above what was live when each test started:"]
      and [re.split(r"\s{2,}", p.strip())[:2] for p in peaks] ==
      [["128.0 MiB", "test_gpu.py::test_within_limit"],
       ["24.0 MiB", "test_gpu.py::test_over_limit"],
       ["16.0 MiB", "test_gpu.py::test_clean"],
       ["13.0 MiB", "test_gpu.py::TestCase::test_leaks_in_unittest"],
       ["6.0 MiB", "test_gpu.py::TestCase::test_freed_in_teardown"]]
      and peaks[1].endswith("[failed gpu_limit_memory]"),
      "summary: the five largest peaks, the one over its limit said", summary)
i = next((k for k, s in enumerate(summary) if s.startswith("the tests that left")), None)
left = summary[i + 1:i + 7] if i is not None else []
check(i is not None and summary[i] == "the tests that left GPU memory live (6, 18.0 MiB in all):"
      and [l.split()[:3] for l in left] ==
      [["7.0", "MiB", "test_gpu.py::TestCase::test_leaks_in_unittest"],
       ["4.0", "MiB", "test_gpu.py::test_leaks"],
       ["3.0", "MiB", "test_gpu.py::test_leaks_in_code_under_test"],
       ["2.0", "MiB", "test_gpu.py::test_first_call_cache_cold"],
       ["1.0", "MiB", "test_gpu.py::test_unmarked_leak"],
       ["1.0", "MiB", "test_gpu.py::test_fails_on_its_own"]],
      "summary: every test that left memory, marked or not", summary)
check(len(left) == 6 and left[0].endswith("from TestCase.test_leaks_in_unittest "
                                          "(test_gpu.py:%d)  [failed gpu_no_leak]"
                                          % LINE["unittest"])
      and left[3].endswith("from %s  [failed gpu_no_leak]" % COLD)
      and left[4].endswith("from %s" % UNMARKED) and left[5].endswith("[the test failed]"),
      "summary: each by the site that holds it, and what failed", left)
check("the frameworks' pools held 2.0 MiB more (their cache, not a leak): "
      "test_gpu.py::test_pool_keeps_its_cache (2.0 MiB)" in summary,
      "summary: the PyTorch pool's segment apart", summary)
check(summary and re.match(r"gpuspy: 22\.0 MiB of GPU memory live now, peak \d+\.\d MiB; "
                           r"after the run: gpuspy report \S+", summary[-1]),
      "summary: the totals, and the run to report on", summary[-1:])

# --gpuspy-leak-default: the unmarked leak fails too
status, text, outcomes, cases, _ = pytest("--gpuspy", "--gpuspy-leak-default")
check(outcomes.get("test_unmarked_leak") == "FAILED" and failure(cases.get("test_unmarked_leak"))
      == ("gpuspy: test_unmarked_leak left 1.0 MiB of GPU memory live (gpu_no_leak)",
          "gpuspy: test_unmarked_leak left 1.0 MiB of GPU memory live (gpu_no_leak)\n"
          "gpuspy:   1.0 MiB from %s" % UNMARKED),
      "--gpuspy-leak-default: the unmarked leak fails", failure(cases.get("test_unmarked_leak")))
check({n for n, o in outcomes.items() if o == "PASSED"} == PASSES - {"test_unmarked_leak"},
      "--gpuspy-leak-default: the rest as before", outcomes)

# --gpuspy-include-pools: the pool's segment counts
status, text, outcomes, cases, _ = pytest("--gpuspy", "--gpuspy-include-pools",
                                          "-k", "pool or test_leaks")
f = failure(cases.get("test_pool_keeps_its_cache"))
check(outcomes.get("test_pool_keeps_its_cache") == "FAILED" and f is not None and re.fullmatch(
    r"gpuspy: test_pool_keeps_its_cache left 2\.0 MiB of GPU memory live \(gpu_no_leak\)\n"
    r"gpuspy:   2\.0 MiB from \S.* \(PyTorch pool\)", f[1]),
    "--gpuspy-include-pools: the PyTorch pool's segment counted, and said", f)

# without the library: one line, the tests as they would run
for quiet in ([], ["-q"]):
    status, text, outcomes, cases, runs = pytest("--gpuspy", *quiet, preload=False)
    said = [l for l in text.splitlines() if "gpuspy" in l and "test_gpu.py" not in l]
    check(said == ["gpuspy: --gpuspy: libgpuspy.so is not preloaded into pytest, so the tests "
                   "run without GPU memory checks; run them as gpuspy run -- pytest --gpuspy, "
                   "or LD_PRELOAD=libgpuspy.so pytest --gpuspy"],
          "without the library%s: one line says how to run with it" % (" (-q)" if quiet else ""),
          said)
    check({n for n, o in outcomes.items() if o == "FAILED"} == {"test_fails_on_its_own"}
          and outcomes.get("test_bad_limit") == "PASSED" and runs == {"warm": 1},
          "without the library: the tests run as they would, the markers do nothing", outcomes)

# the library, but no --gpuspy: nothing of gpuspy
status, text, outcomes, cases, _ = pytest()
check(not re.search(r"gpuspy", re.sub(r"test_gpu\.py\S*", "", text)),
      "without --gpuspy: nothing of gpuspy", text[-1500:])
check({n for n, o in outcomes.items() if o == "FAILED"} == {"test_fails_on_its_own"},
      "without --gpuspy: the tests as they would run", outcomes)

# the entry point, as installed; -p beside it names the plugin already there
for extra in ([], ["-p", "gpuspy.pytest_plugin"]):
    status, text, outcomes, cases, _ = pytest("--gpuspy", *extra, "-k", "test_leaks",
                                              path=site, plugin=False)
    check(status == 1 and outcomes == {"test_leaks": "FAILED", "test_leaks_in_code_under_test":
                                       "FAILED", "TestCase::test_leaks_in_unittest": "FAILED"},
          "the plugin found by its entry point%s" % (" (and -p)" if extra else ""),
          text[-1500:])
status, text, _, _, _ = pytest("--gpuspy", "--gpuspy-warmup", "-1", report=False)
check(status == 4 and "--gpuspy-warmup: a count, 0 or more" in text,
      "--gpuspy-warmup -1: a usage error", text[-500:])

# parse_size() against GPUSPY_LIMIT's parser
sys.path.insert(0, pydir)
from gpuspy import _lib  # noqa: E402

abi = ctypes.CDLL(size_abi)
abi.size_abi.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_ulonglong)]
SIZES = ["0", "1", "007", "4096", "8G", "8g", "8GiB", "8GB", "8Gb", "8gib", "512m", "512MiB",
         "1.5T", ".5K", "1.", "1.5", "K", "-1", "+1", "12x", "1KiBx", "1Ki", "1iB", "1Bi", "1e3",
         "0.0000000001K", "1.999999999999G", "4611686018427387903", "4611686018427387904",
         "4194303T", "4194304T", "4194303.9999T", "16EiB", " 1K", "1K ", "0x10", "1,5K"]
agree = []
for s in SIZES + ["512 MiB", "1 K", "8 GB", "1  K", "1 iB", "1 x"]:
    got = ctypes.c_ulonglong()
    rc = abi.size_abi(s.replace(" ", "", 1).encode() if re.fullmatch(r"[\d.]+ [KMGTBkmgtb]\w*", s)
                      else s.encode(), ctypes.byref(got))
    try:
        mine = _lib.parse_size(s)
    except ValueError:
        mine = None
    agree.append((s, mine, got.value if rc == 0 else None))
check(all(m == c for _, m, c in agree), "parse_size() reads sizes as env_size does",
      [a for a in agree if a[1] != a[2]])
check(_lib.parse_size("512 MiB") == 512 * MIB and _lib.parse_size(4096) == 4096,
      "parse_size(): \"512 MiB\", and bytes as an int")

sys.exit(harness.done())
