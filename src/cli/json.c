/* SPDX-License-Identifier: MIT */
/*
 * JSON for programs: "gpuspy-report/1", "gpuspy-merge/1" and
 * "gpuspy-diff/1" (docs/format.md).  jansson keeps insertion order: the
 * keys come out as documented, the same every time.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "budget.h"
#include "diff.h"
#include "growth_view.h"
#include "ledger.h"
#include "merge.h"
#include "names.h"
#include "oom_rule.h"
#include "print.h"
#include "stacks.h"
#include "trend.h"
#include "wrong_device.h"
#include "util.h"

/* gpuspy report */

/* The members every verdict has (docs/format.md, gpuspy-report/1
 * "growth"): the process's words, read back. */
static void verdict_members(json_t *o, bool fired, int state, int shape, double since, double rate,
			    double until)
{
	json_object_set_new(o, "since_s", fired ? json_real(since) : json_null());
	json_object_set_new(o, "rate_bytes_per_s", json_real(fired ? rate : 0));
	json_object_set_new(o, "shape", json_string(trend_shape_name(fired ? shape : 0)));
	json_object_set_new(o, "stopped", json_boolean(fired && state == TREND_STOPPED));
	json_object_set_new(o, "until_s", fired ? json_real(until) : json_null());
}

/* A flagged site's "growth" (docs/format.md); NULL when neither its
 * processes recorded a verdict nor a history has a series of it. */
static json_t *growth_json(const struct rd_report *r, const struct rd_report_site *s)
{
	static const char *const by[] = { [RD_BY_SAMPLES] = "samples",
					  [RD_BY_MARKS] = "marks",
					  [RD_BY_FRAMEWORK] = "framework" };
	const struct rd_growth *g = growth_view_find(r->growth, s);
	double t[JSON_GROWTH_POINTS];
	int64_t v[JSON_GROWTH_POINTS];
	json_t *o, *pts;
	size_t n;

	if (!g || !g->taken)
		return NULL;
	n = g->nrows ?
		    growth_columns(g->rows, g->nrows, JSON_GROWTH_POINTS, GROWTH_PICK_MAX, t, v) :
		    0;
	o = json_object();
	pts = json_array();
	for (size_t i = 0; pts && i < n; i++)
		json_array_append_new(pts, json_pack("[fI]", t[i], (json_int_t)v[i]));
	verdict_members(o, g->fired, g->state, g->shape, g->since_s, g->rate_bps, g->until_s);
	/* the process's own verdict, or a replay of its history (older files) */
	json_object_set_new(o, "recorded", json_boolean(g->recorded));
	if (g->recorded) {
		json_object_set_new(o, "by", json_string(by[g->by]));
		if (g->by == RD_BY_FRAMEWORK && g->fw >= 0) {
			char place[8];

			snprintf(place, sizeof(place), "%d", g->place);
			json_object_set_new(o, "framework", json_string(names_fw[g->fw]));
			json_object_set_new(o, "place",
					    json_string(g->place == GS_FW_HOST ? "host" : place));
		}
	}
	json_object_set_new(o, "process", json_integer((json_int_t)g->proc));
	json_object_set_new(o, "samples", pts);
	return o;
}

static json_t *counts_json(const char *k1, int64_t v1, const char *k2, int64_t v2)
{
	json_t *o = json_object();

	json_object_set_new(o, k1, json_integer(v1));
	if (k2)
		json_object_set_new(o, k2, json_integer(v2));
	return o;
}

static json_t *graph_json(const struct rd_graph *g)
{
	json_t *o = json_object(), *devs = json_array();

	json_object_set_new(o, "alloc_nodes", json_integer(g->alloc_nodes));
	json_object_set_new(o, "alloc_node_bytes", json_integer(g->alloc_node_bytes));
	json_object_set_new(o, "reserved_bytes", json_integer(g->reserved_bytes));
	json_object_set_new(o, "launches", json_integer(g->launches));
	json_object_set_new(o, "live_bytes", json_integer(g->live_bytes));
	json_object_set_new(o, "live_allocations", json_integer(g->live_allocations));
	json_object_set_new(o, "peak_bytes", json_integer(g->peak_bytes));
	json_object_set_new(o, "trims", json_integer(g->trims));
	for (size_t i = 0; i < g->ndevices; i++) {
		const struct rd_graph_device *d = &g->devices[i];
		json_t *dj = json_object();

		json_object_set_new(dj, "device", json_integer(d->device));
		json_object_set_new(dj, "used_current", json_integer(d->used_current));
		json_object_set_new(dj, "used_high", json_integer(d->used_high));
		json_object_set_new(dj, "reserved_current", json_integer(d->reserved_current));
		json_object_set_new(dj, "reserved_high", json_integer(d->reserved_high));
		if (d->as_of >= 0)
			json_object_set_new(dj, "as_of", json_real(d->as_of));
		json_array_append_new(devs, dj);
	}
	json_object_set_new(o, "devices", devs);
	return o;
}

/* A call site's key as reports print it: its digest (merge_key_digest). */
static json_t *key_json(const char *key)
{
	char buf[MERGE_DIGEST_SIZE];

	return json_string(merge_key_digest(key, buf, sizeof(buf)));
}

/* A merged site's lines (rd_report_site.lines): only when there are
 * several, else its frames say it all. */
static void lines_json(json_t *o, const struct rd_report_site *s)
{
	json_t *a;

	if (s->nlines < 2)
		return;
	a = json_array();
	for (size_t i = 0; i < s->nlines; i++) {
		const struct rd_report_line *l = &s->lines[i];
		json_t *j = json_object();

		if (l->file)
			json_object_set_new(j, "file", json_string(l->file));
		if (l->line > 0)
			json_object_set_new(j, "line", json_integer(l->line));
		json_object_set_new(j, "leaked_bytes", json_integer(l->c.live_bytes));
		json_object_set_new(j, "leaked_allocations", json_integer(l->c.live_allocations));
		json_object_set_new(j, "peak_bytes", json_integer(l->c.peak_bytes));
		json_object_set_new(j, "at_peak_bytes", json_integer(l->at_peak_bytes));
		json_object_set_new(j, "allocated_bytes", json_integer(l->c.allocated_bytes));
		json_object_set_new(j, "allocations", json_integer(l->c.allocations));
		json_object_set_new(j, "freed_bytes", json_integer(l->c.freed_bytes));
		json_object_set_new(j, "frees", json_integer(l->c.frees));
		json_array_append_new(a, j);
	}
	json_object_set_new(o, "lines", a);
}

