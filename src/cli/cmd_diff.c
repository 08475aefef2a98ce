/* SPDX-License-Identifier: MIT */
/*
 * gpuspy diff OLD NEW: what changed between two runs, call site by call
 * site.  Both sides are loaded and merged exactly as `gpuspy report` does,
 * each with its own symbolizer (the two builds may sit at one path with
 * different build-ids), and their sites are matched on the stable key.
 *
 * The figures compared are, per site, the live bytes at exit (leaked),
 * the site's own peak and its allocation count; with --at LABEL, the live
 * bytes at the last mark of that label instead, so that two runs are
 * compared at the same phase rather than at their different ends.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "discover.h"
#include "load.h"
#include "merge.h"
#include "print.h"
#include "util.h"

#define FORMAT_DIFF	  "gpuspy-diff/1"
#define DEFAULT_THRESHOLD (64 * 1024)
#define DEFAULT_TOP	  20

static const char usage[] =
	"Usage: gpuspy diff [OPTIONS] OLD NEW\n"
	"       gpuspy diff [OPTIONS] --old PATH... --new PATH...\n"
	"\n"
	"Compare two runs call site by call site.  OLD and NEW are run\n"
	"directories, process directories or report files; --old and --new\n"
	"(each repeatable) take several, e.g. one run directory per node.\n"
	"\n"
	"  -f, --format FMT          text (default) or json (format gpuspy-diff/1)\n"
	"      --fail-on-growth SIZE exit 1 when a site grew by more than SIZE\n"
	"                            (its leaked or peak bytes; with --at, its live\n"
	"                            bytes at the mark)\n"
	"  -t, --threshold SIZE      text: hide sites that changed by less (default 64K)\n"
	"  -a, --at LABEL            compare live bytes at the last mark LABEL\n"
	"                            (gpuspy_mark) instead of at the peak and at exit\n"
	"  -n, --top N               text: sites listed (default 20; 0 means all)\n"
	"      --old PATH            a path of the old run (repeatable)\n"
	"      --new PATH            a path of the new run (repeatable)\n"
	"  -h, --help                show this help\n"
	"\n"
	"SIZE is bytes, or a number with K, M, G or T (powers of 1024): 512K, 1.5M.\n"
	"Exit status: 0 no site grew by more than SIZE (always, without\n"
	"--fail-on-growth); 1 some site did; 2 bad usage or input.\n";

enum status { ST_SAME, ST_CHANGED, ST_NEW, ST_VANISHED };
static const char *const status_names[] = { "same", "changed", "new", "vanished" };

/* One run: its paths, processes, merged report and, with --at, what each
 * merged site held at the mark. */
struct at_entry;

struct side {
	const char *name; /* "OLD", "NEW" */
	char **paths;
	size_t npaths;
	struct rd_process_list list;
	struct symbolizer *sym;
	struct rd_report rep;
	bool built;
	struct at_entry *at; /* --at: by site address */
	int64_t at_total;
	size_t marked; /* processes that carry the mark */
};

struct row {
	const char *key;
	const struct rd_report_site *site[2]; /* OLD, NEW; NULL when absent */
	int64_t at[2];
	enum status status;
	int64_t d_leaked, d_peak, d_allocs, d_at;
	int64_t size; /* how much it changed, for sorting and the threshold */
};

/* A line of the PyTorch views (torch.json) on both sides, matched on file
 * basenames and functions: lines move between two commits. */
struct trow {
	char *key;
	const struct rd_report_tsite *site[2]; /* the largest of the key; NULL: absent */
	int64_t live[2], peak[2];
	enum status status;
};

struct diff {
	struct side side[2];
	const char *at_label;
	int64_t threshold;
	int64_t fail_limit; /* -1: no --fail-on-growth */
	struct row *rows;
	size_t nrows;
	struct trow *trows;
	size_t ntrows;
	bool torch;    /* either side has a PyTorch view */
	size_t failed; /* sites or lines that grew by more than fail_limit */
};

/* A usage error: one line, then status 2. */
static int usage_error(const char *what, const char *arg)
{
	return cli_usage_error("diff", what, arg);
}

