# SPDX-License-Identifier: MIT
"""TensorBoard event files read back without gpuspy's code or TensorBoard's:
the TFRecord framing with its masked CRC32C, and the protobuf fields of
Event, Summary and Summary.Value decoded by hand.  And the scalars a
history.jsonl should give, by the rules of docs/format.md ("gpuspy export
--tensorboard"), for tests/cli/test_tensorboard.py and
tests/gpu/tensorboard_read.py."""
import json, re, struct


def _crc_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


_TABLE = _crc_table()


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = _TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def masked_crc(data):
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


class Bad(Exception):
    pass


def records(buf):
    """The data of each TFRecord of BUF; Bad on a short or corrupt one."""
    out, o = [], 0
    while o < len(buf):
        if len(buf) - o < 12:
            raise Bad(f"short record header at {o}")
        n, = struct.unpack_from("<Q", buf, o)
        crc, = struct.unpack_from("<I", buf, o + 8)
        if crc != masked_crc(buf[o:o + 8]):
            raise Bad(f"length CRC at {o}")
        if len(buf) - o - 12 < n + 4:
            raise Bad(f"short record at {o}")
        data = buf[o + 12:o + 12 + n]
        crc, = struct.unpack_from("<I", buf, o + 12 + n)
        if crc != masked_crc(data):
            raise Bad(f"data CRC at {o}")
        out.append(data)
        o += 12 + n + 4
    return out


def _varint(buf, o):
    v, shift = 0, 0
    while True:
        if o >= len(buf) or shift > 63:
            raise Bad("bad varint")
        b = buf[o]
        o += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return v, o


def fields(buf):
    """(field number, wire type, value) of each field of a message."""
    out, o = [], 0
    while o < len(buf):
        key, o = _varint(buf, o)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, o = _varint(buf, o)
        elif wt == 1:
            if o + 8 > len(buf):
                raise Bad("short fixed64")
            v = buf[o:o + 8]
            o += 8
        elif wt == 2:
            n, o = _varint(buf, o)
            if o + n > len(buf):
                raise Bad("short bytes")
            v = buf[o:o + n]
            o += n
        elif wt == 5:
            if o + 4 > len(buf):
                raise Bad("short fixed32")
            v = buf[o:o + 4]
            o += 4
        else:
            raise Bad(f"wire type {wt}")
        out.append((num, wt, v))
    return out


def event(data):
    """{"wall_time", "step", "file_version", "values": [(tag, float)]}:
    only the fields gpuspy writes, with their wire types."""
    ev = {"wall_time": 0.0, "step": 0, "file_version": None, "values": None}
    for num, wt, v in fields(data):
        if (num, wt) == (1, 1):
            ev["wall_time"], = struct.unpack("<d", v)
        elif (num, wt) == (2, 0):
            ev["step"] = v - (1 << 64) if v >= 1 << 63 else v
        elif (num, wt) == (3, 2):
            ev["file_version"] = v.decode()
        elif (num, wt) == (5, 2):
            ev["values"] = []
            for snum, swt, sv in fields(v):
                if (snum, swt) != (1, 2):
                    raise Bad(f"Summary field {snum}/{swt}")
                tag, val = None, None
                for vnum, vwt, vv in fields(sv):
                    if (vnum, vwt) == (1, 2):
                        tag = vv.decode()
                    elif (vnum, vwt) == (2, 5):
                        val, = struct.unpack("<f", vv)
                    else:
                        raise Bad(f"Value field {vnum}/{vwt}")
                if tag is None or val is None:
                    raise Bad("a Value without tag or simple_value")
                ev["values"].append((tag, val))
        else:
            raise Bad(f"Event field {num}/{wt}")
    return ev


def read_events(path):
    with open(path, "rb") as f:
        return [event(r) for r in records(f.read())]


def f32(v):
    return struct.unpack("<f", struct.pack("<f", float(v)))[0]


HEADLINE_MAX = 159  # bytes of a headline in its tag


