/* SPDX-License-Identifier: MIT */
/*
 * gpuspy export --memory-viz FILE: one process's GPU memory at exit as a
 * snapshot of PyTorch's memory viewer (pytorch.org/memory_viz, and
 * torch.cuda._memory_viz): the pickle torch.cuda.memory._dump_snapshot
 * writes, {"segments": [...], "device_traces": [[...], ...]}, made from
 * gpuspy's own records, whatever allocated the memory.
 *
 * Each live allocation of the exit report ("allocations") is a segment
 * holding one active block, its frames those of its call site as the
 * report names them (noise folded, innermost first, the Python frames
 * among them).  The trace (GPUSPY_TRACE), when the process kept one, is
 * each device's list of events: an allocation is a segment_alloc and an
 * alloc, a free a free_requested, a free_completed and a segment_free.
 *
 * The viewer replays the trace backwards from the segments, and fails on
 * an event that does not fit what it holds then (a block outside every
 * segment, a segment freed twice).  So the segments are made to not
 * overlap (an allocation whose free went through no door gpuspy sees
 * leaves a stale one behind), and the trace is replayed here the same
 * way first: an event that does not fit (the trace and the allocations
 * were read a moment apart, while threads still allocated) is left out,
 * and counted.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "names.h"
#include "pickle.h"
#include "print.h"
#include "stacks.h"
#include "util.h"

/* The viewer keeps a list per device up to the highest ordinal: one
 * beyond this is no device a machine has (a hostile file's), left out. */
#define MEMVIZ_MAX_DEVICE 1023

/* PyTorch calls a segment of its small pool (blocks of 1 MiB or less)
 * "small"; the name only labels it here. */
#define SMALL_SEGMENT (1 << 20)

/* What was left out, and why: said in the export's lines. */
struct memviz_counts {
	size_t segments, devices;
	int64_t bytes;
	size_t unmapped, unknown_device, overlapping;
	int64_t unmapped_bytes, unknown_device_bytes, overlapping_bytes;
	size_t events, events_kept, events_misfit, events_elsewhere;
};

static int cmp_alloc(const void *pa, const void *pb)
{
	const struct rd_live_alloc *a = *(const struct rd_live_alloc *const *)pa;
	const struct rd_live_alloc *b = *(const struct rd_live_alloc *const *)pb;

	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	return a->address < b->address ? -1 : a->address > b->address;
}

/*
 * The segments: L's allocations with an address on a device, sorted by
 * device and address, none overlapping the one kept before it.  *OUT is
 * the caller's to free.
 */
static int memviz_segments(const struct rd_live *l, const struct rd_live_alloc ***out, size_t *n,
			   struct memviz_counts *c)
{
	const struct rd_live_alloc **v = calloc(l->nallocs + 1, sizeof(*v));
	size_t k = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < l->nallocs; i++) {
		const struct rd_live_alloc *a = &l->allocs[i];

		if (!a->address) {
			c->unmapped++;
			util_add_sat(&c->unmapped_bytes, a->size);
		} else if (a->device < 0 || a->device > MEMVIZ_MAX_DEVICE) {
			c->unknown_device++;
			util_add_sat(&c->unknown_device_bytes, a->size);
		} else {
			v[k++] = a;
		}
	}
	qsort(v, k, sizeof(*v), cmp_alloc);
	*n = 0;
	for (size_t i = 0; i < k; i++) {
		const struct rd_live_alloc *prev = *n ? v[*n - 1] : NULL;

		if (prev && prev->device == v[i]->device &&
		    prev->address + (uint64_t)prev->size > v[i]->address) {
			c->overlapping++;
			util_add_sat(&c->overlapping_bytes, v[i]->size);
			continue;
		}
		v[(*n)++] = v[i];
		util_add_sat(&c->bytes, v[i]->size);
	}
	*out = v;
	return 0;
}

/* A (device, address) of the replay, with what is live there then. */
struct spot {
	int64_t device;
	uint64_t address;
	int64_t size; /* when live */
	bool live;
};

static int cmp_spot(const void *pa, const void *pb)
{
	const struct spot *a = pa, *b = pb;

	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	return a->address < b->address ? -1 : a->address > b->address;
}

/*
 * The live spots, counted in a Fenwick tree over their positions, so
 * that the live neighbours of a spot (the ranges that could overlap it)
 * are a search of log n each, however many spots lie dead between.
 */
