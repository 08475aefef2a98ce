/* SPDX-License-Identifier: MIT */
/* The wrong-device fault of a data-parallel job (wrong_device.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load_live.h"
#include "ranks.h"
#include "util.h"
#include "wrong_device.h"

/* The devices a process names: those of its memory and NVML's. */
#define WRONG_MAX_DEVICES 64

int rd_wrong_own_device(const struct rd_process *p)
{
	return ranks_own_device(p->rank, p->local_rank, (int64_t)p->ngpus);
}

size_t rd_wrong_figures(const struct rd_process *p, struct rd_wrong_figure *out, size_t max)
{
	int64_t devs[WRONG_MAX_DEVICES];
	size_t nd = 0, n = 0;
	int own = rd_wrong_own_device(p);

	if (own < 0)
		return 0;
	for (size_t i = 0; i < p->ndevices; i++)
		rd_device_set_add(devs, &nd, WRONG_MAX_DEVICES, p->devices[i].device);
	for (size_t i = 0; i < p->outside.ngpus; i++)
		if (rd_process_nvml(p, p->outside.gpus[i].index) >= 0)
			rd_device_set_add(devs, &nd, WRONG_MAX_DEVICES, p->outside.gpus[i].index);
	for (size_t i = 0; i < nd; i++) {
		struct rd_wrong_figure f = { .device = devs[i] };
		int64_t nvml = rd_process_nvml(p, devs[i]);

		if (devs[i] == own)
			continue;
		for (size_t k = 0; k < p->ndevices; k++)
			if (p->devices[k].device == devs[i] && p->devices[k].live_bytes > 0)
				f.allocations = p->devices[k].live_bytes;
		f.nvml = nvml >= 0;
		f.context = ranks_context_bytes(f.allocations, nvml);
		if (f.allocations + f.context <= 0)
			continue;
		if (n < max)
			out[n] = f;
		n++;
	}
	return n;
}

static int wrong_site_cmp(const void *a, const void *b)
{
	const struct rd_wrong_site *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return strcmp(merge_site_name(x->site), merge_site_name(y->site));
}

/* W's sites from L, process P's live allocations at exit (process index
 * PI of R). */
static int wrong_sites(const struct rd_report *r, size_t pi, const struct rd_live *l,
		       struct rd_wrong *w)
{
	const struct rd_process *p = r->procs[pi];

	w->sites = calloc(l->nallocs + 1, sizeof(*w->sites));
	if (!w->sites)
		return -ENOMEM;
	for (size_t i = 0; i < l->nallocs; i++) {
		const struct rd_live_alloc *a = &l->allocs[i];
		const struct rd_report_site *s;
		size_t k;

		if (a->device != w->fig.device)
			continue;
		s = a->site_index >= 0 && (size_t)a->site_index < p->nsites ?
			    r->site_of[pi][a->site_index] :
			    NULL;
		if (!s) {
			util_add_sat(&w->unsited_bytes, a->size);
			continue;
		}
		for (k = 0; k < w->nsites && w->sites[k].site != s; k++)
			;
		if (k == w->nsites)
			w->sites[w->nsites++] =
				(struct rd_wrong_site){ s, r->line_of[pi][a->site_index], 0, 0 };
		util_add_sat(&w->sites[k].bytes, a->size);
		w->sites[k].allocations++;
	}
	qsort(w->sites, w->nsites, sizeof(*w->sites), wrong_site_cmp);
	return 0;
}

int rd_wrong_build(const struct rd_report *r, struct rd_wrong_list *out)
{
	*out = (struct rd_wrong_list){ 0 };
	for (size_t pi = 0; pi < r->nprocs; pi++) {
		const struct rd_process *p = r->procs[pi];
		struct rd_wrong_figure fig[WRONG_MAX_DEVICES];
		size_t nf = rd_wrong_figures(p, fig, WRONG_MAX_DEVICES);
		struct rd_live live = { 0 };
		struct rd_error err;
		struct rd_wrong *grown;
		bool have_live = false;
		int e = 0;

		if (nf == 0)
			continue;
		if (nf > WRONG_MAX_DEVICES)
			nf = WRONG_MAX_DEVICES;
		grown = realloc(out->items, (out->n + nf) * sizeof(*out->items));
		if (!grown)
			return -ENOMEM;
		out->items = grown;
		e = load_live(p, &live, &err);
		if (e == -ENOMEM)
			return e;
		if (e < 0)
			rd_notice(
				RD_NOTICE_LEFT_OUT, NULL,
				"%s (the sites of its memory on a device not its own are not named)",
				err.msg);
		have_live = e == 0 && live.present;
		for (size_t k = 0; k < nf; k++) {
			struct rd_wrong *w = &out->items[out->n++];

			*w = (struct rd_wrong){
				.proc = pi,
				.rank = p->rank,
				.local_rank = p->local_rank,
				.own = rd_wrong_own_device(p),
				.fig = fig[k],
				.bytes = fig[k].allocations + fig[k].context,
				.sites_read = have_live,
				.sites_refused = e < 0,
			};
			if (have_live && (e = wrong_sites(r, pi, &live, w)) < 0)
				break;
		}
		rd_live_clear(&live);
		if (e == -ENOMEM)
			return e;
	}
	return 0;
}

