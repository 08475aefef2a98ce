/* SPDX-License-Identifier: MIT */
/*
 * The process-wide state and the clock: the ground every other module
 * stands on.  Who sets what is told in state.h; lifecycle.c starts and
 * ends it.
 */
#include <time.h>

#include "core.h"
#include "state.h"

/* uthash out of memory on this thread (core.h) */
__thread int gs_hash_oom __attribute__((tls_model("initial-exec")));

struct gs_state gs_state = {
	.tracking = true,
	.complete = true,
};

double gs_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