struct replay {
	struct spot *s;
	size_t n;
	int64_t *tree; /* tree[1..n] */
	int64_t live;
};

static void replay_mark(struct replay *r, size_t i, bool live)
{
	int64_t d = live ? 1 : -1;

	if (r->s[i].live == live)
		return;
	r->s[i].live = live;
	r->live += d;
	for (size_t k = i + 1; k <= r->n; k += k & (0 - k))
		r->tree[k] += d;
}

/* The live spots before position I. */
static int64_t replay_before(const struct replay *r, size_t i)
{
	int64_t sum = 0;

	for (size_t k = i; k > 0; k -= k & (0 - k))
		sum += r->tree[k];
	return sum;
}

/* The position of the K-th live spot (1-based; 1 <= K <= live). */
static size_t replay_kth(const struct replay *r, int64_t k)
{
	size_t pos = 0, step = 1;

	while (step * 2 <= r->n)
		step *= 2;
	for (; step; step /= 2)
		if (pos + step <= r->n && r->tree[pos + step] < k) {
			pos += step;
			k -= r->tree[pos];
		}
	return pos;
}

static ssize_t replay_find(const struct replay *r, int64_t device, uint64_t address)
{
	struct spot want = { .device = device, .address = address };
	const struct spot *s = bsearch(&want, r->s, r->n, sizeof(*r->s), cmp_spot);

	return s ? s - r->s : -1;
}

/* Whether SIZE bytes at spot I, not live, would overlap a live range of
 * its device. */
static bool replay_overlaps(const struct replay *r, size_t i, int64_t size)
{
	int64_t before = replay_before(r, i);
	const struct spot *s = &r->s[i];

	if (before > 0) {
		const struct spot *p = &r->s[replay_kth(r, before)];

		if (p->device == s->device && p->address + (uint64_t)p->size > s->address)
			return true;
	}
	if (before < r->live) {
		const struct spot *q = &r->s[replay_kth(r, before + 1)];

		if (q->device == s->device && s->address + (uint64_t)size > q->address)
			return true;
	}
	return false;
}

/* Whether trace event E is one the viewer draws: an allocation or a free
 * of a pointer on a device, or a device's out-of-memory. */
static bool drawn(const struct rd_trace_event *e)
{
	if (e->device < 0 || e->device > MEMVIZ_MAX_DEVICE)
		return false;
	if (e->action == RD_TRACE_OOM)
		return true;
	return e->address && (e->kind == GS_KIND_DEVICE || e->kind == GS_KIND_MANAGED);
}

/*
 * KEEP[i]: whether event i of L's trace goes into the snapshot.  From the
 * segments (the state at exit) backwards, as the viewer replays it: an
 * allocation must be live after it, at its address and size, a free must
 * leave nothing live over its range.
 */
static int memviz_replay(const struct rd_live *l, const struct rd_live_alloc *const *seg,
			 size_t nseg, bool *keep, struct memviz_counts *c)
{
	struct replay r = { 0 };
	size_t n = 0;
	int e = 0;

	r.s = calloc(nseg + l->nevents + 1, sizeof(*r.s));
	if (!r.s)
		return -ENOMEM;
	for (size_t i = 0; i < nseg; i++)
		r.s[n++] = (struct spot){ .device = seg[i]->device, .address = seg[i]->address };
	for (size_t i = 0; i < l->nevents; i++)
		if (drawn(&l->events[i]) && l->events[i].action != RD_TRACE_OOM)
			r.s[n++] = (struct spot){ .device = l->events[i].device,
						  .address = l->events[i].address };
	qsort(r.s, n, sizeof(*r.s), cmp_spot);
	for (size_t i = 0; i < n; i++)
		if (!r.n || cmp_spot(&r.s[r.n - 1], &r.s[i]) != 0)
			r.s[r.n++] = r.s[i];
	r.tree = calloc(r.n + 1, sizeof(*r.tree));
	if (!r.tree) {
		e = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nseg; i++) {
		size_t k = (size_t)replay_find(&r, seg[i]->device, seg[i]->address);

		r.s[k].size = seg[i]->size;
		replay_mark(&r, k, true);
	}
	for (size_t i = l->nevents; i-- > 0;) {
		const struct rd_trace_event *ev = &l->events[i];
		ssize_t k;

		keep[i] = false;
		if (!drawn(ev)) {
			c->events_elsewhere++;
			continue;
		}
		c->events++;
		if (ev->action == RD_TRACE_OOM) {
			keep[i] = true;
			c->events_kept++;
			continue;
		}
		k = replay_find(&r, ev->device, ev->address);
		if (ev->action == RD_TRACE_ALLOC && r.s[k].live && r.s[k].size == ev->size) {
			/* before it, nothing was there */
			replay_mark(&r, (size_t)k, false);
			keep[i] = true;
		} else if (ev->action == RD_TRACE_FREE && !r.s[k].live &&
			   !replay_overlaps(&r, (size_t)k, ev->size)) {
			/* before it, this was */
			r.s[k].size = ev->size;
			replay_mark(&r, (size_t)k, true);
			keep[i] = true;
		}
		if (keep[i])
			c->events_kept++;
		else
			c->events_misfit++;
	}
out:
	free(r.tree);
	free(r.s);
	return e;
}

