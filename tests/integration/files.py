#!/usr/bin/env python3
"""What gpuspy's own files must never do to the program or through the
directory they are in (libgpuspy(7), FILES AND FAILURES): a file size
limit must not kill the program (SIGXFSZ), a disk full for a moment must
not lose the exit report, a problem is one line however often it recurs,
a path too long is refused rather than cut, nothing is written through a
link someone planted in the run directory, and every file is 0600, every
directory 0700, whatever the umask.
Usage: files.py LIBGPUSPY GPUSPY FAKE_DIR LIBENOSPC API_PROG GROWTH OOM XFSZ NOFD"""
import glob, json, os, resource, signal, socket, stat, subprocess, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

lib, cli, fake, enospc, api_prog, growth, oom, xfsz, nofd = sys.argv[1:10]
base = harness.clean_env(fake, GPUSPY_QUIET="1")
host = socket.gethostname()


def preload(*libs):
    """LD_PRELOAD of libs then libgpuspy, after a sanitizer's runtime, which
    must come first (scripts/sanitize)."""
    return harness.preload(":".join(libs + (lib,)))


def spied(out, **env):
    e = dict(base, LD_PRELOAD=preload(), GPUSPY_OUTPUT_DIR=out)
    e.update(env)
    return e


def run(argv, env, limits=(), umask=None, timeout=60):
    def pre():
        for what, v in limits:
            resource.setrlimit(what, (v, v))
        if umask is not None:
            os.umask(umask)
    return subprocess.run(argv, env=env, capture_output=True, text=True, preexec_fn=pre,
                          timeout=timeout)


def ours(stderr):
    return [l for l in stderr.splitlines() if l.startswith("gpuspy:")]


def started(argv, env, umask=None):
    """ARGV started through a shell that waits for a line on stdin before
    it execs ARGV: the process's pid is known before it runs."""
    return subprocess.Popen(["sh", "-c", 'read x; exec "$0" "$@"'] + argv, env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=(lambda: os.umask(umask)) if umask is not None else None)


def go(p):
    out, err = p.communicate("\n", timeout=60)
    return p.returncode, err


def wait_handler(pid, pdir):
    """Until PID has its process directory and catches SIGUSR2 (or has
    gone)."""
    def ready():
        try:
            cgt = [l for l in open("/proc/%d/status" % pid) if l.startswith("SigCgt:")]
        except OSError:
            return True
        return os.path.isdir(pdir) and int(cgt[0].split()[1], 16) & (1 << (signal.SIGUSR2 - 1))
    harness.wait_for(ready, timeout=5, every=0.01)


tmp = harness.tempdir()
plain = run([api_prog], base)
check(plain.returncode == 0, "api_prog runs without gpuspy")

# 1. A file size limit: the writes fail (EFBIG), the program is not killed.
for limit in (0, 1024):
    fs = [(resource.RLIMIT_FSIZE, limit)]
    r = run([api_prog], spied(os.path.join(tmp, "fsize%d" % limit)), fs)
    check(r.returncode == 0 and r.stdout == plain.stdout,
          "RLIMIT_FSIZE %d: api_prog (snapshot, exit report) exits %d, not killed"
          % (limit, r.returncode))
    r = run([growth, "10", "20"], spied(os.path.join(tmp, "fsizeg%d" % limit),
                                        GPUSPY_INTERVAL="10ms"), fs)
    check(r.returncode == 0, "RLIMIT_FSIZE %d: periodic snapshots, exit %d"
          % (limit, r.returncode))
    r = run([oom, "4096", str(1 << 30)], spied(os.path.join(tmp, "fsizeo%d" % limit),
                                              GPUSPY_FAKE_OOM_SIZE=str(1 << 30)), fs)
    p = run([oom, "4096", str(1 << 30)], dict(base, GPUSPY_FAKE_OOM_SIZE=str(1 << 30)))
    check(r.returncode == p.returncode and r.stdout == p.stdout,
          "RLIMIT_FSIZE %d: out-of-memory post-mortems, exit %d as without gpuspy"
          % (limit, r.returncode))
    check(len(ours(r.stderr)) <= 3, "RLIMIT_FSIZE %d: one line per problem: %d"
          % (limit, len(ours(r.stderr))))

