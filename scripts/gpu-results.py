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


def leak_line(script):
    try:
        for i, l in enumerate(open(script), 1):
            if l.rstrip().endswith("# LEAK"):
                return i
    except OSError:
        pass
    return None


USER_SKIP = ("/site-packages/", "/dist-packages/", "<frozen")


def top_site(case_dir, rep, by="leaked_bytes"):
    """The top site's (by leaked or peak bytes, library memory left out)
    first frame a person would look at: from the CLI's symbolized report
    when there is one, else from the process report's own Python frames."""
    cli = os.path.join(case_dir, "report.json")
    if os.path.exists(cli):
        try:
            j = json.load(open(cli))
            sites = sorted((s for s in j["sites"] if not s.get("library") and s[by] > 0),
                           key=lambda s: -s[by])
            if sites:
                h = sites[0].get("headline") or {}
                where = f"{os.path.basename(h.get('file', h.get('module', '?')))}:{h.get('line', '?')}"
                return f"{h.get('function', '?')} ({where})", h
        except (OSError, ValueError, KeyError):
            pass
    if rep:
        for s in sorted(rep["sites"], key=lambda s: -s["live_bytes"]):
            for f in s.get("python", []):
                if not any(k in f["file"] for k in USER_SKIP) and "/lib/python3." not in f["file"]:
                    return f"{f['function']} ({os.path.basename(f['file'])}:{f['line']})", f
    return "—", {}


def growing_site(case_dir):
    """The growing site (not library memory) with the most live bytes."""
    try:
        j = json.load(open(os.path.join(case_dir, "report.json")))
    except (OSError, ValueError):
        return "—", {}
    sites = sorted((s for s in j["sites"] if s.get("growing") and not s.get("library")),
                   key=lambda s: -s["leaked_bytes"])
    if not sites:
        return "none", {}
    h = sites[0].get("headline") or {}
    where = f"{os.path.basename(h.get('file', h.get('module', '?')))}:{h.get('line', '?')}"
    return f"{h.get('function', '?')} ({where})", h


def torch_view(case_dir):
    """The PyTorch view's top line (live at exit), and whether it grew."""
    try:
        j = json.load(open(os.path.join(case_dir, "report.json")))
    except (OSError, ValueError):
        return "—", {}
    t = j.get("torch")
    if not t:
        return "off", {}
    sites = [s for s in t["sites"] if s["live_bytes"] > 0 or s["growing"]]
    if not sites:
        return "none", {}
    s = sites[0]
    h = s.get("headline") or {}
    grow = ", growing" if s["growing"] else ""
    return (f"{fmt(s['live_bytes'])} in {s['live_blocks']}{grow}: {h.get('function', '?')} "
            f"({os.path.basename(h.get('file', '?'))}:{h.get('line', '?')})"), h


def unwinder_rows(top):
    rows = []
    for case in sorted(os.listdir(top)):
        if not case.startswith("unwind-"):
            continue
        d = os.path.join(top, case)
        _, unw, prog = case.split("-", 2)
        reps = reports(d)
        rep = max(reps, key=lambda r: len(r["sites"]), default=None)
        if not rep:
            continue
        mods = rep["modules"]
        exe = rep.get("exe", "")
        depths, reach = [], 0
        for s in rep["sites"]:
            depths.append(len(s["frames"]))
            names = [os.path.basename(mods[f["module"]]["path"]) if f["module"] >= 0 else "" for f in s["frames"]]
            paths = [mods[f["module"]]["path"] if f["module"] >= 0 else "" for f in s["frames"]]
            if any(p == exe or n.startswith("libpython") for p, n in zip(paths, names)):
                reach += 1
        try:
            t0, t1 = map(float, open(os.path.join(d, "wall.txt")).read().split())
            wall = f"{t1 - t0:.1f} s"
        except (OSError, ValueError):
            wall = "—"
        rows.append((prog, unw, len(rep["sites"]), sum(depths) / max(len(depths), 1),
                     100.0 * reach / max(len(depths), 1), wall))
    if rows:
        print()
        print("| program | unwinder | sites | mean native frames per site (cap 16) | sites reaching the program or interpreter | wall time |")
        print("|---|---|---|---|---|---|")
        for r in rows:
            print(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]:.1f} | {r[4]:.0f}% | {r[5]} |")


def main(top):
    rows = []
    for case in sorted(os.listdir(top)):
        d = os.path.join(top, case)
        if (not os.path.isdir(d) or case.startswith("unwind-") or
                not os.path.exists(os.path.join(d, "plain.status"))):
            continue
        reps = reports(d)
        same = (open(os.path.join(d, "plain.status")).read() == open(os.path.join(d, "gpuspy.status")).read())
        # The main process is the one that allocated most (JAX starts helpers).
        main_rep = max(reps, key=lambda r: r["kinds"]["device"]["allocations"] + r["kinds"]["vmm"]["allocations"] + r["kinds"]["managed"]["allocations"], default=None)
        doors = {k: v for k, v in (main_rep or {}).get("doors", {}).items() if v}
        apis = sorted({s["api"] for s in (main_rep or {}).get("sites", [])})
        fw = framework_view(d)
        san = sanitizer(d)
        where, frame = top_site(d, main_rep)
        pwhere, pframe = top_site(d, main_rep, "peak_bytes")
        gwhere, gframe = growing_site(d)
        twhere, tframe = torch_view(d)
        script = {"torch-leak": "tests/gpu/torch_leak.py", "cupy": "tests/gpu/cupy_check.py",
                  "jax": "tests/gpu/jax_check.py"}
        expect = next((leak_line(v) for k, v in script.items() if case.startswith(k)), None)
        def verdict(fr):
            if case.startswith("jax"):
                # JAX allocates its pool at the first operation, not at
                # the marked line: any line of the script is right.
                return os.path.basename(str(fr.get("file", ""))) == "jax_check.py"
            if expect:
                return fr.get("line") == expect
            if case.startswith("cuda"):
                return str(fr.get("function", "")).split("(")[0] in ("leak_buffers", "leak_one_more")
            return None

        def mark(ok):
            return "" if ok is None else (" ✓" if ok else " ✗")
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
            "top": where + mark(verdict(frame)),
            # A CUDA C program's peak is its balanced work, not a leak.
            "ptop": pwhere + ("" if case.startswith("cuda") else mark(verdict(pframe))),
            "gtop": gwhere + (mark(verdict(gframe)) if gframe else ""),
            "torch": twhere + (mark(verdict(tframe)) if tframe else ""),
        }
        rows.append(row)

    print("| case | exit status | doors (allocations) | APIs seen | gpuspy leaked at exit | compute-sanitizer leak | gpuspy peak | framework's own view | untracked frees | top leaked site | top peak site | top growing site | PyTorch view: top line |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        lk = r["leaked"]
        leaked = f"{lk['bytes']} B in {lk['allocations']}" if lk else "—"
        san = f"{r['sanitizer'][0]} B in {r['sanitizer'][1]}" if r["sanitizer"] else "—"
        fw = r["framework"]
        view = ", ".join(f"{k} {fmt(v) if isinstance(v, int) else v}" for k, v in fw.items() if k != "mode") or "—"
        print(f"| {r['case']} | {r['status']} | {r['doors']} | {r['apis']} | {leaked} | {san} | {fmt(r['peak'])} | {view} | {r['untracked']} | {r['top']} | {r['ptop']} | {r['gtop']} | {r['torch']} |")
    unwinder_rows(top)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "gpu-check-out")
