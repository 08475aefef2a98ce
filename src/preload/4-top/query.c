/* SPDX-License-Identifier: MIT */
/*
 * The live figures of the public API (include/gpuspy.h): the totals, the
 * scopes, the sites ranked with their one names, the frameworks' counters.
 *
 * On the caller's thread, against allocations on any other, and never in
 * their way: the counters are read lock-free, as a mark copies them
 * (events_mark); the names under gs_names_lock, which the naming pass
 * holds (site_names.c); the verdicts and the frameworks' figures under
 * gs_events_lock, as the files read them.  An allocation takes none of
 * these.
 *
 * A scope keeps what each site held when it opened, by site id, and a
 * peak of its own.  The peak every allocation raises is one (peak.c,
 * peak_local): a scope opening resets it, after folding what it reached
 * into every scope already open, so that scopes nest and overlap and each
 * sees the highest live bytes since its own opening.  The list of open
 * scopes is under gs_api_lock, which a query holds while it reads one's
 * copy (a close from another thread waits).
 *
 * The names are the report's, made on the snapshot thread.  A site new
 * since its last pass has none yet: the query asks that thread for a pass
 * and waits for it, a bounded time, holding no lock; past that the site
 * comes with a provisional name.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core.h"
#include "counters.h"
#include "fw_counters.h"
#include "gpuspy.h"
#include "locks.h"
#include "names.h"
#include "peak.h"
#include "pools.h"
#include "query.h"
#include "site_names.h"
#include "sitename.h"
#include "sites.h"
#include "state.h"
#include "summary.h"
#include "symbols.h"
#include "trend.h"
#include "unwind.h"
#include "utf8.h"
#include "writer.h"

/* A structure's size as the caller gives it: at least a byte, and not so
 * large that it can only be garbage (a newer gpuspy.h adds a few fields). */
#define SIZE_MAX_ACCEPTED 65536

/* FULL (LEN bytes) into OUT of SIZE: as much as fits, the rest zero. */
static void give(void *out, size_t size, const void *full, size_t len)
{
	memcpy(out, full, size < len ? size : len);
	if (size > len)
		memset((char *)out + len, 0, size - len);
}

static bool size_ok(const void *out, size_t size)
{
	return out && size > 0 && size <= SIZE_MAX_ACCEPTED;
}

/* SRC into DST of SIZE (> 0), cut after a whole UTF-8 sequence. */
static void text_copy(char *dst, size_t size, const char *src)
{
	size_t n = 0;

	for (const unsigned char *s = (const unsigned char *)(src ? src : ""); *s;) {
		size_t k = utf8_seq_len(s);

		if (k == 0) {
			if (n + 1 >= size)
				break;
			dst[n++] = '?';
			s++;
			continue;
		}
		if (n + k >= size)
			break;
		memcpy(dst + n, s, k);
		n += k;
		s += k;
	}
	dst[n] = '\0';
}

static double now_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* GPU allocations and frees so far, and what they hold live. */
static void gpu_totals(unsigned long long *events, long long *allocs)
{
	struct gs_count_snap c;

	*events = 0;
	*allocs = 0;
	for (int k = 0; k < GS_KIND_COUNT; k++) {
		if (k == GS_KIND_PINNED)
			continue;
		counters_read(&gs_totals.kind[k], &c);
		*events += (unsigned long long)(c.allocs + c.frees);
		*allocs += c.live_allocs;
	}
}

static long long gpu_live(void)
{
	return atomic_load_explicit(&gs_totals.hot.gpu_live_bytes, memory_order_relaxed);
}

int query_totals(struct gpuspy_totals *out, size_t size)
{
	struct gpuspy_totals t = { 0 };

	if (!size_ok(out, size) || atomic_load(&gs_state.silent))
		return -1;
	gpu_totals(&t.events, &t.live_allocs);
	t.live_bytes = gpu_live();
	t.peak_bytes = atomic_load_explicit(&gs_totals.gpu_peak_bytes, memory_order_relaxed);
	if (t.peak_bytes < t.live_bytes)
		t.peak_bytes = t.live_bytes; /* a peak update still in flight */
	t.pinned_bytes = counters_live_bytes(&gs_totals.kind[GS_KIND_PINNED]);
	t.tracking = atomic_load(&gs_state.tracking);
	give(out, size, &t, sizeof(t));
	return 0;
}