def cut(name):
    """NAME cut to HEADLINE_MAX bytes of UTF-8, before a character that
    would be split."""
    b = name.encode()
    if len(b) <= HEADLINE_MAX:
        return name
    n = HEADLINE_MAX
    while n > 0 and b[n] & 0xC0 == 0x80:
        n -= 1
    return b[:n].decode()


def site_tags(peaks, top):
    """{headline: tag} for the TOP headlines (0: all) of highest peak
    (PEAKS: headline -> the highest of its sites' summed values), ties by
    headline; "sites/HEADLINE" cut, with " #2", " #3"... for one that a
    headline of higher rank took already, or that would be "sites/other"."""
    order = sorted(peaks, key=lambda n: (-peaks[n], n.encode()))
    tags, taken = {}, set()
    for n in order[:top] if top else order:
        k = 1
        while True:
            t = "sites/" + cut(n) + (f" #{k}" if k > 1 else "")
            if t != "sites/other" and t not in taken:
                break
            k += 1
        taken.add(t)
        tags[n] = t
    return tags


def expected(history_text, site_names, mode="time", top=10):
    """[(step, wall_time, {tag: float32 value})] a history should give.
    SITE_NAMES: history site id -> the site's one name (site_names_from_report).  The
    series of the sites of one headline are summed, sample by sample (in a
    bucket, their maxima), into one value before the top are chosen."""
    lines = history_text.split("\n")
    if not history_text.endswith("\n"):
        lines = lines[:-1]  # the line a killed writer left
    lines = [json.loads(x) for x in lines if x]
    start = lines[0]["start"]
    rows, marks = [], 0
    for x in lines[1:]:
        if "event" in x:
            marks += x["event"] == "mark"
            continue
        if "site" in x or "torch" in x and "frames" in x:
            continue
        bucket = "t0" in x
        t1 = x["t1"] if bucket else x["t"]
        val = (lambda v: v[1]) if bucket else (lambda v: v)
        series = {}
        for d, v in x.get("dev", {}).items():
            series["device/" + ("unknown" if d == "-1" else d)] = val(v)
        for i, v in x.get("outside", {}).items():
            series["nvml/" + i] = val(v)
        for d, v in x.get("pool_reserved", {}).items():
            series["pool/reserved/" + d] = val(v)
        for d, v in x.get("pool_allocated", {}).items():
            series["pool/allocated/" + d] = val(v)
        sites = {}
        for i, v in x.get("sites", {}).items():
            name = site_names.get(int(i))
            sites[name] = sites.get(name, 0) + val(v)
        rows.append((t1, marks, series, sites, val(x["other"]) if "other" in x else None))
    peaks = {}
    for _, _, _, sites, _ in rows:
        for n, v in sites.items():
            if n is not None:
                peaks[n] = max(peaks.get(n, 0), v)
    own = site_tags(peaks, top)
    out = []
    for t1, m, series, sites, other in rows:
        vals = dict(series)
        if other is not None:
            vals["sites/other"] = other
        for n, v in sites.items():
            if n in own:
                vals[own[n]] = v
            else:
                vals["sites/other"] = vals.get("sites/other", 0) + v
        step = m if mode == "mark" else int(t1)
        if out and out[-1][0] == step:
            prev = out[-1][2]
            for k, v in vals.items():
                prev[k] = max(prev.get(k, v), v)
            out[-1] = (step, start + t1, prev)
        else:
            out.append((step, start + t1, vals))
    return start, [(s, w, {k: f32(v) for k, v in vals.items()}) for s, w, vals in out]


def site_names_from_report(json_text, process=0):
    """History site id -> tag name, from 'gpuspy report --format json': the
    report site each of the process's own sites went into ("site_numbers")
    and that site's one name ("name"), which the tag is."""
    import json
    rep = json.loads(json_text)
    by_number = {s["number"]: s["name"] for s in rep["sites"]}
    numbers = rep["processes"][process].get("site_numbers", {})
    return {int(k): by_number[v] for k, v in numbers.items() if v in by_number}
