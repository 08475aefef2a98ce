/* SPDX-License-Identifier: MIT */
/* Runs lined up, one per commit (lineup.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "discover.h"
#include "lineup.h"
#include "load.h"
#include "merge.h"
#include "names.h"
#include "symbolize.h"

static int cmp_peak_key(const void *a, const void *b)
{
	return strcmp(((const struct lineup_site_peak *)a)->key,
		      ((const struct lineup_site_peak *)b)->key);
}

/* The commit of R's processes: the first of names_commit_env set in a
 * process's environment, from the first process that has one. */
static int commit_of_processes(struct lineup_run *r, const struct rd_process_list *list)
{
	for (size_t i = 0; i < list->n; i++) {
		const struct rd_process *p = list->items[i];

		for (size_t k = 0; k < GS_COMMIT_ENV_COUNT; k++) {
			const char *v = NULL;

			for (size_t j = 0; j < p->nenv && !v; j++)
				if (strcmp(p->env[j].name, names_commit_env[k]) == 0)
					v = p->env[j].value;
			if (!v || !names_commit_valid(v))
				continue;
			if (!r->commit) {
				r->commit = strdup(v);
				r->commit_from = strdup(names_commit_env[k]);
				if (!r->commit || !r->commit_from)
					return -ENOMEM;
			} else if (strcmp(r->commit, v) != 0) {
				r->commit_mixed = true;
			}
			break;
		}
	}
	return 0;
}

int lineup_load(const char *path, struct lineup_run *r, struct rd_error *err)
{
	struct rd_process_list list = { 0 };
	struct symbolizer *sym = NULL;
	struct rd_report rep = { 0 };
	struct rd_run run = { .exit_status = -1 };
	bool built = false;
	struct stat st;
	int e;

	memset(r, 0, sizeof(*r));
	r->start_time = -1;
	r->path = strdup(path);
	if (!r->path)
		return -ENOMEM;
	e = discover_path(&list, path, err);
	if (e == 0 && list.n == 0) {
		/* every process unreadable: the first one's reason */
		if (list.nunreadable)
			rd_error_set(err, NULL, "%s", list.unreadable[0].msg);
		else
			rd_error_set(err, path, "no process report");
		e = -EINVAL;
	}
	/* what gpuspy run recorded of the run: its commit, its start */
	if (e == 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		e = load_run(path, &run, err);
	if (e == 0 && run.present) {
		r->start_time = run.start_time;
		if (run.commit) {
			r->commit = run.commit;
			run.commit = NULL;
			r->commit_from = strdup(GS_FILE_RUN);
			e = r->commit_from ? 0 : -ENOMEM;
		}
		if (e == 0 && run.id) {
			r->run_id = run.id;
			run.id = NULL;
		}
	}
	if (e == 0 && !r->commit)
		e = commit_of_processes(r, &list);
	for (size_t i = 0; e == 0 && i < list.n; i++) {
		const struct rd_process *p = list.items[i];

		if (!r->run_id && p->run_id && !(r->run_id = strdup(p->run_id)))
			e = -ENOMEM;
		if (!run.present && p->start_time >= 0 &&
		    (r->start_time < 0 || p->start_time < r->start_time))
			r->start_time = p->start_time;
	}
	if (e == 0)
		e = symbolizer_new(&sym);
	if (e == 0) {
		e = merge_build(&rep, &list, sym, err);
		built = e == 0;
	}
	if (e == 0) {
		r->nprocs = list.n;
		r->nunreadable = list.nunreadable;
		r->leaked = rep.leaked_bytes - rep.pool_held_bytes;
		r->pools = rep.pool_held_bytes;
		r->peak = rep.peak_bytes;
		r->sites = calloc(rep.nsites + 1, sizeof(*r->sites));
		if (!r->sites)
			e = -ENOMEM;
	}
	for (size_t i = 0; e == 0 && i < rep.nsites; i++) {
		const struct rd_report_site *s = rep.sites[i];
		struct lineup_site_peak *sp = &r->sites[r->nsites];

		sp->key = strdup(s->key);
		sp->name = strdup(merge_site_name(s));
		sp->peak = s->c.peak_bytes;
		if (sp->key && sp->name)
			r->nsites++;
		else
			e = -ENOMEM;
		if (e < 0) {
			free(sp->key);
			free(sp->name);
		}
	}
	if (e == 0)
		qsort(r->sites, r->nsites, sizeof(*r->sites), cmp_peak_key);
	if (e == -ENOMEM)
		rd_error_set(err, path, "out of memory");
	if (built)
		merge_clear(&rep);
	symbolizer_free(sym);
	rd_process_list_clear(&list);
	rd_run_clear(&run);
	if (e < 0)
		lineup_clear(r);
	return e;
}

void lineup_clear(struct lineup_run *r)
{
	for (size_t i = 0; i < r->nsites; i++) {
		free(r->sites[i].key);
		free(r->sites[i].name);
	}
	free(r->sites);
	free(r->path);
	free(r->commit);
	free(r->commit_from);
	free(r->run_id);
	memset(r, 0, sizeof(*r));
}

int64_t lineup_site_peak(const struct lineup_run *r, const char *key)
{
	struct lineup_site_peak k = { .key = (char *)key };
	const struct lineup_site_peak *hit =
		bsearch(&k, r->sites, r->nsites, sizeof(*r->sites), cmp_peak_key);

	return hit ? hit->peak : -1;
}

static int cmp_top(const void *a, const void *b)
{
	const struct lineup_site *x = a, *y = b;

	if (x->max_peak != y->max_peak)
		return x->max_peak > y->max_peak ? -1 : 1;
	return strcmp(x->key, y->key);
}

/* A site's peak in one run, for sorting: by key, then by run. */
struct entry {
	const struct lineup_site_peak *sp;
	size_t run;
};

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	int c = strcmp(x->sp->key, y->sp->key);

	return c ? c : (x->run > y->run) - (x->run < y->run);
}

int lineup_top(const struct lineup_run *runs, size_t n, size_t top, struct lineup_site **out,
	       size_t *nout)
{
	struct lineup_site *all;
	struct entry *v;
	size_t total = 0, k = 0, nall = 0;

	*out = NULL;
	*nout = 0;
	for (size_t i = 0; i < n; i++)
		total += runs[i].nsites;
	v = calloc(total + 1, sizeof(*v));
	all = calloc(total + 1, sizeof(*all));
	if (!v || !all) {
		free(v);
		free(all);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < runs[i].nsites; j++)
			v[k++] = (struct entry){ &runs[i].sites[j], i };
	qsort(v, total, sizeof(*v), cmp_entry);
	/* one site per key: the highest peak, the last run's name */
	for (size_t i = 0; i < total; i++) {
		if (nall && strcmp(all[nall - 1].key, v[i].sp->key) == 0) {
			struct lineup_site *s = &all[nall - 1];

			s->name = v[i].sp->name;
			if (v[i].sp->peak > s->max_peak)
				s->max_peak = v[i].sp->peak;
			continue;
		}
		all[nall++] = (struct lineup_site){ v[i].sp->key, v[i].sp->name, v[i].sp->peak };
	}
	free(v);
	if (nall)
		qsort(all, nall, sizeof(*all), cmp_top);
	*out = all;
	*nout = top && top < nall ? top : nall;
	return 0;
}
