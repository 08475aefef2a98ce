/* SPDX-License-Identifier: MIT */
/*
 * The calling thread's Python frames, read without the GIL.
 *
 * PyTorch, CuPy and JAX release the GIL before they reach the driver, and
 * taking it inside a hook can deadlock against the framework's allocator
 * lock.  But while the thread sits in our hook its own frames cannot
 * change, so they are read directly, with each CPython minor version's
 * layout (offsets verified against every 3.10-3.13 build we support; see
 * docs/python-frames.md in the shared notes).  No libpython is linked and
 * nothing is imported: the few symbols needed are looked up with dlsym.
 *
 * The hook keeps only (code object, instruction offset, filename object)
 * per frame - a few loads each.  Names and line numbers are decoded once,
 * when a call site is new, while the frames are still alive.
 *
 * Anything unexpected (unknown version, free-threaded build, an object of
 * the wrong type) means "no Python stack", never a crash or an error.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pystack.h"
#include "real.h"

struct layout {
	int minor;
	/* thread state -> first frame */
	int ts_frame;  /* 3.10: ts->frame; 3.13: ts->current_frame */
	int ts_cframe; /* 3.11/3.12: ts->cframe, then +cframe_frame */
	int cframe_frame;
	/* frame */
	int f_back, f_code, f_instr, f_owner;
	bool instr_is_lasti; /* 3.10: int f_lasti, in code units */
	/* code object */
	int co_firstlineno, co_filename, co_name, co_linetable, co_code, co_firsttraceable;
	/* str */
	int str_ascii_size, str_compact_size;
	bool locations_table; /* 3.11+: PEP 657 table; 3.10: PEP 626 pairs */
	bool cstack_shims;    /* 3.12+: owner 3 frames are C-stack shims */
};

static const struct layout layouts[] = {
	{ .minor = 10,
	  .ts_frame = 24,
	  .f_back = 24,
	  .f_code = 32,
	  .f_instr = 96,
	  .f_owner = -1,
	  .instr_is_lasti = true,
	  .co_firstlineno = 40,
	  .co_filename = 104,
	  .co_name = 112,
	  .co_linetable = 120,
	  .co_code = -1,
	  .co_firsttraceable = -1,
	  .str_ascii_size = 48,
	  .str_compact_size = 72 },
	{ .minor = 11,
	  .ts_frame = -1,
	  .ts_cframe = 56,
	  .cframe_frame = 8,
	  .f_back = 48,
	  .f_code = 32,
	  .f_instr = 56,
	  .f_owner = 69,
	  .co_firstlineno = 72,
	  .co_filename = 112,
	  .co_name = 128 /* qualname */,
	  .co_linetable = 136,
	  .co_code = 184,
	  .co_firsttraceable = 168,
	  .str_ascii_size = 48,
	  .str_compact_size = 72,
	  .locations_table = true },
	{ .minor = 12,
	  .ts_frame = -1,
	  .ts_cframe = 56,
	  .cframe_frame = 0,
	  .f_back = 8,
	  .f_code = 0,
	  .f_instr = 56,
	  .f_owner = 70,
	  .co_firstlineno = 68,
	  .co_filename = 112,
	  .co_name = 128,
	  .co_linetable = 136,
	  .co_code = 192,
	  .co_firsttraceable = 176,
	  .str_ascii_size = 40,
	  .str_compact_size = 56,
	  .locations_table = true,
	  .cstack_shims = true },
	{ .minor = 13,
	  .ts_frame = 72,
	  .f_back = 8,
	  .f_code = 0,
	  .f_instr = 56,
	  .f_owner = 70,
	  .co_firstlineno = 68,
	  .co_filename = 112,
	  .co_name = 128,
	  .co_linetable = 136,
	  .co_code = 200,
	  .co_firsttraceable = 184,
	  .str_ascii_size = 40,
	  .str_compact_size = 56,
	  .locations_table = true,
	  .cstack_shims = true },
};

enum { OWNED_BY_GENERATOR = 1, OWNED_BY_CSTACK = 3 };

#define OB_TYPE	   8
#define BYTES_SIZE 16
#define BYTES_DATA 32
#define STR_LENGTH 16
#define STR_STATE  32

static struct {
	const struct layout *l;
	void *(*this_thread_state)(void);
	const void *code_type, *str_type, *bytes_type;
	char version[32];
	char note[96];
	bool found; /* an interpreter is in the process */
} py;

#define AT(base, off, type) (*(type *)((const char *)(base) + (off)))

