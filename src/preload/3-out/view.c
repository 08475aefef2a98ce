/* SPDX-License-Identifier: MIT */
/*
 * What one file describes, read once (see view.h), and bounded whatever
 * the number of call sites: a process with a million sites writes the
 * few thousand a reader looks at in full and sums the rest per kind.
 *
 * A site is listed when it ranks among the GPUSPY_MAX_SITES largest by
 * live bytes (what is held now, the leaks at exit), by its own peak, by
 * allocations (the busiest), or among the growing ones by live bytes;
 * when it is among the GPUSPY_MAX_SITES largest of what was live at the
 * process's peak, or among the GPUSPY_MAX_SITES / 16 largest at one of
 * the marks kept; or when an out-of-memory event names it.  at_peak and
 * each mark list their own largest and fold the rest likewise.
 *
 * Cost: two walks of the sites (rank, then list or fold), O(sites log N)
 * with bounded heaps, never a sort of every site.  The peak's list and
 * each mark's never change once taken: each is ranked once, when a file
 * first shows it, and costs O(N) per file after.  Every call is under
 * gs_events_lock, which also guards the buffers kept here between calls.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "files.h"
#include "locks.h"
#include "log.h"
#include "names.h"
#include "site_walk.h"
#include "sites.h"
#include "view.h"
#include "vmm.h"

/* At each mark: the largest GPUSPY_MAX_SITES / MARK_SHARE. */
#define MARK_SHARE 16

enum { BY_LIVE, BY_PEAK, BY_ALLOCS, BY_GROWING, RANKINGS };

struct pick {
	long long key;
	uint32_t id;
};

/* A min-heap of the CAP largest keys offered. */
struct heap {
	struct pick *p;
	unsigned n, cap;
};

/* Under gs_events_lock. */
static struct pick *rank_buf; /* RANKINGS heaps of rank_cap */
static unsigned rank_cap;
static uint8_t *chosen; /* by site id: listed in the file being taken */
static size_t chosen_cap;
static uint32_t *ids; /* the ids set in chosen, to clear them after */
static size_t n_ids, ids_cap;
static struct gs_top peak_top; /* of the peak snapshot taken at peak_top_time */
static struct site_walk walk;
static double peak_top_time;

static void view_read(struct gs_view *view)
{
	view->gpu_live = view->gpu_allocs = 0;
	for (int k = 0; k < GS_KIND_COUNT; k++) {
		counters_read(&gs_totals.kind[k], &view->kind[k]);
		if (k == GS_KIND_PINNED)
			continue;
		view->gpu_live += view->kind[k].live_bytes;
		view->gpu_allocs += view->kind[k].live_allocs;
	}
	view->gpu_peak = atomic_load(&gs_totals.gpu_peak_bytes);
	if (view->gpu_peak < view->gpu_live)
		view->gpu_peak = view->gpu_live;
}

/* The smaller key; of two equal, the newer site, so that older ones stay. */
static bool below(const struct pick *a, const struct pick *b)
{
	return a->key != b->key ? a->key < b->key : a->id > b->id;
}

static void heap_offer(struct heap *h, long long key, uint32_t id)
{
	struct pick x = { key, id };
	unsigned i;

	if (key <= 0 || h->cap == 0)
		return;
	if (h->n < h->cap) {
		for (i = h->n++; i && below(&x, &h->p[(i - 1) / 2]); i = (i - 1) / 2)
			h->p[i] = h->p[(i - 1) / 2];
		h->p[i] = x;
		return;
	}
	if (!below(&h->p[0], &x))
		return;
	for (i = 0;;) {
		unsigned l = 2 * i + 1, m = l;

		if (l >= h->n)
			break;
		if (l + 1 < h->n && below(&h->p[l + 1], &h->p[l]))
			m = l + 1;
		if (!below(&h->p[m], &x))
			break;
		h->p[i] = h->p[m];
		i = m;
	}
	h->p[i] = x;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct gs_peak_site *x = a, *y = b;

	if (x->live_bytes != y->live_bytes)
		return x->live_bytes < y->live_bytes ? 1 : -1;
	return x->site < y->site ? -1 : x->site > y->site;
}

