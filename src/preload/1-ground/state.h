/* SPDX-License-Identifier: MIT */
/* The process-wide state and the clock (state.c) */
#ifndef GPUSPY_STATE_H
#define GPUSPY_STATE_H

#include <stdatomic.h>
#include <stdbool.h>

#include "names.h"
#include "rundir.h"

/*
 * Process-wide state.  `tracking` is read on every hook; it only ever
 * goes from true to false (gs_fail, a forked child of a tracking parent).
 */
struct gs_state {
	char run_dir[GS_RUN_DIR_SIZE]; /* absolute, set at activation */
	/* the run this process belongs to, chosen at start (lifecycle.c);
	 * run_err: why there is none (a working directory too long) */
	struct rundir_choice run;
	int run_err;
	atomic_bool tracking;
	atomic_bool complete; /* false once anything was missed */
	atomic_bool active;   /* at least one allocation recorded */
	atomic_bool silent;   /* forked child: write nothing */
	double start_time;
};
extern struct gs_state gs_state;

/* CLOCK_REALTIME, in seconds (state.c). */
double gs_now(void);

#endif /* GPUSPY_STATE_H */
