# SPDX-License-Identifier: MIT
"""What the Python tests share: checks and their tally, the environment
and the running of gpuspy and of the programs under test, temporary and
run directories, and waiting on what the library writes (a snapshot's
sample count, a file) instead of on the clock.

A test under tests/DIR/ finds it beside its directory:

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import harness  # noqa: E402
    from harness import check  # noqa: E402

and ends with sys.exit(harness.done()): the tally, and exit status 1
when a check failed (77, skipped, when it says so), else 0.
"""
import atexit
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

_checks = 0
_failed = []


def check(cond, what, detail=""):
    """One check: "ok   WHAT", or "FAIL WHAT" with DETAIL (when given)
    under it.  Counted for done(); returns whether it held."""
    global _checks
    _checks += 1
    ok = bool(cond)
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        _failed.append(what)
        if detail is not None and detail != "":
            text = detail if isinstance(detail, str) else repr(detail)
            print("     " + text[:4000].replace("\n", "\n     "), flush=True)
    return ok


def same(what, want, have):
    """A check that two sets are equal, saying what is missing and extra."""
    return check(want == have, what,
                 f"missing {sorted(want - have)}, extra {sorted(have - want)}")


def failed():
    """The number of checks that failed so far."""
    return len(_failed)


def done(skipped=False):
    """The tally ("N checks, K failed", and those that failed); the exit
    status: 1 when a check failed; else 77 (skipped) when SKIPPED, 0."""
    print(f"{_checks} checks, {len(_failed)} failed", flush=True)
    for what in _failed:
        print("  failed: " + what)
    if _failed:
        return 1
    return 77 if skipped else 0


def skip(why):
    """Ends a test that cannot run here: the reason, exit status 77."""
    print("skip: " + why, flush=True)
    sys.exit(77)


# --- the environment -----------------------------------------------------

def preload(lib):
    """LD_PRELOAD's value for LIB: a sanitizer's runtime must come first
    (scripts/sanitize sets SANITIZER_PRELOAD)."""
    return ":".join(filter(None, (os.environ.get("SANITIZER_PRELOAD"), lib)))


def clean_env(fake=None, **settings):
    """This process's environment without any GPUSPY_* (the user's own
    settings must not reach a test), LD_LIBRARY_PATH=FAKE (the fake
    driver and runtime) when FAKE is given, then SETTINGS (None: unset)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUSPY_")}
    if fake is not None:
        env["LD_LIBRARY_PATH"] = fake
    for k, v in settings.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = str(v)
    return env


# --- running -------------------------------------------------------------

def run(cmd, env=None, cwd=None, timeout=60, text=True, **kw):
    """CMD run to its end with its output captured (TEXT: as str, else
    bytes): its subprocess.CompletedProcess."""
    return subprocess.run(list(cmd), env=env, cwd=cwd, timeout=timeout, text=text,
                          capture_output=True, **kw)


class Cli:
    """gpuspy at PATH (then ARGS: a command, its first options), run as
    run() runs a command, with these defaults:

        gpuspy = harness.Cli(path, env=env)
        gpuspy("report", "--format", "json", d)
        report = harness.Cli(path, "report", cwd=fixtures, text=False)
        report(d, cwd=other)
    """

    def __init__(self, path, *args, env=None, cwd=None, timeout=60, text=True):
        self.argv = [path, *args]
        self.defaults = dict(env=env, cwd=cwd, timeout=timeout, text=text)

    def __call__(self, *args, **kw):
        return run([*self.argv, *args], **dict(self.defaults, **kw))

    def json(self, *args, **kw):
        """The JSON document the command printed, or None (said as a
        failed check) when it failed or printed something else."""
        p = self(*args, **kw)
        try:
            return json.loads(p.stdout)
        except ValueError:
            check(False, "gpuspy " + " ".join(map(str, args)) + ": a JSON document",
                  (p.returncode, p.stdout[:500], p.stderr[:500]))
            return None


# --- directories ---------------------------------------------------------

_root = None


def _remove_root():
    if _root is None:
        return
    if _failed or os.environ.get("GPUSPY_TEST_KEEP"):
        print("kept for a look: " + _root)
        return
    shutil.rmtree(_root, ignore_errors=True)


def tempdir(name=None):
    """A new directory for this test, under one of its own that is
    removed at exit (kept, and named, when a check failed or with
    GPUSPY_TEST_KEEP=1).  NAME: its name there (else a fresh one)."""
    global _root
    if _root is None:
        _root = tempfile.mkdtemp(prefix="gpuspy-test-")
        # each directory under it is the test's own (0700); the root only
        # lets a test that runs a command as another user reach one
        os.chmod(_root, 0o755)
        atexit.register(_remove_root)
    if name is None:
        return tempfile.mkdtemp(dir=_root)
    path = os.path.join(_root, name)
    os.makedirs(path)
    return path


def write_json(path, doc):
    """DOC as JSON at PATH, its directory made when missing, as the
    library writes: a temporary file renamed into place (a reader sees
    the old document or the new one).  PATH."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path + ".tmp", "w") as f:
        json.dump(doc, f)
    os.rename(path + ".tmp", path)
    return path