# The program's own SIGXFSZ handler: not called for gpuspy's writes, kept.
r = run([xfsz, os.path.join(tmp, "xfsz-own")], spied(os.path.join(tmp, "xfsz")),
        [(resource.RLIMIT_FSIZE, 0)])
check(r.returncode == 0 and r.stdout == "xfsz: after gpuspy's write: 0, handler kept: yes\n"
      "xfsz: after its own write: 1\n", "the program's SIGXFSZ handler: %d %r"
      % (r.returncode, r.stdout))

# 2. No descriptor left at exit: the exit status is the program's; with
# one left, the history's is given up for the report.
for free in (0, 1):
    out = os.path.join(tmp, "nofile%d" % free)
    r = run([nofd, "100", str(free)], spied(out, GPUSPY_INTERVAL="10ms"),
            [(resource.RLIMIT_NOFILE, 64)])
    check(r.returncode == 0 and len(ours(r.stderr)) <= 1,
          "RLIMIT_NOFILE, %d descriptor(s) left at exit: exit %d, %r"
          % (free, r.returncode, ours(r.stderr)))
    if free:
        check(len(glob.glob(os.path.join(out, "*", "report.json"))) == 1,
              "one descriptor left at exit: report.json written")

# 3. A disk full for a moment.  The first renames fail: api_prog's
# snapshot-1.json, then its report.json; the report is written again.
out = os.path.join(tmp, "enospc")
r = run([api_prog], spied(out, LD_PRELOAD=preload(enospc), FAKE_ENOSPC_RENAMES="2",
                          GPUSPY_INTERVAL="0"))
check(r.returncode == 0, "full disk: api_prog exits 0")
check(len(glob.glob(os.path.join(out, "*", "report.json"))) == 1,
      "full disk at exit, then space again: report.json written")
# The snapshot thread's first files fail: gpuspy stays on.
out = os.path.join(tmp, "enospc-periodic")
r = run([growth, "20", "20"], spied(out, LD_PRELOAD=preload(enospc),
                                    FAKE_ENOSPC_RENAMES="3", GPUSPY_INTERVAL="10ms"))
check(r.returncode == 0, "full disk in the snapshot thread: growth exits 0")
check(len(glob.glob(os.path.join(out, "*", "report.json"))) == 1,
      "full disk for the first snapshots: gpuspy stays on, report.json written")
check(len(ours(r.stderr)) == 1, "full disk, three failed snapshots: one line: %r"
      % ours(r.stderr))

# The first snapshot fails and nothing changes after it: it is tried again
# at the next interval all the same.
out = os.path.join(tmp, "enospc-idle")
r = run([nofd, "300", "100"], spied(out, LD_PRELOAD=preload(enospc),
                                    FAKE_ENOSPC_RENAMES="1", GPUSPY_INTERVAL="10ms"))
check(r.returncode == 0 and len(glob.glob(os.path.join(out, "*", "snapshot.json"))) == 1,
      "full disk for the only snapshot: written at the next interval")

# The history's appends fail for a while, the first of them halfway
# through its line: said once with the real error, the file cut back to
# whole lines, then rewritten from memory when space is back: whole, with
# the samples of the outage, and appended to again.
out = os.path.join(tmp, "enospc-history")
r = run([growth, "40", "20"], spied(out, LD_PRELOAD=preload(enospc), GPUSPY_INTERVAL="10ms",
                                    FAKE_ENOSPC_HISTORY="5:30"))
said = [l for l in ours(r.stderr) if "history" in l]
check(r.returncode == 0 and len(said) == 2 and "No space left on device" in said[0]
      and "whole again" in said[1], "history: a disk full for a while: two lines, the error "
      "and the recovery: %r" % said)
