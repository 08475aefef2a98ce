"""paddle.device.cuda's memory counters, with known figures: FIGURES[device]
is (allocated, reserved, max allocated, max reserved); a program may
change them."""
import os

FIGURES = {0: [3 << 20, 8 << 20, 5 << 20, 8 << 20], 1: [1 << 20, 4 << 20, 2 << 20, 6 << 20]}


def _index(device):
    if device is None:
        return 0
    if isinstance(device, str):
        return int(device.split(":")[-1])
    return int(device)


def device_count():
    return 2


def memory_allocated(device=None):
    if os.environ.get("FAKE_FW_RAISE") == "paddle":
        raise RuntimeError("pretend failure in memory_allocated")
    return FIGURES[_index(device)][0]


def memory_reserved(device=None):
    return FIGURES[_index(device)][1]


def max_memory_allocated(device=None):
    return FIGURES[_index(device)][2]


def max_memory_reserved(device=None):
    return FIGURES[_index(device)][3]
