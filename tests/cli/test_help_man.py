#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every place that lists gpuspy's options lists the same ones: each
command's --help, the commands in 'gpuspy --help', gpuspy(1)'s SYNOPSIS
and the entries that describe them, README.md's "Using it", and the bash
and zsh completion.

    test_help_man.py GPUSPY SOURCE_DIR

The commands are those of 'gpuspy --help'; each one's options are read
from its own --help (lines "  -x, --name ARG" or "      --name ARG"),
which is what its option parser takes.
"""
import os
import re
import subprocess
import sys

failed = 0


def check(cond, what, detail=""):
    global failed
    print(("ok " if cond else "FAIL ") + what + ("" if cond else ": " + detail))
    if not cond:
        failed += 1


def same(what, want, have):
    check(want == have, what, f"missing {sorted(want - have)}, extra {sorted(have - want)}")


def longs(text):
    return set(re.findall(r"(?<![\w-])--[a-z][\w-]*", text))


def named(text, opts):
    """The options of OPTS ({--long: -s}) that TEXT names, by either form,
    and the long options it names that OPTS has not."""
    have = longs(text)
    found = {o for o, short in opts.items()
             if o in have or (short and re.search(r"(?<![\w-])" + short + r"\b", text))}
    return found | (have - set(opts))


def help_of(gpuspy, *args):
    p = subprocess.run([gpuspy, *args, "--help"], capture_output=True, text=True, timeout=30)
    check(p.returncode == 0, "gpuspy " + " ".join(args + ("--help",)), p.stderr)
    return p.stdout


def help_options(text):
    """{--long: -s or None} of a --help's option lines."""
    opts = {}
    for m in re.finditer(r"^\s+(?:(-\w), )?(--[\w-]+)", text, re.M):
        opts[m.group(2)] = m.group(1)
    return opts


def top_commands(text):
    """{command: its usage in 'gpuspy --help'}, continuation lines included."""
    section = text.split("Commands:\n", 1)[1].split("\n\n", 1)[0]
    cmds, cur = {}, None
    for line in section.split("\n"):
        m = re.match(r"^  ([a-z]+)\b(.*)", line)
        if m:
            cur = m.group(1)
            cmds[cur] = m.group(2)
        elif cur:
            cmds[cur] += " " + line
    return cmds


def man_sections(scd):
    """{SECTION: text} of an scdoc page."""
    parts = re.split(r"^# ([A-Z ]+)\n", scd, flags=re.M)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def man_entries(body):
    """{command: its entry} of COMMANDS: an entry starts with a line
    '*name* ...' at the left margin."""
    out, cur = {}, None
    for line in body.split("\n"):
        m = re.match(r"^\*([a-z]+)\*", line)
        if m:
            cur = m.group(1)
            out.setdefault(cur, "")
        if cur:
            out[cur] += line + "\n"
    return out


def man_option_lines(text):
    """{--long: -s or None} of the option definitions in TEXT: lines
    '*-s*, *--long* ...' or '*--long* ...' (indented or not)."""
    opts = {}
    for m in re.finditer(r"^\t*(?:\*(-\w)\*, )?\*(--[\w-]+)\*", text, re.M):
        opts[m.group(2)] = m.group(1)
        # "*--old* _path_, *--new* _path_": several on one line
        for extra in re.findall(r", \*(--[\w-]+)\*", m.string[m.end():].split("\n", 1)[0]):
            opts[extra] = None
    return opts


def readme_usage(readme):
    """{command: its lines} of README's "Using it" block."""
    text = open(readme, encoding="utf-8").read()
    block = text.split("## Using it", 1)[1].split("```", 2)[1]
    out, cur = {}, None
    for line in block.split("\n"):
        m = re.match(r"^gpuspy ([a-z]+)\b", line)
        if m:
            cur = m.group(1)
            out[cur] = line
        elif line.startswith("gpuspy "):
            cur = "-"
            out[cur] = line
        elif cur and line.startswith(" "):
            out[cur] += " " + line
    return out


