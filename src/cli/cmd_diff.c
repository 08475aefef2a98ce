/* SPDX-License-Identifier: MIT */
/* gpuspy diff OLD NEW: options, then the diff model (src/read/diff.c),
 * then its format's printer (format.c). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "diff.h"
#include "format.h"
#include "names.h"
#include "print.h"
#include "util.h"

#define DEFAULT_THRESHOLD (64 * (int64_t)1024)
#define DEFAULT_TOP	  20

static const char usage[] =
	"Usage: gpuspy diff [OPTIONS] [OLD [NEW]]\n"
	"       gpuspy diff [OPTIONS] --old PATH... --new PATH...\n"
	"\n"
	"Compare two runs call site by call site.  OLD and NEW are run\n"
	"directories, process directories or report files; --old and --new\n"
	"(each repeatable) take several, e.g. one run directory per node.\n"
	"Without NEW, the latest run of ./gpuspy-out; without either, the\n"
	"latest against the one before it.\n"
	"\n"
	"  -f, --format FMT          text (default) or json (format " GS_FORMAT_DIFF ")\n"
	"      --fail-on-growth SIZE exit 1 when a site grew by more than SIZE\n"
	"                            (its leaked or peak bytes; with --at, its live\n"
	"                            bytes at the mark); exactly SIZE passes, and 0\n"
	"                            fails any growth\n"
	"  -t, --threshold SIZE      text: hide sites that changed by less (default 64K)\n"
	"  -a, --at LABEL            compare live bytes at the last mark LABEL\n"
	"                            (gpuspy_mark) instead of at the peak and at exit\n"
	"  -n, --top N               text: sites listed (default 20; 0 means all)\n"
	"      --old PATH            a path of the old run (repeatable)\n"
	"      --new PATH            a path of the new run (repeatable)\n"
	"      --strict              a process that cannot be read is fatal (default:\n"
	"                            left out of its side, said on stderr and in the\n"
	"                            output)\n"
	"  -h, --help                show this help\n"
	"\n"
	"SIZE is bytes, or a number with K, M, G or T (powers of 1024): 512K, 1.5M.\n"
	"Exit status: 0 no site grew by more than SIZE (always, without\n"
	"--fail-on-growth), in what could be read; 1 some site did; 2 bad usage,\n"
	"or a side with no usable input (with --strict: any that cannot be read).\n";

/* A usage error: one line, then status 2. */
static int usage_error(const char *what, const char *arg)
{
	return cli_usage_error("diff", what, arg);
}

