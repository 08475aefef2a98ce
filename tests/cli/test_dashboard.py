#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""contrib/grafana/gpuspy.json is a Grafana dashboard that imports as it
is: its structure (schemaVersion, panels with a unique id and a gridPos
inside the 24-column grid, no two overlapping, a target with an expr in
every panel but rows, the datasource a template variable everywhere, the
instance/host/rank variables), and every query of its panels, variables
and annotations parsed by Prometheus' own parser: each, with the
dashboard's variables and Grafana's built-in ones substituted, becomes a
recording rule of a temporary file given to 'promtool check rules'.  Then
the per-device panel, the process count and the per-rank panels
(gpuspy_wrong_device_bytes) are evaluated by 'promtool
test rules' on series shaped as both endpoints serve them (the in-process
one: host and rank only on gpuspy_info, a target per process; gpuspy
exporter: host and rank on every series, one target for two ranks), for
several choices of instance, host and rank.

    test_dashboard.py SOURCE_DIR [PROMTOOL]

Without promtool the structure is still checked; the test then exits 77
(skipped), as the queries were not parsed.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402


# Grafana's own variables, and what a query of a 3-hour range at 1 min
# steps would get.
BUILTINS = {"__rate_interval": "1m", "__interval": "1m", "__range": "3h",
            "__range_s": "10800", "__interval_ms": "60000"}
VAR = re.compile(r"\$(?:\{(\w+)(?::\w+)?\}|(\w+))")


def all_panels(dash):
    for p in dash.get("panels", []):
        yield p
        yield from p.get("panels", [])


def is_ds_var(ds, name):
    return isinstance(ds, dict) and ds.get("uid") in ("$" + name, "${" + name + "}")


def substitute(expr, values):
    def one(m):
        name = m.group(1) or m.group(2)
        return values.get(name, m.group(0))
    return VAR.sub(one, expr)


def queries(dash):
    """(where, expr) of every PromQL query the dashboard holds."""
    out = []
    for p in all_panels(dash):
        for t in p.get("targets", []):
            out.append((f"panel {p.get('id')} ({p.get('title')!r}) {t.get('refId')}",
                        t.get("expr", "")))
    for a in dash.get("annotations", {}).get("list", []):
        if "expr" in a:
            out.append((f"annotation {a.get('name')!r}", a["expr"]))
    for v in dash.get("templating", {}).get("list", []):
        if v.get("type") == "query":
            q = v.get("query")
            q = q.get("query", "") if isinstance(q, dict) else q
            # label_values(METRIC_SELECTOR, LABEL) is Grafana's, not
            # PromQL: its selector is the query Prometheus answers
            m = re.fullmatch(r"\s*label_values\((.*),\s*\w+\s*\)\s*", q or "", re.S)
            out.append((f"variable {v.get('name')!r}", m.group(1) if m else q))
    return out


def structure(dash):
    check(isinstance(dash.get("schemaVersion"), int) and dash["schemaVersion"] >= 36,
          "schemaVersion is a number of a current Grafana", str(dash.get("schemaVersion")))
    for key in ("title", "uid"):
        check(isinstance(dash.get(key), str) and dash[key] != "", f"the dashboard has a {key}")

    variables = {v.get("name"): v for v in dash.get("templating", {}).get("list", [])}
    ds = [v for v in variables.values() if v.get("type") == "datasource"]
    check(len(ds) == 1 and ds[0].get("query") == "prometheus",
          "one datasource variable, of Prometheus", str(ds))
    dsname = ds[0]["name"] if ds else "datasource"
    for name in ("instance", "host", "rank"):
        v = variables.get(name, {})
        check(v.get("type") == "query" and is_ds_var(v.get("datasource"), dsname),
              f"variable {name}: a query of the datasource variable", str(v))
        check(v.get("includeAll") is True and v.get("allValue") == ".*",
              f"variable {name}: 'All' is the regex .*, so that it also matches no label",
              str(v))

    panels = list(all_panels(dash))
    check(len(panels) >= 8, "the dashboard has its panels", str(len(panels)))
    ids = [p.get("id") for p in panels]
    check(all(isinstance(i, int) for i in ids) and len(set(ids)) == len(ids),
          "panel ids are unique numbers", str(ids))
    boxes = []
    for p in panels:
        name = f"panel {p.get('id')} ({p.get('title')!r})"
        g = p.get("gridPos", {})
        ok = all(isinstance(g.get(k), int) for k in "hwxy")
        check(ok and g["w"] > 0 and g["h"] > 0 and g["x"] >= 0 and g["x"] + g["w"] <= 24,
              f"{name}: gridPos within the 24 columns", str(g))
        if ok:
            boxes.append((name, g))
        if p.get("type") == "row":
            continue
        check(is_ds_var(p.get("datasource"), dsname), f"{name}: datasource ${dsname}",
              str(p.get("datasource")))
        targets = p.get("targets", [])
        check(len(targets) >= 1 and all(t.get("expr", "").strip() for t in targets),
              f"{name}: every target has an expr", str(targets))
        refs = [t.get("refId") for t in targets]
        check(len(set(refs)) == len(refs), f"{name}: refIds unique", str(refs))
        for t in targets:
            check(is_ds_var(t.get("datasource", p.get("datasource")), dsname),
                  f"{name} {t.get('refId')}: datasource ${dsname}", str(t.get("datasource")))
    for i, (n1, a) in enumerate(boxes):
        for n2, b in boxes[i + 1:]:
            apart = (a["x"] + a["w"] <= b["x"] or b["x"] + b["w"] <= a["x"] or
                     a["y"] + a["h"] <= b["y"] or b["y"] + b["h"] <= a["y"])
            check(apart, f"{n1} and {n2} do not overlap", f"{a} {b}")
    for a in dash.get("annotations", {}).get("list", []):
        if a.get("builtIn"):
            continue
        check(is_ds_var(a.get("datasource"), dsname) and a.get("expr", "").strip(),
              f"annotation {a.get('name')!r}: a query of ${dsname}", str(a))
    names = {a.get("name") for a in dash.get("annotations", {}).get("list", [])}
    check({"Growth", "OOM"} <= names, "annotations for growth and out-of-memory events",
          str(names))

    values = dict(BUILTINS)
    for name, v in variables.items():
        if v.get("type") == "custom":
            cur = v.get("current", {}).get("value")
            values[name] = cur if isinstance(cur, str) else "1"
        elif v.get("type") != "datasource":
            values[name] = ".*"
    for where, expr in queries(dash):
        left = {m.group(1) or m.group(2) for m in VAR.finditer(substitute(expr, values))}
        check(not left, f"{where}: every variable is defined", str(sorted(left)))
    return values


