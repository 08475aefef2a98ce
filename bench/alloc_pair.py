"""bench/alloc-bench's Python caller: prints ns per alloc/free pair made
by C code called through ctypes from a few Python frames deep."""
import ctypes, sys

lib = ctypes.CDLL(sys.argv[1])
lib.pyalloc_pairs.restype = ctypes.c_double
lib.pyalloc_pairs.argtypes = [ctypes.c_long]


def step(n):
    return lib.pyalloc_pairs(n)


def train(n):
    step(n // 10)  # warm-up
    return step(n)


print(f"{train(int(sys.argv[2])):.1f}")
