/* SPDX-License-Identifier: MIT */
/*
 * The growth rule (libgpuspy(7)), once: a call site is growing when, over
 * the window of its last W samples - W the larger of GROWTH_MIN_WINDOW and
 * half the samples taken of it so far, at most GROWTH_MAX_WINDOW - its
 * live bytes reached a new high in at least three quarters of the samples
 * and ended higher than they began.  A site's samples start at its first
 * with live bytes above 0.
 *
 * The library's snapshot thread keeps a struct gs_growth per site and
 * judges it after each sample; the PyTorch view judges the live bytes of
 * its stacks by the same rule, so that both say "growing" of the same
 * series at the same sample.  Callers keep the verdict once it is true:
 * the frees of a program's teardown must not clear the leak they end.
 *
 * No allocation, no global state: the state is the caller's.
 */
#ifndef GPUSPY_COMMON_GROWTH_H
#define GPUSPY_COMMON_GROWTH_H

#include <stdbool.h>
#include <stddef.h>

#define GROWTH_MIN_WINDOW 16
#define GROWTH_MAX_WINDOW 256 /* samples kept per site: 256 x 9 bytes */

/* All zero is the state before any sample (calloc or growth_init). */
struct gs_growth {
	long long live[GROWTH_MAX_WINDOW]; /* ring, newest at head - 1 */
	bool high[GROWTH_MAX_WINDOW];	   /* did that sample set a new high */
	unsigned head;
	unsigned long long n; /* samples taken, from the first above 0 */
	long long max;
};

void growth_init(struct gs_growth *g);

/* One sample of the site's live bytes; ignored while none above 0 came. */
void growth_push(struct gs_growth *g, long long live);

/* The rule, on the samples pushed so far. */
bool growth_judge(const struct gs_growth *g);

/*
 * The rule on a whole series, LIVE[0..N-1], oldest first: the verdict of
 * growth_judge after growth_push of each in turn, without the state (for
 * a caller that keeps its samples, such as the PyTorch view).
 */
bool growth_series(const long long *live, size_t n);

#endif /* GPUSPY_COMMON_GROWTH_H */
