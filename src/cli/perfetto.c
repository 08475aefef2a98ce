/* SPDX-License-Identifier: MIT */
/*
 * gpuspy report --format perfetto: each process's timeline (timeline.h) as
 * Chrome trace-event JSON, which the Perfetto UI and chrome://tracing open.
 *
 * Each process is a "process" of the trace (its own track group), named by
 * rank and host-pid; its life a slice; each track of live bytes a counter
 * ("C", one numeric argument, "bytes"); marks, on-demand snapshots, the
 * peak and out-of-memory events instant events ("i", process scope).
 * Times are microseconds from the earliest moment of any process
 * ("otherData".start_time gives it in seconds since the epoch).  Events
 * of a track are in order of time.
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "print.h"
#include "util.h"

struct perfetto {
	FILE *f;
	bool first;
	bool oom;
	double start;
};

/* Add EV (stolen) to the trace, one event a line. */
static void perfetto_emit(struct perfetto *pf, json_t *ev)
{
	char *s = ev ? json_dumps(ev, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;

	if (!s) {
		pf->oom = true;
	} else {
		fputs(pf->first ? "\n" : ",\n", pf->f);
		fputs(s, pf->f);
		pf->first = false;
	}
	free(s);
	json_decref(ev);
}

static json_int_t perfetto_ts(const struct perfetto *pf, double t)
{
	double us = (t - pf->start) * 1e6;

	return us > 0 ? (json_int_t)(us + 0.5) : 0;
}

static json_t *perfetto_event(const char *ph, const char *name, int64_t pid, json_int_t ts)
{
	return json_pack("{s:s, s:s?, s:I, s:I, s:I}", "ph", ph, "name", name, "ts", ts, "pid",
			 (json_int_t)pid, "tid", (json_int_t)0);
}

/* A counter's name: what it counts; a site's, "#N NAME" as the text
 * report lists it. */
static void perfetto_track_name(const struct rd_report *r, const struct rd_tl_track *t, char *buf,
				size_t size)
{
	const struct rd_report_site *s = t->site;

	switch (t->kind) {
	case RD_HIST_DEVICE:
		if (t->key >= 0)
			snprintf(buf, size, "GPU memory, device %" PRId64, t->key);
		else
			snprintf(buf, size, "GPU memory, unknown device");
		return;
	case RD_HIST_OTHER:
		snprintf(buf, size, "other sites");
		return;
	case RD_HIST_OUTSIDE:
		snprintf(buf, size, "NVML: used by the process, GPU %" PRId64, t->key);
		return;
	case RD_HIST_POOL_RESERVED:
		snprintf(buf, size, "PyTorch pool reserved, device %" PRId64, t->key);
		return;
	case RD_HIST_POOL_ALLOCATED:
		snprintf(buf, size, "PyTorch pool allocated, device %" PRId64, t->key);
		return;
	case RD_HIST_SITE:
	default:
		break;
	}
	/* the report's number and its one name */
	if (s)
		snprintf(buf, size, "#%zu %s", s->number, merge_site_name(s));
	else
		snprintf(buf, size, "site ?");
	/* BUF's own end, where SIZE cut it: the trace is JSON, UTF-8 */
	util_utf8_fix(buf);
	util_sanitize(buf);
}

static void perfetto_instant(struct perfetto *pf, int64_t pid, const struct rd_tl_event *ev)
{
	char name[320], size[32];
	json_t *j, *args;

	switch (ev->kind) {
	case RD_TL_MARK:
		snprintf(name, sizeof(name), "mark: %.*s", util_utf8_prefix(ev->label, 200),
			 ev->label);
		args = json_pack("{s:s, s:I}", "label", ev->label, "live_bytes",
				 (json_int_t)ev->bytes);
		break;
	case RD_TL_SNAPSHOT:
		snprintf(name, sizeof(name), "snapshot %" PRId64 "%s%.*s", ev->number,
			 ev->label ? ": " : "", util_utf8_prefix(ev->label ? ev->label : "", 200),
			 ev->label ? ev->label : "");
		args = json_pack("{s:I, s:s?}", "number", (json_int_t)ev->number, "label",
				 ev->label);
		break;
	case RD_TL_OOM:
		snprintf(name, sizeof(name), "out of memory %" PRId64 ": %s of %s", ev->number,
			 ev->label, util_human_size(ev->bytes, size, sizeof(size)));
		args = json_pack("{s:I, s:s, s:I, s:I}", "number", (json_int_t)ev->number, "api",
				 ev->label, "requested_bytes", (json_int_t)ev->bytes, "device",
				 (json_int_t)ev->device);
		break;
	case RD_TL_PEAK:
	default:
		snprintf(name, sizeof(name), "peak: %s",
			 util_human_size(ev->bytes, size, sizeof(size)));
		args = json_pack("{s:I}", "live_bytes", (json_int_t)ev->bytes);
		break;
	}
	util_sanitize(name);
	j = perfetto_event("i", name, pid, perfetto_ts(pf, ev->t));
	if (!j || !args || json_object_set_new(j, "s", json_string("p")) < 0 ||
	    json_object_set_new(j, "args", args) < 0) {
		json_decref(j);
		pf->oom = true;
		return;
	}
	perfetto_emit(pf, j);
}

/* Process I's pid in the trace: its own, unless another process of the
 * report (on another host) has it too. */
static int64_t perfetto_pid(const struct rd_report *r, size_t i)
{
	for (size_t k = 0; k < r->nprocs; k++)
		if (k != i && r->procs[k]->pid == r->procs[i]->pid)
			return (int64_t)i + 1;
	return r->procs[i]->pid;
}

static void perfetto_process(struct perfetto *pf, const struct rd_report *r, size_t i,
			     const struct rd_tl_process *tp)
{
	const struct rd_process *p = r->procs[i];
	int64_t pid = perfetto_pid(r, i);
	char name[REPORT_NAME_SIZE + 64], who[REPORT_NAME_SIZE];
	json_t *j;

	snprintf(name, sizeof(name), "%s (%s-%" PRId64 ")",
		 merge_process_name(r, i, who, sizeof(who)), p->host, p->pid);
	util_sanitize(name);
	j = perfetto_event("M", "process_name", pid, 0);
	json_object_set_new(j, "args", json_pack("{s:s}", "name", name));
	perfetto_emit(pf, j);
	j = perfetto_event("M", "process_sort_index", pid, 0);
	json_object_set_new(j, "args",
			    json_pack("{s:I}", "sort_index",
				      (json_int_t)(p->rank >= 0 ? p->rank : (int64_t)i)));
	perfetto_emit(pf, j);
	if (p->start_time > 0 && p->end_time >= p->start_time) {
		const char *how = p->state == RD_STATE_EXITED	? "exited" :
				  rd_state_not_exited(p->state) ? "did not exit: its last report" :
								  "report";

		j = perfetto_event("X", "process", pid, perfetto_ts(pf, p->start_time));
		json_object_set_new(j, "dur",
				    json_integer(perfetto_ts(pf, p->end_time) -
						 perfetto_ts(pf, p->start_time)));
		json_object_set_new(j, "args",
				    json_pack("{s:s, s:s}", "file", p->file, "end", how));
		perfetto_emit(pf, j);
	}
	for (size_t k = 0; k < tp->ntracks; k++) {
		const struct rd_tl_track *t = &tp->tracks[k];
		char tname[400];

		perfetto_track_name(r, t, tname, sizeof(tname));
		for (size_t n = 0; n < t->n; n++) {
			j = perfetto_event("C", tname, pid, perfetto_ts(pf, t->points[n].t));
			if (j)
				json_object_set_new(
					j, "args",
					json_pack("{s:I}", "bytes", (json_int_t)t->points[n].v));
			perfetto_emit(pf, j);
		}
	}
	for (size_t k = 0; k < tp->nevents; k++)
		perfetto_instant(pf, pid, &tp->events[k]);
}

int perfetto_print(const struct rd_report *r, const struct rd_timeline *tl, FILE *out)
{
	struct perfetto pf = { .first = true, .start = tl->start };
	char *buf = NULL;
	size_t len = 0;
	int e = 0;

	pf.f = open_memstream(&buf, &len);
	if (!pf.f)
		return -ENOMEM;
	fputs("{\"traceEvents\":[", pf.f);
	for (size_t i = 0; i < r->nprocs && !pf.oom; i++)
		perfetto_process(&pf, r, i, &tl->procs[i]);
	fprintf(pf.f,
		"\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":{\"generator\":\"gpuspy report\","
		"\"start_time\":%.6f}}\n",
		tl->start);
	if (fclose(pf.f) != 0 || pf.oom)
		e = -ENOMEM;
	else if (fwrite(buf, 1, len, out) != len)
		e = -EIO;
	free(buf);
	return e;
}