/* T: the K largest entries of LIST, most first, and the rest summed; all
 * of them, in their order, when they are K or fewer or K is 0.  Without
 * memory, T lists none: all folded. */
static void top_of(const struct gs_peak_site *list, unsigned n, unsigned k, struct gs_top *t)
{
	unsigned keep = k == 0 || n <= k ? n : k;
	struct heap h = { NULL, 0, keep };

	memset(t, 0, sizeof(*t));
	t->taken = true;
	t->folded = n;
	for (unsigned i = 0; i < n; i++)
		t->folded_live += list[i].live_bytes;
	if (keep == 0)
		return;
	t->top = malloc(keep * sizeof(*t->top));
	h.p = keep < n ? malloc(keep * sizeof(*h.p)) : NULL;
	if (!t->top || (keep < n && !h.p)) {
		free(t->top);
		free(h.p);
		t->top = NULL;
		return;
	}
	if (keep == n) {
		memcpy(t->top, list, n * sizeof(*list));
		t->ntop = n;
		t->folded = 0;
		t->folded_live = 0;
		return;
	}
	for (unsigned i = 0; i < n; i++)
		heap_offer(&h, list[i].live_bytes, list[i].site);
	for (unsigned i = 0; i < h.n; i++) {
		t->top[i] = (struct gs_peak_site){ h.p[i].id, h.p[i].key };
		t->folded_live -= h.p[i].key;
	}
	free(h.p);
	t->ntop = h.n;
	t->folded = n - h.n;
	qsort(t->top, t->ntop, sizeof(*t->top), cmp_entry);
}

static int choose(uint32_t id)
{
	if (id >= chosen_cap || chosen[id])
		return 0;
	if (n_ids == ids_cap) {
		size_t cap = ids_cap ? 2 * ids_cap : 4096;
		uint32_t *m = realloc(ids, cap * sizeof(*ids));

		if (!m)
			return -ENOMEM;
		ids = m;
		ids_cap = cap;
	}
	chosen[id] = 1;
	ids[n_ids++] = id;
	return 0;
}

static int choose_top(const struct gs_top *t)
{
	int err = 0;

	for (unsigned i = 0; i < t->ntop && !err; i++)
		err = choose(t->top[i].site);
	return err;
}

/* The peak's figures, and its largest sites ranked once per snapshot. */
static void take_peak(struct gs_view *v)
{
	const struct gs_peak_snap *p;

	gs_lock(&gs_peak_lock);
	p = peak_snapshot();
	if (p) {
		/* without memory for its top, all of it is folded */
		if (!peak_top.taken || p->time != peak_top_time) {
			free(peak_top.top);
			top_of(p->sites, p->n, gs_config.max_sites, &peak_top);
			peak_top_time = p->time;
		}
		v->has_peak = true;
		v->peak = *p;
		v->peak.sites = peak_top.top;
		v->peak.n = peak_top.ntop;
		v->peak_folded = peak_top.folded;
		v->peak_folded_live = peak_top.folded_live;
	}
	gs_unlock(&gs_peak_lock);
}

