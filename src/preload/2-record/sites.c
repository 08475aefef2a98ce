/* SPDX-License-Identifier: MIT */
/*
 * Call sites: each distinct (api, kind, stack of return addresses) is
 * interned once and keeps its counters for the life of the process, so
 * the table grows with the number of code paths, not of allocations.
 *
 * The hot path is a lookup in the thread's own cache of the sites it met
 * last, which takes no lock: threads allocating from the same line share
 * one site, and its shard's lock would be the one place they all meet.  A
 * miss looks up under the shard's lock.  A new site is built (frames
 * tied to module + offset; a module not seen before is looked up with
 * dl_iterate_phdr) with no gpuspy lock held, then inserted; a racing twin
 * is dropped.  Its frames are named later, by the snapshot thread
 * (symbols.c), never here.
 * Sites are never freed, so a cached pointer stays valid.
 *
 * Each costs about 1.3 KiB, so their number is capped
 * (GPUSPY_MAX_DISTINCT_SITES): past it, a stack not met yet is counted
 * in one site per kind of memory, without a stack (said once on stderr),
 * and memory stays bounded however many distinct stacks a program makes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "core.h"
#include "counters.h"
#include "locks.h"
#include "log.h"
#include "pystack.h"
#include "sites.h"
#include "unwind.h"

#define SITE_SHARDS GS_SITE_SHARDS

/* Native return addresses, then Python frames (3 words each). */
struct site_key {
	uint8_t api, kind;
	uint16_t depth;
	uint16_t pydepth;
	uint16_t pad; /* zero: the key is compared bytewise */
	uintptr_t words[];
};

struct site_node {
	struct gs_site site;
	UT_hash_handle hh;
	size_t keylen;
	struct site_key key; /* must stay last */
};

/* Shard i is guarded by gs_site_locks[i] (locks.c). */
struct shard {
	struct site_node *head;
} __attribute__((aligned(64)));

static struct shard shards[SITE_SHARDS];

/* Direct-mapped by hash.  A site found here was found under its shard's
 * lock before, by this thread, so its key is seen whole. */
#define SITE_CACHE 16
static GS_TLS struct {
	uint64_t hash;
	struct site_node *node;
} cache[SITE_CACHE];

static _Atomic(struct gs_site *) all_sites;
static atomic_uint n_sites;
/* past the cap: per kind, the site of every stack not met before it */
static _Atomic(struct site_node *) beyond[GS_KIND_COUNT];
static atomic_bool beyond_said;

static uint64_t key_hash(const struct site_key *k, size_t len)
{
	/* FNV-1a over 64-bit words, then a final mix; keys are word sized. */
	const uint64_t *w = (const uint64_t *)k;
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len / 8; i++) {
		h ^= w[i];
		h *= 0x100000001b3ull;
	}
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h;
}

static struct site_node *lookup(struct shard *sh, const struct site_key *k, size_t len, unsigned hv)
{
	struct site_node *n;

	HASH_FIND_BYHASHVALUE(hh, sh->head, k, len, hv, n);
	return n;
}

static struct site_node *site_new(const struct site_key *k, size_t len, enum gs_door door)
{
	struct site_node *n = calloc(1, sizeof(*n) + len - sizeof(struct site_key));

	if (!n)
		return NULL;
	memcpy(&n->key, k, len);
	n->keylen = len;
	n->site.api = k->api;
	n->site.kind = k->kind;
	n->site.door = (uint8_t)door;
	n->site.depth = k->depth;
	n->site.pydepth = k->pydepth;
	/* record_alloc took this allocation's number just before. */
	n->site.first_seq = atomic_load(&gs_totals.hot.seq) - 1;
	n->site.frames = calloc(k->depth ? k->depth : 1, sizeof(struct gs_frame));
	if (!n->site.frames) {
		free(n);
		return NULL;
	}
	for (unsigned i = 0; i < k->depth; i++)
		unwind_resolve(k->words[i], &n->site.frames[i]);
	if (k->pydepth) {
		const struct gs_pyraw *raw = (const struct gs_pyraw *)&k->words[k->depth];

		n->site.py = calloc(k->pydepth, sizeof(*n->site.py));
		if (!n->site.py) {
			free(n->site.frames);
			free(n);
			return NULL;
		}
		/* The frames are alive: their thread is inside this hook. */
		for (unsigned i = 0; i < k->pydepth; i++)
			pystack_decode(&raw[i], &n->site.py[i]);
	}
	return n;
}

static void site_drop(struct site_node *n)
{
	for (unsigned i = 0; i < n->site.pydepth && n->site.py; i++) {
		free(n->site.py[i].file);
		free(n->site.py[i].function);
	}
	free(n->site.py);
	free(n->site.frames);
	free(n);
}

