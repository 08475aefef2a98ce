/* SPDX-License-Identifier: MIT */
/* What every command does alike: its error lines and usage errors, the
 * run a PATH stands for, the reading library's notices, the glyphs the
 * locale can show.  The ground of src/cli: it calls no other file of it. */
#include <errno.h>
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
#include "util.h"

static void cli_error_prefix(void);

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

char *cli_text_report_dir(const char *path)
{
	struct stat st;

	if (strcmp(util_basename(path), GS_FILE_REPORT_TEXT) != 0 || stat(path, &st) < 0 ||
	    !S_ISREG(st.st_mode))
		return NULL;
	return util_dir_of(path);
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