void rd_wrong_clear(struct rd_wrong_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->items[i].sites);
	free(l->items);
	*l = (struct rd_wrong_list){ 0 };
}

const char *rd_wrong_what(const struct rd_wrong *w)
{
	if (w->fig.context > 0 && w->fig.allocations > 0)
		return "context and allocations";
	return w->fig.context > 0 ? "context" : "allocations";
}

const char *rd_wrong_line(const struct rd_report *r, const struct rd_wrong *w, char *buf,
			  size_t size)
{
	char name[REPORT_NAME_SIZE], a[32];
	int n;

	merge_process_name(r, w->proc, name, sizeof(name));
	if (w->local_rank >= 0)
		n = snprintf(buf, size, "%s (LOCAL_RANK %" PRId64 ", its device %d)", name,
			     w->local_rank, w->own);
	else
		n = snprintf(buf, size, "%s (its device %d)", name, w->own);
	if (n >= 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, " holds %s on device %" PRId64 ": %s",
			 util_human_size(w->bytes, a, sizeof(a)), w->fig.device, rd_wrong_what(w));
	return buf;
}

const char *rd_rank_figure_name(enum rd_rank_figure f)
{
	static const char *const names[RD_RANK_FIGURES] = {
		[RD_RANK_OWN] = "on its device",
		[RD_RANK_LIBRARY] = "library",
		[RD_RANK_ELSEWHERE] = "elsewhere",
	};

	return names[f];
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* The median of V[0..N-1] but SKIP (-1: none) and the values < 0, sorted
 * in TMP; of an even count the mean of the two middle ones, rounded down,
 * as merge_spread's; 0 of none. */
static int64_t ranks_median(const int64_t *v, size_t n, ssize_t skip, int64_t *tmp)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if ((ssize_t)i != skip && v[i] >= 0)
			tmp[k++] = v[i];
	if (k == 0)
		return 0;
	qsort(tmp, k, sizeof(*tmp), cmp_i64);
	return k % 2 ? tmp[k / 2] : tmp[k / 2 - 1] + (tmp[k / 2] - tmp[k / 2 - 1]) / 2;
}

static void ranks_spread(const int64_t *v, size_t n, int64_t *tmp, struct rd_rank_spread *sp)
{
	*sp = (struct rd_rank_spread){ .outlier = -1 };
	for (size_t i = 0; i < n; i++) {
		if (v[i] < 0)
			continue;
		if (sp->n == 0 || v[i] < sp->min)
			sp->min = v[i];
		if (sp->n == 0 || v[i] > sp->max)
			sp->max = v[i];
		sp->n++;
	}
	if (sp->n == 0)
		return;
	sp->median = ranks_median(v, n, -1, tmp);
	for (size_t i = 0; sp->n > 1 && i < n; i++) {
		int64_t m;

		if (v[i] < 0)
			continue;
		m = ranks_median(v, n, (ssize_t)i, tmp);
		if (v[i] > 2 * m && v[i] - m > RD_RANK_OUTLIER_MIN &&
		    (sp->outlier < 0 || v[i] > v[sp->outlier]))
			sp->outlier = (ssize_t)i;
	}
}

int rd_ranks_build(const struct rd_report *r, struct rd_ranks *out)
{
	size_t n = r->nprocs;
	int64_t *tmp;

	*out = (struct rd_ranks){ 0 };
	out->own = calloc(n + 1, sizeof(*out->own));
	tmp = calloc(n + 1, sizeof(*tmp));
	for (int f = 0; f < RD_RANK_FIGURES; f++)
		out->v[f] = calloc(n + 1, sizeof(*out->v[f]));
	if (!out->own || !tmp || !out->v[0] || !out->v[1] || !out->v[2]) {
		free(tmp);
		rd_ranks_clear(out);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		const struct rd_process *p = r->procs[i];
		int own = rd_wrong_own_device(p);

		out->own[i] = own;
		out->present |= own >= 0;
		out->v[RD_RANK_OWN][i] = out->v[RD_RANK_ELSEWHERE][i] = own >= 0 ? 0 : -1;
		for (size_t k = 0; own >= 0 && k < p->ndevices; k++)
			if (p->devices[k].live_bytes > 0)
				util_add_sat(
					&out->v[p->devices[k].device == own ? RD_RANK_OWN :
									      RD_RANK_ELSEWHERE][i],
					p->devices[k].live_bytes);
		for (size_t k = 0; k < p->nsites; k++)
			if (r->site_of[i][k] && r->site_of[i][k]->library &&
			    p->sites[k].kind != GS_KIND_PINNED && p->sites[k].c.live_bytes > 0)
				util_add_sat(&out->v[RD_RANK_LIBRARY][i], p->sites[k].c.live_bytes);
	}
	for (int f = 0; f < RD_RANK_FIGURES; f++)
		ranks_spread(out->v[f], n, tmp, &out->spread[f]);
	free(tmp);
	return 0;
}

void rd_ranks_clear(struct rd_ranks *k)
{
	free(k->own);
	for (int f = 0; f < RD_RANK_FIGURES; f++)
		free(k->v[f]);
	*k = (struct rd_ranks){ 0 };
}
