"""A stand-in for the part of PaddlePaddle that gpuspy's framework counters
use (src/preload/fw_view.py): paddle.is_compiled_with_cuda() and
paddle.device.cuda's device_count(), memory_allocated(),
memory_reserved(), max_memory_allocated() and max_memory_reserved(), each
taking a device as PaddlePaddle documents (None, an int, "gpu:N").  The
figures are FIGURES in paddle.device.cuda; FAKE_FW_RAISE=paddle makes
memory_allocated() raise, as a broken install would."""
from . import device  # noqa: F401


def is_compiled_with_cuda():
    return True
