# SPDX-License-Identifier: MIT
"""%load_ext gpuspy: what each cell did to GPU memory, in the notebook.

After each cell that allocated or freed GPU memory, one line: the cell's
change in live GPU memory, its peak inside the cell (above what was live
when it started), and the call site that holds most of the change by the
name `gpuspy report` gives it, the notebook's own code as In[N], line L.
A cell that touched no GPU memory says nothing.  Each cell is a mark,
In[N], so that `gpuspy report --at 'In[N]'` and `gpuspy diff --at` read
the run between cells afterwards.

    %gpuspy          the live table: the sites holding most, their growth
                     verdicts, the frameworks' own counters
    %gpuspy plot     live memory across the cells run so far, inline (SVG)

The kernel must run with libgpuspy.so preloaded (the kernel "Python 3
(gpuspy)", contrib/jupyter/kernel.json); without it, one line says so.
"""
import html
import os
import re

from . import _lib

_watch = []  # the one Watch of this process, once loaded

NOT_PRELOADED = ("gpuspy: this kernel runs without libgpuspy.so: restart it as the kernel "
                 "\"Python 3 (gpuspy)\" (contrib/jupyter/kernel.json, installed by "
                 "scripts/setup), or start Jupyter with LD_PRELOAD=libgpuspy.so")

# a place in a site's name: "(file:line)", "(file:line +2 lines)", and the
# "<module> " of a cell's top-level code before it
_PLACE = re.compile(r"(?P<module><module> )?\((?P<file>[^():]+):(?P<line>\d+)"
                    r"(?P<more> \+\d+ lines?)?\)")


def cell_name(name, files):
    """NAME with each place in a file of FILES ({base name: execution
    count}) written In[N], line L; a cell's top-level code ("<module>
    (f.py:3)") is just "In[2], line 3"."""
    def place(m):
        n = files.get(m.group("file"))
        if n is None:
            return m.group(0)
        where = "In[%d], line %s%s" % (n, m.group("line"), m.group("more") or "")
        return where if m.group("module") else "(" + where + ")"
    return _PLACE.sub(place, name)


class Cell:
    """What one cell did: live bytes before and after, its peak, whether it
    allocated or freed anything."""
    __slots__ = ("label", "before", "after", "peak", "touched")

    def __init__(self, label, before, after, peak, touched):
        self.label, self.before, self.after = label, before, after
        self.peak, self.touched = peak, touched