def rules_file(tmp, exprs):
    path = os.path.join(tmp, "dashboard-rules.yml")
    with open(path, "w") as f:
        f.write("groups:\n  - name: dashboard\n    rules:\n")
        for i, expr in enumerate(exprs):
            # a JSON string is a YAML flow scalar: no quoting of our own
            f.write(f"      - record: dashboard:query{i}\n        expr: {json.dumps(expr)}\n")
    return path


def promtool_check(promtool, tmp, exprs):
    p = subprocess.run([promtool, "check", "rules", rules_file(tmp, exprs)],
                       capture_output=True, text=True, timeout=60)
    return p.returncode == 0, p.stdout + p.stderr


# Two processes on node1 with the in-process endpoint, two ranks on node2
# through gpuspy exporter.
SERIES = [
    ('gpuspy_info{instance="node1:9464", job="gpuspy", pid="41", host="node1", rank="0", '
     'command="train.py", version="1"}', 1),
    ('gpuspy_tracked_bytes{instance="node1:9464", job="gpuspy", device="0"}', 100),
    ('gpuspy_info{instance="node1:9465", job="gpuspy", pid="42", host="node1", rank="1", '
     'command="train.py", version="1"}', 1),
    ('gpuspy_tracked_bytes{instance="node1:9465", job="gpuspy", device="1"}', 200),
    ('gpuspy_info{instance="node2:9465", job="gpuspy-exporter", pid="7", host="node2", '
     'rank="0", command="train.py", version="1"}', 1),
    ('gpuspy_tracked_bytes{instance="node2:9465", job="gpuspy-exporter", host="node2", '
     'rank="0", device="0"}', 300),
    ('gpuspy_info{instance="node2:9465", job="gpuspy-exporter", pid="8", host="node2", '
     'rank="1", command="train.py", version="1"}', 1),
    ('gpuspy_tracked_bytes{instance="node2:9465", job="gpuspy-exporter", host="node2", '
     'rank="1", device="1"}', 400),
    # rank 1 of each on device 0 too: 512 MiB in-process, 10 MiB through
    # the exporter (below the count's 64 MiB)
    ('gpuspy_wrong_device_bytes{instance="node1:9465", job="gpuspy", device="0", '
     'own_device="1", rank="1"}', 512 << 20),
    ('gpuspy_wrong_device_bytes{instance="node2:9465", job="gpuspy-exporter", host="node2", '
     'rank="1", device="0", own_device="1"}', 10 << 20),
]
WIN = ('{instance="node1:9465", rank="1", own_device="1", device="0"}', 512 << 20)
WEX = ('{instance="node2:9465", host="node2", rank="1", own_device="1", device="0"}', 10 << 20)
# the same choices -> the per-rank panel's series, and the ranks counted
WRONG = [([WIN, WEX], 1), ([WIN], 1), ([WIN], 1), ([WEX], 0), ([WEX], 0), ([], 0), ([], 0),
         ([], 0)]
