/* SPDX-License-Identifier: MIT */
/*
 * The printers of gpuspy(1), one file per output format: text.c for
 * people, json.c for programs (docs/format.md).  Each takes a model of
 * gpuspy_read (src/read) and writes it; a new format is a new file here.
 * Functions that write return 0, -ENOMEM or -EIO.
 */
#ifndef GPUSPY_CLI_PRINT_H
#define GPUSPY_CLI_PRINT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "diff.h"
#include "merge.h"
#include "stacks.h"
#include "timeline.h"

struct json_t;
struct rd_growth;
struct rd_history;

/* The sections of the text report, in the order it prints them; what
 * gpuspy report --sections names (text_sections_parse). */
enum text_section {
	TEXT_SUMMARY,
	TEXT_OOM,
	TEXT_WRONG_DEVICE,
	TEXT_GROWTH,
	TEXT_TORCH,
	TEXT_PROCESSES,
	TEXT_LEAKS,
	TEXT_PINNED,
	TEXT_PEAK,
	TEXT_ALLOCATIONS,
	TEXT_SITES,
	TEXT_TOTALS,
	TEXT_NEXT,
	TEXT_SECTIONS,
};
#define TEXT_ALL_SECTIONS ((1u << TEXT_SECTIONS) - 1)

/* LIST, comma-separated section names ("leaks,peak"), as a set of
 * 1 << enum text_section; -EINVAL names the first unknown in *BAD. */
int text_sections_parse(const char *list, unsigned *out, const char **bad, size_t *badlen);
/* "summary, oom, ...": the names, for the usage text. */
extern const char text_section_names[];

struct text_report_opts {
	size_t top;	   /* sites per list; 0: all */
	unsigned sections; /* 1 << enum text_section each */
	/* the PATHs given, for the commands the report suggests */
	char *const *paths;
	size_t npaths;
};

/* gpuspy report: R, merged from LIST (whose process directories without
 * any report are listed too), the sections of O. */
int text_print_report(const struct rd_report *r, const struct rd_process_list *list, FILE *out,
		      const struct text_report_opts *o);
int json_print_report(const struct rd_report *r, const struct rd_process_list *list, FILE *out,
		      size_t top);
/* The object json_print_report writes; NULL on out-of-memory. */
struct json_t *json_report_object(const struct rd_report *r, const struct rd_process_list *list,
				  size_t top);

/* gpuspy report --format csv: the history H[P] of each of R's processes
 * P (those without one print nothing). */
int csv_print_history(const struct rd_report *r, const struct rd_history *h, FILE *out);

/* gpuspy report --format pprof, collapsed: the stacks ST of R at one
 * moment, as gzip'ed profile.proto (pprof.c) or folded stacks
 * (collapsed.c); --format perfetto: R's timeline TL as Chrome trace-event
 * JSON (perfetto.c).  Each builds all of its output before writing any. */
int pprof_print(const struct rd_report *r, const struct rd_stacks *st, FILE *out);
int collapsed_print(const struct rd_report *r, const struct rd_stacks *st, FILE *out);
int perfetto_print(const struct rd_report *r, const struct rd_timeline *tl, FILE *out);
/* --format html: one self-contained page of R (LIST: as for the JSON
 * report) with its timeline TL; the stacks shown first are those of the
 * mark AT, or of the peak (PEAK), else at exit; TOP sites stacked in the
 * timeline (0: all).  html.c. */
int html_print(const struct rd_report *r, const struct rd_process_list *list,
	       const struct rd_timeline *tl, const char *at, bool peak, size_t top, FILE *out);

/* gpuspy export --tensorboard (tensorboard.c): the history H of process P
 * of R as the records of one TensorBoard event file, in OUT->buf.  The
 * step of a scalar is whole seconds since the process's start, or the
 * number of marks before it; TOP sites have a tag of their own (0: all). */
enum tb_step { TB_STEP_TIME, TB_STEP_MARK };
struct tb_events {
	uint8_t *buf; /* the caller's to free */
	size_t len, cap;
	size_t nsteps, ntags; /* records of scalars; tags */
	int64_t marks;	      /* in the history */
};
int tensorboard_build(const struct rd_report *r, size_t p, const struct rd_history *h,
		      enum tb_step mode, size_t top, struct tb_events *out);
/* R's processes with a history (H[P], one per process) each as its event
 * file under LOGDIR, made when missing; STEP and TOP as above.  Every
 * file is built before any is created: 0, or an exit status with the
 * reason said, nothing of this export left behind; the files written
 * are said on stdout, one line each. */
int tensorboard_export(const struct rd_report *r, const struct rd_history *h, const char *logdir,
		       enum tb_step step, size_t top);
/* "events.out.tfevents.START.HOST.PID.gpuspy", HOST with '_' for anything
 * a file name should not hold. */
void tensorboard_file_name(const struct rd_process *p, const struct rd_history *h, char *buf,
			   size_t size);
/* The directory of process P's file under the log directory, a run of
 * TensorBoard's: "rank-R", or "HOST-PID" without a rank; WITH_HOST:
 * "rank-R-HOST-PID", for two processes of one rank. */
void tensorboard_run_name(const struct rd_process *p, bool with_host, char *buf, size_t size);

