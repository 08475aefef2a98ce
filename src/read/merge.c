/* SPDX-License-Identifier: MIT */
/*
 * Merging process reports into one report: the model that "gpuspy-report/1"
 * and "gpuspy-merge/1" print (src/cli).
 *
 * Call sites are matched across processes on their symbolized frames
 * (module basename and function), never on addresses: the same code loaded
 * at another address, or in another run, must land in the same site.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "merge.h"
#include "sitename.h"
#include "util.h"

static void frames_free(struct rd_report_frame *frames, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(frames[i].function);
		free(frames[i].module);
		free(frames[i].file);
		free(frames[i].build_id);
		free(frames[i].lines);
	}
	free(frames);
}

static void site_free(struct rd_report_site *s)
{
	if (!s)
		return;
	free(s->key);
	free(s->name);
	free(s->api);
	frames_free(s->frames, s->nframes);
	for (size_t i = 0; i < s->nlines; i++)
		free(s->lines[i].file);
	free(s->lines);
	/* one block for every metric */
	free(s->per_proc[0]);
	free(s);
}

void merge_clear(struct rd_report *r)
{
	for (size_t i = 0; i < r->nooms; i++) {
		struct rd_report_oom *ro = &r->ooms[i];

		site_free(ro->requested);
		for (size_t j = 0; j < ro->ntop; j++)
			site_free(ro->top[j]);
		free(ro->top);
		oom_verdict_clear(&ro->verdict);
	}
	free(r->ooms);
	for (size_t i = 0; i < r->nsites; i++)
		site_free(r->sites[i]);
	free(r->sites);
	free(r->table);
	free(r->at_peak_devices);
	torch_merge_clear(&r->torch);
	free(r->totals[0]);
	for (size_t i = 0; r->site_of && i < r->nprocs; i++)
		free(r->site_of[i]);
	for (size_t i = 0; r->line_of && i < r->nprocs; i++)
		free(r->line_of[i]);
	free(r->site_of);
	free(r->line_of);
	memset(r, 0, sizeof(*r));
}