/* Which sites the file lists. */
static int rank(struct gs_view *v)
{
	unsigned max = gs_config.max_sites, mark_k = max / MARK_SHARE ? max / MARK_SHARE : 1;
	unsigned oldest = v->n_marks > GS_MARKS ? v->n_marks - GS_MARKS : 0;
	/* no heap holds more than there are sites */
	unsigned n = max < walk.n ? max : walk.n;
	struct heap h[RANKINGS];
	int err = 0;

	if (n > rank_cap) {
		unsigned cap = n + n / 2 < max ? n + n / 2 : max;
		struct pick *m = realloc(rank_buf, (size_t)RANKINGS * cap * sizeof(*m));

		if (!m)
			return -ENOMEM;
		rank_buf = m;
		rank_cap = cap;
	}
	for (int r = 0; r < RANKINGS; r++)
		h[r] = (struct heap){ n ? rank_buf + (size_t)r * n : NULL, 0, n };
	for (unsigned i = 0; i < walk.n; i++) {
		struct gs_site *s = site_walk_at(&walk, i);
		long long live;

		if (!s)
			continue;
		live = counters_live_bytes(&s->c);

		heap_offer(&h[BY_LIVE], live, s->id);
		heap_offer(&h[BY_PEAK],
			   atomic_load_explicit(&s->c.peak_bytes, memory_order_relaxed), s->id);
		heap_offer(&h[BY_ALLOCS], atomic_load_explicit(&s->c.allocs, memory_order_relaxed),
			   s->id);
		/* growing, or grew and then stopped: what the rule said is
		 * in the files */
		if (atomic_load_explicit(&s->growth_told, memory_order_relaxed))
			heap_offer(&h[BY_GROWING], live > 0 ? live + 1 : 1, s->id);
	}
	for (int r = 0; r < RANKINGS && !err; r++)
		for (unsigned i = 0; i < h[r].n && !err; i++)
			err = choose(h[r].p[i].id);
	if (!err && v->has_peak)
		err = choose_top(&peak_top);
	for (unsigned i = oldest; i < v->n_marks && !err; i++) {
		struct gs_mark *m = &v->marks[i % GS_MARKS];

		if (!m->sites)
			continue;
		/* a mark never changes: ranked once (all folded without the
		 * memory to rank it) */
		if (!m->shown.taken)
			top_of(m->sites, m->n, mark_k, &m->shown);
		err = choose_top(&m->shown);
	}
	for (unsigned i = 0; i < v->n_ooms && !err; i++)
		err = choose(v->ooms[i].site);
	if (!err && v->event)
		err = choose(v->event->site);
	return err;
}

static void fold(struct gs_view *v, struct gs_site *s)
{
	struct gs_folded *f = &v->folded[s->kind];
	struct gs_count_snap c;

	counters_read(&s->c, &c);
	f->sites++;
	f->growing += atomic_load_explicit(&s->growing, memory_order_relaxed);
	f->c.live_bytes += c.live_bytes;
	f->c.live_allocs += c.live_allocs;
	f->c.peak_bytes += c.peak_bytes;
	f->c.alloc_bytes += c.alloc_bytes;
	f->c.allocs += c.allocs;
	f->c.freed_bytes += c.freed_bytes;
	f->c.frees += c.frees;
	v->n_folded++;
}

static int cmp_live(const void *a, const void *b)
{
	const struct gs_site *x = *(struct gs_site *const *)a, *y = *(struct gs_site *const *)b;
	long long lx = counters_live_bytes(&x->c), ly = counters_live_bytes(&y->c);
	long long px = atomic_load(&x->c.peak_bytes), py = atomic_load(&y->c.peak_bytes);

	if (lx != ly)
		return lx < ly ? 1 : -1;
	if (px != py)
		return px < py ? 1 : -1;
	return x->id < y->id ? -1 : x->id > y->id;
}

int view_take(struct gs_view *v)
{
	bool bounded = gs_config.max_sites > 0;
	unsigned count;
	int err;

	view_read(v);
	/* The peak first, then the sites: every site the peak names is
	 * among them. */
	take_peak(v);
	err = site_walk_refresh(&walk);
	count = walk.n;
	if (!err && bounded && chosen_cap < count) {
		size_t cap = count + count / 2 + 1024;
		uint8_t *m = realloc(chosen, cap);

		if (!m) {
			err = -ENOMEM;
		} else {
			memset(m + chosen_cap, 0, cap - chosen_cap);
			chosen = m;
			chosen_cap = cap;
		}
	}
	if (!err && bounded)
		err = rank(v);
	v->sites = err ? NULL : calloc((bounded ? n_ids : count) + 1, sizeof(*v->sites));
	if (!v->sites) {
		for (size_t i = 0; i < n_ids; i++)
			chosen[ids[i]] = 0;
		n_ids = 0;
		gs_warn("out of memory writing a report");
		return -ENOMEM;
	}
	for (unsigned i = 0; i < count; i++) {
		struct gs_site *s = site_walk_at(&walk, i);

		if (!s)
			continue;
		v->n_all++;
		if (!bounded || (s->id < chosen_cap && chosen[s->id]))
			v->sites[v->n++] = s;
		else
			fold(v, s);
	}
	for (size_t i = 0; i < n_ids; i++)
		chosen[ids[i]] = 0;
	n_ids = 0;
	if (!bounded) {
		/* every mark shows all its sites */
		unsigned oldest = v->n_marks > GS_MARKS ? v->n_marks - GS_MARKS : 0;

		for (unsigned i = oldest; i < v->n_marks; i++) {
			struct gs_mark *m = &v->marks[i % GS_MARKS];

			if (m->sites && !m->shown.taken)
				top_of(m->sites, m->n, 0, &m->shown);
		}
	}
	qsort(v->sites, v->n, sizeof(*v->sites), cmp_live);

	names_host(v->host, sizeof(v->host));
	/* created and checked by files_write(), at each write */
	files_process_dir(v->dir, sizeof(v->dir));
	return 0;
}

