"""A leaking line and a temporary line in one function (CuPy): the report
keeps both lines of the site, each with its own figures.
  python3 cupy_lines.py STEPS [nopool|same]
nopool: CuPy's memory pool off (every array is a cudaMalloc); same: both
lines through cupy.zeros, so that their stacks differ only in the line."""
import sys
import cupy as cp

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 30
if len(sys.argv) > 2 and sys.argv[2] == "nopool":
    cp.cuda.set_allocator(None)
same = len(sys.argv) > 2 and sys.argv[2] == "same"
keep = []


def step(i):
    keep.append(cp.zeros(8 << 20, dtype=cp.uint8))  # LEAK: 8 MiB kept per step
    tmp = (cp.zeros if same else cp.ones)(32 << 20, dtype=cp.uint8)  # TEMPORARY: 32 MiB, freed below
    return int(tmp[i].get())


for i in range(steps):
    step(i)
cp.cuda.Device().synchronize()
print("cupy_lines: kept %d MiB" % (len(keep) * 8), flush=True)
