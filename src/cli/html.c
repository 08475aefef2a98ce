/* SPDX-License-Identifier: MIT */
/*
 * gpuspy report --format html: one self-contained page.  The page itself
 * (src/cli/html/: template, script, style, the vendored uPlot) is compiled
 * in by embed_assets.py; what this file adds is the data, one JSON object
 * ("gpuspy-html/1", docs/format.md) in a <script type="application/json">
 * element, with every '<', '>' and '&' written \u00XX so that no string of
 * the input can close the element.  The page's script inserts every string
 * as text, never as markup, and its Content-Security-Policy allows no
 * request at all.
 *
 * The timeline is cut down here, not in the browser: a process's samples
 * beyond HTML_MAX_POINTS become HTML_COLUMNS columns of equal time, each
 * kept as its lowest and its highest value (at its first and last moment),
 * so a series has at most HTML_MAX_POINTS points and no peak is lost.
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html_assets.h"
#include "names.h"
#include "print.h"
#include "util.h"

#define HTML_COLUMNS	1000
#define HTML_MAX_POINTS ((size_t)2 * HTML_COLUMNS)
/* labels of marks whose stacks the page can show */
#define HTML_MAX_MARKS 64
/* devices of a process in its ledger */
#define HTML_MAX_DEVICES 64

struct html_site_ix {
	const struct rd_report_site *site;
	size_t index;
};

struct html {
	const struct rd_report *r;
	struct html_site_ix *ix; /* by pointer */
	bool oom;
};

static int cmp_ix(const void *pa, const void *pb)
{
	const struct rd_report_site *a = ((const struct html_site_ix *)pa)->site;
	const struct rd_report_site *b = ((const struct html_site_ix *)pb)->site;

	return (a > b) - (a < b);
}

/* The index of S in report.sites, or -1. */
static json_int_t html_site_index(const struct html *h, const struct rd_report_site *s)
{
	struct html_site_ix key = { .site = s };
	const struct html_site_ix *x =
		s ? bsearch(&key, h->ix, h->r->nsites, sizeof(*h->ix), cmp_ix) : NULL;

	return x ? (json_int_t)x->index : -1;
}

/* Append V (stolen) to A; remember a failure. */
static void html_append(struct html *h, json_t *a, json_t *v)
{
	if (!v || json_array_append_new(a, v) < 0)
		h->oom = true;
}

static void html_set(struct html *h, json_t *o, const char *key, json_t *v)
{
	/* json_object_set_new drops V when it fails, O NULL included */
	if (!v || json_object_set_new(o, key, v) < 0)
		h->oom = true;
}

static const char *html_track_kind(enum rd_hist_kind kind)
{
	switch (kind) {
	case RD_HIST_DEVICE:
		return "device";
	case RD_HIST_SITE:
		return "site";
	case RD_HIST_OTHER:
		return "other";
	case RD_HIST_OUTSIDE:
		return "nvml";
	case RD_HIST_POOL_RESERVED:
		return "pool_reserved";
	case RD_HIST_POOL_ALLOCATED:
		return "pool_allocated";
	default:
		return "other";
	}
}

/* Whether the page stacks track T (a band) rather than draws it as a line:
 * the sites and the rest; the devices only when there are no site tracks. */
static bool html_band(const struct rd_tl_track *t, bool sites)
{
	if (t->kind == RD_HIST_SITE || t->kind == RD_HIST_OTHER)
		return true;
	return !sites && t->kind == RD_HIST_DEVICE;
}

static int cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return (a > b) - (a < b);
}

/* Every moment of any track of TP, sorted, each once; *N of them. */
static double *html_grid(const struct rd_tl_process *tp, size_t *n)
{
	size_t total = 0, k = 0;
	double *g;

	for (size_t i = 0; i < tp->ntracks; i++)
		total += tp->tracks[i].n;
	g = calloc(total + 1, sizeof(*g));
	if (!g)
		return NULL;
	for (size_t i = 0; i < tp->ntracks; i++)
		for (size_t j = 0; j < tp->tracks[i].n; j++)
			g[k++] = tp->tracks[i].points[j].t;
	qsort(g, k, sizeof(*g), cmp_double);
	*n = 0;
	for (size_t i = 0; i < k; i++)
		if (*n == 0 || g[i] != g[*n - 1])
			g[(*n)++] = g[i];
	return g;
}

