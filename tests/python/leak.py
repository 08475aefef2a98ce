"""Leaks device memory from known Python lines, through ctypes, for
tests/python/run.py.  Usage: leak.py LIBPYALLOC"""
import ctypes
import sys

lib = ctypes.CDLL(sys.argv[1])
lib.pyalloc_leak.argtypes = [ctypes.c_size_t, ctypes.c_int]


class Model:
    def grow(self, n):
        return lib.pyalloc_leak(1 << 20, n)  # LINE grow


def leak_from_function():
    return lib.pyalloc_leak(3 << 20, 1)  # LINE leak_from_function


def outer():
    return [Model().grow(2) for _ in range(1)]


if leak_from_function() != 0 or outer() != [0]:
    sys.exit(1)
print("leak.py: done")
