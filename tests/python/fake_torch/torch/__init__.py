"""A stand-in for the part of PyTorch that gpuspy's PyTorch view uses
(src/preload/3-out/torch_view.py): torch.cuda.is_initialized(),
get_allocator_backend(), memory._record_memory_history() and
memory._snapshot(), with blocks shaped as PyTorch 2.x returns them (state,
size, frames innermost first: filename, name, line).  Tensors live in a
pretend pool; their stacks are recorded only once history is on, as in
PyTorch.  The counters that gpuspy's framework counters read
(src/preload/3-out/fw_view.py: device_count(), memory_allocated(),
memory_reserved(), max_memory_allocated(), max_memory_reserved()) agree
with the snapshot's segments, as PyTorch's do.  Loading it also loads a library named libc10_cuda.so (the path in
FAKE_C10_CUDA), which is how libgpuspy tells a PyTorch process.

With FAKE_TORCH_POOL=1 the pool is real: a caching allocator in small
over CUDA memory, its segments asked of the fake runtime by
c10_DeviceCachingAllocator_malloc in that library (tests/python/c10_pool.c),
as PyTorch's DeviceCachingAllocator asks cudaMalloc.  A tensor takes the
smallest free block that fits, split; a free block merges with its free
neighbours; a new segment is the request rounded up to 2 MiB.  When
cudaMalloc fails it gives back its wholly free segments and tries once
more, then calls the out-of-memory observers
(torch._C._cuda_attach_out_of_memory_observer) with (device, size,
total, free) and raises torch.cuda.OutOfMemoryError, as PyTorch does.
memory_stats() and memory._snapshot() describe that pool.

CUDA is initialized lazily, as torch.cuda._lazy_init does: at the first
tensor, under _initialization_lock, CUDA starts (libc10_cuda.so's
c10_cuda_init, the runtime's first call), then the calls queued in
torch.cuda._queued_calls run ((callable, traceback) pairs, in order).  With
FAKE_TORCH_IMPORT_S=S the import goes on after libc10_cuda.so is loaded, as
PyTorch's does for a second or more, running bytecode until a call is
queued or S seconds have passed.  FAKE_TORCH_NO_QUEUE=1: torch.cuda has no
such queue."""
import ctypes
import os
import sys
import threading
import time

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


class OutOfMemoryError(RuntimeError):
    pass


class _CModule:
    def __init__(self):
        self.observers = []

    def _cuda_attach_out_of_memory_observer(self, fn):
        self.observers.append(fn)


_C = _CModule()


def _frames(depth):
    frames = []
    f = sys._getframe(depth)
    while f is not None:
        frames.append({"filename": f.f_code.co_filename, "name": f.f_code.co_name,
                       "line": f.f_lineno})
        f = f.f_back
    return frames