/* The value of T at each of the N moments of GRID (a track's points lie on
 * them): a band is 0 where the track has no point (its bytes were in
 * another band then), a line has none (null). */
static void html_values(const struct rd_tl_track *t, const double *grid, size_t n, bool band,
			int64_t *v, bool *known)
{
	size_t j = 0;

	for (size_t i = 0; i < n; i++) {
		while (j < t->n && t->points[j].t < grid[i])
			j++;
		known[i] = band || (j < t->n && t->points[j].t == grid[i]);
		v[i] = j < t->n && t->points[j].t == grid[i] ? t->points[j].v : 0;
	}
}

/* Columns of the N moments of GRID: column c is [cut[c], cut[c + 1]). */
static size_t html_columns(const double *grid, size_t n, size_t *cut)
{
	double t0 = grid[0], span = grid[n - 1] - grid[0];
	size_t nc = 0, prev = SIZE_MAX;

	for (size_t i = 0; i < n; i++) {
		size_t c = span > 0 ? (size_t)((grid[i] - t0) / span * HTML_COLUMNS) : 0;

		if (c >= HTML_COLUMNS)
			c = HTML_COLUMNS - 1;
		if (c != prev)
			cut[nc++] = i;
		prev = c;
	}
	cut[nc] = n;
	return nc;
}

/* The moments the page gets: all of them, or two per column (its first
 * and its last; one when it has one). */
static json_t *html_times(const double *grid, size_t n, const size_t *cut, size_t nc, double start)
{
	json_t *a = json_array();

	if (!cut) {
		for (size_t i = 0; i < n; i++)
			json_array_append_new(a, json_real(grid[i] - start));
		return a;
	}
	for (size_t c = 0; c < nc; c++) {
		json_array_append_new(a, json_real(grid[cut[c]] - start));
		if (cut[c + 1] - cut[c] > 1)
			json_array_append_new(a, json_real(grid[cut[c + 1] - 1] - start));
	}
	return a;
}

static json_t *html_one_value(int64_t v, bool known)
{
	return known ? json_integer(v) : json_null();
}

/* The values of a track on the page's moments: all, or per column its
 * lowest and its highest known value. */
static json_t *html_series_values(const int64_t *v, const bool *known, size_t n, const size_t *cut,
				  size_t nc)
{
	json_t *a = json_array();

	if (!cut) {
		for (size_t i = 0; i < n; i++)
			json_array_append_new(a, html_one_value(v[i], known[i]));
		return a;
	}
	for (size_t c = 0; c < nc; c++) {
		int64_t lo = INT64_MAX, hi = INT64_MIN;
		bool any = false;

		for (size_t i = cut[c]; i < cut[c + 1]; i++) {
			if (!known[i])
				continue;
			any = true;
			lo = v[i] < lo ? v[i] : lo;
			hi = v[i] > hi ? v[i] : hi;
		}
		json_array_append_new(a, html_one_value(lo, any));
		if (cut[c + 1] - cut[c] > 1)
			json_array_append_new(a, html_one_value(hi, any));
	}
	return a;
}

static json_t *html_event(const struct rd_tl_event *ev, double start)
{
	static const char *const kinds[] = {
		[RD_TL_MARK] = "mark",
		[RD_TL_SNAPSHOT] = "snapshot",
		[RD_TL_OOM] = "oom",
		[RD_TL_PEAK] = "peak",
	};
	json_t *o = json_pack("{s:f, s:s, s:I}", "t", ev->t - start, "kind", kinds[ev->kind],
			      "bytes", (json_int_t)ev->bytes);

	if (o && ev->kind != RD_TL_MARK && ev->kind != RD_TL_PEAK)
		json_object_set_new(o, "number", json_integer(ev->number));
	if (o && ev->label)
		json_object_set_new(o, "label", json_string(ev->label));
	if (o && ev->kind == RD_TL_OOM)
		json_object_set_new(o, "device", json_integer(ev->device));
	return o;
}

