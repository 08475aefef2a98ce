/* SPDX-License-Identifier: MIT */
/* What `gpuspy report`, `merge` and `export` share: their options, and
 * loading every PATH into one merged report before anything is printed. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "discover.h"
#include "format.h"
#include "names.h"
#include "rundir.h"

const char cli_report_shortopts[] = ":f:n:s:h";
const struct option cli_report_options[] = {
	{ "format", required_argument, NULL, 'f' },
	{ "top", required_argument, NULL, 'n' },
	{ "at", required_argument, NULL, 'a' },
	{ "peak", no_argument, NULL, 'p' },
	{ "sections", required_argument, NULL, 's' },
	{ "strict", no_argument, NULL, 'S' }, /* a process not read is fatal */
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

void cli_warn_mixed(const char *cmd, const char *what, const struct rd_process_list *list)
{
	const char *ids[8], *cmds_seen[4];
	char cmds[4][GS_RUN_ID_SIZE];
	size_t nids = 0, ncmds = 0, older = 0, more_ids = 0;

	for (size_t i = 0; i < list->n; i++) {
		const char *id = list->items[i]->run_id;
		bool seen = false;

		if (!id) {
			older++;
			continue;
		}
		for (size_t k = 0; k < nids && !seen; k++)
			seen = strcmp(ids[k], id) == 0;
		if (seen)
			continue;
		if (nids == sizeof(ids) / sizeof(ids[0])) {
			more_ids++;
			continue;
		}
		ids[nids++] = id;
	}
	if (nids + more_ids + (older && nids ? 1 : 0) < 2)
		return;
	for (size_t k = 0; k < nids; k++) {
		char c[GS_RUN_ID_SIZE];
		bool seen = false;

		if (rundir_id_command(ids[k], c, sizeof(c)) < 0)
			continue;
		for (size_t j = 0; j < ncmds && !seen; j++)
			seen = strcmp(cmds[j], c) == 0;
		if (!seen && ncmds < sizeof(cmds) / sizeof(cmds[0])) {
			memcpy(cmds[ncmds], c, sizeof(c));
			cmds_seen[ncmds] = cmds[ncmds];
			ncmds++;
		}
	}
	fprintf(stderr, "gpuspy %s: ", cmd);
	cli_put_clean(stderr, what);
	fprintf(stderr, " mixes %s%zu runs", more_ids ? "more than " : "",
		nids + more_ids + (older ? 1 : 0));
	if (ncmds) {
		fprintf(stderr, " of %zu command%s (", ncmds, ncmds == 1 ? "" : "s");
		for (size_t j = 0; j < ncmds; j++) {
			fputs(j ? ", " : "", stderr);
			cli_put_clean(stderr, cmds_seen[j]);
		}
		putc(')', stderr);
	}
	if (older)
		fprintf(stderr, "%s%zu process%s of an older gpuspy, run unknown",
			ncmds ? " and " : ": ", older, older == 1 ? "" : "es");
	fputs(": their figures are added together; give each run its own directory\n", stderr);
}

int cli_report_setup(const char *cmd, const char *usage, size_t default_top, int argc, char **argv,
		     struct cli_loaded *l)
{
	bool top_given = false;
	size_t top = default_top;
	int c, e;

