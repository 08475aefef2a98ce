/* SPDX-License-Identifier: MIT */
/*
 * Merging process reports into one "gpuspy-report/1", and printing it as
 * JSON or as text for people.
 *
 * Call sites are matched across processes on their symbolized frames
 * (module basename and function), never on addresses: the same code loaded
 * at another address, or in another run, must land in the same site.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "merge.h"
#include "util.h"

#define FORMAT_REPORT "gpuspy-report/1"

const char *report_human_size(int64_t bytes, char *buf, size_t size)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double v = (double)bytes;
	int u = -1;

	if (bytes < 1024 && bytes > -1024) {
		snprintf(buf, size, "%" PRId64 " B", bytes);
		return buf;
	}
	while (u < 5 && (v >= 1024.0 || v <= -1024.0)) {
		v /= 1024.0;
		u++;
	}
	/* 1023.96 KiB would print as "1024.0 KiB"; say "1.0 MiB" instead */
	if (u < 5 && (v >= 1023.95 || v <= -1023.95)) {
		v /= 1024.0;
		u++;
	}
	snprintf(buf, size, "%.1f %s", v, units[u]);
	return buf;
}

char *report_site_key(const char *api, const struct rd_report_frame *frames, size_t nframes)
{
	char *buf = NULL;
	size_t len = 0;
	bool first = true;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	fputs(api, f);
	putc('|', f);
	for (size_t i = 0; i < nframes; i++) {
		const struct rd_report_frame *fr = &frames[i];

		/* noise is the same for every site of its kind, and may differ
		 * between versions of the driver, the interpreter, the
		 * framework: it would only split sites that are one */
		if (fr->noise != NOISE_NONE)
			continue;
		if (!first)
			putc(';', f);
		first = false;
		if (fr->python) {
			/* the file's basename: the same script run from another
			 * checkout is the same code; no line, which moves with
			 * every edit above it */
			fputs(fr->file ? util_basename(fr->file) : "?", f);
			fprintf(f, "!%s", fr->function ? fr->function : "?");
			continue;
		}
		fputs(fr->module ? fr->module : "?", f);
		/* an address outside any module is absolute, and would make
		 * the key differ in every process: only its name, if any */
		if (fr->function)
			fprintf(f, "!%s", fr->function);
		else if (fr->module)
			fprintf(f, "+0x%" PRIx64, fr->offset);
	}
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

ssize_t report_site_headline(const struct rd_report_site *s)
{
	/* the user's own Python line says most ... */
	for (size_t i = 0; i < s->nframes; i++)
		if (s->frames[i].python && s->frames[i].user)
			return (ssize_t)i;
	/* ... else the innermost native code that is not machinery, in a
	 * module if there is one (an address outside any module names
	 * nothing to open) */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < s->nframes; i++)
			if (!s->frames[i].python && s->frames[i].noise == NOISE_NONE &&
			    (pass == 1 || s->frames[i].module))
				return (ssize_t)i;
	return s->nframes > 0 ? 0 : -1;
}

static void frames_free(struct rd_report_frame *frames, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(frames[i].function);
		free(frames[i].module);
		free(frames[i].file);
		free(frames[i].build_id);
	}
	free(frames);
}

static void site_free(struct rd_report_site *s)
{
	if (!s)
		return;
	free(s->key);
	free(s->api);
	frames_free(s->frames, s->nframes);
	/* one block for every metric */
	free(s->per_proc[0]);
	free(s);
}

