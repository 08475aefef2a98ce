#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""'gpuspy top': plain blocks on a pipe; a view that follows a snapshot.json
rewritten between refreshes and stops once every process has exited; the
terminal view in a pseudo-terminal (alternate screen, 'q', Ctrl-C, SIGTERM,
the window's size, termios restored), with the sequences terminfo gives
for TERM (none for dumb), 60 columns that keep site names whole; a PID's
directory; a directory waited for until it exists, and the end said;
bad input.

    test_top.py GPUSPY FIXTURES

FIXTURES is tests/cli/fixtures; the growth/ run is copied and rewritten
here (see its README section): four sites hold memory, leak_step 64 MiB,
warm_pool 32 MiB, alloc_batch 6 MiB, cache_grow 4 MiB; all but warm_pool
are growing.
"""
import copy
import fcntl
import json
import os
import queue
import re
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

MiB = 1 << 20
BLOCKS = "\u2581\u2582\u2583\u2584\u2585\u2586\u2587\u2588"


def site_line(lines, function):
    """The site line whose headline is FUNCTION (trainer), split into
    (size, allocations, sparkline, growing), or None."""
    for line in lines:
        m = re.match(r"^ *(\S+ \S+) +(\d+)  ( *[%s]+)  (GROWING|       )  %s \(trainer\)$"
                     % (BLOCKS, re.escape(function)), line)
        if m:
            return m.group(1), int(m.group(2)), m.group(3).strip(), m.group(4) == "GROWING"
    return None


def set_live(doc, function, live):
    """DOC with FUNCTION's site holding LIVE bytes in 1 MiB allocations,
    and the process's totals made to agree (the reader checks them)."""
    doc = copy.deepcopy(doc)
    for s in doc["sites"]:
        if s["frames"][0].get("symbol") == function:
            s["live_bytes"] = live
            s["live_allocations"] = live // MiB
            s["allocations"] = max(s["allocations"], s["live_allocations"] + s["frees"])
            s["allocated_bytes"] = max(s["allocated_bytes"], live + s["freed_bytes"])
            s["peak_bytes"] = max(s["peak_bytes"], live)
    for kind, k in doc["kinds"].items():
        sites = [s for s in doc["sites"] if s["kind"] == kind]
        for f in ("live_bytes", "live_allocations", "allocated_bytes", "allocations",
                  "freed_bytes", "frees"):
            k[f] = sum(s[f] for s in sites)
        k["peak_bytes"] = min(max(k["peak_bytes"], k["live_bytes"]), k["allocated_bytes"])
    gpu = [doc["kinds"][k] for k in ("device", "managed", "vmm")]
    doc["leaked"] = {"bytes": sum(k["live_bytes"] for k in gpu),
                     "allocations": sum(k["live_allocations"] for k in gpu)}
    doc["peak"]["bytes"] = max(doc["peak"]["bytes"], doc["leaked"]["bytes"])
    doc["devices"] = [{"device": 0, "live_bytes": doc["leaked"]["bytes"],
                       "live_allocations": doc["leaked"]["allocations"]}]
    return doc


class Blocks:
    """The blocks 'gpuspy top' prints on a pipe, read in a thread so that
    every wait has a timeout."""

    def __init__(self, proc):
        self.q = queue.Queue()
        self.proc = proc
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        block = []
        for raw in self.proc.stdout:
            line = raw.decode()[:-1]
            if line == "" and block:
                self.q.put(block)
                block = []
            elif line or block:
                block.append(line)
        self.q.put(None)

    def next(self, timeout=10):
        try:
            return self.q.get(timeout=timeout)
        except queue.Empty:
            return None

    def until(self, pred, n=60):
        """The first block that satisfies PRED, within N blocks."""
        for _ in range(n):
            b = self.next()
            if b is None:
                return None
            if pred(b):
                return b
        return None


def test_pipe(gpuspy, run):
    p = subprocess.run([gpuspy, "top", "--count", "2", "--interval", "0.1", run],
                       capture_output=True, timeout=30)
    out = p.stdout.decode()
    lines = out.splitlines()
    heads = [i for i, l in enumerate(lines) if re.match(r"^--- gpuspy top \d{4}-\d\d-\d\d "
                                                        r"\d\d:\d\d:\d\d ---$", l)]
    check(p.returncode == 0 and p.stderr == b"", "pipe: status 0, nothing on stderr",
          repr((p.returncode, p.stderr)))
    check(len(heads) == 2, "pipe: --count 2 gives two blocks", out)
    check(b"\x1b" not in p.stdout, "pipe: no escape sequences", repr(p.stdout[:200]))
    check("%s: 3 processes, 2 running" % run in lines, "pipe: processes, 2 still running", out)
    check("live 106.0 MiB  peak 112.0 MiB  pinned host 0 B" in lines, "pipe: totals", out)
    check("device 0: 106.0 MiB in 82" in lines, "pipe: devices", out)
    second = lines[heads[-1]:] if heads else []
    want = {"leak_step": ("64.0 MiB", 64, True), "warm_pool": ("32.0 MiB", 8, False),
            "alloc_batch": ("6.0 MiB", 6, True), "cache_grow": ("4.0 MiB", 4, True)}
    for fn, (size, n, growing) in want.items():
        got = site_line(second, fn)
        check(got is not None and got[:2] == (size, n) and got[3] == growing
              and got[2] == "\u2588\u2588",
              "pipe: %s %s in %d%s, two refreshes" % (fn, size, n, ", GROWING" if growing else ""),
              repr(got))
    order = [fn for l in second for fn in want if site_line([l], fn)]
    check(order == ["leak_step", "warm_pool", "alloc_batch", "cache_grow"],
          "pipe: by live bytes", repr(order))
    check(site_line(second, "churn_step") is None, "pipe: a site with nothing live is left out")

    p = subprocess.run([gpuspy, "top", "--count", "1", "--top", "1", run],
                       capture_output=True, timeout=30)
    out = p.stdout.decode()
    check(p.returncode == 0 and out.count(" (trainer)") == 1 and "CALL SITES (1 of 4)" in out,
          "pipe: --top 1", out)

    # a report at exit named directly: nothing will change, one block
    t0 = time.monotonic()
    p = subprocess.run([gpuspy, "top", "--interval", "5", os.path.join(run, "node4-300",
                                                                      "report.json")],
                       capture_output=True, timeout=30)
    out = p.stdout.decode()
    check(p.returncode == 0 and out.count("--- gpuspy top") == 1 and
          "1 process, 0 running" in out and time.monotonic() - t0 < 4,
          "pipe: every process exited: one block, then exit", out)


def test_live(gpuspy, fixtures, tmp):
    run = os.path.join(tmp, "live")
    a, b = os.path.join(run, "node4-301"), os.path.join(run, "node4-300")
    os.makedirs(a)
    shutil.copytree(os.path.join(fixtures, "growth", "node4-300"), b)
    with open(os.path.join(fixtures, "growth", "node4-301", "snapshot.json")) as f:
        snap = json.load(f)
    harness.write_json(os.path.join(a, "snapshot.json"), snap)

    proc = subprocess.Popen([gpuspy, "top", "--interval", "0.1", run],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    blocks = Blocks(proc)
    try:
        first = blocks.next()
        check(first is not None and "%s: 2 processes, 1 running" % run in first,
              "live: two processes, one running", repr(first))
        # leak_step grows by 4 MiB a step: node4-300 holds 30 MiB of it
        for mib in (24, 28, 32, 36):
            snap = set_live(snap, "leak_step", mib * MiB)
            harness.write_json(os.path.join(a, "snapshot.json"), snap)
            want = "%.1f MiB" % (30 + mib)
            blk = blocks.until(lambda bl: (site_line(bl, "leak_step") or ("",))[0] == want)
            check(blk is not None, "live: leak_step follows the snapshot to " + want)
        spark = site_line(blk or [], "leak_step")
        levels = [BLOCKS.index(c) for c in (spark[2] if spark else "")]
        check(len(levels) >= 5 and levels == sorted(levels) and levels[0] < levels[-1] == 7,
              "live: its sparkline rises to a full block", repr(spark))

        # warm_pool freed: it stays, at 0 B, its sparkline falling
        snap = set_live(snap, "warm_pool", 0)
        harness.write_json(os.path.join(a, "snapshot.json"), snap)
        blk = blocks.until(lambda bl: (site_line(bl, "warm_pool") or ("",))[0] == "16.0 MiB")
        spark = site_line(blk or [], "warm_pool")
        check(spark is not None and spark[2][-1] == BLOCKS[4] and spark[2][0] == BLOCKS[7],
              "live: a site half freed falls in its sparkline", repr(spark))

        # a report that cannot be read keeps the previous view
        with open(os.path.join(a, "snapshot.json.tmp"), "w") as f:
            f.write("{ not json")
        os.rename(os.path.join(a, "snapshot.json.tmp"), os.path.join(a, "snapshot.json"))
        blk = blocks.until(lambda bl: any(l.startswith("not refreshed: ") for l in bl))
        check(blk is not None and "snapshot.json" in "".join(blk) and
              (site_line(blk, "leak_step") or ("",))[0] == "66.0 MiB",
              "live: a bad file later keeps the view and says why", repr(blk))
        harness.write_json(os.path.join(a, "snapshot.json"), snap)
        blk = blocks.until(lambda bl: not any(l.startswith("not refreshed") for l in bl))
        check(blk is not None, "live: and the next good one is read again")

        # the process exits: its report.json, then top stops by itself
        report = dict(snap)
        del report["snapshot"]
        harness.write_json(os.path.join(a, "report.json"), report)
        last = None
        while True:
            blk = blocks.next()
            if blk is None:
                break
            last = blk
        code = proc.wait(timeout=10)
        check(code == 0 and last is not None and "%s: 2 processes, 0 running" % run in last,
              "live: exits 0 once every process has its report.json", repr((code, last)))
        check(proc.stderr.read() == b"", "live: nothing on stderr")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def cap(term, name):
    """Capability NAME of TERM as terminfo has it (tput), b"" when none."""
    p = subprocess.run(["tput", "-T", term, name], capture_output=True)
    return p.stdout if p.returncode == 0 else b""


class Pty:
    """'gpuspy top' on a pseudo-terminal that is its controlling terminal,
    so that Ctrl-C and window changes reach it as from a real one; TERM
    as given (None: unset)."""

    def __init__(self, cmd, rows, cols, term="xterm"):
        self.master, self.slave = os.openpty()
        self.resize(rows, cols)
        self.before = termios.tcgetattr(self.slave)
        self.out = b""
        slave = self.slave
        env = {k: v for k, v in os.environ.items() if k != "TERM"}
        if term:
            env["TERM"] = term
        self.proc = subprocess.Popen(
            cmd, stdin=slave, stdout=slave, stderr=slave, start_new_session=True, env=env,
            preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0))

    def resize(self, rows, cols):
        fcntl.ioctl(self.master, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))

    def read_until(self, pred, timeout=10):
        end = time.monotonic() + timeout
        while not pred(self.out) and time.monotonic() < end:
            r, _, _ = select.select([self.master], [], [], 0.05)
            if r:
                try:
                    self.out += os.read(self.master, 65536)
                except OSError:
                    break
        return pred(self.out)

    def finish(self, timeout=5):
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            code = None
        # what is left in the terminal's buffer
        while select.select([self.master], [], [], 0.1)[0]:
            try:
                data = os.read(self.master, 65536)
            except OSError:
                break
            if not data:
                break
            self.out += data
        after = termios.tcgetattr(self.slave)
        os.close(self.master)
        os.close(self.slave)
        return code, after


