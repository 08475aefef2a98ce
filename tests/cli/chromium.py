#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Drive headless Chromium (Debian's chromium) over the DevTools protocol
on --remote-debugging-pipe (fd 3: commands, fd 4: replies and events, JSON
separated by NUL bytes), with the standard library only: open a page from
disk, record its console errors, exceptions and network requests, query
its DOM, take a screenshot and read the pixels of one.

    with Browser() as b:
        page = b.open("/tmp/report.html")     # waits for window.__gpuspyReady
        page.errors, page.requests, page.eval("document.title")
        png = page.screenshot("#timeline")     # PNG bytes
        width, height, rgb = png_decode(png)
"""
import base64
import json
import os
import select
import shutil
import struct
import subprocess
import tempfile
import time
import zlib


def chromium_path():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(name)
        if p:
            return p
    return None


class BrowserError(Exception):
    pass


class Browser:
    def __init__(self, width=1280, height=2400):
        exe = chromium_path()
        if not exe:
            raise BrowserError("no chromium installed (scripts/need chromium)")
        self.profile = tempfile.mkdtemp(prefix="gpuspy-chromium-")
        cmd_r, self._cmd_w = os.pipe()
        self._ev_r, ev_w = os.pipe()
        args = [exe, "--headless=new", "--remote-debugging-pipe", "--disable-gpu",
                "--disable-dev-shm-usage", "--no-first-run", "--no-default-browser-check",
                "--disable-extensions", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--hide-scrollbars",
                "--force-device-scale-factor=1", "--window-size=%d,%d" % (width, height),
                "--user-data-dir=" + self.profile, "about:blank"]
        if os.geteuid() == 0:
            args.insert(1, "--no-sandbox")

        # the pipe's two ends where Chromium looks for them: fd 3 and 4
        def fds():
            os.dup2(cmd_r, 3)
            os.dup2(ev_w, 4)

        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     preexec_fn=fds, pass_fds=(3, 4))
        os.close(cmd_r)
        os.close(ev_w)
        self._buf = b""
        self._id = 0
        self.events = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if self.proc.poll() is None:
            try:
                self.send("Browser.close", timeout=10)
            except (BrowserError, OSError):
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for fd in (self._cmd_w, self._ev_r):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)

    def _read_message(self, deadline):
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError("chromium did not answer in time")
            r, _, _ = select.select([self._ev_r], [], [], left)
            if not r:
                continue
            chunk = os.read(self._ev_r, 1 << 20)
            if not chunk:
                raise BrowserError("chromium closed its pipe (rc %s)" % self.proc.poll())
            self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def send(self, method, params=None, session=None, timeout=30):
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._cmd_w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            m = self._read_message(deadline)
            if m.get("id") == self._id:
                if "error" in m:
                    raise BrowserError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            self.events.append(m)

    def pump(self, seconds):
        """Read the events that come within SECONDS."""
        deadline = time.monotonic() + seconds
        try:
            while True:
                self.events.append(self._read_message(deadline))
        except BrowserError as e:
            if "in time" not in str(e):
                raise

    def open(self, path, timeout=30):
        targets = self.send("Target.getTargets")["targetInfos"]
        page = [t for t in targets if t["type"] == "page"]
        tid = page[0]["targetId"] if page else \
            self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": tid, "flatten": True})["sessionId"]
        return Page(self, session, os.path.abspath(path), timeout)


class Page:
    def __init__(self, browser, session, path, timeout):
        self.b = browser
        self.session = session
        self.url = "file://" + path
        for domain in ("Runtime", "Log", "Network", "Page"):
            self.send(domain + ".enable")
        first = len(self.b.events)
        self.send("Page.navigate", {"url": self.url})
        deadline = time.monotonic() + timeout
        self.ready_ms = None
        while time.monotonic() < deadline:
            v = self.eval("window.__gpuspyReady === undefined ? null : window.__gpuspyReady")
            if v is not None:
                self.ready_ms = v
                break
            if self.exceptions(first):
                break
            self.b.pump(0.05)
        # events that come right after the page is drawn count too
        self.b.pump(0.3)
        self.first = first

    def send(self, method, params=None, timeout=30):
        return self.b.send(method, params, self.session, timeout)

    def _mine(self, first=None):
        evs = self.b.events[self.first if first is None else first:]
        return [e for e in evs if e.get("sessionId") == self.session]

    def exceptions(self, first=None):
        return [e for e in self._mine(first) if e.get("method") == "Runtime.exceptionThrown"]

    @property
    def errors(self):
        """Console errors, exceptions and error log entries, as text."""
        out = []
        for e in self._mine():
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                out.append("exception: %s %s" % (d.get("text"), d.get("exception", {}).get("description")))
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append("console.%s: %s" % (p["type"], [a.get("value", a.get("description"))
                                                           for a in p.get("args", [])]))
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                out.append("log: %s" % p["entry"].get("text"))
        return out

    @property
    def requests(self):
        """Every URL the page asked for."""
        return [e["params"]["request"]["url"] for e in self._mine()
                if e.get("method") == "Network.requestWillBeSent"]

    def eval(self, expr):
        r = self.send("Runtime.evaluate", {"expression": expr, "returnByValue": True})
        if "exceptionDetails" in r:
            raise BrowserError("evaluate %r: %s" % (expr, r["exceptionDetails"].get("text")))
        return r["result"].get("value")

    def rect(self, selector):
        return self.eval("(() => { const r = document.querySelector(%s).getBoundingClientRect();"
                         " return {x: r.left + scrollX, y: r.top + scrollY, width: r.width,"
                         " height: r.height}; })()" % json.dumps(selector))

    def screenshot(self, selector=None):
        params = {"format": "png", "captureBeyondViewport": True}
        if selector:
            r = self.rect(selector)
            params["clip"] = dict(r, scale=1)
        return base64.b64decode(self.send("Page.captureScreenshot", params)["data"])


def png_decode(data):
    """(width, height, rows): rows of (r, g, b) tuples, of an 8-bit RGB or
    RGBA PNG without interlacing (what Chromium writes)."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, w = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or ctype not in (2, 6) or interlace:
                raise ValueError("PNG of depth %d, colour type %d" % (depth, ctype))
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(w)])
        prev = line
    return w, h, rows


def count_not(rows, background, tolerance=16):
    """Pixels farther than TOLERANCE from BACKGROUND in some channel."""
    return sum(1 for r in rows for p in r
               if max(abs(p[i] - background[i]) for i in range(3)) > tolerance)
