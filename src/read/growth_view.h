/* SPDX-License-Identifier: MIT */
/*
 * Growth read back: for each merged site of a report, its series of live
 * bytes in each process (history.jsonl), and for a site flagged growing,
 * the verdict its process recorded - growing or grew then stopped, rate,
 * since when, shape, latest rise (sites[].growth) - or, for a file that
 * recorded none (gpuspy before 0.4), what the growth rule of src/common
 * (trend.h) finds when its series is replayed through it.  The rule is not
 * reimplemented here: the reader only feeds it.
 *
 * Replaying: samples and buckets in file order, which is the order of
 * time; a sample counts with its value, a bucket with its min at its t1.
 * The rule judges the floor of live bytes, and a bucket's min is its
 * floor over the intervals it merged: a cycle within one bucket cannot
 * raise it, a step held through the bucket does, as it did for the
 * writer that saw every sample.  A bucket's last is one phase of a cycle
 * picked by where the merge fell, which could invent or hide a rise.
 */
#ifndef GPUSPY_READ_GROWTH_VIEW_H
#define GPUSPY_READ_GROWTH_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "load_history.h"
#include "merge.h"

/* A sample or bucket of one site's series (a sample: min == max == last). */
struct rd_growth_row {
	double t0, t1; /* seconds since the process's start */
	int64_t min, max, last;
};

/* The series of one merged site in one process: the sum of the history
 * series of every site of that process that went into it. */
struct rd_site_series {
	const struct rd_report_site *site;
	struct rd_growth_row *rows;
	size_t nrows;
};

/* A flagged merged site's verdict (growing, or grew then stopped): the one
 * its process recorded (sites[].growth), else - a file of gpuspy before
 * 0.4 - its history replayed; of several processes, a growing one's before
 * a stopped one's, then the fastest. */
struct rd_growth {
	const struct rd_report_site *site;
	size_t proc;		    /* index into report.procs */
	bool taken;		    /* some process gave it */
	bool recorded;		    /* the process's own verdict, not a replay */
	bool fired;		    /* found growing (always, when recorded) */
	int state;		    /* enum trend_state */
	double since_s;		    /* seconds since the process's start */
	double rate_bps;	    /* bytes per second */
	double until_s;		    /* the latest rise: when it stopped */
	int shape;		    /* enum trend_shape */
	int by, fw, place;	    /* recorded: enum rd_verdict_by, and which counter */
	struct rd_growth_row *rows; /* that process's series, NULL when none */
	size_t nrows;
};

struct rd_growth_view {
	struct rd_growth *sites; /* sorted by site address */
	size_t nsites;
	bool history; /* some process had history.jsonl */
};

/* The series of every merged site of R that has one in H, the history of
 * process P of R; *OUT is the caller's (growth_series_free).  -ENOMEM. */
int growth_process_series(const struct rd_report *r, size_t p, const struct rd_history *h,
			  struct rd_site_series **out, size_t *nout);
void growth_series_free(struct rd_site_series *s, size_t n);

/* For each site of R flagged once (growing, or grew then stopped), the
 * verdict its processes recorded, and its series from the history of
 * every process of R (H[i] for R->procs[i]; one without history.jsonl
 * adds nothing), replayed through the rule where no verdict was recorded. */
int growth_view_build(const struct rd_report *r, const struct rd_history *h,
		      struct rd_growth_view *v);
/* The same, loading each process's history.jsonl first: -EINVAL (ERR
 * names the file) when one is refused, -errno, -ENOMEM.  With no history
 * anywhere V stays empty. */
int growth_view_load(const struct rd_report *r, struct rd_growth_view *v, struct rd_error *err);
void growth_view_clear(struct rd_growth_view *v);

/* S's figures in V, or NULL. */
const struct rd_growth *growth_view_find(const struct rd_growth_view *v,
					 const struct rd_report_site *s);

/* The growth rate of S (a site of R, or NULL) in bytes per second for a
 * comparison (gpuspy diff): the recorded verdict's rate when S is growing
 * (else the rule's on its replayed history); 0 when S grew, then stopped,
 * or is there and not growing and R has a history; else unknown.  Returns
 * whether it is known. */
bool growth_rate_of(const struct rd_report *r, const struct rd_report_site *s, double *rate);

/* How a series is cut to fewer points. */
enum growth_pick {
	GROWTH_PICK_MAX,  /* the highest in the span: a peak never disappears */
	GROWTH_PICK_LAST, /* the latest: what a refresh would have read then */
};

/* ROWS cut into at most NCOL spans of equal time from the first row's t1
 * to the last's, each span the value PICK of its rows at the time of its
 * last (T, V; T may be NULL); a span without rows repeats the one before.
 * Fewer rows than NCOL: one point each.  Returns the points written. */
size_t growth_columns(const struct rd_growth_row *rows, size_t n, size_t ncol,
		      enum growth_pick pick, double *t, int64_t *v);

#endif