static json_t *frame_json(const struct rd_report_frame *f)
{
	json_t *o = json_object();

	/* fields that are unknown are left out, per docs/format.md */
	if (f->function)
		json_object_set_new(o, "function", json_string(f->function));
	if (f->module)
		json_object_set_new(o, "module", json_string(f->module));
	if (f->file)
		json_object_set_new(o, "file", json_string(f->file));
	if (f->file && f->line > 0)
		json_object_set_new(o, "line", json_integer(f->line));
	if (f->file && f->nlines > 0) {
		json_t *lines = json_array();

		for (size_t i = 0; i < f->nlines; i++)
			json_array_append_new(lines, json_integer(f->lines[i]));
		json_object_set_new(o, "lines", lines);
	}
	json_object_set_new(o, "kind", json_string(f->python ? "python" : "native"));
	if (!f->python)
		json_object_set_new(o, "offset", json_integer((json_int_t)f->offset));
	if (f->build_id)
		json_object_set_new(o, "build_id", json_string(f->build_id));
	if (f->noise != NOISE_NONE)
		json_object_set_new(o, "noise", json_true());
	return o;
}

json_t *json_frame_object(const struct rd_report_frame *f)
{
	return frame_json(f);
}

json_t *json_spread_object(const struct rd_report_spread *sp)
{
	json_t *o = json_object();

	json_object_set_new(o, "min", json_integer(sp->min));
	json_object_set_new(o, "median", json_integer(sp->median));
	json_object_set_new(o, "max", json_integer(sp->max));
	if (sp->outlier >= 0)
		json_object_set_new(o, "outlier", json_integer(sp->outlier));
	return o;
}

/* {"leaked": SPREAD, "peak": SPREAD, "allocations": SPREAD} */
json_t *json_spreads_object(const struct rd_report_spread *sp)
{
	json_t *o = json_object();

	for (int m = 0; m < REPORT_METRICS; m++)
		json_object_set_new(o, merge_metric_name(m), json_spread_object(&sp[m]));
	return o;
}

static json_t *site_json(const struct rd_report *r, const struct rd_report_site *s)
{
	json_t *o = json_object();
	json_t *frames = json_array();
	ssize_t headline = merge_site_headline(s);

	json_object_set_new(o, "number", json_integer((json_int_t)s->number));
	json_object_set_new(o, "key", key_json(s->key));
	json_object_set_new(o, "name", json_string(merge_site_name(s)));
	json_object_set_new(o, "kind", json_string(names_kind(s->kind)));
	json_object_set_new(o, "api", json_string(s->api));
	if (s->library)
		json_object_set_new(o, "library", json_string(s->library));
	if (s->pool)
		json_object_set_new(o, "pool", json_string(s->pool));
	json_object_set_new(o, "processes", json_integer(s->processes));
	json_object_set_new(o, "leaked_bytes", json_integer(s->c.live_bytes));
	json_object_set_new(o, "leaked_allocations", json_integer(s->c.live_allocations));
	json_object_set_new(o, "peak_bytes", json_integer(s->c.peak_bytes));
	json_object_set_new(o, "at_peak_bytes", json_integer(s->at_peak_bytes));
	json_object_set_new(o, "growing", json_boolean(s->growing));
	json_object_set_new(o, "stopped", json_boolean(s->stopped));
	if (s->growing || s->stopped) {
		json_t *g = growth_json(r, s);

		if (g)
			json_object_set_new(o, "growth", g);
	}
	json_object_set_new(o, "allocated_bytes", json_integer(s->c.allocated_bytes));
	json_object_set_new(o, "allocations", json_integer(s->c.allocations));
	json_object_set_new(o, "freed_bytes", json_integer(s->c.freed_bytes));
	json_object_set_new(o, "frees", json_integer(s->c.frees));
	/* with one process there is nothing to spread */
	if (r->nprocs > 1)
		json_object_set_new(o, "spread", json_spreads_object(s->spread));
	if (headline >= 0)
		json_object_set_new(o, "headline", frame_json(&s->frames[headline]));
	for (size_t i = 0; i < s->nframes; i++)
		json_array_append_new(frames, frame_json(&s->frames[i]));
	json_object_set_new(o, "frames", frames);
	lines_json(o, s);
	return o;
}

/* "state" and what is known of how a process that did not exit ended
 * (docs/format.md, gpuspy-report/1): the run's END (< 0: unknown) and the
 * moment of its last file, LAST (< 0: unknown, or none). */
static void state_json(json_t *o, enum rd_state state, unsigned image, int64_t sig, double end,
		       double last)
{
	json_object_set_new(o, "state",
			    json_string(state == RD_STATE_KILLED  ? "killed" :
					state == RD_STATE_EXECED  ? "exec" :
					state == RD_STATE_RUNNING ? "running" :
								    "unknown"));
	if (state == RD_STATE_MAYBE_RUNNING)
		json_object_set_new(o, "pid_alive", json_true());
	if (image > 0)
		json_object_set_new(o, "image", json_integer(image));
	if (sig > 0)
		json_object_set_new(o, "signal", json_integer(sig));
	if (end >= 0)
		json_object_set_new(o, "end_time", json_real(end));
	if (last >= 0)
		json_object_set_new(o, "last_snapshot_time", json_real(last));
}

/* "ledger": per device, the figures of gpuspy-report(1)'s THE LEDGER (members
 * unknown are absent). */
static void ledger_json(json_t *o, const struct rd_process *p)
{
	struct rd_ledger *l;
	json_t *a;
	size_t n;

	if (rd_ledger(p, &l, &n) < 0 || !n)
		return;
	a = json_array();
	for (size_t i = 0; i < n; i++) {
		const struct rd_ledger *d = &l[i];
		json_t *e = json_object(), *fws = json_object();
		const struct {
			const char *key;
			int64_t v;
		} m[] = {
			{ "framework_allocated_bytes", d->fw_allocated },
			{ "pool_slack_bytes", d->pool_slack },
			{ "framework_reserved_bytes", d->fw_reserved },
			{ "tracked_outside_pools_bytes", d->outside_pools },
			{ "graph_pool_bytes", d->graph_pool },
			{ "context_bytes", d->nvml >= 0 ? d->context : -1 },
			{ "nvml_process_bytes", d->nvml },
			{ "tracked_bytes", d->tracked },
			{ "untracked_bytes", d->untracked },
		};

		json_object_set_new(e, "device", json_integer(d->device));
		for (size_t k = 0; k < d->nfw; k++) {
			json_t *f = json_object();

			json_object_set_new(f, "allocated_bytes", json_integer(d->fw[k].allocated));
			if (d->fw[k].reserved >= 0)
				json_object_set_new(f, "reserved_bytes",
						    json_integer(d->fw[k].reserved));
			json_object_set_new(fws, names_fw[d->fw[k].fw], f);
		}
		if (d->nfw)
			json_object_set_new(e, "frameworks", fws);
		else
			json_decref(fws);
		/* the context line may be negative (NVML's figure older or
		 * lower than gpuspy's); the others are -1 when unknown */
		for (size_t k = 0; k < sizeof(m) / sizeof(m[0]); k++)
			if (m[k].v >= 0 || (k == 5 && d->nvml >= 0))
				json_object_set_new(e, m[k].key, json_integer(m[k].v));
		if (d->fw_age_s >= 0)
			json_object_set_new(e, "frameworks_age_s", json_real(d->fw_age_s));
		json_array_append_new(a, e);
	}
	json_object_set_new(o, "ledger", a);
	free(l);
}

