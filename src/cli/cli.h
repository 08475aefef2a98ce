/* SPDX-License-Identifier: MIT */
/* The commands of gpuspy(1); each returns the process's exit status. */
#ifndef GPUSPY_CLI_H
#define GPUSPY_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/* Exit statuses shared by the commands (gpuspy(1), EXIT STATUS). */
enum {
	EXIT_OK = 0,
	EXIT_FAILURE_OTHER = 1,	   /* out of memory, cannot write the output */
	EXIT_GROWTH = 1,	   /* gpuspy diff --fail-on-growth: a site grew */
	EXIT_LEAK = 1,		   /* gpuspy report --fail-on-leak: more was live */
	EXIT_USAGE = 2,		   /* bad usage or bad input files */
	EXIT_EXEC_FAILED = 126,	   /* run: the command exists but cannot be executed */
	EXIT_EXEC_NOT_FOUND = 127, /* run: no such command */
};

int cmd_run(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_snapshot(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_exporter(int argc, char **argv);
int cmd_commits(int argc, char **argv);
/* gpuspy --lib: the library 'gpuspy run' would preload, on stdout. */
int run_print_library(void);

/* common.c: what every command does alike */

struct rd_error;
struct rd_process_list;

/* "gpuspy CMD: WHAT 'ARG' (see 'gpuspy CMD --help')" on stderr (ARG may
 * be NULL, and is printed with control characters replaced); EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *what, const char *arg);
/* The command running, for the error lines: "report", "top", ...; main()
 * sets it before the command starts (NULL: none yet). */
extern const char *cli_command;
/* The one style of error line, on stderr: "gpuspy CMD: FILE: WHAT" (no
 * "FILE: " when FILE is NULL), control characters replaced. */
void cli_error(const char *file, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "gpuspy CMD: " and ERR's message ("FILE: what", from the reading
 * library), or strerror(-E) when it has none. */
void cli_print_error(const struct rd_error *err, int e);
/* Write S to OUT with control characters replaced by '?'. */
void cli_put_clean(FILE *out, const char *s);
/* The process directory of PATH when PATH is the report.txt the library
 * names at exit (the text for people, beside report.json): the directory
 * is what the user meant.  NULL for any other PATH (or out of memory);
 * else the caller's to free. */
char *cli_text_report_dir(const char *path);
/* Whether the character set of the user's locale (LC_ALL, LC_CTYPE, LANG)
 * is UTF-8; asked once.  Text output is ASCII otherwise. */
bool cli_utf8(void);
enum cli_glyph {
	CLI_ELLIPSIS, /* U+2026, "..." */
	CLI_RARROW,   /* U+2192, "->" */
	CLI_LARROW,   /* U+2190, "<-" */
	CLI_DASH,     /* U+2014, "-" */
};
/* G as the locale can show it: the UTF-8 glyph, or its ASCII spelling. */
const char *cli_glyph(enum cli_glyph g);
/*
 * The path command CMD reads for PATH: an output directory (./gpuspy-out)
 * stands for its latest run, or the one BACK runs before it; PATH NULL
 * for the default: $GPUSPY_OUTPUT_DIR when set (BACK 0: a run directory
 * itself), else ./gpuspy-out.  Which run was taken is said on stderr in
 * one line.  *OUT to free; 0, or the exit status with the reason printed
 * (a "latest" that leads outside its directory: EXIT_USAGE).
 */
int cli_run_path(const char *cmd, const char *path, unsigned back, char **out);
/* The reading library set up for a command that reads around what it
 * cannot read (STRICT: --strict, that refuses it instead): what it reads
 * around (rd_notice) is kept, each line once, until cli_notices_say. */
void cli_read_setup(bool strict);
/* The notices kept, on stderr, one line each: "gpuspy CMD: warning:
 * FILE: ...", or, FATAL (nothing usable is left), as the refusals they
 * are, "gpuspy CMD: FILE: ...".  Each is said once. */
void cli_notices_say(bool fatal);
/* The processes of LIST that could not be read (LIST->unreadable): one
 * line each on stderr, "gpuspy CMD: K of N processes could not be read:
 * PATH: REASON", and -1 to go on; or, when no process of LIST is left or
 * STRICT, each refusal as the error it is and EXIT_USAGE. */
int cli_said_unreadable(const struct rd_process_list *list, bool strict);
/* A decimal count that fits a size_t: 0, or -EINVAL. */
int cli_parse_count(const char *s, size_t *out);

/* setup.c: `report`, `merge` and `export`: options, then every PATH
 * loaded and merged into L->rep.  Returns -1 to go on (print, then
 * cli_report_done), else the exit status to return at once. */
#include "merge.h"
#include "wrong_device.h"
struct format;
struct cli_loaded {
	struct rd_process_list list;
	struct symbolizer *sym;
	struct rd_report rep;
	struct rd_wrong_list wrong; /* rep.wrong: the ranks on a device not their own */
	struct rd_ranks ranks;	    /* rep.ranks: gpuspy merge's PER RANK */
	/* --format (format.h); report: also the export for other tools, of
	 * the state at exit, at the peak (PEAK) or at the last mark AT */
	const struct format *format;
	const char *at;
	bool peak;
	bool strict; /* --strict: a process that cannot be read is fatal */
	size_t top;  /* 0: all */
	/* report only: --sections' value (NULL: all), and the sections it
	 * names (print.h: 1 << enum text_section each) */
	const char *sections;
	unsigned text_sections;
	/* export only: --step mark (the step of a scalar is the number of
	 * marks before it) */
	bool by_mark;
	/* the PATHs */
	char **paths;
	size_t npaths;
};
/* The options cli_report_setup parses (report and merge), for a command
 * that must find the paths among them as it will: its getopt_long
 * arguments. */
extern const char cli_report_shortopts[];
extern const struct option cli_report_options[];
/* One line on stderr when the processes of LIST, read from WHAT, belong
 * to more than one run (their "run" ids). */
void cli_warn_mixed(const char *cmd, const char *what, const struct rd_process_list *list);
/* USAGE is printed by format_usage (format.h: the formats' names put in
 * where it says). */
int cli_report_setup(const char *cmd, const char *usage, size_t default_top, int argc, char **argv,
		     struct cli_loaded *l);
/* The second half of cli_report_setup, for a command with options of its
 * own: L->paths loaded and merged into L->rep (L otherwise zeroed); -1
 * to go on, else the exit status. */
int cli_report_load(const char *cmd, struct cli_loaded *l);
/* After printing (E: 0 or -errno of the printing, or an exit status whose
 * reason was said): flush, say so if the output failed, free L; the exit
 * status. */
int cli_report_done(struct cli_loaded *l, int e);

/* outfile.c: a file written at a path the user gave */

/* DATA (LEN bytes) written to PATH whole: to a temporary of this
 * process's own beside it (created O_EXCL | O_NOFOLLOW), then renamed
 * over PATH, so that a reader sees the old file or the new one and a
 * link at PATH is replaced, never written through.  0 or -errno (PATH is
 * left as it was). */
int cli_write_file(const char *path, const void *data, size_t len);

/* git.c: git(1), asked by the command */

#define CLI_GIT_TIMEOUT_MS 5000
/* "git ARGS..." (a NULL-terminated list, at most 14) run in the working
 * directory; the first SIZE - 1 bytes it prints into BUF, its trailing
 * newline cut: 0 when it exited 0 and printed something, else -1 (no
 * git, not a repository, no answer within CLI_GIT_TIMEOUT_MS). */
int cli_git(const char *const *args, char *buf, size_t size);

/* junit.c: JUnit XML for the gates (--junit FILE) */

/* Test suites of test cases, held until junit_write.  A failed call
 * (out of memory) is remembered and junit_write returns it. */
struct junit_case;
struct junit_suite;
struct junit {
	struct junit_suite *suites;
	size_t nsuites;
	int err;
};
/* A new suite NAME, whose failures are of TYPE (the gate's option:
 * "fail-on-growth"): the cases and properties added next go in it. */
void junit_suite(struct junit *j, const char *name, const char *type);
/* A property of the current suite (what the gate was given). */
void junit_property(struct junit *j, const char *name, const char *value);
/* A case of the current suite: NAME in CLASSNAME; it failed when FAILURE
 * (the message, one line) is not NULL, with DETAIL (lines, or NULL) as
 * the failure's text.  OUT (NULL: none) goes to its system-out. */
void junit_case(struct junit *j, const char *classname, const char *name, const char *failure,
		const char *detail, const char *out);
/* A case of the current suite that was not judged, and WHY. */
void junit_skip(struct junit *j, const char *classname, const char *name, const char *why);
/* The document, written to PATH (cli_write_file): 0 or -errno. */
int junit_write(const struct junit *j, const char *path);
void junit_free(struct junit *j);
/* The text FMT makes, malloc()ed (NULL: out of memory). */
char *cli_strdup_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* term.c: the terminal, for top */

/* What the terminal can do, from terminfo: the view is redrawn in place
 * only with home, el and ed; the alternate screen and the cursor's
 * visibility are used when the terminal has them. */
struct term_caps {
	const char *home, *el, *ed, *smcup, *rmcup, *civis, *cnorm;
	char home_buf[32]; /* cup to 0,0 when the terminal has no home */
	int nlines, ncols; /* terminfo's, when the window does not say */
};

/* Whether standard output is a terminal that a view can be redrawn on
 * in place, and *TC its sequences.  A terminal without them (TERM=dumb,
 * unset, or unknown) is written to as a pipe. */
bool cli_term_caps(struct term_caps *tc);
/* S (NULL: nothing), one of TC's sequences, to stdout with its padding. */
void cli_term_put(const char *s);

/* procfs.c: a process running under gpuspy, seen from outside */

/* The value of NAME in /proc/PID/environ, or NULL. */
char *procfs_env(pid_t pid, const char *name);
/* The process directory that process PID writes on this host, as the
 * library resolves it: its run directory (the one it inherited through
 * GPUSPY_RUN_DIR, its GPUSPY_OUTPUT_DIR, relative to its working
 * directory, or the newest run of its ./gpuspy-out that holds it) +
 * "/<host>-<pid>".  Cut short when it does not fit in SIZE bytes. */
void procfs_process_dir(pid_t pid, char *dir, size_t size);

#endif
