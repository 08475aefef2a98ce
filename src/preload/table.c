/* SPDX-License-Identifier: MIT */
/*
 * Live allocations, keyed by (space, address or handle).
 *
 * The table is split into shards, each a uthash table under its own
 * mutex, so threads allocating at once rarely meet.  Entries are owned by
 * the table while inserted and by the caller once removed.
 */
#include <errno.h>
#include <string.h>

#include "core.h"
#include "locks.h"
#include "table.h"

#define TABLE_SHARDS GS_TABLE_SHARDS

/* Shard i is guarded by gs_table_locks[i] (locks.c). */
struct shard {
	struct gs_alloc *head;
} __attribute__((aligned(64)));

static struct shard shards[TABLE_SHARDS];

/* The key is the first 12 bytes of struct gs_alloc: addr, then space. */
#define KEY_LEN (offsetof(struct gs_alloc, space) + sizeof(uint32_t))
_Static_assert(offsetof(struct gs_alloc, addr) == 0, "key must lead the entry");

static unsigned shard_of(uint64_t addr, uint32_t space)
{
	/* Allocations are aligned: the low bits say nothing. */
	uint64_t h = (addr >> 9) ^ ((uint64_t)space << 61);

	h *= 0x9E3779B97F4A7C15ull;
	return (unsigned)(h >> 58) % TABLE_SHARDS;
}

struct gs_alloc *table_insert(struct gs_alloc *a, int *err)
{
	unsigned i = shard_of(a->addr, a->space);
	struct shard *s = &shards[i];
	struct gs_alloc *old = NULL;

	*err = 0;
	gs_lock(&gs_table_locks[i]);
	HASH_FIND(hh, s->head, a, KEY_LEN, old);
	if (old)
		HASH_DELETE(hh, s->head, old);
	gs_hash_oom = 0;
	HASH_ADD(hh, s->head, addr, KEY_LEN, a);
	if (gs_hash_oom) {
		gs_hash_oom = 0;
		*err = -ENOMEM;
	}
	gs_unlock(&gs_table_locks[i]);
	return old;
}

struct gs_alloc *table_remove(enum gs_space space, uint64_t addr)
{
	struct gs_alloc key = { .addr = addr, .space = space };
	unsigned i = shard_of(addr, space);
	struct shard *s = &shards[i];
	struct gs_alloc *a;

	gs_lock(&gs_table_locks[i]);
	/*
	 * key is initialised over all of KEY_LEN (addr, space: no padding); the
	 * analyzer cannot split the uint64_t into the bytes HASH_JEN reads.
	 * NOLINTNEXTLINE(clang-analyzer-core.UndefinedBinaryOperatorResult) */
	HASH_FIND(hh, s->head, &key, KEY_LEN, a);
	if (a)
		HASH_DELETE(hh, s->head, a);
	gs_unlock(&gs_table_locks[i]);
	return a;
}

struct gs_site *table_site(enum gs_space space, uint64_t addr)
{
	struct gs_alloc key = { .addr = addr, .space = space };
	unsigned i = shard_of(addr, space);
	struct gs_alloc *a;
	struct gs_site *site;

	gs_lock(&gs_table_locks[i]);
	/* as table_remove: key is initialised over all of KEY_LEN
	 * NOLINTNEXTLINE(clang-analyzer-core.UndefinedBinaryOperatorResult) */
	HASH_FIND(hh, shards[i].head, &key, KEY_LEN, a);
	site = a ? a->site : NULL;
	gs_unlock(&gs_table_locks[i]);
	return site;
}

int table_rekey(enum gs_space space, uint64_t addr, enum gs_space nspace, uint64_t naddr)
{
	struct gs_alloc *a = table_remove(space, addr);
	struct gs_alloc *old;
	int err;

	if (!a)
		return -ENOENT;
	a->space = nspace;
	a->addr = naddr;
	old = table_insert(a, &err);
	/* Orphan keys are unique and a re-insert of a just-removed entry
	 * needs no new memory in uthash beyond its own bucket. */
	(void)old;
	return err;
}