/* {"ID": N}: which report site (its number, "#N") each of process I's own
 * sites went into: how its history.jsonl's and snapshots' "site" ids
 * read in the report. */
static json_t *site_numbers_json(const struct rd_report *r, size_t i)
{
	const struct rd_process *p = r->procs[i];
	json_t *o = json_object();
	char id[24];

	for (size_t k = 0; k < p->nsites; k++) {
		if (!r->site_of[i][k])
			continue;
		snprintf(id, sizeof(id), "%" PRId64, p->sites[k].id);
		json_object_set_new(o, id, json_integer((json_int_t)r->site_of[i][k]->number));
	}
	return o;
}

static json_t *process_json(const struct rd_report *r, size_t index)
{
	const struct rd_process *p = r->procs[index];
	json_t *o = json_object();
	json_t *cmd = json_array();

	json_object_set_new(o, "path", json_string(p->path));
	json_object_set_new(o, "host", json_string(p->host));
	json_object_set_new(o, "pid", json_integer(p->pid));
	if (p->rank >= 0)
		json_object_set_new(o, "rank", json_integer(p->rank));
	for (size_t i = 0; i < p->ncommand; i++)
		json_array_append_new(cmd, json_string(p->command[i]));
	json_object_set_new(o, "command", cmd);
	json_object_set_new(o, "complete", json_boolean(p->complete));
	json_object_set_new(
		o, "leaked",
		counts_json("bytes", p->leaked_bytes, "allocations", p->leaked_allocations));
	json_object_set_new(o, "peak", counts_json("bytes", p->peak_bytes, NULL, 0));
	{
		/* the frameworks' own allocated counters the rule flagged, as
		 * the process recorded them */
		json_t *fg = json_array();

		for (int f = 0; f < GS_FW_COUNT; f++)
			for (int q = 0; q < GS_FW_PLACES; q++) {
				const struct rd_verdict *v = &p->frameworks.growth[f][q];
				json_t *e;
				char place[8];

				if (!v->present)
					continue;
				e = json_object();
				snprintf(place, sizeof(place), "%d", q);
				json_object_set_new(e, "framework", json_string(names_fw[f]));
				json_object_set_new(e, "place",
						    json_string(q == GS_FW_HOST ? "host" : place));
				json_object_set_new(e, "counter", json_string("allocated"));
				verdict_members(e, true, v->state, v->shape, v->since_s,
						v->rate_bps, v->until_s);
				if (p->frameworks.growth_site[f][q] >= 0)
					json_object_set_new(
						e, "site",
						json_integer(p->frameworks.growth_site[f][q]));
				json_array_append_new(fg, e);
			}
		if (json_array_size(fg))
			json_object_set_new(o, "framework_growth", fg);
		else
			json_decref(fg);
	}
	if (p->limit_bytes)
		json_object_set_new(o, "limit_bytes", json_integer(p->limit_bytes));
	if (p->partial) {
		json_object_set_new(o, "partial", json_true());
		json_object_set_new(o, "report", json_string(p->file));
	}
	if (rd_state_not_exited(p->state))
		state_json(o, p->state, p->image, p->signal, p->run_end_time, p->end_time);
	if (p->outside.present) {
		json_t *gpus = json_array();

		for (size_t i = 0; i < p->outside.ngpus; i++) {
			const struct rd_outside_gpu *g = &p->outside.gpus[i];
			json_t *gj = json_object(), *procs = json_array();

			json_object_set_new(gj, "index", json_integer(g->index));
			json_object_set_new(gj, "total_bytes", json_integer(g->total_bytes));
			json_object_set_new(gj, "used_bytes", json_integer(g->used_bytes));
			for (size_t k = 0; k < g->nprocs; k++)
				json_array_append_new(procs, counts_json("pid", g->procs[k].pid,
									 "used_bytes",
									 g->procs[k].used_bytes));
			json_object_set_new(gj, "processes", procs);
			json_array_append_new(gpus, gj);
		}
		json_object_set_new(o, "outside", gpus);
	}
	ledger_json(o, p);
	if (p->ncalls) {
		json_t *calls = json_object();

		for (size_t i = 0; i < p->ncalls; i++)
			json_object_set_new(calls, p->calls[i].name,
					    json_integer(p->calls[i].value));
		json_object_set_new(o, "calls", calls);
	}
	if (p->graph.present)
		json_object_set_new(o, "graph", graph_json(&p->graph));
	if (p->python.present) {
		json_t *py = json_object();

		json_object_set_new(py, "version", json_string(p->python.version));
		json_object_set_new(py, "supported", json_boolean(p->python.supported));
		if (p->python.note)
			json_object_set_new(py, "note", json_string(p->python.note));
		json_object_set_new(o, "python", py);
	}
	json_object_set_new(o, "site_numbers", site_numbers_json(r, index));
	return o;
}

static json_t *oom_site_json(const struct rd_report_site *s)
{
	json_t *o = json_object();
	ssize_t headline = merge_site_headline(s);

	json_object_set_new(o, "key", key_json(s->key));
	json_object_set_new(o, "name", json_string(merge_site_name(s)));
	if (s->library)
		json_object_set_new(o, "library", json_string(s->library));
	if (s->pool)
		json_object_set_new(o, "pool", json_string(s->pool));
	json_object_set_new(o, "live_bytes", json_integer(s->c.live_bytes));
	if (headline >= 0)
		json_object_set_new(o, "headline", frame_json(&s->frames[headline]));
	return o;
}

/* A figure of the verdict, when it is known (-1: not). */
static void set_known(json_t *o, const char *key, int64_t v)
{
	if (v >= 0)
		json_object_set_new(o, key, json_integer(v));
}

