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

#include "load_history.h"
#include "merge.h"
#include "print.h"

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

/* The headline frame of site KEY of process P, as the text report
 * prints it; NULL when the report has no such site. */
static char *site_name(const struct rd_report *r, size_t p, int64_t key)
{
	const struct rd_process *proc = r->procs[p];
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	for (size_t i = 0; i < proc->nsites; i++) {
		const struct rd_report_site *s = r->site_of[p][i];
		ssize_t at;

		if (proc->sites[i].id != key || !s)
			continue;
		at = merge_site_headline(s);
		if (at < 0)
			return NULL;
		f = open_memstream(&buf, &len);
		if (!f)
			return NULL;
		text_print_frame(f, &s->frames[at]);
		if (fclose(f) != 0) {
			free(buf);
			return NULL;
		}
		buf[strcspn(buf, "\n")] = '\0';
		return buf;
	}
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

static int print_process(FILE *out, const struct rd_report *r, size_t p, const struct rd_history *h)
{
	static const char *const events[] = { "mark", "snapshot", "oom" };
	const struct rd_process *proc = r->procs[p];
	char **names = calloc(h->nseries + 1, sizeof(*names));
	char rank[24] = "";

	if (!names)
		return -ENOMEM;
	for (size_t i = 0; i < h->nseries; i++)
		if (h->series[i].kind == RD_HIST_SITE)
			names[i] = site_name(r, p, h->series[i].key);
		else if (h->series[i].label)
			names[i] = strdup(h->series[i].label);
	if (proc->rank >= 0)
		snprintf(rank, sizeof(rank), "%" PRId64, proc->rank);
	for (size_t i = 0; i < h->nrows; i++) {
		const struct rd_hist_row *row = &h->rows[i];

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
		for (size_t k = 0; k < row->count; k++) {
			const struct rd_hist_value *v = &h->values[row->first + k];

			field(out, proc->host);
			fprintf(out, ",%" PRId64 ",%s,%.3f,%.3f,%" PRId64 ",", proc->pid, rank,
				row->t0, row->t1, row->n);
			series_name(out, &h->series[v->series]);
			fprintf(out, ",%" PRId64 ",%" PRId64 ",%" PRId64 ",", v->min, v->max,
				v->last);
			field(out, names[v->series]);
			putc('\n', out);
		}
	}
	for (size_t i = 0; i < h->nseries; i++)
		free(names[i]);
	free(names);
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
