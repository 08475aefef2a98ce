"""A stand-in for the part of PaddlePaddle that gpuspy's framework counters
use (src/preload/3-out/fw_view.py): paddle.is_compiled_with_cuda() and
paddle.device.cuda's device_count(), memory_allocated(),
memory_reserved(), max_memory_allocated() and max_memory_reserved(), each
taking a device as PaddlePaddle documents (None, an int, "gpu:N").  The
figures are FIGURES in paddle.device.cuda; FAKE_FW_RAISE=paddle makes
memory_allocated() raise, as a broken install would."""
import ctypes as _ctypes
import os as _os

# importing PaddlePaddle (2.6 on) loads paddle/base/libpaddle.so:
# FAKE_FW_NATIVE is a directory laid out so
# (tests/python/fw_counters.py), unless FAKE_FW_NO_NATIVE is set
if not _os.environ.get("FAKE_FW_NO_NATIVE"):
    _ctypes.CDLL(_os.path.join(_os.environ["FAKE_FW_NATIVE"], "paddle", "base", "libpaddle.so"))

from . import device  # noqa: F401


def is_compiled_with_cuda():
    return True
