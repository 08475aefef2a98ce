/* SPDX-License-Identifier: MIT */
/*
 * gpuspy merge: the processes of a run side by side.  They are loaded and
 * merged exactly as `gpuspy report` does; where report adds each site up
 * over the processes, merge shows what each process gave it, and which
 * process stands out (report_spread: a rank that leaks, a worker that
 * peaks while its siblings do not).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "discover.h"
#include "load.h"
#include "merge.h"
#include "util.h"

#define FORMAT_MERGE "gpuspy-merge/1"
#define DEFAULT_TOP  10
/* Beyond this many processes a site's figures are summed up as min,
 * median and max: a column each would not fit a terminal. */
#define MAX_COLUMNS 8

static const char usage[] =
	"Usage: gpuspy merge [--format text|json] [--top N] PATH...\n"
	"\n"
	"Show the processes of a run side by side: each process's totals, and\n"
	"per call site what each process gave it, with the process that stands\n"
	"out.  PATH is as for 'gpuspy report': a run directory, one of its\n"
	"process directories, or a report file.\n"
	"\n"
	"  -f, --format FMT   text (default) or json (format gpuspy-merge/1)\n"
	"  -n, --top N        call sites listed (text: default 10; json: all);\n"
	"                     0 means all\n"
	"  -h, --help         show this help\n";

static int64_t spread_of(const struct rd_report_site *s, enum rd_report_metric m)
{
	return s->spread[m].max - s->spread[m].min;
}

/* By spread: how far apart the processes are on leaked bytes, then on
 * peak bytes; then as the report orders sites (leaked, peak, key), so
 * that sites the processes agree on still come biggest first. */
static int cmp_spread(const void *pa, const void *pb)
{
	const struct rd_report_site *a = *(struct rd_report_site *const *)pa;
	const struct rd_report_site *b = *(struct rd_report_site *const *)pb;

	for (int m = REPORT_LEAKED; m <= REPORT_PEAK; m++)
		if (spread_of(a, m) != spread_of(b, m))
			return spread_of(a, m) > spread_of(b, m) ? -1 : 1;
	if (a->c.live_bytes != b->c.live_bytes)
		return a->c.live_bytes > b->c.live_bytes ? -1 : 1;
	if (a->c.peak_bytes != b->c.peak_bytes)
		return a->c.peak_bytes > b->c.peak_bytes ? -1 : 1;
	return strcmp(a->key, b->key);
}

/* Text */

/* A table of strings, printed with its columns aligned: each cell is
 * formatted once, so that the widths are known before the first line. */
#define TABLE_MAX_COLUMNS 16

struct table {
	size_t nrows, ncols;
	char **cells;	   /* nrows * ncols; NULL is an empty cell */
	const char *align; /* per column: 'l' or 'r' */
};

static int table_init(struct table *t, size_t nrows, size_t ncols, const char *align)
{
	t->nrows = nrows;
	t->ncols = ncols;
	t->align = align;
	t->cells = NULL;
	if (ncols > TABLE_MAX_COLUMNS)
		return -EINVAL;
	t->cells = calloc(nrows * ncols + 1, sizeof(*t->cells));
	return t->cells ? 0 : -ENOMEM;
}