/*
 * The frames of the process's site INDEX (-1: one the report folded) as
 * the viewer's [{"filename", "line", "name"}], innermost first: those of
 * the merged site it went into, as the report names them, with its own
 * headline's line (a merged site of several lines has none).  A site's
 * list is written once, then named (memo entry INDEX + 1).
 */
static void memviz_frames(struct pickle *pk, const struct rd_report *r, ssize_t index,
			  bool *written, const struct rd_report_frame **tmp)
{
	const struct rd_report_site *s;
	ssize_t head;
	size_t n;

	if (index < 0) {
		pickle_list(pk);
		pickle_dict(pk);
		pickle_key(pk, "filename");
		pickle_str(pk, "");
		pickle_key(pk, "line");
		pickle_int(pk, 0);
		pickle_key(pk, "name");
		pickle_str(pk, "(a call site the report folded: GPUSPY_MAX_SITES)");
		pickle_close(pk);
		pickle_close(pk);
		return;
	}
	if (written[index]) {
		pickle_get(pk, (uint32_t)index + 1);
		return;
	}
	s = r->site_of[0][index];
	head = merge_site_headline(s);
	n = stacks_frames(s, true, tmp);
	pickle_list(pk);
	for (size_t i = 0; i < n; i++) {
		const struct rd_report_frame *f = tmp[i];
		int64_t line = f->line;
		char name[64];

		if (head >= 0 && f == &s->frames[head] && line <= 0)
			line = r->line_of[0][index];
		pickle_dict(pk);
		pickle_key(pk, "filename");
		pickle_str(pk, f->file ? f->file : f->module ? f->module : "??");
		pickle_key(pk, "line");
		pickle_int(pk, line > 0 ? line : 0);
		pickle_key(pk, "name");
		if (f->function) {
			pickle_str(pk, f->function);
		} else {
			snprintf(name, sizeof(name), "0x%" PRIx64, f->offset);
			pickle_str(pk, name);
		}
		pickle_close(pk);
	}
	pickle_close(pk);
	pickle_put(pk, (uint32_t)index + 1);
	written[index] = true;
}

static void memviz_event(struct pickle *pk, const struct rd_report *r,
			 const struct rd_trace_event *ev, const char *action, bool *written,
			 const struct rd_report_frame **tmp)
{
	pickle_dict(pk);
	pickle_key(pk, "action");
	pickle_str(pk, action);
	if (ev->action == RD_TRACE_OOM) {
		/* PyTorch's name for what the driver said was free */
		pickle_key(pk, "device_free");
		pickle_int(pk, ev->free_bytes);
	} else {
		pickle_key(pk, "addr");
		pickle_int(pk, (int64_t)ev->address);
	}
	pickle_key(pk, "size");
	pickle_int(pk, ev->size);
	pickle_key(pk, "stream");
	pickle_int(pk, (int64_t)ev->stream);
	pickle_key(pk, "time_us");
	pickle_int(pk, (int64_t)(ev->time * 1e6));
	pickle_key(pk, "frames");
	memviz_frames(pk, r, ev->site_index, written, tmp);
	pickle_close(pk);
}