class _Pool:
    """The caching allocator of FAKE_TORCH_POOL=1 (see above)."""

    ALIGN = 512

    def __init__(self):
        vp, sz = ctypes.c_void_p, ctypes.c_size_t
        self.malloc_fn = _c10.c10_DeviceCachingAllocator_malloc
        self.malloc_fn.argtypes = [ctypes.POINTER(vp), sz]
        self.free_fn = _c10.c10_DeviceCachingAllocator_free
        self.free_fn.argtypes = [vp]
        self.info_fn = _c10.c10_mem_get_info
        self.info_fn.argtypes = [ctypes.POINTER(sz), ctypes.POINTER(sz)]
        self.segments = []      # {"ptr", "size", "blocks": [[offset, size, active, frames]]}
        self.ooms = self.retries = 0

    def _cuda_malloc(self, size):
        p = ctypes.c_void_p()
        return p.value if self.malloc_fn(ctypes.byref(p), size) == 0 else None

    def _release_cached(self):
        for seg in [s for s in self.segments if not any(b[2] for b in s["blocks"])]:
            self.free_fn(seg["ptr"])
            self.segments.remove(seg)

    def malloc(self, nbytes, frames):
        size = max(self.ALIGN, -(-nbytes // self.ALIGN) * self.ALIGN)
        fits = [(b[1], i, j) for i, s in enumerate(self.segments)
                for j, b in enumerate(s["blocks"]) if not b[2] and b[1] >= size]
        if fits:
            _, i, j = min(fits)
            seg = self.segments[i]
        else:
            seg_size = -(-size // SEGMENT) * SEGMENT
            ptr = self._cuda_malloc(seg_size)
            if ptr is None:
                self.retries += 1
                self._release_cached()
                ptr = self._cuda_malloc(seg_size)
            if ptr is None:
                self.ooms += 1
                free, total = ctypes.c_size_t(), ctypes.c_size_t()
                self.info_fn(ctypes.byref(free), ctypes.byref(total))
                for obs in _C.observers:
                    obs(0, size, total.value, free.value)
                raise OutOfMemoryError("CUDA out of memory. Tried to allocate %d bytes" % size)
            seg = {"ptr": ptr, "size": seg_size, "blocks": [[0, seg_size, False, []]]}
            self.segments.append(seg)
            j = 0
        b = seg["blocks"][j]
        if b[1] > size:
            seg["blocks"].insert(j + 1, [b[0] + size, b[1] - size, False, []])
        seg["blocks"][j] = [b[0], size, True, frames]
        return seg, b[0]

    def free(self, seg, offset):
        blocks = seg["blocks"]
        j = next(k for k, b in enumerate(blocks) if b[0] == offset)
        blocks[j] = [blocks[j][0], blocks[j][1], False, []]
        if j + 1 < len(blocks) and not blocks[j + 1][2]:
            blocks[j][1] += blocks.pop(j + 1)[1]
        if j > 0 and not blocks[j - 1][2]:
            blocks[j - 1][1] += blocks.pop(j)[1]

    def totals(self):
        reserved = sum(s["size"] for s in self.segments)
        used = sum(b[1] for s in self.segments for b in s["blocks"] if b[2])
        return used, reserved

    def snapshot(self):
        return {"segments": [{"device": 0, "address": s["ptr"], "total_size": s["size"],
                              "allocated_size": sum(b[1] for b in s["blocks"] if b[2]),
                              "blocks": [{"size": b[1], "requested_size": b[1],
                                          "state": "active_allocated" if b[2] else "inactive",
                                          "frames": b[3]} for b in s["blocks"]]}
                             for s in self.segments],
                "device_traces": [[]]}

    def stats(self):
        used, reserved = self.totals()
        inactive = sum(b[1] for s in self.segments for b in s["blocks"] if not b[2])
        return {"allocated_bytes.all.current": used, "reserved_bytes.all.current": reserved,
                "inactive_split_bytes.all.current": inactive, "num_ooms": self.ooms,
                "num_alloc_retries": self.retries}


_pool = _Pool() if os.environ.get("FAKE_TORCH_POOL") == "1" else None


class _Memory:
    def __init__(self):
        self.history = None
        self.live = {}          # id -> (size, frames)
        self.segments = 0       # bytes taken from CUDA (FAKE_TORCH_SEGMENTS)

    def _record_memory_history(self, enabled="all", context="all", stacks="all",
                               max_entries=sys.maxsize):
        self.history = (enabled, context, stacks)

    def totals(self):
        if _pool:
            return _pool.totals()
        used = sum(size for size, _ in self.live.values())
        return used, -(-used // SEGMENT) * SEGMENT + SEGMENT

    def _snapshot(self):
        if _pool:
            return _pool.snapshot()
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
        # FAKE_TORCH_NO_QUEUE=1: a PyTorch without the queue
        if os.environ.get("FAKE_TORCH_NO_QUEUE") != "1":
            self._queued_calls = []
        self._initialization_lock = threading.Lock()

    @property
    def _initialized(self):
        return self.initialized

    def is_initialized(self):
        return self.initialized

    def _lazy_init(self):
        if self.initialized:
            return
        with self._initialization_lock:
            if self.initialized:
                return
            # torch._C._cuda_init(): CUDA starts
            if hasattr(_c10, "c10_cuda_init"):
                _c10.c10_cuda_init()
            for call, _ in getattr(self, "_queued_calls", ()):
                call()
            self.initialized = True

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

    def memory_stats(self, device=None):
        used, reserved = self.memory.totals()
        return _pool.stats() if _pool else {"allocated_bytes.all.current": used,
                                            "reserved_bytes.all.current": reserved}

    OutOfMemoryError = OutOfMemoryError


cuda = _Cuda()


class Tensor:
    """NBYTES of the pretend pool, held until the object goes."""

    def __init__(self, nbytes):
        # the caller of torch.empty, once history is on
        frames = _frames(3) if cuda.memory.history else []
        self.block = _pool.malloc(nbytes, frames) if _pool else None
        cuda.memory.live[id(self)] = (nbytes, frames)
        cuda.peak = [max(a, b) for a, b in zip(cuda.peak, cuda.memory.totals())]
        while _grow is not None and cuda.memory.segments < cuda.memory.totals()[1]:
            if _grow(SEGMENT) != 0:
                raise RuntimeError("CUDA out of memory (pretend)")
            cuda.memory.segments += SEGMENT

    def __del__(self):
        cuda.memory.live.pop(id(self), None)
        if getattr(self, "block", None):
            _pool.free(*self.block)


def empty(nbytes):
    cuda._lazy_init()
    return Tensor(nbytes)


_until = time.monotonic() + float(os.environ.get("FAKE_TORCH_IMPORT_S", "0"))
while not getattr(cuda, "_queued_calls", None) and time.monotonic() < _until:
    time.sleep(0.001)
