"""cupy.cuda: runtime.getDevice(), the current device."""
import types

runtime = types.SimpleNamespace(getDevice=lambda: 0)
