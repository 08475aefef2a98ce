#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Site keys hold names, never addresses: two builds of one program, the
second with code inserted before the leaking functions (every address
moves), must give identical site keys.

    stable_key.py --lib LIBGPUSPY --cli GPUSPY --fake-dir DIR PLAIN SHIFTED

PLAIN and SHIFTED are the two builds of stable_key.c, with the same file
name.  Each runs with LD_PRELOAD=LIBGPUSPY against the fake CUDA libraries
in DIR, and 'GPUSPY report --format json' reads what it wrote.  The sets of
keys must be equal and not empty, and the frames of the leaking functions
must lie at other offsets in the two builds (else the test proves nothing).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

SIZE = 3 << 20
LEAKERS = ("leak_stable_runtime", "leak_stable_driver")


def run_one(args, program, out):
    old = os.environ.get("LD_LIBRARY_PATH")
    env = harness.clean_env(args.fake_dir + (":" + old if old else ""),
                            LD_PRELOAD=harness.preload(args.lib), GPUSPY_OUTPUT_DIR=out)
    p = subprocess.run([program, str(SIZE)], env=env, capture_output=True, timeout=60)
    if p.returncode != 0:
        sys.exit("%s: status %d, stderr %r" % (program, p.returncode, p.stderr))
    p = subprocess.run([args.cli, "report", "--format", "json", out], capture_output=True,
                       timeout=60)
    if p.returncode != 0 or p.stderr:
        sys.exit("gpuspy report %s: status %d, stderr %r" % (out, p.returncode, p.stderr))
    return json.loads(p.stdout)


def fnv1a64(text):
    h = 0xcbf29ce484222325
    for b in text.encode():
        h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
    return "%016x" % h


def key_text(site):
    """The text a site's key digests: its api, then its frames that are
    not noise, as docs/format.md says."""
    parts = []
    for f in site["frames"]:
        if f.get("noise"):
            continue
        if f["kind"] == "python":
            parts.append("%s!%s" % (os.path.basename(f.get("file", "?")), f.get("function", "?")))
        elif "function" in f:
            parts.append("%s!%s" % (f.get("module", "?"), f["function"]))
        else:
            parts.append("%s+0x%x" % (f.get("module", "?"), f["offset"]))
    return site["api"] + "|" + ";".join(parts)


def leaker_offsets(report):
    """{(key, function): offset} of the leaking functions' frames."""
    found = {}
    for site in report["sites"]:
        for f in site["frames"]:
            if f.get("function") in LEAKERS:
                found[(site["key"], f["function"])] = f["offset"]
    return found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--cli", required=True)
    ap.add_argument("--fake-dir", required=True)
    ap.add_argument("plain")
    ap.add_argument("shifted")
    args = ap.parse_args()
    for name in ("lib", "cli", "fake_dir", "plain", "shifted"):
        setattr(args, name, os.path.abspath(getattr(args, name)))
    if os.path.basename(args.plain) != os.path.basename(args.shifted):
        sys.exit("the two builds must have the same file name")

    with tempfile.TemporaryDirectory(prefix="gpuspy-stable-") as tmp:
        reports = [run_one(args, prog, os.path.join(tmp, tag))
                   for prog, tag in ((args.plain, "plain"), (args.shifted, "shifted"))]
    keys = [sorted(s["key"] for s in r["sites"]) for r in reports]
    for tag, k in zip(("plain", "shifted"), keys):
        print("%s build keys:\n  %s" % (tag, "\n  ".join(k)))
    check(len(keys[0]) > 0, "the plain build has call sites")
    check(keys[0] == keys[1], "both builds give the same site keys")
    # the keys are digests of texts that name the functions
    # (docs/format.md): symbolization, not luck, made them equal
    texts = {s["key"]: key_text(s) for s in reports[0]["sites"]}
    check(all(fnv1a64(t) == k for k, t in texts.items()),
          "each key is the digest of its text (api, then module!function)")
    for fn in LEAKERS:
        check(any("!%s;" % fn in t or t.endswith("!" + fn) for t in texts.values()),
              "a key's text names %s" % fn)

    offsets = [leaker_offsets(r) for r in reports]
    check(len(offsets[0]) == len(LEAKERS) and offsets[0].keys() == offsets[1].keys(),
          "both builds have a frame in each leaking function")
    moved = [k for k in offsets[0] if k in offsets[1] and offsets[0][k] != offsets[1][k]]
    for key, fn in sorted(moved):
        print("  %s: offset %#x -> %#x" % (fn, offsets[0][(key, fn)], offsets[1][(key, fn)]))
    check(len(moved) > 0 and len(moved) == len(offsets[0]),
          "every leaking function's frame lies at another offset in the shifted build")
    return harness.done()


if __name__ == "__main__":
    sys.exit(main())
