/* SPDX-License-Identifier: MIT */
/* What one file describes, read once (see view.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "files.h"
#include "log.h"
#include "names.h"
#include "sites.h"
#include "view.h"

static void view_read(struct gs_view *view)
{
	view->gpu_live = view->gpu_allocs = 0;
	for (int k = 0; k < GS_KIND_COUNT; k++) {
		counters_read(&gs_totals.kind[k], &view->kind[k]);
		if (k == GS_KIND_PINNED)
			continue;
		view->gpu_live += view->kind[k].live_bytes;
		view->gpu_allocs += view->kind[k].live_allocs;
	}
	view->gpu_peak = atomic_load(&gs_totals.gpu_peak_bytes);
	if (view->gpu_peak < view->gpu_live)
		view->gpu_peak = view->gpu_live;
}

static int cmp_live(const void *a, const void *b)
{
	const struct gs_site *x = *(struct gs_site *const *)a, *y = *(struct gs_site *const *)b;
	long long lx = counters_live_bytes(&x->c), ly = counters_live_bytes(&y->c);
	long long px = atomic_load(&x->c.peak_bytes), py = atomic_load(&y->c.peak_bytes);

	if (lx != ly)
		return lx < ly ? 1 : -1;
	if (px != py)
		return px < py ? 1 : -1;
	return x->id < y->id ? -1 : x->id > y->id;
}

int view_take(struct gs_view *v, const struct gs_oom *event)
{
	unsigned cap = site_count() + 16;

	memset(v, 0, sizeof(*v));
	v->event = event;
	v->sites = calloc(cap, sizeof(*v->sites));
	if (!v->sites) {
		gs_warn("out of memory writing a report");
		return -ENOMEM;
	}
	view_read(v);
	for (struct gs_site *s = site_list(); s && v->n < cap; s = s->next_all)
		v->sites[v->n++] = s;
	qsort(v->sites, v->n, sizeof(*v->sites), cmp_live);

	names_host(v->host, sizeof(v->host));
	/* created and checked by files_write(), at each write */
	files_process_dir(v->dir, sizeof(v->dir));
	return 0;
}

void view_drop(struct gs_view *v)
{
	free(v->sites);
	v->sites = NULL;
}
