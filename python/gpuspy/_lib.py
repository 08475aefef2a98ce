# SPDX-License-Identifier: MIT
"""The C API of the preloaded libgpuspy.so (include/gpuspy.h), through
ctypes.

The library is reached through the process's global symbols
(ctypes.CDLL(None)): it is there only when it was preloaded, and nothing
here loads it.  Every call is guarded: a library that is missing, older
than this package, or that answers -1 gives None or an empty list, never
an exception into the caller's program.

The structures below are gpuspy.h's, field for field; each call passes
its structure's size, so that the library writes no more than this side
holds (tests/python/api_layout.py compares the two layouts).
"""
import ctypes
import os

NAME_MAX = 512  # GPUSPY_NAME_MAX


class _Totals(ctypes.Structure):
    _fields_ = [("live_bytes", ctypes.c_longlong),
                ("live_allocs", ctypes.c_longlong),
                ("peak_bytes", ctypes.c_longlong),
                ("pinned_bytes", ctypes.c_longlong),
                ("events", ctypes.c_ulonglong),
                ("tracking", ctypes.c_int)]


class _ScopeTotals(ctypes.Structure):
    _fields_ = [("before_bytes", ctypes.c_longlong),
                ("live_bytes", ctypes.c_longlong),
                ("peak_bytes", ctypes.c_longlong),
                ("events", ctypes.c_ulonglong),
                ("seconds", ctypes.c_double)]


class _Site(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char * NAME_MAX),
                ("key", ctypes.c_char * 24),
                ("kind", ctypes.c_char * 16),
                ("pool", ctypes.c_char * 32),
                ("growth", ctypes.c_char * 32),
                ("live_bytes", ctypes.c_longlong),
                ("live_allocs", ctypes.c_longlong),
                ("change_bytes", ctypes.c_longlong),
                ("growth_rate", ctypes.c_double),
                ("growth_since", ctypes.c_double),
                ("named", ctypes.c_int)]


class _Framework(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char * 16),
                ("device", ctypes.c_int),
                ("allocated", ctypes.c_longlong),
                ("reserved", ctypes.c_longlong),
                ("peak_allocated", ctypes.c_longlong),
                ("peak_reserved", ctypes.c_longlong),
                ("limit", ctypes.c_longlong),
                ("free_blocks", ctypes.c_longlong),
                ("age", ctypes.c_double)]


def _mapped(name):
    """Whether a file of base name NAME is mapped into this process."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as f:
            return any(line.rstrip("\n").rsplit("/", 1)[-1] == name for line in f)
    except OSError:
        return False


def _text(b):
    return b.decode("utf-8", "replace")


class Totals:
    """The process's GPU memory now (gpuspy_totals)."""
    __slots__ = ("live_bytes", "live_allocs", "peak_bytes", "pinned_bytes", "events",
                 "tracking")

    def __init__(self, t):
        self.live_bytes, self.live_allocs = t.live_bytes, t.live_allocs
        self.peak_bytes, self.pinned_bytes = t.peak_bytes, t.pinned_bytes
        self.events, self.tracking = t.events, bool(t.tracking)

    def __repr__(self):
        return "Totals(%s)" % ", ".join("%s=%r" % (k, getattr(self, k)) for k in self.__slots__)


class ScopeTotals:
    """What changed since a scope opened (gpuspy_scope_read): live bytes
    before and now, the most live at once in between, the GPU allocations
    and frees made meanwhile."""
    __slots__ = ("before_bytes", "live_bytes", "peak_bytes", "events", "seconds")

    def __init__(self, t):
        self.before_bytes, self.live_bytes = t.before_bytes, t.live_bytes
        self.peak_bytes, self.events, self.seconds = t.peak_bytes, t.events, t.seconds

    @property
    def change_bytes(self):
        return self.live_bytes - self.before_bytes

    @property
    def peak_above_bytes(self):
        """The peak inside the scope, above what was live when it opened."""
        return self.peak_bytes - self.before_bytes

    def __repr__(self):
        return "ScopeTotals(%s)" % ", ".join("%s=%r" % (k, getattr(self, k))
                                             for k in self.__slots__)


class Site:
    """A call site as `gpuspy report` lists it, with its one name."""
    __slots__ = ("name", "key", "kind", "pool", "growth", "live_bytes", "live_allocs",
                 "change_bytes", "growth_rate", "growth_since", "named")

    def __init__(self, s):
        self.name, self.key, self.kind = _text(s.name), _text(s.key), _text(s.kind)
        self.pool, self.growth = _text(s.pool), _text(s.growth)
        self.live_bytes, self.live_allocs = s.live_bytes, s.live_allocs
        self.change_bytes = s.change_bytes
        self.growth_rate, self.growth_since = s.growth_rate, s.growth_since
        self.named = bool(s.named)

    def __repr__(self):
        return "Site(%s)" % ", ".join("%s=%r" % (k, getattr(self, k)) for k in self.__slots__)


