/* SPDX-License-Identifier: MIT */
/*
 * gpuspy commits RUN...: memory per commit.  Each RUN is read as `gpuspy
 * report` reads it (an output directory stands for every run in it), kept
 * as a few figures (src/read/lineup.c), lined up in the order given, by
 * start or by commit, and printed as a table, CSV or one HTML page.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "discover.h"
#include "lineup.h"
#include "print.h"
#include "util.h"

#define DEFAULT_TOP 8

static const char usage[] =
	"Usage: gpuspy commits [--format text|csv|html] [--order given|time|commit]\n"
	"                      [--top N] [--strict] RUN...\n"
	"\n"
	"Line up runs, one per commit: what each left live at exit, its peak, and\n"
	"the peaks of the call sites that peaked highest in any of them.  Each RUN\n"
	"is a run directory, one of its process directories or a report file, as\n"
	"for 'gpuspy report'; an output directory (./gpuspy-out) stands for every\n"
	"run in it, oldest first.  A run's commit is the one 'gpuspy run' recorded\n"
	"in its run.json, else $GIT_COMMIT, $CI_COMMIT_SHA or $GITHUB_SHA as its\n"
	"processes had them.\n"
	"\n"
	"  -f, --format FMT   text (default): a table; csv: a row per run, for\n"
	"                     spreadsheets; html: one self-contained page with the\n"
	"                     charts (leaked and peak per run, the top sites' peaks)\n"
	"  -o, --order ORDER  given (default): the order of the RUNs; time: by each\n"
	"                     run's start; commit: by the date of each run's commit\n"
	"                     in the working directory's git repository (git log)\n"
	"  -n, --top N        call sites shown (default 8; 0 means all)\n"
	"      --strict       a process that cannot be read is fatal (default: left\n"
	"                     out of its run, said on stderr)\n"
	"  -h, --help         show this help\n"
	"\n"
	"Exit status: 0 success; 1 gpuspy's own failure (out of memory, cannot\n"
	"write); 2 bad usage, a RUN that cannot be read, or --order commit with a\n"
	"run whose commit git does not know.\n";

enum order { ORDER_GIVEN, ORDER_TIME, ORDER_COMMIT };

struct placed {
	struct lineup_run *run;
	int64_t commit_time; /* --order commit: seconds since the epoch */
};

static int cmp_time(const void *a, const void *b)
{
	const struct lineup_run *x = ((const struct placed *)a)->run;
	const struct lineup_run *y = ((const struct placed *)b)->run;

	if (x->start_time != y->start_time)
		return x->start_time < y->start_time ? -1 : 1;
	return (x->given > y->given) - (x->given < y->given);
}

static int cmp_commit(const void *a, const void *b)
{
	const struct placed *x = a, *y = b;

	if (x->commit_time != y->commit_time)
		return x->commit_time < y->commit_time ? -1 : 1;
	return cmp_time(a, b);
}

/* The committer date of COMMIT in the working directory's repository:
 * 0 with *T, or -1 when git does not know it. */
static int commit_time(const char *commit, int64_t *t)
{
	char buf[64], *end;
	long long v;

	/* an option, not a commit: never handed to git */
	if (commit[0] == '-' || cli_git((const char *const[]){ "show", "-s", "--format=%ct",
							       "--end-of-options", commit, NULL },
					buf, sizeof(buf)) < 0)
		return -1;
	errno = 0;
	v = strtoll(buf, &end, 10);
	if (errno || *end || end == buf)
		return -1;
	*t = v;
	return 0;
}

/* PATH into *PATHS: every run of an output directory, oldest first;
 * anything else as it is.  0, or the exit status with the reason said. */
static int add_path(const char *path, char ***paths, size_t *npaths)
{
	struct rd_error err = { .msg = "" };
	char *run = NULL, **p;
	size_t nruns = 0;
	int e = discover_output_dir(path, 0, &run, &nruns, &err);

	if (e < 0) {
		cli_print_error(&err, e);
		return e == -ENOMEM ? EXIT_FAILURE_OTHER : EXIT_USAGE;
	}
	free(run);
	if (e == 0)
		nruns = 1;
	p = reallocarray(*paths, *npaths + nruns + 1, sizeof(*p));
	if (!p)
		return EXIT_FAILURE_OTHER;
	*paths = p;
	if (e == 0) {
		p[*npaths] = strdup(path);
		if (!p[*npaths])
			return EXIT_FAILURE_OTHER;
		++*npaths;
		return 0;
	}
	for (size_t back = nruns; back-- > 0;) {
		e = discover_output_dir(path, (unsigned)back, &run, &nruns, &err);
		if (e < 0) {
			cli_print_error(&err, e);
			return e == -ENOMEM ? EXIT_FAILURE_OTHER : EXIT_USAGE;
		}
		/* "latest" need not be the newest by name: each run once */
		for (size_t i = 0; run && i < *npaths; i++)
			if (strcmp(p[i], run) == 0) {
				free(run);
				run = NULL;
			}
		if (run)
			p[(*npaths)++] = run;
	}
	return 0;
}