struct scope {
	struct scope *next;
	long long id;
	long long before;	   /* GPU bytes live when it opened */
	unsigned long long events; /* GPU allocations and frees then */
	long long peak;		   /* the local peaks folded in since */
	double opened;		   /* CLOCK_MONOTONIC */
	unsigned n;		   /* sites known then */
	long long *base;	   /* by site id below N: their live bytes then */
};

/* Under gs_api_lock. */
static struct scope *scopes;
static long long next_id = 1;

static struct scope *scope_find(long long id)
{
	for (struct scope *s = scopes; s; s = s->next)
		if (s->id == id)
			return s;
	return NULL;
}

long long query_scope_open(void)
{
	unsigned n = site_count();
	struct scope *sc;
	long long id, was;

	if (atomic_load(&gs_state.silent))
		return -1;
	sc = calloc(1, sizeof(*sc));
	if (!sc)
		return -1;
	sc->base = calloc(n ? n : 1, sizeof(*sc->base));
	if (!sc->base) {
		free(sc);
		return -1;
	}
	sc->n = n;
	/* A site whose id was taken but that is not on the list yet is
	 * being made for an allocation that has not been counted: 0. */
	for (struct gs_site *s = site_list(); s; s = s->next_all)
		if (s->id < n && s->kind != GS_KIND_PINNED)
			sc->base[s->id] = counters_live_bytes(&s->c);
	sc->opened = now_mono();
	gs_lock(&gs_api_lock);
	gpu_totals(&sc->events, &was);
	sc->before = gpu_live();
	/* what the peak reached since the last reset belongs to the scopes
	 * open then; this one starts from what is live now */
	was = peak_local_reset(sc->before);
	for (struct scope *o = scopes; o; o = o->next)
		if (o->peak < was)
			o->peak = was;
	sc->peak = sc->before;
	id = sc->id = next_id++;
	sc->next = scopes;
	scopes = sc;
	gs_unlock(&gs_api_lock);
	return id;
}

int query_scope_close(long long id)
{
	struct scope **at, *sc = NULL;

	gs_lock(&gs_api_lock);
	for (at = &scopes; *at; at = &(*at)->next)
		if ((*at)->id == id) {
			sc = *at;
			*at = sc->next;
			break;
		}
	gs_unlock(&gs_api_lock);
	if (!sc)
		return -1;
	free(sc->base);
	free(sc);
	return 0;
}

int query_scope_read(long long id, struct gpuspy_scope_totals *out, size_t size)
{
	struct gpuspy_scope_totals t = { 0 };
	unsigned long long events;
	long long allocs, peak;
	struct scope *sc;

	if (!size_ok(out, size) || atomic_load(&gs_state.silent))
		return -1;
	gs_lock(&gs_api_lock);
	sc = scope_find(id);
	if (!sc) {
		gs_unlock(&gs_api_lock);
		return -1;
	}
	gpu_totals(&events, &allocs);
	t.live_bytes = gpu_live();
	peak = peak_local();
	t.before_bytes = sc->before;
	t.peak_bytes = sc->peak > peak ? sc->peak : peak;
	t.events = events - sc->events;
	t.seconds = now_mono() - sc->opened;
	gs_unlock(&gs_api_lock);
	if (t.peak_bytes < t.live_bytes)
		t.peak_bytes = t.live_bytes;
	if (t.peak_bytes < t.before_bytes)
		t.peak_bytes = t.before_bytes;
	give(out, size, &t, sizeof(t));
	return 0;
}

/* One row of a query: a group of sites (one key, one site of the report)
 * or a site not named yet, alone. */
struct row {
	long long live, allocs, change;
	const struct gs_site *first; /* whose frames judge its pool and name it */
	const struct gs_site *told;  /* one of its sites flagged growing once, or NULL */
	int group;		     /* -1: FIRST alone */
};

