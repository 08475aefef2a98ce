# SPDX-License-Identifier: MIT
"""pytest --gpuspy: the GPU memory of each test, from the preloaded
libgpuspy.so.

Run the tests with the library preloaded:

    gpuspy run -- pytest --gpuspy
    LD_PRELOAD=libgpuspy.so pytest --gpuspy

Around the body of each test (its fixtures are set up before and torn
down after), a scope of the library: GPU memory live before and after,
the peak inside, and the call sites that hold what the test left, by the
names `gpuspy report` gives them (a line of the test, or of the code under
test).  What a framework's pool kept (PyTorch's caching allocator, CuPy's
pool, XLA's) is its cache, told apart as the reports tell it, and not
counted unless --gpuspy-include-pools.  Memory a leak-checked test still
holds once it has returned is looked at again after a garbage collection
(a reference cycle that held it), and only then counted.

    @pytest.mark.gpu_limit_memory("512 MiB")  fails when the test's peak,
                     above what was live when it started, is over the size
    @pytest.mark.gpu_no_leak                  fails when the test leaves GPU
                     memory live; gpu_no_leak(warmup=1) runs its body once
                     before the one measured, so that a first call's caches
                     (a library's workspace, a lazily built kernel) are
                     there before
    --gpuspy-leak-default   gpu_no_leak on every test (--gpuspy-warmup N:
                     the warm-up runs where a test's marker names none)

A failure is an ordinary one: in the terminal, in --junitxml's report.
At the end of the session, a summary: the tests with the largest peaks,
and every test that left GPU memory live, marked or not.

Without the library (or without --gpuspy) the markers do nothing, and
with --gpuspy one line says how to run with it; the tests run as they
would.  Registered as the pytest plugin gpuspy.pytest_plugin (the entry
point pytest11 of the installed package; -p gpuspy.pytest_plugin where
the package is only on the path).
"""
import gc
import sys

import pytest

from . import _lib

NOT_PRELOADED = ("gpuspy: --gpuspy: libgpuspy.so is not preloaded into pytest, so the tests "
                 "run without GPU memory checks; run them as gpuspy run -- pytest --gpuspy, "
                 "or LD_PRELOAD=libgpuspy.so pytest --gpuspy")

MARKERS = (
    "gpu_limit_memory(size): with --gpuspy, fail the test when the peak of its GPU memory, "
    "above what was live when it started, is over SIZE (\"512 MiB\", \"2G\", or bytes)",
    "gpu_no_leak(warmup=0): with --gpuspy, fail the test when it leaves GPU memory live "
    "(the frameworks' pools apart); warmup=N runs its body N times first, for first-call "
    "caches",
)

SITES = 64  # the sites asked for, of those that grew in a test
FIRST = 8  # asked first: the table's rows cost, and most tests grow few
SHOWN = 5  # of them, listed in a failure
WAIT_MS = 1000  # for gpuspy's thread to name a new site

_WANT = pytest.StashKey()  # a test's Want, from its setup
_RESULT = pytest.StashKey()  # and its Result, once measured


def pytest_addoption(parser):
    group = parser.getgroup("gpuspy", "GPU memory per test (gpuspy; needs libgpuspy.so "
                            "preloaded: gpuspy run -- pytest --gpuspy)")
    group.addoption("--gpuspy", action="store_true", default=False,
                    help="measure each test's GPU memory: its peak, what it leaves live, "
                    "the markers gpu_limit_memory and gpu_no_leak, a summary at the end")
    group.addoption("--gpuspy-leak-default", action="store_true", default=False,
                    help="fail every test that leaves GPU memory live, as gpu_no_leak "
                    "does (implies --gpuspy)")
    group.addoption("--gpuspy-warmup", type=int, default=0, metavar="N",
                    help="runs of a leak-checked test's body before the one measured, where "
                    "its gpu_no_leak names none (default 0)")
    group.addoption("--gpuspy-include-pools", action="store_true", default=False,
                    help="count what the frameworks' pools (PyTorch, CuPy, JAX/XLA) kept "
                    "as left by the test")
    group.addoption("--gpuspy-top", type=int, default=5, metavar="N",
                    help="the tests with the largest peaks in the summary (default 5)")


