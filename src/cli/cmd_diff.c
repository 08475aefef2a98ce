/* SPDX-License-Identifier: MIT */
/* gpuspy diff OLD NEW: options, then the diff model (src/read/diff.c),
 * then its format's printer (format.c). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "budget.h"
#include "cli.h"
#include "diff.h"
#include "format.h"
#include "names.h"
#include "print.h"
#include "sitename.h"
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
	"      --budget FILE         exit 1 when a site's peak in NEW (in any one\n"
	"                            process) is over its budget: FILE's lines are\n"
	"                            PATTERN SIZE, a glob over the site's name, the\n"
	"                            first match wins ('* 512MiB' last: the default)\n"
	"      --junit FILE          the gates' verdicts as JUnit XML in FILE: one\n"
	"                            test case per site, a failure per site that\n"
	"                            fails (with --fail-on-growth or --budget)\n"
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
	"Exit status: 0 no site grew by more than SIZE nor is over its budget\n"
	"(always, without --fail-on-growth and --budget), in what could be read;\n"
	"1 some site did, or is; 2 bad usage, a budget file that is refused, or a\n"
	"side with no usable input (with --strict: any that cannot be read).\n";

/* A usage error: one line, then status 2. */
static int usage_error(const char *what, const char *arg)
{
	return cli_usage_error("diff", what, arg);
}

/* The one name of row W's site: NEW's, else OLD's. */
static const char *row_name(const struct diff_row *w)
{
	return merge_site_name(diff_row_site(w));
}

/* "FILE:LINE: PATTERN", where a site's budget comes from, into BUF. */
static const char *rule_where(const struct budget_file *b, const struct budget_rule *r, char *buf,
			      size_t size)
{
	snprintf(buf, size, "%s:%zu: %s", b->file, r->line, r->pattern);
	return buf;
}

/*
 * --budget's verdict, below the text (OUT: stdout, or stderr when stdout
 * is JSON): every site over its budget named, one line each, then FAIL
 * or OK.  0 or -EIO.
 */
static int budget_verdict(const struct diff *d, const struct budget_file *b, FILE *out)
{
	size_t judged = 0, unmatched = 0;
	char a[32], c[32], where[BUDGET_LINE_MAX + 64];

	for (size_t i = 0; i < d->nrows; i++) {
		const struct diff_row *w = &d->rows[i];

		if (!w->site[1])
			continue;
		judged += w->budget != NULL;
		unmatched += w->budget == NULL;
	}
	if (out == stdout)
		putc('\n', out);
	if (d->over_budget) {
		fprintf(out, "OVER BUDGET (--budget ");
		cli_put_clean(out, b->file);
		fprintf(out, "; the peak in NEW, in any one process)\n");
		for (size_t i = 0; i < d->nrows; i++) {
			const struct diff_row *w = &d->rows[i];

			if (!w->over_budget || !w->budget)
				continue;
			fputs("  ", out);
			cli_put_clean(out, row_name(w));
			fprintf(out, ": peak %s, budget %s (",
				util_human_size(w->budget_peak, a, sizeof(a)),
				util_human_size(w->budget->bytes, c, sizeof(c)));
			cli_put_clean(out, rule_where(b, w->budget, where, sizeof(where)));
			fputs(")\n", out);
		}
		fprintf(out, "FAIL: %zu %s over %s budget (--budget ", d->over_budget,
			d->over_budget == 1 ? "site" : "sites",
			d->over_budget == 1 ? "its" : "their");
	} else {
		fprintf(out, "OK: %zu %s within %s budget (--budget ", judged,
			judged == 1 ? "site" : "sites", judged == 1 ? "its" : "their");
	}
	cli_put_clean(out, b->file);
	if (unmatched)
		fprintf(out, "; %zu %s no budget line: not judged", unmatched,
			unmatched == 1 ? "site matches" : "sites match");
	fputs(")\n", out);
	return fflush(out) == 0 && !ferror(out) ? 0 : -EIO;
}

/* What a row's site did, for a JUnit failure's text: its key digest, api
 * and kind, and its figures on both sides. */
