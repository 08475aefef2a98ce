/* SPDX-License-Identifier: MIT */
/*
 * The output formats of gpuspy(1), one row each in format.c: what each
 * is called, what it needs built beside the merged report, which moments
 * it can show, and its printers.  The commands find a format here by its
 * name (format_find), their usage lists the formats from here
 * (format_usage), and format_print builds what a row needs and calls its
 * printer.  A new format is one row and its printer; the man pages and
 * the shell completions are checked against the rows by
 * tests/cli/test_help_man.py.
 */
#ifndef GPUSPY_CLI_FORMAT_H
#define GPUSPY_CLI_FORMAT_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct cli_loaded;
struct diff;
struct diff_setting_row;
struct diff_total;
struct rd_history;
struct rd_live;
struct rd_report;
struct rd_report_site;
struct rd_stacks;
struct rd_timeline;

/* What a format needs built before its printer runs (format_print). */
enum format_need {
	/* the stacks of what was live at the moment chosen (at exit unless
	 * --at or --peak says otherwise) */
	FORMAT_STACKS = 1u << 0,
	/* the same, only when --at or --peak chose a moment */
	FORMAT_MOMENT = 1u << 1,
	/* every process's timeline, from its history.jsonl (timeline.h) */
	FORMAT_TIMELINE = 1u << 2,
	/* the growing sites' rates and sparklines, set as the report's growth */
	FORMAT_GROWTH = 1u << 3,
	/* every process's history.jsonl, as read (load_history.h) */
	FORMAT_HISTORY = 1u << 4,
	/* every process's allocations.json, as read (load_live.h): its
	 * allocations at exit and its trace */
	FORMAT_LIVE = 1u << 5,
};

/* The moments a format can show; none: it draws the whole run, and
 * --at and --peak are refused with it. */
enum format_moment {
	FORMAT_AT_EXIT = 1u << 0,
	FORMAT_AT_MARK = 1u << 1, /* --at LABEL: each process's last mark LABEL */
	FORMAT_AT_PEAK = 1u << 2, /* --peak */
};

/* What a report or export printer is given: what it needs, built. */
struct format_input {
	struct cli_loaded *l; /* the report, its processes, the options */
	/* FORMAT_STACKS, or FORMAT_MOMENT when a moment was chosen; else
	 * NULL */
	const struct rd_stacks *stacks;
	const struct rd_timeline *timeline; /* FORMAT_TIMELINE, else NULL */
	/* FORMAT_HISTORY: one per process of L's report; else NULL */
	const struct rd_history *history;
	/* FORMAT_LIVE: one per process of L's report; else NULL */
	const struct rd_live *live;
	/* gpuspy export: the argument of the format's option (a directory,
	 * a file); else NULL, and the output goes to OUT */
	const char *dest;
	FILE *out;
};

struct format {
	const char *name;
	/* gpuspy export --NAME ARG: ARG's name (LOGDIR, FILE); NULL for a
	 * format of gpuspy report --format NAME, printed on stdout */
	const char *arg;
	/* for the usage: one line (report) or an option's description
	 * (export, lines of at most 56 columns, each ended by '\n') */
	const char *help;
	unsigned needs;	  /* enum format_need */
	unsigned moments; /* enum format_moment; 0: the whole run */
	/* text for people: what is said after it (the leak gate's verdict)
	 * goes below it on stdout, not on stderr */
	bool people;
	/* lists every call site unless --top says otherwise (else --top's
	 * default, 10) */
	bool all_sites;
	/* gpuspy report --format NAME, or gpuspy export --NAME ARG: 0,
	 * -ENOMEM or -EIO (the output failed), or an exit status, the
	 * reason said */
	int (*print)(const struct format_input *in);
	/* gpuspy merge --format NAME (NULL: not for merge): R's sites in
	 * ORDER, TOP of them (0: all) */
	int (*merge)(FILE *out, const struct rd_report *r, struct rd_report_site **order,
		     size_t top);
	/* gpuspy diff --format NAME (NULL: not for diff): as print.h's
	 * text_print_diff */
	int (*diff)(const struct diff *d, const struct diff_setting_row *set, size_t nset,
		    const struct diff_total *tot, size_t ntot, size_t top, FILE *out);
};

/* The format named NAME that command CMD ("report", "merge", "diff",
 * "export") has, or NULL. */
const struct format *format_find(const char *cmd, const char *name);
/* The format of CMD when none is asked for: the first of the table it
 * has (text). */
const struct format *format_default(const char *cmd);
/* Whether F can show the moment L asks for (--at, --peak): -1 to go on,
 * else the usage error said and EXIT_USAGE. */
int format_check(const char *cmd, const struct format *f, const struct cli_loaded *l);

/* Builds what L's format needs, then prints: 0, -errno of the output, or
 * an exit status with the reason said (what the printers return).  DEST:
 * the argument of an export's option, else NULL (stdout).  L stays the
 * caller's (cli_report_done). */
int format_print(struct cli_loaded *l, const char *dest);

/*
 * USAGE on OUT, with the formats put in where it says:
 *   "@names:CMD@"    the names of CMD's formats, "text|json|..."
 *   "@list:CMD@"     a line each, "                       NAME  HELP"
 *   "@options:CMD@"  export's: "--NAME ARG|--NAME ARG"
 *   "@help:CMD@"     export's: each option and its description, as the
 *                    option lines of a --help
 * 0, or -EIO when OUT fails.
 */
int format_usage(FILE *out, const char *usage);
/* The same into BUF (cut short to fit its SIZE bytes), for a message. */
void format_usage_string(char *buf, size_t size, const char *usage);

/* gpuspy export: the formats' options ({ NAME, required_argument, NULL,
 * FORMAT_OPTION + their index }) followed by OWN (ended by a zeroed
 * entry); the caller's to free; NULL on out-of-memory.  The format of a
 * value getopt_long returns: format_option. */
#define FORMAT_OPTION 0x1000
struct option *format_options(const char *cmd, const struct option *own);
const struct format *format_option(int c);

#endif
