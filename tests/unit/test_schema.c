/* SPDX-License-Identifier: MIT */
/*
 * The process document both ways: synthetic sites, in the library's own
 * structures (frames with and without symbols, Python frames, verdicts by
 * samples, by marks and by a framework's counter, folded sites), the
 * frameworks' counters fed through fw_counters_put() on a clock of the
 * test's own (gs_now, wrapped), and an out-of-memory event with PyTorch's
 * lines, written by the real writer (process_json_write) into a file and
 * read back by the real reader (load_process_file); and the exit's live
 * allocations and trace the same way (live_json_write, load_live_file).
 * Every figure the reader keeps must be what was written; every member the writer put in a
 * site, a frame, a growth or "frameworks" must be a key of src/common's
 * tables (schema.h), so that a key spelled anew on one side fails here.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <jansson.h>

#include "fw_counters.h"
#include "live_json.h"
#include "load.h"
#include "load_live.h"
#include "names.h"
#include "process_json.h"
#include "schema.h"
#include "sites.h"
#include "state.h"
#include "symbols.h"
#include "trend.h"
#include "unwind.h"
#include "view.h"

/* The library's clock, the test's: fw_counters_put() samples the growth
 * rule at gs_now(), one put a second here. */
static double clock_now;
double __wrap_gs_now(void);
double __wrap_gs_now(void)
{
	return clock_now;
}

#define NSITES	   5
#define MAX_FRAMES 3
#define MiB	   (1LL << 20)

/* What the writer is given: sites as site_intern() makes them. */
struct fixture {
	struct gs_site sites[NSITES];
	struct gs_site *list[NSITES];
	struct gs_frame frames[NSITES][MAX_FRAMES];
	struct gs_pyframe py[NSITES][2];
	struct gs_verdict verdicts[NSITES];
	struct gs_name names[MAX_FRAMES];
	struct gs_oom event;
	struct gs_oom_torch torch;
	struct gs_view view;
	/* what only an exit report says: the live allocations, the trace */
	struct gs_live live[3];
	struct trace_event trace[4];
	struct fw_growth fw; /* what the rule said, as the writer took it */
	int module;	     /* the test program's module */
};

static void set_counters(struct gs_site *s, long long allocated, long long allocs, long long freed,
			 long long frees, long long peak)
{
	atomic_init(&s->c.alloc_bytes, allocated);
	atomic_init(&s->c.allocs, allocs);
	atomic_init(&s->c.freed_bytes, freed);
	atomic_init(&s->c.frees, frees);
	atomic_init(&s->c.peak_bytes, peak);
}

static void set_verdict(struct gs_verdict *v, int state, int shape, double since, double rate,
			double until, int by)
{
	v->v.state = state;
	v->v.shape = shape;
	v->v.since = since;
	v->v.rate = rate;
	v->v.until = until;
	v->by = (uint8_t)by;
}

/* JAX's allocated counter on device 0 grows 4 MiB a put for 60 puts,
 * PyTorch's host figures stay flat: the rule flags the first only. */
static void feed_frameworks(void)
{
	/* the rule's times are from the process's start */
	clock_now = gs_state.start_time;
	fw_counters_reset();
	for (int i = 0; i < 60; i++) {
		const long long jax[] = {
			0, GS_FWC_ALLOCATED,   8 * MiB + i * 4 * MiB,
			0, GS_FWC_RESERVED,    256 * MiB,
			0, GS_FWC_FREE_BLOCKS, 3,
		};
		const long long torch[] = { GS_FW_HOST, GS_FWC_ALLOCATED,      2 * MiB,
					    GS_FW_HOST, GS_FWC_PEAK_ALLOCATED, 5 * MiB };

		clock_now += 1.0;
		assert_int_equal(fw_counters_put(GS_FW_JAX, jax, 3), 0);
		assert_int_equal(fw_counters_put(GS_FW_PYTORCH, torch, 2), 0);
	}
}

