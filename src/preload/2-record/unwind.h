/* SPDX-License-Identifier: MIT */
/* unwind.c: raw stacks and the modules they fall in */
#ifndef GPUSPY_UNWIND_H
#define GPUSPY_UNWIND_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core.h"

/* Modules the registry holds at most. */
#define GS_MAX_MODULES 4096

struct gs_name;
struct gs_frame {
	int32_t module;	 /* index in the module registry, -1 = unknown */
	uint64_t offset; /* return address - module base (absolute if no module) */
	/* What names it, set after the site is made and never on the
	 * allocating thread (symbols.c); NULL until then. */
	_Atomic(const struct gs_name *) name;
};
struct gs_module {
	char *path;
	char build_id[41 * 2];
	uintptr_t base, start, end;
	bool program; /* the executable itself (its path from /proc/self/exe) */
};
/*
 * What unwind_here() needs of unwind.c: set by unwind_select(), under the
 * activation lock before the first stack, and only read after.
 */
struct gs_unwinder {
	int (*libunwind)(void **, int); /* unw_backtrace, when libunwind is the one */
	uintptr_t self_start, self_end; /* gpuspy's own text */
};
extern struct gs_unwinder gs_unwinder;

/* The other unwinders' raw stack (fp, backtrace): up to WANT addresses. */
int unwind_other(void **raw, int want);

/* What unwind_here() may write: a stack's frames and gpuspy's own. */
#define GS_UNWIND_RAW (GS_MAX_DEPTH + 16)

/*
 * Return addresses of the first frames above gpuspy, innermost first: at
 * most MAX of them, from *FIRST on, in RAW (GS_UNWIND_RAW entries).  Inline
 * in its caller, so that libunwind starts in the caller's frame and walks
 * one frame of gpuspy's fewer (about 90 instructions a frame), and the
 * stack is not copied: *FIRST points past gpuspy's own frames.
 */
static inline __attribute__((always_inline)) unsigned unwind_here(void **raw, unsigned max,
								  void ***first)
{
	int want = (int)(max + 16 < GS_UNWIND_RAW ? max + 16 : GS_UNWIND_RAW);
	int n, i = 0;

	*first = raw;
	if (max == 0)
		return 0;
	n = gs_unwinder.libunwind ? gs_unwinder.libunwind(raw, want) : unwind_other(raw, want);
	while (i < n && (uintptr_t)raw[i] >= gs_unwinder.self_start &&
	       (uintptr_t)raw[i] < gs_unwinder.self_end)
		i++;
	*first = raw + i;
	return (unsigned)(n - i) < max ? (unsigned)(n - i) : max;
}
void unwind_resolve(uintptr_t pc, struct gs_frame *out);
void unwind_init(void);
void unwind_warm(void);
void unwind_select(const char *name);
const char *unwind_name(void);
/* Registry access for the report; the registry only grows. */
unsigned unwind_module_count(void);
const struct gs_module *unwind_module(unsigned i);

#endif /* GPUSPY_UNWIND_H */
