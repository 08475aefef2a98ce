/* SPDX-License-Identifier: MIT */
/*
 * The one list of libgpuspy's locks, and the fork handlers that take them.
 *
 * fork() copies only the calling thread.  A gpuspy lock that another
 * thread holds at that moment would stay held in the child, and the
 * child's first hook, mark or snapshot that needs it would hang.  So the
 * prepare handler takes every lock, in the order of the list; the parent
 * releases them in reverse, and the child, whose copies are held by
 * threads it does not have, initialises them afresh.
 *
 * Add new global locks here, please, and nowhere else: defined below and
 * named in `list`, at the place their nesting requires.
 *
 * Lock order (a thread holding one lock takes only locks below it):
 *   activate  gs_activate() and gs_warm() warm the unwinder (unwind) under it
 *   events    a report reads the peak snapshot (peak), the modules and the graphs (graph)
 *   graph     a launch records and frees graph allocations (peak, sites, table) under it
 *   peak      copies site counters, lock-free, under it
 *   vmm       moves and removes live entries (table shards) under it
 *   unwind    the module registry; nothing nests under it
 *   sites     shards, taken one at a time, in index order by fork only
 *   table     shards, likewise
 *   metrics   the page the endpoint serves (endpoint.c): swapped by the
 *             snapshot thread, copied by the server's thread; nothing
 *             nests under it
 *   api       the scopes of the public API that are open (query.c), on
 *             the callers' threads; a query reads the sites' names
 *             (names) under it
 *   names     the sites' one names (site_names.c): held by the naming
 *             thread through a pass, by a caller's thread while it reads
 *             them; nothing nests under it
 *
 * Not locks, and so not here: lifecycle.c's pthread_once (run by the
 * constructor, before the program has threads), nvml.c's (run under the
 * events lock, which prepare takes, so never copied half done) and the
 * writer's semaphore (a wake-up count; the child has no writer thread,
 * and writer_start() initialises it again); libmicrohttpd's own locks,
 * held by the server's thread (src/common/http.c): a forked child never
 * calls it again (endpoint_forget).  Nor symbols.c's tables (the names of
 * native frames): one thread at a time owns them, the snapshot thread and
 * then the exit, which joins it first; a frame's name is published with an
 * atomic pointer, which program threads only read or fill when empty; and
 * a child forked once gpuspy is active goes silent and never names.
 */
#include <linux/futex.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "locks.h"

#define GS_MUTEX_INIT                                                                              \
	{                                                                                          \
		.v = 0                                                                             \
	}

/* Spins before sleeping: the locks guard a few dozen instructions, so a
 * holder on another core is usually done within them. */
#define SPINS 100

/*
 * The lock was found held.  Spin while it stays held by a thread that
 * has no waiter behind it, then mark it contended (2) and sleep until it
 * is given back; a thread that takes it after sleeping leaves it marked
 * 2, so that its own unlock wakes the next waiter (a spurious wake-up at
 * worst, never a lost one).
 */
void gs_lock_wait(struct gs_mutex *l)
{
	int c;

	for (int i = 0; i < SPINS; i++) {
		c = atomic_load_explicit(&l->v, memory_order_relaxed);
		if (c == 0 && gs_trylock(l))
			return;
		if (c == 2)
			break;
		__builtin_ia32_pause();
	}
	while (atomic_exchange_explicit(&l->v, 2, memory_order_acquire) != 0)
		syscall(SYS_futex, &l->v, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
}

void gs_lock_wake(struct gs_mutex *l)
{
	syscall(SYS_futex, &l->v, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

struct gs_mutex gs_activate_lock = GS_MUTEX_INIT;
struct gs_mutex gs_events_lock = GS_MUTEX_INIT;
struct gs_mutex gs_graph_lock = GS_MUTEX_INIT;
struct gs_mutex gs_peak_lock = GS_MUTEX_INIT;
struct gs_mutex gs_vmm_lock = GS_MUTEX_INIT;
struct gs_mutex gs_unwind_lock = GS_MUTEX_INIT;
struct gs_mutex gs_site_locks[GS_SITE_SHARDS] = {
	[0 ... GS_SITE_SHARDS - 1] = GS_MUTEX_INIT,
};
struct gs_mutex gs_table_locks[GS_TABLE_SHARDS] = {
	[0 ... GS_TABLE_SHARDS - 1] = GS_MUTEX_INIT,
};
struct gs_mutex gs_metrics_lock = GS_MUTEX_INIT;
struct gs_mutex gs_api_lock = GS_MUTEX_INIT;
struct gs_mutex gs_names_lock = GS_MUTEX_INIT;

static const struct gs_lock_group list[] = {
	{ "activate", &gs_activate_lock, 1 },
	{ "events", &gs_events_lock, 1 },
	{ "graph", &gs_graph_lock, 1 },
	{ "peak", &gs_peak_lock, 1 },
	{ "vmm", &gs_vmm_lock, 1 },
	{ "unwind", &gs_unwind_lock, 1 },
	{ "sites", gs_site_locks, GS_SITE_SHARDS },
	{ "table", gs_table_locks, GS_TABLE_SHARDS },
	{ "metrics", &gs_metrics_lock, 1 },
	{ "api", &gs_api_lock, 1 },
	{ "names", &gs_names_lock, 1 },
};

#define N_GROUPS (sizeof(list) / sizeof(list[0]))

unsigned locks_count(void)
{
	return N_GROUPS;
}

const struct gs_lock_group *locks_group(unsigned i)
{
	return i < N_GROUPS ? &list[i] : NULL;
}

static void locks_prepare(void)
{
	for (unsigned g = 0; g < N_GROUPS; g++)
		for (unsigned i = 0; i < list[g].n; i++)
			gs_lock(&list[g].locks[i]);
}

static void locks_parent(void)
{
	for (unsigned g = N_GROUPS; g-- > 0;)
		for (unsigned i = list[g].n; i-- > 0;)
			gs_unlock(&list[g].locks[i]);
}

/* The child's copies are held, by this thread (prepare), and may be
 * marked as waited for by threads the child does not have: free, with no
 * one to wake. */
static void locks_child(void)
{
	for (unsigned g = 0; g < N_GROUPS; g++)
		for (unsigned i = 0; i < list[g].n; i++)
			atomic_store_explicit(&list[g].locks[i].v, 0, memory_order_relaxed);
}

int locks_atfork(void)
{
	int err = pthread_atfork(locks_prepare, locks_parent, locks_child);

	return err ? -err : 0;
}