void pystack_init(void)
{
	const unsigned long *hexversion;
	const char *(*get_version)(void);
	unsigned major = 0, minor = 0, micro = 0;

	py.this_thread_state =
		(void *(*)(void))real_dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
	if (!py.this_thread_state)
		return;
	py.found = true;

	hexversion = real_dlsym(RTLD_DEFAULT, "Py_Version"); /* 3.11+ */
	get_version = (const char *(*)(void))real_dlsym(RTLD_DEFAULT, "Py_GetVersion");
	if (hexversion) {
		major = (unsigned)(*hexversion >> 24);
		minor = (unsigned)(*hexversion >> 16) & 0xff;
		micro = (unsigned)(*hexversion >> 8) & 0xff;
	} else if (get_version) {
		/* 3.10 and older: "3.10.13 (main, ...)"; the count of fields is checked */
		/* NOLINTNEXTLINE(cert-err34-c): a version component does not overflow */
		if (sscanf(get_version(), "%u.%u.%u", &major, &minor, &micro) != 3)
			major = 0;
	}
	snprintf(py.version, sizeof(py.version), "%u.%u.%u", major, minor, micro);

	py.code_type = real_dlsym(RTLD_DEFAULT, "PyCode_Type");
	py.str_type = real_dlsym(RTLD_DEFAULT, "PyUnicode_Type");
	py.bytes_type = real_dlsym(RTLD_DEFAULT, "PyBytes_Type");
	if (!py.code_type || !py.str_type || !py.bytes_type) {
		snprintf(py.note, sizeof(py.note), "CPython's type objects are not visible");
		return;
	}
	if (major != 3) {
		snprintf(py.note, sizeof(py.note), "unknown Python version %s", py.version);
		return;
	}
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].minor == (int)minor)
			py.l = &layouts[i];
	if (!py.l) {
		snprintf(py.note, sizeof(py.note), "Python %s: no frame layout known", py.version);
		return;
	}
	if (minor >= 13) {
		/* 3.13 publishes its layout at the start of _PyRuntime: check
		 * the cookie and refuse free-threaded builds (other offsets). */
		const char *rt = real_dlsym(RTLD_DEFAULT, "_PyRuntime");

		if (!rt || memcmp(rt, "xdebugpy", 8) != 0 || (AT(rt, 8, uint64_t) >> 16) != 0x30d ||
		    AT(rt, 16, uint64_t) != 0) {
			snprintf(py.note, sizeof(py.note),
				 "Python %s: debug offsets missing or free-threaded build",
				 py.version);
			py.l = NULL;
		}
	}
}

bool pystack_info(const char **version, bool *supported, const char **note)
{
	*version = py.version;
	*supported = py.l != NULL;
	*note = py.note;
	return py.found;
}

static inline bool is_code(const void *p)
{
	return p && AT(p, OB_TYPE, const void *) == py.code_type;
}

/* Byte offset of the frame's current instruction in its code, or -1. */
static inline long frame_addr(const struct layout *l, const char *f, const char *code)
{
	if (l->instr_is_lasti) {
		int lasti = AT(f, l->f_instr, int);

		return lasti < 0 ? -1 : (long)lasti * 2;
	}
	return (long)(AT(f, l->f_instr, const char *) - (code + l->co_code));
}

unsigned pystack_capture(struct gs_pyraw *out, unsigned max)
{
	const struct layout *l = py.l;
	const char *ts, *f;
	unsigned n = 0;

	if (!l)
		return 0;
	ts = py.this_thread_state();
	if (!ts)
		return 0;
	if (l->ts_frame >= 0) {
		f = AT(ts, l->ts_frame, const char *);
	} else {
		const char *cframe = AT(ts, l->ts_cframe, const char *);

		f = cframe ? AT(cframe, l->cframe_frame, const char *) : NULL;
	}
	for (unsigned guard = 0; f && n < max && guard < 4096;
	     guard++, f = AT(f, l->f_back, const char *)) {
		const char *code = AT(f, l->f_code, const char *);
		long addr;

		if (l->f_owner >= 0) {
			char owner = AT(f, l->f_owner, char);

			if (l->cstack_shims && owner == OWNED_BY_CSTACK)
				continue;
			if (!is_code(code))
				continue;
			addr = frame_addr(l, f, code);
			/* A frame still running its prologue is not shown by
			 * CPython's own traceback either. */
			if (owner != OWNED_BY_GENERATOR &&
			    addr / 2 < AT(code, l->co_firsttraceable, int))
				continue;
		} else {
			if (!is_code(code))
				break;
			addr = frame_addr(l, f, code);
		}
		out[n].code = (uintptr_t)code;
		out[n].addr = (uintptr_t)addr;
		out[n].file = (uintptr_t)AT(code, l->co_filename, const void *);
		n++;
	}
	return n;
}

/* ---- decoding, once per new site ---- */

