/* SPDX-License-Identifier: MIT */
/* The difference of two runs (diff.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "budget.h"
#include "diff.h"
#include "discover.h"
#include "rundir.h"
#include "util.h"

static const char *const status_names[] = { "same", "changed", "new", "vanished" };

const char *diff_status_name(enum diff_status status)
{
	return status_names[status];
}

int diff_add_path(struct diff_side *s, char *path)
{
	char **p = reallocarray(s->paths, s->npaths + 1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	s->paths = p;
	s->paths[s->npaths++] = path;
	return 0;
}

int64_t diff_sub_sat(int64_t a, int64_t b)
{
	int64_t d;

	if (__builtin_sub_overflow(a, b, &d))
		return a > b ? INT64_MAX : INT64_MIN;
	return d;
}

int64_t diff_abs_sat(int64_t x)
{
	return x == INT64_MIN ? INT64_MAX : (x < 0 ? -x : x);
}

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

static int64_t at_of(const struct diff_side *s, const struct rd_report_site *site)
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
static void no_mark_error(const struct diff_side *s, const char *label, struct rd_error *err)
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
static int side_at(struct diff_side *s, const char *label, struct rd_error *err)
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

int diff_side_load(struct diff_side *s, const char *at_label, struct rd_error *err)
{
	int e;

	for (size_t i = 0; i < s->npaths; i++) {
		e = discover_path(&s->list, s->paths[i], err);
		if (e < 0)
			return e;
	}
	/* every process unreadable: the caller says so (list.unreadable) */
	if (s->list.n == 0 && s->list.nunreadable)
		return 0;
	e = symbolizer_new(&s->sym);
	if (e < 0)
		return e;
	e = merge_build(&s->rep, &s->list, s->sym, err);
	if (e < 0)
		return e;
	s->built = true;
	e = growth_view_load(&s->rep, &s->growth, err);
	if (e < 0)
		return e;
	s->rep.growth = &s->growth;
	if (at_label)
		return side_at(s, at_label, err);
	return 0;
}

void diff_side_clear(struct diff_side *s)
{
	if (s->built)
		merge_clear(&s->rep);
	symbolizer_free(s->sym);
	rd_process_list_clear(&s->list);
	free(s->paths);
	free(s->at);
	growth_view_clear(&s->growth);
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
	const struct diff_row *x = a, *y = b;

	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return strcmp(x->key, y->key);
}

static void row_compute(struct diff *d, struct diff_row *w)
{
	const struct rd_report_site *o = w->site[0], *n = w->site[1];
	int64_t ol = o ? o->c.live_bytes : 0, nl = n ? n->c.live_bytes : 0;
	int64_t op = o ? o->c.peak_bytes : 0, np = n ? n->c.peak_bytes : 0;
	int64_t oa = o ? o->c.allocations : 0, na = n ? n->c.allocations : 0;
	int64_t grew;

	w->d_leaked = diff_sub_sat(nl, ol);
	w->d_peak = diff_sub_sat(np, op);
	w->d_allocs = diff_sub_sat(na, oa);
	w->d_at = diff_sub_sat(w->at[1], w->at[0]);
	if (d->at_label) {
		w->size = diff_abs_sat(w->d_at);
		grew = w->d_at;
	} else {
		w->size = diff_abs_sat(w->d_leaked) > diff_abs_sat(w->d_peak) ?
				  diff_abs_sat(w->d_leaked) :
				  diff_abs_sat(w->d_peak);
		grew = w->d_leaked > w->d_peak ? w->d_leaked : w->d_peak;
	}
	if (!o)
		w->status = DIFF_NEW;
	else if (!n)
		w->status = DIFF_VANISHED;
	else if (w->d_leaked || w->d_peak || w->d_allocs || w->d_at)
		w->status = DIFF_CHANGED;
	else
		w->status = DIFF_SAME;
	w->grew = grew;
	w->failed = d->fail_limit >= 0 && grew > d->fail_limit;
	d->failed += w->failed;
}

/* Sites of both sides, matched on their keys (a merged report holds each
 * key once), ordered by how much they changed. */
int diff_match(struct diff *d)
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
		struct diff_row *w = &d->rows[d->nrows++];
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

