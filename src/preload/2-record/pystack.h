/* SPDX-License-Identifier: MIT */
/* pystack.c: the calling thread's Python frames, without the GIL */
#ifndef GPUSPY_PYSTACK_H
#define GPUSPY_PYSTACK_H

#include <stdbool.h>
#include <stdint.h>

#include "core.h"

struct gs_pyraw {
	uintptr_t code, addr, file; /* file: guards against a reused code address */
};
struct gs_pyframe {
	char *file, *function; /* UTF-8, may be NULL */
	int line;	       /* -1 unknown */
};
void pystack_init(void);
unsigned pystack_capture(struct gs_pyraw *out, unsigned max);
void pystack_decode(const struct gs_pyraw *raw, struct gs_pyframe *out);
/* The line of bytecode offset ADDR in a code object's line table of SIZE
 * bytes (FIRST: co_firstlineno), or -1: the 3.11+ locations table and
 * the 3.10 one.  Pure functions of their arguments. */
int pystack_line_locations(const unsigned char *p, long size, int first, long addr);
int pystack_line_pairs(const unsigned char *p, long size, int first, long addr);
/* false when no interpreter is in the process */
bool pystack_info(const char **version, bool *supported, const char **note);

#endif /* GPUSPY_PYSTACK_H */
