/* SPDX-License-Identifier: MIT */
/*
 * The growth rule (growth.h), in its two forms: incremental for the
 * library's snapshot thread, which samples every site every interval and
 * must not keep more than a window of each; on an array for the PyTorch
 * view, which keeps its own samples.  tests/unit/test_common_growth.c
 * checks that they agree at every sample of its vectors.
 */
#include <string.h>

#include "growth.h"

/* W for a site of N samples */
static unsigned long long window(unsigned long long n)
{
	unsigned long long w = n / 2;

	if (w < GROWTH_MIN_WINDOW)
		w = GROWTH_MIN_WINDOW;
	if (w > GROWTH_MAX_WINDOW)
		w = GROWTH_MAX_WINDOW;
	return w;
}

void growth_init(struct gs_growth *g)
{
	memset(g, 0, sizeof(*g));
}

void growth_push(struct gs_growth *g, long long live)
{
	/* a site that never held memory has no series yet */
	if (g->n == 0 && live <= 0)
		return;
	g->live[g->head] = live;
	g->high[g->head] = g->n > 0 && live > g->max;
	if (live > g->max)
		g->max = live;
	g->head = (g->head + 1) % GROWTH_MAX_WINDOW;
	g->n++;
}

bool growth_judge(const struct gs_growth *g)
{
	unsigned long long w = window(g->n);
	unsigned long long highs = 0;

	if (g->n < w)
		return false;
	for (unsigned i = 0; i < w; i++)
		highs += g->high[(g->head + GROWTH_MAX_WINDOW - 1 - i) % GROWTH_MAX_WINDOW];
	return highs * 4 >= w * 3 &&
	       g->live[(g->head + GROWTH_MAX_WINDOW - 1) % GROWTH_MAX_WINDOW] >
		       g->live[(g->head + GROWTH_MAX_WINDOW - w) % GROWTH_MAX_WINDOW];
}

bool growth_series(const long long *live, size_t n)
{
	size_t first = 0, start;
	unsigned long long w, highs = 0;
	long long max;

	while (first < n && live[first] <= 0)
		first++;
	w = window(n - first);
	if (n - first < w)
		return false;
	/* the new highs of the window's samples, against the maximum of
	 * all the site's samples before each */
	start = n - (size_t)w;
	max = live[first];
	for (size_t i = first + 1; i < n; i++) {
		if (live[i] > max) {
			highs += i >= start;
			max = live[i];
		}
	}
	return highs * 4 >= w * 3 && live[n - 1] > live[start];
}
