#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""%load_ext gpuspy in a real notebook, run headless by Debian's
python3-nbclient on a python3-ipykernel kernel made from
contrib/jupyter/kernel.json (its argv, its LD_PRELOAD of libgpuspy.so,
here the build's), over the fake CUDA runtime, the package imported from
this source tree (python/):
 - the load says one line; a cell that keeps 8 MiB says +8.0 MiB and the
   site by its cell and line, In[2], line 1; one that takes 16 MiB and
   frees it says the 16 MiB peak and no change; a cell that calls a
   function of another cell names that function in its cell; a cell that
   touches no GPU memory says nothing; no line names a file IPython
   compiled a cell into;
 - %gpuspy lists the sites holding memory, the one of In[2] by that name;
 - %gpuspy plot is an SVG that headless Chromium draws: its line through
   each cell, the 16 MiB cell's peak bar the tallest, no request, no
   error;
 - each cell is a mark: gpuspy report --at 'In[2]' and gpuspy diff --at
   'In[3]' read the run afterwards;
 - the README's example lines are what the extension printed;
 - on a kernel without the library, %load_ext gpuspy and %gpuspy say in
   one line how to start it, and every cell runs.
Exit 77 (skipped) when python3-nbclient or python3-ipykernel is missing.
Usage: notebook.py LIBGPUSPY FAKE_DIR GPUSPY PYTHON_DIR SOURCE_DIR"""
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

missing = []
for mod, pkg in (("nbclient", "python3-nbclient"), ("nbformat", "python3-nbclient"),
                 ("ipykernel", "python3-ipykernel")):
    try:
        __import__(mod)
    except ImportError:
        missing.append(pkg)
if missing:
    harness.skip("%s not installed for %s (scripts/setup installs %s)"
                 % (" and ".join(sorted(set(missing))), sys.executable,
                    " ".join(sorted(set(missing)))))
import nbclient  # noqa: E402
import nbformat  # noqa: E402

lib, fake_dir, cli, pydir, src = (os.path.abspath(a) for a in sys.argv[1:6])
lib = harness.preload(lib)
sys.path.insert(0, os.path.join(src, "tests", "cli"))
import chromium  # noqa: E402

works = []


SETUP = """%load_ext gpuspy
import ctypes
cudart = ctypes.CDLL("libcudart.so.13")
cudart.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
cudart.cudaFree.argtypes = [ctypes.c_void_p]
kept, tmp = ctypes.c_void_p(), ctypes.c_void_p()


def alloc(n):
    p = ctypes.c_void_p()
    cudart.cudaMalloc(ctypes.byref(p), n)  # alloc's line
    return p"""
ALLOC_LINE = SETUP.splitlines().index("    cudart.cudaMalloc(ctypes.byref(p), n)  # alloc's line") + 1
CELLS = [
    SETUP,
    "err = cudart.cudaMalloc(ctypes.byref(kept), 8 << 20)",
    "err = cudart.cudaMalloc(ctypes.byref(tmp), 16 << 20)\nerr = cudart.cudaFree(tmp)",
    "more = alloc(4 << 20)",
    "x = sum(range(10))",
    "%gpuspy",
    "%gpuspy plot",
]


def run(cells, env):
    """The notebook of CELLS executed on a kernel of ENV; its cells."""
    work = harness.tempdir()
    works.append(work)
    kernels = os.path.join(work, "jupyter", "kernels", "python3-gpuspy")
    os.makedirs(kernels)
    spec = json.load(open(os.path.join(src, "contrib", "jupyter", "kernel.json")))
    spec["env"] = dict(spec["env"], **env)
    if "LD_PRELOAD" in env and not env["LD_PRELOAD"]:
        del spec["env"]["LD_PRELOAD"]
    with open(os.path.join(kernels, "kernel.json"), "w") as f:
        json.dump(spec, f)
    # the kernel's own directories, none of the user's
    os.environ.update(JUPYTER_PATH=os.path.join(work, "jupyter"),
                      JUPYTER_DATA_DIR=os.path.join(work, "data"),
                      JUPYTER_RUNTIME_DIR=os.path.join(work, "runtime"),
                      IPYTHONDIR=os.path.join(work, "ipython"), JUPYTER_PLATFORM_DIRS="1")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    client = nbclient.NotebookClient(nb, kernel_name="python3-gpuspy", timeout=120,
                                     startup_timeout=120, allow_errors=True,
                                     resources={"metadata": {"path": work}})
    client.execute()
    return nb.cells, work


def texts(cell):
    """The cell's stream text and errors."""
    out = ""
    for o in cell.get("outputs", []):
        if o.get("output_type") == "stream":
            out += o.get("text", "")
        elif o.get("output_type") == "error":
            out += "ERROR %s: %s\n" % (o.get("ename"), o.get("evalue"))
    return out


def gpuspy_lines(cell):
    return [l for l in texts(cell).splitlines() if l.startswith("gpuspy")]


out = harness.tempdir()
env = {"LD_PRELOAD": lib, "LD_LIBRARY_PATH": fake_dir, "GPUSPY_OUTPUT_DIR": out,
       "GPUSPY_QUIET": "1", "PYTHONPATH": pydir}
cells, work = run(CELLS, env)
lines = [gpuspy_lines(c) for c in cells]
print("the lines the notebook printed:")
for n, ls in enumerate(lines):
    for l in ls:
        print("     In[%d] %s" % (n + 1, l))
check(not any("ERROR" in texts(c) or "Traceback" in texts(c) for c in cells),
      "every cell ran without an error", [texts(c) for c in cells])
check(len(lines[0]) == 1 and "a line after each cell" in lines[0][0]
      and "0 B live now" in lines[0][0], "%load_ext gpuspy: one line", lines[0])
want2 = "gpuspy: In[2]: +8.0 MiB (8.0 MiB live), peak +8.0 MiB in the cell; most held by In[2], line 1"
check(lines[1] == [want2], "a cell that keeps 8 MiB: +8.0 MiB, held by In[2], line 1", lines[1])
want3 = "gpuspy: In[3]: no change (8.0 MiB live), peak +16.0 MiB in the cell"
check(lines[2] == [want3], "a cell that takes 16 MiB and frees it: its peak, no change", lines[2])
want4 = ("gpuspy: In[4]: +4.0 MiB (12.0 MiB live), peak +4.0 MiB in the cell; most held by "
         "alloc (In[1], line %d)" % ALLOC_LINE)
check(lines[3] == [want4], "a cell calling a function of In[1]: that function, in its cell",
      lines[3])
check(lines[4] == [], "a cell that touches no GPU memory says nothing", texts(cells[4]))
table = texts(cells[5])
rows = [l for l in table.splitlines() if re.match(r"\s+#\d", l)]
check(table.startswith("gpuspy: 12.0 MiB of GPU memory live in 2 allocations, peak 24.0 MiB"),
      "%gpuspy: the totals", table)
check(len(rows) == 2 and rows[0].split()[1:5] == ["8.0", "MiB", "in", "1"]
      and rows[0].endswith("  In[2], line 1")
      and rows[1].endswith("  alloc (In[1], line %d)" % ALLOC_LINE),
      "%gpuspy: the sites holding memory, In[2]'s by its cell and line", table)
check("each cell is a mark (In[1] .. In[5])" in table and out in table,
      "%gpuspy: the marks, and where the run is", table)
every = "".join(texts(c) for c in cells)
check(not re.search(r"ipykernel_\d+|\b\d+\.py\b|ipython-input", every),
      "no line names a file IPython compiled a cell into", every)

# the chart
svgs = [o["data"]["image/svg+xml"] for o in cells[6].get("outputs", [])
        if o.get("output_type") == "display_data" and "image/svg+xml" in o.get("data", {})]
check(len(svgs) == 1 and svgs[0].startswith("<svg") and "<script" not in svgs[0]
      and not re.search(r"\b(href|src)=", svgs[0]),
      "%gpuspy plot: one inline SVG, no script, nothing to fetch", texts(cells[6]))
if svgs:
    if not chromium.chromium_path():
        check(False, "chromium is installed (scripts/need chromium)")
    else:
        page_path = os.path.join(work, "chart.html")
        with open(page_path, "w") as f:
            f.write("<!DOCTYPE html><html><body style='margin:0;background:#fff'>%s"
                    "<script>window.__gpuspyReady = performance.now();</script></body></html>"
                    % svgs[0])
        with chromium.Browser(width=900, height=400) as b:
            page = b.open(page_path)
            check(page.errors == [], "chart: no console error", page.errors)
            check(page.requests == [page.url], "chart: nothing requested but the page",
                  page.requests)
            box = page.rect("svg.gpuspy-chart")
            check(round(box["width"]) == 720 and round(box["height"]) == 260,
                  "chart: drawn at its size", box)
            dots = page.eval("Array.from(document.querySelectorAll('svg circle.cell'))"
                             ".map(c => c.querySelector('title').textContent)")
            check(dots == ["In[%d]: %s live after it" % (n, size) for n, size in
                           ((1, "0 B"), (2, "8.0 MiB"), (3, "8.0 MiB"), (4, "12.0 MiB"),
                            (5, "12.0 MiB"), (6, "12.0 MiB"))],
                  "chart: a point per cell run, at what was live after it", dots)
            bars = page.eval("Array.from(document.querySelectorAll('svg rect.peak'))"
                             ".map(r => r.getBoundingClientRect().height)")
            check(len(bars) == 6 and bars[2] == max(bars) and bars[2] > 1.5 * bars[1] > 0,
                  "chart: the 16 MiB cell's peak bar the tallest", bars)
            w, h, rows_px = chromium.png_decode(page.screenshot("svg.gpuspy-chart"))
            line_px = sum(1 for r in rows_px for p in r
                          if abs(p[0] - 0x1f) < 40 and abs(p[1] - 0x6f) < 40
                          and abs(p[2] - 0xb4) < 40)
            peak_px = sum(1 for r in rows_px for p in r
                          if p[0] > 200 and 150 < p[1] < 215 and p[2] < 190)
            check(line_px > 300 and peak_px > 300,
                  f"chart: the screenshot has the live line ({line_px} px) and the peak bars "
                  f"({peak_px} px)")

# the marks, read afterwards
rep = subprocess.run([cli, "report", "--at", "In[2]", out], capture_output=True, text=True)
check(rep.returncode == 0 and 'LIVE AT THE MARK "In[2]" (8.0 MiB' in rep.stdout,
      "gpuspy report --at 'In[2]': what cell 2 left", rep.stdout[:1500] + rep.stderr)
dirs = [os.path.join(out, d) for d in os.listdir(out)]
doc = json.load(open(os.path.join(dirs[0], "report.json"))) if len(dirs) == 1 else {}
marks = [(m["label"], m["live_bytes"]) for m in doc.get("marks", [])]
MIB = 1 << 20
check(marks == [("In[1]", 0), ("In[2]", 8 * MIB), ("In[3]", 8 * MIB), ("In[4]", 12 * MIB),
                ("In[5]", 12 * MIB), ("In[6]", 12 * MIB), ("In[7]", 12 * MIB)],
      "each cell is a mark, with what was live after it", marks)
diff = subprocess.run([cli, "diff", "--at", "In[3]", out, out], capture_output=True, text=True)
check(diff.returncode == 0, "gpuspy diff --at 'In[3]'", diff.stdout[-800:] + diff.stderr)

# the README's example is what the extension printed
readme = open(os.path.join(src, "README.md"), encoding="utf-8").read()
shown = [l for l in readme.splitlines() if l.startswith("gpuspy: In[")]
check(shown == [want2, want3], "README.md's lines after the cells are the extension's", shown)

# a kernel without the library
cells, _ = run(["%load_ext gpuspy", "%gpuspy", "x = 1"],
               {"LD_PRELOAD": "", "LD_LIBRARY_PATH": fake_dir, "PYTHONPATH": pydir})
said = [texts(c) for c in cells]
check(all("Traceback" not in t and "ERROR" not in t for t in said),
      "without the library: every cell runs", said)
check(said[0].count("\n") == 1 and "without libgpuspy.so" in said[0]
      and "contrib/jupyter" in said[0] and said[1] == said[0] and said[2] == "",
      "without the library: one line says how to start the kernel with it", said)

for d in works + [out]:
    shutil.rmtree(d, ignore_errors=True)
sys.exit(harness.done())