def pytest_configure(config):
    for m in MARKERS:
        config.addinivalue_line("markers", m)
    if not (config.getoption("gpuspy") or config.getoption("gpuspy_leak_default")):
        return
    for opt in ("gpuspy_warmup", "gpuspy_top"):
        if config.getoption(opt) < 0:
            raise pytest.UsageError("--%s: a count, 0 or more" % opt.replace("_", "-"))
    lib = _lib.library()
    if lib is None:
        line = _lib.absent(NOT_PRELOADED)
        if line != NOT_PRELOADED:
            line += "; the tests run without GPU memory checks"
        config.pluginmanager.register(Absent(line), "gpuspy-absent")
        return
    config.pluginmanager.register(Watch(config, lib), "gpuspy-watch")


class Absent:
    """--gpuspy without the library: the one line, after pytest's header."""

    def __init__(self, line):
        self.line = line

    @pytest.hookimpl(trylast=True)
    def pytest_sessionstart(self, session):
        tr = session.config.pluginmanager.get_plugin("terminalreporter")
        if tr is not None:
            tr.write_line(self.line)
        else:
            sys.stderr.write(self.line + "\n")


class Want:
    """What a test is checked for: its limit (bytes, or None), whether it
    may leave memory, its warm-up runs."""
    __slots__ = ("limit", "leak", "warmup")

    def __init__(self, limit, leak, warmup):
        self.limit, self.leak, self.warmup = limit, leak, warmup


class Result:
    """What one test did to GPU memory."""
    __slots__ = ("nodeid", "peak", "own", "pools", "left", "pooled", "failures", "failed")

    def __init__(self, nodeid, t):
        self.nodeid = nodeid
        self.peak = t.peak_above_bytes  # above what was live when it started
        # the sites that grew: (name, bytes); the pools' (name, pool, bytes)
        self.own, self.pools = [], []
        self.left = self.pooled = 0  # bytes the test left, and its pools kept
        self.failures = {}  # the lines of each check it failed, by marker
        self.failed = False  # the test failed on its own


def _want(item, config):
    """ITEM's markers and the options, as a Want; a marker's argument that
    is no size or count fails the test (in its setup)."""
    limit = None
    m = item.get_closest_marker("gpu_limit_memory")
    if m is not None:
        arg = m.args[0] if m.args else m.kwargs.get("size")
        if arg is None or len(m.args) > 1:
            pytest.fail("gpuspy: gpu_limit_memory takes one size: "
                        "@pytest.mark.gpu_limit_memory(\"512 MiB\")", pytrace=False)
        bad = None
        try:
            limit = _lib.parse_size(arg)
        except ValueError as e:
            bad = str(e)
        if bad is not None:  # not in the handler: its exception is not the test's
            pytest.fail("gpuspy: gpu_limit_memory(%r): %s" % (arg, bad), pytrace=False)
    m = item.get_closest_marker("gpu_no_leak")
    leak = m is not None or config.getoption("gpuspy_leak_default")
    warmup = config.getoption("gpuspy_warmup")
    if m is not None and ("warmup" in m.kwargs or m.args):
        warmup = m.kwargs.get("warmup", m.args[0] if m.args else 0)
    if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0:
        pytest.fail("gpuspy: gpu_no_leak(warmup=%r): a count of runs, 0 or more" % (warmup,),
                    pytrace=False)
    return Want(limit, leak, warmup if leak else 0)


