/* SPDX-License-Identifier: MIT */
/* Each process of a report over time (timeline.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "growth_view.h"
#include "timeline.h"

static int tl_add_point(struct rd_tl_track *t, double when, int64_t v, size_t cap)
{
	if (t->n == cap)
		return -EOVERFLOW; /* cannot happen: room for every row */
	t->points[t->n++] = (struct rd_tl_point){ when, v };
	return 0;
}

static struct rd_tl_track *tl_new_track(struct rd_tl_process *tp, enum rd_hist_kind kind,
					int64_t key, size_t room)
{
	struct rd_tl_track *n = reallocarray(tp->tracks, tp->ntracks + 1, sizeof(*n));
	struct rd_tl_track *t;

	if (!n)
		return NULL;
	tp->tracks = n;
	t = &n[tp->ntracks];
	*t = (struct rd_tl_track){ .kind = kind, .key = key };
	t->points = calloc(room + 1, sizeof(*t->points));
	if (!t->points)
		return NULL;
	tp->ntracks++;
	return t;
}

static int tl_add_event(struct rd_tl_process *tp, const struct rd_tl_event *ev)
{
	struct rd_tl_event *n = reallocarray(tp->events, tp->nevents + 1, sizeof(*n));

	if (!n)
		return -ENOMEM;
	tp->events = n;
	n[tp->nevents++] = *ev;
	return 0;
}

/* The value a row gives a track: a sample's, or a bucket's max. */
static int64_t tl_value(const struct rd_hist_row *row, const struct rd_hist_value *v)
{
	return row->type == RD_HIST_BUCKET ? v->max : v->last;
}

/* Every series of H but the sites' (merged by growth_process_series) and
 * the PyTorch view's lines, which name no call site. */
static int tl_from_history(const struct rd_report *r, size_t p, const struct rd_history *h,
			   struct rd_tl_process *tp)
{
	struct rd_site_series *ss = NULL;
	size_t nss = 0;
	int e = 0;

	for (size_t k = 0; k < h->nseries && e == 0; k++) {
		const struct rd_hist_series *s = &h->series[k];
		struct rd_tl_track *t;

		/* the frameworks' counters are the ledger's, not the timeline's */
		if (s->kind == RD_HIST_SITE || s->kind == RD_HIST_TORCH ||
		    s->kind == RD_HIST_TORCH_OTHER || s->kind == RD_HIST_FW)
			continue;
		t = tl_new_track(tp, s->kind, s->key, h->nrows);
		if (!t)
			return -ENOMEM;
		for (size_t i = 0; i < h->nrows && e == 0; i++) {
			const struct rd_hist_row *row = &h->rows[i];

			for (size_t j = 0; row->type != RD_HIST_EVENT && j < row->count; j++) {
				const struct rd_hist_value *v = &h->values[row->first + j];

				if (v->series == k)
					e = tl_add_point(t, h->start + row->t1, tl_value(row, v),
							 h->nrows);
			}
		}
	}
	if (e == 0)
		e = growth_process_series(r, p, h, &ss, &nss);
	for (size_t j = 0; j < nss && e == 0; j++) {
		struct rd_tl_track *t = tl_new_track(tp, RD_HIST_SITE, -1, ss[j].nrows);

		if (!t) {
			e = -ENOMEM;
			break;
		}
		t->site = ss[j].site;
		for (size_t i = 0; i < ss[j].nrows && e == 0; i++) {
			const struct rd_growth_row *g = &ss[j].rows[i];

			e = tl_add_point(t, h->start + g->t1, g->t0 < g->t1 ? g->max : g->last,
					 ss[j].nrows);
		}
	}
	growth_series_free(ss, nss);
	for (size_t i = 0; i < h->nrows && e == 0; i++) {
		const struct rd_hist_row *row = &h->rows[i];

		/* marks and post-mortems come from the report, with more said */
		if (row->type == RD_HIST_EVENT && row->event == RD_HIST_SNAPSHOT)
			e = tl_add_event(tp, &(struct rd_tl_event){ .t = h->start + row->t0,
								    .kind = RD_TL_SNAPSHOT,
								    .number = row->number,
								    .label = row->label,
								    .device = -1 });
	}
	return e;
}

/* Without a history: each device at the peak copy and at the file's moment. */
static int tl_from_report(const struct rd_process *p, struct rd_tl_process *tp)
{
	size_t room = p->ndevices + p->at_peak.ndevices;

	for (size_t i = 0; i < room; i++) {
		bool peak = i >= p->ndevices;
		const struct rd_peak_device *pd =
			peak ? &p->at_peak.devices[i - p->ndevices] : NULL;
		int64_t dev = peak ? pd->device : p->devices[i].device;
		int64_t v = peak ? pd->live_bytes : p->devices[i].live_bytes;
		double t = peak ? p->at_peak.time : p->end_time;
		struct rd_tl_track *tr = NULL;

		if (t < 0)
			continue;
		for (size_t k = 0; k < tp->ntracks; k++)
			if (tp->tracks[k].key == dev)
				tr = &tp->tracks[k];
		if (!tr) {
			tr = tl_new_track(tp, RD_HIST_DEVICE, dev, room + 1);
			if (!tr)
				return -ENOMEM;
			/* nothing was live before the process started */
			if (p->start_time > 0 && p->start_time < t)
				tl_add_point(tr, p->start_time, 0, room + 1);
		}
		tl_add_point(tr, t, v, room + 1);
	}
	return 0;
}

