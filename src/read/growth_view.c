/* SPDX-License-Identifier: MIT */
/* Growth read back from the history (growth_view.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "growth_view.h"
#include "trend.h"

void growth_series_free(struct rd_site_series *s, size_t n)
{
	for (size_t i = 0; s && i < n; i++)
		free(s[i].rows);
	free(s);
}

static int cmp_site_id(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;

	return (a > b) - (a < b);
}

/* For each series of H, the merged site of R that its site went into, as
 * an index into OUT (the entries made so far), or -1. */
static int series_map(const struct rd_report *r, size_t p, const struct rd_history *h, ssize_t *map,
		      struct rd_site_series *out, size_t *nout)
{
	const struct rd_process *proc = r->procs[p];
	/* (id, index) pairs sorted by id: a history names at most 64 sites of
	 * a report that may hold thousands */
	int64_t(*ids)[2] = calloc(proc->nsites + 1, sizeof(*ids));

	if (!ids)
		return -ENOMEM;
	for (size_t i = 0; i < proc->nsites; i++) {
		ids[i][0] = proc->sites[i].id;
		ids[i][1] = (int64_t)i;
	}
	qsort(ids, proc->nsites, sizeof(*ids), cmp_site_id);
	for (size_t k = 0; k < h->nseries; k++) {
		const struct rd_hist_series *s = &h->series[k];
		const int64_t(*hit)[2];
		const struct rd_report_site *site;
		size_t j;

		map[k] = -1;
		if (s->kind != RD_HIST_SITE || !r->site_of)
			continue;
		hit = bsearch(&s->key, ids, proc->nsites, sizeof(*ids), cmp_site_id);
		site = hit ? r->site_of[p][(*hit)[1]] : NULL;
		if (!site)
			continue;
		for (j = 0; j < *nout && out[j].site != site; j++)
			;
		if (j == *nout)
			out[(*nout)++].site = site;
		map[k] = (ssize_t)j;
	}
	free(ids);
	return 0;
}

int growth_process_series(const struct rd_report *r, size_t p, const struct rd_history *h,
			  struct rd_site_series **out, size_t *nout)
{
	struct rd_site_series *s = calloc(h->nseries + 1, sizeof(*s));
	ssize_t *map = calloc(h->nseries + 1, sizeof(*map));
	/* per entry: 1 + the row its last point came from */
	size_t *from = calloc(h->nseries + 1, sizeof(*from));
	size_t n = 0;
	int e = s && map && from ? 0 : -ENOMEM;

	if (e == 0)
		e = series_map(r, p, h, map, s, &n);
	for (size_t j = 0; e == 0 && j < n; j++) {
		s[j].rows = calloc(h->nrows + 1, sizeof(*s[j].rows));
		if (!s[j].rows)
			e = -ENOMEM;
	}
	for (size_t i = 0; e == 0 && i < h->nrows; i++) {
		const struct rd_hist_row *row = &h->rows[i];

		if (row->type == RD_HIST_EVENT)
			continue;
		for (size_t k = 0; k < row->count; k++) {
			const struct rd_hist_value *v = &h->values[row->first + k];
			struct rd_site_series *ss;
			struct rd_growth_row *g;

			if (map[v->series] < 0)
				continue;
			ss = &s[map[v->series]];
			if (from[map[v->series]] == i + 1) {
				/* two sites of the process merged into one:
				 * their sum (of mins, a lower bound of the min) */
				g = &ss->rows[ss->nrows - 1];
				g->min += v->min;
				g->max += v->max;
				g->last += v->last;
				continue;
			}
			from[map[v->series]] = i + 1;
			g = &ss->rows[ss->nrows++];
			*g = (struct rd_growth_row){ row->t0, row->t1, v->min, v->max, v->last };
		}
	}
	free(map);
	free(from);
	if (e < 0) {
		growth_series_free(s, n);
		return e;
	}
	*out = s;
	*nout = n;
	return 0;
}