static void build(struct fixture *x)
{
	static const char *const symbols[MAX_FRAMES] = { "alloc_step", "train \"loop\"", "main" };
	struct gs_frame self;
	struct gs_site *s;

	memset(x, 0, sizeof(*x));
	/* the test program as module 0, as unwind_resolve() registers it */
	unwind_resolve((uintptr_t)&build, &self);
	assert_true(self.module >= 0);
	x->module = self.module;
	for (unsigned i = 0; i < MAX_FRAMES; i++)
		x->names[i].symbol = symbols[i];

	feed_frameworks();

	/* 0: device memory growing by its samples, three named frames */
	s = &x->sites[0];
	s->id = 7;
	s->kind = GS_KIND_DEVICE;
	s->api = GS_API_cudaMalloc;
	s->door = GS_DOOR_RUNTIME;
	s->first_seq = 3;
	set_counters(s, 48 * MiB, 12, 16 * MiB, 4, 40 * MiB);
	set_verdict(&x->verdicts[0], TREND_GROWING, TREND_STAIRCASE, 12.5, 1398101.3, 60.25,
		    GS_BY_SAMPLES);
	/* 1: pinned, grew by the marks then stopped, Python frames */
	s = &x->sites[1];
	s->id = 9;
	s->kind = GS_KIND_PINNED;
	s->api = GS_API_cudaMallocHost;
	s->door = GS_DOOR_DLSYM;
	s->first_seq = 11;
	set_counters(s, 3 * MiB, 3, 0, 0, 3 * MiB);
	set_verdict(&x->verdicts[1], TREND_STOPPED, TREND_PER_SAMPLE, 1.0, 4096.0, 30.0,
		    GS_BY_MARKS);
	/* 2: JAX's pool segment, judged by JAX's own counter (the writer
	 * says the frameworks' verdict of the document, not this copy) */
	s = &x->sites[2];
	s->id = 12;
	s->kind = GS_KIND_DEVICE;
	s->api = GS_API_cuMemAlloc_v2;
	s->door = GS_DOOR_DRIVER;
	s->first_seq = 20;
	set_counters(s, 256 * MiB, 4, 0, 0, 256 * MiB);
	set_verdict(&x->verdicts[2], TREND_GROWING, TREND_DRIFT, 0, 0, 0, GS_BY_FRAMEWORK);
	x->verdicts[2].fw = GS_FW_JAX;
	x->verdicts[2].place = 0;
	/* 3: managed, never flagged, a frame outside any module */
	s = &x->sites[3];
	s->id = 13;
	s->kind = GS_KIND_MANAGED;
	s->api = GS_API_cudaMallocManaged;
	s->door = GS_DOOR_GETPROC;
	s->first_seq = 21;
	set_counters(s, 1024, 1, 1024, 1, 1024);
	/* 4: vmm, growing now with no verdict yet (flagged before the
	 * snapshot thread published it), a framework's counter on the host */
	s = &x->sites[4];
	s->id = 14;
	s->kind = GS_KIND_VMM;
	s->api = GS_API_cuMemCreate;
	s->door = GS_DOOR_DRIVER;
	s->first_seq = 22;
	set_counters(s, 2 * MiB, 1, 0, 0, 2 * MiB);
	atomic_init(&s->growing, true);

	for (unsigned i = 0; i < NSITES; i++) {
		s = &x->sites[i];
		x->list[i] = s;
		s->frames = x->frames[i];
		s->depth = (uint16_t)(i % 2 ? 2 : MAX_FRAMES);
		for (unsigned d = 0; d < s->depth; d++) {
			struct gs_frame *fr = &s->frames[d];

			fr->module = i == 3 && d == 0 ? -1 : x->module;
			fr->offset = i == 3 && d == 0 ? 0x7f0012345678ULL : 0x1000 + 16 * i + d;
			/* site 1's innermost frame has no symbol */
			atomic_init(&fr->name, i == 1 && d == 0 ? NULL : &x->names[d]);
		}
		if (i < 3)
			s->verdict = &x->verdicts[i];
	}
	x->py[1][0] = (struct gs_pyframe){ "/src/train.py", "step", 41 };
	x->py[1][1] = (struct gs_pyframe){ "/src/ütf8.py", "<module>", -1 };
	x->sites[1].py = x->py[1];
	x->sites[1].pydepth = 2;
	x->py[2][0] = (struct gs_pyframe){ NULL, NULL, 0 }; /* as "?" and line 0 */
	x->sites[2].py = x->py[2];
	x->sites[2].pydepth = 1;
	fw_counters_link(GS_FW_JAX, x->sites[2].id);
	fw_counters_growth(&x->fw);

	/* an out-of-memory event at site 0, with PyTorch's lines (the text
	 * torch_view.py gives, spelled here with the table's keys) */
	{
		static char lines[1024];
		const char *const *l = schema_lines_key, *const *p = schema_pyframe_key;

		snprintf(lines, sizeof(lines),
			 "{\"%s\": [{\"%s\": [{\"%s\": \"/src/train.py\", \"%s\": \"step\", "
			 "\"%s\": 41}], \"%s\": 1048576, \"%s\": 2, \"%s\": \"activations\"}], "
			 "\"%s\": [{\"%s\": [], \"%s\": 4096, \"%s\": 1}]}",
			 l[SL_LINES], l[SL_FRAMES], p[SP_FILE], p[SP_FUNCTION], p[SP_LINE],
			 l[SL_BYTES], l[SL_BLOCKS], l[SL_ROLE], l[SL_HOLDERS], l[SL_FRAMES],
			 l[SL_BYTES], l[SL_BLOCKS]);
		x->torch = (struct gs_oom_torch){ .request = 8 * MiB,
						  .allocated = 3 * MiB,
						  .reserved = 4 * MiB,
						  .largest_free = -1,
						  .lines = lines };
	}
	x->event = (struct gs_oom){ .number = 1,
				    .time = clock_now,
				    .api = GS_API_cudaMalloc,
				    .kind = GS_KIND_DEVICE,
				    .requested = 8 * MiB,
				    .device = 0,
				    .live = 32 * MiB,
				    .free_bytes = -1,
				    .total_bytes = -1,
				    .site = 7,
				    .device_live = -1,
				    .others_bytes = -1,
				    .torch = &x->torch };

	x->view.sites = x->list;
	x->view.n = NSITES;
	x->view.n_all = NSITES + 3;
	/* three sites folded: two of vmm (one growing), one of pinned */
	x->view.folded[GS_KIND_VMM] = (struct gs_folded){
		.sites = 2,
		.growing = 1,
		.c = { .live_bytes = 4096,
		       .live_allocs = 2,
		       .peak_bytes = 8192,
		       .alloc_bytes = 8192,
		       .allocs = 4,
		       .freed_bytes = 4096,
		       .frees = 2 },
	};
	x->view.folded[GS_KIND_PINNED] = (struct gs_folded){
		.sites = 1,
		.c = { .live_bytes = 0,
		       .live_allocs = 0,
		       .peak_bytes = 512,
		       .alloc_bytes = 512,
		       .allocs = 1,
		       .freed_bytes = 512,
		       .frees = 1 },
	};
	x->view.n_folded = 3;
	snprintf(x->view.host, sizeof(x->view.host), "schema-host");
	x->view.event = &x->event;

	/* a device pointer, a managed one of a stream on device 1, VMM memory
	 * mapped nowhere at a site the file folded (no such id listed) */
	x->live[0] = (struct gs_live){ .addr = 0x7f0000100000ull,
				       .size = 3 * MiB,
				       .site = 7,
				       .kind = GS_KIND_DEVICE,
				       .space = GS_SPACE_DEVPTR };
	x->live[1] = (struct gs_live){ .addr = 0x7f0000400000ull,
				       .size = 4096,
				       .site = 13,
				       .stream = 0x5555deadbe00ull,
				       .device = 1,
				       .kind = GS_KIND_MANAGED,
				       .space = GS_SPACE_DEVPTR };
	x->live[2] = (struct gs_live){ .addr = 0,
				       .size = 2 * MiB,
				       .site = 99,
				       .kind = GS_KIND_VMM,
				       .space = GS_SPACE_HANDLE };
	x->view.live = x->live;
	x->view.n_live = 3;
	x->view.live_left_out = 2;
	x->view.live_left_out_bytes = 8192;
	/* the last 4 of 10 events: an allocation, a free, an out-of-memory
	 * request, a VMM handle's allocation (no address) */
	x->trace[0] = (struct trace_event){ .number = 6,
					    .time_ns = 1764510012250117000ull,
					    .addr = 0x7f0000100000ull,
					    .size = 3 * MiB,
					    .site = 7,
					    .action = TRACE_ALLOC,
					    .kind = GS_KIND_DEVICE,
					    .space = GS_SPACE_DEVPTR };
	x->trace[1] = (struct trace_event){ .number = 7,
					    .time_ns = 1764510012250341000ull,
					    .addr = 0x7f0000500000ull,
					    .size = MiB,
					    .site = 12,
					    .stream = 42,
					    .device = 0,
					    .action = TRACE_FREE,
					    .kind = GS_KIND_DEVICE,
					    .space = GS_SPACE_DEVPTR };
	x->trace[2] = (struct trace_event){ .number = 8,
					    .time_ns = 1764510012300000000ull,
					    .addr = (uint64_t)MiB,
					    .size = 8 * MiB,
					    .site = 7,
					    .action = TRACE_OOM,
					    .kind = GS_KIND_DEVICE,
					    .space = GS_SPACE_DEVPTR };
	x->trace[3] = (struct trace_event){ .number = 9,
					    .time_ns = 1764510012400000000ull,
					    .addr = 77,
					    .size = 2 * MiB,
					    .site = 14,
					    .device = -1,
					    .action = TRACE_ALLOC,
					    .kind = GS_KIND_VMM,
					    .space = GS_SPACE_HANDLE };
	x->view.trace = x->trace;
	x->view.n_trace = 4;
	x->view.trace_recorded = 10;
	x->view.trace_capacity = 8;
	x->view.exit_taken = true;
}

