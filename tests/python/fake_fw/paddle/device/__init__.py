"""paddle.device: its cuda submodule."""
from . import cuda  # noqa: F401
