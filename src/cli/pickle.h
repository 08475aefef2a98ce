/* SPDX-License-Identifier: MIT */
/*
 * A Python pickle (protocol 2) written as it is built: dicts, lists,
 * tuples, strings, integers, floats, booleans and None, each call a
 * value in the order of the document, containers opened and closed
 * around theirs.  Only opcodes that Python's unpickler and PyTorch's
 * memory viewer (MemoryViz.js, which decodes a subset) both read:
 * PROTO, EMPTY_DICT, EMPTY_LIST, MARK, SETITEMS, APPENDS, TUPLE,
 * BININT1, BININT2, BININT, LONG1, BINFLOAT, BINUNICODE, NEWTRUE,
 * NEWFALSE, NONE, LONG_BINPUT, LONG_BINGET, STOP.  A container's items go
 * in batches of PICKLE_BATCH, as Python's own pickler writes them (the
 * viewer appends a batch with one call, which a huge one would overflow).
 */
#ifndef GPUSPY_CLI_PICKLE_H
#define GPUSPY_CLI_PICKLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PICKLE_BATCH 1000
#define PICKLE_DEPTH 16

struct pickle {
	FILE *f;
	/* the open containers: 'd' dict, 'l' list, 't' tuple; their items */
	char kind[PICKLE_DEPTH];
	size_t items[PICKLE_DEPTH];
	unsigned depth;
	bool broken; /* nested too deep, or a key outside a dict: a bug */
};

/* The protocol, on F. */
void pickle_begin(struct pickle *p, FILE *f);
/* STOP: 0, or -EIO when F failed, -EINVAL when the calls did not nest. */
int pickle_end(struct pickle *p);

void pickle_dict(struct pickle *p);
void pickle_list(struct pickle *p);
void pickle_tuple(struct pickle *p);
/* Closes the innermost container. */
void pickle_close(struct pickle *p);
/* A dict's next key; its value is the next call. */
void pickle_key(struct pickle *p, const char *key);

/* S as a str, each byte that is not part of well-formed UTF-8 written
 * '?' (Python refuses ill-formed UTF-8; the names come from files). */
void pickle_str(struct pickle *p, const char *s);
void pickle_int(struct pickle *p, int64_t v);
void pickle_float(struct pickle *p, double v);
void pickle_bool(struct pickle *p, bool v);
void pickle_none(struct pickle *p);

/* The value just written kept as memo entry N; pickle_get(N) writes it
 * again as the same object (a list of frames shared by many events). */
void pickle_put(struct pickle *p, uint32_t n);
void pickle_get(struct pickle *p, uint32_t n);

#endif