/* The live allocations and the trace, as written (build). */
static void check_live(const struct fixture *x, const struct rd_process *p, const struct rd_live *l)
{
	static const enum rd_trace_action actions[] = { [TRACE_ALLOC] = RD_TRACE_ALLOC,
							[TRACE_FREE] = RD_TRACE_FREE,
							[TRACE_OOM] = RD_TRACE_OOM };

	assert_true(l->present);
	assert_int_equal(l->nallocs, x->view.n_live);
	for (size_t i = 0; i < l->nallocs; i++) {
		const struct rd_live_alloc *a = &l->allocs[i];
		const struct gs_live *w = &x->live[i];

		assert_int_equal(a->address, w->addr);
		assert_int_equal(a->size, w->size);
		assert_int_equal(a->kind, w->kind);
		assert_int_equal(a->device, w->device);
		assert_int_equal(a->site, w->site);
		assert_int_equal(a->stream, w->stream);
		/* site 99 is none of the listed: the file folds sites */
		if (w->site == 99)
			assert_int_equal(a->site_index, -1);
		else
			assert_int_equal(p->sites[a->site_index].id, w->site);
	}
	assert_int_equal(l->left_out, x->view.live_left_out);
	assert_int_equal(l->left_out_bytes, x->view.live_left_out_bytes);
	assert_true(l->traced);
	assert_int_equal(l->capacity, x->view.trace_capacity);
	assert_int_equal(l->recorded, x->view.trace_recorded);
	assert_int_equal(l->dropped, x->view.trace_recorded - x->view.n_trace);
	assert_int_equal(l->nevents, x->view.n_trace);
	for (size_t i = 0; i < l->nevents; i++) {
		const struct rd_trace_event *e = &l->events[i];
		const struct trace_event *w = &x->trace[i];

		assert_int_equal(e->action, actions[w->action]);
		/* microseconds: what the file keeps */
		assert_int_equal((int64_t)(e->time * 1e6 + 0.5), (int64_t)(w->time_ns / 1000));
		assert_int_equal(e->size, w->size);
		assert_int_equal(e->kind, w->kind);
		assert_int_equal(e->device, w->device);
		assert_int_equal(e->site, w->site);
		assert_int_equal(e->stream, w->stream);
		if (w->action == TRACE_OOM) {
			assert_int_equal(e->free_bytes, (int64_t)w->addr);
			assert_int_equal(e->address, 0);
		} else {
			/* a VMM handle is no address */
			assert_int_equal(e->address, w->space == GS_SPACE_HANDLE ? 0 : w->addr);
		}
	}
}