static void table_free(struct table *t)
{
	for (size_t i = 0; t->cells && i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	t->cells = NULL;
}

static int table_set(struct table *t, size_t row, size_t col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int table_set(struct table *t, size_t row, size_t col, const char *fmt, ...)
{
	char **cell = &t->cells[row * t->ncols + col];
	va_list ap;
	int n;

	free(*cell);
	va_start(ap, fmt);
	n = vasprintf(cell, fmt, ap);
	va_end(ap);
	if (n < 0) {
		*cell = NULL;
		return -ENOMEM;
	}
	/* host names and the like come from the files */
	util_sanitize(*cell);
	return 0;
}

/* Each row indented by INDENT, columns two spaces apart, no trailing
 * blanks. */
static void table_print(FILE *out, const struct table *t, const char *indent)
{
	size_t width[TABLE_MAX_COLUMNS] = { 0 };

	for (size_t r = 0; r < t->nrows; r++)
		for (size_t c = 0; c < t->ncols; c++) {
			const char *s = t->cells[r * t->ncols + c];
			size_t n = s ? strlen(s) : 0;

			if (n > width[c])
				width[c] = n;
		}
	for (size_t r = 0; r < t->nrows; r++) {
		size_t last = t->ncols;
		size_t pending = 0; /* blanks owed before the next cell */

		/* the row ends after its last non-empty cell */
		while (last > 0 && !t->cells[r * t->ncols + last - 1])
			last--;
		fputs(indent, out);
		for (size_t c = 0; c < last; c++) {
			const char *s = t->cells[r * t->ncols + c];
			size_t n = s ? strlen(s) : 0;

			if (c > 0)
				pending += 2;
			if (t->align[c] == 'r')
				pending += width[c] - n;
			if (n > 0) {
				fprintf(out, "%*s%s", (int)pending, "", s);
				pending = 0;
			}
			if (t->align[c] != 'r')
				pending += width[c] - n;
		}
		putc('\n', out);
	}
}

static const char *process_state(const struct rd_process *p)
{
	if (p->partial)
		return p->complete ? "partial" : "partial, incomplete";
	return p->complete ? "complete" : "incomplete";
}

/* "leaked, peak": the metrics of which process I is the outlier of
 * SPREAD; "" when none. */
static const char *outlier_of(const struct rd_report_spread *spread, size_t i, char *buf,
			      size_t size)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int m = 0; m < REPORT_METRICS; m++)
		if (spread[m].outlier == (ssize_t)i)
			n += snprintf(buf + n, size - n, "%s%s", n ? ", " : "",
				      report_metric_name(m));
	return buf;
}

static int print_processes(FILE *out, const struct rd_report *r)
{
	static const char *const header[] = {
		"#",	  "process", "host",	    "pid",    "rank",
		"leaked", "peak",    "allocations", "report", "outlier of",
	};
	struct table t;
	char a[32], name[REPORT_NAME_SIZE];
	int e;

	e = table_init(&t, r->nprocs + 1, 10, "rllrrrrrll");
	for (size_t c = 0; e == 0 && c < 10; c++)
		e = table_set(&t, 0, c, "%s", header[c]);
	for (size_t i = 0; e == 0 && i < r->nprocs; i++) {
		const struct rd_process *p = r->procs[i];
		size_t row = i + 1;

		e = table_set(&t, row, 0, "%zu", i);
		if (e == 0)
			e = table_set(&t, row, 1, "%s",
				      report_process_name(r, i, name, sizeof(name)));
		if (e == 0)
			e = table_set(&t, row, 2, "%s", p->host);
		if (e == 0)
			e = table_set(&t, row, 3, "%" PRId64, p->pid);
		if (e == 0)
			e = p->rank >= 0 ? table_set(&t, row, 4, "%" PRId64, p->rank) :
					   table_set(&t, row, 4, "-");
		for (int m = 0; e == 0 && m < REPORT_METRICS; m++)
			e = table_set(&t, row, 5 + m, "%s",
				      report_metric_value(m, r->totals[m][i], a, sizeof(a)));
		if (e == 0)
			e = table_set(&t, row, 8, "%s", process_state(p));
		if (e == 0 && *outlier_of(r->spread, i, name, sizeof(name)))
			e = table_set(&t, row, 9, "%s", name);
	}
	if (e == 0) {
		fputs("\nPROCESSES\n", out);
		table_print(out, &t, "  ");
		for (int m = 0; m < REPORT_METRICS; m++) {
			fprintf(out, "  %-13s", report_metric_name(m));
			report_print_spread(out, r, m, &r->spread[m], r->totals[m]);
			putc('\n', out);
		}
		/* of two, each is as far from their median as the other */
		if (r->nprocs < 3)
			fputs("  (an outlier is named among 3 processes or more)\n", out);
	}
	table_free(&t);
	return e;
}

/* The site's first line: its spreads, api, kind, in how many processes,
 * its labels. */
