/* SPDX-License-Identifier: MIT */
/* unwind.c: raw stacks and the modules they fall in */
#ifndef GPUSPY_UNWIND_H
#define GPUSPY_UNWIND_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

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
/* Return addresses of the first frames above gpuspy, innermost first. */
unsigned unwind_capture(uintptr_t *pcs, unsigned max);
void unwind_resolve(uintptr_t pc, struct gs_frame *out);
void unwind_init(void);
void unwind_warm(void);
void unwind_select(const char *name);
const char *unwind_name(void);
/* Registry access for the report; the registry only grows. */
unsigned unwind_module_count(void);
const struct gs_module *unwind_module(unsigned i);

#endif /* GPUSPY_UNWIND_H */