/* The document WRITE makes of X's view, in NAME under GPUSPY_OUTPUT_DIR. */
static char *write_doc(struct fixture *x, const char *name,
		       int (*write)(FILE *, const struct gs_view *))
{
	const char *base = getenv("GPUSPY_OUTPUT_DIR");
	char *path = NULL;
	FILE *f;

	assert_non_null(base);
	mkdir(base, 0777);
	assert_true(asprintf(&path, "%s/%s", base, name) > 0);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(write(f, &x->view), 0);
	assert_int_equal(fclose(f), 0);
	return path;
}

static void check_counters(const char *what, const struct rd_counters *got,
			   const struct gs_count_snap *want)
{
	const int64_t g[SC_COUNT] = { got->live_bytes,	got->live_allocations,
				      got->peak_bytes,	got->allocated_bytes,
				      got->allocations, got->freed_bytes,
				      got->frees };
	const long long w[SC_COUNT] = { want->live_bytes,  want->live_allocs, want->peak_bytes,
					want->alloc_bytes, want->allocs,      want->freed_bytes,
					want->frees };

	for (unsigned i = 0; i < SC_COUNT; i++)
		if (g[i] != w[i])
			fail_msg("%s.%s: read %lld, written %lld", what, schema_counter_key[i],
				 (long long)g[i], w[i]);
}

