/* SPDX-License-Identifier: MIT */
/*
 * gpuspy export --FORMAT DEST: what the PATHs hold, written for another
 * tool in the place DEST names; the formats are the rows of format.c with
 * an argument (--tensorboard LOGDIR: tensorboard.c).  Options only: the
 * format's printer reads, builds and writes.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "format.h"

#define DEFAULT_TOP 10

static const char usage[] =
	"Usage: gpuspy export @options:export@ [--step time|mark] [--top N] [--strict]\n"
	"                     [PATH...]\n"
	"\n"
	"Write the history of every process of the PATHs (history.jsonl: live bytes\n"
	"over time) for another tool.  Each PATH is a run directory, one of its\n"
	"process directories, or a report file, as for 'gpuspy report'; without\n"
	"PATH: $GPUSPY_OUTPUT_DIR, else the latest run of ./gpuspy-out.\n"
	"\n"
	"@help:export@"
	"      --step S       time (default): whole seconds since the process's start;\n"
	"                     mark: the number of marks (gpuspy_mark) before the sample\n"
	"  -n, --top N        headlines with a tag of their own (default 10; 0: all),\n"
	"                     the sites of each summed; the others in sites/other\n"
	"      --strict       a process or history that cannot be read is fatal\n"
	"                     (default: left out, said on stderr, the rest exported)\n"
	"  -h, --help         show this help\n"
	"\n"
	"Exit status: 0 success (processes that could not be read are left out\n"
	"and said); 1 gpuspy's own failure (out of memory, cannot write); 2 bad\n"
	"usage, no usable input (or, with --strict, any that cannot be read), or\n"
	"a LOGDIR that is refused.\n";

/* after the formats' own (format_options) */
static const struct option options[] = {
	{ "step", required_argument, NULL, 'S' },
	{ "top", required_argument, NULL, 'n' },
	{ "strict", no_argument, NULL, 's' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int cmd_export(int argc, char **argv)
{
	struct cli_loaded l;
	struct option *opts = format_options("export", options);
	const char *dest = NULL;
	size_t top = DEFAULT_TOP;
	char what[160];
	int c, e = -1;

	memset(&l, 0, sizeof(l));
	if (!opts) {
		cli_error(NULL, "out of memory");
		return EXIT_FAILURE_OTHER;
	}
	opterr = 0;
	optind = 1;
	while (e < 0 && (c = getopt_long(argc, argv, ":n:h", opts, NULL)) != -1) {
		const struct format *f = format_option(c);

		if (f && l.format && f != l.format) {
			snprintf(what, sizeof(what), "one format at a time: --%s or --%s",
				 l.format->name, f->name);
			e = cli_usage_error("export", what, NULL);
			break;
		}
		if (f) {
			l.format = f;
			dest = optarg;
			continue;
		}
		switch (c) {
		case 'S':
			if (strcmp(optarg, "time") == 0)
				l.by_mark = false;
			else if (strcmp(optarg, "mark") == 0)
				l.by_mark = true;
			else
				e = cli_usage_error("export", "--step is time or mark, not",
						    optarg);
			break;
		case 'n':
			if (cli_parse_count(optarg, &top) < 0)
				e = cli_usage_error("export", "--top needs a number, not", optarg);
			break;
		case 's':
			l.strict = true;
			break;
		case 'h':
			e = format_usage(stdout, usage) == 0 && fflush(stdout) == 0 ?
				    EXIT_OK :
				    EXIT_FAILURE_OTHER;
			break;
		case ':':
			e = cli_usage_error("export", "missing value for", argv[optind - 1]);
			break;
		default:
			e = cli_usage_error("export", "unknown option", argv[optind - 1]);
			break;
		}
	}
	free(opts);
	if (e >= 0)
		return e;
	if (!l.format) {
		format_usage_string(what, sizeof(what), "which format: @options:export@");
		return cli_usage_error("export", what, NULL);
	}
	if (!*dest) {
		snprintf(what, sizeof(what), "--%s needs %s, not", l.format->name, l.format->arg);
		return cli_usage_error("export", what, dest);
	}
	l.paths = argv + optind;
	l.npaths = (size_t)(argc - optind);
	l.top = top;
	e = cli_report_load("export", &l);
	if (e >= 0)
		return e;
	return cli_report_done(&l, format_print(&l, dest));
}