static size_t hash_str(const char *s)
{
	size_t h = 14695981039346656037ULL; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

/* Open addressing, at most half full. */
static int table_grow(struct rd_report *r)
{
	size_t size = r->table_size ? r->table_size * 2 : 256;
	struct rd_report_site **t = calloc(size, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < r->nsites; i++) {
		size_t h = hash_str(r->sites[i]->key) & (size - 1);

		while (t[h])
			h = (h + 1) & (size - 1);
		t[h] = r->sites[i];
	}
	free(r->table);
	r->table = t;
	r->table_size = size;
	return 0;
}

static struct rd_report_site **table_slot(struct rd_report *r, const char *key)
{
	size_t h = hash_str(key) & (r->table_size - 1);

	while (r->table[h] && strcmp(r->table[h]->key, key) != 0)
		h = (h + 1) & (r->table_size - 1);
	return &r->table[h];
}

static int insert_site(struct rd_report *r, struct rd_report_site *s)
{
	struct rd_report_site **slot;

	if ((r->nsites + 1) * 2 > r->table_size) {
		int e = table_grow(r);

		if (e < 0)
			return e;
		/* the array of sites grows with the table */
		struct rd_report_site **sites =
			reallocarray(r->sites, r->table_size / 2, sizeof(*sites));
		if (!sites)
			return -ENOMEM;
		r->sites = sites;
	}
	slot = table_slot(r, s->key);
	*slot = s;
	r->sites[r->nsites++] = s;
	return 0;
}

static bool add_counters(struct rd_counters *a, const struct rd_counters *b)
{
	return util_add(&a->live_bytes, b->live_bytes) &&
	       util_add(&a->live_allocations, b->live_allocations) &&
	       util_add(&a->peak_bytes, b->peak_bytes) &&
	       util_add(&a->allocated_bytes, b->allocated_bytes) &&
	       util_add(&a->allocations, b->allocations) &&
	       util_add(&a->freed_bytes, b->freed_bytes) && util_add(&a->frees, b->frees);
}

/* Where a site's Python frames go among its native ones: the rule both
 * sides apply (sitename_python_at). */
static size_t python_position(const struct rd_report_frame *native, size_t n)
{
	struct sitename_frame *v = calloc(n + 1, sizeof(*v));
	size_t at;

	if (!v) /* out of memory: after the native frames, as for a cut stack */
		return n;
	merge_frames_view(native, n, v);
	at = sitename_python_at(v, n);
	free(v);
	return at;
}

/* The report frames of SITE: its native frames symbolized and judged,
 * with its Python frames placed among them; *POOL: the pool whose segment
 * the site is (classify_pool), NULL when none.  MAIN_EXE says which modules
 * are the process's executable. */
static int make_frames(const struct rd_process *p, const struct rd_site *site,
		       struct sym_module **mods, const bool *main_exe, struct rd_report_frame **out,
		       size_t *nout, const char **pool)
{
	size_t n = site->nframes + site->npython, at;
	struct rd_report_frame *native = calloc(site->nframes + 1, sizeof(*native));
	struct rd_report_frame *frames = calloc(n + 1, sizeof(*frames));

	*pool = NULL;
	if (!native || !frames)
		goto fail;
	for (size_t i = 0; i < site->nframes; i++) {
		const struct rd_frame *f = &site->frames[i];
		struct rd_report_frame *rf = &native[i];
		const char *path = NULL;
		struct sym_info info;
		int e;

		e = symbolize_frame(f->module >= 0 ? mods[f->module] : NULL, f->offset, f->symbol,
				    &info);
		if (e < 0)
			goto fail;
		rf->function = info.function;
		rf->file = info.file;
		rf->line = info.line;
		rf->offset = f->offset;
		if (f->module >= 0) {
			const struct rd_module *m = &p->modules[f->module];

			path = m->path;
			rf->module = strdup(util_basename(m->path));
			rf->build_id = m->build_id[0] ? strdup(m->build_id) : NULL;
			if (!rf->module || (m->build_id[0] && !rf->build_id))
				goto fail;
		}
		rf->noise =
			classify_noise(path, f->module >= 0 && main_exe[f->module], rf->function);
		/* the innermost frame with a pool decides */
		if (!*pool)
			*pool = classify_pool(site->api, path, rf->function);
	}
	at = python_position(native, site->nframes);
	/* the native frame structs move into FRAMES, with what they own */
	memcpy(frames, native, at * sizeof(*frames));
	memcpy(frames + at + site->npython, native + at, (site->nframes - at) * sizeof(*frames));
	free(native);
	native = NULL;
	for (size_t i = 0; i < site->npython; i++) {
		const struct rd_pyframe *py = &site->python[i];
		struct rd_report_frame *rf = &frames[at + i];

		rf->python = true;
		rf->function = strdup(py->function);
		rf->file = strdup(py->file);
		rf->line = py->line;
		if (!rf->function || !rf->file)
			goto fail;
		rf->user = classify_user_file(py->file);
	}
	*out = frames;
	*nout = n;
	return 0;
fail:
	if (native) {
		frames_free(native, site->nframes);
		free(frames);
	} else {
		frames_free(frames, n);
	}
	return -ENOMEM;
}

/* LINE into the ascending set *LINES of *N, once. */
static int lines_insert(int64_t **lines, size_t *n, int64_t line)
{
	size_t at = 0;
	int64_t *v;

	while (at < *n && (*lines)[at] < line)
		at++;
	if (at < *n && (*lines)[at] == line)
		return 0;
	v = reallocarray(*lines, *n + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	memmove(v + at + 1, v + at, (*n - at) * sizeof(*v));
	v[at] = line;
	*lines = v;
	(*n)++;
	return 0;
}

static void lines_drop(struct rd_report_frame *f)
{
	free(f->lines);
	f->lines = NULL;
	f->nlines = 0;
}

/* A file that differs is dropped rather than shown as if it held for all;
 * lines that differ within one file are kept as the set of lines, so that
 * the report can still name each of them.  -ENOMEM only. */
static int merge_frame(struct rd_report_frame *f, const struct rd_report_frame *other)
{
	if (f->file && (!other->file || strcmp(f->file, other->file) != 0)) {
		free(f->file);
		f->file = NULL;
		lines_drop(f);
	}
	if (f->line == other->line && f->nlines == 0)
		return 0;
	/* an unknown line on either side: which lines there were is unknown */
	if (!f->file || other->line <= 0 || (f->line <= 0 && f->nlines == 0)) {
		lines_drop(f);
		f->line = 0;
		return 0;
	}
	if (f->nlines == 0 && lines_insert(&f->lines, &f->nlines, f->line) < 0)
		return -ENOMEM;
	f->line = 0;
	return lines_insert(&f->lines, &f->nlines, other->line);
}

/* Two call sites with one key are calls from the same functions, perhaps
 * from other lines (a function that calls cudaMalloc twice) or another
 * version of the file (merge_frame).  -ENOMEM only. */
static int merge_frames(struct rd_report_site *rs, const struct rd_report_frame *frames, size_t n)
{
	static const struct rd_report_frame none = { 0 };
	size_t i = 0, j = 0;
	bool same_shape = rs->nframes == n;

	for (size_t k = 0; same_shape && k < n; k++)
		same_shape =
			(rs->frames[k].noise != NOISE_NONE) == (frames[k].noise != NOISE_NONE) &&
			rs->frames[k].python == frames[k].python;
	if (same_shape) {
		for (size_t k = 0; k < n; k++)
			if (merge_frame(&rs->frames[k], &frames[k]) < 0)
				return -ENOMEM;
		return 0;
	}
	/* The key leaves noise out, so the stacks may differ there (another
	 * driver, another Python): the frames that made the key are paired
	 * in order, and noise frames, which cannot be paired, lose what may
	 * not hold for all.  A function name holding ';' can still make the
	 * counts differ: pairing stops at the shorter. */
	for (;;) {
		while (i < rs->nframes && rs->frames[i].noise != NOISE_NONE)
			if (merge_frame(&rs->frames[i++], &none) < 0)
				return -ENOMEM;
		while (j < n && frames[j].noise != NOISE_NONE)
			j++;
		if (i >= rs->nframes || j >= n)
			break;
		if (merge_frame(&rs->frames[i++], &frames[j++]) < 0)
			return -ENOMEM;
	}
	for (; i < rs->nframes; i++)
		if (rs->frames[i].noise != NOISE_NONE && merge_frame(&rs->frames[i], &none) < 0)
			return -ENOMEM;
	return 0;
}

/* The calls of one component site (FRAMES, counters C) counted under
 * the line of its own headline in RS's lines.  -ENOMEM, -EOVERFLOW. */
static int site_line_add(struct rd_report_site *rs, const struct rd_report_frame *frames,
			 size_t nframes, const struct rd_counters *c, int64_t at_peak, bool growing,
			 int64_t *line_out)
{
	struct rd_report_site one = { .frames = (struct rd_report_frame *)frames,
				      .nframes = nframes };
	ssize_t h = merge_site_headline(&one);
	const char *file = h >= 0 ? frames[h].file : NULL;
	int64_t line = h >= 0 ? frames[h].line : 0;
	struct rd_report_line *l = NULL, *v;
	size_t at = 0;

	*line_out = line;
	for (; at < rs->nlines; at++) {
		const struct rd_report_line *x = &rs->lines[at];
		int o = !x->file || !file ? (x->file != NULL) - (file != NULL) :
					    strcmp(x->file, file);

		if (o > 0 || (o == 0 && x->line >= line)) {
			if (o == 0 && x->line == line)
				l = &rs->lines[at];
			break;
		}
	}
	if (!l) {
		v = reallocarray(rs->lines, rs->nlines + 1, sizeof(*v));
		if (!v)
			return -ENOMEM;
		rs->lines = v;
		memmove(v + at + 1, v + at, (rs->nlines - at) * sizeof(*v));
		l = &v[at];
		memset(l, 0, sizeof(*l));
		rs->nlines++;
		l->line = line;
		if (file && !(l->file = strdup(file)))
			return -ENOMEM;
	}
	l->growing |= growing;
	if (!add_counters(&l->c, c) || !util_add(&l->at_peak_bytes, at_peak))
		return -EOVERFLOW;
	return 0;
}

/* Leaked bytes, then peak bytes, both descending; of sites tied on both,
 * the one that allocated more bytes, then more often; the key last, so
 * that the order never depends on the order of the inputs. */
static int cmp_sites(const void *pa, const void *pb)
{
	const struct rd_report_site *a = *(struct rd_report_site *const *)pa;
	const struct rd_report_site *b = *(struct rd_report_site *const *)pb;

	if (a->c.live_bytes != b->c.live_bytes)
		return a->c.live_bytes > b->c.live_bytes ? -1 : 1;
	if (a->c.peak_bytes != b->c.peak_bytes)
		return a->c.peak_bytes > b->c.peak_bytes ? -1 : 1;
	if (a->c.allocated_bytes != b->c.allocated_bytes)
		return a->c.allocated_bytes > b->c.allocated_bytes ? -1 : 1;
	if (a->c.allocations != b->c.allocations)
		return a->c.allocations > b->c.allocations ? -1 : 1;
	return strcmp(a->key, b->key);
}

/* P's modules opened for symbolizing (NULL each without S), and which of
 * them is its executable; both arrays are the caller's to free. */
static int process_modules(const struct rd_process *p, struct symbolizer *s,
			   struct sym_module ***modsp, bool **main_exep)
{
	struct sym_module **mods = calloc(p->nmodules + 1, sizeof(*mods));
	bool *main_exe = calloc(p->nmodules + 1, sizeof(*main_exe));

	if (!mods || !main_exe) {
		free(mods);
		free(main_exe);
		return -ENOMEM;
	}
	/* once per module of this process, not per frame */
	for (size_t i = 0; i < p->nmodules; i++) {
		if (s)
			mods[i] = symbolizer_module(s, p->modules[i].path, p->modules[i].build_id);
		/* the process names its executable by the path it names the
		 * module by (both read from /proc/self/exe) */
		main_exe[i] = p->exe && strcmp(p->modules[i].path, p->exe) == 0;
	}
	*modsp = mods;
	*main_exep = main_exe;
	return 0;
}

/* A report site of its own for SITE of P: symbolized, keyed, labelled,
 * with SITE's counters. */
static int make_site(const struct rd_process *p, const struct rd_site *site,
		     struct sym_module **mods, const bool *main_exe, struct rd_report_site **out)
{
	struct rd_report_site *rs = calloc(1, sizeof(*rs));
	int e;

	*out = NULL;
	if (!rs)
		return -ENOMEM;
	e = make_frames(p, site, mods, main_exe, &rs->frames, &rs->nframes, &rs->pool);
	if (e < 0) {
		free(rs);
		return e;
	}
	rs->key = merge_site_key(site->api, rs->frames, rs->nframes);
	rs->api = strdup(site->api);
	if (!rs->key || !rs->api) {
		site_free(rs);
		return -ENOMEM;
	}
	rs->kind = site->kind;
	rs->processes = 1;
	rs->c = site->c;
	if (rs->nframes > 0 || p->depth != 0)
		rs->library = classify_site_library(rs->frames, rs->nframes);
	*out = rs;
	return 0;
}

/* Add P's "at_peak" to the report's: its bytes, and its devices to those
 * of the same ordinal (kept in order); *SITE_BYTES (the caller's to free,
 * NULL when P has none) gets each of P's sites' live bytes at its peak. */
static int merge_at_peak(struct rd_report *r, const struct rd_process *p, int64_t **site_bytes)
{
	const struct rd_at_peak *ap = &p->at_peak;
	int64_t *sb;

	*site_bytes = NULL;
	if (!ap->present)
		return 0;
	r->at_peak = true;
	if (!util_add(&r->at_peak_bytes, ap->bytes))
		return -EOVERFLOW;
	for (size_t i = 0; i < ap->ndevices; i++) {
		const struct rd_peak_device *d = &ap->devices[i];
		size_t k = 0;

		while (k < r->at_peak_ndevices && r->at_peak_devices[k].device < d->device)
			k++;
		if (k == r->at_peak_ndevices || r->at_peak_devices[k].device != d->device) {
			struct rd_peak_device *nd = reallocarray(
				r->at_peak_devices, r->at_peak_ndevices + 1, sizeof(*nd));

			if (!nd)
				return -ENOMEM;
			r->at_peak_devices = nd;
			memmove(nd + k + 1, nd + k, (r->at_peak_ndevices - k) * sizeof(*nd));
			nd[k].device = d->device;
			nd[k].live_bytes = 0;
			r->at_peak_ndevices++;
		}
		if (!util_add(&r->at_peak_devices[k].live_bytes, d->live_bytes))
			return -EOVERFLOW;
	}
	sb = calloc(p->nsites + 1, sizeof(*sb));
	if (!sb)
		return -ENOMEM;
	for (size_t i = 0; i < ap->nsites; i++) {
		if (!util_add(&sb[ap->sites[i].index], ap->sites[i].live_bytes)) {
			free(sb);
			return -EOVERFLOW;
		}
	}
	*site_bytes = sb;
	return 0;
}

/* Add C, a site of process INDEX, to what that process gave merged site
 * RS: a process with two sites of one key (two lines of one function)
 * gives the sum of both. */
static bool add_per_proc(struct rd_report_site *rs, size_t index, const struct rd_counters *c)
{
	return util_add(&rs->per_proc[REPORT_LEAKED][index], c->live_bytes) &&
	       util_add(&rs->per_proc[REPORT_PEAK][index], c->peak_bytes) &&
	       util_add(&rs->per_proc[REPORT_ALLOCATIONS][index], c->allocations);
}

static int merge_process(struct rd_report *r, size_t index, struct symbolizer *s,
			 struct rd_error *err)
{
	const struct rd_process *p = r->procs[index];
	const struct rd_counters *pin = &p->kinds[GS_KIND_PINNED];
	struct sym_module **mods;
	int64_t *at_peak = NULL;
	bool *main_exe;
	int e = 0;

	if (!util_add(&r->leaked_bytes, p->leaked_bytes) ||
	    !util_add(&r->leaked_allocations, p->leaked_allocations) ||
	    !util_add(&r->peak_bytes, p->peak_bytes) ||
	    !util_add(&r->pinned_leaked_bytes, pin->live_bytes) ||
	    !util_add(&r->pinned_leaked_allocations, pin->live_allocations) ||
	    !util_add(&r->pinned_peak_bytes, pin->peak_bytes) ||
	    !util_add(&r->untracked_frees, p->untracked_frees))
		goto overflow;
	if (!util_add(&r->oom_dropped, p->oom_dropped) ||
	    !util_add(&r->folded_sites, p->folded_sites))
		goto overflow;
	for (int k = 0; k < GS_KIND_COUNT; k++)
		if (k != GS_KIND_PINNED &&
		    (!util_add(&r->folded_live_bytes, p->folded[k].c.live_bytes) ||
		     !util_add(&r->folded_live_allocations, p->folded[k].c.live_allocations)))
			goto overflow;
	if (!p->complete)
		r->incomplete++;
	if (p->partial)
		r->partial++;
	e = merge_at_peak(r, p, &at_peak);
	if (e == -EOVERFLOW)
		goto overflow;
	if (e < 0)
		return e;

	e = process_modules(p, s, &mods, &main_exe);
	if (e < 0) {
		free(at_peak);
		return e;
	}
	r->site_of[index] = calloc(p->nsites + 1, sizeof(**r->site_of));
	r->line_of[index] = calloc(p->nsites + 1, sizeof(**r->line_of));
	if (!r->site_of[index] || !r->line_of[index]) {
		free(mods);
		free(main_exe);
		free(at_peak);
		return -ENOMEM;
	}

	for (size_t i = 0; i < p->nsites; i++) {
		const struct rd_site *site = &p->sites[i];
		struct rd_report_frame *frames;
		struct rd_report_site *rs;
		const char *pool;
		size_t nframes;
		char *key;

		e = make_frames(p, site, mods, main_exe, &frames, &nframes, &pool);
		if (e < 0)
			break;
		key = merge_site_key(site->api, frames, nframes);
		if (!key) {
			frames_free(frames, nframes);
			e = -ENOMEM;
			break;
		}
		rs = r->table_size ? *table_slot(r, key) : NULL;
		if (rs) {
			/* the key leaves the allocator's frames out: a process
			 * that ran without the pool (PYTORCH_NO_CUDA_MEMORY_CACHING)
			 * has the same key as one that ran with it, and their
			 * sum is then partly segments */
			if (!rs->pool)
				rs->pool = pool;
			rs->growing |= site->growing;
			rs->flagged |= site->growing || site->growth.present;
			e = merge_frames(rs, frames, nframes);
			if (e == 0)
				e = site_line_add(rs, frames, nframes, &site->c,
						  at_peak ? at_peak[i] : 0, site->growing,
						  &r->line_of[index][i]);
			free(key);
			frames_free(frames, nframes);
			if (e < 0)
				break;
			if (!add_counters(&rs->c, &site->c) ||
			    (at_peak && !util_add(&rs->at_peak_bytes, at_peak[i])) ||
			    !add_per_proc(rs, index, &site->c)) {
				e = -EOVERFLOW;
				break;
			}
			if (rs->last_process != index + 1) {
				rs->processes++;
				rs->last_process = index + 1;
			}
			r->site_of[index][i] = rs;
			continue;
		}
		rs = calloc(1, sizeof(*rs));
		if (!rs || !(rs->api = strdup(site->api)) ||
		    !(rs->per_proc[0] =
			      calloc(REPORT_METRICS * r->nprocs, sizeof(*rs->per_proc[0])))) {
			if (rs)
				free(rs->api);
			free(rs);
			free(key);
			frames_free(frames, nframes);
			e = -ENOMEM;
			break;
		}
		for (int m = 1; m < REPORT_METRICS; m++)
			rs->per_proc[m] = rs->per_proc[0] + m * r->nprocs;
		add_per_proc(rs, index, &site->c);
		rs->key = key;
		rs->kind = site->kind;
		rs->processes = 1;
		rs->last_process = index + 1;
		rs->c = site->c;
		rs->at_peak_bytes = at_peak ? at_peak[i] : 0;
		rs->growing = site->growing;
		rs->flagged = site->growing || site->growth.present;
		rs->frames = frames;
		rs->nframes = nframes;
		rs->pool = pool;
		e = site_line_add(rs, frames, nframes, &site->c, rs->at_peak_bytes, site->growing,
				  &r->line_of[index][i]);
		if (e < 0) {
			site_free(rs);
			break;
		}
		/* judged on the first process's frames: another with the same
		 * key differs at most in noise.  A process that took no stacks
		 * (GPUSPY_DEPTH=0) has sites without frames that are anyone's. */
		if (nframes > 0 || p->depth != 0)
			rs->library = classify_site_library(frames, nframes);
		e = insert_site(r, rs);
		if (e < 0) {
			site_free(rs);
			break;
		}
		r->site_of[index][i] = rs;
	}
	free(mods);
	free(main_exe);
	free(at_peak);
	if (e == -EOVERFLOW)
		goto overflow;
	return e;

overflow:
	rd_error_set(err, p->file,
		     "counters overflow 64 bits when added to the "
		     "reports before it");
	return -EOVERFLOW;
}

/* Whether a site of kind K held memory of the kind an event of kind EV
 * asked for: pinned host memory, or memory on the GPU. */
static bool same_memory(enum gs_kind k, enum gs_kind ev)
{
	return (k == GS_KIND_PINNED) == (ev == GS_KIND_PINNED);
}

static int cmp_key(const void *pa, const void *pb)
{
	return strcmp((*(struct rd_report_site *const *)pa)->key,
		      (*(struct rd_report_site *const *)pb)->key);
}

/* Live bytes descending, then the key. */
static int cmp_live(const void *pa, const void *pb)
{
	const struct rd_report_site *a = *(struct rd_report_site *const *)pa;
	const struct rd_report_site *b = *(struct rd_report_site *const *)pb;

	if (a->c.live_bytes != b->c.live_bytes)
		return a->c.live_bytes > b->c.live_bytes ? -1 : 1;
	return strcmp(a->key, b->key);
}

/* RO's sites of that moment: those of SNAP with live memory of the
 * event's kind, merged by key as the report merges sites, the first
 * REPORT_OOM_TOP by live bytes. */
static int oom_top_sites(struct rd_report_oom *ro, const struct rd_process *snap,
			 struct sym_module **mods, const bool *main_exe, struct rd_error *err)
{
	struct rd_report_site **all = calloc(snap->nsites + 1, sizeof(*all));
	size_t n = 0, m = 0;
	int e = 0;

	if (!all)
		return -ENOMEM;
	for (size_t i = 0; i < snap->nsites && e == 0; i++) {
		const struct rd_site *site = &snap->sites[i];

		if (site->c.live_bytes == 0 || !same_memory(site->kind, ro->ev->kind))
			continue;
		e = make_site(snap, site, mods, main_exe, &all[n]);
		if (e == 0)
			n++;
	}
	if (e == 0 && n > 1)
		qsort(all, n, sizeof(*all), cmp_key);
	/* one entry per key, as in the report */
	for (size_t i = 0; i < n && e == 0; i++) {
		if (m > 0 && strcmp(all[m - 1]->key, all[i]->key) == 0) {
			if (!add_counters(&all[m - 1]->c, &all[i]->c)) {
				rd_error_set(err, snap->file,
					     "counters overflow 64 bits "
					     "when its call sites are added");
				e = -EOVERFLOW;
				break;
			}
			if (!all[m - 1]->pool)
				all[m - 1]->pool = all[i]->pool;
			e = merge_frames(all[m - 1], all[i]->frames, all[i]->nframes);
			site_free(all[i]);
		} else {
			all[m++] = all[i];
		}
		/* moved down or freed: the slot is no longer its own */
		if (i >= m)
			all[i] = NULL;
	}
	if (e < 0) {
		for (size_t i = 0; i < n; i++)
			site_free(all[i]);
		free(all);
		return e;
	}
	if (m > 1)
		qsort(all, m, sizeof(*all), cmp_live);
	for (size_t i = REPORT_OOM_TOP; i < m; i++)
		site_free(all[i]);
	ro->top = all;
	ro->ntop = m < REPORT_OOM_TOP ? m : REPORT_OOM_TOP;
	return 0;
}

/* What the reports say of event O of process P. */
static int build_oom(struct rd_report_oom *ro, const struct rd_process *p, size_t index,
		     const struct rd_oom *o, struct symbolizer *s, struct rd_error *err)
{
	/* the state of that moment when it is at hand, else the report that
	 * holds the event */
	const struct rd_process *src = o->snapshot ? o->snapshot : p;
	int64_t site_id = o->snapshot ? o->snapshot->event.site : o->site;
	struct sym_module **mods;
	bool *main_exe;
	int e;

	memset(ro, 0, sizeof(*ro));
	ro->proc = p;
	ro->proc_index = index;
	ro->ev = o;
	ro->untracked_bytes = -1;
	if (o->free_bytes >= 0 && o->total_bytes >= 0) {
		int64_t used = o->total_bytes > o->free_bytes ? o->total_bytes - o->free_bytes : 0;

		ro->untracked_bytes = used > o->live_bytes ? used - o->live_bytes : 0;
	}
	e = process_modules(src, s, &mods, &main_exe);
	if (e < 0)
		return e;
	/* the loader saw that the id is one of the report's; of two sites
	 * with one id, the first, as the loader takes it */
	for (size_t i = 0; i < src->nsites && e == 0 && !ro->requested; i++)
		if (src->sites[i].id == site_id)
			e = make_site(src, &src->sites[i], mods, main_exe, &ro->requested);
	if (e == 0 && o->snapshot)
		e = oom_top_sites(ro, o->snapshot, mods, main_exe, err);
	free(mods);
	free(main_exe);
	return e;
}

/* By time; events of one moment in the order of the processes, then of
 * their numbers. */
static int cmp_ooms(const void *pa, const void *pb)
{
	const struct rd_report_oom *a = pa, *b = pb;

	if (a->ev->time != b->ev->time)
		return a->ev->time < b->ev->time ? -1 : 1;
	if (a->proc_index != b->proc_index)
		return a->proc_index < b->proc_index ? -1 : 1;
	if (a->ev->number != b->ev->number)
		return a->ev->number < b->ev->number ? -1 : 1;
	return 0;
}

static int build_ooms(struct rd_report *r, struct symbolizer *s, struct rd_error *err)
{
	size_t n = 0;

	for (size_t i = 0; i < r->nprocs; i++)
		n += r->procs[i]->noom;
	if (n == 0)
		return 0;
	r->ooms = calloc(n, sizeof(*r->ooms));
	if (!r->ooms)
		return -ENOMEM;
	for (size_t i = 0; i < r->nprocs; i++) {
		const struct rd_process *p = r->procs[i];

		for (size_t j = 0; j < p->noom; j++) {
			int e = build_oom(&r->ooms[r->nooms], p, i, &p->oom[j], s, err);

			/* counted even when it failed half-way: report_clear
			 * frees what it holds */
			r->nooms++;
			if (e < 0)
				return e;
		}
	}
	qsort(r->ooms, r->nooms, sizeof(*r->ooms), cmp_ooms);
	return 0;
}

static int cmp_i64(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;

	return a < b ? -1 : a > b;
}

int merge_spread(const int64_t *values, size_t n, enum rd_report_metric metric,
		 struct rd_report_spread *out)
{
	/* far enough from the rest to be worth a look: a difference under
	 * 1 MiB (or one allocation) is noise in any real job, and one under
	 * half the median is within what ranks of one job differ by anyway
	 * (an uneven last batch, rank 0's own bookkeeping) */
	int64_t least = metric == REPORT_ALLOCATIONS ? 2 : 1024 * 1024;
	int64_t *sorted, best = -1, lo, hi;
	size_t far = 0;

	out->min = out->median = out->max = 0;
	out->outlier = -1;
	if (n == 0)
		return 0;
	sorted = malloc(n * sizeof(*sorted));
	if (!sorted)
		return -ENOMEM;
	memcpy(sorted, values, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), cmp_i64);
	out->min = sorted[0];
	out->max = sorted[n - 1];
	lo = sorted[(n - 1) / 2];
	hi = sorted[n / 2];
	/* counters are never negative: neither wraps, and the division of
	 * a non-negative difference rounds down */
	out->median = lo + (hi - lo) / 2;
	free(sorted);
	/* of two, neither is farther from their median than the other */
	if (n < 3)
		return 0;
	for (size_t i = 0; i < n; i++) {
		int64_t d = values[i] >= out->median ? values[i] - out->median :
						       out->median - values[i];

		/* strictly farther: of those tied, the first is named */
		if (d > best) {
			best = d;
			far = i;
		}
	}
	/* "at least half the median" without rounding half of an odd
	 * median down */
	if (best >= least && best >= out->median / 2 + out->median % 2)
		out->outlier = (ssize_t)far;
	return 0;
}

int merge_site_spread(const struct rd_report *r, const struct rd_report_site *s,
		      enum rd_report_metric metric, struct rd_report_spread *out)
{
	return merge_spread(s->per_proc[metric], r->nprocs, metric, out);
}

/* The lines of S as the naming rule weighs them, into *OUT (the caller's
 * to free); none for a site of one line. */
static int lines_view(const struct rd_report_site *s, struct sitename_line **out)
{
	struct sitename_line *l;

	*out = NULL;
	if (s->nlines < 2)
		return 0;
	l = calloc(s->nlines, sizeof(*l));
	if (!l)
		return -ENOMEM;
	for (size_t i = 0; i < s->nlines; i++)
		l[i] = (struct sitename_line){
			.line = s->lines[i].line,
			.growing = s->lines[i].growing,
			.live_bytes = s->lines[i].c.live_bytes,
			.peak_bytes = s->lines[i].c.peak_bytes,
		};
	*out = l;
	return 0;
}

/* SITES[0..N-1] as the naming rule takes them, into *VIEW (its frames and
 * lines allocated with it; site_views_free). */
static int site_views(struct rd_report_site *const *sites, size_t n, struct sitename_site **view)
{
	struct sitename_site *v = calloc(n + 1, sizeof(*v));
	int e = v ? 0 : -ENOMEM;

	for (size_t i = 0; i < n && e == 0; i++) {
		const struct rd_report_site *s = sites[i];
		struct sitename_frame *f = calloc(s->nframes + 1, sizeof(*f));
		struct sitename_line *l;

		if (!f) {
			e = -ENOMEM;
			break;
		}
		merge_frames_view(s->frames, s->nframes, f);
		v[i].frames = f;
		v[i].nframes = s->nframes;
		v[i].api = s->api;
		e = lines_view(s, &l);
		v[i].lines = l;
		v[i].nlines = l ? s->nlines : 0;
	}
	*view = v;
	return e;
}

static void site_views_free(struct sitename_site *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++) {
		free((void *)v[i].frames);
		free((void *)v[i].lines);
	}
	free(v);
}

