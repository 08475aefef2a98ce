#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The CI examples of contrib/ci run as their CI systems would run them,
with the real gpuspy over the fake driver:

 - contrib/ci/github-actions.yml: each 'run' step by bash -e -o pipefail,
   as GitHub Actions runs it, with the job's env (its ${{ }} expressions
   given the values Actions would give them; none may be in a script);
 - contrib/ci/gitlab-ci.yml: the job's script lines in one bash -e, with
   its variables and GitLab's predefined ones;

in a clone of a repository made here, a branch against main: the
baseline is made from main in a worktree and records main's commit, the
branch's run its own; a branch that leaks more than its budget fails the
gate with a JUnit file (where the upload step and artifacts:reports:junit
look for it) whose one failure names the site; a branch like main passes.

    test_ci_examples.py GPUSPY LIBGPUSPY FAKE_DIR LEAKER SOURCE_DIR

Exit 77 (skipped) when python3-yaml or git is missing.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import junit_check  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

gpuspy, lib, fake, leaker, src = [os.path.abspath(a) for a in sys.argv[1:6]]
try:
    import yaml
except ImportError:
    harness.skip("python3-yaml is not installed")
if not shutil.which("git"):
    harness.skip("no git")


BIN = os.path.dirname(gpuspy)
BASE_ENV = {k: v for k, v in os.environ.items()
            if not k.startswith(("GPUSPY_", "GIT_", "GITHUB_", "CI_")) and
            k not in ("LD_PRELOAD", "RANK", "LOCAL_RANK")}
