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
"""
from ._lib import Library, Scope, human, library, why

__all__ = ["Library", "Scope", "human", "library", "why"]

