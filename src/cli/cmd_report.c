/* SPDX-License-Identifier: MIT */
/* gpuspy report: load, symbolize, merge, print. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "names.h"
#include "growth_view.h"
#include "load_history.h"
#include "print.h"

#define DEFAULT_TOP 10

static const char usage[] =
	"Usage: gpuspy report [--format FMT] [--at LABEL|--peak] [--top N] PATH...\n"
	"\n"
	"Summarize gpuspy reports.  Each PATH is a run directory (as written by\n"
	"'gpuspy run'), one of its process directories, or a report file\n"
	"(report.json, or an out-of-memory post-mortem oom-N.json).\n"
	"\n"
	"  -f, --format FMT   text (default), json (format " GS_FORMAT_REPORT "), or\n"
	"                     csv: each process's history of live bytes;\n"
	"                     pprof (gzip'ed profile.proto), perfetto (trace-event\n"
	"                     JSON) or collapsed (folded stacks): for other tools;\n"
	"                     html: one self-contained page\n"
	"      --at LABEL     pprof, collapsed, html: at each process's last mark LABEL\n"
	"      --peak         pprof, collapsed, html: at each process's peak\n"
	"  -n, --top N        call sites per list (text: default 10; json: all);\n"
	"                     0 means all\n"
	"  -h, --help         show this help\n";

/* Every process's history.jsonl loaded before anything is printed: one
 * bad file is one line and exit status 2, nothing on stdout. */
static int report_csv(struct cli_loaded *l)
{
	struct rd_history *h = calloc(l->rep.nprocs + 1, sizeof(*h));
	struct rd_error err = { .msg = "" };
	int e = h ? 0 : -ENOMEM;

	for (size_t i = 0; i < l->rep.nprocs && e == 0; i++)
		e = load_history(l->rep.procs[i], &h[i], &err);
	if (e < 0) {
		cli_print_error(&err, e);
		e = e == -ENOMEM ? EXIT_FAILURE_OTHER : EXIT_USAGE;
	} else {
		e = csv_print_history(&l->rep, h, stdout);
	}
	for (size_t i = 0; h && i < l->rep.nprocs; i++)
		rd_history_clear(&h[i]);
	free(h);
	return e > 0 ? (cli_report_done(l, 0), e) : cli_report_done(l, e);
}

int cmd_report(int argc, char **argv)
{
	struct cli_loaded l;
	struct rd_growth_view growth;
	struct rd_error err = { .msg = "" };
	int e = cli_report_setup("report", usage, DEFAULT_TOP, argc, argv, &l);

	if (e >= 0)
		return e;
	if (l.csv)
		return report_csv(&l);
	if (l.export)
		return cli_export_report(&l);
	/* the growing sites' rate, since when and sparkline: every history
	 * read before anything is printed, as for csv */
	e = growth_view_load(&l.rep, &growth, &err);
	if (e < 0) {
		cli_print_error(&err, e);
		cli_report_done(&l, 0);
		return e == -ENOMEM ? EXIT_FAILURE_OTHER : EXIT_USAGE;
	}
	l.rep.growth = &growth;
	if (l.json)
		e = json_print_report(&l.rep, &l.list, stdout, l.top);
	else
		e = text_print_report(&l.rep, &l.list, stdout, l.top);
	growth_view_clear(&growth);
	return cli_report_done(&l, e);
}