def screen_rows(out):
    """The rows of the last screen drawn, escape sequences removed."""
    last = out.rsplit(b"\x1b[H", 1)[-1].split(b"\x1b[J", 1)[0]
    rows = re.sub(rb"\x1b\[[0-9;?]*[A-Za-z]", b"", last).replace(b"\r", b"").split(b"\n")
    return [r.decode() for r in rows]


def test_tty(gpuspy, run):
    for how in ("q", "Ctrl-C", "SIGTERM"):
        t = Pty([gpuspy, "top", "--interval", "0.2", run], 24, 100)
        seen = t.read_until(lambda o: b"leak_step (trainer)" in o)
        check(seen, "tty (%s): a site line appears" % how, repr(t.out[-300:]))
        check(cap("xterm", "smcup") + cap("xterm", "civis") in t.out,
              "tty (%s): alternate screen, cursor hidden, as terminfo says" % how)
        mode = termios.tcgetattr(t.slave)
        check(not mode[3] & (termios.ICANON | termios.ECHO) and mode[3] & termios.ISIG,
              "tty (%s): keys one at a time, not echoed, Ctrl-C kept" % how, repr(mode[3]))
        if how == "q":
            os.write(t.master, b"q")
        elif how == "Ctrl-C":
            os.write(t.master, b"\x03")
        else:
            t.proc.send_signal(signal.SIGTERM)
        t0 = time.monotonic()
        code, after = t.finish()
        check(code == 0 and time.monotonic() - t0 < 3, "tty (%s): exits 0 at once" % how,
              repr(code))
        check(t.out.endswith(cap("xterm", "rmcup") + cap("xterm", "cnorm")),
              "tty (%s): leaves the alternate screen, shows the cursor" % how,
              repr(t.out[-40:]))
        check(after == t.before, "tty (%s): termios as before" % how, repr((t.before, after)))

    # the window: 10 rows leave room for 4 sites; shrunk to 8 rows and 40
    # columns, it redraws at once (SIGWINCH, long before the next refresh)
    # 2 sites, each line cut
    def sites(rows):
        return [r for r in rows if re.match(r"^ *[0-9.]+ (B|[KMGT]iB)  ", r)]

    t = Pty([gpuspy, "top", "--interval", "30", run], 10, 100)
    ok = t.read_until(lambda o: b"(4 of 4)" in o and b"\x1b[J" in o.rsplit(b"\x1b[H", 1)[-1])
    rows = screen_rows(t.out)
    check(ok and len(rows) == 10 and len(sites(rows)) == 4, "tty: 10 rows hold 4 sites",
          repr(rows))
    t.resize(8, 40)
    t.out = b""
    ok = t.read_until(lambda o: b"\x1b[J" in o.rsplit(b"\x1b[H", 1)[-1] and
                      len(sites(screen_rows(o))) == 2, timeout=3)
    rows = screen_rows(t.out)
    check(ok and len(rows) == 8 and all(len(r) <= 40 for r in rows),
          "tty: a smaller window redraws 2 sites in 8 rows of 40 columns", repr(rows))
    os.write(t.master, b"q")
    code, after = t.finish()
    check(code == 0 and after == t.before, "tty: and q restores it", repr(code))

    # --count ends it on a terminal too
    t = Pty([gpuspy, "top", "--interval", "0.1", "--count", "2", run], 24, 100)
    code, after = t.finish(timeout=10)
    check(code == 0 and after == t.before and
          t.out.endswith(cap("xterm", "rmcup") + cap("xterm", "cnorm")),
          "tty: --count 2 exits by itself, terminal restored", repr((code, t.out[-40:])))


