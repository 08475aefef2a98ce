/* SPDX-License-Identifier: MIT */
/* What `gpuspy report` and `gpuspy merge` share: their options, and
 * loading every PATH into one merged report before anything is printed. */
#include <errno.h>
#include <getopt.h>
#include <langinfo.h>
#include <locale.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "discover.h"
#include "env.h"
#include "names.h"
#include "rundir.h"
#include "util.h"

static void cli_error_prefix(void);

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

int cli_run_path(const char *cmd, const char *path, unsigned back, char **out)
{
	struct rd_error err = { .msg = "" };
	const char *env = getenv("GPUSPY_OUTPUT_DIR");
	const char *given = path;
	size_t nruns = 0;
	char *run = NULL;
	int e;

	*out = NULL;
	if (!path) {
		/* an explicit run directory is the run itself */
		path = env && env[0] && back == 0 ? env : GS_OUTPUT_DIR_DEFAULT;
		if (access(path, F_OK) < 0) {
			fprintf(stderr, "gpuspy %s: no PATH given, and ", cmd);
			cli_put_clean(stderr, path);
			fputs(path == env ? " ($GPUSPY_OUTPUT_DIR)" : "", stderr);
			fputs(" does not exist: no run wrote there yet; name a run directory, or "
			      "start one with gpuspy run -- CMD\n",
			      stderr);
			return EXIT_USAGE;
		}
	}
	e = discover_output_dir(path, back, &run, &nruns, &err);
	if (e < 0) {
		fprintf(stderr, "gpuspy %s: %s\n", cmd, err.msg);
		return e == -ENOMEM ? EXIT_FAILURE_OTHER : EXIT_USAGE;
	}
	if (e == 0 && back > 0) {
		fprintf(stderr, "gpuspy %s: ", cmd);
		cli_put_clean(stderr, path);
		fputs(" holds no run directories: name the runs to compare\n", stderr);
		return EXIT_USAGE;
	}
	if (e == 0 && given) {
		*out = strdup(path);
		return *out ? 0 : EXIT_FAILURE_OTHER;
	}
	*out = e ? run : strdup(path);
	if (!*out)
		return EXIT_FAILURE_OTHER;
	/* which run was taken for the user, in one line */
	fprintf(stderr, "gpuspy %s: reading ", cmd);
	cli_put_clean(stderr, *out);
	if (e)
		fprintf(stderr, ", %s of %zu run%s in ",
			back == 0 ? "the latest" : "the one before the latest", nruns,
			nruns == 1 ? "" : "s");
	else
		fputs(path == env ? " ($GPUSPY_OUTPUT_DIR)" : "", stderr);
	if (e)
		cli_put_clean(stderr, path);
	putc('\n', stderr);
	return 0;
}

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
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, cli_report_shortopts, cli_report_options, NULL)) !=
	       -1) {
		switch (c) {
		case 'f':
			l->export = CLI_EXPORT_NONE;
			if (strcmp(optarg, "json") == 0)
				l->json = true;
			else if (strcmp(optarg, "text") == 0)
				l->json = false;
			else if (strcmp(optarg, "csv") == 0 && strcmp(cmd, "report") == 0)
				l->csv = true;
			else if (strcmp(cmd, "report") == 0 && cli_export_format(optarg, l) == 0)
				;
			else
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
			fputs(usage, stdout);
			return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAILURE_OTHER;
		case ':':
			return cli_usage_error(cmd, "missing value for", argv[optind - 1]);
		default:
			return cli_usage_error(cmd, "unknown option", argv[optind - 1]);
		}
	}
	l->paths = argv + optind;
	l->npaths = (size_t)(argc - optind);
	e = cli_export_check(cmd, l);
	if (e >= 0)
		return e;
	/* JSON lists everything unless asked otherwise */
	l->top = top_given || !l->json ? top : 0;
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
	if (e < 0) {
		cli_print_error(&err, e);
		symbolizer_free(l->sym);
		rd_process_list_clear(&l->list);
		return e == -EOVERFLOW ? EXIT_USAGE : EXIT_FAILURE_OTHER;
	}
	return -1;
}

char *cli_text_report_dir(const char *path)
{
	struct stat st;

	if (strcmp(util_basename(path), GS_FILE_REPORT_TEXT) != 0 || stat(path, &st) < 0 ||
	    !S_ISREG(st.st_mode))
		return NULL;
	return util_dir_of(path);
}

int cli_report_done(struct cli_loaded *l, int e)
{
	int status = EXIT_OK;

	if (fflush(stdout) != 0 && e == 0)
		e = -errno;
	if (e < 0) {
		cli_error(NULL, "cannot write the output: %s", strerror(-e));
		status = EXIT_FAILURE_OTHER;
	}
	cli_notices_say(false);
	merge_clear(&l->rep);
	symbolizer_free(l->sym);
	rd_process_list_clear(&l->list);
	return status;
}

