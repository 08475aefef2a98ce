/* SPDX-License-Identifier: MIT */
/*
 * Each call site's one name, inside the process, as `gpuspy report` will
 * print it (see site_names.h).
 *
 * A pass takes every site of the walk: its frames as the reader makes them
 * (the names symbols.c found, noise judged by src/common/frame_rules.c,
 * the Python frames placed among the native ones by sitename_python_at),
 * its key (sitename_key), and the line of its headline.  Sites of one key
 * are one site of the report, calls from several lines of one function:
 * the group is named once, its lines weighed by sitename_lead_line; groups
 * whose names coincide are told apart by sitename_names(), only they (the
 * rule extends a name only where it equals another).
 *
 * A site's key is made once, when its frames have their names for good;
 * each pass weighs every group's lines again (the growing line, the most
 * live, leads), makes again the names of the groups whose lead line
 * changed, and tells apart again those alike when a name changed.
 *
 * Memory: per site a record of three words, per group its key and names;
 * frame views are made one site at a time, except for the groups that need
 * telling apart.  Time: a pass is O(sites) plus O(groups log groups) when
 * a name changed; one runs when sites or verdicts are new, at most once
 * per ten times the last pass's duration (GPUSPY_INTERVAL at least), and
 * at exit, so that a million sites cost the snapshot thread a bounded
 * share of a core.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core.h"
#include "frame_rules.h"
#include "locks.h"
#include "log.h"
#include "site_names.h"
#include "sitename.h"
#include "sites.h"
#include "symbols.h"
#include "unwind.h"

/* One group of sites: one key, kept for the life of the process (a
 * site's key does not change once its frames are named). */
struct group {
	char *key;
	char *base;		     /* its name alone (sitename_name), NULL: to make */
	char *name;		     /* told apart from the others: what is printed */
	const struct gs_site *first; /* whose frames name it */
	struct sitename_line *lines; /* distinct headline lines (> 0), ascending */
	unsigned nlines, caplines;
	unsigned members; /* sites in it at the last pass */
	int64_t lead;	  /* the line that led its base name, 0: none */
	unsigned next;	  /* hash chain, index + 1 */
	char digest[SITENAME_DIGEST_SIZE];
};

/* What a pass keeps of each site, by id. */
struct site_rec {
	unsigned group; /* index + 1; 0: not keyed yet */
	int64_t line;	/* its headline's line, 0: none */
	bool done;	/* keyed from names for good (symbols_site_named) */
};

/* Naming thread only, as symbols.c's state. */
static struct group *groups;
static unsigned ngroups, capgroups;
static unsigned *buckets, nbuckets; /* index + 1 */
static struct site_rec *recs;	    /* by site id */
static unsigned caprecs;
static unsigned named_sites, named_growing;
static bool named_once;
static double next_pass;
static bool told_nomem;
static char exe[4096];
static bool exe_read;
/* passes done: what another thread waits on for names (query.c) */
static atomic_ullong passes;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Whether module M is the program's executable: the module registry and
 * report.json name it by /proc/self/exe, as the reader compares. */
static bool main_exe(int m)
{
	if (!exe_read) {
		ssize_t k = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

		exe[k > 0 ? k : 0] = '\0';
		exe_read = true;
	}
	return m >= 0 && exe[0] && strcmp(unwind_module((unsigned)m)->path, exe) == 0;
}

/* Noise judged once per named return address (struct gs_name) and, for
 * the frames no symbol names, once per module (1 not noise, 2 noise). */
static unsigned char *module_noise;
static unsigned n_module_noise;

static bool frame_noise(const struct gs_frame *fr, const char *function)
{
	const struct gs_name *n = symbols_of(fr);
	unsigned char *at = NULL;

	if (n) {
		at = &((struct gs_name *)n)->noise;
	} else if (fr->module >= 0) {
		unsigned want = (unsigned)fr->module + 1;

		if (want > n_module_noise) {
			unsigned c = want + 64;
			unsigned char *m = realloc(module_noise, c);

			if (m) {
				memset(m + n_module_noise, 0, c - n_module_noise);
				module_noise = m;
				n_module_noise = c;
			}
		}
		if (want <= n_module_noise)
			at = &module_noise[fr->module];
	}
	if (!at || !*at) {
		bool noise =
			classify_noise(fr->module >= 0 ? unwind_module((unsigned)fr->module)->path :
							 NULL,
				       main_exe(fr->module), function) != NOISE_NONE;

		if (!at)
			return noise;
		*at = noise ? 2 : 1;
	}
	return *at == 2;
}

