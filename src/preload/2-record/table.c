/* SPDX-License-Identifier: MIT */
/*
 * Live allocations, keyed by (space, address or handle).
 *
 * The table is split into shards, each under its own mutex, so threads
 * allocating at once rarely meet.  A shard is a power-of-two array of
 * bucket chains linked through the entries themselves: an insert or a
 * remove is one hash of the key, one bucket and a chain of about one
 * entry, and allocates nothing while the shard has no more entries than
 * buckets.  A shard's first buckets are its own (no allocation before the
 * first growth), and buckets are never given back, so a shard that
 * empties and fills again at every pair (a program with few allocations
 * live) does not make and free its array each time, as uthash did.
 * Entries are owned by the table while inserted and by the caller once
 * removed.
 */
#include <errno.h>
#include <stdlib.h>

#include "core.h"
#include "locks.h"
#include "sites.h"
#include "table.h"

#define TABLE_SHARDS  GS_TABLE_SHARDS
#define FIRST_BUCKETS 16u

/* Shard i is guarded by gs_table_locks[i] (locks.c). */
struct shard {
	struct gs_alloc **b; /* NULL until the first insert: then first[] */
	uint32_t mask;	     /* buckets - 1 */
	uint32_t n;	     /* entries */
	uint32_t grow_at;    /* entries past which the array doubles */
	struct gs_alloc *first[FIRST_BUCKETS];
} __attribute__((aligned(64)));

static struct shard shards[TABLE_SHARDS];

_Static_assert((TABLE_SHARDS & (TABLE_SHARDS - 1)) == 0, "shards: a power of two");

/* Every bit of the key reaches every bit of the hash: addresses are
 * aligned (low bits zero) and handles small (high bits zero). */
static inline uint64_t key_hash(uint64_t addr, uint32_t space)
{
	uint64_t h = addr ^ ((uint64_t)space << 56);

	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 29;
	return h;
}

/* The top bits pick the shard, the low ones the bucket in it. */
static inline unsigned shard_of(uint64_t h)
{
	return (unsigned)(h >> 58) & (TABLE_SHARDS - 1);
}

/* The link that points at the entry (SPACE, ADDR) in its chain, or at
 * the chain's end (NULL) when there is none.  Shard lock held. */
static inline struct gs_alloc **chain_find(struct shard *s, uint64_t h, uint64_t addr,
					   uint32_t space)
{
	struct gs_alloc **p = &s->b[h & s->mask];

	while (*p && ((*p)->addr != addr || (*p)->space != space))
		p = &(*p)->next;
	return p;
}

/* Twice the buckets, the entries moved; on out-of-memory the old array
 * stays (longer chains, nothing lost) and the next try waits until the
 * shard has twice as many entries again.  Shard lock held. */
static void grow(struct shard *s)
{
	uint32_t nb = (s->mask + 1) * 2;
	struct gs_alloc **b = nb ? calloc(nb, sizeof(*b)) : NULL;

	s->grow_at = s->grow_at * 2 > s->grow_at ? s->grow_at * 2 : s->grow_at;
	if (!b)
		return;
	for (uint32_t i = 0; i <= s->mask; i++) {
		struct gs_alloc *a = s->b[i], *next;

		for (; a; a = next) {
			uint64_t h = key_hash(a->addr, a->space);

			next = a->next;
			a->next = b[h & (nb - 1)];
			b[h & (nb - 1)] = a;
		}
	}
	if (s->b != s->first)
		free(s->b);
	s->b = b;
	s->mask = nb - 1;
}

struct gs_alloc *table_insert(struct gs_alloc *a, int *err)
{
	uint64_t h = key_hash(a->addr, a->space);
	unsigned i = shard_of(h);
	struct shard *s = &shards[i];
	struct gs_alloc **p, *old;

	/* Never fails: a shard that cannot grow keeps its buckets. */
	*err = 0;
	gs_lock(&gs_table_locks[i]);
	if (GS_UNLIKELY(!s->b)) {
		s->b = s->first;
		s->mask = FIRST_BUCKETS - 1;
		s->grow_at = FIRST_BUCKETS;
	}
	p = chain_find(s, h, a->addr, a->space);
	old = *p;
	if (old) {
		/* the same key: the new entry takes the old one's place */
		a->next = old->next;
		*p = a;
	} else {
		a->next = s->b[h & s->mask];
		s->b[h & s->mask] = a;
		if (GS_UNLIKELY(++s->n > s->grow_at))
			grow(s);
	}
	gs_unlock(&gs_table_locks[i]);
	return old;
}

struct gs_alloc *table_remove(enum gs_space space, uint64_t addr)
{
	uint64_t h = key_hash(addr, space);
	unsigned i = shard_of(h);
	struct shard *s = &shards[i];
	struct gs_alloc **p, *a = NULL;

	gs_lock(&gs_table_locks[i]);
	if (GS_LIKELY(s->b)) {
		p = chain_find(s, h, addr, space);
		a = *p;
		if (a) {
			*p = a->next;
			s->n--;
		}
	}
	gs_unlock(&gs_table_locks[i]);
	return a;
}

struct gs_site *table_site(enum gs_space space, uint64_t addr)
{
	uint64_t h = key_hash(addr, space);
	unsigned i = shard_of(h);
	struct shard *s = &shards[i];
	struct gs_site *site = NULL;

	gs_lock(&gs_table_locks[i]);
	if (s->b) {
		struct gs_alloc *a = *chain_find(s, h, addr, space);

		site = a ? a->site : NULL;
	}
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
	/* Orphan keys are unique. */
	(void)old;
	return err;
}

int table_copy(struct gs_live **out, size_t *n)
{
	struct gs_live *v = NULL;
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	for (unsigned i = 0; i < TABLE_SHARDS; i++) {
		struct shard *s = &shards[i];
		size_t want;

		/* room first, without the lock: a shard that grew meanwhile
		 * is copied as far as the room goes, its other entries missed
		 * like those inserted a moment later */
		gs_lock(&gs_table_locks[i]);
		want = *n + s->n;
		gs_unlock(&gs_table_locks[i]);
		if (want > cap) {
			size_t ncap = want + want / 8 + 16;
			struct gs_live *nv = realloc(v, ncap * sizeof(*v));

			if (!nv) {
				*out = v;
				return -ENOMEM;
			}
			v = nv;
			cap = ncap;
		}
		gs_lock(&gs_table_locks[i]);
		for (uint32_t b = 0; s->b && b <= s->mask; b++)
			for (const struct gs_alloc *a = s->b[b]; a && *n < cap; a = a->next)
				v[(*n)++] = (struct gs_live){ .addr = a->addr,
							      .size = a->size,
							      .stream = a->stream,
							      .site = a->site ? a->site->id : 0,
							      .device = a->device,
							      .space = (uint8_t)a->space,
							      .kind = a->kind };
		gs_unlock(&gs_table_locks[i]);
	}
	*out = v;
	return 0;
}