static void memviz_segment(struct pickle *pk, const struct rd_report *r,
			   const struct rd_live_alloc *a, bool *written,
			   const struct rd_report_frame **tmp)
{
	static const char *const sizes[] = { "total_size", "allocated_size", "active_size",
					     "requested_size" };
	pickle_dict(pk);
	pickle_key(pk, "device");
	pickle_int(pk, a->device);
	pickle_key(pk, "address");
	pickle_int(pk, (int64_t)a->address);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		pickle_key(pk, sizes[i]);
		pickle_int(pk, a->size);
	}
	pickle_key(pk, "stream");
	pickle_int(pk, (int64_t)a->stream);
	pickle_key(pk, "segment_type");
	pickle_str(pk, a->size > SMALL_SEGMENT ? "large" : "small");
	pickle_key(pk, "segment_pool_id");
	pickle_tuple(pk);
	pickle_int(pk, 0);
	pickle_int(pk, 0);
	pickle_close(pk);
	/* VMM memory is what PyTorch's expandable segments are made of */
	pickle_key(pk, "is_expandable");
	pickle_bool(pk, a->kind == GS_KIND_VMM);
	pickle_key(pk, "frames");
	memviz_frames(pk, r, a->site_index, written, tmp);
	pickle_key(pk, "blocks");
	pickle_list(pk);
	pickle_dict(pk);
	pickle_key(pk, "address");
	pickle_int(pk, (int64_t)a->address);
	pickle_key(pk, "size");
	pickle_int(pk, a->size);
	pickle_key(pk, "requested_size");
	pickle_int(pk, a->size);
	pickle_key(pk, "state");
	pickle_str(pk, "active_allocated");
	pickle_key(pk, "frames");
	memviz_frames(pk, r, a->site_index, written, tmp);
	pickle_close(pk);
	pickle_close(pk);
	pickle_close(pk);
}

/* The whole snapshot into F. */
static int memviz_write(FILE *f, const struct rd_report *r, const struct rd_live *l,
			const struct rd_live_alloc *const *seg, size_t nseg, const bool *keep,
			struct memviz_counts *c)
{
	static const char *const free_actions[] = { "free_requested", "free_completed",
						    "segment_free" };
	const struct rd_process *p = r->procs[0];
	const struct rd_report_frame **tmp;
	struct pickle pk;
	size_t maxf = 0;
	int64_t ndev = 1;
	bool *written;
	int e;

	for (size_t i = 0; i < r->nsites; i++)
		if (r->sites[i]->nframes > maxf)
			maxf = r->sites[i]->nframes;
	for (size_t i = 0; i < nseg; i++)
		if (seg[i]->device + 1 > ndev)
			ndev = seg[i]->device + 1;
	for (size_t i = 0; i < l->nevents; i++)
		if (keep[i] && l->events[i].device + 1 > ndev)
			ndev = l->events[i].device + 1;
	tmp = calloc(maxf + 1, sizeof(*tmp));
	written = calloc(p->nsites + 1, sizeof(*written));
	if (!tmp || !written) {
		free(tmp);
		free(written);
		return -ENOMEM;
	}
	pickle_begin(&pk, f);
	pickle_dict(&pk);
	pickle_key(&pk, "segments");
	pickle_list(&pk);
	for (size_t i = 0; i < nseg; i++)
		memviz_segment(&pk, r, seg[i], written, tmp);
	pickle_close(&pk);
	pickle_key(&pk, "device_traces");
	pickle_list(&pk);
	for (int64_t d = 0; d < ndev; d++) {
		pickle_list(&pk);
		for (size_t i = 0; i < l->nevents; i++) {
			const struct rd_trace_event *ev = &l->events[i];

			if (!keep[i] || ev->device != d)
				continue;
			if (ev->action == RD_TRACE_ALLOC) {
				memviz_event(&pk, r, ev, "segment_alloc", written, tmp);
				memviz_event(&pk, r, ev, "alloc", written, tmp);
			} else if (ev->action == RD_TRACE_FREE) {
				for (size_t k = 0; k < 3; k++)
					memviz_event(&pk, r, ev, free_actions[k], written, tmp);
			} else {
				memviz_event(&pk, r, ev, "oom", written, tmp);
			}
		}
		pickle_close(&pk);
	}
	pickle_close(&pk);
	pickle_close(&pk);
	e = pickle_end(&pk);
	c->devices = (size_t)ndev;
	free(tmp);
	free(written);
	return e;
}

