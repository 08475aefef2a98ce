#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The table of CUDA entry points (src/common/cuda_entries.h) is the only
list of them: libgpuspy(7)'s WHAT IS WRAPPED names every row (by the API
it is reported as: a _ptsz form by its plain twin, which the page says
comes in both forms), and names no cu* or cuda* function as wrapped that
no row has.  The rows are read as the table writes them, one X(...) per
line.

    check_entries.py CUDA_ENTRIES_H LIBGPUSPY_7_SCD
"""
import re
import sys

table, page = sys.argv[1:3]
rows = []
for line in open(table):
    m = re.match(r"X\((\w+),\s*(\w+),\s*(\w+),\s*(\w+),", line)
    if m:
        rows.append(m.groups())
text = open(page).read()
start = text.find("\n# WHAT IS WRAPPED\n")
end = text.find("\n# ", start + 1)
if not rows or start < 0 or end < 0:
    print(f"check_entries: no rows in {table} or no WHAT IS WRAPPED in {page}")
    sys.exit(1)
section = text[start:end].replace("\\_", "_")
named = set(re.findall(r"\*(cu[A-Za-z0-9_]+)\*", section))
failures = 0
for name, side, shape, api in rows:
    if api not in named:
        print(f"FAIL {name}: {api} is not named in WHAT IS WRAPPED")
        failures += 1
apis = {api for _, _, _, api in rows} | {name for name, _, _, _ in rows}
for name in sorted(named - apis):
    print(f"FAIL {name} is named in WHAT IS WRAPPED but is no row of the table")
    failures += 1
print(f"{len(rows)} entry points, {len(named)} names in WHAT IS WRAPPED, {failures} failed")
sys.exit(1 if failures else 0)