void report_clear(struct rd_report *r)
{
	for (size_t i = 0; i < r->nooms; i++) {
		struct rd_report_oom *ro = &r->ooms[i];

		site_free(ro->requested);
		for (size_t j = 0; j < ro->ntop; j++)
			site_free(ro->top[j]);
		free(ro->top);
	}
	free(r->ooms);
	for (size_t i = 0; i < r->nsites; i++)
		site_free(r->sites[i]);
	free(r->sites);
	free(r->table);
	free(r->at_peak_devices);
	report_torch_clear(&r->torch);
	free(r->totals[0]);
	for (size_t i = 0; r->site_of && i < r->nprocs; i++)
		free(r->site_of[i]);
	free(r->site_of);
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

/* Where a site's Python frames go among its native ones (innermost first):
 * just before the innermost frame of CPython's evaluation loop, which is
 * where the interpreter ran them; failing that, before the innermost frame
 * of the interpreter at all; failing that (a stack cut short by the depth
 * limit), after the native frames. */
static size_t python_position(const struct rd_report_frame *native, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (native[i].function &&
		    strcmp(native[i].function, "_PyEval_EvalFrameDefault") == 0)
			return i;
	for (size_t i = 0; i < n; i++)
		if (classify_python_module(native[i].module))
			return i;
	return n;
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

static void merge_frame(struct rd_report_frame *f, const struct rd_report_frame *other)
{
	if (f->file && (!other->file || strcmp(f->file, other->file) != 0)) {
		free(f->file);
		f->file = NULL;
	}
	if (f->line != other->line)
		f->line = 0;
}

/* Two call sites with one key are calls from the same functions, perhaps
 * from other lines (a function that calls cudaMalloc twice) or another
 * version of the file: a line or file that differs is dropped rather than
 * shown as if it held for all of them. */
static void merge_frames(struct rd_report_site *rs, const struct rd_report_frame *frames, size_t n)
{
	size_t i = 0, j = 0;
	bool same_shape = rs->nframes == n;

	for (size_t k = 0; same_shape && k < n; k++)
		same_shape =
			(rs->frames[k].noise != NOISE_NONE) == (frames[k].noise != NOISE_NONE) &&
			rs->frames[k].python == frames[k].python;
	if (same_shape) {
		for (size_t k = 0; k < n; k++)
			merge_frame(&rs->frames[k], &frames[k]);
		return;
	}
	/* The key leaves noise out, so the stacks may differ there (another
	 * driver, another Python): the frames that made the key are paired
	 * in order, and noise frames, which cannot be paired, lose what may
	 * not hold for all.  A function name holding ';' can still make the
	 * counts differ: pairing stops at the shorter. */
	for (;;) {
		while (i < rs->nframes && rs->frames[i].noise != NOISE_NONE) {
			merge_frame(&rs->frames[i], &(struct rd_report_frame){ 0 });
			i++;
		}
		while (j < n && frames[j].noise != NOISE_NONE)
			j++;
		if (i >= rs->nframes || j >= n)
			break;
		merge_frame(&rs->frames[i++], &frames[j++]);
	}
	for (; i < rs->nframes; i++)
		if (rs->frames[i].noise != NOISE_NONE)
			merge_frame(&rs->frames[i], &(struct rd_report_frame){ 0 });
}

/* Leaked bytes, then peak bytes, both descending; the key last, so that
 * the order never depends on the order of the inputs. */
static int cmp_sites(const void *pa, const void *pb)
{
	const struct rd_report_site *a = *(struct rd_report_site *const *)pa;
	const struct rd_report_site *b = *(struct rd_report_site *const *)pb;

	if (a->c.live_bytes != b->c.live_bytes)
		return a->c.live_bytes > b->c.live_bytes ? -1 : 1;
	if (a->c.peak_bytes != b->c.peak_bytes)
		return a->c.peak_bytes > b->c.peak_bytes ? -1 : 1;
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
	rs->key = report_site_key(site->api, rs->frames, rs->nframes);
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
	const struct rd_counters *pin = &p->kinds[RD_KIND_PINNED];
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
	if (!util_add(&r->oom_dropped, p->oom_dropped))
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
	if (e == 0 && !(r->site_of[index] = calloc(p->nsites + 1, sizeof(**r->site_of))))
		e = -ENOMEM;
	if (e < 0) {
		free(at_peak);
		return e;
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
		key = report_site_key(site->api, frames, nframes);
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
			merge_frames(rs, frames, nframes);
			free(key);
			frames_free(frames, nframes);
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
		rs->frames = frames;
		rs->nframes = nframes;
		rs->pool = pool;
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
static bool same_memory(enum rd_kind k, enum rd_kind ev)
{
	return (k == RD_KIND_PINNED) == (ev == RD_KIND_PINNED);
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
			merge_frames(all[m - 1], all[i]->frames, all[i]->nframes);
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
	/* the loader saw that the id is one of the report's */
	for (size_t i = 0; i < src->nsites && e == 0; i++)
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

int report_spread(const int64_t *values, size_t n, enum rd_report_metric metric,
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

int report_site_spread(const struct rd_report *r, const struct rd_report_site *s,
		       enum rd_report_metric metric, struct rd_report_spread *out)
{
	return report_spread(s->per_proc[metric], r->nprocs, metric, out);
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
		for (int k = 0; k < RD_KIND_COUNT; k++)
			if (__builtin_add_overflow(allocs, p->kinds[k].allocations, &allocs))
				allocs = INT64_MAX;
		r->totals[REPORT_ALLOCATIONS][i] = allocs;
		if (strcmp(p->host, r->procs[0]->host) != 0)
			r->several_hosts = true;
	}
	for (int m = 0; m < REPORT_METRICS; m++) {
		e = report_spread(r->totals[m], n, m, &r->spread[m]);
		if (e < 0)
			return e;
		for (size_t i = 0; i < r->nsites; i++) {
			e = report_site_spread(r, r->sites[i], m, &r->sites[i]->spread[m]);
			if (e < 0)
				return e;
		}
	}
	return 0;
}

const char *report_metric_name(enum rd_report_metric metric)
{
	static const char *const names[REPORT_METRICS] = {
		[REPORT_LEAKED] = "leaked",
		[REPORT_PEAK] = "peak",
		[REPORT_ALLOCATIONS] = "allocations",
	};

	return names[metric];
}

const char *report_metric_value(enum rd_report_metric metric, int64_t v, char *buf, size_t size)
{
	if (metric == REPORT_ALLOCATIONS) {
		snprintf(buf, size, "%" PRId64, v);
		return buf;
	}
	return report_human_size(v, buf, size);
}

const char *report_process_name(const struct rd_report *r, size_t i, char *buf, size_t size)
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

void report_print_spread(FILE *out, const struct rd_report *r, enum rd_report_metric metric,
			 const struct rd_report_spread *sp, const int64_t *values)
{
	char a[32], b[32], c[32], name[REPORT_NAME_SIZE];

	fprintf(out, "min %s, median %s, max %s",
		report_metric_value(metric, sp->min, a, sizeof(a)),
		report_metric_value(metric, sp->median, b, sizeof(b)),
		report_metric_value(metric, sp->max, c, sizeof(c)));
	if (sp->outlier >= 0)
		fprintf(out, "; outlier: %s (%s)",
			report_process_name(r, sp->outlier, name, sizeof(name)),
			report_metric_value(metric, values[sp->outlier], a, sizeof(a)));
}

int report_build(struct rd_report *r, const struct rd_process_list *list, struct symbolizer *s,
		 struct rd_error *err)
{
	int e;

	memset(r, 0, sizeof(*r));
	r->procs = list->items;
	r->nprocs = list->n;
	r->site_of = calloc(list->n + 1, sizeof(*r->site_of));
	if (!r->site_of) {
		rd_error_set(err, NULL, "out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < list->n; i++) {
		e = merge_process(r, i, s, err);
		if (e < 0) {
			if (e == -ENOMEM)
				rd_error_set(err, NULL, "out of memory");
			report_clear(r);
			return e;
		}
	}
	if (r->nsites > 1)
		qsort(r->sites, r->nsites, sizeof(*r->sites), cmp_sites);
	e = report_torch_build(&r->torch, r->procs, r->nprocs);
	if (e < 0) {
		rd_error_set(err, NULL,
			     e == -ENOMEM ? "out of memory" :
					    "the PyTorch views' counters overflow 64 bits");
		report_clear(r);
		return e;
	}
	e = build_spreads(r);
	if (e == 0)
		e = build_ooms(r, s, err);
	if (e < 0) {
		if (e == -ENOMEM)
			rd_error_set(err, NULL, "out of memory");
		report_clear(r);
		return e;
	}
	return 0;
}

/* JSON */

static json_t *counts_json(const char *k1, int64_t v1, const char *k2, int64_t v2)
{
	json_t *o = json_object();

	json_object_set_new(o, k1, json_integer(v1));
	if (k2)
		json_object_set_new(o, k2, json_integer(v2));
	return o;
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
	json_object_set_new(o, "kind", json_string(f->python ? "python" : "native"));
	if (!f->python)
		json_object_set_new(o, "offset", json_integer((json_int_t)f->offset));
	if (f->build_id)
		json_object_set_new(o, "build_id", json_string(f->build_id));
	if (f->noise != NOISE_NONE)
		json_object_set_new(o, "noise", json_true());
	return o;
}

json_t *report_frame_json(const struct rd_report_frame *f)
{
	return frame_json(f);
}

json_t *report_spread_json(const struct rd_report_spread *sp)
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
json_t *report_spreads_json(const struct rd_report_spread *sp)
{
	json_t *o = json_object();

	for (int m = 0; m < REPORT_METRICS; m++)
		json_object_set_new(o, report_metric_name(m), report_spread_json(&sp[m]));
	return o;
}

static json_t *site_json(const struct rd_report *r, const struct rd_report_site *s)
{
	json_t *o = json_object();
	json_t *frames = json_array();
	ssize_t headline = report_site_headline(s);

	json_object_set_new(o, "key", json_string(s->key));
	json_object_set_new(o, "kind", json_string(rd_kind_name(s->kind)));
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
	json_object_set_new(o, "allocated_bytes", json_integer(s->c.allocated_bytes));
	json_object_set_new(o, "allocations", json_integer(s->c.allocations));
	json_object_set_new(o, "freed_bytes", json_integer(s->c.freed_bytes));
	json_object_set_new(o, "frees", json_integer(s->c.frees));
	/* with one process there is nothing to spread */
	if (r->nprocs > 1)
		json_object_set_new(o, "spread", report_spreads_json(s->spread));
	if (headline >= 0)
		json_object_set_new(o, "headline", frame_json(&s->frames[headline]));
	for (size_t i = 0; i < s->nframes; i++)
		json_array_append_new(frames, frame_json(&s->frames[i]));
	json_object_set_new(o, "frames", frames);
	return o;
}

static json_t *process_json(const struct rd_process *p)
{
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
	if (p->partial) {
		json_object_set_new(o, "partial", json_true());
		json_object_set_new(o, "report", json_string(p->file));
	}
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
	if (p->python.present) {
		json_t *py = json_object();

		json_object_set_new(py, "version", json_string(p->python.version));
		json_object_set_new(py, "supported", json_boolean(p->python.supported));
		if (p->python.note)
			json_object_set_new(py, "note", json_string(p->python.note));
		json_object_set_new(o, "python", py);
	}
	return o;
}

static json_t *oom_site_json(const struct rd_report_site *s)
{
	json_t *o = json_object();
	ssize_t headline = report_site_headline(s);

	json_object_set_new(o, "key", json_string(s->key));
	if (s->library)
		json_object_set_new(o, "library", json_string(s->library));
	if (s->pool)
		json_object_set_new(o, "pool", json_string(s->pool));
	json_object_set_new(o, "live_bytes", json_integer(s->c.live_bytes));
	if (headline >= 0)
		json_object_set_new(o, "headline", frame_json(&s->frames[headline]));
	return o;
}

static json_t *oom_json(const struct rd_report_oom *ro)
{
	const struct rd_oom *ev = ro->ev;
	json_t *o = json_object();
	json_t *top = json_array();
	ssize_t headline = ro->requested ? report_site_headline(ro->requested) : -1;

	json_object_set_new(o, "process", json_string(ro->proc->path));
	json_object_set_new(o, "pid", json_integer(ro->proc->pid));
	json_object_set_new(o, "number", json_integer(ev->number));
	json_object_set_new(o, "time", json_real(ev->time));
	json_object_set_new(o, "api", json_string(ev->api));
	json_object_set_new(o, "kind", json_string(rd_kind_name(ev->kind)));
	json_object_set_new(o, "requested_bytes", json_integer(ev->requested_bytes));
	json_object_set_new(o, "device", json_integer(ev->device));
	json_object_set_new(o, "live_bytes", json_integer(ev->live_bytes));
	json_object_set_new(o, "free_bytes", json_integer(ev->free_bytes));
	json_object_set_new(o, "total_bytes", json_integer(ev->total_bytes));
	if (ro->untracked_bytes >= 0)
		json_object_set_new(o, "untracked_bytes", json_integer(ro->untracked_bytes));
	if (headline >= 0)
		json_object_set_new(o, "requested_by",
				    frame_json(&ro->requested->frames[headline]));
	for (size_t i = 0; i < ro->ntop; i++)
		json_array_append_new(top, oom_site_json(ro->top[i]));
	json_object_set_new(o, "top_sites", top);
	return o;
}

int report_print_json(const struct rd_report *r, FILE *out, size_t top)
{
	json_t *root = json_object();
	json_t *procs = json_array();
	json_t *sites = json_array();
	json_t *ooms = json_array();
	json_t *pinned;
	size_t n = top && top < r->nsites ? top : r->nsites;
	int e = 0;

	if (!root || !procs || !sites || !ooms) {
		e = -ENOMEM;
		goto out;
	}
	/* jansson keeps insertion order: the keys come out as in
	 * docs/format.md, the same every time */
	json_object_set_new(root, "format", json_string(FORMAT_REPORT));
	for (size_t i = 0; i < r->nprocs; i++)
		json_array_append_new(procs, process_json(r->procs[i]));
	json_object_set(root, "processes", procs);
	json_object_set_new(
		root, "leaked",
		counts_json("bytes", r->leaked_bytes, "allocations", r->leaked_allocations));
	json_object_set_new(root, "peak", counts_json("bytes", r->peak_bytes, NULL, 0));
	if (r->nprocs > 1)
		json_object_set_new(root, "spread", report_spreads_json(r->spread));
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
	pinned = counts_json("leaked_bytes", r->pinned_leaked_bytes, "leaked_allocations",
			     r->pinned_leaked_allocations);
	json_object_set_new(pinned, "peak_bytes", json_integer(r->pinned_peak_bytes));
	json_object_set_new(root, "pinned", pinned);
	json_object_set_new(root, "untracked_frees", json_integer(r->untracked_frees));
	for (size_t i = 0; i < r->nooms; i++)
		json_array_append_new(ooms, oom_json(&r->ooms[i]));
	json_object_set(root, "oom", ooms);
	json_object_set_new(root, "oom_dropped", json_integer(r->oom_dropped));
	if (r->torch.present)
		json_object_set_new(root, "torch", report_torch_json(&r->torch, top));
	for (size_t i = 0; i < n; i++)
		json_array_append_new(sites, site_json(r, r->sites[i]));
	json_object_set(root, "sites", sites);
	/* a part that could not be allocated is simply missing: check the
	 * arrays kept the count they should have */
	if (json_array_size(procs) != r->nprocs || json_array_size(sites) != n ||
	    json_array_size(ooms) != r->nooms ||
	    json_object_size(root) !=
		    9 + (size_t)r->at_peak + (r->nprocs > 1) + (size_t)r->torch.present) {
		e = -ENOMEM;
		goto out;
	}
	if (json_dumpf(root, out, JSON_INDENT(2)) < 0 || putc('\n', out) == EOF)
		e = -EIO;
out:
	json_decref(procs);
	json_decref(sites);
	json_decref(ooms);
	json_decref(root);
	return e;
}

/* Text, in the manner of heaptrack_print: a summary, then the call sites
 * that matter most from three points of view. */

static const char *plural(int64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* One frame on one line: "function (module) file:line" for native code,
 * "function (python) file:line" for Python. */
static void print_frame(FILE *out, const struct rd_report_frame *f)
{
	if (f->function) {
		util_put_clean(out, f->function);
		if (f->python) {
			fputs(" (python)", out);
		} else if (f->module) {
			fputs(" (", out);
			util_put_clean(out, f->module);
			putc(')', out);
		}
	} else if (f->module) {
		util_put_clean(out, f->module);
		fprintf(out, "+0x%" PRIx64, f->offset);
	} else {
		fprintf(out, "0x%" PRIx64, f->offset);
	}
	if (f->file) {
		putc(' ', out);
		util_put_clean(out, f->file);
		if (f->line > 0)
			fprintf(out, ":%" PRId64, f->line);
	}
	putc('\n', out);
}

void report_print_frame(FILE *out, const struct rd_report_frame *f)
{
	print_frame(out, f);
}

static void print_folded(FILE *out, size_t *folded)
{
	/* \u2026 is an ellipsis */
	if (*folded)
		fprintf(out, "    \u2026 %zu %s folded\n", *folded,
			*folded == 1 ? "frame" : "frames");
	*folded = 0;
}

/* The headline, then the stack with its noise folded: a run of noise
 * frames is one line saying how many there were (the JSON keeps them). */
static void print_frames(FILE *out, const struct rd_report_site *s)
{
	ssize_t headline = report_site_headline(s);
	size_t folded = 0;

	if (s->nframes == 0) {
		fputs("    (no stack)\n", out);
		return;
	}
	fputs("  at ", out);
	print_frame(out, &s->frames[headline]);
	for (size_t i = 0; i < s->nframes; i++) {
		const struct rd_report_frame *f = &s->frames[i];
		/* what runs main (__libc_start_main, _start) is the same for
		 * every site and tells nothing; the JSON keeps it */
		bool last = !f->python && f->function && strcmp(f->function, "main") == 0;

		if (f->noise != NOISE_NONE) {
			folded++;
		} else {
			print_folded(out, &folded);
			fputs("    ", out);
			print_frame(out, f);
		}
		if (last)
			break;
	}
	print_folded(out, &folded);
}

static void print_site_origin(FILE *out, const struct rd_report_site *s)
{
	fputs("by ", out);
	util_put_clean(out, s->api);
	fprintf(out, " (%s)", rd_kind_name(s->kind));
	if (s->processes > 1)
		fprintf(out, " in %" PRId64 " processes", s->processes);
	if (s->library)
		fprintf(out, " [library memory: %s]", s->library);
	if (s->pool)
		fprintf(out, " [pool segment: %s]", s->pool);
	if (s->growing)
		fputs(" [growing]", out);
}

enum section { SEC_GROWING, SEC_LEAKED, SEC_PINNED, SEC_AT_PEAK, SEC_PEAK, SEC_CALLS };

static bool in_section(enum section sec, const struct rd_report_site *s)
{
	switch (sec) {
	case SEC_GROWING:
		return s->growing;
	case SEC_LEAKED:
		return s->kind != RD_KIND_PINNED && s->c.live_bytes > 0;
	case SEC_PINNED:
		return s->kind == RD_KIND_PINNED && s->c.live_bytes > 0;
	case SEC_AT_PEAK:
		return s->at_peak_bytes > 0;
	case SEC_PEAK:
		return s->c.peak_bytes > 0;
	case SEC_CALLS:
		return s->c.allocations > 0;
	}
	return false;
}

static int cmp_peak(const void *pa, const void *pb)
{
	const struct rd_report_site *a = *(struct rd_report_site *const *)pa;
	const struct rd_report_site *b = *(struct rd_report_site *const *)pb;

	if (a->c.peak_bytes != b->c.peak_bytes)
		return a->c.peak_bytes > b->c.peak_bytes ? -1 : 1;
	return strcmp(a->key, b->key);
}

static int cmp_at_peak(const void *pa, const void *pb)
{
	const struct rd_report_site *a = *(struct rd_report_site *const *)pa;
	const struct rd_report_site *b = *(struct rd_report_site *const *)pb;

	if (a->at_peak_bytes != b->at_peak_bytes)
		return a->at_peak_bytes > b->at_peak_bytes ? -1 : 1;
	return strcmp(a->key, b->key);
}

/* "at the peak: X live (within 1% of the peak), device 0: Y, ...". */
static void print_at_peak_line(FILE *out, const struct rd_report *r)
{
	char a[32];

	fprintf(out, "  at the peak: %s live (%s), ",
		report_human_size(r->at_peak_bytes, a, sizeof(a)),
		r->nprocs > 1 ? "sum over processes, each within 1% of its peak" :
				"within 1% of the peak");
	for (size_t i = 0; i < r->at_peak_ndevices; i++) {
		const struct rd_peak_device *d = &r->at_peak_devices[i];

		if (i)
			fputs(", ", out);
		if (d->device >= 0)
			fprintf(out, "device %" PRId64 ": ", d->device);
		else
			fputs("unknown device: ", out);
		fputs(report_human_size(d->live_bytes, a, sizeof(a)), out);
	}
	if (r->at_peak_ndevices == 0)
		fputs("no device", out);
	putc('\n', out);
}

static int cmp_calls(const void *pa, const void *pb)
{
	const struct rd_report_site *a = *(struct rd_report_site *const *)pa;
	const struct rd_report_site *b = *(struct rd_report_site *const *)pb;

	if (a->c.allocations != b->c.allocations)
		return a->c.allocations > b->c.allocations ? -1 : 1;
	return strcmp(a->key, b->key);
}

/* With several processes, how the section's figure of S is spread over
 * them: one process far from the others (a rank that leaks, a worker that
 * peaks) is what to look at first. */
static void print_site_spread(FILE *out, const struct rd_report *r, enum section sec,
			      const struct rd_report_site *s)
{
	enum rd_report_metric m;

	if (r->nprocs < 2)
		return;
	switch (sec) {
	case SEC_LEAKED:
	case SEC_PINNED:
		m = REPORT_LEAKED;
		break;
	case SEC_PEAK:
		m = REPORT_PEAK;
		break;
	case SEC_CALLS:
		m = REPORT_ALLOCATIONS;
		break;
	default:
		return;
	}
	fprintf(out, "    across %zu processes: ", r->nprocs);
	report_print_spread(out, r, m, &s->spread[m], s->per_proc[m]);
	putc('\n', out);
}

static void print_section(FILE *out, const struct rd_report *r, enum section sec, const char *title,
			  struct rd_report_site **order, size_t top)
{
	size_t total = 0, shown = 0;
	char a[32], b[32];

	for (size_t i = 0; i < r->nsites; i++)
		total += in_section(sec, order[i]);
	if ((sec == SEC_PINNED || sec == SEC_GROWING) && total == 0)
		return;
	if (sec == SEC_AT_PEAK && !r->at_peak)
		return;
	fprintf(out, "\n%s", title);
	if (top && total > top)
		fprintf(out, " (top %zu of %zu call sites)", top, total);
	fputs("\n", out);
	if (sec == SEC_AT_PEAK)
		print_at_peak_line(out, r);
	if (total == 0) {
		fputs(sec == SEC_LEAKED ? "  nothing leaked\n" : "  none\n", out);
		return;
	}
	for (size_t i = 0; i < r->nsites && (!top || shown < top); i++) {
		const struct rd_report_site *s = order[i];

		if (!in_section(sec, s))
			continue;
		shown++;
		switch (sec) {
		case SEC_GROWING:
			fprintf(out, "%s live in %" PRId64 " %s, ",
				report_human_size(s->c.live_bytes, a, sizeof(a)),
				s->c.live_allocations,
				plural(s->c.live_allocations, "allocation", "allocations"));
			break;
		case SEC_LEAKED:
		case SEC_PINNED:
			fprintf(out, "%s leaked in %" PRId64 " %s, ",
				report_human_size(s->c.live_bytes, a, sizeof(a)),
				s->c.live_allocations,
				plural(s->c.live_allocations, "allocation", "allocations"));
			break;
		case SEC_AT_PEAK:
			fprintf(out, "%s live at the peak, %s peak, ",
				report_human_size(s->at_peak_bytes, a, sizeof(a)),
				report_human_size(s->c.peak_bytes, b, sizeof(b)));
			break;
		case SEC_PEAK:
			fprintf(out, "%s peak, %s allocated in %" PRId64 " %s, ",
				report_human_size(s->c.peak_bytes, a, sizeof(a)),
				report_human_size(s->c.allocated_bytes, b, sizeof(b)),
				s->c.allocations,
				plural(s->c.allocations, "allocation", "allocations"));
			break;
		case SEC_CALLS:
			fprintf(out, "%" PRId64 " %s of %s in total, %s peak, ", s->c.allocations,
				plural(s->c.allocations, "allocation", "allocations"),
				report_human_size(s->c.allocated_bytes, a, sizeof(a)),
				report_human_size(s->c.peak_bytes, b, sizeof(b)));
			break;
		}
		print_site_origin(out, s);
		putc('\n', out);
		print_site_spread(out, r, sec, s);
		print_frames(out, s);
	}
}

static void print_process(FILE *out, const struct rd_process *p)
{
	char a[32], b[32];

	fputs("  ", out);
	util_put_clean(out, p->path);
	fprintf(out, ": pid %" PRId64 " on ", p->pid);
	util_put_clean(out, p->host);
	/* what the spread lines name the process by */
	if (p->rank >= 0)
		fprintf(out, ", rank %" PRId64, p->rank);
	fprintf(out, ", leaked %s in %" PRId64 ", peak %s%s\n",
		report_human_size(p->leaked_bytes, a, sizeof(a)), p->leaked_allocations,
		report_human_size(p->peak_bytes, b, sizeof(b)), p->complete ? "" : " (incomplete)");
	if (p->ncommand > 0) {
		fputs("    $", out);
		for (size_t i = 0; i < p->ncommand; i++) {
			putc(' ', out);
			util_put_clean(out, p->command[i]);
		}
		putc('\n', out);
	}
	if (p->partial) {
		/* a directory's report.json is read first: when it was not,
		 * there was none */
		fputs("    partial: ", out);
		if (strcmp(p->path, p->file) != 0)
			fputs("no report.json (the process did not exit normally); read ", out);
		util_put_clean(out, util_basename(p->file));
		if (p->event.number > 0) {
			fprintf(out,
				", the state at out-of-memory event %" PRId64 ", not at exit\n",
				p->event.number);
		} else {
			if (!p->snapshot.present)
				fputs(", the state at that snapshot", out);
			else if (p->snapshot.periodic)
				fputs(", the state at its last periodic snapshot", out);
			else
				fprintf(out, ", the state at on-demand snapshot %" PRId64,
					p->snapshot.number);
			if (p->snapshot.label) {
				fputs(" \"", out);
				util_put_clean(out, p->snapshot.label);
				putc('"', out);
			}
			if (p->start_time >= 0 && p->end_time >= p->start_time)
				fprintf(out, ", %.1f s after it started",
					p->end_time - p->start_time);
			fputs(", not at exit\n", out);
		}
	}
	/* Inside (what gpuspy tracked) beside outside (what NVML, like
	 * nvidia-smi, says each process holds). */
	for (size_t i = 0; i < p->outside.ngpus; i++) {
		const struct rd_outside_gpu *g = &p->outside.gpus[i];

		fprintf(out, "    GPU %" PRId64 " (NVML): %s of %s used", g->index,
			report_human_size(g->used_bytes, a, sizeof(a)),
			report_human_size(g->total_bytes, b, sizeof(b)));
		for (size_t k = 0; k < g->nprocs; k++) {
			const struct rd_outside_proc *q = &g->procs[k];

			fprintf(out, "%s pid %" PRId64 " %s", k ? "," : ";", q->pid,
				report_human_size(q->used_bytes, a, sizeof(a)));
			if (q->pid == p->pid)
				fprintf(out,
					" (this process: gpuspy tracked %s, the rest is its "
					"context and memory gpuspy did not see)",
					report_human_size(p->leaked_bytes, b, sizeof(b)));
		}
		putc('\n', out);
	}
	if (p->python.present) {
		fputs("    Python ", out);
		util_put_clean(out, p->python.version);
		if (!p->python.supported) {
			fputs(": no Python frames", out);
			if (p->python.note) {
				fputs(" (", out);
				util_put_clean(out, p->python.note);
				putc(')', out);
			}
		}
		putc('\n', out);
	}
}

/* Leaked memory that libraries hold (a cuBLAS workspace, an NCCL
 * communicator, the CUDA context) apart from what the program's own code
 * leaked: the first is usually meant to live as long as the process. */
static void print_library_summary(FILE *out, const struct rd_report *r)
{
	const char *labels[16];
	size_t nlabels = 0;
	int64_t lib_bytes = 0, lib_allocs = 0, user_bytes = 0, user_allocs = 0;
	char a[32];

	for (size_t i = 0; i < r->nsites; i++) {
		const struct rd_report_site *s = r->sites[i];
		size_t k;

		if (s->kind == RD_KIND_PINNED || s->c.live_bytes == 0)
			continue;
		if (!s->library) {
			util_add_sat(&user_bytes, s->c.live_bytes);
			util_add_sat(&user_allocs, s->c.live_allocations);
			continue;
		}
		util_add_sat(&lib_bytes, s->c.live_bytes);
		util_add_sat(&lib_allocs, s->c.live_allocations);
		for (k = 0; k < nlabels; k++)
			if (strcmp(labels[k], s->library) == 0)
				break;
		if (k == nlabels && nlabels < sizeof(labels) / sizeof(labels[0]))
			labels[nlabels++] = s->library;
	}
	if (lib_bytes == 0)
		return;
	fprintf(out, "    user code:      %s in %" PRId64 " %s\n",
		report_human_size(user_bytes, a, sizeof(a)), user_allocs,
		plural(user_allocs, "allocation", "allocations"));
	fputs("    library memory (", out);
	for (size_t k = 0; k < nlabels; k++)
		fprintf(out, "%s%s", k ? ", " : "", labels[k]);
	fprintf(out, "): %s in %" PRId64 " %s\n", report_human_size(lib_bytes, a, sizeof(a)),
		lib_allocs, plural(lib_allocs, "allocation", "allocations"));
}

/* Which pools' sites the sections show (their first TOP sites each):
 * SEEN[i] for classify_pool_label(i). */
static void mark_pools(const struct rd_report *r, enum section sec, struct rd_report_site **order,
		       size_t top, bool *seen, size_t nseen)
{
	size_t shown = 0;

	for (size_t i = 0; i < r->nsites && (!top || shown < top); i++) {
		const struct rd_report_site *s = order[i];

		if (!in_section(sec, s))
			continue;
		shown++;
		for (size_t k = 0; s->pool && k < nseen; k++)
			if (classify_pool_label(k) == s->pool)
				seen[k] = true;
	}
}

/* One line per pool whose segments the report shows: what its sites are,
 * and how to get one site per tensor where the framework can. */
static void print_pool_hints(FILE *out, const struct rd_report *r,
			     struct rd_report_site **by_at_peak, struct rd_report_site **by_peak,
			     struct rd_report_site **by_calls, size_t top)
{
	bool seen[8] = { false };
	size_t n = 0;
	bool first = true;

	while (n < sizeof(seen) / sizeof(seen[0]) && classify_pool_label(n))
		n++;
	mark_pools(r, SEC_GROWING, r->sites, top, seen, n);
	mark_pools(r, SEC_LEAKED, r->sites, top, seen, n);
	mark_pools(r, SEC_PINNED, r->sites, top, seen, n);
	if (r->at_peak)
		mark_pools(r, SEC_AT_PEAK, by_at_peak, top, seen, n);
	mark_pools(r, SEC_PEAK, by_peak, top, seen, n);
	mark_pools(r, SEC_CALLS, by_calls, top, seen, n);
	for (size_t k = 0; k < n; k++) {
		if (!seen[k])
			continue;
		fprintf(out, "  %-18s%s: %s\n", first ? "pool segments:" : "",
			classify_pool_label(k), classify_pool_hint(classify_pool_label(k)));
		first = false;
	}
}

/* A site as "SIZE by API at HEADLINE", with its labels. */
static void print_oom_site(FILE *out, const struct rd_report_site *s)
{
	ssize_t headline = report_site_headline(s);
	char a[32];

	fprintf(out, "    %s by ", report_human_size(s->c.live_bytes, a, sizeof(a)));
	util_put_clean(out, s->api);
	if (s->library)
		fprintf(out, " [library memory: %s]", s->library);
	if (s->pool)
		fprintf(out, " [pool segment: %s]", s->pool);
	if (headline < 0) {
		fputs(" (no stack)\n", out);
		return;
	}
	fputs(" at ", out);
	print_frame(out, &s->frames[headline]);
}

/* One event: what failed and what the device held, who asked, and what
 * was live at that moment. */
static void print_oom(FILE *out, const struct rd_report *r, const struct rd_report_oom *ro,
		      size_t top)
{
	const struct rd_oom *ev = ro->ev;
	const struct rd_process *p = ro->proc;
	size_t n = top && top < ro->ntop ? top : ro->ntop;
	ssize_t headline;
	char a[32], b[32], c[32];

	if (r->nprocs > 1) {
		util_put_clean(out, p->path);
		putc(' ', out);
	}
	if (p->start_time >= 0 && ev->time >= p->start_time)
		fprintf(out, "+%.1f s", ev->time - p->start_time);
	else
		fprintf(out, "event %" PRId64, ev->number);
	fputs(": ", out);
	util_put_clean(out, ev->api);
	fprintf(out, " of %s", report_human_size(ev->requested_bytes, a, sizeof(a)));
	if (ev->kind == RD_KIND_PINNED)
		fputs(" of pinned host memory", out);
	else if (ev->device >= 0)
		fprintf(out, " on device %" PRId64, ev->device);
	else
		fputs(" on an unknown device", out);
	fprintf(out, " failed: tracked live %s", report_human_size(ev->live_bytes, a, sizeof(a)));
	if (ro->untracked_bytes >= 0)
		fprintf(out, ", device free %s of %s, not seen by gpuspy %s\n",
			report_human_size(ev->free_bytes, a, sizeof(a)),
			report_human_size(ev->total_bytes, b, sizeof(b)),
			report_human_size(ro->untracked_bytes, c, sizeof(c)));
	else
		fputs(", device free and total unknown\n", out);

	headline = ro->requested ? report_site_headline(ro->requested) : -1;
	fputs("  requested by ", out);
	if (headline >= 0)
		print_frame(out, &ro->requested->frames[headline]);
	else
		fputs("(no stack)\n", out);

	if (!ev->file) {
		fputs("  (no post-mortem file: what was live then is unknown)\n", out);
		return;
	}
	if (!ev->snapshot) {
		fputs("  (", out);
		util_put_clean(out, ev->file);
		fputs(" is gone: what was live then is unknown)\n", out);
		return;
	}
	fprintf(out, "  largest live %s at that moment:%s\n",
		ev->kind == RD_KIND_PINNED ? "pinned host memory" : "on the GPU",
		n == 0 ? " none" : "");
	for (size_t i = 0; i < n; i++)
		print_oom_site(out, ro->top[i]);
}

static void print_ooms(FILE *out, const struct rd_report *r, size_t top)
{
	if (r->nooms == 0 && r->oom_dropped == 0)
		return;
	fputs("\nOUT OF MEMORY\n", out);
	for (size_t i = 0; i < r->nooms; i++)
		print_oom(out, r, &r->ooms[i], top);
	if (r->oom_dropped > 0)
		fprintf(out, "\u2026 and %" PRId64 " more %s, counted but not recorded\n",
			r->oom_dropped, plural(r->oom_dropped, "event", "events"));
}

int report_print_text(const struct rd_report *r, FILE *out, size_t top)
{
	struct rd_report_site **by_at_peak = NULL, **by_peak = NULL, **by_calls = NULL;
	char a[32], b[32];

	if (r->nsites > 0) {
		by_at_peak = malloc(r->nsites * sizeof(*by_at_peak));
		by_peak = malloc(r->nsites * sizeof(*by_peak));
		by_calls = malloc(r->nsites * sizeof(*by_calls));
		if (!by_at_peak || !by_peak || !by_calls) {
			free(by_at_peak);
			free(by_peak);
			free(by_calls);
			return -ENOMEM;
		}
		memcpy(by_at_peak, r->sites, r->nsites * sizeof(*by_at_peak));
		memcpy(by_peak, r->sites, r->nsites * sizeof(*by_peak));
		memcpy(by_calls, r->sites, r->nsites * sizeof(*by_calls));
	}
	if (r->nsites > 1) {
		qsort(by_at_peak, r->nsites, sizeof(*by_at_peak), cmp_at_peak);
		qsort(by_peak, r->nsites, sizeof(*by_peak), cmp_peak);
		qsort(by_calls, r->nsites, sizeof(*by_calls), cmp_calls);
	}

	fprintf(out, "gpuspy report: %zu %s, %zu call %s\n", r->nprocs,
		plural(r->nprocs, "process", "processes"), r->nsites,
		plural(r->nsites, "site", "sites"));

	fputs("\nSUMMARY\n", out);
	fprintf(out,
		"  leaked at exit:   %s in %" PRId64 " %s (%" PRId64
		" bytes of device, managed and VMM memory)\n",
		report_human_size(r->leaked_bytes, a, sizeof(a)), r->leaked_allocations,
		plural(r->leaked_allocations, "allocation", "allocations"), r->leaked_bytes);
	print_library_summary(out, r);
	fprintf(out, "  peak:             %s%s\n", report_human_size(r->peak_bytes, a, sizeof(a)),
		r->nprocs > 1 ? " (sum of each process's peak)" : "");
	if (r->nprocs > 1) {
		fputs("  per process:      leaked ", out);
		report_print_spread(out, r, REPORT_LEAKED, &r->spread[REPORT_LEAKED],
				    r->totals[REPORT_LEAKED]);
		fputs("\n                    peak ", out);
		report_print_spread(out, r, REPORT_PEAK, &r->spread[REPORT_PEAK],
				    r->totals[REPORT_PEAK]);
		putc('\n', out);
	}
	fprintf(out, "  pinned host:      %s leaked in %" PRId64 " %s, peak %s\n",
		report_human_size(r->pinned_leaked_bytes, a, sizeof(a)),
		r->pinned_leaked_allocations,
		plural(r->pinned_leaked_allocations, "allocation", "allocations"),
		report_human_size(r->pinned_peak_bytes, b, sizeof(b)));
	fprintf(out, "  untracked frees:  %" PRId64 "\n", r->untracked_frees);
	if (r->incomplete)
		fprintf(out,
			"  warning: %zu %s stopped tracking early; %s figures are a lower bound\n",
			r->incomplete, plural(r->incomplete, "process", "processes"),
			plural(r->incomplete, "its", "their"));
	{
		size_t growing = 0;

		for (size_t i = 0; i < r->nsites; i++)
			growing += r->sites[i]->growing;
		if (growing)
			fprintf(out,
				"  growing:          %zu call %s keep%s growing (see GROWTH SUSPECTS)\n",
				growing, plural(growing, "site", "sites"), growing == 1 ? "s" : "");
	}
	if (r->partial)
		fprintf(out,
			"  warning: %zu %s read from a snapshot or an out-of-memory post-mortem, not from a report at exit; %s figures are those of that moment\n",
			r->partial, plural(r->partial, "process is", "processes are"),
			plural(r->partial, "its", "their"));
	print_pool_hints(out, r, by_at_peak, by_peak, by_calls, top);
	report_torch_print_summary(out, &r->torch);

	print_ooms(out, r, top);
	/* by live bytes: what a growing site holds now */
	print_section(out, r, SEC_GROWING, "GROWTH SUSPECTS", r->sites, top);
	report_torch_print_text(out, &r->torch, top);

	fputs("\nPROCESSES\n", out);
	for (size_t i = 0; i < r->nprocs; i++)
		print_process(out, r->procs[i]);

	print_section(out, r, SEC_LEAKED, "LEAKED AT EXIT", r->sites, top);
	print_section(out, r, SEC_PINNED, "PINNED HOST MEMORY LEAKED AT EXIT", r->sites, top);
	print_section(out, r, SEC_AT_PEAK, "LIVE AT PEAK", by_at_peak, top);
	print_section(out, r, SEC_PEAK, "PEAK CONSUMERS", by_peak, top);
	print_section(out, r, SEC_CALLS, "MOST ALLOCATIONS", by_calls, top);
	free(by_at_peak);
	free(by_peak);
	free(by_calls);
	return ferror(out) ? -EIO : 0;
}