void view_drop(struct gs_view *v)
{
	free(v->sites);
	v->sites = NULL;
	free(v->live);
	v->live = NULL;
	free(v->trace);
	v->trace = NULL;
}

static int cmp_key(const void *a, const void *b)
{
	const struct gs_live *x = a, *y = b;

	if (x->space != y->space)
		return x->space < y->space ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The VMM entries of a view, sorted by key, to be given their address. */
struct vmm_keys {
	struct gs_live *v;
	size_t n;
	uint64_t *va; /* by entry; the lowest mapping's address */
};

static void mapped_at(uint64_t va, uint64_t size, enum gs_space space, uint64_t key, void *arg)
{
	struct vmm_keys *k = arg;
	struct gs_live want = { .addr = key, .space = (uint8_t)space };
	struct gs_live *e = bsearch(&want, k->v, k->n, sizeof(*k->v), cmp_key);

	(void)size;
	if (e && (k->va[e - k->v] == 0 || va < k->va[e - k->v]))
		k->va[e - k->v] = va;
}

void view_take_exit(struct gs_view *v)
{
	struct gs_live *all = NULL;
	size_t n = 0, keep = 0, nvmm = 0;
	struct vmm_keys k = { 0 };

	if (table_copy(&all, &n) < 0)
		goto oom;
	/* GPU memory only: pinned host memory occupies no device */
	for (size_t i = 0; i < n; i++)
		if (all[i].kind != GS_KIND_PINNED)
			all[keep++] = all[i];
	n = keep;
	/* a VMM handle is no address: its mapping's is (vmm.c); an empty
	 * table is no array at all */
	if (n > 1)
		qsort(all, n, sizeof(*all), cmp_key);
	for (size_t i = 0; i < n; i++)
		if (all[i].space == GS_SPACE_HANDLE || all[i].space == GS_SPACE_ORPHAN) {
			if (!nvmm)
				k.v = &all[i];
			nvmm++;
		}
	if (nvmm) {
		k.n = nvmm;
		k.va = calloc(nvmm, sizeof(*k.va));
		if (!k.va)
			goto oom;
		vmm_each_mapping(mapped_at, &k);
		for (size_t i = 0; i < nvmm; i++)
			k.v[i].addr = k.va[i];
		free(k.va);
	}
	for (size_t i = GS_LIVE_LISTED; i < n; i++) {
		v->live_left_out++;
		v->live_left_out_bytes += all[i].size;
	}
	v->live = all;
	v->n_live = n < GS_LIVE_LISTED ? n : GS_LIVE_LISTED;
	all = NULL;
	if (trace_capacity()) {
		v->trace = malloc(trace_capacity() * sizeof(*v->trace));
		if (!v->trace)
			goto oom;
		v->n_trace = trace_read(v->trace, &v->trace_recorded);
		v->trace_capacity = trace_capacity();
	}
	v->exit_taken = true;
	return;
oom:
	free(all);
	free(v->live);
	v->live = NULL;
	v->n_live = 0;
	gs_warn("out of memory listing the live allocations at exit: no " GS_FILE_ALLOCATIONS);
}