static char *row_detail(const struct diff_row *w)
{
	const struct rd_report_site *s = diff_row_site(w), *o = w->site[0], *n = w->site[1];
	char ol[32], nl[32], op[32], np[32], digest[SITENAME_DIGEST_SIZE];

	return cli_strdup_printf(
		"%s\nsite %s (%s), by %s (%s)\nleaked %s -> %s, peak %s -> %s, allocations %" PRId64
		" -> %" PRId64 "\n",
		row_name(w), sitename_digest(s->key, digest, sizeof(digest)),
		diff_status_name(w->status), s->api ? s->api : "?", names_kind(s->kind),
		util_human_size(o ? o->c.live_bytes : 0, ol, sizeof(ol)),
		util_human_size(n ? n->c.live_bytes : 0, nl, sizeof(nl)),
		util_human_size(o ? o->c.peak_bytes : 0, op, sizeof(op)),
		util_human_size(n ? n->c.peak_bytes : 0, np, sizeof(np)), o ? o->c.allocations : 0,
		n ? n->c.allocations : 0);
}

/* A signed size, "+1.0 MiB" or "-512.0 KiB". */
static const char *signed_human(int64_t v, char *buf, size_t size)
{
	char h[32];

	snprintf(buf, size, "%s%s", v < 0 ? "-" : "+",
		 util_human_size(diff_abs_sat(v), h, sizeof(h)));
	return buf;
}

/*
 * The gates as JUnit XML in FILE: a suite per gate given, a test case per
 * site judged (and per line of the PyTorch views, for --fail-on-growth),
 * a failure naming each that failed with its figures.  0 or -errno.
 */
static int diff_junit(const struct diff *d, const struct budget_file *b, const char *file)
{
	struct junit j = { 0 };
	char a[40], c[32], where[BUDGET_LINE_MAX + 64];
	char *name;
	int e;

	if (d->fail_limit >= 0) {
		name = cli_strdup_printf("gpuspy diff --fail-on-growth %s%s%s",
					 util_human_size(d->fail_limit, c, sizeof(c)),
					 d->at_label ? " --at " : "",
					 d->at_label ? d->at_label : "");
		junit_suite(&j, name ? name : "gpuspy diff --fail-on-growth", "fail-on-growth");
		free(name);
		junit_property(&j, "old", d->side[0].paths[0]);
		junit_property(&j, "new", d->side[1].paths[0]);
		snprintf(a, sizeof(a), "%" PRId64, d->fail_limit);
		junit_property(&j, "limit_bytes", a);
		for (size_t i = 0; i < d->nrows; i++) {
			const struct diff_row *w = &d->rows[i];
			char *msg = NULL, *detail = NULL;

			if (w->failed) {
				msg = cli_strdup_printf(
					"grew by %s%s, more than %s",
					signed_human(w->grew, a, sizeof(a)),
					d->at_label ? " at the mark" : "",
					util_human_size(d->fail_limit, c, sizeof(c)));
				detail = row_detail(w);
				if (!msg || !detail)
					j.err = -ENOMEM;
			}
			junit_case(&j, "gpuspy.diff.growth", row_name(w), msg, detail, NULL);
			free(msg);
			free(detail);
		}
		for (size_t i = 0; i < d->ntrows; i++) {
			const struct diff_trow *w = &d->trows[i];
			const struct rd_report_tsite *t = w->site[1] ? w->site[1] : w->site[0];
			char *msg = NULL;
			char ol[32], nl[32];

			if (w->failed) {
				msg = cli_strdup_printf(
					"its live blocks grew by %s, more than %s: %s -> %s",
					signed_human(diff_sub_sat(w->live[1], w->live[0]), a,
						     sizeof(a)),
					util_human_size(d->fail_limit, c, sizeof(c)),
					util_human_size(w->live[0], ol, sizeof(ol)),
					util_human_size(w->live[1], nl, sizeof(nl)));
				if (!msg)
					j.err = -ENOMEM;
			}
			junit_case(&j, "gpuspy.diff.pytorch",
				   t->name ? t->name :
					     "(allocated before the PyTorch view started)",
				   msg, NULL, NULL);
			free(msg);
		}
	}
	if (b) {
		name = cli_strdup_printf("gpuspy diff --budget %s", b->file);
		junit_suite(&j, name ? name : "gpuspy diff --budget", "budget");
		free(name);
		junit_property(&j, "old", d->side[0].paths[0]);
		junit_property(&j, "new", d->side[1].paths[0]);
		junit_property(&j, "budget", b->file);
		for (size_t i = 0; i < d->nrows; i++) {
			const struct diff_row *w = &d->rows[i];
			char *msg = NULL, *detail = NULL, *out = NULL;

			if (!w->site[1])
				continue;
			if (!w->budget) {
				junit_skip(&j, "gpuspy.diff.budget", row_name(w),
					   "no line of the budget file matches this site");
				continue;
			}
			rule_where(b, w->budget, where, sizeof(where));
			if (w->over_budget) {
				msg = cli_strdup_printf(
					"peak %s, over its budget of %s (%s)",
					util_human_size(w->budget_peak, a, sizeof(a)),
					util_human_size(w->budget->bytes, c, sizeof(c)), where);
				detail = row_detail(w);
				if (!msg || !detail)
					j.err = -ENOMEM;
			} else {
				out = cli_strdup_printf(
					"peak %s, budget %s (%s)\n",
					util_human_size(w->budget_peak, a, sizeof(a)),
					util_human_size(w->budget->bytes, c, sizeof(c)), where);
				if (!out)
					j.err = -ENOMEM;
			}
			junit_case(&j, "gpuspy.diff.budget", row_name(w), msg, detail, out);
			free(msg);
			free(detail);
			free(out);
		}
	}
	e = junit_write(&j, file);
	junit_free(&j);
	return e;
}