struct rows {
	struct row *r;
	unsigned n, cap;
	int sign; /* 0: by live bytes; else by change, that sign only */
};

static long long row_key(const struct rows *rs, const struct row *r)
{
	return rs->sign == 0 ? r->live : rs->sign > 0 ? r->change : -r->change;
}

static int sign_of_sort; /* qsort has no argument: set under gs_api_lock */

static int cmp_rows(const void *pa, const void *pb)
{
	const struct row *a = pa, *b = pb;
	long long ka = sign_of_sort == 0 ? a->live : sign_of_sort > 0 ? a->change : -a->change;
	long long kb = sign_of_sort == 0 ? b->live : sign_of_sort > 0 ? b->change : -b->change;

	if (ka != kb)
		return ka < kb ? 1 : -1;
	if (a->live != b->live)
		return a->live < b->live ? 1 : -1;
	return (a->first->id > b->first->id) - (a->first->id < b->first->id);
}

static struct row *row_add(struct rows *rs)
{
	if (rs->n == rs->cap) {
		unsigned cap = rs->cap ? rs->cap * 2 : 64;
		struct row *m = realloc(rs->r, cap * sizeof(*m));

		if (!m)
			return NULL;
		rs->r = m;
		rs->cap = cap;
	}
	memset(&rs->r[rs->n], 0, sizeof(rs->r[0]));
	return &rs->r[rs->n++];
}

/* The innermost frame of the program's own Python code, else the first
 * native frame the process names outside CUDA's libraries and libc, as
 * the summaries name a site before its naming (summary.c). */
static void provisional_name(char *buf, size_t size, const struct gs_site *s)
{
	struct sitename_frame f = { 0 };

	for (unsigned i = 0; i < s->pydepth; i++)
		if (sitename_user_file(s->py[i].file)) {
			f.function = s->py[i].function ? s->py[i].function : "?";
			f.file = s->py[i].file;
			f.line = s->py[i].line > 0 ? s->py[i].line : 0;
			f.python = true;
			f.user = true;
			sitename_short(buf, size, &f);
			return;
		}
	for (unsigned i = 0; i < s->depth; i++) {
		const struct gs_frame *fr = &s->frames[i];
		const struct gs_name *nm = symbols_of(fr);
		const char *mod =
			fr->module >= 0 ?
				sitename_basename(unwind_module((unsigned)fr->module)->path) :
				NULL;

		if (!nm ||
		    (mod && (strncmp(mod, "libcuda", 7) == 0 || strncmp(mod, "libc.so", 7) == 0)))
			continue;
		f.function = nm->symbol;
		f.module = mod;
		f.offset = fr->offset;
		sitename_short(buf, size, &f);
		return;
	}
	snprintf(buf, size, "?");
}

/*
 * The rows of every GPU site holding something (or, with BASE, whose live
 * bytes changed since BASE of NBASE sites was taken), one per group,
 * ranked by RS->sign, the first N of them filled into OUT with the names
 * they have.  Holds gs_names_lock.  The count filled, -ENOMEM; *UNNAMED:
 * how many of them have no name yet.
 */
