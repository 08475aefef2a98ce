# SPDX-License-Identifier: MIT
"""gpuspy: this process's GPU memory, live, from the preloaded libgpuspy.so.

Standard library only.  In a process started with the library preloaded
(LD_PRELOAD=libgpuspy.so, gpuspy run, the Jupyter kernel of
contrib/jupyter):

    import gpuspy
    lib = gpuspy.library()          # None without the library: gpuspy.why()
    lib.totals().live_bytes         # GPU memory live now
    with lib.scope() as s:          # a cell, a test
        work()
        s.read().peak_bytes         # the peak inside it
        s.grown()                   # the sites that kept memory, by their names

In IPython or Jupyter: %load_ext gpuspy (gpuspy.notebook).  In pytest:
pytest --gpuspy (gpuspy.pytest_plugin).
"""
from ._lib import Library, Scope, absent, human, library, parse_size, why

__all__ = ["Library", "Scope", "absent", "human", "library", "parse_size", "why",
           "load_ipython_extension", "unload_ipython_extension"]


def load_ipython_extension(ipython):
    """%load_ext gpuspy: a line after each cell, %gpuspy, %gpuspy plot."""
    from . import notebook
    notebook.load(ipython)


def unload_ipython_extension(ipython):
    from . import notebook
    notebook.unload(ipython)
