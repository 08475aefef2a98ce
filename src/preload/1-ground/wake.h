/* SPDX-License-Identifier: MIT */
/* wake.c: the snapshot thread's wake-up, which any thread may post */
#ifndef GPUSPY_WAKE_H
#define GPUSPY_WAKE_H

#include <semaphore.h>
#include <stdatomic.h>
#include <stdbool.h>

/*
 * Posted to stop the snapshot thread or to ask it for something out of
 * turn (writer.c waits on it); a signal handler may post it too.  ready:
 * the semaphore is made (writer_start).  Here, below the recorder, so
 * that an allocation can wake the thread without calling up to it.
 */
extern sem_t gs_wake_sem;
extern atomic_bool gs_wake_ready;
/* torch_poll() asked for out of turn (wake_torch); the thread clears it */
extern atomic_bool gs_wake_torch_asked;
void wake_torch(void);

/* Set while the view or the frameworks' counters wait to start and want
 * the snapshot thread at the next allocation rather than at the next
 * interval (torch_probe.c says when): the allocation hooks' one look. */
extern atomic_bool gs_torch_wake;
static inline void wake_alloc_seen(void)
{
	if (__builtin_expect(atomic_load_explicit(&gs_torch_wake, memory_order_relaxed), 0) &&
	    atomic_exchange(&gs_torch_wake, false))
		wake_torch();
}

#endif /* GPUSPY_WAKE_H */
