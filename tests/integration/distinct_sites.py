#!/usr/bin/env python3
"""The cap on distinct call sites (GPUSPY_MAX_DISTINCT_SITES, libgpuspy(7)):
tests/integration/soak.c makes 5,000 allocations from as many distinct
stacks.  With a cap of 1,000: the report holds 1,000 sites with their
stacks and one without a stack for the device memory of every later stack,
one line on stderr says so, every count is exact (kinds.device as the
program counted, and summed over the sites), and the memory gpuspy took
for the sites is less than without a cap; with no cap (0), 5,000 sites.
Usage: distinct_sites.py LIBGPUSPY FAKE_DIR SOAK"""
import glob, json, os, subprocess, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

lib, fake, soak = sys.argv[1:4]
lib = harness.preload(lib)
base = harness.clean_env(fake, LD_PRELOAD=lib, GPUSPY_QUIET="1")
base.update(kv.split("=", 1) for kv in os.environ.get("SANITIZER_GPUSPY", "").split() if "=" in kv)
N, CAP = 5000, 1000


def run(cap):
    out = harness.tempdir()
    r = subprocess.run([soak, "sites", str(N), "50"],
                       env=dict(base, GPUSPY_OUTPUT_DIR=out, GPUSPY_MAX_DISTINCT_SITES=str(cap)),
                       capture_output=True, text=True, timeout=120)
    want = {}
    for line in r.stdout.splitlines():
        want.update(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)
    rep = glob.glob(os.path.join(out, "*", "report.json"))
    return r, want, json.load(open(rep[0])) if rep else None


r, want, rep = run(CAP)
check(r.returncode == 0 and rep is not None, "capped: the program ran, its report written",
      r.stderr)
said = [l for l in r.stderr.splitlines() if "GPUSPY_MAX_DISTINCT_SITES" in l]
check(len(said) == 1 and "1000 distinct call sites" in said[0],
      "capped: one line says the cap was reached", r.stderr)
if rep:
    dev = rep["kinds"]["device"]
    stackless = [s for s in rep["sites"] if not s["frames"]]
    check(len(rep["sites"]) == CAP + 1 and not rep.get("folded") and len(stackless) == 1,
          f"capped: {CAP} sites with a stack and one without ({len(rep['sites'])} sites, "
          f"{len(stackless)} without a stack)")
    for key in ("allocations", "frees", "allocated_bytes", "freed_bytes", "live_bytes"):
        check(dev[key] == int(want[key]) and sum(s[key] for s in rep["sites"]) == dev[key],
              f"capped: {key} exact ({dev[key]}, the program's {want[key]}, the sites' sum)")
    check(stackless and stackless[0]["allocations"] >= N - CAP,
          "capped: the stacks past the cap counted in the site without a stack",
          stackless and stackless[0]["allocations"])
capped_kb = int(want.get("rss_after_kb", 0)) - int(want.get("rss_before_kb", 0))
r, want, rep = run(0)
# the file lists at most GPUSPY_MAX_SITES of them and sums the rest
kept = len(rep["sites"]) + sum(f["sites"] for f in rep.get("folded", [])) if rep else 0
check(r.returncode == 0 and kept == N
      and not [l for l in r.stderr.splitlines() if "GPUSPY_MAX_DISTINCT_SITES" in l],
      f"no cap: {N} sites (listed and folded), nothing said", (kept, r.stderr))
free_kb = int(want.get("rss_after_kb", 0)) - int(want.get("rss_before_kb", 0))
check(0 < capped_kb < free_kb, f"the sites' memory: {capped_kb} KiB capped, {free_kb} KiB not")
sys.exit(harness.done())