static int cmp_growth(const void *pa, const void *pb)
{
	const struct rd_report_site *a = ((const struct rd_growth *)pa)->site;
	const struct rd_report_site *b = ((const struct rd_growth *)pb)->site;

	return (a > b) - (a < b);
}

const struct rd_growth *growth_view_find(const struct rd_growth_view *v,
					 const struct rd_report_site *s)
{
	struct rd_growth k = { .site = s };

	if (!v || !v->nsites)
		return NULL;
	return bsearch(&k, v->sites, v->nsites, sizeof(k), cmp_growth);
}

/* Replay SS through the rule into G: the verdict of a file that recorded
 * none (gpuspy before 0.4). */
static void replay(const struct rd_site_series *ss, struct rd_growth *g)
{
	struct gs_trend t;

	trend_init(&t);
	for (size_t i = 0; i < ss->nrows; i++)
		trend_push(&t, ss->rows[i].t1, ss->rows[i].min);
	trend_query(&t, &g->since_s, &g->rate_bps, &g->shape);
	g->fired = trend_ever(&t);
	g->state = trend_state(&t, &g->until_s);
}

/* Whether C speaks for its site before G: a verdict the process recorded
 * before one replayed, one that fired before one that did not, growing
 * before stopped, then the faster. */
static bool better(const struct rd_growth *c, const struct rd_growth *g)
{
	if (c->recorded != g->recorded)
		return c->recorded;
	if (c->fired != g->fired)
		return c->fired;
	if ((c->state == TREND_GROWING) != (g->state == TREND_GROWING))
		return c->state == TREND_GROWING;
	return c->rate_bps > g->rate_bps;
}

/* The verdicts process P recorded for its sites (sites[].growth). */
static void take_recorded(const struct rd_report *r, size_t p, struct rd_growth_view *v)
{
	const struct rd_process *proc = r->procs[p];

	for (size_t i = 0; r->site_of && i < proc->nsites; i++) {
		const struct rd_verdict *rv = &proc->sites[i].growth;
		struct rd_growth *g;
		struct rd_growth c;

		if (!rv->present || !r->site_of[p][i])
			continue;
		g = (struct rd_growth *)growth_view_find(v, r->site_of[p][i]);
		if (!g)
			continue;
		c = (struct rd_growth){ .site = g->site,
					.proc = p,
					.fired = true,
					.recorded = true,
					.state = rv->state,
					.shape = rv->shape,
					.since_s = rv->since_s,
					.rate_bps = rv->rate_bps,
					.until_s = rv->until_s,
					.by = rv->by,
					.fw = rv->fw,
					.place = rv->place };
		if (g->taken && !better(&c, g))
			continue;
		free(g->rows);
		*g = c;
		g->taken = true;
	}
}

int growth_view_build(const struct rd_report *r, const struct rd_history *h,
		      struct rd_growth_view *v)
{
	size_t n = 0;

	memset(v, 0, sizeof(*v));
	for (size_t p = 0; p < r->nprocs; p++)
		v->history |= h[p].present;
	for (size_t i = 0; i < r->nsites; i++)
		n += r->sites[i]->flagged || r->sites[i]->growing;
	if (!n)
		return 0;
	v->sites = calloc(n, sizeof(*v->sites));
	if (!v->sites)
		return -ENOMEM;
	for (size_t i = 0; i < r->nsites; i++)
		if (r->sites[i]->flagged || r->sites[i]->growing)
			v->sites[v->nsites++].site = r->sites[i];
	qsort(v->sites, v->nsites, sizeof(*v->sites), cmp_growth);
	/* the process's verdict is the verdict */
	for (size_t p = 0; p < r->nprocs; p++)
		take_recorded(r, p, v);

