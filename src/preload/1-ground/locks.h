/* SPDX-License-Identifier: MIT */
/*
 * Every global lock of libgpuspy.  They are all defined in locks.c, in one
 * list, and no other file defines one (tests/unit/check_locks.sh checks):
 * fork() keeps only the calling thread, so a lock that some other thread
 * held at the fork stays held for ever in the child unless the fork
 * handlers know of it.
 */
#ifndef GPUSPY_LOCKS_H
#define GPUSPY_LOCKS_H

#include <stdatomic.h>
#include <stdbool.h>

/*
 * One lock per cache line: shards of a table are taken by different
 * threads at once.  A futex word rather than a pthread mutex: taking and
 * giving back a free lock is one atomic instruction each, inline, where
 * glibc's mutex is two calls of about 30 instructions (the live table
 * takes two locks per allocation and free); a lock that is held is
 * spun on briefly, then waited for in the kernel (locks.c).
 *   v: 0 free, 1 held, 2 held and someone may be waiting.
 */
struct gs_mutex {
	atomic_int v;
} __attribute__((aligned(64)));

#define GS_SITE_SHARDS	16
#define GS_TABLE_SHARDS 64

/* In the order they nest: a lock may be taken while holding only locks
 * above it (locks.c says who nests what). */
extern struct gs_mutex gs_activate_lock;		/* lifecycle.c */
extern struct gs_mutex gs_events_lock;			/* events.c */
extern struct gs_mutex gs_graph_lock;			/* graph.c */
extern struct gs_mutex gs_peak_lock;			/* peak.c */
extern struct gs_mutex gs_vmm_lock;			/* vmm.c */
extern struct gs_mutex gs_unwind_lock;			/* unwind.c */
extern struct gs_mutex gs_site_locks[GS_SITE_SHARDS];	/* sites.c */
extern struct gs_mutex gs_table_locks[GS_TABLE_SHARDS]; /* table.c */
extern struct gs_mutex gs_metrics_lock;			/* endpoint.c */
extern struct gs_mutex gs_api_lock;			/* query.c */
extern struct gs_mutex gs_names_lock;			/* site_names.c */

/* locks.c: the slow halves, a lock found held and a waiter to wake. */
void gs_lock_wait(struct gs_mutex *l);
void gs_lock_wake(struct gs_mutex *l);

static inline void gs_lock(struct gs_mutex *l)
{
	int free_ = 0;

	if (__builtin_expect(!atomic_compare_exchange_strong_explicit(
				     &l->v, &free_, 1, memory_order_acquire, memory_order_relaxed),
			     0))
		gs_lock_wait(l);
}

static inline bool gs_trylock(struct gs_mutex *l)
{
	int free_ = 0;

	return atomic_compare_exchange_strong_explicit(&l->v, &free_, 1, memory_order_acquire,
						       memory_order_relaxed);
}

static inline void gs_unlock(struct gs_mutex *l)
{
	if (__builtin_expect(atomic_exchange_explicit(&l->v, 0, memory_order_release) == 2, 0))
		gs_lock_wake(l);
}

/* The list itself, for the fork handlers and for the test that forks
 * while each lock is held. */
struct gs_lock_group {
	const char *name;
	struct gs_mutex *locks;
	unsigned n;
};
unsigned locks_count(void);
const struct gs_lock_group *locks_group(unsigned i);

/* Registers the fork handlers (once, from gs_init).  Child handlers run
 * in the order they were registered: the locks' come first, so that a
 * later child handler may take any lock. */
int locks_atfork(void);

#endif /* GPUSPY_LOCKS_H */