void diff_budget(struct diff *d, const struct budget_file *b)
{
	d->over_budget = 0;
	d->budget = b;
	for (size_t i = 0; i < d->nrows; i++) {
		struct diff_row *w = &d->rows[i];
		const struct rd_report_site *n = w->site[1];

		w->budget = NULL;
		w->over_budget = false;
		if (!n)
			continue;
		w->budget = budget_match(b, n->name ? n->name : "");
		/* a budget is what one process may hold: ranks are not summed */
		w->budget_peak =
			d->side[1].rep.nprocs > 0 ? n->spread[REPORT_PEAK].max : n->c.peak_bytes;
		w->over_budget = w->budget && w->budget_peak > w->budget->bytes;
		d->over_budget += w->over_budget;
	}
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
	const struct diff_trow *x = a, *y = b;
	int64_t dx = diff_abs_sat(diff_sub_sat(x->live[1], x->live[0]));
	int64_t dy = diff_abs_sat(diff_sub_sat(y->live[1], y->live[0]));

	if (dx != dy)
		return dx > dy ? -1 : 1;
	return strcmp(x->key, y->key);
}

int diff_match_torch(struct diff *d)
{
	for (int k = 0; k < 2; k++) {
		const struct rd_report_torch *t = &d->side[k].rep.torch;

		d->torch |= t->present;
		for (size_t i = 0; i < t->nsites; i++) {
			const struct rd_report_tsite *ts = t->sites[i];
			char *key = strip_lines(ts->key);
			struct diff_trow *w = NULL;

			if (!key)
				return -ENOMEM;
			for (size_t j = 0; j < d->ntrows && !w; j++)
				if (strcmp(d->trows[j].key, key) == 0)
					w = &d->trows[j];
			if (w) {
				free(key);
			} else {
				struct diff_trow *g =
					reallocarray(d->trows, d->ntrows + 1, sizeof(*g));

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
		struct diff_trow *w = &d->trows[j];

		w->status = !w->site[0]						 ? DIFF_NEW :
			    !w->site[1]						 ? DIFF_VANISHED :
			    w->live[0] != w->live[1] || w->peak[0] != w->peak[1] ? DIFF_CHANGED :
										   DIFF_SAME;
		/* at the mark there is no view: it is sampled, not marked */
		w->failed = !d->at_label && d->fail_limit >= 0 &&
			    diff_sub_sat(w->live[1], w->live[0]) > d->fail_limit;
		d->failed += w->failed;
	}
	if (d->ntrows > 1)
		qsort(d->trows, d->ntrows, sizeof(*d->trows), cmp_trows);
	return 0;
}

/* ---- settings: what each run was ---- */

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

static int setting_get(const struct diff_side *s, setting_fn fn, const void *arg,
		       struct diff_setting *out)
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

/* Environment variables that differ from process to process by design,
 * or name paths that say nothing about the run: not settings. */
static bool env_is_setting(const char *name)
{
	static const char *const skip[] = {
		"RANK",	       "LOCAL_RANK",   "LD_PRELOAD",	      "GPUSPY_OUTPUT_DIR",
		GS_ENV_RUN_ID, GS_ENV_RUN_DIR, "CUDA_VISIBLE_DEVICES"
	};

	for (size_t i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
		if (strcmp(name, skip[i]) == 0)
			return false;
	return true;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int diff_settings(const struct diff *d, struct diff_setting_row **out, size_t *nout)
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
	struct diff_setting_row *rows;

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
		struct diff_setting_row *r = &rows[n];
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

void diff_settings_free(struct diff_setting_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(rows[i].name);
		free(rows[i].v[0].value);
		free(rows[i].v[1].value);
	}
	free(rows);
}

/* ---- totals ---- */

static int cmp_totals(const void *a, const void *b)
{
	const struct diff_total *x = a, *y = b;

	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	return strcmp(y->name, x->name); /* "live at exit" before "at peak" */
}

/* What every device held at exit and at the peak, on both sides. */
int diff_totals(const struct diff *d, struct diff_total **out, size_t *nout)
{
	struct diff_total *t = NULL;
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
						struct diff_total *nt =
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
	if (n > 1)
		qsort(t, n, sizeof(*t), cmp_totals);
	*out = t;
	*nout = n;
	return 0;
}

const struct rd_report_site *diff_row_site(const struct diff_row *w)
{
	return w->site[1] ? w->site[1] : w->site[0];
}

void diff_clear(struct diff *d)
{
	free(d->rows);
	for (size_t i = 0; i < d->ntrows; i++)
		free(d->trows[i].key);
	free(d->trows);
	diff_side_clear(&d->side[0]);
	diff_side_clear(&d->side[1]);
}