def bash_complete(src, words):
    """What the bash completion offers for WORDS (the last one being
    completed)."""
    script = (f'source {src}\nCOMP_WORDS=({" ".join(repr(w) for w in words)})\n'
              f'COMP_CWORD={len(words) - 1}\n_gpuspy\nprintf "%s\\n" "${{COMPREPLY[@]}}"\n')
    p = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=30)
    check(p.returncode == 0, "bash completion of " + " ".join(words), p.stderr)
    return set(p.stdout.split())


def zsh_cases(src):
    """{command: its case branch} of the zsh completion."""
    text = open(src).read()
    out = {}
    for m in re.finditer(r"^\t\t([a-z]+)\)\n(.*?)^\t\t\t;;", text, re.M | re.S):
        out[m.group(1)] = m.group(2)
    return out


def main():
    gpuspy, src = sys.argv[1], sys.argv[2]
    scd = open(os.path.join(src, "man", "gpuspy.1.scd")).read()
    sections = man_sections(scd)
    synopsis = sections["SYNOPSIS"]
    entries = man_entries(sections["COMMANDS"])
    options_section = sections["OPTIONS"]
    readme = readme_usage(os.path.join(src, "README.md"))
    bash = os.path.join(src, "completions", "gpuspy.bash")
    zsh = zsh_cases(os.path.join(src, "completions", "_gpuspy"))

    top = help_of(gpuspy)
    cmds = top_commands(top)
    check(len(cmds) >= 6, "gpuspy --help lists the commands", str(cmds))

    # gpuspy's own options
    own = set(help_options(top.split("Options:\n", 1)[1]))
    same("gpuspy --help's options: gpuspy(1) SYNOPSIS",
         own, longs("".join(re.findall(r"^\*gpuspy\* .*$", synopsis, re.M))))
    described = set(man_option_lines(options_section))
    check(own <= described, "gpuspy --help's options: described in gpuspy(1) OPTIONS",
          f"missing {sorted(own - described)}")
    same("gpuspy --help's options: README.md", own, longs(readme.get("-", "")))
    same("gpuspy --help's options: bash completion", own, bash_complete(bash, ["gpuspy", "--"]))
    same("gpuspy --help's commands: bash completion", set(cmds),
         bash_complete(bash, ["gpuspy", ""]))

    for cmd, top_usage in sorted(cmds.items()):
        opts = help_options(help_of(gpuspy, cmd))
        opts.pop("--help", None)
        want = set(opts)
        same(f"{cmd}: gpuspy --help", want, named(top_usage, opts))
        syn = "\n".join(re.findall(r"^\*gpuspy " + cmd + r"\*.*$", synopsis, re.M))
        check(syn != "", f"{cmd}: in gpuspy(1) SYNOPSIS")
        same(f"{cmd}: gpuspy(1) SYNOPSIS", want, named(syn, opts))
        check(cmd in entries, f"{cmd}: an entry in gpuspy(1) COMMANDS")
        # each option described, where the page describes options: in
        # the command's entry, or in OPTIONS naming the command
        described = dict(man_option_lines(entries.get(cmd, "")))
        for m in re.finditer(r"^(\*.*)\n((?:\t.*\n|\n)*)", options_section, re.M):
            if re.search(r"\(\*[a-z, *]*\b" + cmd + r"\b", m.group(2)):
                described.update(man_option_lines(m.group(1)))
        for o, short in sorted(opts.items()):
            check(o in described, f"{cmd} {o}: described in gpuspy(1)")
            if o in described:
                check(described[o] == short, f"{cmd} {o}: gpuspy(1) gives the short form "
                      f"{short}", f"gpuspy(1): {described[o]}")
        same(f"{cmd}: README.md's \"Using it\"", want, named(readme.get(cmd, ""), opts))
        same(f"{cmd}: bash completion", want | {"--help"},
             bash_complete(bash, ["gpuspy", cmd, "--"]))
        check(cmd in zsh, f"{cmd}: in the zsh completion")
        same(f"{cmd}: zsh completion", want | {"--help"}, longs(zsh.get(cmd, "")))

    print(f"{failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
