/* SPDX-License-Identifier: MIT */
/* gpuspy report: load, symbolize, merge, print. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "read.h"

#define DEFAULT_TOP 10

static const char usage[] =
	"Usage: gpuspy report [--format text|json] [--top N] PATH...\n"
	"\n"
	"Summarize gpuspy reports.  Each PATH is a run directory (as written by\n"
	"'gpuspy run'), one of its process directories, or a report file\n"
	"(report.json, or an out-of-memory post-mortem oom-N.json).\n"
	"\n"
	"  -f, --format FMT   text (default) or json (format gpuspy-report/1)\n"
	"  -n, --top N        call sites per list (text: default 10; json: all);\n"
	"                     0 means all\n"
	"  -h, --help         show this help\n";

/* A usage error: one line, then status 2. */
static int usage_error(const char *what, const char *arg)
{
	return cli_usage_error("report", what, arg);
}

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "top", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct gs_process_list list = { 0 };
	struct symbolizer *sym = NULL;
	struct gs_error err = { .msg = "" };
	struct report rep;
	bool json = false, top_given = false;
	size_t top = DEFAULT_TOP;
	int c, e, status;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":f:n:h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (strcmp(optarg, "json") == 0)
				json = true;
			else if (strcmp(optarg, "text") == 0)
				json = false;
			else
				return usage_error("unknown format", optarg);
			break;
		case 'n':
			if (cli_parse_count(optarg, &top) < 0)
				return usage_error("--top needs a number, not", optarg);
			top_given = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAILURE_OTHER;
		case ':':
			return usage_error("missing value for", argv[optind - 1]);
		default:
			return usage_error("unknown option", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return usage_error("no PATH given", NULL);

	/* Everything is loaded before anything is printed: one bad file
	 * fails the whole command rather than yield a partial sum. */
	for (int i = optind; i < argc; i++) {
		e = load_path(&list, argv[i], &err);
		if (e < 0) {
			cli_print_error(&err, e);
			process_list_clear(&list);
			return e == -ENOMEM ? EXIT_FAILURE_OTHER : EXIT_USAGE;
		}
	}

	e = symbolizer_new(&sym);
	if (e == 0)
		e = report_build(&rep, &list, sym, &err);
	if (e < 0) {
		cli_print_error(&err, e);
		symbolizer_free(sym);
		process_list_clear(&list);
		return e == -EOVERFLOW ? EXIT_USAGE : EXIT_FAILURE_OTHER;
	}

	if (json)
		e = report_print_json(&rep, stdout, top_given ? top : 0);
	else
		e = report_print_text(&rep, stdout, top);
	if (fflush(stdout) != 0 && e == 0)
		e = -errno;
	status = EXIT_OK;
	if (e < 0) {
		fprintf(stderr, "gpuspy: cannot write the report: %s\n", strerror(-e));
		status = EXIT_FAILURE_OTHER;
	}
	report_clear(&rep);
	symbolizer_free(sym);
	process_list_clear(&list);
	return status;
}
