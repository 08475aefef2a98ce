"""jax._src.xla_bridge: the backends made so far, and their devices."""
import os

# by local_hardware_id: Device.memory_stats() of XLA's BFC allocator
STATS = {0: {"num_allocs": 3, "bytes_in_use": 6 << 20, "peak_bytes_in_use": 9 << 20,
             "largest_alloc_size": 4 << 20, "bytes_limit": 96 << 20, "bytes_reserved": 0,
             "peak_bytes_reserved": 0, "pool_bytes": 64 << 20, "peak_pool_bytes": 64 << 20},
         1: {"bytes_in_use": 2 << 20, "peak_bytes_in_use": 3 << 20, "bytes_limit": 96 << 20,
             "bytes_reserved": 32 << 20}}
_backends = {}


class Device:
    def __init__(self, platform, i):
        self.platform, self.id, self.local_hardware_id = platform, 10 + i, i

    def memory_stats(self):
        if self.platform != "gpu":
            raise RuntimeError("a CPU device was asked for its memory")
        if os.environ.get("FAKE_FW_RAISE") == "jax":
            raise RuntimeError("pretend failure in memory_stats")
        return dict(STATS[self.local_hardware_id])


class Client:
    def __init__(self, platform, n):
        self.platform = platform
        self._devices = [Device(platform, i) for i in range(n)]

    def local_devices(self):
        return list(self._devices)


def backends():
    if not _backends:
        _backends["cuda"] = Client("gpu", 2)
        _backends["cpu"] = Client("cpu", 1)
    return _backends