class Framework:
    """A framework's own counters on one device (-1: its pinned host pool);
    None where it says nothing of one."""
    __slots__ = ("name", "device", "allocated", "reserved", "peak_allocated", "peak_reserved",
                 "limit", "free_blocks", "age")

    def __init__(self, f):
        self.name, self.device = _text(f.name), f.device
        for k in self.__slots__[2:-1]:
            v = getattr(f, k)
            setattr(self, k, v if v >= 0 else None)
        self.age = f.age

    def __repr__(self):
        return "Framework(%s)" % ", ".join("%s=%r" % (k, getattr(self, k))
                                           for k in self.__slots__)


# (name, restype, argtypes) of every call this package makes
_CALLS = [
    ("gpuspy_mark", ctypes.c_int, [ctypes.c_char_p]),
    ("gpuspy_snapshot", ctypes.c_int, [ctypes.c_char_p]),
    ("gpuspy_totals", ctypes.c_int, [ctypes.POINTER(_Totals), ctypes.c_size_t]),
    ("gpuspy_scope_open", ctypes.c_longlong, []),
    ("gpuspy_scope_close", ctypes.c_int, [ctypes.c_longlong]),
    ("gpuspy_scope_read", ctypes.c_int,
     [ctypes.c_longlong, ctypes.POINTER(_ScopeTotals), ctypes.c_size_t]),
    ("gpuspy_sites", ctypes.c_int,
     [ctypes.POINTER(_Site), ctypes.c_uint, ctypes.c_size_t, ctypes.c_int]),
    ("gpuspy_scope_sites", ctypes.c_int,
     [ctypes.c_longlong, ctypes.c_int, ctypes.POINTER(_Site), ctypes.c_uint, ctypes.c_size_t,
      ctypes.c_int]),
    ("gpuspy_frameworks", ctypes.c_int,
     [ctypes.POINTER(_Framework), ctypes.c_uint, ctypes.c_size_t]),
    ("gpuspy_process_dir", ctypes.c_int, [ctypes.c_char_p, ctypes.c_size_t]),
]

# How to start a process with the library (the one line said without it).
HOW = ("start it with libgpuspy.so preloaded: LD_PRELOAD=libgpuspy.so, or gpuspy run -- "
       "COMMAND; a notebook's kernel: \"Python 3 (gpuspy)\" (contrib/jupyter)")


class Library:
    """The preloaded library's API; Library.find() returns one, or None
    with the reason in Library.why (and Library.preloaded False when the
    library is simply not in the process)."""
    why = None
    preloaded = True

    def __init__(self, funcs):
        self._f = funcs

    @classmethod
    def find(cls):
        try:
            glob = ctypes.CDLL(None)
        except OSError as e:  # a process without dlopen: nothing to find
            cls.why = "gpuspy: cannot look for libgpuspy.so (%s); %s" % (e, HOW)
            return None
        funcs = {}
        for name, res, args in _CALLS:
            try:
                f = getattr(glob, name)
            except AttributeError:
                break
            f.restype, f.argtypes = res, args
            funcs[name] = f
        if "gpuspy_mark" not in funcs:
            cls.why = "gpuspy: libgpuspy.so is not preloaded into this process; " + HOW
            cls.preloaded = False
            return None
        if len(funcs) < len(_CALLS):
            cls.why = ("gpuspy: the libgpuspy.so preloaded here is older than this gpuspy "
                       "package (no %s); install both from one build (scripts/setup)"
                       % _CALLS[len(funcs)][0])
            return None
        lib = cls(funcs)
        if lib.totals() is None:
            if _mapped("libgpuspy.so"):
                cls.why = ("gpuspy: the library does not track this process (a forked child "
                           "of a process it tracked writes and keeps nothing)")
            else:
                cls.why = "gpuspy: libgpuspy.so is not preloaded into this process; " + HOW
                cls.preloaded = False
            return None
        return lib

    def _call(self, name, *args):
        try:
            return self._f[name](*args)
        except (ctypes.ArgumentError, OSError, TypeError, ValueError):
            return -1

    def totals(self):
        t = _Totals()
        if self._call("gpuspy_totals", ctypes.byref(t), ctypes.sizeof(t)) != 0:
            return None
        return Totals(t)

    def mark(self, label):
        return self._call("gpuspy_mark", str(label).encode("utf-8", "replace")) == 0

    def snapshot(self, label):
        return self._call("gpuspy_snapshot", str(label).encode("utf-8", "replace")) == 0

    def process_dir(self):
        buf = ctypes.create_string_buffer(8192)
        if self._call("gpuspy_process_dir", buf, ctypes.sizeof(buf)) != 0:
            return None
        return os.fsdecode(buf.value)

    def _sites(self, name, args, n, wait_ms):
        if n <= 0:
            return []
        arr = (_Site * n)()
        got = self._call(name, *args, arr, n, ctypes.sizeof(_Site), int(wait_ms))
        if got is None or got < 0:
            return []
        return [Site(arr[i]) for i in range(min(got, n))]

    def sites(self, n=10, wait_ms=1000):
        """The N sites holding the most GPU memory now, most first.  A site
        not named yet by gpuspy's thread is waited for up to WAIT_MS."""
        return self._sites("gpuspy_sites", (), n, wait_ms)

    def frameworks(self, n=64):
        arr = (_Framework * n)()
        got = self._call("gpuspy_frameworks", arr, n, ctypes.sizeof(_Framework))
        if got is None or got < 0:
            return []
        return [Framework(arr[i]) for i in range(min(got, n))]

    def scope(self):
        """A Scope opened now, or None."""
        sid = self._call("gpuspy_scope_open")
        return Scope(self, sid) if sid and sid > 0 else None