/* A str object as UTF-8 into buf; false if it is not a compact str. */
static bool str_utf8(const char *s, char *buf, size_t len)
{
	const struct layout *l = py.l;
	unsigned state, kind;
	long n;
	size_t k = 0;
	const unsigned char *data;

	if (!s || AT(s, OB_TYPE, const void *) != py.str_type)
		return false;
	n = AT(s, STR_LENGTH, long);
	state = AT(s, STR_STATE, unsigned);
	kind = (state >> 2) & 7;
	if (!(state & (1u << 5)) || n < 0) /* not compact */
		return false;
	if (state & (1u << 6)) { /* ASCII: already UTF-8 */
		data = (const unsigned char *)s + l->str_ascii_size;
		kind = 1;
	} else {
		data = (const unsigned char *)s + l->str_compact_size;
	}
	for (long i = 0; i < n; i++) {
		uint32_t c = kind == 1 ? data[i] :
			     kind == 2 ? ((const uint16_t *)data)[i] :
					 ((const uint32_t *)data)[i];
		unsigned char u[4];
		size_t m;

		if (c < 0x80) {
			u[0] = (unsigned char)c;
			m = 1;
		} else if (c < 0x800) {
			u[0] = (unsigned char)(0xc0 | (c >> 6));
			u[1] = (unsigned char)(0x80 | (c & 0x3f));
			m = 2;
		} else if (c < 0x10000) {
			u[0] = (unsigned char)(0xe0 | (c >> 12));
			u[1] = (unsigned char)(0x80 | ((c >> 6) & 0x3f));
			u[2] = (unsigned char)(0x80 | (c & 0x3f));
			m = 3;
		} else {
			u[0] = (unsigned char)(0xf0 | (c >> 18));
			u[1] = (unsigned char)(0x80 | ((c >> 12) & 0x3f));
			u[2] = (unsigned char)(0x80 | ((c >> 6) & 0x3f));
			u[3] = (unsigned char)(0x80 | (c & 0x3f));
			m = 4;
		}
		if (k + m >= len)
			break;
		memcpy(buf + k, u, m);
		k += m;
	}
	buf[k] = '\0';
	return true;
}

static unsigned long varint(const unsigned char **p, const unsigned char *end)
{
	unsigned long v = 0;
	unsigned shift = 0;
	unsigned char b;

	do {
		if (*p >= end || shift > 60)
			return v;
		b = *(*p)++;
		v |= (unsigned long)(b & 63) << shift;
		shift += 6;
	} while (b & 64);
	return v;
}

static long svarint(const unsigned char **p, const unsigned char *end)
{
	unsigned long u = varint(p, end);

	return (u & 1) ? -(long)(u >> 1) : (long)(u >> 1);
}

/* 3.11+ locations table (PEP 657): the line of byte offset addr. */
int pystack_line_locations(const unsigned char *p, long size, int first, long addr)
{
	const unsigned char *end = p + size;
	long pos = 0;
	int line = first;

	while (p < end) {
		unsigned char b = *p++;
		int code = (b >> 3) & 15;
		long len = ((b & 7) + 1) * 2L;
		bool none = false;

		if (code == 15)
			none = true;
		else if (code == 14 || code == 13)
			line += (int)svarint(&p, end);
		else if (code >= 10)
			line += code - 10;
		if (addr >= pos && addr < pos + len)
			return none ? -1 : line;
		pos += len;
		while (p < end && !(*p & 0x80)) /* columns: not needed */
			p++;
	}
	return -1;
}

/* 3.10 line table (PEP 626): (byte delta, signed line delta) pairs. */
int pystack_line_pairs(const unsigned char *p, long size, int first, long addr)
{
	long pos = 0;
	int line = first;

	for (long i = 0; i + 1 < size; i += 2) {
		/* NOLINTNEXTLINE(bugprone-signed-char-misuse,cert-str34-c): a signed byte */
		int ldelta = (signed char)p[i + 1];
		long end = pos + p[i];

		if (ldelta != -128)
			line += ldelta;
		if (addr >= pos && addr < end)
			return ldelta == -128 ? -1 : line;
		pos = end;
	}
	return -1;
}

void pystack_decode(const struct gs_pyraw *raw, struct gs_pyframe *out)
{
	const struct layout *l = py.l;
	const char *code = (const char *)raw->code;
	const char *table;
	char buf[1024];
	int first;
	long addr = (long)raw->addr;

	out->file = out->function = NULL;
	out->line = -1;
	if (!l || !is_code(code))
		return;
	if (str_utf8(AT(code, l->co_filename, const char *), buf, sizeof(buf)))
		out->file = strdup(buf);
	if (str_utf8(AT(code, l->co_name, const char *), buf, sizeof(buf)))
		out->function = strdup(buf);
	first = AT(code, l->co_firstlineno, int);
	table = AT(code, l->co_linetable, const char *);
	if (addr < 0) {
		out->line = first;
	} else if (table && AT(table, OB_TYPE, const void *) == py.bytes_type) {
		const unsigned char *p = (const unsigned char *)table + BYTES_DATA;
		long size = AT(table, BYTES_SIZE, long);

		out->line = l->locations_table ? pystack_line_locations(p, size, first, addr) :
						 pystack_line_pairs(p, size, first, addr);
	}
}
