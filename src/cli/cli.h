/* SPDX-License-Identifier: MIT */
/* The commands of gpuspy(1); each returns the process's exit status. */
#ifndef GPUSPY_CLI_H
#define GPUSPY_CLI_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/* Exit statuses shared by the commands (gpuspy(1), EXIT STATUS). */
enum {
	EXIT_OK = 0,
	EXIT_FAILURE_OTHER = 1, /* out of memory, cannot write the output */
	EXIT_GROWTH = 1,	/* gpuspy diff --fail-on-growth: a site grew */
	EXIT_USAGE = 2,		/* bad usage or bad input files */
	EXIT_EXEC_FAILED = 127,
};

int cmd_run(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_snapshot(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_top(int argc, char **argv);

/* common.c: what every command does alike */

struct rd_error;

/* "gpuspy CMD: WHAT 'ARG' (see 'gpuspy CMD --help')" on stderr (ARG may
 * be NULL, and is printed with control characters replaced); EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *what, const char *arg);
/* "gpuspy: " and ERR's message, or strerror(-E) when it has none. */
void cli_print_error(const struct rd_error *err, int e);
/* Write S to OUT with control characters replaced by '?'. */
void cli_put_clean(FILE *out, const char *s);
/* A decimal count that fits a size_t: 0, or -EINVAL. */
int cli_parse_count(const char *s, size_t *out);

/* common.c: `report` and `merge`: options, then every PATH loaded and
 * merged into L->rep.  Returns -1 to go on (print, then cli_report_done),
 * else the exit status to return at once. */
#include "merge.h"
struct cli_loaded {
	struct rd_process_list list;
	struct symbolizer *sym;
	struct rd_report rep;
	bool json;
	bool csv; /* report only: the history, for plotting */
	/* report only: an export for other tools (0: none), of the state at
	 * exit, at the peak (PEAK) or at the last mark AT */
	enum cli_export {
		CLI_EXPORT_NONE,
		CLI_EXPORT_PPROF,
		CLI_EXPORT_PERFETTO,
		CLI_EXPORT_COLLAPSED,
		CLI_EXPORT_HTML
	} export;
	const char *at;
	bool peak;
	size_t top; /* 0: all */
};
int cli_report_setup(const char *cmd, const char *usage, size_t default_top, int argc, char **argv,
		     struct cli_loaded *l);
/* After printing (E: 0 or -errno of the printing): flush, say so if the
 * output failed, free L; the exit status. */
int cli_report_done(struct cli_loaded *l, int e);

/* export.c: `report --format pprof|perfetto|collapsed|html` */

/* Set L's export to the format NAME: 0, or -EINVAL when it is none of them. */
int cli_export_format(const char *name, struct cli_loaded *l);
/* Whether --at and --peak fit the format: -1 to go on, else EXIT_USAGE. */
int cli_export_check(const char *cmd, const struct cli_loaded *l);
/* Build L's export and print it; the exit status (L is freed). */
int cli_export_report(struct cli_loaded *l);

/* procfs.c: a process running under gpuspy, seen from outside */

/* The value of NAME in /proc/PID/environ, or NULL. */
char *procfs_env(pid_t pid, const char *name);
/* The process directory that process PID writes on this host, as the
 * library resolves it: its GPUSPY_OUTPUT_DIR (default gpuspy-out; a
 * relative one from its working directory) + "/<host>-<pid>".  Cut short
 * when it does not fit in SIZE bytes. */
void procfs_process_dir(pid_t pid, char *dir, size_t size);

#endif