/* gpuspy export --memory-viz FILE (memviz.c): R's one process at exit,
 * its allocations and trace LIVE (allocations.json), as a snapshot of
 * PyTorch's memory viewer, a pickle written to FILE whole; what it holds
 * and what was left out said on stdout.  0, or an exit status with the
 * reason said, or -ENOMEM. */
struct rd_live;
int memviz_export(const struct rd_report *r, const struct rd_live *live, const char *file);

/* gpuspy merge: R's sites in ORDER (merge_by_spread); TOP as above. */
int text_print_merge(FILE *out, const struct rd_report *r, struct rd_report_site **order,
		     size_t top);
int json_print_merge(FILE *out, const struct rd_report *r, struct rd_report_site **order,
		     size_t top);

/* gpuspy diff: D matched (diff_match, diff_match_torch), with its
 * settings and device totals; text lists TOP sites (0: all) that changed
 * by at least D->threshold. */
int text_print_diff(const struct diff *d, const struct diff_setting_row *set, size_t nset,
		    const struct diff_total *tot, size_t ntot, size_t top, FILE *out);
int json_print_diff(const struct diff *d, const struct diff_setting_row *set, size_t nset,
		    const struct diff_total *tot, size_t ntot, FILE *out);

/* "function (module) file:line" and a newline, as the text report prints
 * a frame. */
void text_print_frame(FILE *out, const struct rd_report_frame *f);
/* The frame as a list's row names a site, "function (file:line)" (the module
 * when there is no file), without a newline: the user's line. */
void text_print_short_frame(FILE *out, const struct rd_report_frame *f);

/* "min A, median B, max C", then "; outlier: NAME (V)" when there is one
 * (V: its value in VALUES, indexed like R->procs); no newline. */
void text_print_spread(FILE *out, const struct rd_report *r, enum rd_report_metric metric,
		       const struct rd_report_spread *sp, const int64_t *values);

/* Sparklines of a growing site's history: columns, and JSON points. */
#define TEXT_SPARK_WIDTH   24
#define JSON_GROWTH_POINTS 64

/* V[0..N-1] as N blocks from the lowest to the highest of them: U+2581 to
 * U+2588 when the locale's character set is UTF-8, else "_.-=#". */
void text_print_sparkline(FILE *out, const int64_t *v, size_t n);
/* "+40.0 MiB/min since 12 s (staircase)", no newline. */
void text_print_growth_rate(FILE *out, const struct rd_growth *g);

/* The PyTorch view: the lines of the summary, and its own section. */
void text_print_torch_summary(FILE *out, const struct rd_report *r);
void text_print_torch(FILE *out, const struct rd_report *r, size_t top);

/* R's processes that could not be read (R->unreadable), said near the top
 * of a text output: a line that counts them (after WHO, "" or "OLD: "),
 * then one per process, PATH: REASON.  Nothing when there are none. */
void text_print_unreadable(FILE *out, const struct rd_report *r, const char *who);
/* The same as the JSON outputs list them ("unreadable", docs/format.md):
 * [{"path", "reason"}]; NULL on out-of-memory. */
struct json_t *json_unreadable_array(const struct rd_report *r);

/* A frame as "gpuspy-report/1" writes it; NULL on out-of-memory. */
struct json_t *json_frame_object(const struct rd_report_frame *f);

/* {"min", "median", "max", "outlier"} ("outlier" absent when none); NULL
 * on out-of-memory. */
struct json_t *json_spread_object(const struct rd_report_spread *sp);
/* {"leaked": SPREAD, "peak": SPREAD, "allocations": SPREAD} */
struct json_t *json_spreads_object(const struct rd_report_spread *sp);

/* "torch" of gpuspy-report/1; NULL when no process has the view. */
struct json_t *json_torch_object(const struct rd_report_torch *t, size_t top);

/* gpuspy commits: the runs in their order, the top sites, and the order
 * they were put in ("given", "time", "commit"). */
struct lineup_run;
struct lineup_site;
struct commits_view {
	const struct lineup_run *runs;
	size_t nruns;
	const struct lineup_site *top;
	size_t ntop;
	const char *order;
};
/* A run's label: its commit's first 12 characters, else "-". */
const char *commits_label(const struct lineup_run *r, char *buf, size_t size);
int text_print_commits(const struct commits_view *v, FILE *out);
/* A row per run: run, commit, commit_from, run_id, path, start_time,
 * processes, leaked_bytes, pool_bytes, peak_bytes, then a column per top
 * site ("peak_bytes: NAME"), empty where the run lacks it. */
int csv_print_commits(const struct commits_view *v, FILE *out);
/* One page that loads nothing, the charts drawn with the vendored uPlot
 * (commits_html.c; data "gpuspy-commits/1", docs/format.md). */
int html_print_commits(const struct commits_view *v, FILE *out);
/* A page of NPARTS PARTS (a generated assets header's html_parts) with
 * its SLOTS filled between them: "data" by DATA (JSON, '<', '>' and '&'
 * escaped; freed here), any other by ASSET(name); written to OUT whole or
 * not at all: 0 or -errno.  html.c. */
int html_write_page(FILE *out, const char *const *parts, const char *const *slots, size_t nparts,
		    const char *(*asset)(const char *name), char *data);

#endif
