"""A stand-in for the part of CuPy that gpuspy's framework counters use
(src/preload/3-out/fw_view.py): get_default_memory_pool() (used_bytes(),
total_bytes(), n_free_blocks(), of the current device),
get_default_pinned_memory_pool() (n_free_blocks(), total_bytes()) and
cupy.cuda.runtime.getDevice().  The figures are POOL and PINNED;
FAKE_FW_RAISE=cupy makes used_bytes() raise."""
import ctypes as _ctypes
import os as _os

# importing CuPy loads its extension modules, cupy/_core/core.cpython-*.so:
# FAKE_FW_NATIVE is a directory laid out so
# (tests/python/fw_counters.py), unless FAKE_FW_NO_NATIVE is set
if not _os.environ.get("FAKE_FW_NO_NATIVE"):
    _ctypes.CDLL(_os.path.join(_os.environ["FAKE_FW_NATIVE"], "cupy", "_core",
                               "core.cpython-fake.so"))

import os

from . import cuda  # noqa: F401

POOL = {"used": 5 << 20, "total": 12 << 20, "free_blocks": 3}
PINNED = {"total": 2 << 20, "free_blocks": 4}


class _Pool:
    def used_bytes(self):
        if os.environ.get("FAKE_FW_RAISE") == "cupy":
            raise RuntimeError("pretend failure in used_bytes")
        return POOL["used"]

    def total_bytes(self):
        return POOL["total"]

    def n_free_blocks(self):
        return POOL["free_blocks"]


class _Pinned:
    def n_free_blocks(self):
        return PINNED["free_blocks"]

    def total_bytes(self):
        return PINNED["total"]


_pool, _pinned = _Pool(), _Pinned()


def get_default_memory_pool():
    return _pool


def get_default_pinned_memory_pool():
    return _pinned
