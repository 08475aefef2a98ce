/* SPDX-License-Identifier: MIT */
/* Native frames to function, file and line, from the modules on disk. */
#ifndef GPUSPY_READ_SYMBOLIZE_H
#define GPUSPY_READ_SYMBOLIZE_H

#include <stdint.h>

struct symbolizer;
struct sym_module;

struct sym_info {
	char *function; /* demangled; NULL when unknown */
	char *file;	/* NULL when unknown */
	int64_t line;	/* 0 when unknown */
};

int symbolizer_new(struct symbolizer **out);
void symbolizer_free(struct symbolizer *s);

/* The module at PATH, opened once per path; NULL when it cannot be read or
 * when both build-ids are known and differ (a rebuilt binary would give
 * wrong names, and none is better than a wrong one). */
struct sym_module *symbolizer_module(struct symbolizer *s, const char *path, const char *build_id);

/* Fill INFO for the return address at OFFSET in MOD (which may be NULL);
 * FALLBACK_SYMBOL is used when no function is found.  -ENOMEM only. */
int symbolize_frame(struct sym_module *mod, uint64_t offset, const char *fallback_symbol,
		    struct sym_info *info);

void sym_info_clear(struct sym_info *info);

/* Demangled copy of NAME (a copy of NAME itself when it is not mangled or
 * demangling is unavailable); NULL on out-of-memory. */
char *symbolize_demangle(const char *name);

#endif
