/* SPDX-License-Identifier: MIT */
/* table.c: live allocations keyed by (space, address or handle) */
#ifndef GPUSPY_TABLE_H
#define GPUSPY_TABLE_H

#include "core.h"

struct gs_alloc {
	uint64_t addr;
	uint32_t space;
	int32_t device;
	uint64_t size;
	uint64_t seq;
	struct gs_site *site;
	struct gs_alloc *next; /* the table's bucket chain (table.c) */
	uint8_t kind;
	bool graph; /* made resident by a graph launch (graph.c) */
};
/* Insert; returns the entry it displaced (same key), or NULL.  *err is
 * 0: a shard that cannot grow (out of memory) keeps its buckets and
 * takes the entry all the same. */
struct gs_alloc *table_insert(struct gs_alloc *a, int *err);
struct gs_alloc *table_remove(enum gs_space space, uint64_t addr);
/* The site of the live allocation at (SPACE, ADDR), or NULL: a site is
 * never freed, so it outlives the lock. */
struct gs_site *table_site(enum gs_space space, uint64_t addr);
/* Change the key of a live entry (VMM release-while-mapped). */
int table_rekey(enum gs_space space, uint64_t addr, enum gs_space nspace, uint64_t naddr);

#endif /* GPUSPY_TABLE_H */