/* Published on the list of every site, with its id: the report walks it. */
static void site_publish(struct site_node *n)
{
	n->site.id = atomic_fetch_add(&n_sites, 1);
	n->site.next_all = atomic_load(&all_sites);
	while (!atomic_compare_exchange_weak(&all_sites, &n->site.next_all, &n->site))
		;
}

/* KIND's site for stacks past the cap, made the first time (a racing
 * twin is dropped); NULL on out-of-memory. */
static struct gs_site *site_beyond(enum gs_api api, enum gs_kind kind, enum gs_door door)
{
	struct site_key k = { .api = (uint8_t)api, .kind = (uint8_t)kind };
	struct site_node *n = atomic_load(&beyond[kind]), *none = NULL;

	if (n)
		return &n->site;
	n = site_new(&k, sizeof(k), door);
	if (!n)
		return NULL;
	if (!atomic_compare_exchange_strong(&beyond[kind], &none, n)) {
		site_drop(n);
		return &none->site;
	}
	site_publish(n);
	if (!atomic_exchange(&beyond_said, true))
		gs_warn("%u distinct call sites (GPUSPY_MAX_DISTINCT_SITES): those met from now "
			"on are counted in one site per kind of memory, without a stack",
			gs_config.max_distinct_sites);
	return &n->site;
}

struct gs_site *site_intern(enum gs_api api, enum gs_kind kind, enum gs_door door, const void *pcs,
			    unsigned depth, const struct gs_pyraw *py, unsigned pydepth)
{
	union {
		struct site_key k;
		unsigned char bytes[sizeof(struct site_key) + GS_MAX_DEPTH * sizeof(uintptr_t) +
				    GS_MAX_PY_DEPTH * sizeof(struct gs_pyraw)];
	} u;
	size_t len = sizeof(struct site_key) + depth * sizeof(uintptr_t) +
		     pydepth * sizeof(struct gs_pyraw);
	struct site_node *n, *twin;
	struct shard *sh;
	struct gs_mutex *lk;
	unsigned slot;
	uint64_t h;

	u.k.api = (uint8_t)api;
	u.k.kind = (uint8_t)kind;
	u.k.depth = (uint16_t)depth;
	u.k.pydepth = (uint16_t)pydepth;
	u.k.pad = 0;
	if (depth)
		memcpy(u.k.words, pcs, depth * sizeof(uintptr_t));
	if (pydepth)
		memcpy(&u.k.words[depth], py, pydepth * sizeof(struct gs_pyraw));
	h = key_hash(&u.k, len);
	slot = (unsigned)(h >> 8) % SITE_CACHE;
	n = cache[slot].node;
	if (GS_LIKELY(n && cache[slot].hash == h && n->keylen == len &&
		      memcmp(&n->key, &u.k, len) == 0))
		return &n->site;
	lk = &gs_site_locks[h % SITE_SHARDS];
	sh = &shards[h % SITE_SHARDS];

	gs_lock(lk);
	n = lookup(sh, &u.k, len, (unsigned)(h >> 32));
	gs_unlock(lk);
	if (GS_LIKELY(n)) {
		cache[slot].hash = h;
		cache[slot].node = n;
		return &n->site;
	}

	/* a new stack past the cap: not kept apart (a race may let a few
	 * more in than the cap: memory stays bounded all the same) */
	if (gs_config.max_distinct_sites &&
	    atomic_load_explicit(&n_sites, memory_order_relaxed) >= gs_config.max_distinct_sites)
		return site_beyond(api, kind, door);
	n = site_new(&u.k, len, door);
	if (!n)
		return NULL;

	gs_lock(lk);
	twin = lookup(sh, &u.k, len, (unsigned)(h >> 32));
	if (!twin) {
		gs_hash_oom = 0;
		HASH_ADD_KEYPTR_BYHASHVALUE(hh, sh->head, &n->key, n->keylen, (unsigned)(h >> 32),
					    n);
		if (gs_hash_oom) {
			gs_hash_oom = 0;
			gs_unlock(lk);
			site_drop(n);
			return NULL;
		}
		/* Published while the shard lock is held, so the report's walk
		 * of all_sites sees a fully built site. */
		site_publish(n);
	}
	gs_unlock(lk);
	if (twin) {
		site_drop(n);
		n = twin;
	}
	cache[slot].hash = h;
	cache[slot].node = n;
	return &n->site;
}

struct gs_site *site_list(void)
{
	return atomic_load(&all_sites);
}

unsigned site_count(void)
{
	return atomic_load(&n_sites);
}