int cmd_commits(int argc, char **argv)
{
	enum { OPT_STRICT = 256 };
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "order", required_argument, NULL, 'o' },
		{ "top", required_argument, NULL, 'n' },
		{ "strict", no_argument, NULL, OPT_STRICT },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	enum commits_format { FMT_TEXT, FMT_CSV, FMT_HTML } fmt = FMT_TEXT;
	struct rd_error err = { .msg = "" };
	enum order order = ORDER_GIVEN;
	struct lineup_run *runs = NULL;
	struct lineup_site *top = NULL;
	struct placed *placed = NULL;
	size_t ntop = 0, want_top = DEFAULT_TOP, npaths = 0, nruns = 0;
	char **paths = NULL;
	bool strict = false;
	int c, e, status = EXIT_OK;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":f:o:n:h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (strcmp(optarg, "text") == 0)
				fmt = FMT_TEXT;
			else if (strcmp(optarg, "csv") == 0)
				fmt = FMT_CSV;
			else if (strcmp(optarg, "html") == 0)
				fmt = FMT_HTML;
			else
				return cli_usage_error("commits", "unknown format", optarg);
			break;
		case 'o':
			if (strcmp(optarg, "given") == 0)
				order = ORDER_GIVEN;
			else if (strcmp(optarg, "time") == 0)
				order = ORDER_TIME;
			else if (strcmp(optarg, "commit") == 0)
				order = ORDER_COMMIT;
			else
				return cli_usage_error(
					"commits", "--order is given, time or commit, not", optarg);
			break;
		case 'n':
			if (cli_parse_count(optarg, &want_top) < 0)
				return cli_usage_error("commits", "--top needs a number, not",
						       optarg);
			break;
		case OPT_STRICT:
			strict = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAILURE_OTHER;
		case ':':
			return cli_usage_error("commits", "missing value for", argv[optind - 1]);
		default:
			return cli_usage_error("commits", "unknown option", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return cli_usage_error("commits", "no RUN given: name the runs to line up", NULL);
	for (int i = optind; i < argc && status == EXIT_OK; i++) {
		/* the report.txt the library names stands for its directory */
		char *dir = cli_text_report_dir(argv[i]);

		status = add_path(dir ? dir : argv[i], &paths, &npaths);
		free(dir);
	}
	if (status != EXIT_OK)
		goto done;
	runs = calloc(npaths + 1, sizeof(*runs));
	placed = calloc(npaths + 1, sizeof(*placed));
	if (!runs || !placed) {
		status = EXIT_FAILURE_OTHER;
		goto done;
	}
	/* everything read before anything is printed */
	cli_read_setup(strict);
	for (size_t i = 0; i < npaths; i++) {
		e = lineup_load(paths[i], &runs[i], &err);
		if (e < 0) {
			cli_print_error(&err, e);
			status = e == -ENOMEM ? EXIT_FAILURE_OTHER : EXIT_USAGE;
			goto done;
		}
		runs[i].given = i;
		nruns = i + 1;
		if (runs[i].nunreadable) {
			cli_error(runs[i].path, "%s%zu of %zu processes could not be read%s",
				  strict ? "" : "warning: ", runs[i].nunreadable,
				  runs[i].nunreadable + runs[i].nprocs,
				  strict ? " (--strict)" : ": left out of its figures");
			if (strict) {
				status = EXIT_USAGE;
				goto done;
			}
		}
		if (runs[i].commit_mixed)
			cli_error(runs[i].path, "warning: its processes name more than one commit: "
						"the first one's is shown");
		placed[i].run = &runs[i];
	}
	if (order == ORDER_COMMIT) {
		for (size_t i = 0; i < nruns; i++) {
			if (!runs[i].commit) {
				cli_error(runs[i].path,
					  "no commit recorded: --order commit needs one for "
					  "every run (try --order time)");
				status = EXIT_USAGE;
				goto done;
			}
			if (commit_time(runs[i].commit, &placed[i].commit_time) < 0) {
				cli_error(
					runs[i].path,
					"commit %.64s is not one git knows in the working directory "
					"(--order commit asks git log there; try --order time)",
					runs[i].commit);
				status = EXIT_USAGE;
				goto done;
			}
		}
		qsort(placed, nruns, sizeof(*placed), cmp_commit);
	} else if (order == ORDER_TIME) {
		qsort(placed, nruns, sizeof(*placed), cmp_time);
	}
	/* the runs in their order, for the printers */
	{
		struct lineup_run *ordered = calloc(nruns + 1, sizeof(*ordered));

		if (!ordered) {
			status = EXIT_FAILURE_OTHER;
			goto done;
		}
		for (size_t i = 0; i < nruns; i++)
			ordered[i] = *placed[i].run;
		free(runs);
		runs = ordered;
	}
	if (lineup_top(runs, nruns, want_top, &top, &ntop) < 0) {
		status = EXIT_FAILURE_OTHER;
		goto done;
	}
	{
		static const char *const names[] = { "given", "time", "commit" };
		const struct commits_view v = { .runs = runs,
						.nruns = nruns,
						.top = top,
						.ntop = ntop,
						.order = names[order] };

		e = fmt == FMT_CSV  ? csv_print_commits(&v, stdout) :
		    fmt == FMT_HTML ? html_print_commits(&v, stdout) :
				      text_print_commits(&v, stdout);
	}
	if (fflush(stdout) != 0 && e == 0)
		e = -errno;
	if (e < 0) {
		cli_error(NULL, "cannot write the output: %s", strerror(-e));
		status = EXIT_FAILURE_OTHER;
	}
done:
	cli_notices_say(false);
	for (size_t i = 0; runs && i < nruns; i++)
		lineup_clear(&runs[i]);
	free(runs);
	free(placed);
	free(top);
	for (size_t i = 0; i < npaths; i++)
		free(paths[i]);
	free(paths);
	return status;
}