static int cmp_point(const void *pa, const void *pb)
{
	double a = ((const struct rd_tl_point *)pa)->t, b = ((const struct rd_tl_point *)pb)->t;

	return (a > b) - (a < b);
}

static int cmp_event(const void *pa, const void *pb)
{
	double a = ((const struct rd_tl_event *)pa)->t, b = ((const struct rd_tl_event *)pb)->t;

	return (a > b) - (a < b);
}

static int tl_events(const struct rd_process *p, struct rd_tl_process *tp)
{
	int e = 0;

	for (size_t i = 0; i < p->nmarks && e == 0; i++)
		e = tl_add_event(tp, &(struct rd_tl_event){ .t = p->marks[i].time,
							    .kind = RD_TL_MARK,
							    .label = p->marks[i].label,
							    .bytes = p->marks[i].live_bytes,
							    .device = -1 });
	for (size_t i = 0; i < p->noom && e == 0; i++)
		e = tl_add_event(tp, &(struct rd_tl_event){ .t = p->oom[i].time,
							    .kind = RD_TL_OOM,
							    .number = p->oom[i].number,
							    .label = p->oom[i].api,
							    .bytes = p->oom[i].requested_bytes,
							    .device = p->oom[i].device });
	/* an oom-N.json read as the process's report: its own event */
	if (e == 0 && p->partial && p->event.api && p->noom == 0)
		e = tl_add_event(tp, &(struct rd_tl_event){ .t = p->event.time,
							    .kind = RD_TL_OOM,
							    .number = p->event.number,
							    .label = p->event.api,
							    .bytes = p->event.requested_bytes,
							    .device = p->event.device });
	if (e == 0 && p->at_peak.present)
		e = tl_add_event(tp, &(struct rd_tl_event){ .t = p->at_peak.time,
							    .kind = RD_TL_PEAK,
							    .bytes = p->at_peak.bytes,
							    .device = -1 });
	return e;
}

static void tl_start(struct rd_timeline *tl, double t)
{
	if (t > 0 && (tl->start == 0 || t < tl->start))
		tl->start = t;
}

int timeline_load(const struct rd_report *r, struct rd_timeline *tl, struct rd_error *err)
{
	int e = 0;

	memset(tl, 0, sizeof(*tl));
	tl->procs = calloc(r->nprocs + 1, sizeof(*tl->procs));
	tl->hist = calloc(r->nprocs + 1, sizeof(*tl->hist));
	tl->nprocs = r->nprocs;
	if (!tl->procs || !tl->hist) {
		timeline_clear(tl);
		return -ENOMEM;
	}
	/* every history read before any is used: one bad file, one line */
	for (size_t i = 0; i < r->nprocs && e == 0; i++)
		e = load_history(r->procs[i], &tl->hist[i], err);
	for (size_t i = 0; i < r->nprocs && e == 0; i++) {
		struct rd_tl_process *tp = &tl->procs[i];

		tp->history = tl->hist[i].present;
		tl_start(tl, r->procs[i]->start_time);
		e = tp->history ? tl_from_history(r, i, &tl->hist[i], tp) :
				  tl_from_report(r->procs[i], tp);
		if (e == 0)
			e = tl_events(r->procs[i], tp);
		for (size_t k = 0; k < tp->ntracks && e == 0; k++) {
			struct rd_tl_track *t = &tp->tracks[k];

			/* a history is in order of time already */
			if (!tp->history)
				qsort(t->points, t->n, sizeof(*t->points), cmp_point);
			if (t->n)
				tl_start(tl, t->points[0].t);
		}
		if (e == 0 && tp->nevents) {
			qsort(tp->events, tp->nevents, sizeof(*tp->events), cmp_event);
			tl_start(tl, tp->events[0].t);
		}
	}
	if (e < 0)
		timeline_clear(tl);
	return e;
}

void timeline_clear(struct rd_timeline *tl)
{
	for (size_t i = 0; tl->procs && i < tl->nprocs; i++) {
		for (size_t k = 0; k < tl->procs[i].ntracks; k++)
			free(tl->procs[i].tracks[k].points);
		free(tl->procs[i].tracks);
		free(tl->procs[i].events);
	}
	for (size_t i = 0; tl->hist && i < tl->nprocs; i++)
		rd_history_clear(&tl->hist[i]);
	free(tl->procs);
	free(tl->hist);
	memset(tl, 0, sizeof(*tl));
}
