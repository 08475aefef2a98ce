"""Checks of scripts/gpu-check's fw-ledger case: for each framework, the
ledger of `gpuspy report --format json` on the snapshot taken while the
program idled (DIR/FW.report.json) against what the framework printed at
that moment (DIR/FW/figures.json): the framework's allocated and reserved
bytes equal, and the ledger's lines (framework reserved + tracked outside
the pools + graph pool + CUDA context and libraries) within 1% of NVML's
figure for the process as nvidia-smi printed it (the ledger's own NVML
figure where nvidia-smi lists no process); and the ledger's context line
against the same memory measured in a process of its own without gpuspy
(DIR/FW.context.json, fw_context.py), within 1% of NVML's figure.  Prints one PASS or FAIL line
per check, then the ledger.
Usage: fw_ledger_check.py DIR"""
import json
import os
import sys

d = sys.argv[1]
MIB = 1 << 20
failed = 0


def say(ok, what):
    global failed
    failed += not ok
    print(("PASS " if ok else "FAIL ") + what)


for fw in ("torch", "jax", "cupy"):
    try:
        fig = json.load(open(os.path.join(d, fw, "figures.json")))
        rep = json.load(open(os.path.join(d, fw + ".report.json")))
    except (OSError, ValueError) as e:
        say(False, f"fw-ledger {fw}: no evidence ({e})")
        continue
    ledger = rep["processes"][0].get("ledger", [])
    dev = next((x for x in ledger if x["device"] == fig["device"]), {})
    mine = dev.get("frameworks", {}).get(fig["name"], {})
    say(mine.get("allocated_bytes") == fig["allocated"],
        f"fw-ledger {fw}: framework allocated {mine.get('allocated_bytes')} = "
        f"{fig['allocated']} printed by {fig['name']}")
    say(mine.get("reserved_bytes") == fig["reserved"],
        f"fw-ledger {fw}: framework reserved {mine.get('reserved_bytes')} = "
        f"{fig['reserved']} printed by {fig['name']}")
    nvml = fig.get("nvidia_smi_bytes") or dev.get("nvml_process_bytes")
    lines = (dev.get("framework_reserved_bytes", 0) + dev.get("tracked_outside_pools_bytes", 0)
             + dev.get("graph_pool_bytes", 0) + dev.get("context_bytes", 0))
    say(bool(nvml) and "context_bytes" in dev and abs(lines - nvml) <= 0.01 * nvml,
        f"fw-ledger {fw}: the ledger's lines add up to {lines} against NVML's {nvml} "
        f"({'nvidia-smi' if fig.get('nvidia_smi_bytes') else 'the snapshot'}; "
        f"{100 * (lines - nvml) / nvml if nvml else 0:+.2f}%)")
    say(dev.get("context_bytes", -1) >= 0 and dev.get("untracked_bytes", 0) == 0,
        f"fw-ledger {fw}: context {dev.get('context_bytes')} >= 0, untracked "
        f"{dev.get('untracked_bytes')} = 0 (no door missed)")
    # the context line is what is left of NVML's figure: measured apart,
    # in a process without gpuspy that starts the same framework's CUDA
    # and allocates one byte (fw_context.py), it must be the same memory
    try:
        bare = json.load(open(os.path.join(d, fw + ".context.json")))
    except (OSError, ValueError):
        bare = {}
    ctx, ref = dev.get("context_bytes"), bare.get("context_bytes")
    if ref is not None and ctx is not None and nvml:
        say(abs(ctx - ref) <= 0.01 * nvml,
            f"fw-ledger {fw}: the context line {ctx} against {ref} measured apart "
            f"(no gpuspy, one byte allocated): {(ctx - ref) / MIB:+.1f} MiB, "
            f"{100 * (ctx - ref) / nvml:+.2f}% of NVML's figure, "
            f"{100 * (ctx - ref) / ref:+.1f}% of the context")
    else:
        say(False, f"fw-ledger {fw}: no context measured apart ({bare})")
    print("  ledger:", json.dumps(dev))
print(f"fw-ledger: {failed} failed")