class Scope:
    """What each site held when it opened, and a peak of its own since:
    read() for the totals, grown() and shrunk() for the sites that changed.
    Close it (or use it as a context manager)."""

    def __init__(self, lib, sid):
        self._lib, self.id = lib, sid

    def read(self):
        t = _ScopeTotals()
        if self.id is None or self._lib._call("gpuspy_scope_read", self.id, ctypes.byref(t),
                                              ctypes.sizeof(t)) != 0:
            return None
        return ScopeTotals(t)

    def grown(self, n=5, wait_ms=1000):
        """The sites that hold more than when the scope opened, most first."""
        if self.id is None:
            return []
        return self._lib._sites("gpuspy_scope_sites", (self.id, 1), n, wait_ms)

    def shrunk(self, n=5, wait_ms=1000):
        """The sites that hold less, most freed first."""
        if self.id is None:
            return []
        return self._lib._sites("gpuspy_scope_sites", (self.id, -1), n, wait_ms)

    def close(self):
        if self.id is not None:
            self._lib._call("gpuspy_scope_close", self.id)
            self.id = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


_found = []


def library():
    """The preloaded library, found once; None without it (see why())."""
    if not _found:
        _found.append(Library.find())
    return _found[0]


def why():
    """Why library() is None: one line."""
    library()
    return Library.why


def absent(not_preloaded):
    """Why library() is None, as a front end says it: its own line
    NOT_PRELOADED (how to start it with the library) when the library is
    not in the process at all, else the reason (a library older than the
    package, a forked child)."""
    if library() is not None:
        return None
    return not_preloaded if not Library.preloaded else Library.why


_UNITS = "KMGT"


def parse_size(text):
    """A size in bytes from TEXT, as GPUSPY_LIMIT takes one (src/common/
    env.c, env_size): decimal digits, an optional fraction, an optional
    unit K, M, G or T (powers of 1024, either case, "i" and "B" allowed
    after it), and here one space allowed before the unit: "512 MiB",
    "8G", "1.5GiB", "4096".  An int is bytes as it is.  Raises ValueError
    for anything else, and for 2^62 bytes or more."""
    if isinstance(text, bool) or not isinstance(text, (int, str)):
        raise ValueError("not a size: %r" % (text,))
    if isinstance(text, int):
        if not 0 <= text < 1 << 62:
            raise ValueError("not a size: %r" % (text,))
        return text
    s = text
    i = 0
    while i < len(s) and "0" <= s[i] <= "9":
        i += 1
    whole = s[:i]
    frac = ""
    if i < len(s) and s[i] == ".":
        j = i + 1
        while j < len(s) and "0" <= s[j] <= "9":
            j += 1
        frac = s[i + 1:j]
        if not frac:
            raise ValueError("not a size: %r" % text)
        i = j
    if not whole and not frac:
        raise ValueError("not a size: %r (a number and a unit: \"512 MiB\")" % text)
    rest = s[i:]
    if rest.startswith(" ") and rest[1:2] and rest[1:2].upper() in _UNITS + "B":
        rest = rest[1:]
    unit = 1
    if rest and rest[0].upper() in _UNITS:
        unit = 1024 ** (_UNITS.index(rest[0].upper()) + 1)
        rest = rest[1:]
        if rest.startswith("i"):
            rest = rest[1:]
    if rest in ("B", "b"):
        rest = ""
    if rest:
        raise ValueError("not a size: %r (a number and a unit: \"512 MiB\")" % text)
    frac = frac[:9]  # finer than a byte of any unit here, as env_size
    n = int(whole or "0") * unit + (int(frac) * unit // 10 ** len(frac) if frac else 0)
    if n >= 1 << 62:
        raise ValueError("too large a size: %r" % text)
    return n


def human(b, sign=False):
    """B bytes as the reports write them: "8.0 MiB", "512 B"; with SIGN,
    "+8.0 MiB", "-512 B", "+0 B"."""
    units = ("B", "KiB", "MiB", "GiB", "TiB")
    v, u = float(abs(b)), 0
    while v >= 1024.0 and u < len(units) - 1:
        v /= 1024.0
        u += 1
    text = "%d B" % abs(b) if u == 0 else "%.1f %s" % (v, units[u])
    if sign:
        return ("-" if b < 0 else "+") + text
    return ("-" if b < 0 else "") + text
