#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The deployment examples of contrib/ are valid and call gpuspy as it is.

    test_contrib.py GPUSPY LIBGPUSPY SOURCE_DIR

- contrib/jupyter/kernel.json: JSON, a kernel spec (argv with
  {connection_file}, display_name, language, env of strings) that
  preloads the library by the name it is installed as.
- contrib/k8s/*.yaml: YAML (python3-yaml), each document a Kubernetes
  object with apiVersion, kind and a name; the pods preload the library
  at the path the Dockerfile installs it to, write their run directory
  into a volume that gpuspy exporter reads at the same place, and announce
  the exporter's port (prometheus.io/port, the container's port and
  --listen agree, on an address other than loopback).
- contrib/docker/Dockerfile: its ENTRYPOINT and CMD run by /bin/sh as
  Docker runs them, and contrib/slurm/gpuspy.sbatch run by bash, with
  gpuspy, srun and python3 replaced by stand-ins that record their
  arguments and environment: the run directory, the ranks from Slurm's
  task ids, the job's status kept.  Its build packages are among those of
  scripts/setup, its meson options among meson_options.txt.
- Every gpuspy command line of these files (the recorded ones, and the
  commands of the Kubernetes containers) uses only commands and options
  that 'gpuspy --help' and 'gpuspy COMMAND --help' list; a build without
  'exporter' has it checked against its usage in docs/integrations.md.

Exit 77 (skipped) when only python3-yaml is missing and all else passed.
"""
import json
import os
import re
import shlex
import stat
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402


# Commands that docs/integrations.md describes and that a build may
# not have yet: their options as documented.  Where the build has the
# command, its own --help is what counts.
DOCUMENTED = {"exporter": {"--listen": True}}


def help_text(gpuspy, *args):
    p = subprocess.run([gpuspy, *args, "--help"], capture_output=True, text=True, timeout=30)
    return p.stdout if p.returncode == 0 else ""


def options(text):
    """{-s or --long: takes an argument} of a --help's option lines."""
    out = {}
    for m in re.finditer(r"^\s+(?:(-\w), )?(--[\w-]+)( [A-Z]+)?", text, re.M):
        for name in (m.group(1), m.group(2)):
            if name:
                out[name] = m.group(3) is not None
    return out


class Gpuspy:
    def __init__(self, gpuspy):
        top = help_text(gpuspy)
        section = top.split("Commands:\n", 1)[1].split("\n\n", 1)[0] if top else ""
        self.commands = set(re.findall(r"^  ([a-z]+)\b", section, re.M))
        self.own = options(top.split("Options:\n", 1)[1]) if "Options:\n" in top else {}
        self.opts = {c: options(help_text(gpuspy, c)) for c in self.commands}
        self.noted = set()
        check(len(self.commands) >= 6, "gpuspy --help lists its commands", self.commands)

    def problems(self, argv):
        """What is wrong with ARGV, a gpuspy command line (argv[0] gpuspy)."""
        args = argv[1:]
        if not args:
            return ["no command"]
        if args[0].startswith("-"):
            bad = [a for a in args if a.startswith("-") and a not in self.own]
            return [f"gpuspy has no option {a}" for a in bad]
        cmd, rest = args[0], args[1:]
        if cmd in self.commands:
            opts = self.opts[cmd]
        elif cmd in DOCUMENTED:
            if cmd not in self.noted:
                print(f"note: this gpuspy has no '{cmd}' yet: checked against its documented "
                      "usage")
                self.noted.add(cmd)
            opts = DOCUMENTED[cmd]
        else:
            return [f"gpuspy has no command {cmd!r}"]
        out, i = [], 0
        while i < len(rest):
            a = rest[i]
            if a == "--":
                break
            if a.startswith("-") and a != "-":
                name = a.split("=", 1)[0]
                if name not in opts:
                    out.append(f"gpuspy {cmd} has no option {name}")
                elif opts[name] and "=" not in a:
                    i += 1
            elif cmd == "run":
                break  # the command to run starts here
            i += 1
        return out

    def check_argv(self, where, argv):
        line = " ".join(shlex.join(argv).split())
        check(not self.problems(argv), f"{where}: {line}", self.problems(argv))


STUB = r"""#!/bin/bash
# a stand-in: one record per call (\x1e), its arguments, then (\x1d) the
# environment asked for, fields apart by \x1f: arguments may hold newlines
{
	printf '%s' "$(basename "$0")"
	printf '\x1f%s' "$@"
	printf '\x1d'
	for v in $STUB_ENV; do printf '\x1f%s=%s' "$v" "${!v-}"; done
	printf '\x1e'
} >> "$STUB_LOG"
"""
RUNS = {
    # gpuspy run [OPTIONS] -- CMD: runs CMD
    "gpuspy": 'if [ "$1" = run ]; then\n\twhile [ "$1" != "--" ]; do shift; done\n'
              '\tshift\n\texec "$@"\nfi\n',
    # srun [OPTIONS] CMD: two tasks, as Slurm numbers them
    "srun": 'while [[ $1 == -* ]]; do shift; done\nstatus=0\nfor t in 0 1; do\n'
            '\tSLURM_PROCID=$((t + 4)) SLURM_LOCALID=$t SLURM_NTASKS=8 "$@" || status=$?\n'
            'done\nexit $status\n',
    "python3": "exit ${STUB_STATUS:-0}\n",
}


def stubs(tmp):
    d = os.path.join(tmp, "bin")
    os.mkdir(d)
    for name, body in RUNS.items():
        path = os.path.join(d, name)
        with open(path, "w") as f:
            f.write(STUB + body)
        os.chmod(path, stat.S_IRWXU)
    return d


def calls(log):
    """[(argv, {var: value})] of the stand-ins' log."""
    out = []
    text = open(log).read() if os.path.exists(log) else ""
    for rec in text.split("\x1e")[:-1]:
        a, _, e = rec.partition("\x1d")
        env = dict(x.split("=", 1) for x in e.split("\x1f")[1:])
        out.append((a.split("\x1f"), env))
    return out


def run_stubbed(tmp, argv, env, cwd):
    log = os.path.join(tmp, "log")
    if os.path.exists(log):
        os.unlink(log)
    full = {"PATH": stubs_dir + ":/usr/bin:/bin", "STUB_LOG": log,
            "STUB_ENV": "RANK LOCAL_RANK WORLD_SIZE GPUSPY_OUTPUT_DIR LD_PRELOAD"}
    full.update(env)
    p = subprocess.run(argv, env=full, cwd=cwd, capture_output=True, text=True, timeout=60)
    return p, calls(log)


def dockerfile(path):
    """[(INSTRUCTION, text)] of a Dockerfile, continuation lines joined."""
    out, cur = [], ""
    for line in open(path).read().split("\n"):
        if not cur and (line.startswith("#") or not line.strip()):
            continue
        if line.rstrip().endswith("\\"):
            cur += line.rstrip()[:-1] + " "
            continue
        cur += line
        word, _, text = cur.strip().partition(" ")
        out.append((word.upper(), text.strip()))
        cur = ""
    return out


def exec_form(text):
    try:
        v = json.loads(text)
    except ValueError:
        return None
    return v if isinstance(v, list) and all(isinstance(x, str) for x in v) else None


def check_docker(src, gp, tmp):
    path = os.path.join(src, "contrib", "docker", "Dockerfile")
    ins = dockerfile(path)
    known = {"FROM", "RUN", "COPY", "ADD", "ENV", "ARG", "WORKDIR", "ENTRYPOINT", "CMD", "EXPOSE",
             "VOLUME", "LABEL", "USER", "SHELL", "HEALTHCHECK", "STOPSIGNAL", "ONBUILD"}
    check(all(w in known for w, _ in ins), "Dockerfile: only Dockerfile instructions",
          [w for w, _ in ins if w not in known])
    ep = [exec_form(t) for w, t in ins if w == "ENTRYPOINT"]
    cmd = [exec_form(t) for w, t in ins if w == "CMD"]
    check(len(ep) == 1 and ep[0] and len(cmd) == 1 and cmd[0],
          "Dockerfile: one ENTRYPOINT and one CMD, in exec form (JSON arrays)", (ep, cmd))

    # the library's path, from the meson setup of its build stage
    setup = next((t for w, t in ins if w == "RUN" and "meson setup" in t), "")
    prefix = re.search(r"--prefix[= ](\S+)", setup)
    libdir = re.search(r"--libdir[= ](\S+)", setup)
    check(prefix and libdir, "Dockerfile: meson setup with --prefix and --libdir", setup)
    lib = os.path.join(prefix.group(1), libdir.group(1), "libgpuspy.so") if prefix and libdir \
        else None
    meson_opts = set(re.findall(r"option\('(\w+)'", open(os.path.join(src, "meson_options.txt"))
                                .read()))
    used = set(re.findall(r"-D(\w+)=", setup))
    check(used <= meson_opts, "Dockerfile: its -D options are meson_options.txt's",
          used - meson_opts)
    setup_pkgs = set(re.search(r"^pkgs=\(([^)]*)\)", open(os.path.join(src, "scripts", "setup"))
                               .read(), re.M).group(1).split())
    build_stage = next((t for w, t in ins if w == "RUN" and "apt-get install" in t), "")
    pkgs = {w for w in build_stage.split("--no-install-recommends", 1)[-1].split("&&")[0].split()
            if not w.startswith("-")}
    check(pkgs and pkgs <= setup_pkgs, "Dockerfile: the build stage's packages are among "
          "scripts/setup's", pkgs - setup_pkgs)
    envs = " ".join(t for w, t in ins if w == "ENV")
    check("GPUSPY_PROMETHEUS=0.0.0.0:" in envs, "Dockerfile: the endpoint listens beyond the "
          "container's loopback, which docker run -p cannot reach", envs)
    # the alternative in the comment preloads the same library
    alt = re.findall(r"LD_PRELOAD=(\S+)", open(path).read())
    check(alt and all(a == lib for a in alt), f"Dockerfile: LD_PRELOAD names {lib}", alt)

    # ENTRYPOINT + CMD as Docker runs them; HOSTNAME is the container id
    if ep and ep[0] and cmd and cmd[0]:
        vol = os.path.join(tmp, "vol")
        argv = [a.replace("/gpuspy-out", vol) for a in ep[0]] + cmd[0]
        p, seen = run_stubbed(tmp, argv, {"HOSTNAME": "3f2a1b0c9d8e"}, tmp)
        check(p.returncode == 0, "Dockerfile: the entrypoint runs", p.stderr)
        g = [a for a, _ in seen if a[0] == "gpuspy"]
        py = [a for a, _ in seen if a[0] == "python3"]
        check(len(g) == 1 and g[0][1:] == ["run", "-o", vol + "/3f2a1b0c9d8e", "--", *cmd[0]],
              "Dockerfile: gpuspy run -o <volume>/<container id> -- CMD", seen)
        check(py == [cmd[0]], "Dockerfile: CMD runs, under gpuspy run", seen)
        for a in g:
            gp.check_argv("Dockerfile", a)
    return lib


def check_sbatch(src, gp, tmp):
    path = os.path.join(src, "contrib", "slurm", "gpuspy.sbatch")
    text = open(path).read()
    p = subprocess.run(["bash", "-n", path], capture_output=True, text=True)
    check(p.returncode == 0, "gpuspy.sbatch: bash -n", p.stderr)
    check(re.search(r"^#SBATCH --gpus", text, re.M), "gpuspy.sbatch: asks for GPUs")
    sub = os.path.join(tmp, "submit")
    os.mkdir(sub)
    env = {"SLURM_JOB_ID": "4242", "SLURM_SUBMIT_DIR": sub, "STUB_STATUS": "3"}
    p, seen = run_stubbed(tmp, ["bash", path], env, sub)
    run_dir = os.path.join(sub, "gpuspy-runs", "4242")
    check(p.returncode == 3, "gpuspy.sbatch: ends with the job's status", (p.returncode, p.stderr))
    g = [(a, e) for a, e in seen if a[0] == "gpuspy"]
    check([a[1] for a, _ in g] == ["run", "report", "merge"],
          "gpuspy.sbatch: gpuspy run, then report and merge", seen)
    check(all(e.get("GPUSPY_OUTPUT_DIR") == run_dir for _, e in g),
          "gpuspy.sbatch: GPUSPY_OUTPUT_DIR is one directory per job", g)
    check(all(a[-1] == run_dir for a, _ in g[1:]), "gpuspy.sbatch: report and merge read it", g)
    py = [e for a, e in seen if a[0] == "python3"]
    check([(e.get("RANK"), e.get("LOCAL_RANK"), e.get("WORLD_SIZE")) for e in py] ==
          [("4", "0", "8"), ("5", "1", "8")],
          "gpuspy.sbatch: each task's RANK, LOCAL_RANK and WORLD_SIZE from Slurm's", py)
    check(all(e.get("GPUSPY_OUTPUT_DIR") == run_dir for e in py),
          "gpuspy.sbatch: the tasks write into the job's run directory", py)
    for a, _ in g:
        gp.check_argv("gpuspy.sbatch", a)


def check_kernel(src, lib):
    path = os.path.join(src, "contrib", "jupyter", "kernel.json")
    try:
        k = json.load(open(path))
    except ValueError as e:
        check(False, "kernel.json is JSON", e)
        return
    argv = k.get("argv")
    check(isinstance(argv, list) and argv and all(isinstance(a, str) for a in argv),
          "kernel.json: argv is a list of strings", argv)
    check(any("{connection_file}" in a for a in argv or []),
          "kernel.json: argv passes {connection_file}", argv)
    check(isinstance(k.get("display_name"), str) and k["display_name"],
          "kernel.json: display_name")
    check(k.get("language") == "python", "kernel.json: language python")
    env = k.get("env")
    check(isinstance(env, dict) and all(isinstance(v, str) for v in env.values()),
          "kernel.json: env maps names to strings", env)
    pre = (env or {}).get("LD_PRELOAD", "")
    check(pre == os.path.basename(lib), "kernel.json: LD_PRELOAD names the library as "
          "installed (ldconfig finds it by its name)", pre)


def containers(pod):
    spec = pod.get("spec", {})
    return spec.get("initContainers", []) + spec.get("containers", [])


def mounts(c, volumes):
    """{mountPath: volume} of container C."""
    return {m["mountPath"]: volumes.get(m["name"]) for m in c.get("volumeMounts", [])}


def place(path, ms):
    """(volume, path inside it) of PATH, by the mounts MS."""
    for mp, vol in ms.items():
        if path == mp or path.startswith(mp.rstrip("/") + "/"):
            return id(vol), os.path.relpath(path, mp)
    return None


def check_k8s(src, gp, lib):
    try:
        import yaml
    except ImportError:
        print("python3-yaml is not installed: contrib/k8s not checked")
        return False
    d = os.path.join(src, "contrib", "k8s")
    k8s_env = dict(re.findall(r'^#define (PROM_ENV_\w+)\s+"([^"]+)"',
                              open(os.path.join(src, "src", "common", "prom.h")).read(), re.M))
    docs = {}
    for name in sorted(os.listdir(d)):
        if name.endswith(".yaml"):
            try:
                docs[name] = [x for x in yaml.safe_load_all(open(os.path.join(d, name))) if x]
            except yaml.YAMLError as e:
                check(False, f"{name} is YAML", e)
    check({"pod-sidecar.yaml", "daemonset.yaml"} <= set(docs), "contrib/k8s has its examples",
          sorted(docs))
    exporters, writers = [], []
    for name, objs in docs.items():
        for o in objs:
            what = f"{name}: {o.get('kind')} {o.get('metadata', {}).get('name')}"
            check(isinstance(o.get("apiVersion"), str) and isinstance(o.get("kind"), str) and
                  o.get("metadata", {}).get("name"), f"{what}: apiVersion, kind, name")
            pod = o if o.get("kind") == "Pod" else o.get("spec", {}).get("template", {})
            meta = pod.get("metadata", {})
            volumes = {v["name"]: v for v in pod.get("spec", {}).get("volumes", [])}
            for c in containers(pod):
                check(c.get("name") and c.get("image"), f"{what}: container {c.get('name')} "
                      "has a name and an image")
                argv = c.get("command", []) + c.get("args", [])
                for m in c.get("volumeMounts", []):
                    check(m.get("name") in volumes, f"{what}: {c['name']} mounts a volume of "
                          "the pod", m)
                env = {e["name"]: e.get("value") for e in c.get("env", [])}
                if argv[:2] == ["gpuspy", "exporter"]:
                    gp.check_argv(what, argv)
                    listen = argv[argv.index("--listen") + 1] if "--listen" in argv else ""
                    host, _, port = listen.rpartition(":")
                    ann = meta.get("annotations", {})
                    ports = [str(p.get("containerPort")) for p in c.get("ports", [])]
                    check(ann.get("prometheus.io/scrape") == "true" and
                          ann.get("prometheus.io/port") == port and port in ports,
                          f"{what}: prometheus.io/port, containerPort and --listen agree",
                          (ann, ports, listen))
                    check(host not in ("", "127.0.0.1", "localhost", "[::1]"),
                          f"{what}: the exporter listens where Prometheus reaches the pod",
                          listen)
                    exporters.append((what, place(argv[2], mounts(c, volumes)), volumes))
                elif "LD_PRELOAD" in env:
                    check(env["LD_PRELOAD"] == lib, f"{what}: {c['name']} preloads {lib}",
                          env["LD_PRELOAD"])
                    check(c.get("resources", {}).get("limits", {}).get("nvidia.com/gpu"),
                          f"{what}: {c['name']} asks for a GPU")
                    # the labels pod, namespace, container: the variables
                    # prom.h names, from the downward API and the name
                    refs = {e["name"]: e.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
                            for e in c.get("env", [])}
                    check(refs.get(k8s_env["PROM_ENV_POD"]) == "metadata.name" and
                          refs.get(k8s_env["PROM_ENV_NAMESPACE"]) == "metadata.namespace" and
                          env.get(k8s_env["PROM_ENV_CONTAINER"]) == c["name"],
                          f"{what}: {c['name']} sets the pod, namespace and container "
                          "variables of prom.h from the downward API", (refs, env))
                    out = env.get("GPUSPY_OUTPUT_DIR") or ""
                    check(out.startswith("/"), f"{what}: GPUSPY_OUTPUT_DIR absolute", out)
                    writers.append((what, place(out, mounts(c, volumes)), volumes))
    check(len(exporters) == 2 and len(writers) == 2,
          "two exporters (sidecar, DaemonSet) and two pods that write", (exporters, writers))

    def where(p, volumes):
        """A key for the storage a (volume, path) lands on: the pod's
        emptyDir, or the node's hostPath."""
        if p is None:
            return None
        vol = next(v for v in volumes.values() if id(v) == p[0])
        if "hostPath" in vol:
            return ("node", os.path.normpath(os.path.join(vol["hostPath"]["path"], p[1])))
        return ("pod", vol.get("name"), p[1]) if "emptyDir" in vol else None

    for ew, ep, ev in exporters:
        e = where(ep, ev)
        same = [ww for ww, wp, wv in writers if where(wp, wv) == e and
                (e[0] == "node" or ww.split(":")[0] == ew.split(":")[0])]
        check(e is not None and same, f"{ew}: reads the run directory a GPU pod writes", e)
    return True


def main():
    global stubs_dir
    gpuspy, libgpuspy, src = (os.path.abspath(a) for a in sys.argv[1:4])
    gp = Gpuspy(gpuspy)
    # the checker itself: it must refuse what gpuspy does not have
    check(gp.problems(["gpuspy", "run", "--bogus", "--", "true"]) and
          gp.problems(["gpuspy", "frobnicate"]) and
          gp.problems(["gpuspy", "exporter", "DIR", "--port", "1"]) and
          not gp.problems(["gpuspy", "run", "-o", "d", "--", "x", "--bogus"]),
          "the command-line checker refuses unknown commands and options")
    with tempfile.TemporaryDirectory() as tmp:
        stubs_dir = stubs(tmp)
        lib = check_docker(src, gp, tmp)
        check(os.path.basename(libgpuspy) == "libgpuspy.so", "the library is libgpuspy.so",
              libgpuspy)
        check_sbatch(src, gp, tmp)
    check_kernel(src, lib or "")
    have_yaml = check_k8s(src, gp, lib)
    return harness.done(skipped=not have_yaml)


stubs_dir = None

if __name__ == "__main__":
    sys.exit(main())
