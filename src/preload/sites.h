/* SPDX-License-Identifier: MIT */
/* sites.c: interned call sites with their counters */
#ifndef GPUSPY_SITES_H
#define GPUSPY_SITES_H

#include "core.h"
#include "counters.h"
#include "pystack.h"
#include "unwind.h"

struct gs_site {
	struct gs_site *next_all; /* every site, newest first, for the report */
	uint32_t id;
	uint8_t api, kind, door;
	uint16_t depth, pydepth;
	uint64_t first_seq;
	struct gs_counters c;
	struct gs_frame *frames; /* resolved once, when the site is new */
	struct gs_pyframe *py;	 /* decoded once, innermost first */
	atomic_bool growing;	 /* set by the snapshot thread (writer.c) */
	atomic_bool growth_told; /* named on stderr once */
				 /* hash-table linkage and the key live in sites.c */
};
struct gs_site *site_intern(enum gs_api api, enum gs_kind kind, enum gs_door door,
			    const uintptr_t *pcs, unsigned depth, const struct gs_pyraw *py,
			    unsigned pydepth);
struct gs_site *site_list(void);
unsigned site_count(void);

#endif /* GPUSPY_SITES_H */
