/* SPDX-License-Identifier: MIT */
/*
 * The difference of two runs, call site by call site (gpuspy diff).  Both
 * sides are loaded and merged exactly as `gpuspy report` does, each with
 * its own symbolizer (the two builds may sit at one path with different
 * build-ids), and their sites are matched on the stable key, never on
 * addresses.
 *
 * The figures compared are, per site, the live bytes at exit (leaked),
 * the site's own peak and its allocation count; with an AT label, the live
 * bytes at the last mark of that label instead, so that two runs are
 * compared at the same phase rather than at their different ends.
 */
#ifndef GPUSPY_READ_DIFF_H
#define GPUSPY_READ_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "growth_view.h"
#include "merge.h"
#include "model.h"

/* How a site (or a line of the PyTorch view) fares from OLD to NEW. */
enum diff_status { DIFF_SAME, DIFF_CHANGED, DIFF_NEW, DIFF_VANISHED };

/* One run: its paths, processes, merged report and, with --at, what each
 * merged site held at the mark. */
struct at_entry;

struct diff_side {
	const char *name; /* "OLD", "NEW" */
	char **paths;
	size_t npaths;
	struct rd_process_list list;
	struct symbolizer *sym;
	struct rd_report rep;
	bool built;
	struct at_entry *at; /* --at: by site address */
	int64_t at_total;
	size_t marked;		      /* processes that carry the mark */
	struct rd_growth_view growth; /* from history.jsonl; rep.growth points here */
};

struct diff_row {
	const char *key;
	const struct rd_report_site *site[2]; /* OLD, NEW; NULL when absent */
	int64_t at[2];
	enum diff_status status;
	int64_t d_leaked, d_peak, d_allocs, d_at;
	int64_t size; /* how much it changed, for sorting and the threshold */
	int64_t grew; /* what --fail-on-growth judges: the larger of the two */
	bool failed;  /* it grew by more than fail_limit */
	/* --budget: the first rule matching NEW's name (NULL: none, or the
	 * site is not in NEW), the peak it bounds (the most the site held in
	 * any one process of NEW), and whether that is over it */
	const struct budget_rule *budget;
	int64_t budget_peak;
	bool over_budget;
};

/* A line of the PyTorch views (torch.json) on both sides, matched on file
 * basenames and functions: lines move between two commits. */
struct diff_trow {
	char *key;
	const struct rd_report_tsite *site[2]; /* the largest of the key; NULL: absent */
	int64_t live[2], peak[2];
	enum diff_status status;
	bool failed; /* its live bytes grew by more than fail_limit */
};

struct diff {
	struct diff_side side[2];
	const char *at_label;
	int64_t threshold;
	int64_t fail_limit; /* -1: no --fail-on-growth */
	struct diff_row *rows;
	size_t nrows;
	struct diff_trow *trows;
	size_t ntrows;
	bool torch;			  /* either side has a PyTorch view */
	size_t failed;			  /* sites or lines that grew by more than fail_limit */
	size_t over_budget;		  /* sites over their budget (diff_budget) */
	const struct budget_file *budget; /* diff_budget's, borrowed; NULL: none */
};

/* One setting's value on one side: the same in every process, absent
 * from all of them, or several. */
struct diff_setting {
	char *value;	 /* NULL: absent everywhere */
	size_t distinct; /* values seen, absent not counted */
};

struct diff_setting_row {
	char *name;
	struct diff_setting v[2];
	bool differs;
};

struct diff_total {
	const char *name;
	int64_t device; /* -2: all devices */
	int64_t v[2];
};

/* "same", "changed", "new", "vanished": the JSON names. */
const char *diff_status_name(enum diff_status status);

/* Saturating: the difference of two counts that each fit in 63 bits, and
 * its size. */
int64_t diff_sub_sat(int64_t a, int64_t b);
int64_t diff_abs_sat(int64_t x);

/* Add PATH (borrowed) to side S; -ENOMEM. */
int diff_add_path(struct diff_side *s, char *path);
/* Load, symbolize and merge every path of S; with AT_LABEL, what each
 * merged site held at the last mark of that label (-EINVAL, naming the
 * labels there are, when no process has one).  Processes that cannot be
 * read are left out (S->list.unreadable); when no other is left, 0 with
 * nothing built. */
int diff_side_load(struct diff_side *s, const char *at_label, struct rd_error *err);
void diff_side_clear(struct diff_side *s);

/* The rows of D: the sites of both loaded sides matched on their keys (a
 * merged report holds each key once), with their deltas and status,
 * ordered by how much they changed (most first, then by key).  A site
 * whose growth (leaked or peak; with an AT label, at the mark) exceeds
 * D->fail_limit (when >= 0) counts in D->failed. */
int diff_match(struct diff *d);
/* The same for the PyTorch views (D->trows), matched on file basenames
 * and functions without lines: lines move between two commits. */
int diff_match_torch(struct diff *d);
/* Each row's budget under B (rows of a site in NEW): D->over_budget
 * counts the sites whose peak in NEW is over their rule's bytes (exactly
 * the budget passes).  After diff_match. */
struct budget_file;
void diff_budget(struct diff *d, const struct budget_file *b);
/* Free D's rows and both sides. */
void diff_clear(struct diff *d);

/* The site a row stands for: NEW's, else OLD's. */
const struct rd_report_site *diff_row_site(const struct diff_row *w);

/* What each run was, side by side: command, versions, GPUs, Python, stack
 * depth, then every environment variable either side recorded, sorted. */
int diff_settings(const struct diff *d, struct diff_setting_row **out, size_t *nout);
void diff_settings_free(struct diff_setting_row *rows, size_t n);

/* What every device held at exit and at the peak, on both sides, by
 * device ordinal ("live at exit" before "at peak"); free() *OUT. */
int diff_totals(const struct diff *d, struct diff_total **out, size_t *nout);

#endif