hist = glob.glob(os.path.join(out, "*", "history.jsonl"))
c = subprocess.run([cli, "report", "--format", "csv", out], capture_output=True, text=True)
check(c.returncode == 0 and not c.stderr, "history: whole again, read without a word: %r"
      % c.stderr)
lines = open(hist[0]).read().split("\n") if hist else [""]
check(lines[-1] == "", "history: no line cut short: %r" % lines[-1][:80])
times = [json.loads(l)["t"] for l in lines[:-1] if l.startswith('{"t"')]
gaps = [b - a for a, b in zip(times, times[1:])]
# 30 failed writes are 30 intervals or more: without the rewrite from
# memory the file would lack them, a gap of 31 intervals (310 ms) at
# least; with it, the widest gap is the snapshot thread's own lateness,
# which a loaded machine stretches (150 ms seen), never to 280 ms
check(len(times) > 40 and max(gaps) < 0.28,
      "history: the outage's samples written back, no gap (%d samples, the widest gap %.3f s)"
      % (len(times), max(gaps) if gaps else -1))
# under a file size limit the message names it, not a full disk
r = run([growth, "30", "20"], spied(os.path.join(tmp, "fsize-history"), GPUSPY_INTERVAL="10ms"),
        [(resource.RLIMIT_FSIZE, 2048)])
said = [l for l in ours(r.stderr) if "history" in l]
check(r.returncode == 0 and said and all("File too large" in l for l in said)
      and not any("No space left" in l for l in ours(r.stderr)),
      "RLIMIT_FSIZE: the history's line says File too large: %r" % said)

# 4. One line per problem, and none from processes that never allocate.
afile = os.path.join(tmp, "a-file")
open(afile, "w").close()
os.chmod(afile, 0o755)
r = run([growth, "15", "20"], spied(afile, GPUSPY_INTERVAL="10ms"))
check(r.returncode == 0 and len(ours(r.stderr)) == 1,
      "output directory is a file: one line: %r" % ours(r.stderr))
r = run(["true"], spied(afile, GPUSPY_INTERVAL="10ms"))
check(r.returncode == 0 and not r.stderr, "never allocates: nothing said: %r" % r.stderr)
top = os.path.join(tmp, "long")
deep = top + "/" + "/".join(["d" * 200] * 25)
r = run([growth, "15", "20"], spied(deep, GPUSPY_INTERVAL="10ms"))
check(r.returncode == 0 and len(ours(r.stderr)) == 1,
      "a path of %d characters: one line: %r" % (len(deep), ours(r.stderr)))
check(not os.path.exists(top), "a path too long is not cut: no directory made")

# 5. A shared run directory where someone planted our <host>-<pid>.
shared = os.path.join(tmp, "shared")
os.mkdir(shared)
os.chmod(shared, 0o1777)
victim = os.path.join(tmp, "victim-dir")
os.mkdir(victim, 0o700)
p = started([api_prog], spied(shared))
os.symlink(victim, os.path.join(shared, "%s-%d" % (host, p.pid)))
rc, err = go(p)
check(rc == 0 and not os.listdir(victim), "planted <host>-<pid> symlink: nothing written "
      "through it (%s)" % os.listdir(victim))
check(len(ours(err)) == 1, "planted <host>-<pid> symlink: one line: %r" % ours(err))
# ... or a directory of another user's
p = started([api_prog], spied(shared))
theirs = os.path.join(shared, "%s-%d" % (host, p.pid))
os.mkdir(theirs, 0o777)
os.chown(theirs, 65534, 65534)
rc, err = go(p)
check(rc == 0 and not os.listdir(theirs), "another user's <host>-<pid>: nothing written "
      "there (%s)" % os.listdir(theirs))
check(len(ours(err)) == 1, "another user's <host>-<pid>: one line: %r" % ours(err))

