/* SPDX-License-Identifier: MIT */
/*
 * CSV for plotting: the history of every process of a report (gpuspy
 * report --format csv; docs/format.md, "gpuspy report --format csv").
 * Long form, one row per series per line of history.jsonl, so that a
 * spreadsheet or a data-frame library can pivot it as it likes:
 *
 *   host,pid,rank,t0,t1,n,series,min,max,last,label
 *
 * Fields are quoted as RFC 4180 says, control characters become '?'.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lineup.h"
#include "load_history.h"
#include "merge.h"
#include "print.h"
#include "util.h"

static void field(FILE *out, const char *s)
{
	if (!s)
		return;
	if (!strpbrk(s, ",\"\r\n")) {
		for (const unsigned char *p = (const unsigned char *)s; *p; p++)
			putc(*p < 0x20 || *p == 0x7f ? '?' : *p, out);
		return;
	}
	putc('"', out);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"')
			putc('"', out);
		putc(*p < 0x20 || *p == 0x7f ? '?' : *p, out);
	}
	putc('"', out);
}

/* The report's site for site KEY of process P, NULL when it has none. */
static const struct rd_report_site *report_site(const struct rd_report *r, size_t p, int64_t key)
{
	const struct rd_process *proc = r->procs[p];

	for (size_t i = 0; i < proc->nsites; i++)
		if (proc->sites[i].id == key)
			return r->site_of[p][i];
	return NULL;
}

static void series_name(FILE *out, const struct rd_hist_series *s)
{
	switch (s->kind) {
	case RD_HIST_DEVICE:
		fprintf(out, "device:%" PRId64, s->key);
		break;
	case RD_HIST_SITE:
		fprintf(out, "site:%" PRId64, s->key);
		break;
	case RD_HIST_OTHER:
		fputs("other", out);
		break;
	case RD_HIST_OUTSIDE:
		fprintf(out, "nvml:%" PRId64, s->key);
		break;
	case RD_HIST_POOL_RESERVED:
		fprintf(out, "pool_reserved:%" PRId64, s->key);
		break;
	case RD_HIST_POOL_ALLOCATED:
		fprintf(out, "pool_allocated:%" PRId64, s->key);
		break;
	case RD_HIST_TORCH:
		fprintf(out, "torch:%" PRId64, s->key);
		break;
	case RD_HIST_TORCH_OTHER:
		fputs("torch_other", out);
		break;
	case RD_HIST_FW: {
		int fw, place, c;

		rd_hist_fw_split(s->key, &fw, &place, &c);
		if (place == GS_FW_HOST)
			fprintf(out, "fw:%s:host:%s", names_fw[fw], names_fw_counter[c]);
		else
			fprintf(out, "fw:%s:%d:%s", names_fw[fw], place, names_fw_counter[c]);
		break;
	}
	}
}

/* One value of a row: a series of the file, or the sum of the process's
 * sites that the report merged into one site. */
struct cell {
	const struct rd_hist_series *series;
	const struct rd_report_site *site; /* NULL: SERIES alone */
	int64_t min, max, last;
};

static void print_cell(FILE *out, const struct rd_process *proc, const char *rank,
		       const struct rd_hist_row *row, const struct cell *c, const char *label)
{
	field(out, proc->host);
	fprintf(out, ",%" PRId64 ",%s,%.3f,%.3f,%" PRId64 ",", proc->pid, rank, row->t0, row->t1,
		row->n);
	if (c->site)
		fprintf(out, "#%zu", c->site->number);
	else
		series_name(out, c->series);
	fprintf(out, ",%" PRId64 ",%" PRId64 ",%" PRId64 ",", c->min, c->max, c->last);
	field(out, label);
	putc('\n', out);
}