/* Each site's one name, told apart from the others of the report. */
static int name_sites(struct rd_report *r)
{
	struct sitename_site *v;
	char **names = calloc(r->nsites + 1, sizeof(*names));
	int e = names ? site_views(r->sites, r->nsites, &v) : -ENOMEM;

	if (e == 0)
		e = sitename_names(v, r->nsites, names);
	if (names && e == 0)
		for (size_t i = 0; i < r->nsites; i++)
			r->sites[i]->name = names[i];
	if (names)
		site_views_free(v, r->nsites);
	free(names);
	return e;
}

/* An out-of-memory event's site: the report's name for the same key, else
 * a name of its own. */
static int name_oom_site(struct rd_report *r, struct rd_report_site *s)
{
	struct rd_report_site *same = r->table_size ? *table_slot(r, s->key) : NULL;
	struct sitename_site *v;
	int e;

	if (same) {
		s->name = strdup(same->name);
		return s->name ? 0 : -ENOMEM;
	}
	e = site_views(&s, 1, &v);
	if (e == 0) {
		size_t len = sitename_name(NULL, 0, v);

		s->name = malloc(len + 1);
		if (s->name)
			sitename_name(s->name, len + 1, v);
		else
			e = -ENOMEM;
	}
	site_views_free(v, 1);
	return e;
}

