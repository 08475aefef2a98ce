/* SPDX-License-Identifier: MIT */
/*
 * gpuspy merge: the processes of a run side by side.  They are loaded and
 * merged exactly as `gpuspy report` does; where report adds each site up
 * over the processes, merge shows what each process gave it, and which
 * process stands out (merge_spread: a rank that leaks, a worker that
 * peaks while its siblings do not).
 */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "format.h"
#include "merge.h"
#include "names.h"

#define DEFAULT_TOP 10

static const char usage[] =
	"Usage: gpuspy merge [--format @names:merge@] [--top N] [--strict] [PATH...]\n"
	"\n"
	"Show the processes of a run side by side: each process's totals, and\n"
	"per call site what each process gave it, with the process that stands\n"
	"out.  PATH is as for 'gpuspy report': a run directory, one of its\n"
	"process directories, or a report file.\n"
	"\n"
	"  -f, --format FMT   text (default) or json (format " GS_FORMAT_MERGE ")\n"
	"  -n, --top N        call sites listed (text: default 10; json: all);\n"
	"                     0 means all\n"
	"      --strict       a process that cannot be read is fatal (default: left\n"
	"                     out, said on stderr and in the output)\n"
	"  -h, --help         show this help\n";

int cmd_merge(int argc, char **argv)
{
	struct rd_report_site **order;
	struct cli_loaded l;
	int e = cli_report_setup("merge", usage, DEFAULT_TOP, argc, argv, &l);

	if (e >= 0)
		return e;
	e = merge_by_spread(&l.rep, &order);
	if (e == 0)
		e = l.format->merge(stdout, &l.rep, order, l.top);
	free(order);
	return cli_report_done(&l, e);
}
