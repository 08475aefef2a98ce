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
 * Memory: per site a record of three words, per group its key and name;
 * frame views are made one site at a time, except for the groups that need
 * telling apart.  Time: a pass is O(sites + groups log groups); one runs
 * when sites or verdicts are new, at most once per ten times the last
 * pass's duration (GPUSPY_INTERVAL at least), so that a million sites
 * cost the snapshot thread a bounded share of a core.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core.h"
#include "frame_rules.h"
#include "log.h"
#include "site_names.h"
#include "sitename.h"
#include "sites.h"
#include "symbols.h"
#include "unwind.h"

/* One group of sites: one key. */
struct group {
	char *key;
	char *name;
	const struct gs_site *first; /* whose frames name it */
	struct sitename_line *lines; /* distinct headline lines (> 0) */
	unsigned nlines, caplines;
	unsigned next; /* hash chain, index + 1 */
	char digest[SITENAME_DIGEST_SIZE];
};

/* Naming thread only, as symbols.c's state. */
static struct group *groups;
static unsigned ngroups, capgroups;
static unsigned *buckets, nbuckets; /* index + 1 */
static unsigned *group_of;	    /* by site id: group index + 1 */
static unsigned capsites;
static unsigned named_sites, named_growing;
static double next_pass;
static bool told_nomem;
static char exe[4096];
static bool exe_read;

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

/* The frames of S as the reader makes them, into *OUT (room for
 * depth + pydepth, the caller's, reused); their count. */
static size_t site_view(const struct gs_site *s, struct sitename_frame *out)
{
	size_t n = s->depth, at;

	for (unsigned i = 0; i < s->depth; i++) {
		const struct gs_frame *fr = &s->frames[i];
		struct sitename_frame *f = &out[i];

		symbols_sitename(fr, f);
		f->noise = classify_noise(fr->module >= 0 ? unwind_module((unsigned)fr->module)->path :
							    NULL,
					  main_exe(fr->module), f->function) != NOISE_NONE;
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

static void groups_clear(void)
{
	for (unsigned i = 0; i < ngroups; i++) {
		free(groups[i].key);
		free(groups[i].name);
		free(groups[i].lines);
	}
	ngroups = 0;
	if (buckets)
		memset(buckets, 0, nbuckets * sizeof(*buckets));
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

/* S's headline line into its group's lines, with S's figures. */
static int line_add(struct group *g, const struct gs_site *s, int64_t line)
{
	struct sitename_line *l = NULL;

	if (line <= 0)
		return 0;
	for (unsigned i = 0; i < g->nlines && !l; i++)
		if (g->lines[i].line == line)
			l = &g->lines[i];
	if (!l) {
		if (g->nlines == g->caplines) {
			unsigned n = g->caplines ? g->caplines * 2 : 2;
			struct sitename_line *m = realloc(g->lines, n * sizeof(*m));

			if (!m)
				return -ENOMEM;
			g->lines = m;
			g->caplines = n;
		}
		l = &g->lines[g->nlines++];
		*l = (struct sitename_line){ .line = line };
	}
	l->growing |= atomic_load_explicit(&s->growing, memory_order_relaxed);
	l->live_bytes += counters_live_bytes(&s->c);
	l->peak_bytes += atomic_load_explicit(&s->c.peak_bytes, memory_order_relaxed);
	return 0;
}

static int cmp_lines(const void *pa, const void *pb)
{
	const struct sitename_line *a = pa, *b = pb;

	return (a->line > b->line) - (a->line < b->line);
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

/* The pass itself; -ENOMEM leaves the names of the last pass. */
static int pass(const struct site_walk *w)
{
	size_t maxf = 1;
	struct sitename_frame *view;
	struct named *order;
	unsigned growing = 0, n = 0;
	int e = 0;

	if (w->n > capsites) {
		unsigned c = w->n + w->n / 2 + 256;
		unsigned *m = realloc(group_of, c * sizeof(*m));

		if (!m)
			return -ENOMEM;
		group_of = m;
		capsites = c;
	}
	memset(group_of, 0, capsites * sizeof(*group_of));
	groups_clear();
	for (unsigned i = 0; i < w->n; i++) {
		const struct gs_site *s = w->by_id[i];

		if (s && (size_t)s->depth + s->pydepth > maxf)
			maxf = (size_t)s->depth + s->pydepth;
	}
	view = calloc(maxf + 1, sizeof(*view));
	if (!view)
		return -ENOMEM;
	for (unsigned i = 0; i < w->n && e == 0; i++) {
		const struct gs_site *s = w->by_id[i];
		size_t nf, len;
		ssize_t h;
		char *key;
		unsigned g;

		if (!s)
			continue;
		nf = site_view(s, view);
		len = sitename_key(NULL, 0, gs_api_names[s->api], view, nf);
		key = malloc(len + 1);
		if (!key) {
			e = -ENOMEM;
			break;
		}
		sitename_key(key, len + 1, gs_api_names[s->api], view, nf);
		e = group_find(key, &g);
		if (e < 0) {
			free(key);
			break;
		}
		if (!groups[g].first)
			groups[g].first = s;
		h = sitename_headline(view, nf);
		e = line_add(&groups[g], s, h >= 0 ? view[h].line : 0);
		group_of[s->id] = g + 1;
		growing += atomic_load_explicit(&s->growing, memory_order_relaxed);
		n++;
	}
	order = e == 0 ? calloc(ngroups + 1, sizeof(*order)) : NULL;
	if (e == 0 && !order)
		e = -ENOMEM;
	/* each group's name alone, then those alike told apart */
	for (unsigned i = 0; i < ngroups && e == 0; i++) {
		struct group *g = &groups[i];
		struct sitename_site v = { .frames = view, .api = gs_api_names[g->first->api] };
		size_t len;

		qsort(g->lines, g->nlines, sizeof(*g->lines), cmp_lines);
		v.nframes = site_view(g->first, view);
		if (g->nlines > 1) {
			v.lines = g->lines;
			v.nlines = g->nlines;
		}
		len = sitename_name(NULL, 0, &v);
		g->name = malloc(len + 1);
		if (!g->name) {
			e = -ENOMEM;
			break;
		}
		sitename_name(g->name, len + 1, &v);
		order[i] = (struct named){ g->name, i };
	}
	if (e == 0)
		qsort(order, ngroups, sizeof(*order), cmp_named);
	for (unsigned i = 0; i < ngroups && e == 0;) {
		unsigned j = i + 1;

		while (j < ngroups && strcmp(order[j].name, order[i].name) == 0)
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
	}
	return e;
}

void site_names_refresh(const struct site_walk *w, bool force)
{
	unsigned sites = 0, growing = 0;
	double t = now_s(), cost;

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
	if (pass(w) < 0) {
		/* no names until a pass succeeds: the callers fall back to the
		 * headline frame's name */
		groups_clear();
		named_sites = 0;
		if (!told_nomem)
			gs_warn("naming call sites: out of memory; they are named by their "
				"innermost frame until it passes");
		told_nomem = true;
	}
	cost = now_s() - t;
	next_pass = t + 10 * cost;
}

const char *site_names_of(const struct gs_site *s)
{
	unsigned g = s->id < capsites ? group_of[s->id] : 0;

	return g && g <= ngroups ? groups[g - 1].name : NULL;
}

const char *site_names_digest(const struct gs_site *s)
{
	unsigned g = s->id < capsites ? group_of[s->id] : 0;

	return g && g <= ngroups ? groups[g - 1].digest : NULL;
}
