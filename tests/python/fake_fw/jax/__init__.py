"""A stand-in for the part of JAX that gpuspy's framework counters use
(src/preload/3-out/fw_view.py): the backends JAX made, in
jax._src.xla_bridge._backends, made by the first jax.devices() or
jax.local_devices() (as JAX initialises its backends then, not at import);
their local_devices(), and each Device's platform, id,
local_hardware_id and memory_stats().  The "cuda" backend has two GPUs
with the figures of jax._src.xla_bridge.STATS, the "cpu" one a CPU device
whose memory_stats() raises (it must never be asked).  FAKE_FW_RAISE=jax
makes the GPUs' memory_stats() raise."""
import ctypes as _ctypes
import os as _os

# importing JAX loads jaxlib's extension, jaxlib/xla_extension.so:
# FAKE_FW_NATIVE is a directory laid out so
# (tests/python/fw_counters.py), unless FAKE_FW_NO_NATIVE is set
if not _os.environ.get("FAKE_FW_NO_NATIVE"):
    _ctypes.CDLL(_os.path.join(_os.environ["FAKE_FW_NATIVE"], "jaxlib", "xla_extension.so"))

from ._src import xla_bridge


def devices(backend=None):
    xla_bridge.backends()
    return [d for b in xla_bridge._backends.values() for d in b.local_devices()]


local_devices = devices
