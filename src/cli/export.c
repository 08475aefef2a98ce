/* SPDX-License-Identifier: MIT */
/* gpuspy report --format pprof|perfetto|collapsed: the formats other tools
 * open.  Everything is read and built before a byte is written. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "print.h"

int cli_export_format(const char *name, struct cli_loaded *l)
{
	static const char *const names[] = {
		[CLI_EXPORT_PPROF] = "pprof",
		[CLI_EXPORT_PERFETTO] = "perfetto",
		[CLI_EXPORT_COLLAPSED] = "collapsed",
	};

	for (size_t i = CLI_EXPORT_PPROF; i <= CLI_EXPORT_COLLAPSED; i++) {
		if (strcmp(name, names[i]) == 0) {
			l->export = (enum cli_export)i;
			l->json = l->csv = false;
			return 0;
		}
	}
	return -EINVAL;
}

int cli_export_check(const char *cmd, const struct cli_loaded *l)
{
	if (l->at && l->peak)
		return cli_usage_error(cmd, "--at and --peak choose one moment, not both", NULL);
	if ((l->at || l->peak) && l->export != CLI_EXPORT_PPROF &&
	    l->export != CLI_EXPORT_COLLAPSED)
		return cli_usage_error(cmd, "--at and --peak go with --format pprof or collapsed",
				       NULL);
	return -1;
}

int cli_export_report(struct cli_loaded *l)
{
	struct rd_error err = { .msg = "" };
	struct rd_stacks st = { 0 };
	struct rd_timeline tl = { 0 };
	int e;

	if (l->export == CLI_EXPORT_PERFETTO) {
		e = timeline_load(&l->rep, &tl, &err);
	} else {
		enum stacks_state s = l->at ? STACKS_MARK : l->peak ? STACKS_PEAK : STACKS_EXIT;

		e = stacks_build(&l->rep, s, l->at, &st, &err);
	}
	if (e < 0) {
		cli_print_error(&err, e);
		cli_report_done(l, 0);
		return e == -ENOMEM ? EXIT_FAILURE_OTHER : EXIT_USAGE;
	}
	switch (l->export) {
	case CLI_EXPORT_PERFETTO:
		e = perfetto_print(&l->rep, &tl, stdout);
		timeline_clear(&tl);
		break;
	case CLI_EXPORT_PPROF:
		e = pprof_print(&l->rep, &st, stdout);
		break;
	case CLI_EXPORT_COLLAPSED:
	default:
		e = collapsed_print(&l->rep, &st, stdout);
		break;
	}
	stacks_clear(&st);
	return cli_report_done(l, e);
}
