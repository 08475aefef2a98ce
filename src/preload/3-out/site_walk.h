/* SPDX-License-Identifier: MIT */
/*
 * The call sites as an array by id, for the walks of every site (the
 * snapshot thread's samples, the files): sites.c keeps them in a list,
 * newest first, whose walk is one dependent load per site - a cache miss
 * each at a million sites.  Over an array the loads are independent and
 * the processor overlaps them.  Each walker keeps its own (no lock): it
 * adds the sites pushed since its last refresh, found between the list's
 * head now and its head then (sites are never removed).
 */
#ifndef GPUSPY_SITE_WALK_H
#define GPUSPY_SITE_WALK_H

#include "sites.h"

struct site_walk {
	struct gs_site **by_id; /* NULL: an id taken, its site not yet pushed */
	unsigned n;		/* ids below n may be set */
	unsigned cap;
	struct gs_site *head; /* the list's head at the last refresh */
};

/* How far ahead a walk fetches the sites it will read. */
#define SITE_WALK_AHEAD 16

/* Site I of W, or NULL; the walk's next sites' counters are fetched ahead
 * so that their cache misses overlap. */
static inline struct gs_site *site_walk_at(const struct site_walk *w, unsigned i)
{
	if (i + SITE_WALK_AHEAD < w->n && w->by_id[i + SITE_WALK_AHEAD])
		__builtin_prefetch(&w->by_id[i + SITE_WALK_AHEAD]->c);
	return w->by_id[i];
}

/* Adds the sites pushed since the last refresh.  0, or -ENOMEM (W keeps
 * what it had: the next refresh tries again). */
int site_walk_refresh(struct site_walk *w);

#endif /* GPUSPY_SITE_WALK_H */