static int name_ooms(struct rd_report *r)
{
	int e = 0;

	for (size_t i = 0; i < r->nooms && e == 0; i++) {
		struct rd_report_oom *ro = &r->ooms[i];

		if (ro->requested)
			e = name_oom_site(r, ro->requested);
		for (size_t j = 0; j < ro->ntop && e == 0; j++)
			e = name_oom_site(r, ro->top[j]);
		if (e == 0)
			e = oom_verdict_build(ro);
	}
	return e;
}

/* The processes' own totals, side by side, and the spreads of those and
 * of every site. */
static int build_spreads(struct rd_report *r)
{
	size_t n = r->nprocs;
	int e;

	r->totals[0] = calloc(REPORT_METRICS * n + 1, sizeof(*r->totals[0]));
	if (!r->totals[0])
		return -ENOMEM;
	for (int m = 1; m < REPORT_METRICS; m++)
		r->totals[m] = r->totals[0] + m * n;
	for (size_t i = 0; i < n; i++) {
		const struct rd_process *p = r->procs[i];
		int64_t allocs = 0;

		r->totals[REPORT_LEAKED][i] = p->leaked_bytes;
		r->totals[REPORT_PEAK][i] = p->peak_bytes;
		/* every kind, pinned included, as the sites count them; a
		 * count beyond 64 bits stops there rather than wrap */
		for (int k = 0; k < GS_KIND_COUNT; k++)
			if (__builtin_add_overflow(allocs, p->kinds[k].allocations, &allocs))
				allocs = INT64_MAX;
		r->totals[REPORT_ALLOCATIONS][i] = allocs;
		if (strcmp(p->host, r->procs[0]->host) != 0)
			r->several_hosts = true;
	}
	for (int m = 0; m < REPORT_METRICS; m++) {
		e = merge_spread(r->totals[m], n, m, &r->spread[m]);
		if (e < 0)
			return e;
		for (size_t i = 0; i < r->nsites; i++) {
			e = merge_site_spread(r, r->sites[i], m, &r->sites[i]->spread[m]);
			if (e < 0)
				return e;
		}
	}
	return 0;
}