int cmd_diff(int argc, char **argv)
{
	enum { OPT_FAIL = 256, OPT_OLD, OPT_NEW, OPT_STRICT, OPT_BUDGET, OPT_JUNIT };
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "fail-on-growth", required_argument, NULL, OPT_FAIL },
		{ "budget", required_argument, NULL, OPT_BUDGET },
		{ "junit", required_argument, NULL, OPT_JUNIT },
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
	const char *budget_file = NULL, *junit_file = NULL;
	struct budget_file budget = { 0 };
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
		case OPT_BUDGET:
			if (!*optarg)
				status = usage_error("--budget needs a file", NULL);
			budget_file = optarg;
			break;
		case OPT_JUNIT:
			if (!*optarg)
				status = usage_error("--junit needs a file", NULL);
			junit_file = optarg;
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
	if (junit_file && d.fail_limit < 0 && !budget_file) {
		status = usage_error("--junit goes with --fail-on-growth or --budget", NULL);
		goto done;
	}
	/* the budget first: a refused one is said before any run is read */
	if (budget_file) {
		e = budget_load(budget_file, &budget, &err);
		if (e < 0) {
			cli_print_error(&err, e);
			status = e == -ENOMEM ? EXIT_FAILURE_OTHER : EXIT_USAGE;
			goto done;
		}
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
	if (e == 0 && budget_file)
		diff_budget(&d, &budget);
	if (e < 0) {
		cli_error(NULL, "out of memory");
		status = EXIT_FAILURE_OTHER;
		goto done;
	}
	e = fmt->diff(&d, set, nset, tot, ntot, top, stdout);
	if (fflush(stdout) != 0 && e == 0)
		e = -errno;
	if (e == 0 && budget_file)
		e = budget_verdict(&d, &budget, fmt->people ? stdout : stderr);
	if (e < 0) {
		cli_error(NULL, "cannot write the diff: %s", strerror(-e));
		status = EXIT_FAILURE_OTHER;
	} else {
		status = d.failed || d.over_budget ? EXIT_GROWTH : EXIT_OK;
	}
	/* the verdicts as JUnit, once the diff itself was written */
	if (junit_file && e == 0) {
		e = diff_junit(&d, budget_file ? &budget : NULL, junit_file);
		if (e < 0) {
			cli_error(junit_file, "cannot write the JUnit report: %s", strerror(-e));
			status = EXIT_FAILURE_OTHER;
		}
	}
done:
	budget_clear(&budget);
	cli_notices_say(false);
	diff_settings_free(set, nset);
	free(tot);
	diff_clear(&d);
	free(owned[0]);
	free(owned[1]);
	return status;
}