	memset(l, 0, sizeof(*l));
	l->format = format_default(cmd);
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, cli_report_shortopts, cli_report_options, NULL)) !=
	       -1) {
		switch (c) {
		case 'f':
			l->format = format_find(cmd, optarg);
			if (!l->format)
				return cli_usage_error(cmd, "unknown format", optarg);
			break;
		case 'n':
			if (cli_parse_count(optarg, &top) < 0)
				return cli_usage_error(cmd, "--top needs a number, not", optarg);
			top_given = true;
			break;
		case 'a':
		case 'p':
			if (strcmp(cmd, "report") != 0)
				return cli_usage_error(cmd, "unknown option", argv[optind - 1]);
			if (c == 'a')
				l->at = optarg;
			else
				l->peak = true;
			break;
		case 's':
			if (strcmp(cmd, "report") != 0)
				return cli_usage_error(cmd, "unknown option", "--sections");
			l->sections = optarg;
			break;
		case 'S':
			l->strict = true;
			break;
		case 'h':
			return format_usage(stdout, usage) == 0 && fflush(stdout) == 0 ?
				       EXIT_OK :
				       EXIT_FAILURE_OTHER;
		case ':':
			return cli_usage_error(cmd, "missing value for", argv[optind - 1]);
		default:
			return cli_usage_error(cmd, "unknown option", argv[optind - 1]);
		}
	}
	l->paths = argv + optind;
	l->npaths = (size_t)(argc - optind);
	e = format_check(cmd, l->format, l);
	if (e >= 0)
		return e;
	/* JSON lists everything unless asked otherwise */
	l->top = top_given || !l->format->all_sites ? top : 0;
	return cli_report_load(cmd, l);
}

int cli_report_load(const char *cmd, struct cli_loaded *l)
{
	struct rd_error err = { .msg = "" };
	int e;

	/* Everything is loaded before anything is printed.  A process that
	 * cannot be read is left out and said, the others are read
	 * (cli_said_unreadable); a PATH that is not there, or holds no report
	 * at all, fails the command.  No PATH: the latest run (cli_run_path). */
	cli_read_setup(l->strict);
	for (size_t i = 0; i < l->npaths || (i == 0 && l->npaths == 0); i++) {
		char *path;

		/* the report.txt the library names stands for its directory */
		char *dir = i < l->npaths ? cli_text_report_dir(l->paths[i]) : NULL;

		e = cli_run_path(cmd, dir ? dir : i < l->npaths ? l->paths[i] : NULL, 0, &path);
		free(dir);
		if (e == 0) {
			e = discover_path(&l->list, path, &err);
			if (e < 0)
				cli_print_error(&err, e);
			e = e == 0 ? 0 : e == -ENOMEM ? EXIT_FAILURE_OTHER : EXIT_USAGE;
		}
		if (e == 0 && l->npaths <= 1)
			cli_warn_mixed(cmd, path, &l->list);
		free(path);
		if (e) {
			rd_process_list_clear(&l->list);
			return e;
		}
	}
	e = cli_said_unreadable(&l->list, l->strict);
	if (e >= 0) {
		rd_process_list_clear(&l->list);
		return e;
	}
	if (l->npaths > 1)
		cli_warn_mixed(cmd, "these paths", &l->list);
	e = symbolizer_new(&l->sym);
	if (e == 0)
		e = merge_build(&l->rep, &l->list, l->sym, &err);
	if (e == 0) {
		e = rd_wrong_build(&l->rep, &l->wrong);
		l->rep.wrong = &l->wrong;
		if (e == 0)
			e = rd_ranks_build(&l->rep, &l->ranks);
		l->rep.ranks = &l->ranks;
		if (e < 0) {
			err.msg[0] = '\0';
			rd_ranks_clear(&l->ranks);
			rd_wrong_clear(&l->wrong);
			merge_clear(&l->rep);
		}
	}
	if (e < 0) {
		cli_print_error(&err, e);
		symbolizer_free(l->sym);
		rd_process_list_clear(&l->list);
		return e == -EOVERFLOW ? EXIT_USAGE : EXIT_FAILURE_OTHER;
	}
	return -1;
}

int cli_report_done(struct cli_loaded *l, int e)
{
	int status = EXIT_OK, said = e > 0 ? e : 0;

	/* a failure said already: only the output's own is said here */
	if (said)
		e = 0;
	if (fflush(stdout) != 0 && e == 0)
		e = -errno;
	if (e < 0) {
		cli_error(NULL, "cannot write the output: %s", strerror(-e));
		status = EXIT_FAILURE_OTHER;
	}
	cli_notices_say(false);
	rd_ranks_clear(&l->ranks);
	rd_wrong_clear(&l->wrong);
	merge_clear(&l->rep);
	symbolizer_free(l->sym);
	rd_process_list_clear(&l->list);
	return said ? said : status;
}