# A planted temporary file, umask 000.
vfile = os.path.join(tmp, "victim-file")
with open(vfile, "w") as f:
    f.write("root's\n")
os.chmod(vfile, 0o600)
run_dir = os.path.join(tmp, "umask0", "run")
os.makedirs(run_dir)
p = started([growth, "15", "20"], spied(run_dir, GPUSPY_INTERVAL="10ms"), umask=0)
pdir = os.path.join(run_dir, "%s-%d" % (host, p.pid))
os.mkdir(pdir, 0o700)
os.symlink(vfile, os.path.join(pdir, ".snapshot.json.tmp"))
rc, err = go(p)
check(open(vfile).read() == "root's\n", "planted .snapshot.json.tmp symlink: its target "
      "unchanged")
check(rc == 0 and len(ours(err)) == 1, "planted .snapshot.json.tmp: one line: %r" % ours(err))
check(os.path.exists(os.path.join(pdir, "report.json")), "... and the report written")

# umask 000: directories 0700, files 0600.
run_dir = os.path.join(tmp, "umask0", "fresh", "run")
r = run([growth, "5", "20"], spied(run_dir, GPUSPY_INTERVAL="10ms"), umask=0)
pdirs = glob.glob(os.path.join(run_dir, "*"))
check(r.returncode == 0 and len(pdirs) == 1, "umask 000: one process directory")
modes = {os.path.relpath(q, tmp): stat.S_IMODE(os.lstat(q).st_mode)
         for q in [os.path.join(tmp, "umask0", "fresh"), run_dir] + pdirs +
         glob.glob(os.path.join(pdirs[0] if pdirs else tmp, "*"))}
bad = {k: oct(v) for k, v in modes.items()
       if v != (0o700 if os.path.isdir(os.path.join(tmp, k)) else 0o600)}
check(len(modes) >= 6 and not bad, "umask 000: directories 0700, files 0600: %s"
      % (bad or sorted(modes)))

# 6. gpuspy snapshot, with a .request symlink planted in the process's
# directory: the link's target is not written.
run_dir = os.path.join(tmp, "request")
p = subprocess.Popen([growth, "100", "20"], env=spied(run_dir, GPUSPY_INTERVAL="0"),
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
pdir = os.path.join(run_dir, "%s-%d" % (host, p.pid))
wait_handler(p.pid, pdir)
os.symlink(vfile, os.path.join(pdir, ".request"))
s = subprocess.run([cli, "snapshot", str(p.pid), "hello"], capture_output=True, text=True,
                   timeout=30)
p.kill()
p.wait()
check(open(vfile).read() == "root's\n", "planted .request symlink: its target unchanged")
check(s.returncode == 0 and s.stdout.strip().endswith("snapshot-1.json"),
      "gpuspy snapshot still works: %d %r %r" % (s.returncode, s.stdout, s.stderr))
req = os.path.join(pdir, ".request")
check(not os.path.lexists(req), ".request taken and removed")

# The library's side of .request: a planted link is not read through (the
# label is not the target's contents) and only the link is removed.
run_dir = os.path.join(tmp, "request-lib")
p = subprocess.Popen([growth, "100", "20"], env=spied(run_dir, GPUSPY_INTERVAL="0"),
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
pdir = os.path.join(run_dir, "%s-%d" % (host, p.pid))
wait_handler(p.pid, pdir)
os.symlink(vfile, os.path.join(pdir, ".request"))
os.kill(p.pid, signal.SIGUSR2)
snap = os.path.join(pdir, "snapshot-1.json")
harness.wait_file(snap, timeout=5, proc=p)
p.kill()
p.wait()
label = json.load(open(snap)).get("snapshot", {}).get("label") if os.path.exists(snap) else None
check(label == "signal", "a planted .request link is not read: label %r" % label)
check(open(vfile).read() == "root's\n" and not os.path.lexists(os.path.join(pdir, ".request")),
      "... the link removed, its target kept")

sys.exit(harness.done())