class Watch:
    """The hooks of one IPython shell."""

    def __init__(self, ip, lib):
        self.ip, self.lib = ip, lib
        self.cells = []
        self.files = {}  # base names of cells' files IPython did not list
        self.broken = False
        self.scope = lib.scope()  # the loading cell's, from the load on

    # IPython's events: never an exception into the notebook
    def pre(self, *args):
        try:
            if self.scope is not None:
                self.scope.close()
            self.scope = self.lib.scope()
            info = args[0] if args else None
            self._name_file(info)
        except Exception as e:  # noqa: BLE001 - the notebook must go on
            self._broke(e)

    def post(self, *args):
        try:
            result = args[0] if args else None
            self._after(getattr(result, "execution_count", None))
        except Exception as e:  # noqa: BLE001
            self._broke(e)

    def _broke(self, e):
        if not self.broken:
            self.broken = True
            print("gpuspy: the notebook extension failed (%s: %s); the kernel goes on"
                  % (type(e).__name__, e))

    def _name_file(self, info):
        """The file IPython will compile the cell into, when its compiler
        keeps no map of them (_filename_map, IPython 8)."""
        comp = getattr(self.ip, "compile", None)
        if info is None or comp is None or hasattr(comp, "_filename_map"):
            return
        raw = getattr(info, "raw_cell", None)
        if raw is None or not hasattr(comp, "get_code_name"):
            return
        name = comp.get_code_name(raw, self.ip.transform_cell(raw), self.ip.execution_count)
        self.files[os.path.basename(name)] = self.ip.execution_count

    def cell_files(self):
        files = dict(self.files)
        for path, n in (getattr(getattr(self.ip, "compile", None), "_filename_map", None)
                        or {}).items():
            files[os.path.basename(path)] = n
        return files

    def name(self, site):
        return cell_name(site.name, self.cell_files())

    def _after(self, n):
        sc, self.scope = self.scope, None
        if sc is None:
            return
        try:
            t = sc.read()
            if t is None:
                return
            label = "In[%d]" % n if n is not None else "cell"
            if n is not None:
                self.lib.mark(label)
            self.cells.append(Cell(label, t.before_bytes, t.live_bytes, t.peak_bytes,
                                   t.events > 0))
            if t.events == 0:
                return
            print(self.line(label, t, sc))
        finally:
            sc.close()

    def line(self, label, t, sc):
        change = t.change_bytes
        if change > 0:
            head = "%s (%s live)" % (_lib.human(change, sign=True), _lib.human(t.live_bytes))
        elif change < 0:
            head = "%s freed (%s live)" % (_lib.human(-change), _lib.human(t.live_bytes))
        else:
            head = "no change (%s live)" % _lib.human(t.live_bytes)
        text = "gpuspy: %s: %s, peak %s in the cell" % (
            label, head, _lib.human(t.peak_above_bytes, sign=True))
        sites = sc.grown(1) if change > 0 else sc.shrunk(1) if change < 0 else []
        if sites:
            s = sites[0]
            text += "; %s %s" % ("most held by" if change > 0 else "most freed from",
                                 self.name(s))
            if s.pool:
                text += " (%s pool)" % s.pool
        return text

    def table(self, top=10):
        """%gpuspy: the live table, as text."""
        t = self.lib.totals()
        if t is None:
            return _lib.why() or NOT_PRELOADED
        out = ["gpuspy: %s of GPU memory live in %d allocation%s, peak %s%s"
               % (_lib.human(t.live_bytes), t.live_allocs, "" if t.live_allocs == 1 else "s",
                  _lib.human(t.peak_bytes),
                  "" if t.tracking else " (gpuspy stopped tracking: see the kernel's log)")]
        sites = self.lib.sites(top)
        for i, s in enumerate(sites):
            notes = []
            if s.kind and s.kind != "device":
                notes.append(s.kind)
            if s.pool:
                notes.append("%s pool" % s.pool)
            if s.growth == "growing":
                notes.append("growing %s/min" % _lib.human(int(s.growth_rate * 60), sign=True))
            elif s.growth:
                notes.append(s.growth)
            out.append("  #%-3d %9s in %-4d %s%s" % (
                i + 1, _lib.human(s.live_bytes), s.live_allocs, self.name(s),
                "  [%s]" % ", ".join(notes) if notes else ""))
        if not sites:
            out.append("  no call site holds GPU memory")
        for f in self.lib.frameworks():
            if f.reserved is None and f.allocated is None:
                continue
            where = "device %d" % f.device if f.device >= 0 else "pinned host"
            figs = ["%s %s" % (k.replace("_", " "), _lib.human(getattr(f, k)))
                    for k in ("allocated", "reserved", "peak_allocated", "peak_reserved",
                              "limit") if getattr(f, k) is not None]
            out.append("  %s, %s: %s" % (_FRAMEWORKS.get(f.name, f.name), where,
                                         ", ".join(figs)))
        marked = [c.label for c in self.cells if c.label.startswith("In[")]
        d = self.lib.process_dir()
        if marked and d:
            out.append("  each cell is a mark (%s .. %s): gpuspy report --at '%s' %s"
                       % (marked[0], marked[-1], marked[-1], d))
        return "\n".join(out)

    def chart(self):
        return Chart(self.cells)


_FRAMEWORKS = {"pytorch": "PyTorch", "paddle": "PaddlePaddle", "jax": "JAX", "cupy": "CuPy"}


