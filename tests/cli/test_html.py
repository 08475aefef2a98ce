#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""'gpuspy report --format html', opened by headless Chromium (Debian's
chromium, driven over the DevTools protocol by chromium.py):
 - golden files of the page's data (fixtures/*.expected.html.json: the
   "gpuspy-html/1" object of #gpuspy-data, so an update of the page's
   script or of uPlot changes no golden file);
 - the page of a test run on the fake driver, and of the fixtures, opens
   from disk with no console error and no network request; the DOM holds
   the leaking site in the leak table and one timeline series per top site
   (those of the history); a screenshot of the timeline is not blank;
 - several processes: a selector, the per-site spread; a killed process;
   --at LABEL and --peak; strings of the input are text, never markup;
 - a run of 1,000 call sites and 10,000 samples (make_big_history.py):
   drawn, every leaked site in the table, its filter and its sort; the time
   to draw it (window.__gpuspyReady, performance.now() when the page has
   drawn everything) is printed beside the small fixture's, a benchmark of
   the format's goal (2 s), not a test;
 - every corrupted report of bad_inputs.py and corrupted histories: status
   2, one line naming the file, nothing on stdout.

    test_html.py GPUSPY FIXTURES LIBGPUSPY FAKE_DIR LEAKER [--update]

Without chromium the browser checks fail (scripts/need chromium installs
it); they are the acceptance test of the format.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bad_inputs  # noqa: E402
import chromium  # noqa: E402
import make_big_history  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

gpuspy, fixtures, lib, fake, leaker = [os.path.abspath(a) for a in sys.argv[1:6]]
UPDATE = "--update" in sys.argv[6:]
MiB = 1 << 20
LOAD_BOUND_MS = 2000  # the bound: 1,000 sites x 10,000 samples open in under 2 s
ENV = {k: v for k, v in os.environ.items() if not k.startswith(("GPUSPY_", "LC_", "LANG"))}
ENV["TZ"] = "UTC"
BACKGROUND = (255, 255, 255)


report = harness.Cli(gpuspy, "report", cwd=fixtures, env=ENV, timeout=120, text=False)


DATA_RE = re.compile(rb'<script type="application/json" id="gpuspy-data">(.*?)</script>', re.S)


def page_data(html):
    m = DATA_RE.search(html)
    return json.loads(m.group(1)) if m else None


tmp = harness.tempdir()


def write_page(name, html):
    path = os.path.join(tmp, name + ".html")
    with open(path, "wb") as f:
        f.write(html)
    return path


# --- 1. golden files of the data -------------------------------------------

GOLDEN = [
    (["timeline"], "timeline.expected.html.json"),
    (["ranks"], "ranks.expected.html.json"),
    (["killed"], "killed.expected.html.json"),
    (["python"], "python.expected.html.json"),
    (["oom"], "oom.expected.html.json"),
    (["--peak", "run"], "run-peak.expected.html.json"),
]
for args, name in GOLDEN:
    p = report("--format", "html", *args)
    if not check(p.returncode == 0 and not p.stderr, "golden: report --format html %s runs"
                 % " ".join(args), p.stderr.decode(errors="replace")):
        continue
    d = page_data(p.stdout)
    if not check(d is not None and d.get("format") == "gpuspy-html/1",
                 "%s: one gpuspy-html/1 object in #gpuspy-data" % " ".join(args)):
        continue
    out = (json.dumps(d, indent=1) + "\n").encode()
    path = os.path.join(fixtures, name)
    if UPDATE:
        with open(path, "wb") as f:
            f.write(out)
        print("updated " + name)
        continue
    with open(path, "rb") as f:
        want = f.read()
    check(out == want, "golden: %s" % name, "got:\n" + out.decode()[:2000])

# --- 2. the page on its own: nothing from elsewhere ------------------------

html = report("--format", "html", "timeline").stdout
text = html.decode()
check(text.startswith("<!DOCTYPE html>") and text.rstrip().endswith("</html>"),
      "html: one whole page")
check("default-src 'none'" in text and not re.search(r"<(link|img|iframe)\b|\bsrc=", text),
      "html: a Content-Security-Policy of no requests; no link, img or src")
check(text.count("<script") == 3, "html: three scripts (data, uPlot, the page's)")
d = page_data(html)
j = json.loads(report("--format", "json", "timeline").stdout)
check(d["report"] == j, "html: its report is the gpuspy-report/1 object of --format json")
check(report("--format", "html", "timeline").stdout == html, "html: the same input, the same page")