static int rank(struct rows *rs, const long long *base, unsigned nbase, struct gpuspy_site *out,
		unsigned n, unsigned *unnamed)
{
	unsigned groups, *slot = NULL, take = 0;
	int err = 0;

	*unnamed = 0;
	rs->n = 0;
	gs_lock(&gs_names_lock);
	groups = site_names_groups();
	slot = calloc(groups + 1, sizeof(*slot));
	if (!slot) {
		gs_unlock(&gs_names_lock);
		return -ENOMEM;
	}
	for (const struct gs_site *s = site_list(); s; s = s->next_all) {
		long long live, allocs, change, frees;
		struct row *r;
		int g;

		if (s->kind == GS_KIND_PINNED)
			continue;
		/* frees first: both totals only grow */
		frees = atomic_load_explicit(&s->c.frees, memory_order_relaxed);
		allocs = atomic_load_explicit(&s->c.allocs, memory_order_relaxed) - frees;
		live = counters_live_bytes(&s->c);
		change = base ? live - (s->id < nbase ? base[s->id] : 0) : 0;
		if (base ? change == 0 : live <= 0)
			continue;
		g = site_names_group(s);
		if (g >= 0 && (unsigned)g < groups && slot[g]) {
			r = &rs->r[slot[g] - 1];
		} else {
			r = row_add(rs);
			if (!r) {
				err = -ENOMEM;
				break;
			}
			r->first = s;
			r->group = g >= 0 && (unsigned)g < groups ? g : -1;
			if (r->group >= 0)
				slot[g] = rs->n;
		}
		r->live += live;
		r->allocs += allocs;
		r->change += change;
		if (atomic_load_explicit(&s->growth_told, memory_order_relaxed) &&
		    (!r->told || atomic_load_explicit(&s->growing, memory_order_relaxed)))
			r->told = s;
	}
	free(slot);
	if (err == 0) {
		unsigned keep = 0;

		/* only the rows of the sign asked for */
		for (unsigned i = 0; i < rs->n; i++)
			if (row_key(rs, &rs->r[i]) > 0)
				rs->r[keep++] = rs->r[i];
		rs->n = keep;
		sign_of_sort = rs->sign;
		if (rs->n > 1)
			qsort(rs->r, rs->n, sizeof(*rs->r), cmp_rows);
		take = rs->n < n ? rs->n : n;
	}
	for (unsigned i = 0; i < take; i++) {
		const struct row *r = &rs->r[i];
		struct gpuspy_site *o = &out[i];
		const char *name = r->group >= 0 ? site_names_group_name((unsigned)r->group) : NULL;

		memset(o, 0, sizeof(*o));
		if (name) {
			text_copy(o->name, sizeof(o->name), name);
			text_copy(o->key, sizeof(o->key),
				  site_names_group_digest((unsigned)r->group));
			o->named = 1;
		} else {
			char buf[GPUSPY_NAME_MAX];

			provisional_name(buf, sizeof(buf), r->first);
			text_copy(o->name, sizeof(o->name), buf);
			(*unnamed)++;
		}
		text_copy(o->kind, sizeof(o->kind), names_kind(r->first->kind));
		o->live_bytes = r->live;
		o->live_allocs = r->allocs;
		o->change_bytes = r->change;
	}
	gs_unlock(&gs_names_lock);
	return err ? err : (int)take;
}

/* What rank() leaves out, outside gs_names_lock: each row's pool, judged on
 * its frames' symbols (lock-free), and its verdict (gs_events_lock). */
static void finish(const struct rows *rs, struct gpuspy_site *out, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		const char *pool = pools_title(summary_site_pool(rs->r[i].first));

		text_copy(out[i].pool, sizeof(out[i].pool), pool ? pool : "");
	}
	gs_lock(&gs_events_lock);
	for (unsigned i = 0; i < n; i++) {
		const struct gs_site *s = rs->r[i].told;

		if (!s || !s->verdict)
			continue;
		text_copy(out[i].growth, sizeof(out[i].growth),
			  trend_state_words(s->verdict->v.state));
		out[i].growth_rate = s->verdict->v.rate;
		out[i].growth_since = s->verdict->v.since;
	}
	gs_unlock(&gs_events_lock);
}

/* How long a query sleeps between two looks at the naming thread's passes. */
#define NAME_POLL_MS 2

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/*
 * The rows of the sites (SCOPE: -1 for all of them by live bytes; else
 * the scope's, by change of SIGN) into the caller's OUT, entries of SIZE
 * bytes; for rows not named yet, a pass of the naming thread waited for
 * up to WAIT_MS.
 */