class Watch:
    """--gpuspy with the library: the hooks around each test."""

    def __init__(self, config, lib):
        self.config, self.lib = config, lib
        self.results = []
        self.broken = False
        self.include_pools = config.getoption("gpuspy_include_pools")
        self.top = config.getoption("gpuspy_top")

    def _broke(self, e):
        """gpuspy's own failure: said once, and the tests go on unwatched."""
        if not self.broken:
            self.broken = True
            sys.stderr.write("gpuspy: the pytest plugin failed (%s: %s); the tests go on "
                             "without GPU memory checks\n" % (type(e).__name__, e))

    def pytest_report_header(self, config):
        every = config.getoption("gpuspy_leak_default")
        return ["gpuspy: GPU memory per test: peaks, and what each leaves live (%s)"
                % ("every test is leak-checked" if every else "gpu_no_leak, gpu_limit_memory")]

    def pytest_runtest_setup(self, item):
        item.stash[_WANT] = _want(item, self.config)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item):
        __tracebackhide__ = True
        want = item.stash.get(_WANT, None)
        if self.broken or want is None:
            yield
            return
        # the body as pytest runs it (through the other plugins' hooks: an
        # async test's loop, a unittest case's setUp and tearDown); its
        # failure is the test's
        for _ in range(want.warmup):
            item.runtest()
        sc = self.lib.scope()
        outcome = yield
        if sc is None:
            return
        try:
            res = self._measure(item, sc, want)
            if res is not None:
                res.failed = outcome.excinfo is not None
                item.stash[_RESULT] = res
                self.results.append(res)
        except Exception as e:  # noqa: BLE001 - the tests must go on
            self._broke(e)
        finally:
            sc.close()

    def _grown(self, sc):
        """The sites that grew in the scope SC: the program's own and the
        pools'.  Asked first without waiting (a test that left nothing new
        costs no more); a site of the program's own that gpuspy's thread
        has not named yet is waited for, named, and its pool judged on its
        named frames."""
        grown = sc.grown(FIRST, 0)
        if len(grown) == FIRST:
            grown = sc.grown(SITES, 0)
        if any(not s.pool and not s.named for s in grown):
            grown = sc.grown(SITES, WAIT_MS)
        own = [s for s in grown if not s.pool]
        return own, [s for s in grown if s.pool]

    def _measure(self, item, sc, want):
        t = sc.read()
        if t is None:
            return None
        own, pools = self._grown(sc) if t.events else ([], [])
        # held by a reference cycle the test left: not a leak once
        # collected.  A full collection costs milliseconds in a large
        # heap: only where the leak check would fail otherwise.
        if own and want.leak and gc.collect():
            t = sc.read() or t
            own, pools = self._grown(sc)
        res = Result(item.nodeid, t)
        res.own = [(s.name, s.change_bytes) for s in own]
        res.pools = [(s.name, s.pool, s.change_bytes) for s in pools]
        res.left = sum(b for _, b in res.own)
        res.pooled = sum(b for _, _, b in res.pools)
        if want.limit is not None and res.peak > want.limit:
            res.failures["gpu_limit_memory"] = [
                "gpuspy: %s's peak, %s of GPU memory, is over its limit of %s (gpu_limit_memory)"
                % (item.name, _lib.human(res.peak), _lib.human(want.limit))]
        counted = res.left + (res.pooled if self.include_pools else 0)
        if want.leak and counted > 0:
            res.failures["gpu_no_leak"] = self._leak_lines(item.name, res, counted, want.warmup)
        return res

    def _leak_lines(self, name, res, counted, warmup):
        head = "gpuspy: %s left %s of GPU memory live (gpu_no_leak" % (name,
                                                                      _lib.human(counted))
        if warmup:
            head += ", after %d warm-up run%s" % (warmup, "" if warmup == 1 else "s")
        lines = [head + ")"]
        rows = [(b, n, "") for n, b in res.own]
        if self.include_pools:
            rows += [(b, n, " (%s pool)" % p) for n, p, b in res.pools]
        rows.sort(key=lambda r: -r[0])
        for b, n, note in rows[:SHOWN]:
            lines.append("gpuspy:   %s from %s%s" % (_lib.human(b), n, note))
        if len(rows) > SHOWN:
            lines.append("gpuspy:   and %d more sites" % (len(rows) - SHOWN))
        if res.pooled and not self.include_pools:
            lines.append("gpuspy:   and %s more held by %s (the framework's cache, not a "
                         "leak; --gpuspy-include-pools counts it)"
                         % (_lib.human(res.pooled), _pool_names(res)))
        return lines

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        if call.when != "call":
            return
        rep = outcome.get_result()
        res = item.stash.get(_RESULT, None)
        if res is None or not res.failures or not rep.passed or hasattr(rep, "wasxfail"):
            return
        rep.outcome = "failed"
        path, lineno, _ = item.location
        rep.longrepr = Failure([line for lines in res.failures.values() for line in lines],
                               path, lineno)

    def pytest_terminal_summary(self, terminalreporter):
        if not self.results:  # no test ran here (pytest-xdist's controller)
            return
        try:
            lines = self.summary()
        except Exception as e:  # noqa: BLE001
            self._broke(e)
            return
        terminalreporter.write_sep("=", "gpuspy: GPU memory per test")
        for line in lines:
            terminalreporter.write_line(line)

    def summary(self):
        """The end of the session: the largest peaks, every test that left
        memory, what the pools kept, the totals."""
        out = []
        measured = self.results
        peaks = sorted((r for r in measured if r.peak > 0), key=lambda r: -r.peak)
        if not peaks:
            out.append("no test allocated GPU memory (%d measured)" % len(measured))
        elif self.top > 0:
            out.append("the largest peaks, above what was live when each test started:")
            for r in peaks[:self.top]:
                out.append("  %10s  %s%s" % (_lib.human(r.peak), r.nodeid,
                                             _checked(r, "gpu_limit_memory")))
        left = [r for r in measured if r.left > 0]
        if left:
            out.append("the tests that left GPU memory live (%d, %s in all):"
                       % (len(left), _lib.human(sum(r.left for r in left))))
            for r in sorted(left, key=lambda r: -r.left):
                top = max(r.own, key=lambda s: s[1])[0]
                more = " (+%d more sites)" % (len(r.own) - 1) if len(r.own) > 1 else ""
                out.append("  %10s  %s  from %s%s%s" % (_lib.human(r.left), r.nodeid, top, more,
                                                         _checked(r, "gpu_no_leak")))
        elif measured:
            out.append("no test left GPU memory live")
        pooled = [r for r in measured if r.pooled > 0]
        if pooled:
            out.append("the frameworks' pools held %s more (their cache, %s): %s"
                       % (_lib.human(sum(r.pooled for r in pooled)),
                          "counted: --gpuspy-include-pools" if self.include_pools
                          else "not a leak",
                          ", ".join("%s (%s)" % (r.nodeid, _lib.human(r.pooled))
                                    for r in pooled[:SHOWN])
                          + (", and %d more tests" % (len(pooled) - SHOWN)
                             if len(pooled) > SHOWN else "")))
        t = self.lib.totals()
        if t is not None:
            d = self.lib.process_dir()
            out.append("gpuspy: %s of GPU memory live now, peak %s%s%s"
                       % (_lib.human(t.live_bytes), _lib.human(t.peak_bytes),
                          "" if t.tracking else " (gpuspy stopped tracking: see its line above)",
                          "; after the run: gpuspy report %s" % d if d else ""))
        return out


class Failure:
    """A check's failure as pytest shows one (a report's longrepr): its
    lines, in the terminal and in --junitxml's failure; the first, the
    short summary's reason and the JUnit failure's message (reprcrash, at
    the test's place)."""

    class Crash:
        __slots__ = ("path", "lineno", "message")

        def __init__(self, path, lineno, message):
            self.path, self.lineno, self.message = path, lineno, message

    def __init__(self, lines, path, lineno):
        self.lines = lines
        self.reprcrash = Failure.Crash(path, (lineno or 0) + 1, lines[0])

    def toterminal(self, tw):
        for line in self.lines:
            tw.line(line, red=True, bold=line is self.lines[0])

    def __str__(self):
        return "\n".join(self.lines)


def _pool_names(res):
    names = []
    for _, p, _ in res.pools:
        if p not in names:
            names.append(p)
    return "the %s pool%s" % (" and ".join(names), "s" if len(names) > 1 else "")


def _checked(res, marker):
    """The note after a test in the summary: whether it failed MARKER's
    check (or failed on its own)."""
    if res.failed:
        return "  [the test failed]"
    return "  [failed %s]" % marker if marker in res.failures else ""