/* The timeline of one process: "t", "bands", "lines", "events". */
static int html_timeline(struct html *h, json_t *po, const struct rd_tl_process *tp, double start)
{
	size_t n = 0, nc = 0, *cut = NULL;
	double *grid = html_grid(tp, &n);
	int64_t *v = calloc(n + 1, sizeof(*v));
	bool *known = calloc(n + 1, sizeof(*known));
	json_t *bands = json_array(), *lines = json_array(), *events = json_array();
	bool sites = false;

	if (!grid || !v || !known || !bands || !lines || !events)
		goto oom;
	if (n > HTML_MAX_POINTS) {
		cut = calloc(n + 1, sizeof(*cut));
		if (!cut)
			goto oom;
		nc = html_columns(grid, n, cut);
	}
	for (size_t k = 0; k < tp->ntracks; k++)
		sites |= tp->tracks[k].kind == RD_HIST_SITE || tp->tracks[k].kind == RD_HIST_OTHER;
	for (size_t k = 0; k < tp->ntracks; k++) {
		const struct rd_tl_track *t = &tp->tracks[k];
		bool band = html_band(t, sites);
		json_t *o = json_pack("{s:s, s:I}", "kind", html_track_kind(t->kind), "key",
				      (json_int_t)t->key);

		if (t->kind == RD_HIST_SITE)
			html_set(h, o, "site", json_integer(html_site_index(h, t->site)));
		html_values(t, grid, n, band, v, known);
		html_set(h, o, "v", html_series_values(v, known, n, cut, nc));
		html_append(h, band ? bands : lines, o);
	}
	html_set(h, po, "history", json_boolean(tp->history));
	html_set(h, po, "downsampled", json_boolean(cut != NULL));
	html_set(h, po, "t", n ? html_times(grid, n, cut, nc, start) : json_array());
	for (size_t k = 0; k < tp->nevents; k++)
		html_append(h, events, html_event(&tp->events[k], start));
	html_set(h, po, "bands", bands);
	html_set(h, po, "lines", lines);
	html_set(h, po, "events", events);
	free(cut);
	free(known);
	free(v);
	free(grid);
	return 0;
oom:
	json_decref(bands);
	json_decref(lines);
	json_decref(events);
	free(known);
	free(v);
	free(grid);
	return -ENOMEM;
}

/* D added to the N devices of DEVS unless it is there, or they are full. */
static void html_add_device(int64_t *devs, size_t *n, int64_t d)
{
	for (size_t i = 0; i < *n; i++)
		if (devs[i] == d)
			return;
	if (*n < HTML_MAX_DEVICES)
		devs[(*n)++] = d;
}

/* What fills each device of process PI, as far as its files say
 * (docs/format.md, "gpuspy-html/1", "ledger"). */
