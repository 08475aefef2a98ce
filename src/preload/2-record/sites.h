/* SPDX-License-Identifier: MIT */
/* sites.c: interned call sites with their counters */
#ifndef GPUSPY_SITES_H
#define GPUSPY_SITES_H

#include "core.h"
#include "counters.h"
#include "pystack.h"
#include "trend.h"
#include "unwind.h"

/* What the growth rule said of a site (libgpuspy(7), "The growth rule"),
 * as the files record it (docs/format.md, "growth"): by its own samples,
 * by its live bytes at the marks, or by its framework's own allocated
 * counter (the site is that framework's pool segment). */
enum gs_verdict_by { GS_BY_SAMPLES, GS_BY_MARKS, GS_BY_FRAMEWORK };
struct gs_verdict {
	struct trend_verdict v;
	uint8_t by;    /* enum gs_verdict_by */
	uint8_t fw;    /* GS_BY_FRAMEWORK: enum gs_fw (names.h) */
	uint8_t place; /* and its place, a CUDA ordinal or GS_FW_HOST */
};

struct gs_site {
	struct gs_site *next_all; /* every site, newest first, for the report */
	uint32_t id;
	uint8_t api, kind, door;
	uint16_t depth, pydepth;
	uint64_t first_seq;
	struct gs_counters c;
	struct gs_frame *frames; /* resolved once, when the site is new */
	struct gs_pyframe *py;	 /* decoded once, innermost first */
	atomic_bool growing;	 /* growing now, not stopped (writer.c) */
	atomic_bool growth_told; /* flagged once, and named on stderr */
	/* Once flagged: the verdict, the snapshot thread's, which writes and
	 * reads it under gs_events_lock (writer.c) */
	struct gs_verdict *verdict;
	/* hash-table linkage and the key live in sites.c */
};
struct gs_site *site_intern(enum gs_api api, enum gs_kind kind, enum gs_door door, const void *pcs,
			    unsigned depth, const struct gs_pyraw *py, unsigned pydepth);
struct gs_site *site_list(void);
unsigned site_count(void);

#endif /* GPUSPY_SITES_H */