/* The frames of S as the reader makes them, into *OUT (room for
 * depth + pydepth, the caller's, reused); their count. */
static size_t site_view(const struct gs_site *s, struct sitename_frame *out)
{
	size_t n = s->depth, at;

	for (unsigned i = 0; i < s->depth; i++) {
		const struct gs_frame *fr = &s->frames[i];
		struct sitename_frame *f = &out[i];

		symbols_sitename(fr, f);
		f->noise = frame_noise(fr, f->function);
	}
	at = sitename_python_at(out, n);
	memmove(out + at + s->pydepth, out + at, (n - at) * sizeof(*out));
	for (unsigned i = 0; i < s->pydepth; i++) {
		const struct gs_pyframe *p = &s->py[i];

		out[at + i] = (struct sitename_frame){
			.function = p->function ? p->function : "?",
			.file = p->file ? p->file : "?",
			.line = p->line > 0 ? p->line : 0,
			.python = true,
			.user = sitename_user_file(p->file),
		};
	}
	return n + s->pydepth;
}

static size_t hash(const char *s)
{
	size_t h = 14695981039346656037ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

/* The group of KEY (taken over), made when new; -ENOMEM. */
static int group_find(char *key, unsigned *out)
{
	size_t h;

	if ((ngroups + 1) * 2 > nbuckets) {
		unsigned n = nbuckets ? nbuckets * 2 : 1024;
		unsigned *b = calloc(n, sizeof(*b));

		if (!b)
			return -ENOMEM;
		free(buckets);
		buckets = b;
		nbuckets = n;
		for (unsigned i = 0; i < ngroups; i++) {
			h = hash(groups[i].key) & (nbuckets - 1);
			groups[i].next = buckets[h];
			buckets[h] = i + 1;
		}
	}
	h = hash(key) & (nbuckets - 1);
	for (unsigned g = buckets[h]; g; g = groups[g - 1].next)
		if (strcmp(groups[g - 1].key, key) == 0) {
			free(key);
			*out = g - 1;
			return 0;
		}
	if (ngroups == capgroups) {
		unsigned n = capgroups ? capgroups * 2 : 256;
		struct group *m = realloc(groups, n * sizeof(*m));

		if (!m)
			return -ENOMEM;
		groups = m;
		capgroups = n;
	}
	memset(&groups[ngroups], 0, sizeof(groups[ngroups]));
	groups[ngroups].key = key;
	sitename_digest(key, groups[ngroups].digest, sizeof(groups[ngroups].digest));
	groups[ngroups].next = buckets[h];
	buckets[h] = ngroups + 1;
	*out = ngroups++;
	return 0;
}

/* LINE of site S into its group G's lines, with S's figures. */
static int line_add(struct group *g, const struct gs_site *s, int64_t line)
{
	struct sitename_line *l = NULL;
	unsigned at = 0;

	if (line <= 0)
		return 0;
	while (at < g->nlines && g->lines[at].line < line)
		at++;
	if (at < g->nlines && g->lines[at].line == line)
		l = &g->lines[at];
	if (!l) {
		if (g->nlines == g->caplines) {
			unsigned n = g->caplines ? g->caplines * 2 : 2;
			struct sitename_line *m = realloc(g->lines, n * sizeof(*m));

			if (!m)
				return -ENOMEM;
			g->lines = m;
			g->caplines = n;
		}
		memmove(g->lines + at + 1, g->lines + at, (g->nlines - at) * sizeof(*g->lines));
		l = &g->lines[at];
		*l = (struct sitename_line){ .line = line };
		g->nlines++;
	}
	l->growing |= atomic_load_explicit(&s->growing, memory_order_relaxed);
	l->live_bytes += counters_live_bytes(&s->c);
	l->peak_bytes += atomic_load_explicit(&s->c.peak_bytes, memory_order_relaxed);
	return 0;
}

/* Names of the groups whose first site is named so far, told apart. */
struct named {
	const char *name;
	unsigned group;
};

static int cmp_named(const void *pa, const void *pb)
{
	const struct named *a = pa, *b = pb;
	int c = strcmp(a->name, b->name);

	return c ? c : (a->group > b->group) - (a->group < b->group);
}

/* Groups FIRST..FIRST+N of ORDER, whose base names coincide, named by
 * sitename_names() over their frames.  VIEW: scratch of MAXF frames. */
static int tell_apart(const struct named *order, size_t n, size_t maxf)
{
	struct sitename_site *v = calloc(n, sizeof(*v));
	struct sitename_frame *f = calloc(n * maxf + 1, sizeof(*f));
	char **names = calloc(n, sizeof(*names));
	int e = v && f && names ? 0 : -ENOMEM;

	for (size_t i = 0; i < n && e == 0; i++) {
		struct group *g = &groups[order[i].group];

		v[i].frames = f + i * maxf;
		v[i].nframes = site_view(g->first, f + i * maxf);
		v[i].lines = g->nlines > 1 ? g->lines : NULL;
		v[i].nlines = g->nlines > 1 ? g->nlines : 0;
		v[i].api = gs_api_names[g->first->api];
	}
	if (e == 0)
		e = sitename_names(v, n, names);
	for (size_t i = 0; i < n && e == 0; i++) {
		free(groups[order[i].group].name);
		groups[order[i].group].name = names[i];
	}
	free(v);
	free(f);
	free(names);
	return e;
}

/* Keys site S (its frames into VIEW, room for its depth and pydepth). */
static int key_site(const struct gs_site *s, struct sitename_frame *view)
{
	struct site_rec *r = &recs[s->id];
	size_t nf = site_view(s, view), len;
	ssize_t h = sitename_headline(view, nf);
	char *key;
	unsigned g;
	int e;

	len = sitename_key(NULL, 0, gs_api_names[s->api], view, nf);
	key = malloc(len + 1);
	if (!key)
		return -ENOMEM;
	sitename_key(key, len + 1, gs_api_names[s->api], view, nf);
	e = group_find(key, &g);
	if (e < 0) {
		free(key);
		return e;
	}
	if (!groups[g].first)
		groups[g].first = s;
	r->group = g + 1;
	r->line = h >= 0 ? view[h].line : 0;
	r->done = symbols_site_named(s);
	return 0;
}

/* The pass itself: new sites keyed, every group's lines weighed again, the
 * names of the groups whose lead line changed made again, and the groups
 * whose names coincide told apart.  -ENOMEM leaves a pass half done: the
 * next one finishes it. */
static int pass(const struct site_walk *w)
{
	size_t maxf = 1;
	struct sitename_frame *view;
	struct named *order;
	unsigned growing = 0, n = 0, m = 0;
	bool changed = !named_once;
	int e = 0;

	if (w->n > caprecs) {
		unsigned c = w->n + w->n / 2 + 256;
		struct site_rec *grown = realloc(recs, c * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		memset(grown + caprecs, 0, (c - caprecs) * sizeof(*grown));
		recs = grown;
		caprecs = c;
	}
	for (unsigned i = 0; i < w->n; i++) {
		const struct gs_site *s = w->by_id[i];

		if (s && (size_t)s->depth + s->pydepth > maxf)
			maxf = (size_t)s->depth + s->pydepth;
	}
	view = calloc(maxf + 1, sizeof(*view));
	if (!view)
		return -ENOMEM;
	for (unsigned g = 0; g < ngroups; g++) {
		groups[g].nlines = 0;
		groups[g].members = 0;
	}
	for (unsigned i = 0; i < w->n && e == 0; i++) {
		const struct gs_site *s = w->by_id[i];
		struct site_rec *r;

		if (!s)
			continue;
		r = &recs[s->id];
		if (!r->done) {
			unsigned before = ngroups;

			e = key_site(s, view);
			changed |= ngroups != before;
			if (e < 0)
				break;
		}
		groups[r->group - 1].members++;
		e = line_add(&groups[r->group - 1], s, r->line);
		growing += atomic_load_explicit(&s->growing, memory_order_relaxed);
		n++;
	}
	/* each group's name alone, where its lead line is new */
	for (unsigned i = 0; i < ngroups && e == 0; i++) {
		struct group *g = &groups[i];
		struct sitename_site v = { .frames = view, .api = gs_api_names[g->first->api] };
		int64_t lead =
			g->nlines > 1 ? g->lines[sitename_lead_line(g->lines, g->nlines)].line : 0;
		size_t len;

		if (g->base && lead == g->lead)
			continue;
		v.nframes = site_view(g->first, view);
		if (g->nlines > 1) {
			v.lines = g->lines;
			v.nlines = g->nlines;
		}
		len = sitename_name(NULL, 0, &v);
		free(g->base);
		g->base = malloc(len + 1);
		if (!g->base) {
			e = -ENOMEM;
			break;
		}
		sitename_name(g->base, len + 1, &v);
		g->lead = lead;
		changed = true;
	}
	/* told apart, where a name changed or a group is new */
	order = e == 0 && changed ? calloc(ngroups + 1, sizeof(*order)) : NULL;
	if (e == 0 && changed && !order)
		e = -ENOMEM;
	/* a group none of whose sites is in it any more (a site keyed again
	 * once its frames had their names for good) tells nothing apart */
	for (unsigned i = 0; order && i < ngroups && e == 0; i++) {
		free(groups[i].name);
		groups[i].name = strdup(groups[i].base);
		if (!groups[i].name)
			e = -ENOMEM;
		else if (groups[i].members)
			order[m++] = (struct named){ groups[i].base, i };
	}
	if (order && e == 0)
		qsort(order, m, sizeof(*order), cmp_named);
	for (unsigned i = 0; order && i < m && e == 0;) {
		unsigned j = i + 1;

		while (j < m && strcmp(order[j].name, order[i].name) == 0)
			j++;
		if (j - i > 1)
			e = tell_apart(order + i, j - i, maxf);
		i = j;
	}
	free(order);
	free(view);
	if (e == 0) {
		named_sites = n;
		named_growing = growing;
		named_once = true;
	}
	return e;
}

void site_names_refresh(const struct site_walk *w, bool force)
{
	unsigned sites = 0, growing = 0;
	double t = now_s(), cost;
	int err;

	for (unsigned i = 0; i < w->n; i++) {
		const struct gs_site *s = w->by_id[i];

		if (!s)
			continue;
		sites++;
		growing += atomic_load_explicit(&s->growing, memory_order_relaxed);
	}
	if (!force && sites == named_sites && growing == named_growing)
		return;
	if (!force && t < next_pass)
		return;
	/* a caller's thread may be reading the names (query.c) */
	gs_lock(&gs_names_lock);
	err = pass(w);
	gs_unlock(&gs_names_lock);
	if (err == 0)
		atomic_fetch_add_explicit(&passes, 1, memory_order_release);
	if (err < 0) {
		/* the next pass finishes it; a group without a name yet is
		 * named by its headline frame meanwhile (the callers) */
		named_sites = 0;
		if (!told_nomem)
			gs_warn("naming call sites: out of memory; they are named by their "
				"innermost frame until it passes");
		told_nomem = true;
	}
	cost = now_s() - t;
	next_pass = t + 10 * cost;
}

/* S's group, or NULL: not keyed yet. */
static const struct group *group_of(const struct gs_site *s)
{
	unsigned g = s->id < caprecs ? recs[s->id].group : 0;

	return g && g <= ngroups ? &groups[g - 1] : NULL;
}

const char *site_names_of(const struct gs_site *s)
{
	const struct group *g = group_of(s);

	return g ? g->name : NULL;
}

int site_names_group(const struct gs_site *s)
{
	const struct group *g = group_of(s);

	return g && g->name ? (int)(g - groups) : -1;
}

unsigned site_names_groups(void)
{
	return ngroups;
}

const char *site_names_group_name(unsigned g)
{
	return g < ngroups ? groups[g].name : NULL;
}

const char *site_names_group_digest(unsigned g)
{
	return g < ngroups ? groups[g].digest : NULL;
}

const char *site_names_digest(const struct gs_site *s)
{
	const struct group *g = group_of(s);

	return g ? g->digest : NULL;
}

unsigned long long site_names_passes(void)
{
	return atomic_load_explicit(&passes, memory_order_acquire);
}
