#!/usr/bin/env python3
"""The metrics endpoint (GPUSPY_PROMETHEUS, libgpuspy(7) PROMETHEUS) of a
program on the fake driver (tests/integration/growth.c):
 - /metrics names the leaking site with its live bytes, as the snapshot
   of the same moment does; promtool check metrics finds nothing wrong;
   halted, the leak grew, then stopped: snapshot.json says so, and
   gpuspy_growing_sites and its gpuspy_site_growing count it no more;
 - it listens on loopback only, unless another address is given, which
   is said in one line; port 0 is resolved in the process directory;
   LOCAL_RANK offsets the port; a port in use, GPUSPY_INTERVAL=0 and a
   libmicrohttpd that cannot be loaded are one line each, and the
   program runs on unchanged;
 - hostile clients (garbage, a 1 MiB header, a slow client holding its
   socket, 40 of one address (8 held), 200 connections at once, POST, an
   unknown path) each get their status or a closed socket, and others are
   served meanwhile;
 - scraped continuously, the program's output, exit status and report,
   and the snapshot thread's cadence, are those of a run not scraped;
 - a forked child that does not exec closes the parent's socket and exits.
With --flood, only a request every millisecond for 10 s (suite slow).
Usage: prometheus.py [--flood] LIBGPUSPY FAKE_DIR GROWTH PROM_FORK PROMTOOL"""
import glob, json, os, re, shutil, socket, subprocess, sys, threading, time
import urllib.error, urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

args = sys.argv[1:]
flood = args[:1] == ["--flood"]
if flood:
    args = args[1:]
lib, fake, growth, prom_fork, promtool = args[:5]
lib = harness.preload(lib)
base = harness.clean_env(RANK=None, LOCAL_RANK=None)
base.update(LD_LIBRARY_PATH=fake, LD_PRELOAD=lib, GPUSPY_INTERVAL="100ms", GPUSPY_QUIET="1")
# what a sanitizer's build needs of gpuspy (scripts/sanitize)
base.update(kv.split("=", 1) for kv in os.environ.get("SANITIZER_GPUSPY", "").split() if "=" in kv)
MiB = 1 << 20


def start(argv, **env):
    out = harness.tempdir()
    e = dict(base, GPUSPY_OUTPUT_DIR=out, **env)
    p = subprocess.Popen(argv, env=e, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    return p, out


def address(out, timeout=10):
    """The address in the process directory's prometheus file."""
    a = harness.wait_file(os.path.join(out, "*", "prometheus"), lambda t: t.endswith("\n"),
                          timeout)
    return a.strip() if a else None


def split(addr):
    host, port = addr.rsplit(":", 1)
    return host.strip("[]"), int(port)


def get(addr, path="/metrics", method="GET", timeout=5):
    req = urllib.request.Request(f"http://{addr}{path}", method=method)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, dict(r.headers), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read().decode()


def raw(addr, data, timeout=10):
    """What the server answers to DATA; b"" when it closed without a word."""
    host, port = split(addr)
    s = socket.create_connection((host, port), timeout=timeout)
    got = b""
    try:
        s.sendall(data)
        while True:
            b = s.recv(65536)
            if not b:
                break
            got += b
    except (ConnectionResetError, BrokenPipeError):
        pass
    finally:
        s.close()
    return got


def status_of(resp):
    m = re.match(rb"HTTP/1\.[01] (\d{3})", resp)
    return int(m.group(1)) if m else None


def series(text, name):
    """{frozenset(labels): value} of the series NAME in TEXT."""
    out = {}
    for line in text.splitlines():
        m = re.match(name + r"(\{(.*)\})? (\S+)$", line)
        if m:
            labels = frozenset(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))
            out[labels] = float(m.group(3))
    return out


def site_value(text, function):
    vals = [(dict(k), v) for k, v in series(text, "gpuspy_site_live_bytes").items()
            if function in dict(k).get("name", "")]
    return vals