BASE_ENV.update(PATH=BIN + ":" + os.environ.get("PATH", "/usr/bin:/bin"), LD_LIBRARY_PATH=fake,
                GPUSPY_LIBRARY=lib, GPUSPY_QUIET="1", LEAKER=leaker,
                GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.org",
                GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.org")
TRAIN = "sh ./train.sh"
# keep_output may hold 1 MiB at its peak; the branch that leaks makes 24
# allocations of 64 KiB (1.5 MiB), main 8 (512 KiB)
BUDGET = "keep_output (*)  1 MiB\n*  64 MiB\n"


def git(cwd, *args):
    p = subprocess.run(["git"] + list(args), cwd=cwd, env=BASE_ENV, capture_output=True,
                       text=True, timeout=60)
    if p.returncode != 0:
        sys.exit("git %s: %s" % (" ".join(args), p.stderr))
    return p.stdout.strip()


def repository(tmp, steps_branch):
    """A clone of an origin whose main runs the leaker 8 steps, on a branch
    that runs it STEPS_BRANCH steps: (clone, main's sha, the branch's)."""
    origin, seed, work = (os.path.join(tmp, n) for n in ("origin.git", "seed", "work"))
    git(tmp, "init", "-q", "--bare", "-b", "main", origin)
    git(tmp, "clone", "-q", origin, seed)
    os.makedirs(os.path.join(seed, "ci"))
    with open(os.path.join(seed, "ci", "gpu-budget.txt"), "w") as f:
        f.write(BUDGET)
    with open(os.path.join(seed, "train.sh"), "w") as f:
        f.write('exec "$LEAKER" 8 1 64\n')
    git(seed, "add", ".")
    git(seed, "commit", "-q", "-m", "main")
    git(seed, "push", "-q", "origin", "HEAD:main")
    main = git(seed, "rev-parse", "HEAD")
    git(tmp, "clone", "-q", origin, work)
    git(work, "checkout", "-q", "-b", "branch")
    with open(os.path.join(work, "train.sh"), "w") as f:
        f.write('exec "$LEAKER" %d 1 64\n' % steps_branch)
    git(work, "commit", "-q", "-a", "--allow-empty", "-m", "branch")
    return work, main, git(work, "rev-parse", "HEAD")


def bash(script, env, cwd):
    return subprocess.run(["bash", "--noprofile", "--norc", "-e", "-o", "pipefail", "-c",
                           script], env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=120)


def junit_verdict(path, what):
    """The failed cases of the JUnit file at PATH: [(suite, name)]."""
    if not check(os.path.isfile(path), "%s: the JUnit file is where the report step reads it"
                 % what, path):
        return None
    root, problems = junit_check.parse(path)
    check(problems == [], "%s: JUnit of the schema's shape" % what, problems)
    return [(c[0], c[2]) for c in junit_check.cases(root) if c[3] is not None]


def run_commit(run_dir):
    try:
        return json.load(open(os.path.join(run_dir, "run.json"))).get("commit")
    except OSError:
        return None


def keep_output_name(run_dir):
    p = subprocess.run([gpuspy, "report", "--format", "json", run_dir], env=BASE_ENV,
                       capture_output=True, text=True, timeout=60)
    for s in json.loads(p.stdout)["sites"] if p.returncode == 0 else []:
        if (s.get("headline") or {}).get("function") == "keep_output":
            return s["name"]
    return None


def github(tmp, steps_branch, expect_fail):
    what = "github-actions.yml (%s)" % ("a branch over budget" if expect_fail else
                                         "a branch like main")
    wf = yaml.safe_load(open(os.path.join(src, "contrib", "ci", "github-actions.yml")))
    job = next(iter(wf["jobs"].values()))
    work, main, branch = repository(tmp, steps_branch)
    runner_temp = os.path.join(tmp, "runner")
    os.mkdir(runner_temp)
    # the values Actions gives the job's expressions
    values = {"${{ github.event.pull_request.base.sha }}": main,
              "${{ runner.temp }}": runner_temp}
    env = dict(BASE_ENV, GITHUB_SHA=branch, GITHUB_WORKSPACE=work, RUNNER_TEMP=runner_temp)
    for k, v in job.get("env", {}).items():
        for e, val in values.items():
            v = v.replace(e, val)
        check("${{" not in v, "%s: env %s: an expression Actions evaluates" % (what, k), v)
        env[k] = v
    check(env.get("TRAIN"), "%s: TRAIN is the job's command" % what)
    env["TRAIN"] = TRAIN
    statuses = []
    for step in job["steps"]:
        if "run" not in step:
            continue
        check("${{" not in step["run"], "%s: step %s: no expression in its script (the "
              "values come through env)" % (what, step.get("name")), step["run"])
        if statuses and statuses[-1] != 0:
            break
        p = bash(step["run"], env, work)
        statuses.append(p.returncode)
        if p.returncode not in (0, 1):
            check(False, "%s: step %s ran" % (what, step.get("name")), p.stderr)
    check(len(statuses) == 3 and statuses[:2] == [0, 0] and
          statuses[2] == (1 if expect_fail else 0),
          "%s: both runs pass, the gate %s" % (what, "fails" if expect_fail else "passes"),
          statuses)
    runs = env["RUNS"]
    check(run_commit(os.path.join(runs, "main")) == main and
          run_commit(os.path.join(runs, "new")) == branch,
          "%s: the baseline records main's commit, the run the branch's" % what,
          (run_commit(os.path.join(runs, "main")), main, branch))
    report = next(s for s in job["steps"] if "junit" in s.get("uses", ""))
    upload = next(s for s in job["steps"] if "upload-artifact" in s.get("uses", ""))
    check(report.get("if") == "always()" and upload.get("if") == "always()",
          "%s: the report and the upload run when the gate fails" % what)
    path = os.path.join(work, report["with"]["report_paths"])
    check(report["with"]["report_paths"] in upload["with"]["path"],
          "%s: the JUnit file is uploaded too" % what)
    bad = junit_verdict(path, what)
    name = keep_output_name(os.path.join(runs, "new"))
    if expect_fail:
        check(bad is not None and [n for _, n in bad] == [name] and
              bad[0][0].startswith("gpuspy diff --budget"),
              "%s: one failure, the site over its budget by its name" % what, (bad, name))
    else:
        check(bad == [], "%s: no failure" % what, bad)


def gitlab(tmp, steps_branch, expect_fail):
    what = "gitlab-ci.yml (%s)" % ("a branch over budget" if expect_fail else
                                    "a branch like main")
    doc = yaml.safe_load(open(os.path.join(src, "contrib", "ci", "gitlab-ci.yml")))
    job = doc["gpu-memory"]
    work, main, branch = repository(tmp, steps_branch)
    env = dict(BASE_ENV, CI_PROJECT_DIR=work, CI_DEFAULT_BRANCH="main", CI_COMMIT_SHA=branch,
               CI_PIPELINE_SOURCE="merge_request_event")
    env.update({k: str(v) for k, v in job.get("variables", {}).items()})
    check(env.get("TRAIN"), "%s: TRAIN is the job's command" % what)
    env["TRAIN"] = TRAIN
    p = bash("\n".join(job["script"]), env, work)
    check(p.returncode == (1 if expect_fail else 0),
          "%s: the script %s" % (what, "fails at the gate" if expect_fail else "passes"),
          (p.returncode, p.stdout[-800:], p.stderr[-800:]))
    runs = os.path.join(work, "gpuspy-runs")
    check(run_commit(os.path.join(runs, "main")) == main and
          run_commit(os.path.join(runs, "new")) == branch,
          "%s: the baseline records main's commit, the run the branch's" % what)
    art = job["artifacts"]
    check(art.get("when") == "always", "%s: artifacts kept when the gate fails" % what)
    for pth in art.get("paths", []):
        check(os.path.exists(os.path.join(work, pth)), "%s: artifact %s exists" % (what, pth))
    bad = junit_verdict(os.path.join(work, art["reports"]["junit"]), what)
    name = keep_output_name(os.path.join(runs, "new"))
    if expect_fail:
        check(bad is not None and [n for _, n in bad] == [name],
              "%s: one failure, the site over its budget by its name" % what, (bad, name))
    else:
        check(bad == [], "%s: no failure" % what, bad)


def main():
    budget = open(os.path.join(src, "contrib", "ci", "gpu-budget.txt")).read()
    with tempfile.TemporaryDirectory(prefix="gpuspy-ci-") as tmp:
        # the example budget file is one gpuspy reads
        path = os.path.join(tmp, "example-budget.txt")
        with open(path, "w") as f:
            f.write(budget)
        fixtures = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures",
                                "process")
        p = subprocess.run([gpuspy, "diff", "--budget", path, fixtures, fixtures],
                           env=BASE_ENV, capture_output=True, text=True, timeout=60)
        check(p.returncode == 0, "contrib/ci/gpu-budget.txt: a budget gpuspy reads", p.stderr)
        for i, (fn, steps, fail) in enumerate(((github, 24, True), (github, 8, False),
                                               (gitlab, 24, True), (gitlab, 8, False))):
            d = os.path.join(tmp, "case%d" % i)
            os.mkdir(d)
            fn(d, steps, fail)
    return harness.done()


if __name__ == "__main__":
    sys.exit(main())