/* The event's verdict (docs/format.md, "verdict"). */
static json_t *verdict_json(const struct rd_report_oom *ro)
{
	const struct rd_oom_verdict *vd = &ro->verdict;
	const struct oom_facts *f = &vd->facts;
	const struct oom_verdict *v = &vd->v;
	const struct rd_oom *ev = ro->ev;
	json_t *o = json_object();

	json_object_set_new(o, "class", json_string(oom_class_name(v->cls)));
	json_object_set_new(o, "line", json_string(vd->line));
	set_known(o, "requested_bytes", f->requested);
	set_known(o, "card_bytes", v->card);
	set_known(o, "available_bytes", v->available);
	set_known(o, "missing_bytes", v->missing);
	set_known(o, "held_bytes", v->held);
	set_known(o, "fits_bytes", v->fits);
	json_object_set_new(o, "capped", json_boolean(f->capped));
	if (f->limit > 0)
		json_object_set_new(o, "limit_bytes", json_integer(f->limit));
	if (f->pool) {
		json_object_set_new(o, "pool", json_string(f->pool));
		json_object_set_new(o, "pool_bytes", json_integer(f->pool_bytes));
		json_object_set_new(o, "pool_may_retry", json_boolean(v->pool_may_retry));
	}
	if (ev->torch) {
		json_object_set_new(o, "pool_requested_bytes", json_integer(f->pool_request));
		json_object_set_new(o, "pool_allocated_bytes", json_integer(f->pool_allocated));
		json_object_set_new(o, "pool_reserved_bytes", json_integer(f->pool_reserved));
		set_known(o, "pool_slack_bytes", v->slack);
		set_known(o, "pool_largest_free_bytes", f->pool_largest_free);
	}
	set_known(o, "outside_bytes", v->outside);
	if (f->library) {
		json_object_set_new(o, "library", json_string(f->library));
		json_object_set_new(o, "library_bytes", json_integer(f->library_bytes));
	}
	if (f->graph_bytes > 0)
		json_object_set_new(o, "graph_bytes", json_integer(f->graph_bytes));
	if (f->others_bytes >= 0) {
		json_t *list = json_array();

		json_object_set_new(o, "others_bytes", json_integer(f->others_bytes));
		for (size_t i = 0; i < ev->nothers; i++) {
			json_t *x = counts_json("pid", ev->others[i].pid, NULL, 0);

			if (ev->others[i].name)
				json_object_set_new(x, "name", json_string(ev->others[i].name));
			json_object_set_new(x, "used_bytes",
					    json_integer(ev->others[i].used_bytes));
			json_array_append_new(list, x);
		}
		json_object_set_new(o, "other_processes", list);
	}
	if (f->holder) {
		json_t *h = json_object();

		json_object_set_new(h, "name", json_string(f->holder));
		json_object_set_new(h, "bytes", json_integer(f->holder_bytes));
		json_object_set_new(o, "holder", h);
	}
	if (vd->npins) {
		json_t *pins = json_array();

		for (size_t i = 0; i < vd->npins; i++) {
			json_t *x = json_object();

			json_object_set_new(x, "name", json_string(vd->pin_names[i]));
			json_object_set_new(x, "bytes", json_integer(ev->torch->lines[i].bytes));
			json_object_set_new(x, "blocks", json_integer(ev->torch->lines[i].blocks));
			json_array_append_new(pins, x);
		}
		json_object_set_new(o, "pinned_by", pins);
	}
	if (vd->nholders) {
		json_t *held = json_array();

		for (size_t i = 0; i < vd->nholders; i++) {
			json_t *x = json_object();

			json_object_set_new(x, "name", json_string(vd->holder_names[i]));
			json_object_set_new(x, "bytes", json_integer(ev->torch->holders[i].bytes));
			json_object_set_new(x, "blocks",
					    json_integer(ev->torch->holders[i].blocks));
			if (ev->torch->holders[i].role)
				json_object_set_new(x, "role",
						    json_string(ev->torch->holders[i].role));
			json_array_append_new(held, x);
		}
		json_object_set_new(o, "held_by", held);
	}
	json_object_set_new(o, "expandable_segments", json_boolean(f->expandable));
	return o;
}

static json_t *oom_json(const struct rd_report_oom *ro)
{
	const struct rd_oom *ev = ro->ev;
	json_t *o = json_object();
	json_t *top = json_array();
	ssize_t headline = ro->requested ? merge_site_headline(ro->requested) : -1;

	json_object_set_new(o, "process", json_string(ro->proc->path));
	json_object_set_new(o, "pid", json_integer(ro->proc->pid));
	json_object_set_new(o, "number", json_integer(ev->number));
	json_object_set_new(o, "time", json_real(ev->time));
	json_object_set_new(o, "api", json_string(ev->api));
	json_object_set_new(o, "kind", json_string(names_kind(ev->kind)));
	json_object_set_new(o, "requested_bytes", json_integer(ev->requested_bytes));
	json_object_set_new(o, "device", json_integer(ev->device));
	json_object_set_new(o, "live_bytes", json_integer(ev->live_bytes));
	json_object_set_new(o, "free_bytes", json_integer(ev->free_bytes));
	json_object_set_new(o, "total_bytes", json_integer(ev->total_bytes));
	if (ro->untracked_bytes >= 0)
		json_object_set_new(o, "untracked_bytes", json_integer(ro->untracked_bytes));
	if (ro->requested)
		json_object_set_new(o, "requested_by_name",
				    json_string(merge_site_name(ro->requested)));
	if (headline >= 0)
		json_object_set_new(o, "requested_by",
				    frame_json(&ro->requested->frames[headline]));
	for (size_t i = 0; i < ro->ntop; i++)
		json_array_append_new(top, oom_site_json(ro->top[i]));
	json_object_set_new(o, "top_sites", top);
	if (ro->verdict.line)
		json_object_set_new(o, "verdict", verdict_json(ro));
	return o;
}

/* report --at LABEL, --peak: {"state", "label", "processes",
 * "live_bytes", "sites": [{"number", "name", "live_bytes"}]}, most first;
 * NULL (no such member) on out-of-memory. */
/* "wrong_device" (wrong_device.h): each rank's memory on a device not its
 * own, with its verdict line and the sites that allocated it. */
