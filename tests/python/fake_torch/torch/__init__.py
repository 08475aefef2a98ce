"""A stand-in for the part of PyTorch that gpuspy's PyTorch view uses
(src/preload/torch_view.py): torch.cuda.is_initialized(),
get_allocator_backend(), memory._record_memory_history() and
memory._snapshot(), with blocks shaped as PyTorch 2.x returns them (state,
size, frames innermost first: filename, name, line).  Tensors live in a
pretend pool; their stacks are recorded only once history is on, as in
PyTorch.  The counters that gpuspy's framework counters read
(src/preload/fw_view.py: device_count(), memory_allocated(),
memory_reserved(), max_memory_allocated(), max_memory_reserved()) agree
with the snapshot's segments, as PyTorch's do.  Loading it also loads a library named libc10_cuda.so (the path in
FAKE_C10_CUDA), which is how libgpuspy tells a PyTorch process."""
import ctypes
import os
import sys

_c10 = ctypes.CDLL(os.environ["FAKE_C10_CUDA"])

SEGMENT = 2 << 20
# FAKE_TORCH_SEGMENTS=1: the pool's segments come from the fake CUDA runtime
# (libc10_cuda.so's alloc_block, named as the caching allocator's), and
# the pool keeps them until the process ends, as PyTorch's does
_SEGMENTS = os.environ.get("FAKE_TORCH_SEGMENTS") == "1"
_grow = getattr(_c10, "_ZN3c104cuda20CUDACachingAllocator6Native22DeviceCachingAllocator11alloc_blockEm",
                None) if _SEGMENTS else None
if _grow is not None:
    _grow.argtypes = [ctypes.c_size_t]


class _Memory:
    def __init__(self):
        self.history = None
        self.live = {}          # id -> (size, frames)
        self.segments = 0       # bytes taken from CUDA (FAKE_TORCH_SEGMENTS)

    def _record_memory_history(self, enabled="all", context="all", stacks="all",
                               max_entries=sys.maxsize):
        self.history = (enabled, context, stacks)

    def totals(self):
        used = sum(size for size, _ in self.live.values())
        return used, -(-used // SEGMENT) * SEGMENT + SEGMENT

    def _snapshot(self):
        blocks = [{"size": size, "requested_size": size, "state": "active_allocated",
                   "frames": frames} for size, frames in self.live.values()]
        used = sum(b["size"] for b in blocks)
        total = -(-used // SEGMENT) * SEGMENT + SEGMENT
        blocks.append({"size": total - used, "state": "inactive", "frames": []})
        return {"segments": [{"device": 0, "address": 0, "total_size": total,
                              "allocated_size": used, "blocks": blocks}],
                "device_traces": [[]]}


class _Cuda:
    def __init__(self):
        self.memory = _Memory()
        self.initialized = False
        self.peak = [0, 0]

    def is_initialized(self):
        return self.initialized

    def get_allocator_backend(self):
        return os.environ.get("FAKE_TORCH_BACKEND", "native")

    def device_count(self):
        return 1

    def memory_allocated(self, device=None):
        return self.memory.totals()[0] if self.initialized else 0

    def memory_reserved(self, device=None):
        return self.memory.totals()[1] if self.initialized else 0

    def max_memory_allocated(self, device=None):
        return self.peak[0]

    def max_memory_reserved(self, device=None):
        return self.peak[1]


cuda = _Cuda()


class Tensor:
    """NBYTES of the pretend pool, held until the object goes."""

    def __init__(self, nbytes):
        frames = []
        if cuda.memory.history:
            f = sys._getframe(2)        # the caller of torch.empty
            while f is not None:
                frames.append({"filename": f.f_code.co_filename, "name": f.f_code.co_name,
                               "line": f.f_lineno})
                f = f.f_back
        cuda.memory.live[id(self)] = (nbytes, frames)
        cuda.peak = [max(a, b) for a, b in zip(cuda.peak, cuda.memory.totals())]
        while _grow is not None and cuda.memory.segments < cuda.memory.totals()[1]:
            if _grow(SEGMENT) != 0:
                raise RuntimeError("CUDA out of memory (pretend)")
            cuda.memory.segments += SEGMENT

    def __del__(self):
        cuda.memory.live.pop(id(self), None)


def empty(nbytes):
    cuda.initialized = True
    return Tensor(nbytes)