def listening(pid):
    """(local address hex, port) of each TCP socket of PID in LISTEN."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            t = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        m = re.match(r"socket:\[(\d+)\]", t)
        if m:
            inodes.add(m.group(1))
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in open(table).read().splitlines()[1:]:
            f = line.split()
            if f[3] == "0A" and f[9] in inodes:  # 0A: TCP_LISTEN
                a, port = f[1].split(":")
                found.append((a, int(port, 16)))
    return found


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def finish(p, timeout=60):
    try:
        o, e = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        o, e = p.communicate()
        check(False, "the program ended in time")
    return p.returncode, o, e


if flood:
    # one request every millisecond for 10 s, one connection each, and
    # the page still right; the rest is the test without --flood
    p, out = start([growth, "40", "30", "hang"], GPUSPY_PROMETHEUS="127.0.0.1:0")
    check(p.stdout.readline().startswith("growth: halfway"), "the program ran halfway")
    addr = address(out)
    check(addr is not None, f"the address is in the process directory ({addr})")
    codes, t0, n = {}, time.time(), 0
    while addr and time.time() - t0 < 10:
        c = get(addr)[0]
        codes[c] = codes.get(c, 0) + 1
        n += 1
        time.sleep(0.001)  # not a wait: a request each ms
    check(set(codes) == {200}, f"a request per millisecond for 10 s: {n} requests, {codes}")
    last = [None]

    def leak_on_page():
        last[0] = get(addr)
        return [v for _, v in site_value(last[0][2], "leak_step")] == [20 * MiB]
    check(addr and harness.wait_for(leak_on_page, timeout=10, proc=p),
          f"and then the page names the leak's 20 MiB ({last[0] and last[0][0]})")
    p.kill()
    p.wait()
    sys.exit(harness.done())

# 1. A leak, halted halfway (20 steps of 1 MiB, 60 ms each: about 12
# samples of 100 ms while it grows, where the growth rule needs 5 rises,
# with room for samples a loaded machine delays): the scraped value is the
# leak's, as the snapshot has it; promtool finds nothing wrong.
p, out = start([growth, "40", "60", "hang"], GPUSPY_PROMETHEUS="127.0.0.1:0")
check(p.stdout.readline().startswith("growth: halfway"), "the program ran halfway")
addr = address(out)
check(addr is not None and addr.startswith("127.0.0.1:") and split(addr)[1] > 0,
      f"port 0: the address bound is in the process directory ({addr})")
# the snapshot of the halt, and a page of a sample after it
harness.wait_snapshot(out, lambda doc: doc["leaked"]["bytes"] == 20 * MiB, proc=p)


def page_when(pred):
    """The first answer of the endpoint whose page PRED accepts (within
    10 s; else the last)."""
    got = [None]

    def answered():
        got[0] = get(addr)
        return got[0][0] == 200 and pred(got[0][2])
    harness.wait_for(answered, timeout=10, proc=p)
    return got[0]


st, hdr, text = page_when(lambda t: [v for _, v in site_value(t, "leak_step")] == [20 * MiB])
check(st == 200 and hdr.get("Content-Type", "").startswith("text/plain; version=0.0.4"),
      f"GET /metrics: 200 and the exposition format ({st}, {hdr.get('Content-Type')})")
leak = site_value(text, "leak_step")
check(len(leak) == 1 and leak[0][1] == 20 * MiB,
      f"the leaking site leak_step: 20 MiB live ({leak})")
snap = json.load(open(glob.glob(os.path.join(out, "*", "snapshot.json"))[0]))
check(snap.get("prometheus") == addr, f"snapshot.json names the address ({snap.get('prometheus')})")
tracked = series(text, "gpuspy_tracked_bytes")
check(tracked.get(frozenset({("device", "0")})) == snap["leaked"]["bytes"],
      f"gpuspy_tracked_bytes is the snapshot's live GPU memory ({tracked}, {snap['leaked']})")
# halted, the leak is called stopped once flat for 8 samples (0.8 s): by
# then the snapshot, written before the page at each sample, says so
grows = series(text, "gpuspy_growing_sites").get(frozenset())
snap = json.load(open(glob.glob(os.path.join(out, "*", "snapshot.json"))[0]))
stopped = [s for s in snap["sites"] if s.get("growth", {}).get("stopped")]
check(grows == 1.0 or (grows == 0.0 and len(stopped) == 1),
      f"one site growing, or it grew, then stopped: {grows}, {len(stopped)} stopped")
# ... and once it has: the page counts it no more, as the snapshot says
found = harness.wait_snapshot(
    out, lambda doc: any(s.get("growth", {}).get("stopped") for s in doc["sites"]), timeout=20,
    proc=p)
stopped = [s for s in found[1]["sites"] if s.get("growth", {}).get("stopped")] if found else []
# the page of the sample that wrote it, or of the next
st, _, text3 = page_when(lambda t: series(t, "gpuspy_growing_sites").get(frozenset()) == 0.0)
sg = [v for k, v in series(text3, "gpuspy_site_growing").items()
      if "leak_step" in dict(k).get("name", "")]
check(len(stopped) == 1 and series(text3, "gpuspy_growing_sites").get(frozenset()) == 0.0
      and sg == [0.0],
      f"halted: grew, then stopped in snapshot.json, and not growing on /metrics: "
      f"{len(stopped)} stopped, {series(text3, 'gpuspy_growing_sites')}, {sg}")
info = series(text, "gpuspy_info")
check(len(info) == 1 and ("pid", str(p.pid)) in next(iter(info)), "gpuspy_info names the pid")
check(all("pid" not in dict(k) for n in ("gpuspy_live_bytes", "gpuspy_site_live_bytes")
          for k in series(text, n)), "no pid label but on gpuspy_info")
st2, _, text2 = get(addr)
check(site_value(text2, "leak_step")[0][0]["site"] == leak[0][0]["site"],
      "the site label is the same at the next scrape")
pt = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True)
check(pt.returncode == 0, f"promtool check metrics: clean ({pt.stdout}{pt.stderr})")
st, _, body = get(addr, method="HEAD")
check(st == 200 and body == "", "HEAD /metrics: 200, no body")
check(listening(p.pid) == [("0100007F", split(addr)[1])],
      f"/proc/net/tcp: one listening socket, on 127.0.0.1 ({listening(p.pid)})")

# 2. Hostile clients, against the same process.
st, hdr, _ = get(addr, method="POST")
check(st == 405 and hdr.get("Allow") == "GET, HEAD", f"POST: 405 with Allow ({st}, {hdr})")
check(get(addr, "/nope")[0] == 404, "/nope: 404")
r = raw(addr, b"\x00\xff\x13garbage garbage\r\n\r\n")
check(r == b"" or status_of(r) == 400, f"garbage: 400 or closed ({r[:40]!r})")
r = raw(addr, b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * MiB + b"\r\n\r\n")
check(r == b"" or status_of(r) in (413, 431), f"a 1 MiB header: 431/413 or closed ({r[:40]!r})")
r = raw(addr, b"GET /" + b"a" * MiB + b" HTTP/1.1\r\nHost: x\r\n\r\n")
check(r == b"" or status_of(r) in (413, 414, 431), f"a 1 MiB path: 414 or closed ({r[:40]!r})")

host, port = split(addr)
slow = socket.create_connection((host, port), timeout=30)
slow.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")  # and never the end of it
t0 = time.time()
served = [get(addr)[0] for _ in range(5)]
check(served == [200] * 5 and time.time() - t0 < 3,
      f"a slow client holds its socket: others are served meanwhile ({served})")
try:
    r = slow.recv(65536)
except (ConnectionResetError, socket.timeout):
    r = b""
waited = time.time() - t0
check(waited < 15 and (r == b"" or status_of(r) in (408, 400)),
      f"the slow client is let go after the timeout ({waited:.1f} s, {r[:40]!r})")
slow.close()

# More slow clients of one address than it may hold (8 per client
# address): the server holds 8 of them until the timeout and closes the
# others at once; a client of another address (127.0.0.2, on loopback
# too) is served meanwhile; one more of the first address is served once
# the timeout has let the holders go.
held = []
for _ in range(40):
    c = socket.create_connection((host, port), timeout=30)
    c.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
    held.append(c)
time.sleep(0.5)  # not a wait: the server meets 40 clients
still = 0
for c in held:
    c.setblocking(False)
    try:
        still += c.recv(1) != b""
    except BlockingIOError:
        still += 1
    except ConnectionResetError:
        pass
check(still == 8, f"40 slow clients of one address: 8 held, the others closed ({still} held)")


def get_from(source, timeout=5):
    s = socket.create_connection((host, port), timeout=timeout, source_address=(source, 0))
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    got = b""
    while True:
        b = s.recv(65536)
        if not b:
            break
        got += b
    s.close()
    return status_of(got) if got else "closed"


t0 = time.time()
st = get_from("127.0.0.2")
check(st == 200 and time.time() - t0 < 2,
      f"... a client of another address is served meanwhile ({st}, {time.time() - t0:.1f} s)")
def served_from_first():
    try:
        return get_from("127.0.0.1") == 200
    except OSError:
        return False


t0 = time.time()
st = 200 if harness.wait_for(served_from_first, timeout=12, every=0.2) else "closed"
waited = time.time() - t0
check(st == 200 and waited < 12, f"... and one more of the first once the timeout let them go "
      f"({st} after {waited:.1f} s)")
for c in held:
    c.close()

results = []


def one():
    try:
        s = socket.create_connection((host, port), timeout=20)
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        got = b""
        while True:
            b = s.recv(65536)
            if not b:
                break
            got += b
        s.close()
        results.append(status_of(got) if got else "closed")
    except (ConnectionResetError, BrokenPipeError, ConnectionRefusedError):
        results.append("closed")
    except socket.timeout:
        results.append("timeout")


threads = [threading.Thread(target=one) for _ in range(200)]
t0 = time.time()
for t in threads:
    t.start()
for t in threads:
    t.join(60)
counts = {x: results.count(x) for x in set(results)}
check(len(results) == 200 and set(results) <= {200, "closed"} and counts.get(200, 0) >= 8,
      f"200 connections at once: each 200 or closed, in {time.time() - t0:.1f} s ({counts})")
check(get(addr)[0] == 200, "served again afterwards")

p.kill()
p.wait()


# 3. Scraped as fast as it answers, or not at all: the same output, exit
# status, report and snapshot cadence.
def history_times(out):
    h = glob.glob(os.path.join(out, "*", "history.jsonl"))[0]
    return [json.loads(l)["t"] for l in open(h) if l.startswith('{"t"')]


def run(scrape):
    env = {"GPUSPY_PROMETHEUS": "127.0.0.1:0"} if scrape else {}
    p, out = start([growth, "60", "30"], **env)
    stop, n = threading.Event(), [0, 0]

    def scraper():
        a = address(out)
        while a and not stop.is_set():
            try:
                n[0 if get(a, timeout=2)[0] == 200 else 1] += 1
            except OSError:
                n[1] += 1  # the program has ended
            time.sleep(0.001)  # not a wait: as fast as it answers

    t = threading.Thread(target=scraper)
    if scrape:
        t.start()
    rc, o, e = finish(p)
    stop.set()
    if scrape:
        t.join()
    rep = json.load(open(glob.glob(os.path.join(out, "*", "report.json"))[0]))
    return rc, o, e, rep, history_times(out), n[0]


rc0, o0, e0, rep0, h0, _ = run(False)
rc1, o1, e1, rep1, h1, scrapes = run(True)
check(scrapes > 50, f"the second run was scraped ({scrapes} scrapes)")
check((rc0, o0, e0) == (rc1, o1, e1), f"output and status unchanged ({rc0} {o0!r} / {rc1} {o1!r})")
check(rep0["leaked"] == rep1["leaked"] and rep0["peak"] == rep1["peak"],
      f"the report unchanged ({rep0['leaked']} / {rep1['leaked']})")
gaps0 = [b - a for a, b in zip(h0, h0[1:])]
gaps = [b - a for a, b in zip(h1, h1[1:])]
# (on 2 loaded cores the scraper thread itself takes CPU from the
# program: a few samples either way; the gap below is what would show a
# snapshot thread held up by the endpoint)
check(abs(len(h0) - len(h1)) <= max(3, len(h0) // 5),
      f"as many samples scraped as not ({len(h0)} / {len(h1)})")
# a loaded machine delays samples of both runs: the plain run's worst gap
# is the measure.  Under a sanitizer every scrape costs the program
# several times its own CPU on 2 cores, so a gap there measures the
# machine, not a lock: the count above is what holds there.
if os.environ.get("SANITIZER_PRELOAD"):
    print(f"--   no sample held up by the scrapes: not judged under a sanitizer "
          f"(largest gap {max(gaps):.3f} s, not scraped {max(gaps0):.3f} s)")
else:
    check(gaps and max(gaps) < max(0.25, 1.5 * max(gaps0)),
          f"no sample held up by the scrapes (largest gap {max(gaps):.3f} s, "
          f"not scraped {max(gaps0):.3f} s)")

# 4. Where it listens: PORT alone is loopback; another address is said.
port = free_port()
p, out = start([growth, "40", "30", "hang"], GPUSPY_PROMETHEUS=str(port), GPUSPY_QUIET="0")
p.stdout.readline()
a = address(out)
check(a == f"127.0.0.1:{port}", f"GPUSPY_PROMETHEUS=PORT: 127.0.0.1 ({a})")
check(listening(p.pid) == [("0100007F", port)], f"listens on loopback only ({listening(p.pid)})")
p.kill()
_, _, e = finish(p)
check("metrics" not in e, f"loopback: nothing said ({e!r})")

p, out = start([growth, "40", "30", "hang"], GPUSPY_PROMETHEUS="0.0.0.0:0")
p.stdout.readline()
a = address(out)
p.kill()
_, _, e = finish(p)
lines = [l for l in e.splitlines() if "metrics" in l]
check(a and a.startswith("0.0.0.0:") and len(lines) == 1 and "beyond this machine" in lines[0]
      and a in lines[0], f"0.0.0.0: served and said in one line ({a}, {lines})")

# LOCAL_RANK: the port plus the rank's
port = free_port()
p, out = start([growth, "40", "30", "hang"], GPUSPY_PROMETHEUS=f"127.0.0.1:{port - 3}",
               LOCAL_RANK="3")
p.stdout.readline()
a = address(out)
p.kill()
finish(p)
check(a == f"127.0.0.1:{port}", f"LOCAL_RANK=3: port + 3 ({a})")

# 5. What keeps the endpoint from starting: one line, and the program
# runs on as it would without it.
plain = subprocess.run([growth, "10", "10"], env=dict(base, GPUSPY_OUTPUT_DIR=harness.tempdir()),
                       capture_output=True, text=True, timeout=60)
busy = socket.socket()
busy.bind(("127.0.0.1", 0))
busy.listen(1)
cases = {
    "a port in use": ({"GPUSPY_PROMETHEUS": "127.0.0.1:%d" % busy.getsockname()[1]},
                      "Address already in use"),
    "no libmicrohttpd": ({"GPUSPY_PROMETHEUS": "127.0.0.1:0",
                          "GPUSPY_LIBMICROHTTPD": "/nonexistent/libmicrohttpd.so.12"},
                         "install libmicrohttpd12"),
    "GPUSPY_INTERVAL=0": ({"GPUSPY_PROMETHEUS": "127.0.0.1:0", "GPUSPY_INTERVAL": "0"},
                          "GPUSPY_INTERVAL=0"),
    "a bad address": ({"GPUSPY_PROMETHEUS": "localhost:80"}, "is not PORT"),
}
for what, (env, said) in cases.items():
    out = harness.tempdir()
    r = subprocess.run([growth, "10", "10"], env=dict(base, GPUSPY_OUTPUT_DIR=out, **env),
                       capture_output=True, text=True, timeout=60)
    lines = r.stderr.splitlines()
    check(len(lines) == 1 and said in lines[0] and "no metrics endpoint" in lines[0],
          f"{what}: one line ({lines})")
    check((r.returncode, r.stdout) == (plain.returncode, plain.stdout),
          f"{what}: the program runs on ({r.returncode}, {r.stdout!r})")
    check(glob.glob(os.path.join(out, "*", "report.json")) and
          not glob.glob(os.path.join(out, "*", "prometheus")), f"{what}: a report, no address")
busy.close()

# 6. fork without exec: the child holds no listening socket, and ends.
p, out = start([prom_fork], GPUSPY_PROMETHEUS="127.0.0.1:0")
check(p.stdout.readline() == "allocated\n", "prom_fork allocated")
a = address(out)
check(listening(p.pid) == [("0100007F", split(a)[1])], "the parent listens")
p.stdin.write("\n")
p.stdin.flush()
m = re.match(r"child (\d+)", p.stdout.readline())
child = int(m.group(1)) if m else 0
check(child and listening(child) == [], f"the child holds no listening socket ({listening(child)})")
check(get(a)[0] == 200, "the parent still serves")
p.stdin.write("\n")
p.stdin.flush()
rc, o, e = finish(p, timeout=20)
check(rc == 0 and o == "child exited 0\n", f"the child exited, the parent too ({rc}, {o!r}, {e!r})")

sys.exit(harness.done())