static json_t *wrong_json(const struct rd_report *r)
{
	json_t *a = json_array();
	char line[REPORT_NAME_SIZE + 160];

	for (size_t i = 0; a && i < r->wrong->n; i++) {
		const struct rd_wrong *w = &r->wrong->items[i];
		const struct rd_process *p = r->procs[w->proc];
		json_t *o = json_object(), *sites = json_array();

		json_object_set_new(o, "process", json_integer((json_int_t)w->proc));
		json_object_set_new(o, "pid", json_integer(p->pid));
		if (p->rank >= 0)
			json_object_set_new(o, "rank", json_integer(p->rank));
		if (w->local_rank >= 0)
			json_object_set_new(o, "local_rank", json_integer(w->local_rank));
		json_object_set_new(o, "own_device", json_integer(w->own));
		json_object_set_new(o, "device", json_integer(w->fig.device));
		json_object_set_new(o, "bytes", json_integer(w->bytes));
		json_object_set_new(o, "allocations_bytes", json_integer(w->fig.allocations));
		json_object_set_new(o, "context_bytes", json_integer(w->fig.context));
		json_object_set_new(o, "nvml", json_boolean(w->fig.nvml));
		json_object_set_new(o, "what", json_string(rd_wrong_what(w)));
		json_object_set_new(o, "line",
				    json_string(rd_wrong_line(r, w, line, sizeof(line))));
		for (size_t k = 0; sites && k < w->nsites; k++) {
			const struct rd_wrong_site *ws = &w->sites[k];
			json_t *so = json_object();

			json_object_set_new(so, "key", key_json(ws->site->key));
			json_object_set_new(so, "name", json_string(merge_site_name(ws->site)));
			json_object_set_new(so, "api", json_string(ws->site->api));
			if (ws->site->library)
				json_object_set_new(so, "library", json_string(ws->site->library));
			if (ws->line > 0)
				json_object_set_new(so, "line", json_integer(ws->line));
			json_object_set_new(so, "bytes", json_integer(ws->bytes));
			json_object_set_new(so, "allocations", json_integer(ws->allocations));
			json_array_append_new(sites, so);
		}
		if (w->sites_read)
			json_object_set_new(o, "sites", sites);
		else
			json_decref(sites);
		if (w->unsited_bytes > 0)
			json_object_set_new(o, "folded_bytes", json_integer(w->unsited_bytes));
		json_array_append_new(a, o);
	}
	if (a && json_array_size(a) != r->wrong->n) {
		json_decref(a);
		return NULL;
	}
	return a;
}

static bool has_wrong(const struct rd_report *r)
{
	return r->wrong && r->wrong->n > 0;
}

static json_t *moment_json(const struct rd_report *r, size_t top)
{
	const struct rd_stacks *st = r->moment;
	const struct rd_report_site **order;
	json_t *o, *sites;
	int64_t *bytes;
	size_t n;

	if (stacks_by_site(r, st, &bytes, &order, &n) < 0)
		return NULL;
	o = json_pack("{s:s, s:I, s:I}", "state", stacks_state_name(st->state), "processes",
		      (json_int_t)st->processes, "live_bytes", (json_int_t)st->live_bytes);
	if (o && st->state == STACKS_MARK)
		json_object_set_new(o, "label", json_string(st->label));
	sites = json_array();
	for (size_t i = 0; i < n && (!top || i < top); i++)
		json_array_append_new(sites, json_pack("{s:I, s:s, s:I}", "number",
						       (json_int_t)order[i]->number, "name",
						       merge_site_name(order[i]), "live_bytes",
						       (json_int_t)bytes[order[i]->number - 1]));
	json_object_set_new(o, "sites", sites);
	free(bytes);
	free(order);
	return o;
}

/* "limit" (docs/format.md): a run on a smaller card, on purpose.  Whether
 * there is one. */
static bool limit_json(json_t *root, const struct rd_report *r)
{
	int64_t limit = 0, n = 0;
	bool same = true;
	json_t *o;
	char a[32], text[128];

	for (size_t i = 0; i < r->nprocs; i++) {
		if (!r->procs[i]->limit_bytes)
			continue;
		same &= !n || limit == r->procs[i]->limit_bytes;
		limit = r->procs[i]->limit_bytes;
		n++;
	}
	if (!n)
		return false;
	o = counts_json("processes", n, NULL, 0);
	if (same) {
		json_object_set_new(o, "bytes", json_integer(limit));
		snprintf(text, sizeof(text), "capped at %s per device",
			 util_human_size(limit, a, sizeof(a)));
	} else {
		snprintf(text, sizeof(text), "capped at limits that differ between processes");
	}
	json_object_set_new(o, "text", json_string(text));
	json_object_set_new(root, "limit", o);
	return true;
}