def process_dir(root, doc=None, name="report.json", host="node", pid=4242):
    """ROOT/HOST-PID, the directory of a process as the library names it,
    made when missing; DOC (when given) written in it as NAME: JSON, or
    bytes or str as they are.  The directory."""
    d = os.path.join(root, f"{host}-{pid}")
    os.makedirs(d, exist_ok=True)
    if doc is not None:
        mode = "wb" if isinstance(doc, bytes) else "w"
        with open(os.path.join(d, name), mode) as f:
            if isinstance(doc, (bytes, str)):
                f.write(doc)
            else:
                json.dump(doc, f)
    return d


# the files the library writes in a process directory
_PROCESS_FILES = ("snapshot.json", "report.json", "history.jsonl", "report.txt", "torch.json",
                  "prometheus", "snapshot-[0-9]*.json", "oom-[0-9]*.json")


def process_dirs(where):
    """The process directories under WHERE that hold a file of the
    library's, sorted: WHERE itself, one of its directories (a run
    directory), or one of theirs (an output directory holds runs)."""
    found = set()
    for depth in ("", "*", os.path.join("*", "*")):
        for name in _PROCESS_FILES:
            for f in glob.glob(os.path.join(where, depth, name)):
                found.add(os.path.dirname(f))
    return sorted(found)


# --- waiting on the library ---------------------------------------------

def wait_for(what, timeout=30, proc=None, every=0.05):
    """WHAT() asked again and again until it gives something true: that.
    None after TIMEOUT seconds, or once PROC (a Popen) has ended without
    WHAT holding.  Asked at once, then more and more seldom, at most
    EVERY seconds apart (a server asked over HTTP: more).  The one place
    where a test waits by polling: a test waits for what it needs to see,
    never for a length of time."""
    end = time.monotonic() + timeout
    pause = min(0.002, every)
    while True:
        v = what()
        if v:
            return v
        if proc is not None and proc.poll() is not None:
            return what() or None
        if time.monotonic() >= end:
            return None
        time.sleep(pause)
        pause = min(pause * 2, every)


def read_json(path):
    """The JSON document at PATH; None when it is not there (yet), or not
    whole."""
    try:
        with open(path, "rb") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def read_text(path):
    """The text of the file at PATH, or None when it is not there."""
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return None


def samples(doc):
    """The sample count of a snapshot.json document ("snapshot":
    {"samples": N}): the number of the snapshot thread's samples before
    it was written; 0 for None or a document without it."""
    try:
        return int(doc["snapshot"]["samples"])
    except (TypeError, KeyError, ValueError):
        return 0


def snapshot(proc_dir):
    """PROC_DIR's snapshot.json as it is now, or None."""
    return read_json(os.path.join(proc_dir, "snapshot.json"))


def wait_snapshot(where, pred=None, after=0, timeout=30, proc=None, every=0.05):
    """The snapshot.json the library writes while it runs, waited for:
    the first of WHERE's process directories (process_dirs) whose
    snapshot has more than AFTER samples (a sample count seen before: a
    snapshot taken since) and that PRED(doc) accepts.  (its directory,
    its document), or None after TIMEOUT, or once PROC has ended (EVERY:
    as for wait_for)."""
    def found():
        for d in process_dirs(where):
            doc = snapshot(d)
            if doc is not None and samples(doc) > after and (pred is None or pred(doc)):
                return d, doc
        return None
    return wait_for(found, timeout, proc, every)


def wait_file(path, pred=None, timeout=30, proc=None, every=0.05):
    """The text of the file at PATH (a glob pattern: of the first match)
    once it is there and PRED(text) accepts it; None after TIMEOUT, or
    once PROC has ended (EVERY: as for wait_for)."""
    def found():
        for p in sorted(glob.glob(path)):
            text = read_text(p)
            if text is not None and (pred is None or pred(text)):
                return text
        return None
    return wait_for(found, timeout, proc, every)


def history_lines(proc_dir):
    """The whole lines of PROC_DIR's history.jsonl now (parsed; a last
    line still being written left out); [] when there is none."""
    text = read_text(os.path.join(proc_dir, "history.jsonl")) or ""
    out = []
    for line in text.split("\n")[:-1]:
        try:
            out.append(json.loads(line))
        except ValueError:
            pass
    return out