int cmd_diff(int argc, char **argv)
{
	enum { OPT_FAIL = 256, OPT_OLD, OPT_NEW, OPT_STRICT };
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "fail-on-growth", required_argument, NULL, OPT_FAIL },
		{ "threshold", required_argument, NULL, 't' },
		{ "at", required_argument, NULL, 'a' },
		{ "top", required_argument, NULL, 'n' },
		{ "old", required_argument, NULL, OPT_OLD },
		{ "new", required_argument, NULL, OPT_NEW },
		{ "strict", no_argument, NULL, OPT_STRICT },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct diff d = { .threshold = DEFAULT_THRESHOLD, .fail_limit = -1 };
	struct rd_error err = { .msg = "" };
	struct diff_setting_row *set = NULL;
	struct diff_total *tot = NULL;
	size_t nset = 0, ntot = 0, top = DEFAULT_TOP;
	const struct format *fmt = format_default("diff");
	bool named = false, strict = false;
	char *owned[2] = { NULL, NULL };
	int c, e, status = EXIT_OK;

	d.side[0].name = "OLD";
	d.side[1].name = "NEW";
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":f:t:a:n:h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			fmt = format_find("diff", optarg);
			if (!fmt) {
				fmt = format_default("diff");
				status = usage_error("unknown format", optarg);
			}
			break;
		case OPT_FAIL:
			if (util_parse_size(optarg, &d.fail_limit) < 0)
				status = usage_error("--fail-on-growth needs a size, not", optarg);
			break;
		case 't':
			if (util_parse_size(optarg, &d.threshold) < 0)
				status = usage_error("--threshold needs a size, not", optarg);
			break;
		case 'a':
			if (!*optarg)
				status = usage_error("--at needs a label", NULL);
			d.at_label = optarg;
			break;
		case 'n': {
			int64_t v;

			if (util_parse_count(optarg, &v) < 0)
				status = usage_error("--top needs a number, not", optarg);
			top = (size_t)v;
			break;
		}
		case OPT_STRICT:
			strict = true;
			break;
		case OPT_OLD:
		case OPT_NEW:
			named = true;
			if (diff_add_path(&d.side[c == OPT_NEW], optarg) < 0)
				status = EXIT_FAILURE_OTHER;
			break;
		case 'h':
			fputs(usage, stdout);
			status = fflush(stdout) == 0 ? EXIT_OK : EXIT_FAILURE_OTHER;
			goto done;
		case ':':
			status = usage_error("missing value for", argv[optind - 1]);
			break;
		default:
			status = usage_error("unknown option", argv[optind - 1]);
			break;
		}
		if (status != EXIT_OK)
			goto done;
	}
	if (named && optind < argc) {
		status = usage_error("give the runs either as OLD NEW or with --old and --new, "
				     "not both; extra argument",
				     argv[optind]);
		goto done;
	}
	if (!named) {
		int n = argc - optind;

		if (n > 2) {
			status = usage_error("too many arguments; extra", argv[optind + 2]);
			goto done;
		}
		/* OLD NEW; OLD alone: against the latest run; nothing: the
		 * latest run against the one before it (cli_run_path) */
		status = cli_run_path("diff", n >= 1 ? argv[optind] : NULL, n >= 1 ? 0 : 1,
				      &owned[0]);
		if (status == EXIT_OK)
			status = cli_run_path("diff", n == 2 ? argv[optind + 1] : NULL, 0,
					      &owned[1]);
		if (status == EXIT_OK && (diff_add_path(&d.side[0], owned[0]) < 0 ||
					  diff_add_path(&d.side[1], owned[1]) < 0))
			status = EXIT_FAILURE_OTHER;
		if (status != EXIT_OK)
			goto done;
	}
	if (!d.side[0].npaths || !d.side[1].npaths) {
		status = usage_error(
			d.side[0].npaths ? "no --new PATH given" : "no --old PATH given", NULL);
		goto done;
	}

	/* a process that cannot be read is left out of its side and said;
	 * a side with none left fails the diff */
	cli_read_setup(strict);
	for (int k = 0; k < 2; k++) {
		e = diff_side_load(&d.side[k], d.at_label, &err);
		if (e < 0) {
			cli_print_error(&err, e);
			status = e == -ENOMEM ? EXIT_FAILURE_OTHER : EXIT_USAGE;
			goto done;
		}
		if (cli_said_unreadable(&d.side[k].list, strict) >= 0) {
			status = EXIT_USAGE;
			goto done;
		}
	}
	e = diff_match(&d);
	if (e == 0)
		e = diff_match_torch(&d);
	if (e == 0)
		e = diff_settings(&d, &set, &nset);
	if (e == 0)
		e = diff_totals(&d, &tot, &ntot);
	if (e < 0) {
		cli_error(NULL, "out of memory");
		status = EXIT_FAILURE_OTHER;
		goto done;
	}
	e = fmt->diff(&d, set, nset, tot, ntot, top, stdout);
	if (fflush(stdout) != 0 && e == 0)
		e = -errno;
	if (e < 0) {
		cli_error(NULL, "cannot write the diff: %s", strerror(-e));
		status = EXIT_FAILURE_OTHER;
	} else {
		status = d.failed ? EXIT_GROWTH : EXIT_OK;
	}
done:
	cli_notices_say(false);
	diff_settings_free(set, nset);
	free(tot);
	diff_clear(&d);
	free(owned[0]);
	free(owned[1]);
	return status;
}