static int add_path(struct side *s, char *path)
{
	char **p = reallocarray(s->paths, s->npaths + 1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	s->paths = p;
	s->paths[s->npaths++] = path;
	return 0;
}

/* Saturating: a difference of two counts that each fit in 63 bits. */
static int64_t sub_sat(int64_t a, int64_t b)
{
	int64_t d;

	if (__builtin_sub_overflow(a, b, &d))
		return a > b ? INT64_MAX : INT64_MIN;
	return d;
}

static int64_t abs_sat(int64_t x)
{
	return x == INT64_MIN ? INT64_MAX : (x < 0 ? -x : x);
}

/* ---- loading ---- */

/* --at: a merged site's live bytes at the mark, found by its address. */
struct at_entry {
	const struct rd_report_site *site;
	int64_t bytes;
};

static int cmp_at(const void *a, const void *b)
{
	const struct rd_report_site *x = ((const struct at_entry *)a)->site;
	const struct rd_report_site *y = ((const struct at_entry *)b)->site;

	return x < y ? -1 : x > y;
}

static int64_t at_of(const struct side *s, const struct rd_report_site *site)
{
	struct at_entry k = { .site = site }, *hit;

	if (!s->at)
		return 0;
	hit = bsearch(&k, s->at, s->rep.nsites, sizeof(k), cmp_at);
	return hit ? hit->bytes : 0;
}

/* The last mark LABEL of process P, or NULL. */
static const struct rd_mark *find_mark(const struct rd_process *p, const char *label)
{
	for (size_t i = p->nmarks; i-- > 0;)
		if (strcmp(p->marks[i].label, label) == 0)
			return &p->marks[i];
	return NULL;
}

/* One line that lists the labels the side's first process does carry. */
static void no_mark_error(const struct side *s, const char *label, struct rd_error *err)
{
	char known[512] = "";
	size_t len = 0;
	const struct rd_process *p = s->list.items[0];

	for (size_t i = 0; i < p->nmarks && len + 8 < sizeof(known); i++) {
		bool seen = false;
		int n;

		for (size_t j = 0; j < i; j++)
			seen |= strcmp(p->marks[j].label, p->marks[i].label) == 0;
		if (seen)
			continue;
		n = snprintf(known + len, sizeof(known) - len, "%s\"%s\"", len ? ", " : "",
			     p->marks[i].label);
		len = n < 0 || (size_t)n >= sizeof(known) - len ? sizeof(known) - 1 :
								  len + (size_t)n;
	}
	rd_error_set(err, s->paths[0], "%s run: no process has a mark \"%s\" (%s%s)", s->name,
		     label, len ? "marks: " : "it has no marks", known);
}

/* With --at: each merged site's live bytes at the mark, summed over the
 * processes that carry it. */
static int side_at(struct side *s, const char *label, struct rd_error *err)
{
	const struct rd_report *r = &s->rep;

	s->at = calloc(r->nsites + 1, sizeof(*s->at));
	if (!s->at)
		return -ENOMEM;
	for (size_t i = 0; i < r->nsites; i++)
		s->at[i].site = r->sites[i];
	qsort(s->at, r->nsites, sizeof(*s->at), cmp_at);
	for (size_t i = 0; i < r->nprocs; i++) {
		const struct rd_mark *m = find_mark(r->procs[i], label);

		if (!m)
			continue;
		s->marked++;
		util_add_sat(&s->at_total, m->live_bytes);
		for (size_t k = 0; k < m->nsites; k++) {
			struct at_entry key = { .site = r->site_of[i][m->sites[k].index] };
			struct at_entry *hit = bsearch(&key, s->at, r->nsites, sizeof(key), cmp_at);

			if (hit)
				util_add_sat(&hit->bytes, m->sites[k].live_bytes);
		}
	}
	if (s->marked == 0) {
		no_mark_error(s, label, err);
		return -EINVAL;
	}
	return 0;
}

static int side_load(struct side *s, const char *at_label, struct rd_error *err)
{
	int e;

	for (size_t i = 0; i < s->npaths; i++) {
		e = discover_path(&s->list, s->paths[i], err);
		if (e < 0)
			return e;
	}
	e = symbolizer_new(&s->sym);
	if (e < 0)
		return e;
	e = merge_build(&s->rep, &s->list, s->sym, err);
	if (e < 0)
		return e;
	s->built = true;
	if (at_label)
		return side_at(s, at_label, err);
	return 0;
}

static void side_clear(struct side *s)
{
	if (s->built)
		merge_clear(&s->rep);
	symbolizer_free(s->sym);
	rd_process_list_clear(&s->list);
	free(s->paths);
	free(s->at);
}

/* ---- matching ---- */

static int cmp_site_key(const void *a, const void *b)
{
	const struct rd_report_site *x = *(const struct rd_report_site *const *)a;
	const struct rd_report_site *y = *(const struct rd_report_site *const *)b;

	return strcmp(x->key, y->key);
}

static int cmp_rows(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return strcmp(x->key, y->key);
}

static void row_compute(struct diff *d, struct row *w)
{
	const struct rd_report_site *o = w->site[0], *n = w->site[1];
	int64_t ol = o ? o->c.live_bytes : 0, nl = n ? n->c.live_bytes : 0;
	int64_t op = o ? o->c.peak_bytes : 0, np = n ? n->c.peak_bytes : 0;
	int64_t oa = o ? o->c.allocations : 0, na = n ? n->c.allocations : 0;
	int64_t grew;

	w->d_leaked = sub_sat(nl, ol);
	w->d_peak = sub_sat(np, op);
	w->d_allocs = sub_sat(na, oa);
	w->d_at = sub_sat(w->at[1], w->at[0]);
	if (d->at_label) {
		w->size = abs_sat(w->d_at);
		grew = w->d_at;
	} else {
		w->size = abs_sat(w->d_leaked) > abs_sat(w->d_peak) ? abs_sat(w->d_leaked) :
								      abs_sat(w->d_peak);
		grew = w->d_leaked > w->d_peak ? w->d_leaked : w->d_peak;
	}
	if (!o)
		w->status = ST_NEW;
	else if (!n)
		w->status = ST_VANISHED;
	else if (w->d_leaked || w->d_peak || w->d_allocs || w->d_at)
		w->status = ST_CHANGED;
	else
		w->status = ST_SAME;
	if (d->fail_limit >= 0 && grew > d->fail_limit)
		d->failed++;
}

/* Sites of both sides, matched on their keys (a merged report holds each
 * key once), ordered by how much they changed. */
static int diff_match(struct diff *d)
{
	const struct rd_report *ro = &d->side[0].rep, *rn = &d->side[1].rep;
	size_t cap = ro->nsites + rn->nsites + 1, i = 0, j = 0;
	struct rd_report_site **a = calloc(ro->nsites + 1, sizeof(*a));
	struct rd_report_site **b = calloc(rn->nsites + 1, sizeof(*b));

	d->rows = calloc(cap, sizeof(*d->rows));
	if (!a || !b || !d->rows) {
		free(a);
		free(b);
		return -ENOMEM;
	}
	memcpy(a, ro->sites, ro->nsites * sizeof(*a));
	memcpy(b, rn->sites, rn->nsites * sizeof(*b));
	qsort(a, ro->nsites, sizeof(*a), cmp_site_key);
	qsort(b, rn->nsites, sizeof(*b), cmp_site_key);
	while (i < ro->nsites || j < rn->nsites) {
		struct row *w = &d->rows[d->nrows++];
		int c = i == ro->nsites ? 1 : j == rn->nsites ? -1 : strcmp(a[i]->key, b[j]->key);

		if (c <= 0) {
			w->site[0] = a[i];
			w->at[0] = at_of(&d->side[0], a[i]);
			w->key = a[i++]->key;
		}
		if (c >= 0) {
			w->site[1] = b[j];
			w->at[1] = at_of(&d->side[1], b[j]);
			w->key = b[j++]->key;
		}
		row_compute(d, w);
	}
	qsort(d->rows, d->nrows, sizeof(*d->rows), cmp_rows);
	free(a);
	free(b);
	return 0;
}

/* ---- the PyTorch views ---- */

/* KEY without its ":line" parts ("a.py!f:12;a.py!<module>:30" ->
 * "a.py!f;a.py!<module>"). */
static char *strip_lines(const char *key)
{
	char *out = malloc(strlen(key) + 1), *o = out;

	if (!out)
		return NULL;
	for (const char *k = key; *k;) {
		if (*k == ':') {
			const char *e = k + 1;

			while (*e >= '0' && *e <= '9')
				e++;
			if (e > k + 1 && (*e == ';' || *e == '\0')) {
				k = e;
				continue;
			}
		}
		*o++ = *k++;
	}
	*o = '\0';
	return out;
}

static int cmp_trows(const void *a, const void *b)
{
	const struct trow *x = a, *y = b;
	int64_t dx = abs_sat(sub_sat(x->live[1], x->live[0]));
	int64_t dy = abs_sat(sub_sat(y->live[1], y->live[0]));

	if (dx != dy)
		return dx > dy ? -1 : 1;
	return strcmp(x->key, y->key);
}

static int torch_match(struct diff *d)
{
	for (int k = 0; k < 2; k++) {
		const struct rd_report_torch *t = &d->side[k].rep.torch;

		d->torch |= t->present;
		for (size_t i = 0; i < t->nsites; i++) {
			const struct rd_report_tsite *ts = t->sites[i];
			char *key = strip_lines(ts->key);
			struct trow *w = NULL;

			if (!key)
				return -ENOMEM;
			for (size_t j = 0; j < d->ntrows && !w; j++)
				if (strcmp(d->trows[j].key, key) == 0)
					w = &d->trows[j];
			if (w) {
				free(key);
			} else {
				struct trow *g = reallocarray(d->trows, d->ntrows + 1, sizeof(*g));

				if (!g) {
					free(key);
					return -ENOMEM;
				}
				d->trows = g;
				w = &d->trows[d->ntrows++];
				memset(w, 0, sizeof(*w));
				w->key = key;
			}
			/* sites come by live bytes: the first is the largest */
			if (!w->site[k])
				w->site[k] = ts;
			util_add_sat(&w->live[k], ts->live_bytes);
			util_add_sat(&w->peak[k], ts->peak_bytes);
		}
	}
	for (size_t j = 0; j < d->ntrows; j++) {
		struct trow *w = &d->trows[j];

		w->status = !w->site[0]						 ? ST_NEW :
			    !w->site[1]						 ? ST_VANISHED :
			    w->live[0] != w->live[1] || w->peak[0] != w->peak[1] ? ST_CHANGED :
										   ST_SAME;
		/* at the mark there is no view: it is sampled, not marked */
		if (!d->at_label && d->fail_limit >= 0 &&
		    sub_sat(w->live[1], w->live[0]) > d->fail_limit)
			d->failed++;
	}
	if (d->ntrows > 1)
		qsort(d->trows, d->ntrows, sizeof(*d->trows), cmp_trows);
	return 0;
}

/* ---- settings: what each run was ---- */

/* One setting's value on one side: the same in every process, absent
 * from all of them, or several. */
struct setting {
	char *value;	 /* NULL: absent everywhere */
	size_t distinct; /* values seen, absent not counted */
};

typedef char *(*setting_fn)(const struct rd_process *p, const void *arg);

static char *command_of(const struct rd_process *p, const void *arg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	(void)arg;
	if (p->ncommand == 0)
		return NULL;
	f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	for (size_t i = 0; i < p->ncommand; i++)
		fprintf(f, "%s%s", i ? " " : "", p->command[i]);
	fclose(f);
	return buf;
}

static char *env_of(const struct rd_process *p, const void *arg)
{
	for (size_t i = 0; i < p->nenv; i++)
		if (strcmp(p->env[i].name, arg) == 0)
			return strdup(p->env[i].value);
	return NULL;
}

static char *version_of(const struct rd_process *p, const void *arg)
{
	(void)arg;
	return p->version ? strdup(p->version) : NULL;
}

static char *driver_of(const struct rd_process *p, const void *arg)
{
	char buf[32];

	(void)arg;
	if (p->driver_version <= 0)
		return NULL;
	/* 13000 is 13.0, 12040 is 12.4 */
	snprintf(buf, sizeof(buf), "%" PRId64 ".%" PRId64, p->driver_version / 1000,
		 p->driver_version % 1000 / 10);
	return strdup(buf);
}

static char *gpus_of(const struct rd_process *p, const void *arg)
{
	char *buf = NULL, size[32];
	size_t len = 0;
	FILE *f;

	(void)arg;
	if (p->ngpus == 0)
		return NULL;
	f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	for (size_t i = 0; i < p->ngpus; i++) {
		size_t same = 1;

		/* "2 x NVIDIA H200 (139.8 GiB)": one entry per run of equal GPUs */
		while (i + same < p->ngpus &&
		       strcmp(p->gpus[i + same].name, p->gpus[i].name) == 0 &&
		       p->gpus[i + same].total_bytes == p->gpus[i].total_bytes)
			same++;
		if (i)
			fputs(", ", f);
		if (same > 1)
			fprintf(f, "%zu x ", same);
		fputs(p->gpus[i].name[0] ? p->gpus[i].name : "?", f);
		if (p->gpus[i].total_bytes >= 0)
			fprintf(f, " (%s)",
				util_human_size(p->gpus[i].total_bytes, size, sizeof(size)));
		i += same - 1;
	}
	fclose(f);
	return buf;
}

static char *python_of(const struct rd_process *p, const void *arg)
{
	(void)arg;
	return p->python.present && p->python.version ? strdup(p->python.version) : NULL;
}

static char *depth_of(const struct rd_process *p, const void *arg)
{
	char buf[24];

	(void)arg;
	if (p->depth < 0)
		return NULL;
	snprintf(buf, sizeof(buf), "%" PRId64, p->depth);
	return strdup(buf);
}

static int setting_get(const struct side *s, setting_fn fn, const void *arg, struct setting *out)
{
	out->value = NULL;
	out->distinct = 0;
	for (size_t i = 0; i < s->list.n; i++) {
		char *v = fn(s->list.items[i], arg);

		if (!v)
			continue;
		if (!out->value) {
			out->value = v;
			out->distinct = 1;
		} else {
			/* counting two is enough to say "differs" */
			if (strcmp(out->value, v) != 0 && out->distinct == 1)
				out->distinct = 2;
			free(v);
		}
	}
	return 0;
}

struct setting_row {
	char *name;
	struct setting v[2];
	bool differs;
};

/* Environment variables that differ from process to process by design,
 * or name paths that say nothing about the run: not settings. */
static bool env_is_setting(const char *name)
{
	static const char *const skip[] = { "RANK", "LOCAL_RANK", "LD_PRELOAD", "GPUSPY_OUTPUT_DIR",
					    "CUDA_VISIBLE_DEVICES" };

	for (size_t i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
		if (strcmp(name, skip[i]) == 0)
			return false;
	return true;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int settings_collect(const struct diff *d, struct setting_row **out, size_t *nout)
{
	static const struct {
		const char *name;
		setting_fn fn;
	} fixed[] = {
		{ "command", command_of }, { "gpuspy", version_of }, { "CUDA driver", driver_of },
		{ "GPUs", gpus_of },	   { "Python", python_of },  { "stack depth", depth_of },
	};
	size_t nfixed = sizeof(fixed) / sizeof(fixed[0]), nnames = 0, n = 0;
	char **names = NULL;
	struct setting_row *rows;

	/* every variable either side recorded, sorted, once */
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < d->side[k].list.n; i++) {
			const struct rd_process *p = d->side[k].list.items[i];

			for (size_t e = 0; e < p->nenv; e++) {
				char **nn;
				bool seen = !env_is_setting(p->env[e].name);

				for (size_t x = 0; x < nnames && !seen; x++)
					seen = strcmp(names[x], p->env[e].name) == 0;
				if (seen)
					continue;
				nn = reallocarray(names, nnames + 1, sizeof(*nn));
				if (!nn) {
					free(names);
					return -ENOMEM;
				}
				names = nn;
				names[nnames++] = p->env[e].name;
			}
		}
	if (nnames > 1)
		qsort(names, nnames, sizeof(*names), cmp_str);
	rows = calloc(nfixed + nnames + 1, sizeof(*rows));
	if (!rows) {
		free(names);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nfixed + nnames; i++) {
		struct setting_row *r = &rows[n];
		const char *name = i < nfixed ? fixed[i].name : names[i - nfixed];

		for (int k = 0; k < 2; k++) {
			if (i < nfixed)
				setting_get(&d->side[k], fixed[i].fn, NULL, &r->v[k]);
			else
				setting_get(&d->side[k], env_of, name, &r->v[k]);
		}
		if (!r->v[0].value && !r->v[1].value)
			continue;
		r->name = strdup(name);
		if (!r->name) {
			free(r->v[0].value);
			free(r->v[1].value);
			break;
		}
		r->differs = r->v[0].distinct > 1 || r->v[1].distinct > 1 || !r->v[0].value ||
			     !r->v[1].value || strcmp(r->v[0].value, r->v[1].value) != 0;
		n++;
	}
	free(names);
	*out = rows;
	*nout = n;
	return 0;
}

static void settings_free(struct setting_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(rows[i].name);
		free(rows[i].v[0].value);
		free(rows[i].v[1].value);
	}
	free(rows);
}

/* ---- totals ---- */

struct total {
	const char *name;
	int64_t device; /* -2: all devices */
	int64_t v[2];
};

/* What every device held at exit and at the peak, on both sides. */
static int device_totals(const struct diff *d, struct total **out, size_t *nout)
{
	struct total *t = NULL;
	size_t n = 0;

	for (int k = 0; k < 2; k++) {
		const struct rd_report *r = &d->side[k].rep;

		for (size_t i = 0; i < r->nprocs; i++) {
			const struct rd_process *p = r->procs[i];

			for (int what = 0; what < 2; what++) {
				size_t nd = what ? p->at_peak.ndevices : p->ndevices;

				for (size_t x = 0; x < nd; x++) {
					const char *name = what ? "at peak" : "live at exit";
					int64_t dev = what ? p->at_peak.devices[x].device :
							     p->devices[x].device;
					int64_t bytes = what ? p->at_peak.devices[x].live_bytes :
							       p->devices[x].live_bytes;
					size_t y;

					for (y = 0; y < n; y++)
						if (t[y].device == dev &&
						    strcmp(t[y].name, name) == 0)
							break;
					if (y == n) {
						struct total *nt =
							reallocarray(t, n + 1, sizeof(*t));

						if (!nt) {
							free(t);
							return -ENOMEM;
						}
						t = nt;
						t[n].name = name;
						t[n].device = dev;
						t[n].v[0] = t[n].v[1] = 0;
						n++;
					}
					util_add_sat(&t[y].v[k], bytes);
				}
			}
		}
	}
	*out = t;
	*nout = n;
	return 0;
}

static int cmp_totals(const void *a, const void *b)
{
	const struct total *x = a, *y = b;

	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	return strcmp(y->name, x->name); /* "live at exit" before "at peak" */
}

/* ---- JSON ---- */

static json_t *pair_json(int64_t o, int64_t n)
{
	return json_pack("{sIsIsI}", "old", (json_int_t)o, "new", (json_int_t)n, "delta",
			 (json_int_t)sub_sat(n, o));
}

static const struct rd_report_site *row_site(const struct row *w)
{
	return w->site[1] ? w->site[1] : w->site[0];
}

static int print_json(const struct diff *d, const struct setting_row *set, size_t nset,
		      const struct total *tot, size_t ntot, FILE *out)
{
	const struct rd_report *ro = &d->side[0].rep, *rn = &d->side[1].rep;
	json_t *root = json_object(), *sides = json_object(), *settings = json_array();
	json_t *totals = json_object(), *devs = json_array(), *sites = json_array();
	int e = 0;

	if (!root || !sides || !settings || !totals || !devs || !sites) {
		e = -ENOMEM;
		goto out;
	}
	json_object_set_new(root, "format", json_string(FORMAT_DIFF));
	for (int k = 0; k < 2; k++) {
		const struct side *s = &d->side[k];
		json_t *paths = json_array(), *one;

		for (size_t i = 0; paths && i < s->npaths; i++)
			json_array_append_new(paths, json_string(s->paths[i]));
		one = json_pack("{sosI}", "paths", paths, "processes", (json_int_t)s->list.n);
		if (one && d->at_label)
			json_object_set_new(one, "marked_processes",
					    json_integer((json_int_t)s->marked));
		json_object_set_new(root, k ? "new" : "old", one);
	}
	for (size_t i = 0; i < nset; i++) {
		json_t *o = json_object();

		json_object_set_new(o, "name", json_string(set[i].name));
		for (int k = 0; k < 2; k++)
			json_object_set_new(o, k ? "new" : "old",
					    set[i].v[k].value ?
						    (set[i].v[k].distinct > 1 ?
							     json_string("(several values)") :
							     json_string(set[i].v[k].value)) :
						    json_null());
		json_object_set_new(o, "differs", json_boolean(set[i].differs));
		json_array_append_new(settings, o);
	}
	json_object_set(root, "settings", settings);
	json_object_set_new(root, "threshold", json_integer(d->threshold));
	if (d->at_label)
		json_object_set_new(root, "at", json_string(d->at_label));
	json_object_set_new(totals, "leaked", pair_json(ro->leaked_bytes, rn->leaked_bytes));
	json_object_set_new(totals, "peak", pair_json(ro->peak_bytes, rn->peak_bytes));
	{
		int64_t a[2] = { 0, 0 };

		for (int k = 0; k < 2; k++) {
			const struct rd_report *r = &d->side[k].rep;

			for (size_t i = 0; i < r->nsites; i++)
				util_add_sat(&a[k], r->sites[i]->c.allocations);
		}
		json_object_set_new(totals, "allocations", pair_json(a[0], a[1]));
	}
	if (d->at_label)
		json_object_set_new(totals, "at",
				    pair_json(d->side[0].at_total, d->side[1].at_total));
	for (size_t i = 0; i < ntot; i++)
		json_array_append_new(
			devs,
			json_pack("{sIsssI sIsI}", "device", (json_int_t)tot[i].device, "what",
				  strcmp(tot[i].name, "at peak") == 0 ? "at_peak" : "live_at_exit",
				  "old", (json_int_t)tot[i].v[0], "new", (json_int_t)tot[i].v[1],
				  "delta", (json_int_t)sub_sat(tot[i].v[1], tot[i].v[0])));
	json_object_set(totals, "devices", devs);
	json_object_set(root, "totals", totals);
	for (size_t i = 0; i < d->nrows; i++) {
		const struct row *w = &d->rows[i];
		const struct rd_report_site *s = row_site(w);
		const struct rd_report_site *o = w->site[0], *n = w->site[1];
		ssize_t h = merge_site_headline(s);
		json_t *j = json_object();

		json_object_set_new(j, "key", json_string(w->key));
		json_object_set_new(j, "status", json_string(status_names[w->status]));
		json_object_set_new(j, "api", json_string(s->api));
		json_object_set_new(j, "kind", json_string(rd_kind_name(s->kind)));
		if (h >= 0)
			json_object_set_new(j, "headline", json_frame_object(&s->frames[h]));
		if (s->library)
			json_object_set_new(j, "library", json_string(s->library));
		if (s->pool)
			json_object_set_new(j, "pool", json_string(s->pool));
		json_object_set_new(j, "leaked",
				    pair_json(o ? o->c.live_bytes : 0, n ? n->c.live_bytes : 0));
		json_object_set_new(j, "peak",
				    pair_json(o ? o->c.peak_bytes : 0, n ? n->c.peak_bytes : 0));
		json_object_set_new(j, "allocations",
				    pair_json(o ? o->c.allocations : 0, n ? n->c.allocations : 0));
		if (d->at_label)
			json_object_set_new(j, "at", pair_json(w->at[0], w->at[1]));
		json_array_append_new(sites, j);
	}
	json_object_set(root, "sites", sites);
	if (d->torch) {
		json_t *ts = json_array();

		for (size_t i = 0; ts && i < d->ntrows; i++) {
			const struct trow *w = &d->trows[i];
			const struct rd_report_tsite *t = w->site[1] ? w->site[1] : w->site[0];
			ssize_t h = torch_merge_headline(t);
			json_t *j = json_object();

			json_object_set_new(j, "key", json_string(w->key));
			json_object_set_new(j, "status", json_string(status_names[w->status]));
			if (h >= 0)
				json_object_set_new(j, "headline",
						    json_frame_object(&t->frames[h]));
			json_object_set_new(j, "live", pair_json(w->live[0], w->live[1]));
			json_object_set_new(j, "peak", pair_json(w->peak[0], w->peak[1]));
			json_array_append_new(ts, j);
		}
		json_object_set_new(root, "torch_sites", ts);
	}
	if (d->fail_limit >= 0)
		json_object_set_new(root, "fail_on_growth",
				    json_pack("{sIsbsI}", "limit", (json_int_t)d->fail_limit,
					      "failed", d->failed > 0, "sites",
					      (json_int_t)d->failed));
	if (json_dumpf(root, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER) < 0 || putc('\n', out) < 0)
		e = -EIO;
out:
	json_decref(sites);
	json_decref(devs);
	json_decref(totals);
	json_decref(settings);
	json_decref(sides);
	json_decref(root);
	return e;
}

/* ---- text ---- */

/* "+1.0 MiB", "-512 B", "0" */
static const char *signed_size(int64_t v, char *buf, size_t len)
{
	char h[32];

	if (v == 0)
		return "0";
	util_human_size(abs_sat(v), h, sizeof(h));
	snprintf(buf, len, "%c%s", v > 0 ? '+' : '-', h);
	return buf;
}

static void print_value(FILE *out, const struct setting *v, int width)
{
	char buf[64];
	const char *s = !v->value ? "-" : v->distinct > 1 ? "(several values)" : v->value;
	size_t n = strlen(s);

	/* long values (a command line) are cut: the JSON has them whole */
	if (width > 0 && n > (size_t)width) {
		snprintf(buf, sizeof(buf), "%.*s\u2026", width - 1 < 60 ? width - 1 : 60, s);
		s = buf;
	}
	cli_put_clean(out, s);
	if (width > 0)
		for (int pad = width - (int)(n > (size_t)width ? (size_t)width : n); pad > 0; pad--)
			putc(' ', out);
}

static void print_headline(FILE *out, const struct rd_report_site *s)
{
	ssize_t h = merge_site_headline(s);
	const struct rd_report_frame *f;

	if (h < 0) {
		fputs("(no stack)", out);
	} else {
		f = &s->frames[h];
		cli_put_clean(out, f->function ? f->function : "?");
		if (f->file) {
			fputs(" (", out);
			cli_put_clean(out, f->file);
			if (f->line > 0)
				fprintf(out, ":%" PRId64, f->line);
			putc(')', out);
		} else if (f->module) {
			fputs(" (", out);
			cli_put_clean(out, f->module);
			putc(')', out);
		}
	}
	if (s->library)
		fprintf(out, " [library: %s]", s->library);
	if (s->pool)
		fprintf(out, " [pool segment: %s]", s->pool);
}

/* A function name, cut to fit a line: C++ template names run to pages. */
static void put_name(FILE *out, const char *name)
{
	char buf[72];

	if (strlen(name) < sizeof(buf)) {
		cli_put_clean(out, name);
		return;
	}
	snprintf(buf, sizeof(buf), "%.*s\u2026", (int)sizeof(buf) - 4, name);
	cli_put_clean(out, buf);
}

/* The innermost frame under the headline that is not noise, a Python one
 * (the library function the user called) before any native one; -1. */
static ssize_t via_frame(const struct rd_report_site *s, ssize_t h)
{
	for (int pass = 0; pass < 2; pass++)
		for (ssize_t i = 0; i < h; i++) {
			const struct rd_report_frame *f = &s->frames[i];

			if (f->noise == NOISE_NONE && f->function && (pass == 1 || f->python))
				return i;
		}
	return -1;
}

/* Where a site differs from its neighbours with the same headline (the
 * innermost frame that is not noise, when it is not the headline), then
 * the headline's callers that are the user's: up to three, in one line. */
static void print_callers(FILE *out, const struct rd_report_site *s)
{
	ssize_t h = merge_site_headline(s), v;
	int shown = 0;

	if (h < 0)
		return;
	v = via_frame(s, h);
	if (v >= 0) {
		const struct rd_report_frame *f = &s->frames[v];

		fputs("      via ", out);
		put_name(out, f->function);
		if (f->file) {
			const char *b = strrchr(f->file, '/');

			fputs(" (", out);
			cli_put_clean(out, b ? b + 1 : f->file);
			if (f->line > 0)
				fprintf(out, ":%" PRId64, f->line);
			putc(')', out);
		} else if (f->module) {
			fputs(" (", out);
			cli_put_clean(out, f->module);
			putc(')', out);
		}
		putc('\n', out);
	}
	for (size_t i = (size_t)h + 1; i < s->nframes && shown < 3; i++) {
		const struct rd_report_frame *f = &s->frames[i];

		if (f->noise != NOISE_NONE || !f->function || (f->python && !f->user))
			continue;
		fputs(shown ? " \u2190 " : "      called from ", out);
		put_name(out, f->function);
		shown++;
		if (!f->python && strcmp(f->function, "main") == 0)
			break;
	}
	if (shown)
		putc('\n', out);
}

static void print_change(FILE *out, const char *what, int64_t o, int64_t n, bool bytes)
{
	char a[32], b[32], c[40];

	if (bytes)
		fprintf(out, "%s %s \u2192 %s (%s)", what, util_human_size(o, a, sizeof(a)),
			util_human_size(n, b, sizeof(b)), signed_size(sub_sat(n, o), c, sizeof(c)));
	else
		fprintf(out, "%s %" PRId64 " \u2192 %" PRId64 " (%+" PRId64 ")", what, o, n,
			sub_sat(n, o));
}

static void print_total(FILE *out, const char *name, int64_t o, int64_t n)
{
	char a[32], b[32], c[40];

	fprintf(out, "  %-24s %12s %12s %14s\n", name, util_human_size(o, a, sizeof(a)),
		util_human_size(n, b, sizeof(b)), signed_size(sub_sat(n, o), c, sizeof(c)));
}

/* The PyTorch views' lines that changed by the threshold or more. */
static void print_torch(FILE *out, const struct diff *d, size_t top)
{
	size_t shown = 0, hidden = 0;
	char a[32], b[40];

	fprintf(out, "\nPYTORCH TENSORS CHANGED (live blocks at exit by Python line; %s or more)\n",
		util_human_size(d->threshold, a, sizeof(a)));
	for (size_t i = 0; i < d->ntrows; i++) {
		const struct trow *w = &d->trows[i];
		const struct rd_report_tsite *t = w->site[1] ? w->site[1] : w->site[0];
		int64_t delta = sub_sat(w->live[1], w->live[0]);
		ssize_t h = torch_merge_headline(t);

		if (w->status == ST_SAME || abs_sat(delta) < d->threshold || delta == 0 ||
		    (top && shown >= top)) {
			hidden += w->status != ST_SAME;
			continue;
		}
		shown++;
		fprintf(out, "\n%-9s %s  ",
			w->status == ST_NEW	 ? "NEW" :
			w->status == ST_VANISHED ? "VANISHED" :
						   "CHANGED",
			signed_size(delta, b, sizeof(b)));
		if (h < 0) {
			fputs("(allocated before the PyTorch view started)", out);
		} else {
			const struct rd_report_frame *f = &t->frames[h];

			put_name(out, f->function);
			fputs(" (", out);
			cli_put_clean(out, f->file);
			fprintf(out, ":%" PRId64 ")", f->line);
		}
		fputs("\n      ", out);
		print_change(out, "live", w->live[0], w->live[1], true);
		fputs(", ", out);
		print_change(out, "peak in the samples", w->peak[0], w->peak[1], true);
		putc('\n', out);
	}
	if (!shown)
		fputs("  none\n", out);
	if (hidden)
		fprintf(out, "\n%zu other %s changed less or %s beyond --top\n", hidden,
			hidden == 1 ? "line" : "lines", hidden == 1 ? "is" : "are");
}

static int print_text(const struct diff *d, const struct setting_row *set, size_t nset,
		      const struct total *tot, size_t ntot, size_t top, FILE *out)
{
	const struct rd_report *ro = &d->side[0].rep, *rn = &d->side[1].rep;
	size_t shown = 0, hidden = 0, listed = 0;
	char a[32], b[40];

	fputs("gpuspy diff:", out);
	for (int k = 0; k < 2; k++) {
		const struct side *s = &d->side[k];

		fprintf(out, "%s %s ", k ? "  \u2192 " : "", s->name);
		for (size_t i = 0; i < s->npaths; i++) {
			if (i)
				fputs(", ", out);
			cli_put_clean(out, s->paths[i]);
		}
		fprintf(out, " (%zu %s)", s->list.n, s->list.n == 1 ? "process" : "processes");
	}
	putc('\n', out);

	fprintf(out, "\nSETTINGS%*s%-32s %s\n", 27 - 8, "", "OLD", "NEW");
	for (size_t i = 0; i < nset; i++) {
		fprintf(out, "%c ", set[i].differs ? '*' : ' ');
		print_value(out, &(struct setting){ .value = set[i].name, .distinct = 1 }, 24);
		putc(' ', out);
		print_value(out, &set[i].v[0], 32);
		putc(' ', out);
		print_value(out, &set[i].v[1], 0);
		putc('\n', out);
	}
	if (nset)
		fputs("  (* differs)\n", out);

	fprintf(out, "\nTOTALS%*s%12s %12s %14s\n", 26 - 6, "", "OLD", "NEW", "CHANGE");
	print_total(out, "leaked at exit", ro->leaked_bytes, rn->leaked_bytes);
	print_total(out, "peak", ro->peak_bytes, rn->peak_bytes);
	if (d->at_label) {
		char name[64];

		snprintf(name, sizeof(name), "live at \"%.40s\"", d->at_label);
		util_sanitize(name);
		print_total(out, name, d->side[0].at_total, d->side[1].at_total);
	}
	for (size_t i = 0; i < ntot; i++) {
		char name[64];

		if (tot[i].device < 0)
			snprintf(name, sizeof(name), "unknown device, %s", tot[i].name);
		else
			snprintf(name, sizeof(name), "device %" PRId64 ", %s", tot[i].device,
				 tot[i].name);
		print_total(out, name, tot[i].v[0], tot[i].v[1]);
	}

	fprintf(out, "\nCHANGED CALL SITES (by size of change; %s %s or more",
		d->at_label ? "live at the mark changed by" : "leaked or peak changed by",
		util_human_size(d->threshold, a, sizeof(a)));
	fputs(")\n", out);
	for (size_t i = 0; i < d->nrows; i++) {
		const struct row *w = &d->rows[i];
		const struct rd_report_site *s = row_site(w);
		const struct rd_report_site *o = w->site[0], *n = w->site[1];

		if (w->status == ST_SAME || w->size < d->threshold ||
		    (w->size == 0 && w->status == ST_CHANGED)) {
			hidden += w->status != ST_SAME;
			continue;
		}
		if (top && listed >= top) {
			hidden++;
			continue;
		}
		listed++;
		shown++;
		fprintf(out, "\n%-9s %s  ",
			w->status == ST_NEW	 ? "NEW" :
			w->status == ST_VANISHED ? "VANISHED" :
						   "CHANGED",
			signed_size(d->at_label ? w->d_at :
						  (abs_sat(w->d_leaked) >= abs_sat(w->d_peak) ?
							   w->d_leaked :
							   w->d_peak),
				    b, sizeof(b)));
		print_headline(out, s);
		fputs("\n     ", out);
		{
			/* only what either side has: a new site's "leaked 0 B ->
			 * 0 B" would be noise */
			const int64_t v[4][2] = {
				{ w->at[0], w->at[1] },
				{ o ? o->c.live_bytes : 0, n ? n->c.live_bytes : 0 },
				{ o ? o->c.peak_bytes : 0, n ? n->c.peak_bytes : 0 },
				{ o ? o->c.allocations : 0, n ? n->c.allocations : 0 },
			};
			static const char *const what[4] = { "at the mark", "leaked", "peak",
							     "allocations" };
			bool first = true;

			for (int m = d->at_label ? 0 : 1; m < 4; m++) {
				if (!v[m][0] && !v[m][1])
					continue;
				fputs(first ? " " : ", ", out);
				print_change(out, what[m], v[m][0], v[m][1], m < 3);
				first = false;
			}
		}
		fprintf(out, "\n      by %s (%s)\n", s->api, rd_kind_name(s->kind));
		print_callers(out, s);
	}
	if (!shown)
		fputs("  none\n", out);
	if (hidden) {
		fprintf(out, "\n%zu other %s changed less or %s beyond --top", hidden,
			hidden == 1 ? "site" : "sites", hidden == 1 ? "is" : "are");
		fputs(" (all are in --format json)\n", out);
	}
	if (d->torch)
		print_torch(out, d, top);
	if (d->fail_limit >= 0) {
		util_human_size(d->fail_limit, a, sizeof(a));
		if (d->failed)
			fprintf(out, "\nFAIL: %zu %s grew by more than %s (--fail-on-growth)\n",
				d->failed, d->failed == 1 ? "site" : "sites", a);
		else
			fprintf(out, "\nOK: no site grew by more than %s\n", a);
	}
	return ferror(out) ? -EIO : 0;
}

/* ---- the command ---- */

int cmd_diff(int argc, char **argv)
{
	enum { OPT_FAIL = 256, OPT_OLD, OPT_NEW };
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "fail-on-growth", required_argument, NULL, OPT_FAIL },
		{ "threshold", required_argument, NULL, 't' },
		{ "at", required_argument, NULL, 'a' },
		{ "top", required_argument, NULL, 'n' },
		{ "old", required_argument, NULL, OPT_OLD },
		{ "new", required_argument, NULL, OPT_NEW },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct diff d = { .threshold = DEFAULT_THRESHOLD, .fail_limit = -1 };
	struct rd_error err = { .msg = "" };
	struct setting_row *set = NULL;
	struct total *tot = NULL;
	size_t nset = 0, ntot = 0, top = DEFAULT_TOP;
	bool json = false, named = false;
	int c, e, status = EXIT_OK;

	d.side[0].name = "OLD";
	d.side[1].name = "NEW";
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":f:t:a:n:h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (strcmp(optarg, "json") == 0)
				json = true;
			else if (strcmp(optarg, "text") == 0)
				json = false;
			else
				status = usage_error("unknown format", optarg);
			break;
		case OPT_FAIL:
			if (util_parse_size(optarg, &d.fail_limit) < 0)
				status = usage_error("--fail-on-growth needs a size, not", optarg);
			break;
		case 't':
			if (util_parse_size(optarg, &d.threshold) < 0)
				status = usage_error("--threshold needs a size, not", optarg);
			break;
		case 'a':
			if (!*optarg)
				status = usage_error("--at needs a label", NULL);
			d.at_label = optarg;
			break;
		case 'n': {
			int64_t v;

			if (util_parse_count(optarg, &v) < 0)
				status = usage_error("--top needs a number, not", optarg);
			top = (size_t)v;
			break;
		}
		case OPT_OLD:
		case OPT_NEW:
			named = true;
			if (add_path(&d.side[c == OPT_NEW], optarg) < 0)
				status = EXIT_FAILURE_OTHER;
			break;
		case 'h':
			fputs(usage, stdout);
			status = fflush(stdout) == 0 ? EXIT_OK : EXIT_FAILURE_OTHER;
			goto done;
		case ':':
			status = usage_error("missing value for", argv[optind - 1]);
			break;
		default:
			status = usage_error("unknown option", argv[optind - 1]);
			break;
		}
		if (status != EXIT_OK)
			goto done;
	}
	if (named && optind < argc) {
		status = usage_error("give the runs either as OLD NEW or with --old and --new, "
				     "not both; extra argument",
				     argv[optind]);
		goto done;
	}
	if (!named) {
		if (argc - optind != 2) {
			status = usage_error(argc - optind < 2 ? "needs two runs, OLD and NEW" :
								 "too many arguments; extra",
					     argc - optind > 2 ? argv[optind + 2] : NULL);
			goto done;
		}
		if (add_path(&d.side[0], argv[optind]) < 0 ||
		    add_path(&d.side[1], argv[optind + 1]) < 0) {
			status = EXIT_FAILURE_OTHER;
			goto done;
		}
	}
	if (!d.side[0].npaths || !d.side[1].npaths) {
		status = usage_error(
			d.side[0].npaths ? "no --new PATH given" : "no --old PATH given", NULL);
		goto done;
	}

	for (int k = 0; k < 2; k++) {
		e = side_load(&d.side[k], d.at_label, &err);
		if (e < 0) {
			cli_print_error(&err, e);
			status = e == -ENOMEM ? EXIT_FAILURE_OTHER : EXIT_USAGE;
			goto done;
		}
	}
	e = diff_match(&d);
	if (e == 0)
		e = torch_match(&d);
	if (e == 0)
		e = settings_collect(&d, &set, &nset);
	if (e == 0)
		e = device_totals(&d, &tot, &ntot);
	if (e < 0) {
		fputs("gpuspy: out of memory\n", stderr);
		status = EXIT_FAILURE_OTHER;
		goto done;
	}
	if (ntot > 1)
		qsort(tot, ntot, sizeof(*tot), cmp_totals);
	if (json)
		e = print_json(&d, set, nset, tot, ntot, stdout);
	else
		e = print_text(&d, set, nset, tot, ntot, top, stdout);
	if (fflush(stdout) != 0 && e == 0)
		e = -errno;
	if (e < 0) {
		fprintf(stderr, "gpuspy: cannot write the diff: %s\n", strerror(-e));
		status = EXIT_FAILURE_OTHER;
	} else {
		status = d.failed ? EXIT_GROWTH : EXIT_OK;
	}
done:
	settings_free(set, nset);
	free(tot);
	free(d.rows);
	for (size_t i = 0; i < d.ntrows; i++)
		free(d.trows[i].key);
	free(d.trows);
	side_clear(&d.side[0]);
	side_clear(&d.side[1]);
	return status;
}
