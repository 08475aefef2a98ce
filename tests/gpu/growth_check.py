"""Memory over time on the GPU (scripts/gpu-check, section 9): for each
case, whether gpuspy flagged the line marked LEAK as growing, in its own
call sites and in the PyTorch view, whether it said so on stderr while the
program still ran (the notice before the program's last line in the
merged log), and, for the cases without a leak, that nothing was flagged.
Prints one PASS/FAIL line per point and a table.

  growth_check.py OUTDIR"""
import json
import os
import re
import sys

out = sys.argv[1]
cases = {
    # case: (program, its last line's prefix, leak expected)
    "epoch-default": ("torch_epoch.py", "torch_epoch:", True),
    "epoch-expandable": ("torch_epoch.py", "torch_epoch:", True),
    "epoch-nocache": ("torch_epoch.py", "torch_epoch:", True),
    "epoch-noleak": ("torch_epoch.py", "torch_epoch:", False),
    "hf-leak": ("hf_leak.py", "hf_leak:", True),
    "hf-noleak": ("hf_leak.py", "hf_leak:", False),
}
failed = 0


def check(ok, what):
    global failed
    failed += not ok
    print(("PASS " if ok else "FAIL ") + what)


def leak_line(program):
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), program)
    for n, text in enumerate(open(src), 1):
        if "# LEAK" in text:
            return n
    return None


def names_line(frames, program, line):
    return any(f.get("file", "").endswith(program) and f.get("line") == line
               for f in frames or ())


rows = []
for case, (program, last, leak) in cases.items():
    d = os.path.join(out, case)
    if not os.path.isdir(d):
        continue
    line = leak_line(program)
    log = open(os.path.join(d, "both.log"), errors="replace").read().splitlines()
    status = open(os.path.join(d, "gpuspy.status")).read().strip()
    notices = [(i, l) for i, l in enumerate(log) if l.startswith("gpuspy:") and "growing" in l]
    end = next((i for i, l in enumerate(log) if l.startswith(last)), len(log))
    said = [l for i, l in notices if i < end and f"{program}:{line}" in l]
    try:
        rep = json.load(open(os.path.join(d, "report.json")))
    except (OSError, ValueError):
        rep = {}
    sites = [s for s in rep.get("sites", ()) if s.get("growing")]
    torch = [s for s in (rep.get("torch") or {}).get("sites", ()) if s.get("growing")]
    site_ok = any(names_line(s.get("frames"), program, line) for s in sites)
    torch_ok = any(names_line(s.get("frames"), program, line) for s in torch)
    check(status == "0", f"{case}: exit status {status}")
    if leak:
        check(site_ok or torch_ok, f"{case}: {program}:{line} flagged growing "
              f"(sites {site_ok}, PyTorch view {torch_ok})")
        check(bool(said), f"{case}: named on stderr while it ran: "
              f"{said[0] if said else (notices[0][1] if notices else 'no notice')}")
    else:
        check(not sites and not torch and not notices,
              f"{case}: nothing flagged ({len(sites)} sites, {len(torch)} lines, "
              f"{len(notices)} notices)")
    samples = None
    tj = [os.path.join(r, "torch.json") for r, _, f in os.walk(os.path.join(d, "run"))
          if "torch.json" in f]
    if tj:
        try:
            samples = json.load(open(tj[0])).get("samples")
        except ValueError:
            pass
    rows.append((case, status, len(sites), len(torch), said[0] if said else "-", samples))

print()
print("| case | status | growing sites | growing PyTorch-view lines | notice while running | view samples |")
print("|---|---|---|---|---|---|")
for r in rows:
    print("| %s | %s | %d | %d | %s | %s |" % (r[0], r[1], r[2], r[3], re.sub(r"\|", "/", r[4]), r[5]))
print(f"\n{failed} failed")
sys.exit(1 if failed else 0)
