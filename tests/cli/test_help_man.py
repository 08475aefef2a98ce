#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every place that lists gpuspy's options lists the same ones: each
command's --help, the commands in 'gpuspy --help', gpuspy(1)'s SYNOPSIS
and COMMANDS, each command's own page gpuspy-COMMAND(1) (its SYNOPSIS,
and each option described in its OPTIONS with the same short form, none
the command lacks), docs/usage.md's "Commands", and the bash and zsh
completion.  Every command has its page, listed in gpuspy(1)'s SEE ALSO
and in man/meson.build, and every page is of a command.

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


def usage_block(doc):
    """{command: its lines} of the first block under docs/usage.md's
    "## Commands"."""
    text = open(doc, encoding="utf-8").read()
    block = text.split("\n## Commands\n", 1)[1].split("```", 2)[1]
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
    man = os.path.join(src, "man")
    scd = open(os.path.join(man, "gpuspy.1.scd")).read()
    sections = man_sections(scd)
    synopsis = sections["SYNOPSIS"]
    entries = man_entries(sections["COMMANDS"])
    see_also = sections.get("SEE ALSO", "")
    usage = usage_block(os.path.join(src, "docs", "usage.md"))
    bash = os.path.join(src, "completions", "gpuspy.bash")
    zsh = zsh_cases(os.path.join(src, "completions", "_gpuspy"))
    built = set(re.findall(r"'([\w-]+\.\d)'", open(os.path.join(man, "meson.build")).read()))

    top = help_of(gpuspy)
    cmds = top_commands(top)
    check(len(cmds) >= 6, "gpuspy --help lists the commands", str(cmds))

    # gpuspy's own options
    own = set(help_options(top.split("Options:\n", 1)[1]))
    same("gpuspy --help's options: gpuspy(1) SYNOPSIS",
         own, longs("".join(re.findall(r"^\*gpuspy\* .*$", synopsis, re.M))))
    described = set(man_option_lines(sections["OPTIONS"]))
    check(own <= described, "gpuspy --help's options: described in gpuspy(1) OPTIONS",
          f"missing {sorted(own - described)}")
    same("gpuspy --help's options: docs/usage.md", own, longs(usage.get("-", "")))
    same("gpuspy --help's options: bash completion", own, bash_complete(bash, ["gpuspy", "--"]))
    same("gpuspy --help's commands: bash completion", set(cmds),
         bash_complete(bash, ["gpuspy", ""]))

    # one page per command, and no page of a command that is not there
    pages = {f[len("gpuspy-"):-len(".1.scd")] for f in os.listdir(man)
             if f.startswith("gpuspy-") and f.endswith(".1.scd")}
    same("the pages gpuspy-COMMAND(1): the commands of gpuspy --help", set(cmds), pages)
    for page in sorted(f[:-len(".scd")] for f in os.listdir(man) if f.endswith(".scd")):
        check(page in built, f"man/{page}.scd: built and installed by man/meson.build")

    for cmd, top_usage in sorted(cmds.items()):
        text = help_of(gpuspy, cmd)
        opts = help_options(text)
        want = set(opts) - {"--help"}
        # more than a usage line: what it does, and its options
        check(text.startswith(f"Usage: gpuspy {cmd}") and "--help" in opts and
              re.search(r"^[A-Z][a-z]+ .*\n.*\n", text.split("\n\n", 1)[-1], re.M) is not None,
              f"gpuspy {cmd} --help: says what it does, and its options", text)
        same(f"{cmd}: gpuspy --help", want, named(top_usage, opts))
        syn = "\n".join(re.findall(r"^\*gpuspy " + cmd + r"\*.*$", synopsis, re.M))
        check(syn != "", f"{cmd}: in gpuspy(1) SYNOPSIS")
        same(f"{cmd}: gpuspy(1) SYNOPSIS", want, named(syn, opts))
        check(cmd in entries, f"{cmd}: an entry in gpuspy(1) COMMANDS")
        entry = entries.get(cmd, "")
        same(f"{cmd}: gpuspy(1) COMMANDS", want, named(entry.split("\n", 1)[0], opts))
        check(f"*gpuspy-{cmd}*(1)" in entry, f"{cmd}: gpuspy(1) COMMANDS names gpuspy-{cmd}(1)")
        check(f"*gpuspy-{cmd}*(1)" in see_also, f"{cmd}: gpuspy(1) SEE ALSO names gpuspy-{cmd}(1)")

        # its own page: each option in SYNOPSIS, and described in OPTIONS
        # with the short form --help gives; none described that it lacks
        path = os.path.join(man, f"gpuspy-{cmd}.1.scd")
        if not os.path.exists(path):
            check(False, f"{cmd}: man/gpuspy-{cmd}.1.scd")
            continue
        page = open(path).read()
        check(page.startswith(f"gpuspy-{cmd}(1)\n"), f"gpuspy-{cmd}(1): its title")
        psec = man_sections(page)
        check(re.search(r"^gpuspy-" + cmd + r" - \S", psec.get("NAME", ""), re.M) is not None,
              f"gpuspy-{cmd}(1): NAME", psec.get("NAME", ""))
        psyn = "\n".join(re.findall(r"^\*gpuspy " + cmd + r"\*.*$", psec.get("SYNOPSIS", ""),
                                    re.M))
        check(psyn != "", f"gpuspy-{cmd}(1): SYNOPSIS")
        same(f"gpuspy-{cmd}(1) SYNOPSIS", want, named(psyn, opts))
        described = man_option_lines(psec.get("OPTIONS", ""))
        for o, short in sorted(opts.items()):
            check(o in described, f"{cmd} {o}: described in gpuspy-{cmd}(1) OPTIONS")
            if o in described:
                check(described[o] == short, f"{cmd} {o}: gpuspy-{cmd}(1) gives the short form "
                      f"{short}", f"gpuspy-{cmd}(1): {described[o]}")
        check(set(described) <= set(opts), f"gpuspy-{cmd}(1) OPTIONS: only options it has",
              f"extra {sorted(set(described) - set(opts))}")
        check("gpuspy*(1)" in psec.get("SEE ALSO", ""), f"gpuspy-{cmd}(1): SEE ALSO gpuspy(1)")

        same(f"{cmd}: docs/usage.md's \"Commands\"", want, named(usage.get(cmd, ""), opts))
        same(f"{cmd}: bash completion", want | {"--help"},
             bash_complete(bash, ["gpuspy", cmd, "--"]))
        check(cmd in zsh, f"{cmd}: in the zsh completion")
        same(f"{cmd}: zsh completion", want | {"--help"}, longs(zsh.get(cmd, "")))

    print(f"{failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