static void print_site_line(FILE *out, const struct rd_report *r, const struct rd_report_site *s)
{
	char a[32], b[32];

	fprintf(out, "leaked spread %s, peak spread %s, by ",
		report_human_size(spread_of(s, REPORT_LEAKED), a, sizeof(a)),
		report_human_size(spread_of(s, REPORT_PEAK), b, sizeof(b)));
	util_put_clean(out, s->api);
	fprintf(out, " (%s) in %" PRId64 " of %zu %s", rd_kind_name(s->kind), s->processes,
		r->nprocs, r->nprocs == 1 ? "process" : "processes");
	if (s->library)
		fprintf(out, " [library memory: %s]", s->library);
	if (s->pool)
		fprintf(out, " [pool segment: %s]", s->pool);
	if (s->growing)
		fputs(" [growing]", out);
	putc('\n', out);
}

/* What each process gave site S: a column per process when they fit,
 * else min, median and max; then the outliers. */
static int print_site(FILE *out, const struct rd_report *r, const struct rd_report_site *s)
{
	ssize_t headline = report_site_headline(s);
	char a[32], name[REPORT_NAME_SIZE];
	bool columns = r->nprocs <= MAX_COLUMNS;
	bool any = false;
	int e = 0;

	print_site_line(out, r, s);
	if (headline >= 0) {
		fputs("  at ", out);
		report_print_frame(out, &s->frames[headline]);
	} else {
		fputs("  (no stack)\n", out);
	}
	if (columns) {
		struct table t;
		char align[MAX_COLUMNS + 2] = "l";

		memset(align + 1, 'r', r->nprocs);
		align[r->nprocs + 1] = '\0';
		e = table_init(&t, REPORT_METRICS + 1, r->nprocs + 1, align);
		for (size_t i = 0; e == 0 && i < r->nprocs; i++)
			e = table_set(&t, 0, i + 1, "%s",
				      report_process_name(r, i, name, sizeof(name)));
		for (int m = 0; e == 0 && m < REPORT_METRICS; m++) {
			e = table_set(&t, m + 1, 0, "%s", report_metric_name(m));
			for (size_t i = 0; e == 0 && i < r->nprocs; i++)
				e = table_set(
					&t, m + 1, i + 1, "%s",
					report_metric_value(m, s->per_proc[m][i], a, sizeof(a)));
		}
		if (e == 0)
			table_print(out, &t, "  ");
		table_free(&t);
		if (e < 0)
			return e;
	} else {
		for (int m = 0; m < REPORT_METRICS; m++) {
			/* the outliers follow, on a line of their own */
			struct rd_report_spread sp = s->spread[m];

			sp.outlier = -1;
			fprintf(out, "  %-13s", report_metric_name(m));
			report_print_spread(out, r, m, &sp, s->per_proc[m]);
			putc('\n', out);
		}
	}
	for (int m = 0; m < REPORT_METRICS; m++) {
		ssize_t o = s->spread[m].outlier;

		if (o < 0)
			continue;
		fprintf(out, "%s%s %s (%s)", any ? ", " : "  outlier: ", report_metric_name(m),
			report_process_name(r, o, name, sizeof(name)),
			report_metric_value(m, s->per_proc[m][o], a, sizeof(a)));
		any = true;
	}
	fputs(any ? "\n" : "  outlier: none\n", out);
	return 0;
}

static int print_text(FILE *out, const struct rd_report *r, struct rd_report_site **order,
		      size_t top)
{
	size_t n = top && top < r->nsites ? top : r->nsites;
	int e;

	fprintf(out, "gpuspy merge: %zu %s, %zu call %s\n", r->nprocs,
		r->nprocs == 1 ? "process" : "processes", r->nsites,
		r->nsites == 1 ? "site" : "sites");
	e = print_processes(out, r);
	if (e < 0)
		return e;
	fputs("\nCALL SITES BY SPREAD", out);
	if (n < r->nsites)
		fprintf(out, " (top %zu of %zu call sites)", n, r->nsites);
	fputs("\n", out);
	if (r->nsites == 0)
		fputs("  none\n", out);
	for (size_t i = 0; i < n && e == 0; i++)
		e = print_site(out, r, order[i]);
	if (e < 0)
		return e;
	return ferror(out) ? -EIO : 0;
}

/* JSON */