	for (size_t p = 0; p < r->nprocs; p++) {
		struct rd_site_series *ss;
		size_t nss;
		int e;

		if (!h[p].present)
			continue;
		e = growth_process_series(r, p, &h[p], &ss, &nss);
		if (e < 0) {
			growth_view_clear(v);
			return e;
		}
		for (size_t j = 0; j < nss; j++) {
			struct rd_growth *g = (struct rd_growth *)growth_view_find(v, ss[j].site);
			struct rd_growth c = { .site = ss[j].site, .proc = p };

			if (!g || !ss[j].nrows)
				continue;
			if (g->recorded) {
				/* the series of the process whose verdict it is,
				 * for its sparkline */
				if (g->proc != p || g->rows)
					continue;
				g->rows = ss[j].rows;
				g->nrows = ss[j].nrows;
				ss[j].rows = NULL;
				continue;
			}
			/* no verdict recorded (gpuspy before 0.4): replayed */
			replay(&ss[j], &c);
			c.taken = true;
			if (g->taken && !better(&c, g))
				continue;
			free(g->rows);
			c.rows = ss[j].rows;
			c.nrows = ss[j].nrows;
			ss[j].rows = NULL;
			*g = c;
		}
		growth_series_free(ss, nss);
	}
	return 0;
}

int growth_view_load(const struct rd_report *r, struct rd_growth_view *v, struct rd_error *err)
{
	struct rd_history *h = calloc(r->nprocs + 1, sizeof(*h));
	int e = h ? 0 : -ENOMEM;

	memset(v, 0, sizeof(*v));
	for (size_t i = 0; i < r->nprocs && e == 0; i++)
		e = load_history(r->procs[i], &h[i], err);
	/* without any history too: the processes' own verdicts */
	if (e == 0)
		e = growth_view_build(r, h, v);
	for (size_t i = 0; h && i < r->nprocs; i++)
		rd_history_clear(&h[i]);
	free(h);
	return e;
}

void growth_view_clear(struct rd_growth_view *v)
{
	for (size_t i = 0; v->sites && i < v->nsites; i++)
		free(v->sites[i].rows);
	free(v->sites);
	memset(v, 0, sizeof(*v));
}

bool growth_rate_of(const struct rd_report *r, const struct rd_report_site *s, double *rate)
{
	const struct rd_growth *g = s && r->growth ? growth_view_find(r->growth, s) : NULL;

	*rate = 0;
	if (!s || !r->growth)
		return false;
	/* grew, then stopped: it grows no more */
	if (s->stopped)
		return true;
	if (s->growing && g && g->recorded) {
		*rate = g->rate_bps;
		return true;
	}
	if (!r->growth->history)
		return false;
	if (!s->growing)
		return true;
	if (!g || !g->nrows || !g->fired)
		return false;
	*rate = g->rate_bps;
	return true;
}

size_t growth_columns(const struct rd_growth_row *rows, size_t n, size_t ncol,
		      enum growth_pick pick, double *t, int64_t *v)
{
	double t0, span;
	size_t c = 0;

	if (n == 0 || ncol == 0)
		return 0;
	if (n <= ncol) {
		for (size_t i = 0; i < n; i++) {
			if (t)
				t[i] = rows[i].t1;
			v[i] = pick == GROWTH_PICK_MAX ? rows[i].max : rows[i].last;
		}
		return n;
	}
	t0 = rows[0].t1;
	span = rows[n - 1].t1 - t0;
	if (!(span > 0))
		ncol = 1;
	/* times do not decrease: the first row opens span 0, the last closes
	 * span NCOL - 1, and K never goes back */
	for (size_t i = 0; i < n; i++) {
		double f = ncol > 1 ? (rows[i].t1 - t0) / span : 0.0;
		size_t k = (size_t)(f * (double)ncol);
		int64_t x = pick == GROWTH_PICK_MAX ? rows[i].max : rows[i].last;

		if (k >= ncol)
			k = ncol - 1;
		if (c == k + 1) {
			if (pick == GROWTH_PICK_LAST || x > v[k])
				v[k] = x;
		} else {
			for (; c < k; c++) {
				if (t)
					t[c] = t[c - 1];
				v[c] = v[c - 1];
			}
			v[k] = x;
			c = k + 1;
		}
		if (t)
			t[k] = rows[i].t1;
	}
	return ncol;
}
