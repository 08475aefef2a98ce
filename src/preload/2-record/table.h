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
	uint64_t stream; /* a stream-ordered allocation's stream; else 0 */
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

/* A copy of a live entry (table_copy). */
struct gs_live {
	uint64_t addr; /* the key: a pointer, or a VMM handle or orphan key */
	uint64_t size, stream;
	uint32_t site;
	int32_t device;
	uint8_t space, kind;
};
/* Every live entry, copied into *OUT (malloc()ed, the caller's to free,
 * NULL when there are none) shard by shard, each under its lock, so
 * that no allocation waits longer than one shard's copy: *N of them.
 * Entries inserted meanwhile into a shard already copied are missed, as
 * those removed from one not yet copied are: a moment per shard.  0, or
 * -ENOMEM (*OUT holds those copied so far). */
int table_copy(struct gs_live **out, size_t *n);

#endif /* GPUSPY_TABLE_H */
