/* SPDX-License-Identifier: MIT */
/* gpuspy report --format pprof|perfetto|collapsed|html: the formats other
 * tools open.  Everything is read and built before a byte is written. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "growth_view.h"
#include "print.h"

int cli_export_format(const char *name, struct cli_loaded *l)
{
	static const char *const names[] = {
		[CLI_EXPORT_PPROF] = "pprof",
		[CLI_EXPORT_PERFETTO] = "perfetto",
		[CLI_EXPORT_COLLAPSED] = "collapsed",
		[CLI_EXPORT_HTML] = "html",
	};

	for (size_t i = CLI_EXPORT_PPROF; i <= CLI_EXPORT_HTML; i++) {
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
	/* text and JSON say what was live then beside the rest; CSV and
	 * Perfetto draw the whole run */
	if ((l->at || l->peak) && (l->csv || l->export == CLI_EXPORT_PERFETTO))
		return cli_usage_error(
			cmd,
			"--at and --peak go with --format text, json, pprof, collapsed or html",
			NULL);
	return -1;
}

int cli_export_report(struct cli_loaded *l)
{
	struct rd_error err = { .msg = "" };
	struct rd_stacks st = { 0 };
	struct rd_timeline tl = { 0 };
	struct rd_growth_view growth = { 0 };
	int e = 0;

	if (l->export == CLI_EXPORT_PERFETTO || l->export == CLI_EXPORT_HTML) {
		e = timeline_load(&l->rep, &tl, &err);
		/* the page's growth sparklines, from the same histories */
		if (e == 0 && l->export == CLI_EXPORT_HTML)
			e = growth_view_load(&l->rep, &growth, &err);
	}
	/* the page builds every moment itself: here only whether the one
	 * asked for exists, as for the other formats */
	if (e == 0 && l->export != CLI_EXPORT_PERFETTO &&
	    (l->export != CLI_EXPORT_HTML || l->at || l->peak)) {
		enum stacks_state s = l->at ? STACKS_MARK : l->peak ? STACKS_PEAK : STACKS_EXIT;

		e = stacks_build(&l->rep, s, l->at, &st, &err);
	}
	if (e < 0) {
		cli_print_error(&err, e);
		growth_view_clear(&growth);
		timeline_clear(&tl);
		cli_report_done(l, 0);
		return e == -ENOMEM ? EXIT_FAILURE_OTHER : EXIT_USAGE;
	}
	switch (l->export) {
	case CLI_EXPORT_PERFETTO:
		e = perfetto_print(&l->rep, &tl, stdout);
		timeline_clear(&tl);
		break;
	case CLI_EXPORT_HTML:
		l->rep.growth = &growth;
		e = html_print(&l->rep, &l->list, &tl, l->at, l->peak, l->top, stdout);
		l->rep.growth = NULL;
		growth_view_clear(&growth);
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
