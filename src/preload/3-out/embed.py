#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Turn a text file into a C header holding it as one string constant.
Usage: embed.py NAME INPUT OUTPUT"""
import sys

name, src, dst = sys.argv[1:4]
with open(src, encoding="utf-8") as f:
    text = f.read()
lines = ['/* Generated from %s by embed.py; do not edit. */' % src.rsplit("/", 1)[-1],
         "static const char %s[] =" % name]
for line in text.splitlines(keepends=True):
    esc = line.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    lines.append('\t"%s"' % esc)
lines[-1] += ";"
with open(dst, "w", encoding="utf-8") as f:
    f.write("\n".join(lines) + "\n")