def test_pid(gpuspy, fixtures, tmp):
    cwd = os.path.join(tmp, "pidcwd")
    os.makedirs(cwd)
    env = dict(os.environ, GPUSPY_OUTPUT_DIR="out")
    sleeper = subprocess.Popen(["sleep", "60"], cwd=cwd, env=env)
    try:
        pid = str(sleeper.pid)
        d = os.path.join(cwd, "out", "%s-%s" % (socket.gethostname(), pid))
        p = subprocess.run([gpuspy, "top", "--count", "1", pid], capture_output=True, timeout=30)
        out = p.stdout.decode()
        check(p.returncode == 0 and
              ("waiting for %s (it does not exist yet)" % d) in out.splitlines(),
              "pid: waits for the directory it will write", repr((p.returncode, out, p.stderr)))
        os.makedirs(d)
        shutil.copy(os.path.join(fixtures, "growth", "node4-301", "snapshot.json"), d)
        p = subprocess.run([gpuspy, "top", "--count", "1", pid], capture_output=True, timeout=30)
        out = p.stdout.decode()
        check(p.returncode == 0 and ("%s: 1 process, 1 running" % d) in out and
              site_line(out.splitlines(), "leak_step") is not None,
              "pid: then reads it", out)

        # it dies without a report: nothing more will come, top stops
        top = subprocess.Popen([gpuspy, "top", "--interval", "0.1", pid],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        blocks = Blocks(top)
        first = blocks.next()
        sleeper.kill()
        sleeper.wait()
        last = first
        while True:
            blk = blocks.next()
            if blk is None:
                break
            last = blk
        try:
            code = top.wait(timeout=10)
        except subprocess.TimeoutExpired:
            top.kill()
            code = top.wait()
        check(first is not None and code == 0 and last is not None and
              ("process %s has exited without a report" % pid) in last[1],
              "pid: stops when the process is gone", repr((code, last)))
    finally:
        sleeper.kill()
        sleeper.wait()


def test_bad(gpuspy, tmp):
    def one_line(p):
        return p.stderr.count(b"\n") == 1 and p.stdout == b""

    for args in (["--interval", "abc"], ["--interval", "0"], ["--interval", "-1"],
                 ["--count", "x"], ["--top", "-3"], ["--bogus"], [], [tmp, tmp]):
        p = subprocess.run([gpuspy, "top"] + args + ([tmp] if args and args[0][0] == "-" else []),
                           capture_output=True, timeout=30)
        check(p.returncode == 2 and one_line(p), "bad: usage %r" % args, repr(p.stderr))
    garbage = os.path.join(tmp, "garbage", "h-1")
    os.makedirs(garbage)
    with open(os.path.join(garbage, "report.json"), "w") as f:
        f.write("this is not JSON")
    p = subprocess.run([gpuspy, "top", os.path.dirname(garbage)], capture_output=True, timeout=30)
    check(p.returncode == 2 and one_line(p) and
          os.path.join(garbage, "report.json").encode() in p.stderr,
          "bad: a garbage report.json, named", repr(p.stderr))
    p = subprocess.run([gpuspy, "top", "--help"], capture_output=True, timeout=30)
    check(p.returncode == 0 and p.stdout.startswith(b"Usage: gpuspy top"), "top --help")


def test_wait(gpuspy, fixtures, tmp):
    """A run directory the job has not created yet is waited for, said
    once; then followed; then the end is said, with figures at exit."""
    run = os.path.join(tmp, "later")
    p = subprocess.run([gpuspy, "top", "--count", "1", run], capture_output=True, timeout=30)
    check(p.returncode == 0 and p.stderr == b"" and
          ("waiting for %s (it does not exist yet)" % run) in p.stdout.decode().splitlines(),
          "wait: a missing directory is waited for, status 0", repr((p.returncode, p.stdout,
                                                                    p.stderr)))
    proc = subprocess.Popen([gpuspy, "top", "--interval", "0.05", run],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    blocks = Blocks(proc)
    try:
        first = blocks.next()
        time.sleep(0.5)  # not a wait: top redraws ten intervals
        d = os.path.join(run, "node4-301")
        os.makedirs(d)
        with open(os.path.join(fixtures, "growth", "node4-301", "snapshot.json")) as f:
            snap = json.load(f)
        harness.write_json(os.path.join(d, "snapshot.json"), snap)
        blk = blocks.until(lambda bl: site_line(bl, "leak_step") is not None)
        check(first is not None and any(l.startswith("waiting for ") for l in first) and
              blk is not None and not any(l.startswith("waiting for ") for l in blk),
              "wait: said once over ten intervals, then the job is shown", repr((first, blk)))
        check(blk is not None and any(re.match(r"^live \S+ \S+  peak", l) for l in blk) and
              not any(l.startswith("finished") for l in blk),
              "wait: a running job's figures are 'live'", repr(blk))
        report = dict(snap)
        del report["snapshot"]
        harness.write_json(os.path.join(d, "report.json"), report)
        last = None
        while True:
            b = blocks.next()
            if b is None:
                break
            last = b
        code = proc.wait(timeout=10)
        check(code == 0 and last is not None and
              "finished: every process has written its report at exit" in last and
              any(l.startswith("live at exit ") for l in last) and
              not any(l.startswith("live ") and not l.startswith("live at exit") for l in last),
              "wait: the end is said, the figures are at exit", repr((code, last)))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_terminals(gpuspy, run):
    """The terminal's own capabilities (terminfo), none on a terminal that
    has none, and a narrow window that keeps the site names readable."""
    # vt100 redraws in place but has no alternate screen: none is asked for
    t = Pty([gpuspy, "top", "--interval", "0.1", "--count", "2", run], 24, 100, term="vt100")
    code, _ = t.finish(timeout=10)
    check(code == 0 and cap("vt100", "home") in t.out and cap("xterm", "smcup") not in t.out
          and b"\x1b[?25l" not in t.out,
          "vt100: home from terminfo, no alternate screen nor cursor sequences it lacks",
          repr(t.out[:80]))
    # dumb, or no TERM: plain blocks, as on a pipe, not one escape
    for term in ("dumb", None):
        t = Pty([gpuspy, "top", "--interval", "0.1", "--count", "2", run], 24, 100, term=term)
        code, _ = t.finish(timeout=10)
        check(code == 0 and b"\x1b" not in t.out and t.out.count(b"--- gpuspy top") == 2,
              "TERM=%s: plain blocks, no escape sequence" % term, repr(t.out[:120]))

    # 60 columns: every name whole, the sparkline and GROWING kept
    t = Pty([gpuspy, "top", "--interval", "30", run], 24, 60)
    ok = t.read_until(lambda o: b"(4 of 4)" in o and b"\x1b[J" in o.rsplit(b"\x1b[H", 1)[-1])
    rows = screen_rows(t.out)
    os.write(t.master, b"q")
    t.finish()
    names = {fn: [r for r in rows if r.endswith(" %s (trainer)" % fn)]
             for fn in ("leak_step", "warm_pool", "alloc_batch", "cache_grow")}
    check(ok and all(len(v) == 1 for v in names.values()) and all(len(r) <= 60 for r in rows),
          "60 columns: every site's name whole", repr(rows))
    leak = (names["leak_step"] or [""])[0]
    check(re.search(r"[%s]+  GROWING  leak_step" % BLOCKS, leak) is not None,
          "60 columns: sparkline and GROWING kept", repr(leak))

    # a job that has finished says so on a terminal too
    done = os.path.join(run, "node4-300", "report.json")
    t = Pty([gpuspy, "top", "--interval", "30", done], 24, 100)
    ok = t.read_until(lambda o: b"\x1b[J" in o.rsplit(b"\x1b[H", 1)[-1])
    rows = screen_rows(t.out)
    os.write(t.master, b"q")
    t.finish()
    check(ok and "finished: every process has written its report at exit" in rows and
          any(r.startswith("live at exit ") for r in rows),
          "tty: a finished job is said to be, its figures at exit", repr(rows))


def main():
    gpuspy, fixtures = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    with tempfile.TemporaryDirectory(prefix="gpuspy-top-") as tmp:
        tmp = os.path.realpath(tmp)
        run = os.path.join(tmp, "growth")
        shutil.copytree(os.path.join(fixtures, "growth"), run)
        test_pipe(gpuspy, run)
        test_live(gpuspy, fixtures, tmp)
        test_tty(gpuspy, run)
        test_pid(gpuspy, fixtures, tmp)
        test_wait(gpuspy, fixtures, tmp)
        test_terminals(gpuspy, run)
        test_bad(gpuspy, tmp)
    return harness.done()


if __name__ == "__main__":
    sys.exit(main())
