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
#include "print.h"

#define DEFAULT_TOP 10

static const char usage[] =
	"Usage: gpuspy report [--format text|json] [--top N] PATH...\n"
	"\n"
	"Summarize gpuspy reports.  Each PATH is a run directory (as written by\n"
	"'gpuspy run'), one of its process directories, or a report file\n"
	"(report.json, or an out-of-memory post-mortem oom-N.json).\n"
	"\n"
	"  -f, --format FMT   text (default) or json (format " GS_FORMAT_REPORT ")\n"
	"  -n, --top N        call sites per list (text: default 10; json: all);\n"
	"                     0 means all\n"
	"  -h, --help         show this help\n";

int cmd_report(int argc, char **argv)
{
	struct cli_loaded l;
	int e = cli_report_setup("report", usage, DEFAULT_TOP, argc, argv, &l);

	if (e >= 0)
		return e;
	if (l.json)
		e = json_print_report(&l.rep, &l.list, stdout, l.top);
	else
		e = text_print_report(&l.rep, &l.list, stdout, l.top);
	return cli_report_done(&l, e);
}
