# SPDX-License-Identifier: MIT
"""What the tests of 'gpuspy exporter' share (test_exporter.py,
test_prometheus.py): programs on the fake driver, the exporter, its page
fetched and parsed."""
import os
import queue
import re
import select
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402


def clean_env(fake):
    """The environment of a program on the fake driver, without the
    caller's GPUSPY_* or locale."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GPUSPY_", "LC_", "LANG")) and k not in ("LD_PRELOAD", "RANK",
                                                                          "LOCAL_RANK")}
    env.update(LD_LIBRARY_PATH=fake, GPUSPY_QUIET="1")
    return env


preload = harness.preload


def start_leaker(lib, fake, prog, out, kib=1024, steps=3, **extra):
    """tests/cli/leaker.c under libgpuspy: STEPS allocations of KIB KiB
    from keep_output(), then it waits to be killed; returns once it has
    printed 'leaked' and written its first snapshot."""
    env = dict(clean_env(fake), LD_PRELOAD=preload(lib), GPUSPY_OUTPUT_DIR=out,
               GPUSPY_INTERVAL="100ms")
    env.update(extra)
    p = subprocess.Popen([prog, str(steps), "1", str(kib), "hang"], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ready, _, _ = select.select([p.stdout], [], [], 30)
    line = p.stdout.readline() if ready else ""
    if line.strip() != "leaked":
        p.kill()
        raise RuntimeError("leaker did not start: " + line + p.stderr.read())
    # the snapshot after the last allocation: all it leaked is live
    harness.wait_snapshot(os.path.join(out, f"{os.uname().nodename}-{p.pid}"),
                          lambda doc: doc.get("leaked", {}).get("bytes") == steps * kib * 1024,
                          proc=p)
    return p


def stop(p, sig=signal.SIGKILL):
    if p and p.poll() is None:
        p.send_signal(sig)
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


class Exporter:
    """gpuspy exporter ARGS on a port the kernel picks, its stderr read
    line by line in a thread."""

    def __init__(self, gpuspy, *args, listen="127.0.0.1:0", env=None):
        cmd = [gpuspy, "exporter"] + (["--listen", listen] if listen else []) + list(args)
        self.p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True, env=env)
        self.lines = queue.Queue()
        self.said = []
        threading.Thread(target=self._read, daemon=True).start()
        # the lines said before it serves, then the one that says where
        self.url = None
        self.before = []
        while True:
            line = self.line(timeout=20)
            m = re.search(r"^gpuspy exporter: serving .* on (http://\S+/metrics)", line or "")
            if m or line is None:
                break
            self.before.append(line)
        if m:
            self.url = m.group(1)
        self.first = line

    def _read(self):
        for line in self.p.stderr:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def line(self, timeout=5):
        """The next line on stderr, or None."""
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            return None
        if line is not None:
            self.said.append(line)
        return line

    def drain(self, timeout=0.3):
        """The lines said since the last call."""
        out = []
        while True:
            line = self.line(timeout=timeout)
            if line is None:
                return out
            out.append(line)

    def get(self, path="/metrics"):
        """(status, content type, body) of a GET."""
        try:
            with urllib.request.urlopen(self.url.replace("/metrics", path), timeout=10) as r:
                return r.status, r.headers.get("Content-Type"), r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.headers.get("Content-Type"), e.read().decode()

    def stop(self, sig=signal.SIGTERM):
        """SIGNAL, then its status (None: it did not end within 10 s)."""
        if self.p.poll() is None:
            self.p.send_signal(sig)
        try:
            return self.p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            return None


SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse(page):
    """The samples of an exposition page: [(name, {label: value}, value)]."""
    out = []
    for line in page.split("\n"):
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        if not m:
            raise ValueError("not a sample line: " + line)
        labels = {k: re.sub(r"\\(.)", lambda c: "\n" if c.group(1) == "n" else c.group(1), v)
                  for k, v in LABEL.findall(m.group(2) or "")}
        out.append((m.group(1), labels, float(m.group(3))))
    return out


def series(samples, name, **labels):
    """The samples of NAME whose labels include LABELS."""
    return [s for s in samples
            if s[0] == name and all(s[1].get(k) == v for k, v in labels.items())]