static void check_verdict(const char *what, const struct rd_verdict *got,
			  const struct trend_verdict *want)
{
	assert_true(got->present);
	if (got->state != want->state || got->shape != want->shape)
		fail_msg("%s: state %d shape %d read, %d %d written", what, got->state, got->shape,
			 want->state, want->shape);
	/* as written: since and until to the ms, the rate to 0.1 B/s */
	assert_float_equal(got->since_s, want->since, 0.0005);
	assert_float_equal(got->until_s, want->until, 0.0005);
	assert_float_equal(got->rate_bps, want->rate, 0.05);
}

/* The verdict the writer says of S: the frameworks' for theirs. */
static const struct trend_verdict *said(const struct fixture *x, const struct gs_site *s)
{
	const struct gs_verdict *v = s->verdict;

	if (v->by == GS_BY_FRAMEWORK && x->fw.has[v->fw][v->place])
		return &x->fw.v[v->fw][v->place];
	return &v->v;
}

static void check_site(const struct fixture *x, unsigned i, const struct rd_process *p)
{
	const struct gs_site *s = &x->sites[i];
	const struct rd_site *r = &p->sites[i];
	struct gs_count_snap c;
	char what[32];

	snprintf(what, sizeof(what), "sites[%u]", i);
	assert_int_equal(r->id, s->id);
	assert_int_equal(r->kind, s->kind);
	assert_string_equal(r->api, gs_api_names[s->api]);
	counters_read((struct gs_counters *)&s->c, &c);
	check_counters(what, &r->c, &c);

	assert_int_equal(r->nframes, s->depth);
	for (unsigned d = 0; d < s->depth; d++) {
		const struct gs_frame *fr = &s->frames[d];
		const struct gs_name *n = symbols_of(fr);

		assert_int_equal(r->frames[d].module, fr->module);
		assert_int_equal(r->frames[d].offset, fr->offset);
		if (n)
			assert_string_equal(r->frames[d].symbol, n->symbol);
		else
			assert_null(r->frames[d].symbol);
	}
	assert_int_equal(r->npython, s->pydepth);
	for (unsigned d = 0; d < s->pydepth; d++) {
		const struct gs_pyframe *py = &s->py[d];

		assert_string_equal(r->python[d].file, py->file ? py->file : "?");
		assert_string_equal(r->python[d].function, py->function ? py->function : "?");
		assert_int_equal(r->python[d].line, py->line > 0 ? py->line : 0);
	}

	if (!s->verdict) {
		assert_false(r->growth.present);
		assert_int_equal(r->growing, atomic_load(&s->growing));
		return;
	}
	check_verdict(what, &r->growth, said(x, s));
	assert_int_equal(r->growing, said(x, s)->state == TREND_GROWING);
	assert_int_equal(r->growth.by, s->verdict->by);
	if (s->verdict->by == GS_BY_FRAMEWORK) {
		assert_int_equal(r->growth.fw, s->verdict->fw);
		assert_int_equal(r->growth.place, s->verdict->place);
	} else {
		assert_int_equal(r->growth.fw, -1);
		assert_int_equal(r->growth.place, -1);
	}
}