/* The export's lines, on stdout: what FILE holds, and what was left out. */
static void memviz_say(const char *file, const struct rd_process *p, const struct rd_live *l,
		       const struct memviz_counts *c)
{
	int64_t listed;
	char a[32];

	cli_put_clean(stdout, file);
	printf(": %zu segment%s (%s) on %zu device%s", c->segments, c->segments == 1 ? "" : "s",
	       util_human_size(c->bytes, a, sizeof(a)), c->devices, c->devices == 1 ? "" : "s");
	if (l->traced)
		printf(", a trace of %zu event%s\n", c->events_kept,
		       c->events_kept == 1 ? "" : "s");
	else
		puts(", no trace: the process ran without GPUSPY_TRACE (GPUSPY_TRACE=N keeps its "
		     "last N allocations and frees, for the viewer's timeline)");
	listed = c->bytes;
	util_add_sat(&listed, c->unmapped_bytes);
	util_add_sat(&listed, c->unknown_device_bytes);
	util_add_sat(&listed, c->overlapping_bytes);
	util_add_sat(&listed, l->left_out_bytes);
	if (listed != p->leaked_bytes)
		printf("  its allocations sum to %" PRId64
		       " bytes, the report's live bytes to %" PRId64
		       ": the two are read a moment apart, while threads still allocated or freed\n",
		       listed, p->leaked_bytes);
	if (c->unmapped)
		printf("  left out: %zu VMM allocation%s mapped nowhere (%s)\n", c->unmapped,
		       c->unmapped == 1 ? "" : "s",
		       util_human_size(c->unmapped_bytes, a, sizeof(a)));
	if (c->unknown_device)
		printf("  left out: %zu allocation%s on no known device (%s)\n", c->unknown_device,
		       c->unknown_device == 1 ? "" : "s",
		       util_human_size(c->unknown_device_bytes, a, sizeof(a)));
	if (c->overlapping)
		printf("  left out: %zu allocation%s over another one (%s): a free gpuspy did not "
		       "see\n",
		       c->overlapping, c->overlapping == 1 ? "" : "s",
		       util_human_size(c->overlapping_bytes, a, sizeof(a)));
	if (l->left_out)
		printf("  left out: %" PRId64 " allocation%s the report did not list (%s)\n",
		       l->left_out, l->left_out == 1 ? "" : "s",
		       util_human_size(l->left_out_bytes, a, sizeof(a)));
	if (l->traced && l->dropped)
		printf("  the trace: the last %zu of %" PRId64 " events (GPUSPY_TRACE=%" PRId64
		       " keeps %" PRId64 ")\n",
		       l->nevents, l->recorded, l->capacity, l->capacity);
	if (c->events_misfit)
		printf("  left out: %zu event%s of the trace that do not fit the allocations at "
		       "exit (made while the process exited, or next to an event the ring lost)\n",
		       c->events_misfit, c->events_misfit == 1 ? "" : "s");
}

int memviz_export(const struct rd_report *r, const struct rd_live *live, const char *file)
{
	const struct rd_live_alloc **seg = NULL;
	struct memviz_counts c = { 0 };
	const struct rd_process *p;
	char *buf = NULL;
	size_t len = 0, nseg = 0;
	bool *keep = NULL;
	FILE *f = NULL;
	int e;

	if (r->nprocs != 1) {
		cli_error(NULL,
			  "--memory-viz draws one process, and these paths hold %zu: name one "
			  "process directory",
			  r->nprocs);
		return EXIT_USAGE;
	}
	p = r->procs[0];
	if (!live->present) {
		cli_error(p->file ? p->file : p->path, "no " GS_FILE_ALLOCATIONS " beside it: %s",
			  rd_state_not_exited(p->state) || p->partial ?
				  "the process did not exit (a snapshot lists no allocations)" :
				  "written by a gpuspy that does not list the allocations at exit");
		return EXIT_USAGE;
	}
	e = memviz_segments(live, &seg, &nseg, &c);
	c.segments = nseg;
	if (e == 0) {
		keep = calloc(live->nevents + 1, sizeof(*keep));
		e = keep ? memviz_replay(live, seg, nseg, keep, &c) : -ENOMEM;
	}
	if (e == 0) {
		f = open_memstream(&buf, &len);
		e = f ? memviz_write(f, r, live, seg, nseg, keep, &c) : -ENOMEM;
		if (f && fclose(f) != 0 && e == 0)
			e = -ENOMEM;
	}
	if (e == 0) {
		e = cli_write_file(file, buf, len);
		if (e < 0) {
			cli_error(file, "cannot write: %s", strerror(-e));
			e = EXIT_FAILURE_OTHER;
		} else {
			memviz_say(file, p, live, &c);
		}
	}
	free(buf);
	free(keep);
	free(seg);
	return e;
}