const char *merge_metric_name(enum rd_report_metric metric)
{
	static const char *const names[REPORT_METRICS] = {
		[REPORT_LEAKED] = "leaked",
		[REPORT_PEAK] = "peak",
		[REPORT_ALLOCATIONS] = "allocations",
	};

	return names[metric];
}

const char *merge_metric_value(enum rd_report_metric metric, int64_t v, char *buf, size_t size)
{
	if (metric == REPORT_ALLOCATIONS) {
		snprintf(buf, size, "%" PRId64, v);
		return buf;
	}
	return util_human_size(v, buf, size);
}

const char *merge_process_name(const struct rd_report *r, size_t i, char *buf, size_t size)
{
	const struct rd_process *p = r->procs[i];
	int n;

	/* the rank is what people call the processes of a distributed job
	 * by; a pid only tells them apart */
	if (p->rank >= 0)
		n = snprintf(buf, size, "rank %" PRId64, p->rank);
	else
		n = snprintf(buf, size, "pid %" PRId64, p->pid);
	/* LOCAL_RANK repeats on every node, and pids may */
	if (r->several_hosts && n >= 0 && (size_t)n < size)
		snprintf(buf + n, size - n, " on %s", p->host);
	util_sanitize(buf);
	return buf;
}

int merge_build(struct rd_report *r, const struct rd_process_list *list, struct symbolizer *s,
		struct rd_error *err)
{
	int e;