static json_t *values_json(const int64_t *v, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_integer(v[i]));
	return a;
}

static json_t *process_json(const struct rd_report *r, size_t i)
{
	const struct rd_process *p = r->procs[i];
	json_t *o = json_object();

	json_object_set_new(o, "index", json_integer(i));
	json_object_set_new(o, "path", json_string(p->path));
	json_object_set_new(o, "host", json_string(p->host));
	json_object_set_new(o, "pid", json_integer(p->pid));
	if (p->rank >= 0)
		json_object_set_new(o, "rank", json_integer(p->rank));
	json_object_set_new(o, "complete", json_boolean(p->complete));
	if (p->partial) {
		json_object_set_new(o, "partial", json_true());
		json_object_set_new(o, "report", json_string(p->file));
	}
	for (int m = 0; m < REPORT_METRICS; m++)
		json_object_set_new(o, report_metric_name(m), json_integer(r->totals[m][i]));
	return o;
}

static json_t *site_json(const struct rd_report *r, const struct rd_report_site *s)
{
	json_t *o = json_object();
	ssize_t headline = report_site_headline(s);

	json_object_set_new(o, "key", json_string(s->key));
	json_object_set_new(o, "api", json_string(s->api));
	json_object_set_new(o, "kind", json_string(rd_kind_name(s->kind)));
	if (s->library)
		json_object_set_new(o, "library", json_string(s->library));
	if (s->pool)
		json_object_set_new(o, "pool", json_string(s->pool));
	json_object_set_new(o, "processes", json_integer(s->processes));
	if (headline >= 0)
		json_object_set_new(o, "headline", report_frame_json(&s->frames[headline]));
	for (int m = 0; m < REPORT_METRICS; m++)
		json_object_set_new(o, report_metric_name(m),
				    values_json(s->per_proc[m], r->nprocs));
	json_object_set_new(o, "spread", report_spreads_json(s->spread));
	return o;
}

static int print_json(FILE *out, const struct rd_report *r, struct rd_report_site **order,
		      size_t top)
{
	json_t *root = json_object();
	json_t *procs = json_array();
	json_t *sites = json_array();
	size_t n = top && top < r->nsites ? top : r->nsites;
	int e = 0;

	if (!root || !procs || !sites) {
		e = -ENOMEM;
		goto out;
	}
	/* jansson keeps insertion order: the keys come out as in
	 * docs/format.md, the same every time */
	json_object_set_new(root, "format", json_string(FORMAT_MERGE));
	for (size_t i = 0; i < r->nprocs; i++)
		json_array_append_new(procs, process_json(r, i));
	json_object_set(root, "processes", procs);
	json_object_set_new(root, "spread", report_spreads_json(r->spread));
	for (size_t i = 0; i < n; i++)
		json_array_append_new(sites, site_json(r, order[i]));
	json_object_set(root, "sites", sites);
	/* a part that could not be allocated is simply missing: check the
	 * arrays kept the count they should have */
	if (json_array_size(procs) != r->nprocs || json_array_size(sites) != n ||
	    json_object_size(root) != 4) {
		e = -ENOMEM;
		goto out;
	}
	if (json_dumpf(root, out, JSON_INDENT(2)) < 0 || putc('\n', out) == EOF)
		e = -EIO;
out:
	json_decref(procs);
	json_decref(sites);
	json_decref(root);
	return e;
}

int cmd_merge(int argc, char **argv)
{
	struct rd_report_site **order;
	struct cli_loaded l;
	int e = cli_report_setup("merge", usage, DEFAULT_TOP, argc, argv, &l);

	if (e >= 0)
		return e;
	order = malloc((l.rep.nsites + 1) * sizeof(*order));
	if (order) {
		memcpy(order, l.rep.sites, l.rep.nsites * sizeof(*order));
		if (l.rep.nsites > 1)
			qsort(order, l.rep.nsites, sizeof(*order), cmp_spread);
		if (l.json)
			e = print_json(stdout, &l.rep, order, l.top);
		else
			e = print_text(stdout, &l.rep, order, l.top);
	} else {
		e = -ENOMEM;
	}
	free(order);
	return cli_report_done(&l, e);
}