# --- 3. the browser ----------------------------------------------------------

if not chromium.chromium_path():
    check(False, "chromium is installed (scripts/need chromium)")
    sys.exit(harness.done())


def labels(page):
    return page.eval("Array.from(document.querySelectorAll('#timeline .u-series .u-label'))"
                     ".map(e => e.textContent)")


def leak_rows(page):
    return page.eval("Array.from(document.querySelectorAll('#leaks tr.leak'))"
                     ".map(e => e.cells[2].querySelector('summary').textContent)")


def timeline_pixels(page):
    """Pixels of the plot area of the timeline that are not background,
    and the area."""
    w, h, rows = chromium.png_decode(page.screenshot("#timeline .u-over"))
    return chromium.count_not(rows, BACKGROUND), w * h


def clean(page, what):
    check(page.ready_ms is not None and not page.errors,
          "%s: drawn, no console error" % what, page.errors)
    bad = [u for u in page.requests if u != page.url and not u.startswith(("data:", "about:"))]
    check(page.requests[:1] == [page.url] and not bad,
          "%s: no network request but the page itself" % what, page.requests)


def history_sites(directory):
    out = []
    for d, _, files in os.walk(directory):
        if "history.jsonl" in files:
            with open(os.path.join(d, "history.jsonl")) as f:
                out += [json.loads(x)["site"] for x in f if x.startswith('{"site"')]
    return out