static json_t *html_ledger(struct html *h, size_t pi)
{
	const struct rd_report *r = h->r;
	const struct rd_process *p = r->procs[pi];
	json_t *a = json_array();
	/* the devices of its memory, its pool and its NVML view */
	int64_t devs[HTML_MAX_DEVICES];
	size_t nd = 0;

	for (size_t i = 0; i < p->ndevices; i++)
		html_add_device(devs, &nd, p->devices[i].device);
	for (size_t i = 0; i < p->torch.ndevices; i++)
		html_add_device(devs, &nd, p->torch.devices[i].device);
	for (size_t i = 0; i < p->outside.ngpus; i++)
		html_add_device(devs, &nd, p->outside.gpus[i].index);
	for (size_t d = 0; d < nd && a; d++) {
		json_t *o = json_pack("{s:I}", "device", (json_int_t)devs[d]);
		int64_t tracked = 0;
		bool one = p->ndevices == 1 && p->devices[0].device == devs[d];

		for (size_t i = 0; i < p->ndevices; i++)
			if (p->devices[i].device == devs[d])
				tracked = p->devices[i].live_bytes;
		html_set(h, o, "tracked_bytes", json_integer(tracked));
		for (size_t i = 0; i < p->ngpus; i++) {
			if (p->gpus[i].device != devs[d])
				continue;
			if (p->gpus[i].name)
				html_set(h, o, "name", json_string(p->gpus[i].name));
			if (p->gpus[i].total_bytes >= 0)
				html_set(h, o, "total_bytes", json_integer(p->gpus[i].total_bytes));
		}
		/* a site does not say its device: split by label only when the
		 * process's memory lies on this one device */
		if (one) {
			json_t *by = json_object();

			for (size_t i = 0; by && i < p->nsites; i++) {
				const struct rd_report_site *m = r->site_of[pi][i];
				const char *label = m->library ? m->library :
						    m->pool    ? m->pool :
								 "user code";
				json_t *cur;

				if (p->sites[i].kind == GS_KIND_PINNED ||
				    p->sites[i].c.live_bytes <= 0)
					continue;
				cur = json_object_get(by, label);
				json_object_set_new(
					by, label,
					json_integer(p->sites[i].c.live_bytes +
						     (cur ? json_integer_value(cur) : 0)));
			}
			html_set(h, o, "by_label", by);
		}
		for (size_t i = 0; i < p->torch.ndevices; i++) {
			const struct rd_torch_device *td = &p->torch.devices[i];

			if (td->device != devs[d])
				continue;
			html_set(h, o, "pool_reserved_bytes", json_integer(td->reserved_bytes));
			html_set(h, o, "pool_allocated_bytes", json_integer(td->allocated_bytes));
		}
		/* NVML's index is taken as the ordinal, as the text report does */
		for (size_t i = 0; i < p->outside.ngpus; i++) {
			const struct rd_outside_gpu *g = &p->outside.gpus[i];
			json_t *others = json_array();

			if (g->index != devs[d]) {
				json_decref(others);
				continue;
			}
			html_set(h, o, "nvml_total_bytes", json_integer(g->total_bytes));
			html_set(h, o, "nvml_used_bytes", json_integer(g->used_bytes));
			for (size_t k = 0; k < g->nprocs; k++) {
				if (g->procs[k].pid == p->pid)
					html_set(h, o, "nvml_process_bytes",
						 json_integer(g->procs[k].used_bytes));
				else
					html_append(h, others,
						    json_pack("{s:I, s:I}", "pid",
							      (json_int_t)g->procs[k].pid,
							      "used_bytes",
							      (json_int_t)g->procs[k].used_bytes));
			}
			html_set(h, o, "other_processes", others);
		}
		html_append(h, a, o);
	}
	return a;
}

static json_t *html_process(struct html *h, size_t pi, const struct rd_tl_process *tp, double start)
{
	const struct rd_process *p = h->r->procs[pi];
	char who[REPORT_NAME_SIZE];
	json_t *o = json_object();

	merge_process_name(h->r, pi, who, sizeof(who));
	html_set(h, o, "name", json_string(who));
	html_set(h, o, "host", json_string(p->host));
	html_set(h, o, "pid", json_integer(p->pid));
	if (html_timeline(h, o, tp, start) < 0)
		h->oom = true;
	html_set(h, o, "ledger", html_ledger(h, pi));
	return o;
}

/* The samples of one moment: [process, site index, live bytes] each. */
static json_t *html_stacks(struct html *h, const struct rd_stacks *st, double start)
{
	json_t *o = json_pack("{s:s, s:s?, s:I, s:I}", "state", stacks_state_name(st->state),
			      "label", st->label, "processes", (json_int_t)st->processes,
			      "live_bytes", (json_int_t)st->live_bytes);
	json_t *a = json_array();

	html_set(h, o, "time", st->time >= 0 ? json_real(st->time - start) : json_null());
	for (size_t i = 0; i < st->n; i++) {
		const struct rd_stack_sample *x = &st->samples[i];

		if (x->live_bytes <= 0)
			continue;
		html_append(h, a,
			    json_pack("[I, I, I]", (json_int_t)x->proc, html_site_index(h, x->site),
				      (json_int_t)x->live_bytes));
	}
	html_set(h, o, "samples", a);
	return o;
}

/* One moment's stacks appended to A; a moment no process has is left out. */
static int html_add_stacks(struct html *h, json_t *a, enum stacks_state s, const char *label,
			   double start)
{
	struct rd_error err = { .msg = "" };
	struct rd_stacks st = { 0 };
	int e = stacks_build(h->r, s, label, &st, &err);

	if (e == -EINVAL)
		return 0;
	if (e < 0)
		return e;
	html_append(h, a, html_stacks(h, &st, start));
	stacks_clear(&st);
	return 0;
}