static int print_process(FILE *out, const struct rd_report *r, size_t p, const struct rd_history *h)
{
	static const char *const events[] = { "mark", "snapshot", "oom" };
	const struct rd_process *proc = r->procs[p];
	const struct rd_report_site **site = calloc(h->nseries + 1, sizeof(*site));
	/* by report site number: where in CELLS this row has it, plus 1 */
	size_t *at = calloc(r->nsites + 1, sizeof(*at));
	struct cell *cells = NULL;
	size_t room = 0;
	char rank[24] = "";

	if (!site || !at) {
		free(site);
		free(at);
		return -ENOMEM;
	}
	for (size_t i = 0; i < h->nseries; i++)
		if (h->series[i].kind == RD_HIST_SITE)
			site[i] = report_site(r, p, h->series[i].key);
	if (proc->rank >= 0)
		snprintf(rank, sizeof(rank), "%" PRId64, proc->rank);
	for (size_t i = 0; i < h->nrows; i++) {
		const struct rd_hist_row *row = &h->rows[i];
		size_t n = 0;

		if (row->type == RD_HIST_EVENT) {
			field(out, proc->host);
			fprintf(out, ",%" PRId64 ",%s,%.3f,%.3f,", proc->pid, rank, row->t0,
				row->t1);
			if (row->number)
				fprintf(out, "%" PRId64, row->number);
			fprintf(out, ",%s,,,,", events[row->event]);
			field(out, row->label);
			putc('\n', out);
			continue;
		}
		if (row->count > room) {
			struct cell *c = reallocarray(cells, row->count, sizeof(*c));

			if (!c) {
				free(cells);
				free(site);
				free(at);
				return -ENOMEM;
			}
			cells = c;
			room = row->count;
		}
		/* a site the report merged from several of the process's (two
		 * lines of one function) is one series, its values summed:
		 * exact at each sample, a bound over a row that spans several */
		for (size_t k = 0; k < row->count; k++) {
			const struct rd_hist_value *v = &h->values[row->first + k];
			const struct rd_report_site *rs = site[v->series];
			struct cell *c;

			if (rs && at[rs->number]) {
				c = &cells[at[rs->number] - 1];
				util_add_sat(&c->min, v->min);
				util_add_sat(&c->max, v->max);
				util_add_sat(&c->last, v->last);
				continue;
			}
			c = &cells[n++];
			*c = (struct cell){ &h->series[v->series], rs, v->min, v->max, v->last };
			if (rs)
				at[rs->number] = n;
		}
		for (size_t k = 0; k < n; k++) {
			print_cell(out, proc, rank, row, &cells[k],
				   cells[k].site ? merge_site_name(cells[k].site) :
						   cells[k].series->label);
			if (cells[k].site)
				at[cells[k].site->number] = 0;
		}
	}
	free(cells);
	free(site);
	free(at);
	return ferror(out) ? -EIO : 0;
}

int csv_print_history(const struct rd_report *r, const struct rd_history *h, FILE *out)
{
	int e = 0;

	fputs("host,pid,rank,t0,t1,n,series,min,max,last,label\n", out);
	for (size_t p = 0; p < r->nprocs && e == 0; p++)
		if (h[p].present)
			e = print_process(out, r, p, &h[p]);
	return e ? e : ferror(out) ? -EIO : 0;
}

int csv_print_commits(const struct commits_view *v, FILE *out)
{
	fputs("run,commit,commit_from,run_id,path,start_time,processes,leaked_bytes,pool_bytes,"
	      "peak_bytes",
	      out);
	for (size_t k = 0; k < v->ntop; k++) {
		char *h = NULL;

		putc(',', out);
		if (asprintf(&h, "peak_bytes: %s", v->top[k].name) < 0)
			return -ENOMEM;
		field(out, h);
		free(h);
	}
	putc('\n', out);
	for (size_t i = 0; i < v->nruns; i++) {
		const struct lineup_run *r = &v->runs[i];

		fprintf(out, "%zu,", i + 1);
		field(out, r->commit);
		putc(',', out);
		field(out, r->commit_from);
		putc(',', out);
		field(out, r->run_id);
		putc(',', out);
		field(out, r->path);
		putc(',', out);
		if (r->start_time >= 0)
			fprintf(out, "%.3f", r->start_time);
		fprintf(out, ",%zu,%" PRId64 ",%" PRId64 ",%" PRId64, r->nprocs, r->leaked,
			r->pools, r->peak);
		for (size_t k = 0; k < v->ntop; k++) {
			int64_t p = lineup_site_peak(r, v->top[k].key);

			putc(',', out);
			if (p >= 0)
				fprintf(out, "%" PRId64, p);
		}
		putc('\n', out);
	}
	return ferror(out) ? -EIO : 0;
}