static int sites(long long scope, int sign, void *out, unsigned n, size_t size, int wait_ms)
{
	struct gpuspy_site *tmp;
	struct rows rs = { .sign = sign };
	double deadline = now_mono() + (wait_ms > 0 ? wait_ms : 0) / 1000.0;
	unsigned unnamed = 0;
	int got;

	if (!size_ok(out, size) || atomic_load(&gs_state.silent))
		return -1;
	if (n == 0)
		return 0;
	if (n > site_count() + 1)
		n = site_count() + 1; /* no more rows than sites */
	tmp = calloc(n, sizeof(*tmp));
	if (!tmp)
		return -1;
	for (;;) {
		unsigned long long passes = site_names_passes();

		gs_lock(&gs_api_lock);
		if (scope < 0) {
			got = rank(&rs, NULL, 0, tmp, n, &unnamed);
		} else {
			struct scope *sc = scope_find(scope);

			got = sc ? rank(&rs, sc->base, sc->n, tmp, n, &unnamed) : -EINVAL;
		}
		gs_unlock(&gs_api_lock);
		/* after: gs_events_lock comes before gs_api_lock (locks.c) */
		if (got > 0)
			finish(&rs, tmp, (unsigned)got);
		if (got < 0 || unnamed == 0 || now_mono() >= deadline)
			break;
		/* a pass that starts after the sites were read names them all;
		 * one that ends now may have started before: then ask again */
		if (!writer_wake_names())
			break;
		while (site_names_passes() == passes && now_mono() < deadline)
			sleep_ms(NAME_POLL_MS);
		if (site_names_passes() == passes)
			break;
	}
	for (int i = 0; i < got; i++)
		give((char *)out + (size_t)i * size, size, &tmp[i], sizeof(tmp[i]));
	free(rs.r);
	free(tmp);
	return got < 0 ? -1 : got;
}

int query_sites(struct gpuspy_site *out, unsigned n, size_t size, int wait_ms)
{
	return sites(-1, 0, out, n, size, wait_ms);
}

int query_scope_sites(long long scope, int sign, struct gpuspy_site *out, unsigned n, size_t size,
		      int wait_ms)
{
	if (scope <= 0 || sign == 0)
		return -1;
	return sites(scope, sign > 0 ? 1 : -1, out, n, size, wait_ms);
}

int query_frameworks(struct gpuspy_framework *out, unsigned n, size_t size)
{
	struct fw_latest *l;
	unsigned got = 0;
	double age;

	if (!size_ok(out, size) || atomic_load(&gs_state.silent))
		return -1;
	l = malloc(sizeof(*l)); /* some KiB: not on the caller's stack */
	if (!l)
		return -1;
	gs_lock(&gs_events_lock);
	fw_counters_copy(l);
	gs_unlock(&gs_events_lock);
	age = l->any ? gs_now() - l->time : 0;
	for (unsigned fw = 0; l->any && fw < GS_FW_COUNT; fw++)
		for (unsigned p = 0; p < GS_FW_PLACES && got < n; p++) {
			struct gpuspy_framework f = { 0 };
			long long v[GS_FWC_COUNT];
			bool any = false;

			for (unsigned c = 0; c < GS_FWC_COUNT; c++) {
				v[c] = l->has[fw][p][c] ? l->v[fw][p][c] : -1;
				any |= l->has[fw][p][c];
			}
			if (!any)
				continue;
			text_copy(f.name, sizeof(f.name), names_fw[fw]);
			f.device = p == GS_FW_HOST ? -1 : (int)p;
			f.allocated = v[GS_FWC_ALLOCATED];
			f.reserved = v[GS_FWC_RESERVED];
			f.peak_allocated = v[GS_FWC_PEAK_ALLOCATED];
			f.peak_reserved = v[GS_FWC_PEAK_RESERVED];
			f.limit = v[GS_FWC_LIMIT];
			f.free_blocks = v[GS_FWC_FREE_BLOCKS];
			f.age = age > 0 ? age : 0;
			give((char *)out + (size_t)got * size, size, &f, sizeof(f));
			got++;
		}
	free(l);
	return (int)got;
}

int query_process_dir(char *buf, size_t size)
{
	if (!buf || size == 0 || atomic_load(&gs_state.silent) ||
	    !atomic_load_explicit(&gs_state.active, memory_order_acquire))
		return -1;
	return names_process_path(buf, size, gs_state.run_dir, getpid()) == 0 ? 0 : -1;
}
