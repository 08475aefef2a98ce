#!/usr/bin/env python3
"""Turn a scripts/gpu-check output folder into the Markdown table of
docs/gpu-results.md.  Reads only report.json files (format
gpuspy-process/1), the FRAMEWORK lines the check scripts print, and
compute-sanitizer's LEAK SUMMARY."""
import json, os, re, sys

MiB = 1 << 20


def reports(case_dir):
    run = os.path.join(case_dir, "run")
    out = []
    if os.path.isdir(run):
        for d in sorted(os.listdir(run)):
            p = os.path.join(run, d, "report.json")
            if os.path.exists(p):
                with open(p) as f:
                    out.append(json.load(f))
    return out


def framework_view(case_dir):
    try:
        for line in open(os.path.join(case_dir, "gpuspy.stdout")):
            if line.startswith("FRAMEWORK "):
                return json.loads(line[len("FRAMEWORK "):])
    except OSError:
        pass
    return {}


def sanitizer(case_dir):
    try:
        text = open(os.path.join(case_dir, "sanitizer.txt")).read()
    except OSError:
        return None
    m = re.search(r"LEAK SUMMARY: (\d+) bytes leaked in (\d+) allocations", text)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def fmt(b):
    return "—" if b is None else f"{b / MiB:.1f} MiB"


def main(top):
    rows = []
    for case in sorted(os.listdir(top)):
        d = os.path.join(top, case)
        if not os.path.isdir(d) or not os.path.exists(os.path.join(d, "gpuspy.status")):
            continue
        reps = reports(d)
        same = (open(os.path.join(d, "plain.status")).read() == open(os.path.join(d, "gpuspy.status")).read())
        # The main process is the one that allocated most (JAX starts helpers).
        main_rep = max(reps, key=lambda r: r["kinds"]["device"]["allocations"] + r["kinds"]["vmm"]["allocations"] + r["kinds"]["managed"]["allocations"], default=None)
        doors = {k: v for k, v in (main_rep or {}).get("doors", {}).items() if v}
        apis = sorted({s["api"] for s in (main_rep or {}).get("sites", [])})
        fw = framework_view(d)
        san = sanitizer(d)
        row = {
            "case": case,
            "status": "same" if same else "DIFFERENT",
            "processes": len(reps),
            "doors": ", ".join(f"{k} {v}" for k, v in doors.items()) or "—",
            "apis": ", ".join(apis) or "—",
            "leaked": (main_rep or {}).get("leaked"),
            "peak": (main_rep or {}).get("peak", {}).get("bytes"),
            "vmm_reserved": (main_rep or {}).get("vmm_address_space", {}).get("reserved_bytes"),
            "untracked": (main_rep or {}).get("untracked_frees"),
            "framework": fw,
            "sanitizer": san,
        }
        rows.append(row)

    print("| case | exit status | doors (allocations) | APIs seen | gpuspy leaked at exit | compute-sanitizer leak | gpuspy peak | framework's own view | untracked frees |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        lk = r["leaked"]
        leaked = f"{lk['bytes']} B in {lk['allocations']}" if lk else "—"
        san = f"{r['sanitizer'][0]} B in {r['sanitizer'][1]}" if r["sanitizer"] else "—"
        fw = r["framework"]
        view = ", ".join(f"{k} {fmt(v) if isinstance(v, int) else v}" for k, v in fw.items() if k != "mode") or "—"
        print(f"| {r['case']} | {r['status']} | {r['doors']} | {r['apis']} | {leaked} | {san} | {fmt(r['peak'])} | {view} | {r['untracked']} |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "gpu-check-out")