/* The labels of every process's marks, each once, at most HTML_MAX_MARKS. */
static size_t html_mark_labels(const struct rd_report *r, const char **out)
{
	size_t n = 0;

	for (size_t i = 0; i < r->nprocs; i++) {
		for (size_t k = 0; k < r->procs[i]->nmarks; k++) {
			const char *l = r->procs[i]->marks[k].label;
			size_t j = 0;

			while (j < n && strcmp(out[j], l) != 0)
				j++;
			if (j == n && n < HTML_MAX_MARKS)
				out[n++] = l;
		}
	}
	return n;
}

/* The JSON of the page written with '<', '>' and '&' escaped. */
static void html_put_data(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '<' || *s == '>' || *s == '&')
			fprintf(f, "\\u%04x", (unsigned)*s);
		else
			putc(*s, f);
	}
}

int html_write_page(FILE *out, const char *const *parts, const char *const *slots, size_t nparts,
		    const char *(*asset)(const char *name), char *data)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int e = 0;

	/* the whole page first: nothing on stdout unless all of it */
	f = open_memstream(&buf, &len);
	if (!f) {
		free(data);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nparts; i++) {
		fputs(parts[i], f);
		if (i + 1 == nparts)
			break;
		if (strcmp(slots[i], "data") == 0)
			html_put_data(f, data);
		else
			fputs(asset(slots[i]), f);
	}
	free(data);
	if (fclose(f) != 0)
		e = -ENOMEM;
	else if (fwrite(buf, 1, len, out) != len)
		e = -EIO;
	free(buf);
	return e;
}

static json_t *html_data(struct html *h, const struct rd_process_list *list,
			 const struct rd_timeline *tl, const char *at, bool peak, size_t top)
{
	json_t *root = json_object(), *procs = json_array(), *stacks = json_array();
	const char *labels[HTML_MAX_MARKS];
	size_t nl = html_mark_labels(h->r, labels);
	int e = 0;

	html_set(h, root, "format", json_string("gpuspy-html/1"));
	html_set(h, root, "start", json_real(tl->start));
	html_set(h, root, "top", json_integer((json_int_t)top));
	html_set(h, root, "show",
		 json_pack("{s:s, s:s?}", "state",
			   at	? "mark" :
			   peak ? "peak" :
				  "exit",
			   "label", at));
	html_set(h, root, "report", json_report_object(h->r, list, 0));
	for (size_t i = 0; i < h->r->nprocs; i++)
		html_append(h, procs, html_process(h, i, &tl->procs[i], tl->start));
	html_set(h, root, "processes", procs);
	e = html_add_stacks(h, stacks, STACKS_EXIT, NULL, tl->start);
	if (e == 0)
		e = html_add_stacks(h, stacks, STACKS_PEAK, NULL, tl->start);
	for (size_t i = 0; i < nl && e == 0; i++)
		e = html_add_stacks(h, stacks, STACKS_MARK, labels[i], tl->start);
	html_set(h, root, "stacks", stacks);
	if (e < 0)
		h->oom = true;
	return root;
}

int html_print(const struct rd_report *r, const struct rd_process_list *list,
	       const struct rd_timeline *tl, const char *at, bool peak, size_t top, FILE *out)
{
	struct html h = { .r = r };
	char *data = NULL;
	json_t *root;

	h.ix = calloc(r->nsites + 1, sizeof(*h.ix));
	if (!h.ix)
		return -ENOMEM;
	for (size_t i = 0; i < r->nsites; i++)
		h.ix[i] = (struct html_site_ix){ r->sites[i], i };
	qsort(h.ix, r->nsites, sizeof(*h.ix), cmp_ix);
	root = html_data(&h, list, tl, at, peak, top);
	data = root && !h.oom ? json_dumps(root, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
	json_decref(root);
	free(h.ix);
	if (!data)
		return -ENOMEM;
	return html_write_page(out, html_parts, html_slots, HTML_NPARTS, html_asset, data);
}