json_t *json_report_object(const struct rd_report *r, const struct rd_process_list *list,
			   size_t top)
{
	json_t *root = json_object();
	json_t *procs = json_array();
	json_t *sites = json_array();
	json_t *ooms = json_array();
	json_t *pinned;
	size_t n = top && top < r->nsites ? top : r->nsites;
	bool capped = false;
	int e = 0;

	if (!root || !procs || !sites || !ooms) {
		e = -ENOMEM;
		goto out;
	}
	/* jansson keeps insertion order: the keys come out as in
	 * docs/format.md, the same every time */
	json_object_set_new(root, "format", json_string(GS_FORMAT_REPORT));
	for (size_t i = 0; i < r->nprocs; i++)
		json_array_append_new(procs, process_json(r, i));
	json_object_set(root, "processes", procs);
	{
		/* what the program's own code left, and what the framework
		 * pools' segments hold, said apart */
		json_t *lk =
			counts_json("bytes", r->leaked_bytes, "allocations", r->leaked_allocations);
		json_t *pools = json_object();

		json_object_set_new(lk, "program",
				    counts_json("bytes", r->leaked_bytes - r->pool_held_bytes,
						"allocations",
						r->leaked_allocations - r->pool_held_allocations));
		for (size_t k = 0; classify_pool_label(k); k++)
			if (r->pool_bytes[k])
				json_object_set_new(pools, classify_pool_label(k),
						    json_integer(r->pool_bytes[k]));
		json_object_set_new(lk, "pools",
				    json_pack("{sIsIso}", "bytes", (json_int_t)r->pool_held_bytes,
					      "allocations", (json_int_t)r->pool_held_allocations,
					      "by_pool", pools));
		json_object_set_new(root, "leaked", lk);
	}
	json_object_set_new(root, "peak", counts_json("bytes", r->peak_bytes, NULL, 0));
	if (r->nprocs > 1)
		json_object_set_new(root, "spread", json_spreads_object(r->spread));
	if (r->at_peak) {
		json_t *ap = counts_json("bytes", r->at_peak_bytes, NULL, 0);
		json_t *devs = json_array();

		for (size_t i = 0; i < r->at_peak_ndevices; i++)
			json_array_append_new(
				devs, counts_json("device", r->at_peak_devices[i].device,
						  "live_bytes", r->at_peak_devices[i].live_bytes));
		json_object_set_new(ap, "devices", devs);
		json_object_set_new(root, "at_peak", ap);
	}
	if (r->moment)
		json_object_set_new(root, "moment", moment_json(r, top));
	pinned = counts_json("leaked_bytes", r->pinned_leaked_bytes, "leaked_allocations",
			     r->pinned_leaked_allocations);
	json_object_set_new(pinned, "peak_bytes", json_integer(r->pinned_peak_bytes));
	json_object_set_new(root, "pinned", pinned);
	json_object_set_new(root, "untracked_frees", json_integer(r->untracked_frees));
	capped = limit_json(root, r);
	if (r->folded_sites) {
		json_t *fo =
			counts_json("sites", r->folded_sites, "live_bytes", r->folded_live_bytes);

		json_object_set_new(fo, "live_allocations",
				    json_integer(r->folded_live_allocations));
		json_object_set_new(root, "folded", fo);
	}
	for (size_t i = 0; i < r->nooms; i++)
		json_array_append_new(ooms, oom_json(&r->ooms[i]));
	json_object_set(root, "oom", ooms);
	json_object_set_new(root, "oom_dropped", json_integer(r->oom_dropped));
	if (has_wrong(r))
		json_object_set_new(root, "wrong_device", wrong_json(r));
	if (r->torch.present)
		json_object_set_new(root, "torch", json_torch_object(&r->torch, top));
	for (size_t i = 0; i < n; i++)
		json_array_append_new(sites, site_json(r, r->sites[i]));
	json_object_set(root, "sites", sites);
	if (list->nunreported) {
		json_t *un = json_array();

		for (size_t i = 0; un && i < list->nunreported; i++) {
			const struct rd_unreported *u = &list->unreported[i];
			json_t *o = json_object();

			json_object_set_new(o, "path", json_string(u->path));
			json_object_set_new(o, "host", json_string(u->host));
			json_object_set_new(o, "pid", json_integer(u->pid));
			json_object_set_new(o, "empty", json_boolean(u->empty));
			state_json(o, u->state, u->image, u->signal, -1, -1);
			json_array_append_new(un, o);
		}
		if (json_array_size(un) == list->nunreported)
			json_object_set_new(root, "unreported", un);
		else
			json_decref(un);
	}
	if (r->nunreadable)
		json_object_set_new(root, "unreadable", json_unreadable_array(r));
	/* a part that could not be allocated is simply missing: check the
	 * arrays kept the count they should have */
	if (json_array_size(procs) != r->nprocs || json_array_size(sites) != n ||
	    json_array_size(ooms) != r->nooms ||
	    json_object_size(root) != 9 + (size_t)r->at_peak + (r->nprocs > 1) +
					      (size_t)r->torch.present + (list->nunreported > 0) +
					      (r->folded_sites > 0) + (r->moment != NULL) +
					      (r->nunreadable > 0) + capped + (size_t)has_wrong(r))
		e = -ENOMEM;
out:
	json_decref(procs);
	json_decref(sites);
	json_decref(ooms);
	if (e < 0) {
		json_decref(root);
		return NULL;
	}
	return root;
}

int json_print_report(const struct rd_report *r, const struct rd_process_list *list, FILE *out,
		      size_t top)
{
	json_t *root = json_report_object(r, list, top);
	int e = 0;

	if (!root)
		return -ENOMEM;
	if (json_dumpf(root, out, JSON_INDENT(2)) < 0 || putc('\n', out) == EOF)
		e = -EIO;
	json_decref(root);
	return e;
}

json_t *json_torch_object(const struct rd_report_torch *t, size_t top)
{
	json_t *o, *sites;
	size_t shown = 0;

	if (!t->present)
		return NULL;
	o = json_object();
	sites = json_array();
	if (!o || !sites) {
		json_decref(o);
		json_decref(sites);
		return NULL;
	}
	json_object_set_new(o, "processes", json_integer((json_int_t)t->processes));
	json_object_set_new(o, "final", json_boolean(t->final));
	json_object_set_new(o, "reserved_bytes", json_integer(t->reserved_bytes));
	json_object_set_new(o, "allocated_bytes", json_integer(t->allocated_bytes));
	for (size_t i = 0; i < t->nsites && (!top || shown < top); i++) {
		const struct rd_report_tsite *s = t->sites[i];
		ssize_t h = torch_merge_headline(s);
		json_t *j = json_object(), *frames = json_array();

		shown++;
		json_object_set_new(j, "key", json_string(s->key));
		if (s->name && h >= 0)
			json_object_set_new(j, "name", json_string(s->name));
		json_object_set_new(j, "processes", json_integer(s->processes));
		json_object_set_new(j, "live_bytes", json_integer(s->live_bytes));
		json_object_set_new(j, "live_blocks", json_integer(s->live_blocks));
		json_object_set_new(j, "peak_bytes", json_integer(s->peak_bytes));
		json_object_set_new(j, "growing", json_boolean(s->growing));
		json_object_set_new(j, "stopped", json_boolean(s->stopped));
		if (s->growth.present) {
			json_t *g = json_object();

			verdict_members(g, true, s->growth.state, s->growth.shape,
					s->growth.since_s, s->growth.rate_bps, s->growth.until_s);
			json_object_set_new(j, "growth", g);
		}
		if (s->from_segment) {
			json_object_set_new(j, "source", json_string("segment"));
			json_object_set_new(j, "site", json_integer(s->segment_site));
		}
		if (h >= 0)
			json_object_set_new(j, "headline", json_frame_object(&s->frames[h]));
		for (size_t k = 0; k < s->nframes; k++)
			json_array_append_new(frames, json_frame_object(&s->frames[k]));
		json_object_set_new(j, "frames", frames);
		json_array_append_new(sites, j);
	}
	json_object_set_new(o, "sites", sites);
	return o;
}

/* gpuspy merge */

static json_t *merge_values_json(const int64_t *v, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_integer(v[i]));
	return a;
}

static json_t *merge_process_json(const struct rd_report *r, size_t i)
{
	const struct rd_process *p = r->procs[i];
	json_t *o = json_object();

	json_object_set_new(o, "index", json_integer(i));
	json_object_set_new(o, "path", json_string(p->path));
	json_object_set_new(o, "host", json_string(p->host));
	json_object_set_new(o, "pid", json_integer(p->pid));
	if (p->rank >= 0)
		json_object_set_new(o, "rank", json_integer(p->rank));
	json_object_set_new(o, "complete", json_boolean(p->complete));
	if (p->partial) {
		json_object_set_new(o, "partial", json_true());
		json_object_set_new(o, "report", json_string(p->file));
	}
	if (rd_state_not_exited(p->state))
		state_json(o, p->state, p->image, p->signal, p->run_end_time, p->end_time);
	for (int m = 0; m < REPORT_METRICS; m++)
		json_object_set_new(o, merge_metric_name(m), json_integer(r->totals[m][i]));
	return o;
}

