/* SPDX-License-Identifier: MIT */
/* A Python pickle, protocol 2, written as it is built (pickle.h). */
#include <errno.h>
#include <string.h>

#include "pickle.h"
#include "utf8.h"

/* The opcodes written (Python's Lib/pickletools.py names them). */
enum {
	OP_PROTO = 0x80,
	OP_STOP = '.',
	OP_MARK = '(',
	OP_EMPTY_DICT = '}',
	OP_EMPTY_LIST = ']',
	OP_SETITEMS = 'u',
	OP_APPENDS = 'e',
	OP_TUPLE = 't',
	OP_BININT1 = 'K',
	OP_BININT2 = 'M',
	OP_BININT = 'J',
	OP_LONG1 = 0x8a,
	OP_BINFLOAT = 'G',
	OP_BINUNICODE = 'X',
	OP_NEWTRUE = 0x88,
	OP_NEWFALSE = 0x89,
	OP_NONE = 'N',
	OP_LONG_BINPUT = 'r',
	OP_LONG_BINGET = 'j',
};

static void u32le(FILE *f, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		putc((int)((v >> (8 * i)) & 0xff), f);
}

void pickle_begin(struct pickle *p, FILE *f)
{
	memset(p, 0, sizeof(*p));
	p->f = f;
	putc(OP_PROTO, f);
	putc(2, f);
}

/*
 * Before an item of the innermost container: in a list, every PICKLE_BATCH
 * items the batch so far is appended (APPENDS) and a new one marked; a
 * dict's items are marked by their key (pickle_key); a tuple takes its
 * items at its end, all at once.
 */
static void item(struct pickle *p, char in)
{
	size_t *n;

	if (!p->depth || p->kind[p->depth - 1] != in)
		return;
	n = &p->items[p->depth - 1];
	if (*n && *n % PICKLE_BATCH == 0)
		putc(in == 'd' ? OP_SETITEMS : OP_APPENDS, p->f);
	if (*n % PICKLE_BATCH == 0)
		putc(OP_MARK, p->f);
	(*n)++;
}

static void value(struct pickle *p)
{
	item(p, 'l');
}

static void open_container(struct pickle *p, char kind, int op)
{
	value(p);
	if (p->depth == PICKLE_DEPTH) {
		p->broken = true;
		return;
	}
	p->kind[p->depth] = kind;
	p->items[p->depth] = 0;
	p->depth++;
	putc(op, p->f);
}

void pickle_dict(struct pickle *p)
{
	open_container(p, 'd', OP_EMPTY_DICT);
}

void pickle_list(struct pickle *p)
{
	open_container(p, 'l', OP_EMPTY_LIST);
}

void pickle_tuple(struct pickle *p)
{
	open_container(p, 't', OP_MARK);
}

void pickle_close(struct pickle *p)
{
	char kind;

	if (!p->depth) {
		p->broken = true;
		return;
	}
	kind = p->kind[--p->depth];
	if (kind == 't')
		putc(OP_TUPLE, p->f);
	else if (p->items[p->depth])
		putc(kind == 'd' ? OP_SETITEMS : OP_APPENDS, p->f);
}

/* S as BINUNICODE, ill-formed UTF-8 byte by byte as '?' (one for one:
 * the length stays) */
static void put_str(FILE *f, const char *s)
{
	size_t n = strlen(s);

	putc(OP_BINUNICODE, f);
	u32le(f, (uint32_t)n);
	for (size_t i = 0; i < n;) {
		/* the NUL at the end is no continuation byte: K stays within S */
		size_t k = utf8_seq_len((const unsigned char *)s + i);

		if (k == 0) {
			putc('?', f);
			i++;
		} else {
			fwrite(s + i, 1, k, f);
			i += k;
		}
	}
}

void pickle_key(struct pickle *p, const char *key)
{
	if (!p->depth || p->kind[p->depth - 1] != 'd') {
		p->broken = true;
		return;
	}
	item(p, 'd');
	put_str(p->f, key);
}

void pickle_str(struct pickle *p, const char *s)
{
	value(p);
	put_str(p->f, s);
}

void pickle_int(struct pickle *p, int64_t v)
{
	value(p);
	if (v >= 0 && v <= 0xff) {
		putc(OP_BININT1, p->f);
		putc((int)v, p->f);
	} else if (v >= 0 && v <= 0xffff) {
		putc(OP_BININT2, p->f);
		putc((int)(v & 0xff), p->f);
		putc((int)(v >> 8), p->f);
	} else if (v >= INT32_MIN && v <= INT32_MAX) {
		putc(OP_BININT, p->f);
		u32le(p->f, (uint32_t)(int32_t)v);
	} else {
		/* two's complement, little-endian, as few bytes as keep the
		 * sign: the top byte's high bit is the sign */
		unsigned char b[8];
		unsigned n = 8;

		for (unsigned i = 0; i < 8; i++)
			b[i] = (unsigned char)((uint64_t)v >> (8 * i));
		while (n > 1 && ((b[n - 1] == 0 && !(b[n - 2] & 0x80)) ||
				 (b[n - 1] == 0xff && (b[n - 2] & 0x80))))
			n--;
		putc(OP_LONG1, p->f);
		putc((int)n, p->f);
		fwrite(b, 1, n, p->f);
	}
}

void pickle_float(struct pickle *p, double v)
{
	uint64_t bits;

	value(p);
	memcpy(&bits, &v, sizeof(bits));
	putc(OP_BINFLOAT, p->f);
	/* big-endian, as pickle's BINFLOAT is */
	for (int i = 7; i >= 0; i--)
		putc((int)((bits >> (8 * i)) & 0xff), p->f);
}

void pickle_bool(struct pickle *p, bool v)
{
	value(p);
	putc(v ? OP_NEWTRUE : OP_NEWFALSE, p->f);
}

void pickle_none(struct pickle *p)
{
	value(p);
	putc(OP_NONE, p->f);
}

void pickle_put(struct pickle *p, uint32_t n)
{
	putc(OP_LONG_BINPUT, p->f);
	u32le(p->f, n);
}

void pickle_get(struct pickle *p, uint32_t n)
{
	value(p);
	putc(OP_LONG_BINGET, p->f);
	u32le(p->f, n);
}

int pickle_end(struct pickle *p)
{
	putc(OP_STOP, p->f);
	if (p->broken || p->depth)
		return -EINVAL;
	return ferror(p->f) ? -EIO : 0;
}
