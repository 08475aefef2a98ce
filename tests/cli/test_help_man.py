#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every place that lists gpuspy's options lists the same ones: each
command's --help, the commands in 'gpuspy --help', gpuspy(1)'s SYNOPSIS
and COMMANDS, each command's own page gpuspy-COMMAND(1) (its SYNOPSIS,
and each option described in its OPTIONS with the same short form, none
the command lacks), docs/usage.md's "Commands", and the bash and zsh
completion.  Every command has its page, listed in gpuspy(1)'s SEE ALSO
and in man/meson.build, and every page is of a command.

The output formats are the rows of src/cli/format.c: 'gpuspy --help'
lists each command's --format names from there, and export's options
are its rows with an argument.  Every list of them agrees: the command's
own --help, gpuspy(1) and gpuspy-COMMAND(1) (SYNOPSIS, COMMANDS, the
--format option; each of report's formats but the default described by
its page), docs/usage.md, the bash and zsh completions and the README.

    test_help_man.py GPUSPY SOURCE_DIR

The commands are those of 'gpuspy --help'; each one's options are read
from its own --help (lines "  -x, --name ARG" or "      --name ARG"),
which is what its option parser takes.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check, same  # noqa: E402


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


def help_formats(usage):
    """The formats that a command's usage in 'gpuspy --help' lists:
    "--format a|b|c" (empty when it has no --format)."""
    m = re.search(r"--format ([\w-]+(?:\|[\w-]+)*)", usage)
    return m.group(1).split("|") if m else []


def man_formats(text):
    """The lists of formats of each '*--format* *a*|*b*' in TEXT, as sets."""
    return [set(re.findall(r"\*([\w-]+)\*", m.group(1)))
            for m in re.finditer(r"\*--format\* ((?:\*[\w-]+\*\|?)+)", text)]


def option_block(text, opt):
    """The description of option OPT in a --help TEXT: its line and the
    lines under it, up to the next option."""
    m = re.search(r"^ +(?:-\w, )?" + re.escape(opt) + r"\b.*\n(?:(?! +-)(?: .*)?\n)*", text, re.M)
    return m.group(0) if m else ""


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


def check_formats(cmd, formats, text, syn, entry, page, psec, usage, bash, zsh, readme):
    """The formats of CMD, as 'gpuspy --help' lists them (FORMATS: the
    table's rows, the default first), in every other place that lists
    them."""
    want = set(formats)
    check(len(formats) >= 2, f"{cmd}: gpuspy --help lists its formats", str(formats))
    block = option_block(text, "--format")
    same(f"{cmd} --help: its --format lists the formats", want,
         want & set(re.findall(r"[\w-]+", block)))
    for where, lists in ((f"{cmd}: gpuspy(1) SYNOPSIS", man_formats(syn)),
                         (f"gpuspy-{cmd}(1) SYNOPSIS",
                          man_formats("\n".join(re.findall(r"^\*gpuspy " + cmd + r"\*.*$",
                                                           psec.get("SYNOPSIS", ""), re.M)))),
                         (f"gpuspy-{cmd}(1) OPTIONS: --format",
                          man_formats("\n".join(re.findall(r"^\*-f\*, \*--format\*.*$",
                                                           psec.get("OPTIONS", ""), re.M))))):
        check(len(lists) == 1, f"{where}: lists the formats once", str(lists))
        for have in lists:
            same(f"{where}: the formats", want, have)
    # gpuspy(1) COMMANDS may say _format_ and leave the list to the page
    for have in man_formats(entry):
        same(f"{cmd}: gpuspy(1) COMMANDS: the formats", want, have)
    if cmd == "report":
        # each but the default (THE TEXT REPORT) described by the page
        for f in formats[1:]:
            check(f"*--format {f}*" in page, f"report --format {f}: described in gpuspy-report(1)")
        # the README's list of outputs: "- `--format csv`, `pprof`: ..."
        lines = "\n".join(l for l in readme.split("\n") if l.startswith("- `--format "))
        listed = set(re.findall(r"`(?:--format )?([\w-]+)`", lines))
        same("report: the formats in README.md's \"What it shows\"", set(formats[1:]), listed)
    m = re.search(r"--format ([\w-]+(?:\|[\w-]+)*)", usage)
    same(f"{cmd}: docs/usage.md's \"Commands\": the formats", want,
         set(m.group(1).split("|")) if m else set())
    same(f"{cmd}: bash completion of --format", want,
         bash_complete(bash, ["gpuspy", cmd, "--format", ""]))
    m = re.search(r"--format=\}'\[[^]]*\]:format:\(([^)]*)\)", zsh)
    same(f"{cmd}: zsh completion of --format", want, set(m.group(1).split()) if m else set())


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
    readme = open(os.path.join(src, "README.md"), encoding="utf-8").read()

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
        formats = help_formats(top_usage)
        if "--format" in opts:
            check_formats(cmd, formats, text, syn, entry.split("\n", 1)[0], page, psec,
                          usage.get(cmd, ""), bash, zsh.get(cmd, ""), readme)
        if cmd == "export":
            # export's formats are its options with an argument, the rows
            # of format.c with one: the checks above hold them; the README
            # names each
            for o in sorted(set(opts) - {"--help", "--step", "--top", "--strict"}):
                check(f"`gpuspy export {o}" in readme, f"export {o}: in README.md")
        same(f"{cmd}: bash completion", want | {"--help"},
             bash_complete(bash, ["gpuspy", cmd, "--"]))
        check(cmd in zsh, f"{cmd}: in the zsh completion")
        same(f"{cmd}: zsh completion", want | {"--help"}, longs(zsh.get(cmd, "")))

    return harness.done()


if __name__ == "__main__":
    sys.exit(main())