static void check_frameworks(const struct fixture *x, const struct rd_process *p)
{
	const struct rd_frameworks *fw = &p->frameworks;
	struct fw_latest l;
	unsigned growing = 0;

	fw_counters_copy(&l);
	assert_true(fw->present);
	assert_float_equal(fw->time, l.time, 0.0005);
	for (unsigned f = 0; f < GS_FW_COUNT; f++)
		for (unsigned q = 0; q < GS_FW_PLACES; q++) {
			for (unsigned c = 0; c < GS_FWC_COUNT; c++) {
				if (fw->has[f][q][c] != l.has[f][q][c])
					fail_msg("frameworks.counters.%s.%u.%s: %s read",
						 names_fw[f], q, names_fw_counter[c],
						 fw->has[f][q][c] ? "" : "not");
				if (l.has[f][q][c])
					assert_int_equal(fw->v[f][q][c], l.v[f][q][c]);
			}
			assert_int_equal(fw->growth[f][q].present, x->fw.has[f][q]);
			if (!x->fw.has[f][q])
				continue;
			growing++;
			check_verdict("frameworks.growth", &fw->growth[f][q], &x->fw.v[f][q]);
			assert_int_equal(fw->growth[f][q].by, RD_BY_FRAMEWORK);
			assert_int_equal(fw->growth_site[f][q], x->fw.site[f]);
		}
	/* the test is worth something only if the rule flagged JAX's */
	assert_int_equal(growing, 1);
	assert_true(x->fw.has[GS_FW_JAX][0]);
	assert_int_equal(x->fw.v[GS_FW_JAX][0].state, TREND_GROWING);
}

static void check_event(const struct fixture *x, const struct rd_process *p)
{
	const struct rd_oom_torch *t = p->event.torch;

	assert_int_equal(p->event.number, x->event.number);
	assert_int_equal(p->event.site, x->event.site);
	assert_int_equal(p->event.requested_bytes, (int64_t)x->event.requested);
	assert_non_null(t);
	assert_int_equal(t->requested_bytes, x->torch.request);
	assert_int_equal(t->allocated_bytes, x->torch.allocated);
	assert_int_equal(t->reserved_bytes, x->torch.reserved);
	assert_int_equal(t->largest_free_bytes, -1);
	assert_int_equal(t->nlines, 1);
	assert_int_equal(t->lines[0].bytes, 1048576);
	assert_int_equal(t->lines[0].blocks, 2);
	assert_string_equal(t->lines[0].role, "activations");
	assert_int_equal(t->lines[0].nframes, 1);
	assert_string_equal(t->lines[0].frames[0].file, "/src/train.py");
	assert_string_equal(t->lines[0].frames[0].function, "step");
	assert_int_equal(t->lines[0].frames[0].line, 41);
	assert_int_equal(t->nholders, 1);
	assert_int_equal(t->holders[0].bytes, 4096);
	assert_int_equal(t->holders[0].blocks, 1);
	assert_null(t->holders[0].role);
	assert_int_equal(t->holders[0].nframes, 0);
}

/* Every member of OBJ a key of one of the N tables. */
static void keys_in(const char *what, json_t *obj, const char *const *const *tables,
		    const size_t *sizes, size_t n)
{
	const char *key;
	json_t *val;

	assert_true(json_is_object(obj));
	json_object_foreach(obj, key, val)
	{
		bool found = false;

		(void)val;
		for (size_t t = 0; t < n && !found; t++)
			found = schema_parse(tables[t], sizes[t], key) >= 0;
		if (!found)
			fail_msg("%s: \"%s\" is in no table of schema.h", what, key);
	}
}

/* What the writer wrote, member by member, against the tables; and the
 * members the reader does not keep in its model (door, first_seq), with
 * the table's names. */