class Chart:
    """Live GPU memory across the cells run, as an inline SVG (no script,
    nothing fetched): a line through what was live after each cell, a bar
    from there up to the cell's peak."""

    W, H = 720, 260
    LEFT, RIGHT, TOP, BOTTOM = 78, 16, 34, 48

    def __init__(self, cells):
        self.cells = list(cells)

    def __repr__(self):
        return "<gpuspy chart of %d cells>" % len(self.cells)

    def _repr_svg_(self):
        return self.svg()

    def svg(self):
        cells = self.cells
        w, h = self.W, self.H
        x0, x1, y0, y1 = self.LEFT, w - self.RIGHT, h - self.BOTTOM, self.TOP
        top = max([c.peak for c in cells] + [c.before for c in cells] + [1])
        n = max(len(cells), 1)
        step = (x1 - x0) / n

        def x(i):
            return x0 + step * (i + 0.5)

        def y(b):
            return y0 - (y0 - y1) * (b / top)

        e = html.escape
        parts = ['<svg xmlns="http://www.w3.org/2000/svg" class="gpuspy-chart" width="%d" '
                 'height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">'
                 % (w, h, w, h),
                 '<title>GPU memory across the cells (gpuspy)</title>',
                 '<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>' % (w, h),
                 '<text x="%d" y="18" font-size="13" fill="#222">GPU memory live after each '
                 'cell, and the peak inside it</text>' % x0]
        for k in range(5):  # the grid and the axis' sizes
            b = top * k / 4
            parts.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#e4e4e4"/>'
                         % (x0, y(b), x1, y(b)))
            parts.append('<text x="%d" y="%.1f" text-anchor="end" fill="#555">%s</text>'
                         % (x0 - 6, y(b) + 4, e(_lib.human(int(b)))))
        parts.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#888"/>' % (x0, y0, x1, y0))
        every = max(1, (len(cells) + 19) // 20)
        for i, c in enumerate(cells):
            low = min(c.before, c.after)
            parts.append('<rect class="peak" x="%.1f" y="%.1f" width="%.1f" height="%.1f" '
                         'fill="#f4a259" fill-opacity="0.55"><title>%s: peak %s</title></rect>'
                         % (x(i) - step * 0.3, y(c.peak), step * 0.6,
                            max(y(low) - y(c.peak), 0), e(c.label), e(_lib.human(c.peak))))
            if i % every == 0:
                parts.append('<text x="%.1f" y="%d" text-anchor="middle" fill="#333">%s</text>'
                             % (x(i), y0 + 16, e(c.label)))
        if cells:
            pts = " ".join("%.1f,%.1f" % (x(i), y(c.after)) for i, c in enumerate(cells))
            parts.append('<polyline class="live" points="%s" fill="none" stroke="#1f6fb4" '
                         'stroke-width="2.5"/>' % pts)
            for i, c in enumerate(cells):
                parts.append('<circle class="cell" cx="%.1f" cy="%.1f" r="3.5" fill="#1f6fb4">'
                             '<title>%s: %s live after it</title></circle>'
                             % (x(i), y(c.after), e(c.label), e(_lib.human(c.after))))
        else:
            parts.append('<text x="%d" y="%d" fill="#555">no cell has run since %%load_ext '
                         'gpuspy</text>' % (x0 + 10, (y0 + y1) // 2))
        ly = h - 12
        parts.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#1f6fb4" stroke-width="2.5"/>'
                     '<text x="%d" y="%d" fill="#333">live after the cell</text>'
                     % (x0, ly - 4, x0 + 22, ly - 4, x0 + 28, ly))
        parts.append('<rect x="%d" y="%d" width="14" height="10" fill="#f4a259" '
                     'fill-opacity="0.55"/><text x="%d" y="%d" fill="#333">peak inside it</text>'
                     % (x0 + 160, ly - 9, x0 + 180, ly))
        parts.append("</svg>")
        return "".join(parts)


def _magic(line=""):
    """%gpuspy: the live table; %gpuspy plot: live memory across the cells."""
    arg = (line or "").strip()
    w = _watch[0] if _watch else None
    if w is None:
        print(_lib.absent(NOT_PRELOADED))
        return
    try:
        if arg in ("", "table"):
            print(w.table())
        elif arg in ("plot", "chart"):
            from IPython.display import display
            display(w.chart())
        else:
            print("gpuspy: %gpuspy [plot]: the live table, or live memory across the cells")
    except Exception as e:  # noqa: BLE001 - the notebook must go on
        print("gpuspy: %%gpuspy failed (%s: %s)" % (type(e).__name__, e))


def load(ip):
    """%load_ext gpuspy."""
    ip.register_magic_function(_magic, magic_kind="line", magic_name="gpuspy")
    if _watch:
        return
    lib = _lib.library()
    if lib is None:
        print(_lib.absent(NOT_PRELOADED))
        return
    w = Watch(ip, lib)
    _watch.append(w)
    ip.events.register("pre_run_cell", w.pre)
    ip.events.register("post_run_cell", w.post)
    t = lib.totals()
    print("gpuspy: a line after each cell that allocates or frees GPU memory (%s live now); "
          "%%gpuspy for the table, %%gpuspy plot for the chart"
          % _lib.human(t.live_bytes if t else 0))


def unload(ip):
    if not _watch:
        return
    w = _watch.pop()
    for name, fn in (("pre_run_cell", w.pre), ("post_run_cell", w.post)):
        try:
            ip.events.unregister(name, fn)
        except ValueError:
            pass
    if w.scope is not None:
        w.scope.close()
        w.scope = None
    ip.magics_manager.magics["line"].pop("gpuspy", None)