static json_t *merge_site_json(const struct rd_report *r, const struct rd_report_site *s)
{
	json_t *o = json_object();
	ssize_t headline = merge_site_headline(s);

	json_object_set_new(o, "key", key_json(s->key));
	json_object_set_new(o, "name", json_string(merge_site_name(s)));
	json_object_set_new(o, "api", json_string(s->api));
	json_object_set_new(o, "kind", json_string(names_kind(s->kind)));
	if (s->library)
		json_object_set_new(o, "library", json_string(s->library));
	if (s->pool)
		json_object_set_new(o, "pool", json_string(s->pool));
	json_object_set_new(o, "processes", json_integer(s->processes));
	if (headline >= 0)
		json_object_set_new(o, "headline", json_frame_object(&s->frames[headline]));
	for (int m = 0; m < REPORT_METRICS; m++)
		json_object_set_new(o, merge_metric_name(m),
				    merge_values_json(s->per_proc[m], r->nprocs));
	json_object_set_new(o, "spread", json_spreads_object(s->spread));
	return o;
}

/* "per_rank" of gpuspy-merge/1 (wrong_device.h, rd_ranks). */
static json_t *ranks_json(const struct rd_ranks *k, size_t nprocs)
{
	static const char *const keys[RD_RANK_FIGURES] = { "own_device_bytes", "library_bytes",
							   "elsewhere_bytes" };
	json_t *o = json_object(), *procs = json_array(), *spread = json_object();

	for (size_t i = 0; procs && i < nprocs; i++) {
		json_t *p = json_object();

		json_object_set_new(p, "index", json_integer((json_int_t)i));
		if (k->own[i] >= 0)
			json_object_set_new(p, "own_device", json_integer(k->own[i]));
		for (int f = 0; f < RD_RANK_FIGURES; f++)
			if (k->v[f][i] >= 0)
				json_object_set_new(p, keys[f], json_integer(k->v[f][i]));
		json_array_append_new(procs, p);
	}
	for (int f = 0; spread && f < RD_RANK_FIGURES; f++) {
		const struct rd_rank_spread *sp = &k->spread[f];
		json_t *s = json_object();

		json_object_set_new(s, "min", json_integer(sp->min));
		json_object_set_new(s, "median", json_integer(sp->median));
		json_object_set_new(s, "max", json_integer(sp->max));
		json_object_set_new(s, "outlier",
				    sp->outlier >= 0 ? json_integer(sp->outlier) : json_null());
		json_object_set_new(spread, keys[f], s);
	}
	json_object_set_new(o, "processes", procs);
	json_object_set_new(o, "spread", spread);
	if (!o || json_object_size(o) != 2 || json_array_size(procs) != nprocs) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static bool has_ranks(const struct rd_report *r)
{
	return r->ranks && r->ranks->present;
}

int json_print_merge(FILE *out, const struct rd_report *r, struct rd_report_site **order,
		     size_t top)
{
	json_t *root = json_object();
	json_t *procs = json_array();
	json_t *sites = json_array();
	size_t n = top && top < r->nsites ? top : r->nsites;
	int e = 0;

	if (!root || !procs || !sites) {
		e = -ENOMEM;
		goto out;
	}
	/* jansson keeps insertion order: the keys come out as in
	 * docs/format.md, the same every time */
	json_object_set_new(root, "format", json_string(GS_FORMAT_MERGE));
	for (size_t i = 0; i < r->nprocs; i++)
		json_array_append_new(procs, merge_process_json(r, i));
	json_object_set(root, "processes", procs);
	if (r->nunreadable)
		json_object_set_new(root, "unreadable", json_unreadable_array(r));
	json_object_set_new(root, "spread", json_spreads_object(r->spread));
	if (has_ranks(r))
		json_object_set_new(root, "per_rank", ranks_json(r->ranks, r->nprocs));
	if (has_wrong(r))
		json_object_set_new(root, "wrong_device", wrong_json(r));
	for (size_t i = 0; i < n; i++)
		json_array_append_new(sites, merge_site_json(r, order[i]));
	json_object_set(root, "sites", sites);
	/* a part that could not be allocated is simply missing: check the
	 * arrays kept the count they should have */
	if (json_array_size(procs) != r->nprocs || json_array_size(sites) != n ||
	    json_object_size(root) != 4 + (size_t)(r->nunreadable > 0) + (size_t)has_wrong(r) +
					      (size_t)has_ranks(r)) {
		e = -ENOMEM;
		goto out;
	}
	if (json_dumpf(root, out, JSON_INDENT(2)) < 0 || putc('\n', out) == EOF)
		e = -EIO;
out:
	json_decref(procs);
	json_decref(sites);
	json_decref(root);
	return e;
}

/* gpuspy diff */

static json_t *pair_json(int64_t o, int64_t n)
{
	return json_pack("{sIsIsI}", "old", (json_int_t)o, "new", (json_int_t)n, "delta",
			 (json_int_t)diff_sub_sat(n, o));
}

int json_print_diff(const struct diff *d, const struct diff_setting_row *set, size_t nset,
		    const struct diff_total *tot, size_t ntot, FILE *out)
{
	const struct rd_report *ro = &d->side[0].rep, *rn = &d->side[1].rep;
	json_t *root = json_object(), *sides = json_object(), *settings = json_array();
	json_t *totals = json_object(), *devs = json_array(), *sites = json_array();
	int e = 0;

	if (!root || !sides || !settings || !totals || !devs || !sites) {
		e = -ENOMEM;
		goto out;
	}
	json_object_set_new(root, "format", json_string(GS_FORMAT_DIFF));
	for (int k = 0; k < 2; k++) {
		const struct diff_side *s = &d->side[k];
		json_t *paths = json_array(), *one;

		for (size_t i = 0; paths && i < s->npaths; i++)
			json_array_append_new(paths, json_string(s->paths[i]));
		one = json_pack("{sosI}", "paths", paths, "processes", (json_int_t)s->list.n);
		if (one && d->at_label)
			json_object_set_new(one, "marked_processes",
					    json_integer((json_int_t)s->marked));
		if (one && s->rep.nunreadable) {
			json_t *un = json_unreadable_array(&s->rep);

			if (!un || json_object_set_new(one, "unreadable", un) < 0)
				e = -ENOMEM;
		}
		json_object_set_new(root, k ? "new" : "old", one);
	}
	if (e < 0)
		goto out;
	for (size_t i = 0; i < nset; i++) {
		json_t *o = json_object();

		json_object_set_new(o, "name", json_string(set[i].name));
		for (int k = 0; k < 2; k++)
			json_object_set_new(o, k ? "new" : "old",
					    set[i].v[k].value ?
						    (set[i].v[k].distinct > 1 ?
							     json_string("(several values)") :
							     json_string(set[i].v[k].value)) :
						    json_null());
		json_object_set_new(o, "differs", json_boolean(set[i].differs));
		json_array_append_new(settings, o);
	}
	json_object_set(root, "settings", settings);
	json_object_set_new(root, "threshold", json_integer(d->threshold));
	if (d->at_label)
		json_object_set_new(root, "at", json_string(d->at_label));
	json_object_set_new(totals, "leaked", pair_json(ro->leaked_bytes, rn->leaked_bytes));
	json_object_set_new(totals, "peak", pair_json(ro->peak_bytes, rn->peak_bytes));
	{
		int64_t a[2] = { 0, 0 };

		for (int k = 0; k < 2; k++) {
			const struct rd_report *r = &d->side[k].rep;

			for (size_t i = 0; i < r->nsites; i++)
				util_add_sat(&a[k], r->sites[i]->c.allocations);
		}
		json_object_set_new(totals, "allocations", pair_json(a[0], a[1]));
	}
	if (d->at_label)
		json_object_set_new(totals, "at",
				    pair_json(d->side[0].at_total, d->side[1].at_total));
	for (size_t i = 0; i < ntot; i++)
		json_array_append_new(
			devs,
			json_pack("{sIsssI sIsI}", "device", (json_int_t)tot[i].device, "what",
				  strcmp(tot[i].name, "at peak") == 0 ? "at_peak" : "live_at_exit",
				  "old", (json_int_t)tot[i].v[0], "new", (json_int_t)tot[i].v[1],
				  "delta", (json_int_t)diff_sub_sat(tot[i].v[1], tot[i].v[0])));
	json_object_set(totals, "devices", devs);
	json_object_set(root, "totals", totals);
	for (size_t i = 0; i < d->nrows; i++) {
		const struct diff_row *w = &d->rows[i];
		const struct rd_report_site *s = diff_row_site(w);
		const struct rd_report_site *o = w->site[0], *n = w->site[1];
		ssize_t h = merge_site_headline(s);
		json_t *j = json_object();

		json_object_set_new(j, "key", key_json(w->key));
		json_object_set_new(j, "name", json_string(merge_site_name(s)));
		json_object_set_new(j, "status", json_string(diff_status_name(w->status)));
		json_object_set_new(j, "api", json_string(s->api));
		json_object_set_new(j, "kind", json_string(names_kind(s->kind)));
		if (h >= 0)
			json_object_set_new(j, "headline", json_frame_object(&s->frames[h]));
		if (s->library)
			json_object_set_new(j, "library", json_string(s->library));
		if (s->pool)
			json_object_set_new(j, "pool", json_string(s->pool));
		json_object_set_new(j, "leaked",
				    pair_json(o ? o->c.live_bytes : 0, n ? n->c.live_bytes : 0));
		json_object_set_new(j, "peak",
				    pair_json(o ? o->c.peak_bytes : 0, n ? n->c.peak_bytes : 0));
		json_object_set_new(j, "allocations",
				    pair_json(o ? o->c.allocations : 0, n ? n->c.allocations : 0));
		if (d->at_label)
			json_object_set_new(j, "at", pair_json(w->at[0], w->at[1]));
		{
			double rt[2];
			bool known[2] = { growth_rate_of(ro, o, &rt[0]),
					  growth_rate_of(rn, n, &rt[1]) };

			/* where either side grows (or grew, then stopped: 0) and
			 * its rate is known */
			if (((o && (o->growing || o->stopped)) ||
			     (n && (n->growing || n->stopped))) &&
			    (known[0] || known[1]))
				json_object_set_new(
					j, "growth_rate_bytes_per_s",
					json_pack("{soso}", "old",
						  known[0] ? json_real(rt[0]) : json_null(), "new",
						  known[1] ? json_real(rt[1]) : json_null()));
		}
		json_array_append_new(sites, j);
	}
	json_object_set(root, "sites", sites);
	if (d->torch) {
		json_t *ts = json_array();

		for (size_t i = 0; ts && i < d->ntrows; i++) {
			const struct diff_trow *w = &d->trows[i];
			const struct rd_report_tsite *t = w->site[1] ? w->site[1] : w->site[0];
			ssize_t h = torch_merge_headline(t);
			json_t *j = json_object();

			json_object_set_new(j, "key", json_string(w->key));
			if (t->name && h >= 0)
				json_object_set_new(j, "name", json_string(t->name));
			json_object_set_new(j, "status", json_string(diff_status_name(w->status)));
			if (h >= 0)
				json_object_set_new(j, "headline",
						    json_frame_object(&t->frames[h]));
			json_object_set_new(j, "live", pair_json(w->live[0], w->live[1]));
			json_object_set_new(j, "peak", pair_json(w->peak[0], w->peak[1]));
			json_array_append_new(ts, j);
		}
		json_object_set_new(root, "torch_sites", ts);
	}
	if (d->fail_limit >= 0)
		json_object_set_new(root, "fail_on_growth",
				    json_pack("{sIsbsI}", "limit", (json_int_t)d->fail_limit,
					      "failed", d->failed > 0, "sites",
					      (json_int_t)d->failed));
	if (d->budget) {
		json_t *over = json_array();

		for (size_t i = 0; i < d->nrows; i++) {
			const struct diff_row *w = &d->rows[i];

			if (!w->over_budget)
				continue;
			json_array_append_new(over,
					      json_pack("{sosssIsIsIss}", "key", key_json(w->key),
							"name", merge_site_name(w->site[1]), "peak",
							(json_int_t)w->budget_peak, "budget",
							(json_int_t)w->budget->bytes, "line",
							(json_int_t)w->budget->line, "pattern",
							w->budget->pattern));
		}
		json_object_set_new(root, "budget",
				    json_pack("{sssbsIso}", "file", d->budget->file, "failed",
					      d->over_budget > 0, "sites",
					      (json_int_t)d->over_budget, "over", over));
	}
	if (json_dumpf(root, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER) < 0 || putc('\n', out) < 0)
		e = -EIO;
out:
	json_decref(sites);
	json_decref(devs);
	json_decref(totals);
	json_decref(settings);
	json_decref(sides);
	json_decref(root);
	return e;
}

json_t *json_unreadable_array(const struct rd_report *r)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < r->nunreadable; i++)
		json_array_append_new(a, json_pack("{ssss}", "path", r->unreadable[i].path,
						   "reason", r->unreadable[i].reason));
	if (a && json_array_size(a) != r->nunreadable) {
		json_decref(a);
		return NULL;
	}
	return a;
}