	memset(r, 0, sizeof(*r));
	r->procs = list->items;
	r->nprocs = list->n;
	r->unreadable = list->unreadable;
	r->nunreadable = list->nunreadable;
	r->site_of = calloc(list->n + 1, sizeof(*r->site_of));
	r->line_of = calloc(list->n + 1, sizeof(*r->line_of));
	if (!r->site_of || !r->line_of) {
		rd_error_set(err, NULL, "out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < list->n; i++) {
		e = merge_process(r, i, s, err);
		if (e < 0) {
			if (e == -ENOMEM)
				rd_error_set(err, NULL, "out of memory");
			merge_clear(r);
			return e;
		}
	}
	if (r->nsites > 1)
		qsort(r->sites, r->nsites, sizeof(*r->sites), cmp_sites);
	for (size_t i = 0; i < r->nsites; i++) {
		struct rd_report_site *rs = r->sites[i];

		rs->number = i + 1;
		rs->stopped = rs->flagged && !rs->growing;
		/* what the pools' segments still hold is the framework's cache,
		 * not the program's leak (folded sites count as the program's) */
		if (rs->pool && rs->kind != GS_KIND_PINNED && rs->c.live_bytes > 0) {
			for (size_t k = 0; classify_pool_label(k); k++)
				if (classify_pool_label(k) == rs->pool)
					util_add_sat(&r->pool_bytes[k], rs->c.live_bytes);
			util_add_sat(&r->pool_held_bytes, rs->c.live_bytes);
			util_add_sat(&r->pool_held_allocations, rs->c.live_allocations);
		}
	}
	e = name_sites(r);
	if (e < 0) {
		rd_error_set(err, NULL, "out of memory");
		merge_clear(r);
		return e;
	}
	e = torch_merge_build(&r->torch, r->procs, r->nprocs);
	if (e < 0) {
		rd_error_set(err, NULL,
			     e == -ENOMEM ? "out of memory" :
					    "the PyTorch views' counters overflow 64 bits");
		merge_clear(r);
		return e;
	}
	e = build_spreads(r);
	if (e == 0)
		e = build_ooms(r, s, err);
	if (e == 0)
		e = name_ooms(r);
	if (e < 0) {
		if (e == -ENOMEM)
			rd_error_set(err, NULL, "out of memory");
		merge_clear(r);
		return e;
	}
	return 0;
}

int64_t merge_spread_width(const struct rd_report_site *s, enum rd_report_metric m)
{
	return s->spread[m].max - s->spread[m].min;
}

/* By spread: how far apart the processes are on leaked bytes, then on
 * peak bytes; then as the report orders sites (leaked, peak, key), so
 * that sites the processes agree on still come biggest first. */
static int cmp_spread(const void *pa, const void *pb)
{
	const struct rd_report_site *a = *(struct rd_report_site *const *)pa;
	const struct rd_report_site *b = *(struct rd_report_site *const *)pb;

	for (int m = REPORT_LEAKED; m <= REPORT_PEAK; m++)
		if (merge_spread_width(a, m) != merge_spread_width(b, m))
			return merge_spread_width(a, m) > merge_spread_width(b, m) ? -1 : 1;
	if (a->c.live_bytes != b->c.live_bytes)
		return a->c.live_bytes > b->c.live_bytes ? -1 : 1;
	if (a->c.peak_bytes != b->c.peak_bytes)
		return a->c.peak_bytes > b->c.peak_bytes ? -1 : 1;
	return strcmp(a->key, b->key);
}

int merge_by_spread(const struct rd_report *r, struct rd_report_site ***out)
{
	struct rd_report_site **order = malloc((r->nsites + 1) * sizeof(*order));

	*out = order;
	if (!order)
		return -ENOMEM;
	memcpy(order, r->sites, r->nsites * sizeof(*order));
	if (r->nsites > 1)
		qsort(order, r->nsites, sizeof(*order), cmp_spread);
	return 0;
}
