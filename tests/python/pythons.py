"""The CPython 3.10-3.13 interpreters of this machine, for the tests here."""
import glob
import os
import shutil


def interpreters():
    found = {}
    for minor in (10, 11, 12, 13):
        # pyenv's versions before PATH: its shims fail for versions not selected.
        cands = sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/3.{minor}.*/bin/python3.{minor}")))
        cands += [f"/usr/bin/python3.{minor}", shutil.which(f"python3.{minor}")]
        seen = []
        for c in cands:
            if c and "/shims/" not in c and os.access(c, os.X_OK) and os.path.realpath(c) not in map(os.path.realpath, seen):
                seen.append(c)
        if seen:
            found[minor] = seen
    return found