browser = chromium.Browser()
try:
    # a test run on the fake driver: keep_output leaks 40 x 256 KiB over 2 s,
    # sampled every 100 ms: a growing site
    run_env = dict(ENV, LD_LIBRARY_PATH=fake, GPUSPY_INTERVAL="100ms", GPUSPY_QUIET="1")
    out_exit = os.path.join(tmp, "exit")
    r = subprocess.run([leaker, "40", "50", "256"], env=dict(run_env, LD_PRELOAD=lib,
                       GPUSPY_OUTPUT_DIR=out_exit), capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, "leaker ran on the fake driver", r.stderr)
    p = report("--format", "html", out_exit, cwd=tmp)
    check(p.returncode == 0 and not p.stderr, "html of a real run", p.stderr)
    page = browser.open(write_page("run", p.stdout))
    clean(page, "a real run")
    rows = leak_rows(page)
    check(rows and rows[0].startswith("keep_output"), "a real run: keep_output leads the leak table",
          rows)
    nseries = len(history_sites(out_exit))
    got = [x for x in labels(page) if x.startswith("#")]
    check(nseries >= 1 and len(got) == min(nseries, 10),
          "a real run: one timeline series per top site of the history (%d)" % nseries, got)
    check(any("keep_output" in x for x in got), "a real run: keep_output has its series", got)
    busy, area = timeline_pixels(page)
    check(busy > area // 50, "a real run: the timeline is not blank (%d of %d pixels drawn)"
          % (busy, area))
    grow = page.eval("Array.from(document.querySelectorAll('#growth tr.growing')).map(r =>"
                     " [r.cells[1].textContent, r.cells[6].querySelector('summary').textContent,"
                     " r.querySelector('svg polyline').getAttribute('points').split(' ').length,"
                     " r.cells[0].textContent])")
    check(len(grow) == 1 and grow[0][0].endswith("/min") and grow[0][1].startswith("keep_output")
          and grow[0][2] > 5 and grow[0][3] == "growing",
          "a real run: keep_output grows, with its verdict, rate and sparkline", grow)

    # the timeline fixture: two site series, the rest, NVML; marks, peak, OOM, snapshot
    page = browser.open(write_page("timeline", html))
    clean(page, "timeline")
    got = labels(page)
    check([x for x in got if x.startswith("#")] ==
          ["#1 leak_driver (leaky)", "#4 train_step (leaky)"]
          and "other sites" in got and "NVML: used by the process, GPU 0" in got,
          "timeline: a series per top site, the rest, NVML", got)
    ev = page.eval("Array.from(document.querySelectorAll('#events li')).map(e => e.className)")
    check(ev == ["mark", "peak", "mark", "oom", "snapshot", "mark"],
          "timeline: marks, the peak, the OOM and the snapshot in order", ev)
    check(leak_rows(page)[0] == "leak_driver (leaky)", "timeline: leak_driver in the leak table")
    busy, area = timeline_pixels(page)
    check(busy > area // 50, "timeline: not blank (%d of %d pixels)" % (busy, area))
    note = page.eval("document.getElementById('flame-note').textContent")
    flame = page.eval("Array.from(document.querySelectorAll('#flame div')).map(e => e.textContent)")
    check(note.startswith("3.0 MiB live at exit") and "leak_driver (leaky)" in flame
          and "cuMemAlloc_v2" in flame, "timeline: the stacks at exit as an icicle",
          (note, flame))
    page.eval("(() => { const s = document.getElementById('moment');"
              " s.value = Array.from(s.options).find(o => o.text.startsWith('at the peak')).value;"
              " s.dispatchEvent(new Event('change')); })()")
    note = page.eval("document.getElementById('flame-note').textContent")
    flame = page.eval("Array.from(document.querySelectorAll('#flame div')).map(e => e.textContent)")
    check(note.startswith("11.0 MiB live at the peak") and "train_step (leaky)" in flame,
          "timeline: the moment selector shows the peak", (note, flame))
    check(not page.errors, "timeline: no error after choosing a moment", page.errors)
    led = page.eval("document.getElementById('ledger').rows[1].textContent")
    check(led.startswith("device 0") and "user code 3.0 MiB" in led, "timeline: the ledger", led)

    # --top 1: one site's band, the other site in the rest
    page = browser.open(write_page("top1", report("--format", "html", "--top", "1",
                                                  "timeline").stdout))
    got = labels(page)
    check([x for x in got if x.startswith("#")] == ["#4 train_step (leaky)"]
          and "other sites" in got and not page.errors,
          "--top 1: the site with most live bytes stacked, the rest as one band", got)

    # --at LABEL: the page opens on that mark's stacks
    page = browser.open(write_page("at", report("--format", "html", "--at", "epoch 2",
                                                "timeline").stdout))
    clean(page, "--at 'epoch 2'")
    sel = page.eval("(s => s.options[s.selectedIndex].text)(document.getElementById('moment'))")
    note = page.eval("document.getElementById('flame-note').textContent")
    check(sel.startswith("mark: epoch 2") and note.startswith("6.0 MiB live at mark"),
          "--at 'epoch 2': the page opens on that mark's 6 MiB", (sel, note))

    # ranks: four processes, the selector, the per-site spread with its outlier
    page = browser.open(write_page("ranks", report("--format", "html", "ranks").stdout))
    clean(page, "ranks")
    opts = page.eval("Array.from(document.getElementById('proc').options).map(o => o.text)")
    check(len(opts) == 5 and opts[0].startswith("all") and opts[3] == "rank 2 (node2-202)",
          "ranks: a selector of the four ranks and all of them", opts)
    spread = page.eval("Array.from(document.querySelectorAll('#leaks tr.leak'))"
                       ".map(r => r.cells[7].textContent)")
    check(any("outlier: rank 2" in s and "9.0 MiB" in s for s in spread),
          "ranks: the per-site spread names rank 2 the outlier", spread)
    page.eval("(() => { const s = document.getElementById('proc'); s.value = '2';"
              " s.dispatchEvent(new Event('change')); })()")
    note = page.eval("document.getElementById('timeline-note').textContent")
    check(note.startswith("rank 2 (node2-202)") and not page.errors,
          "ranks: choosing rank 2 draws its timeline", (note, page.errors))

    # out of memory: the post-mortems with what was live
    page = browser.open(write_page("oom", report("--format", "html", "oom").stdout))
    clean(page, "oom")
    ooms = page.eval("Array.from(document.querySelectorAll('#oom .oom-event')).map(e =>"
                     " [e.querySelector('h3').textContent, e.querySelector('p').textContent,"
                     " Array.from(e.querySelectorAll('tr')).slice(1).map(r => r.cells[1].textContent)])")
    want = json.loads(report("--format", "json", "oom").stdout)["oom"]
    check(len(ooms) == len(want) == 4 and ooms[0][0] == "Out of memory 1 in oom/node9-500 (pid 500)"
          and ooms[0][1].startswith("cudaMalloc of 80.0 GiB (device) on device 0, by grow_buffer")
          and "130.6 GiB used beyond" in ooms[0][1]
          and ooms[0][2][:2] == ["alloc_activations (trainer)", "load_weights (trainer)"]
          and [len(x[2]) for x in ooms] == [len(o["top_sites"]) for o in want],
          "oom: each post-mortem, its request and the sites live then", ooms)

    # NVML's view: the ledger, what NVML sees beyond what gpuspy tracked
    page = browser.open(write_page("outside", report("--format", "html", "outside").stdout))
    clean(page, "outside")
    led = page.eval("Array.from(document.getElementById('ledger').rows[1].cells)"
                    ".map(c => c.textContent)")
    check(led[0] == "device 0" and led[1].startswith("2.0 GiB (PyTorch caching allocator")
          and led[3] == "2.5 GiB" and led[4].startswith("518.0 MiB") and "pid 581" in led[5],
          "outside: the ledger: tracked by label, NVML, beyond it, other processes", led)

    # the PyTorch view (the hostile fixture has one)
    page = browser.open(write_page("torch", report("--format", "html", "hostile").stdout))
    clean(page, "hostile fixture")
    tv = page.eval("[document.getElementById('torch-note').textContent,"
                   " document.getElementById('torch').rows.length]")
    check(tv[0].startswith("PyTorch's caching allocator: 4.0 MiB reserved, 2.0 MiB in tensors")
          and tv[1] == 2, "hostile: the PyTorch view's pool and its line", tv)
    txt = page.eval("document.body.innerText")
    check(not any(c in txt for c in "\x1b\x07\x9b"), "hostile: no control character shown")

    # one verdict on the page: a PyTorch line that grows is in Growing, as
    # in the PyTorch tensors table (the hostile fixture's line, flagged)
    grown = os.path.join(tmp, "grown")
    shutil.copytree(os.path.join(fixtures, "hostile"), grown)
    tj = os.path.join(grown, "node6-66", "torch.json")
    doc = json.load(open(tj))
    doc["sites"][0]["growing"] = True
    doc["sites"][0]["growth"] = {"shape": "staircase", "since_s": 12.0,
                                 "rate_bytes_per_s": 1048576.0, "stopped": False,
                                 "until_s": 40.0}
    json.dump(doc, open(tj, "w"))
    page = browser.open(write_page("grown", report("--format", "html", grown).stdout))
    clean(page, "a growing PyTorch line")
    g = page.eval("[Array.from(document.querySelectorAll('#growth tr.growing')).map(r =>"
                  " [r.cells[0].textContent, r.cells[1].textContent, r.cells[6].textContent]),"
                  " document.querySelectorAll('#growth-section p.note').length,"
                  " Array.from(document.getElementById('torch').rows).slice(1)"
                  ".map(r => r.cells[3].textContent)]")
    check(len(g[0]) == 1 and g[0][0][0] == "growing" and g[0][0][1] == "60.0 MiB/min"
          and g[0][0][2].endswith("[PyTorch view]") and g[1] == 0 and g[2] == ["growing"],
          "a growing PyTorch line: in Growing, as in the PyTorch tensors table", g)
    shutil.rmtree(grown)

    # the pools' segments at exit, said apart from the program's own leak
    page = browser.open(write_page("pools", report("--format", "html", "pools").stdout))
    clean(page, "pools")
    summ = page.eval("document.getElementById('summary').textContent")
    check(summ.startswith("5.0 MiB of GPU memory in 2 allocations still live at exit from the "
                          "program's own code, 8.1 GiB in 7 segments held by the PyTorch "
                          "caching allocator and the XLA allocator (the framework's cache, "
                          "not a leak)"),
          "pools: the summary says the pools' segments apart", summ)

    # a killed process: read from its snapshot
    page = browser.open(write_page("killed", report("--format", "html", "killed").stdout))
    clean(page, "killed")
    st = page.eval("Array.from(document.getElementById('procs').rows).map(r => r.textContent)")
    check(any("killed" in x for x in st), "killed: the processes table says so", st)

    # several runs at once
    page = browser.open(write_page("two", report("--format", "html", "run", "ranks").stdout))
    clean(page, "two runs")
    n = page.eval("document.getElementById('proc').options.length")
    check(n == 7, "two runs: six processes and all of them in the selector", n)

    # a run with one process cut short: the page draws the other three
    # and says which one it left out, and why
    cut = os.path.join(tmp, "cut-ranks")
    shutil.copytree(os.path.join(fixtures, "ranks"), cut)
    with open(os.path.join(cut, "node2-201", "report.json"), "r+b") as f:
        f.truncate(1000)
    p = report("--format", "html", cut, cwd=tmp)
    check(p.returncode == 0 and p.stderr.decode().count("could not be read") == 1,
          "one process cut short: the page of the others", p.stderr)
    page = browser.open(write_page("cut", p.stdout))
    clean(page, "one process cut short")
    un = page.eval("[document.querySelector('#unreadable p').textContent,"
                   " Array.from(document.querySelectorAll('#unreadable li'))"
                   ".map(e => e.textContent),"
                   " document.getElementById('procs').rows.length]")
    check(un[0] == "1 of 4 processes could not be read, left out of every figure:"
          and len(un[1]) == 1 and un[1][0].startswith(os.path.join(cut, "node2-201") +
                                                      ": report.json: cut short at byte 1000")
          and un[2] == 4, "one process cut short: the page says so, three processes listed", un)

    # strings of the input are text: a frame that is markup stays text
    hostile = os.path.join(tmp, "markup", "node7-4242")
    shutil.copytree(os.path.join(fixtures, "timeline", "node7-4242"), hostile)
    rp = os.path.join(hostile, "report.json")
    with open(rp) as f:
        doc = json.load(f)
    evil = "</script><img src=x onerror=\"window.__owned=1\"><!--<script>"
    for s in doc["sites"]:
        for fr in s["frames"]:
            if fr.get("symbol") == "leak_driver":
                fr["symbol"] = evil
    doc["command"] = [evil]
    with open(rp, "w") as f:
        json.dump(doc, f)
    p = report("--format", "html", os.path.dirname(hostile), cwd=tmp)
    check(p.returncode == 0 and b"</script><img" not in p.stdout, "markup in a frame: escaped",
          p.stderr)
    page = browser.open(write_page("markup", p.stdout))
    clean(page, "markup in a frame")
    check(page.eval("[window.__owned === undefined, document.images.length,"
                    " document.scripts.length]") == [True, 0, 3]
          and evil in leak_rows(page)[0], "markup in a frame: shown as text, never run",
          leak_rows(page))

    # the acceptance bound: 1,000 sites x 10,000 samples
    big = os.path.join(tmp, "big", "bignode-4000")
    make_big_history.write(big, 1000, 10000)
    p = report("--format", "html", os.path.dirname(big), cwd=tmp)
    check(p.returncode == 0 and not p.stderr, "big: 1,000 sites x 10,000 samples", p.stderr)
    d = page_data(p.stdout)
    pr = d["processes"][0]
    hist_max = max(sum(make_big_history.value(i, j) for i in range(1000)) for j in range(10000))
    dev = [x for x in pr["lines"] + pr["bands"] if x["kind"] == "device"]
    check(pr["downsampled"] and len(pr["t"]) <= 2000
          and all(len(b["v"]) == len(pr["t"]) for b in pr["bands"] + pr["lines"]),
          "big: cut to %d points a series (at most 2,000)" % len(pr["t"]))
    check(len(pr["bands"]) == 65 and dev and max(v for v in dev[0]["v"] if v) == hist_max,
          "big: 64 site series and the rest; the device's peak survives the cut",
          (len(pr["bands"]), dev and max(dev[0]["v"]), hist_max))
    # how long it takes to draw is a benchmark, not a test: printed beside
    # the small fixture's page drawn in the same browser just before
    small = browser.open(write_page("small", report("--format", "html", "timeline").stdout))
    page = browser.open(write_page("big", p.stdout), timeout=60)
    clean(page, "big")
    print("     big: %d bytes of page, drawn %.0f ms after the navigation started; the "
          "timeline fixture's page %.0f ms (ratio %.1f; the format's goal: under %d ms)"
          % (len(p.stdout), page.ready_ms or -1, small.ready_ms or -1,
             (page.ready_ms or 0) / (small.ready_ms or 1), LOAD_BOUND_MS))
    check(page.ready_ms is not None, "big: the page is drawn", page.ready_ms)
    rows = leak_rows(page)
    check(len(rows) == 1000 and rows[0].startswith("alloc_0 "),
          "big: the leak table lists all 1,000 leaked sites, alloc_0 first", rows[:3])
    # the table's filter narrows it to the sites holding the text
    shown = page.eval("(() => { const f = document.querySelector('#leak-section input.filter');"
                      " f.value = 'alloc_99'; f.dispatchEvent(new Event('input'));"
                      " return Array.from(document.querySelectorAll('#leaks tr.leak'))"
                      ".filter(r => r.style.display !== 'none')"
                      ".map(r => r.cells[2].querySelector('summary').textContent); })()")
    check(sorted(shown) == sorted("alloc_%d (bigapp)" % i for i in range(1000)
                                  if ("alloc_%d " % i).startswith("alloc_99")),
          "big: the filter shows the sites whose row holds its text", shown)
    # a click on "leaked" sorts descending, a second ascending, by bytes
    order = page.eval("(() => { const f = document.querySelector('#leak-section input.filter');"
                      " f.value = ''; f.dispatchEvent(new Event('input'));"
                      " const th = document.querySelector('#leaks tr th'); th.click(); th.click();"
                      " return Array.from(document.querySelectorAll('#leaks tr.leak'))"
                      ".map(r => Number(r.cells[0].dataset.sort)); })()")
    check(len(order) == 1000 and order == sorted(order),
          "big: the leaked column sorts the table by bytes", order[:5])
finally:
    browser.close()

# --- 4. usage and corrupted inputs ------------------------------------------

for args in (["--format", "html", "--peak", "--at", "x"], ["--format", "html", "--at", "nope"]):
    p = report(*(args + ["timeline"]))
    check(p.returncode == 2 and not p.stdout and len(p.stderr.splitlines()) == 1,
          "usage: %s is refused" % " ".join(args), p.stderr)
p = subprocess.run([gpuspy, "merge", "--format", "html", "ranks"], cwd=fixtures,
                   capture_output=True)
check(p.returncode == 2 and not p.stdout, "gpuspy merge has no html format", p.stderr)


def refused(path, named, *opts):
    p = subprocess.run([gpuspy, "report", "--format", "html"] + list(opts) + [path], env=ENV,
                       capture_output=True, timeout=30)
    err = p.stderr.decode(errors="replace")
    lines = err.splitlines()
    if p.returncode != 2:
        return "status %d" % p.returncode
    if len(lines) != 1 or not err.endswith("\n") or not lines[0].startswith("gpuspy"):
        return "%d lines on stderr" % len(lines)
    if named not in lines[0]:
        return "the line does not name " + named
    if p.stdout:
        return "%d bytes on stdout" % len(p.stdout)
    return None


valid_path = os.path.join(fixtures, "process", "node7-4242", "report.json")
with open(valid_path, "rb") as f:
    valid_text = f.read()
cases = bad_inputs.mutations(json.loads(valid_text), valid_text)
ok = 0
for i, (name, content) in enumerate(cases):
    d = os.path.join(tmp, "bad", "case%d" % i, "node7-4242")
    os.makedirs(d)
    with open(os.path.join(d, "report.json"), "wb") as f:
        f.write(content)
    why = refused(os.path.dirname(d), os.path.join(d, "report.json"))
    if why:
        check(False, "corrupted %s" % name, why)
    else:
        ok += 1
check(ok == len(cases), "%d of %d corrupted reports refused" % (ok, len(cases)))

HIST = open(os.path.join(fixtures, "timeline", "node7-4242", "history.jsonl")).read()
BAD_HIST = {
    "empty history": "",
    "history of another pid": HIST.replace('"pid":4242', '"pid":4243'),
    "history not JSON": HIST + "{\"t\": 50,\n",
    "history going back in time": HIST + '{"t":1.0,"dev":{"0":1},"sites":{},"other":0}\n',
    "history value of an undeclared site": HIST + '{"t":50,"dev":{"0":1},"sites":{"9":1},"other":0}\n',
    "history with a NUL": HIST + "\0\n",
}
# a bad history is left out with one line, the page that of the report
# alone (as without history.jsonl); --strict refuses it
for name, content in BAD_HIST.items():
    d = os.path.join(tmp, "badhist", name.replace(" ", "-"), "node7-4242")
    shutil.copytree(os.path.join(fixtures, "timeline", "node7-4242"), d)
    os.remove(os.path.join(d, "history.jsonl"))
    cmd = [gpuspy, "report", "--format", "html", os.path.dirname(d)]
    without = subprocess.run(cmd, env=ENV, capture_output=True, timeout=30).stdout
    with open(os.path.join(d, "history.jsonl"), "w") as f:
        f.write(content)
    p = subprocess.run(cmd, env=ENV, capture_output=True, timeout=30)
    err = p.stderr.decode(errors="replace")
    check(p.returncode == 0 and p.stdout == without and without and len(err.splitlines()) == 1
          and os.path.join(d, "history.jsonl") in err and "left out" in err,
          "%s: left out with one line naming it, the page of the report" % name, err)
    why = refused(os.path.dirname(d), os.path.join(d, "history.jsonl"), "--strict")
    check(why is None, "%s, --strict: status 2, one line naming it, nothing on stdout" % name,
          why)

shutil.rmtree(tmp, ignore_errors=True)
sys.exit(harness.done())