static void check_keys(const struct fixture *x, const char *path)
{
	const char *const *site_tables[] = { schema_site_key, schema_counter_key };
	const size_t site_sizes[] = { SS_COUNT, SC_COUNT };
	const char *const *growth_tables[] = { schema_growth_key };
	const size_t growth_sizes[] = { SG_COUNT };
	const char *const *frame_tables[] = { schema_frame_key };
	const size_t frame_sizes[] = { SF_COUNT };
	const char *const *py_tables[] = { schema_pyframe_key };
	const size_t py_sizes[] = { SP_COUNT };
	const char *const *fw_tables[] = { schema_frameworks_key };
	const size_t fw_sizes[] = { SW_COUNT };
	const char *const *fwg_tables[] = { schema_frameworks_key, schema_growth_key };
	const size_t fwg_sizes[] = { SW_COUNT, SG_COUNT };
	json_error_t jerr;
	json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr), *sites, *fw, *g;
	const char *fk, *pk;
	json_t *fx, *px;

	if (!root)
		fail_msg("%s:%d: %s", path, jerr.line, jerr.text);
	sites = json_object_get(root, "sites");
	assert_int_equal(json_array_size(sites), NSITES);
	for (unsigned i = 0; i < NSITES; i++) {
		json_t *js = json_array_get(sites, i), *arr;
		const struct gs_site *s = &x->sites[i];
		size_t k;
		json_t *e;

		keys_in("site", js, site_tables, site_sizes, 2);
		assert_string_equal(
			json_string_value(json_object_get(js, schema_site_key[SS_DOOR])),
			gs_door_names[s->door]);
		assert_int_equal(
			json_integer_value(json_object_get(js, schema_site_key[SS_FIRST_SEQ])),
			s->first_seq);
		assert_true(json_is_boolean(json_object_get(js, schema_site_key[SS_GROWING])));
		if (s->verdict)
			keys_in("growth", json_object_get(js, schema_site_key[SS_GROWTH]),
				growth_tables, growth_sizes, 1);
		arr = json_object_get(js, schema_site_key[SS_FRAMES]);
		json_array_foreach(arr, k, e) keys_in("frame", e, frame_tables, frame_sizes, 1);
		arr = json_object_get(js, schema_site_key[SS_PYTHON]);
		json_array_foreach(arr, k, e) keys_in("python frame", e, py_tables, py_sizes, 1);
	}
	fw = json_object_get(root, "frameworks");
	keys_in("frameworks", fw, fw_tables, fw_sizes, 1);
	g = json_object_get(fw, schema_frameworks_key[SW_GROWTH]);
	assert_non_null(g);
	json_object_foreach(g, fk, fx)
	{
		json_object_foreach(fx, pk, px)
			keys_in("frameworks.growth", px, fwg_tables, fwg_sizes, 2);
	}
	json_decref(root);
}

static void test_roundtrip(void **state)
{
	struct fixture *x = calloc(1, sizeof(*x));
	struct rd_process *p = NULL;
	struct rd_error err = { 0 };
	struct rd_live live;
	char *path, *live_path;
	int r;

	(void)state;
	assert_non_null(x);
	build(x);
	path = write_doc(x, "schema-roundtrip.json", process_json_write);
	live_path = write_doc(x, "schema-allocations.json", live_json_write);
	r = load_process_file(path, NULL, &p, &err);
	if (r != 0)
		fail_msg("%s: the reader refused what the writer wrote: %s", path, err.msg);
	assert_string_equal(p->host, "schema-host");
	assert_int_equal(p->nsites, NSITES);
	for (unsigned i = 0; i < NSITES; i++)
		check_site(x, i, p);
	for (unsigned k = 0; k < GS_KIND_COUNT; k++) {
		const struct gs_folded *f = &x->view.folded[k];
		char what[32];

		assert_int_equal(p->folded[k].sites, f->sites);
		if (!f->sites)
			continue;
		assert_int_equal(p->folded[k].growing, f->growing);
		snprintf(what, sizeof(what), "folded.%s", names_kinds[k]);
		check_counters(what, &p->folded[k].c, &f->c);
	}
	check_frameworks(x, p);
	check_event(x, p);
	r = load_live_file(live_path, p, &live, &err);
	if (r != 0)
		fail_msg("%s: the reader refused what the writer wrote: %s", live_path, err.msg);
	check_live(x, p, &live);
	rd_live_clear(&live);
	free(live_path);
	check_keys(x, path);
	rd_process_free(p);
	free(path);
	free(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