IN1 = '{instance="node1:9464", device="0"}'
IN2 = '{instance="node1:9465", device="1"}'
EX0 = '{instance="node2:9465", host="node2", rank="0", device="0"}'
EX1 = '{instance="node2:9465", host="node2", rank="1", device="1"}'
# (instance, host, rank) as Grafana substitutes them -> the tracked
# series the per-device panel shows, and the process count
CHOICES = [
    ((".*", ".*", ".*"), [(IN1, 100), (IN2, 200), (EX0, 300), (EX1, 400)], 4),
    ((".*", "node1", ".*"), [(IN1, 100), (IN2, 200)], 2),
    ((".*", "node1", "1"), [(IN2, 200)], 1),
    ((".*", "node2", ".*"), [(EX0, 300), (EX1, 400)], 2),
    ((".*", "node2", "1"), [(EX1, 400)], 1),
    (("node2:9465", ".*", "0"), [(EX0, 300)], 1),
    (("node1:9464", ".*", ".*"), [(IN1, 100)], 1),
    ((".*", "(node1|node2)", "0"), [(IN1, 100), (EX0, 300)], 2),
]


def target(dash, title, ref):
    for p in all_panels(dash):
        for t in p.get("targets", []):
            if p.get("title") == title and t.get("refId") == ref:
                return t["expr"]
    check(False, f"the dashboard has panel {title!r} {ref}")
    return None


def evaluate(promtool, tmp, dash, values):
    tracked = target(dash, "Tracked vs NVML vs framework pool", "A")
    count = target(dash, "Processes", "A")
    wrong = target(dash, "Memory on a device not the rank's own", "A")
    nwrong = target(dash, "Ranks on a device not their own", "A")
    if not tracked or not count or not wrong or not nwrong:
        return
    path = os.path.join(tmp, "dashboard-test.yml")
    with open(path, "w") as f:
        f.write("rule_files: []\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n"
                "    input_series:\n")
        for series, v in SERIES:
            f.write(f"      - series: {json.dumps(series)}\n        values: '{v}+0x10'\n")
        f.write("    promql_expr_test:\n")
        for ((inst, host, rank), want, n), (wwant, wn) in zip(CHOICES, WRONG):
            vals = dict(values, instance=inst, host=host, rank=rank)
            f.write(f"      - expr: {json.dumps(substitute(wrong, vals))}\n"
                    "        eval_time: 5m\n        exp_samples:" + ("\n" if wwant else " []\n"))
            for labels, v in wwant:
                f.write(f"          - labels: {json.dumps(labels)}\n            value: {v}\n")
            f.write(f"      - expr: {json.dumps(substitute(nwrong, vals))}\n"
                    f"        eval_time: 5m\n        exp_samples:\n"
                    f"          - labels: '{{}}'\n            value: {wn}\n")
            f.write(f"      - expr: {json.dumps(substitute(tracked, vals))}\n"
                    "        eval_time: 5m\n        exp_samples:\n")
            for labels, v in want:
                f.write(f"          - labels: {json.dumps(labels)}\n            value: {v}\n")
            f.write(f"      - expr: {json.dumps(substitute(count, vals))}\n"
                    f"        eval_time: 5m\n        exp_samples:\n"
                    f"          - labels: '{{}}'\n            value: {n}\n")
    p = subprocess.run([promtool, "test", "rules", path], capture_output=True, text=True,
                       timeout=60)
    check(p.returncode == 0, f"per-device panel, process count, per-rank panel and its count, "
          f"{len(CHOICES)} choices of "
          "instance/host/rank, on in-process and exporter series", p.stdout + p.stderr)


def main():
    src = sys.argv[1]
    promtool = sys.argv[2] if len(sys.argv) > 2 else shutil.which("promtool")
    path = os.path.join(src, "contrib", "grafana", "gpuspy.json")
    try:
        dash = json.load(open(path, encoding="utf-8"))
    except (OSError, ValueError) as e:
        check(False, f"{path} is JSON", str(e))
        return 1
    values = structure(dash)

    if not promtool:
        print("promtool not found (Debian: prometheus): queries not parsed")
        return harness.done(skipped=True)
    qs = [(w, substitute(e, values)) for w, e in queries(dash)]
    with tempfile.TemporaryDirectory() as tmp:
        # promtool's parser must refuse a broken query, or the checks below
        # would prove nothing
        ok, _ = promtool_check(promtool, tmp, ["sum(gpuspy_tracked_bytes"])
        check(not ok, "promtool check rules refuses an unbalanced query")
        ok, out = promtool_check(promtool, tmp, [e for _, e in qs])
        check(ok, f"promtool check rules: all {len(qs)} queries parse", out)
        if not ok:
            for where, expr in qs:
                one, out = promtool_check(promtool, tmp, [expr])
                check(one, f"{where} parses", expr + "\n" + out)
        evaluate(promtool, tmp, dash, values)
    return harness.done()


if __name__ == "__main__":
    sys.exit(main())