/* The reading library's notices (rd_notice) not said yet: a history read
 * twice by one command (its growth, its timeline) is said once. */
static struct cli_notice {
	enum rd_notice kind;
	char *line;
} * notices;
static size_t nnotices;

static void cli_notice(enum rd_notice kind, const char *line)
{
	struct cli_notice *n;

	for (size_t i = 0; i < nnotices; i++)
		if (strcmp(notices[i].line, line) == 0)
			return;
	n = reallocarray(notices, nnotices + 1, sizeof(*notices));
	if (!n)
		return;
	notices = n;
	n[nnotices].kind = kind;
	n[nnotices].line = strdup(line);
	if (n[nnotices].line)
		nnotices++;
}

void cli_read_setup(bool strict)
{
	rd_read_setup(cli_notice, strict);
}

void cli_notices_say(bool fatal)
{
	for (size_t i = 0; i < nnotices; i++) {
		const struct cli_notice *n = &notices[i];

		cli_error_prefix();
		/* the line was sanitized when it was made */
		if (fatal && n->kind == RD_NOTICE_LEFT_OUT)
			fprintf(stderr, "%s\n", n->line);
		else
			fprintf(stderr, "warning: %s%s\n", n->line,
				n->kind == RD_NOTICE_LEFT_OUT ? "; left out, the rest is read" :
								"");
		free(notices[i].line);
	}
	free(notices);
	notices = NULL;
	nnotices = 0;
}

int cli_said_unreadable(const struct rd_process_list *list, bool strict)
{
	size_t total = list->n + list->nunreadable;

	if (list->nunreadable == 0)
		return -1;
	for (size_t i = 0; i < list->nunreadable; i++) {
		const struct rd_unreadable *u = &list->unreadable[i];

		cli_error_prefix();
		/* nothing else to read: the refusal, as for one file */
		if (list->n == 0) {
			/* the message was sanitized when it was made */
			fprintf(stderr, "%s\n", u->msg);
			continue;
		}
		fprintf(stderr, "%zu of %zu %s could not be read: ", list->nunreadable, total,
			total == 1 ? "process" : "processes");
		cli_put_clean(stderr, u->path);
		fprintf(stderr, ": %s\n", u->reason);
	}
	if (list->n == 0 || strict)
		return EXIT_USAGE;
	return -1;
}

int cli_usage_error(const char *cmd, const char *what, const char *arg)
{
	fprintf(stderr, "gpuspy %s: ", cmd);
	fputs(what, stderr);
	if (arg) {
		fputs(" '", stderr);
		cli_put_clean(stderr, arg);
		putc('\'', stderr);
	}
	fprintf(stderr, " (see 'gpuspy %s --help')\n", cmd);
	return EXIT_USAGE;
}

const char *cli_command;

/* "gpuspy CMD: " */
static void cli_error_prefix(void)
{
	fputs("gpuspy", stderr);
	if (cli_command)
		fprintf(stderr, " %s", cli_command);
	fputs(": ", stderr);
}

void cli_error(const char *file, const char *fmt, ...)
{
	char buf[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	cli_error_prefix();
	if (file) {
		cli_put_clean(stderr, file);
		fputs(": ", stderr);
	}
	cli_put_clean(stderr, buf);
	putc('\n', stderr);
}

void cli_print_error(const struct rd_error *err, int e)
{
	cli_error_prefix();
	/* the message was sanitized when it was made */
	fputs(err->msg[0] ? err->msg : strerror(-e), stderr);
	putc('\n', stderr);
}

bool cli_utf8(void)
{
	static int utf8 = -1;

	if (utf8 < 0) {
		const char *cs;

		setlocale(LC_CTYPE, "");
		cs = nl_langinfo(CODESET);
		utf8 = cs && (strcmp(cs, "UTF-8") == 0 || strcmp(cs, "utf8") == 0);
	}
	return utf8;
}

const char *cli_glyph(enum cli_glyph g)
{
	static const char *const glyphs[][2] = {
		[CLI_ELLIPSIS] = { "\u2026", "..." },
		[CLI_RARROW] = { "\u2192", "->" },
		[CLI_LARROW] = { "\u2190", "<-" },
		[CLI_DASH] = { "\u2014", "-" },
	};

	return glyphs[g][!cli_utf8()];
}

int cli_parse_count(const char *s, size_t *out)
{
	int64_t v;

	if (util_parse_count(s, &v) < 0 || (uint64_t)v > SIZE_MAX)
		return -EINVAL;
	*out = (size_t)v;
	return 0;
}

void cli_put_clean(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	for (; *p; p++) {
		if (*p < 0x20 || *p == 0x7f) {
			putc('?', out);
		} else if (util_is_c1(p)) {
			putc('?', out);
			p++;
		} else {
			putc(*p, out);
		}
	}
}
