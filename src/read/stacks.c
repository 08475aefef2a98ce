/* SPDX-License-Identifier: MIT */
/* The live memory of a report by call stack, at exit, at the peak or at a
 * mark (stacks.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stacks.h"
#include "util.h"

const char *stacks_state_name(enum stacks_state state)
{
	switch (state) {
	case STACKS_PEAK:
		return "peak";
	case STACKS_MARK:
		return "mark";
	case STACKS_EXIT:
	default:
		return "exit";
	}
}

/* The last mark LABEL of P, or NULL: the moment gpuspy diff --at compares. */
static const struct rd_mark *stacks_find_mark(const struct rd_process *p, const char *label)
{
	for (size_t i = p->nmarks; i-- > 0;)
		if (strcmp(p->marks[i].label, label) == 0)
			return &p->marks[i];
	return NULL;
}

/* The one device ordinal that holds P's GPU memory, in its devices at the
 * file's moment and in its peak copy; -1 when they name several or none. */
static int64_t stacks_process_device(const struct rd_process *p)
{
	int64_t dev = -1;
	bool several = false;

	for (size_t i = 0; i < p->ndevices + p->at_peak.ndevices; i++) {
		int64_t d = i < p->ndevices ? p->devices[i].device :
					      p->at_peak.devices[i - p->ndevices].device;

		/* memory on an unknown device, or on a second one */
		if (d < 0 || (dev >= 0 && d != dev))
			several = true;
		else
			dev = d;
	}
	return several ? -1 : dev;
}

static int stacks_add(struct rd_stacks *s, size_t *cap, const struct rd_stack_sample *x)
{
	if (s->n == *cap) {
		size_t ncap = *cap ? 2 * *cap : 64;
		struct rd_stack_sample *n = reallocarray(s->samples, ncap, sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->samples = n;
		*cap = ncap;
	}
	s->samples[s->n++] = *x;
	util_add_sat(&s->live_bytes, x->live_bytes);
	if (x->live_objects < 0)
		s->live_objects = -1;
	else if (s->live_objects >= 0)
		util_add_sat(&s->live_objects, x->live_objects);
	return 0;
}

/* Live bytes of P's site I at the moment: from the copy BYTES (NULL: at
 * the file's moment). */
static int stacks_process(const struct rd_report *r, size_t pi, const int64_t *bytes,
			  struct rd_stacks *s, size_t *cap)
{
	const struct rd_process *p = r->procs[pi];
	int64_t dev = stacks_process_device(p);

	for (size_t i = 0; i < p->nsites; i++) {
		const struct rd_site *ps = &p->sites[i];
		struct rd_stack_sample x = {
			.proc = pi,
			.site = r->site_of[pi][i],
			.line = r->line_of[pi][i],
			.device = dev,
			.live_bytes = bytes ? bytes[i] : ps->c.live_bytes,
			.live_objects = bytes ? -1 : ps->c.live_allocations,
			.alloc_bytes = ps->c.allocated_bytes,
			.allocations = ps->c.allocations,
		};

		if (ps->kind == GS_KIND_PINNED || !x.site ||
		    (x.live_bytes <= 0 && x.allocations <= 0))
			continue;
		if (stacks_add(s, cap, &x) < 0)
			return -ENOMEM;
	}
	return 0;
}

int stacks_build(const struct rd_report *r, enum stacks_state state, const char *label,
		 struct rd_stacks *out, struct rd_error *err)
{
	size_t cap = 0;
	int e = 0;

	memset(out, 0, sizeof(*out));
	out->state = state;
	out->label = label;
	out->time = -1;
	for (size_t pi = 0; pi < r->nprocs && e == 0; pi++) {
		const struct rd_process *p = r->procs[pi];
		const struct rd_peak_site *ps = NULL;
		size_t nps = 0;
		double t = p->end_time;
		int64_t *bytes = NULL;

		if (state == STACKS_PEAK) {
			if (!p->at_peak.present)
				continue;
			ps = p->at_peak.sites;
			nps = p->at_peak.nsites;
			t = p->at_peak.time;
		} else if (state == STACKS_MARK) {
			const struct rd_mark *m = stacks_find_mark(p, label);

			if (!m)
				continue;
			ps = m->sites;
			nps = m->nsites;
			t = m->time;
		}
		if (state != STACKS_EXIT) {
			bytes = calloc(p->nsites + 1, sizeof(*bytes));
			if (!bytes)
				return stacks_clear(out), -ENOMEM;
			for (size_t k = 0; k < nps; k++)
				util_add_sat(&bytes[ps[k].index], ps[k].live_bytes);
		}
		out->processes++;
		if (t > out->time)
			out->time = t;
		e = stacks_process(r, pi, bytes, out, &cap);
		free(bytes);
	}
	if (e == 0 && out->processes == 0 && state != STACKS_EXIT && r->nprocs > 0) {
		if (state == STACKS_PEAK)
			rd_error_set(err, r->procs[0]->file,
				     "no process has a copy of what was live at its peak");
		else
			rd_error_set(err, r->procs[0]->file, "no process has a mark \"%s\"", label);
		e = -EINVAL;
	}
	if (e < 0)
		stacks_clear(out);
	return e;
}

struct held {
	int64_t bytes;
	const struct rd_report_site *site;
};

static int cmp_held(const void *pa, const void *pb)
{
	const struct held *a = pa, *b = pb;

	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	return (a->site->number > b->site->number) - (a->site->number < b->site->number);
}

int stacks_by_site(const struct rd_report *r, const struct rd_stacks *st, int64_t **out,
		   const struct rd_report_site ***order, size_t *norder)
{
	int64_t *bytes = calloc(r->nsites + 1, sizeof(*bytes));
	const struct rd_report_site **o = calloc(r->nsites + 1, sizeof(*o));
	struct held *h = calloc(r->nsites + 1, sizeof(*h));
	size_t n = 0;

	*out = NULL;
	*order = NULL;
	*norder = 0;
	if (!bytes || !o || !h) {
		free(bytes);
		free(o);
		free(h);
		return -ENOMEM;
	}
	for (size_t i = 0; i < st->n; i++)
		util_add_sat(&bytes[st->samples[i].site->number - 1], st->samples[i].live_bytes);
	for (size_t i = 0; i < r->nsites; i++)
		if (bytes[i] > 0)
			h[n++] = (struct held){ bytes[i], r->sites[i] };
	qsort(h, n, sizeof(*h), cmp_held);
	for (size_t i = 0; i < n; i++)
		o[i] = h[i].site;
	free(h);
	*out = bytes;
	*order = o;
	*norder = n;
	return 0;
}

void stacks_clear(struct rd_stacks *s)
{
	free(s->samples);
	s->samples = NULL;
	s->n = 0;
}

size_t stacks_frames(const struct rd_report_site *s, bool fold, const struct rd_report_frame **out)
{
	size_t n = 0;

	for (size_t i = 0; i < s->nframes; i++)
		if (!fold || s->frames[i].python || s->frames[i].noise == NOISE_NONE)
			out[n++] = &s->frames[i];
	if (n == 0)
		for (size_t i = 0; i < s->nframes; i++)
			out[n++] = &s->frames[i];
	return n;
}
