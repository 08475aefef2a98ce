/* SPDX-License-Identifier: MIT */
/*
 * Each process of a report over time: counter tracks of live bytes (per
 * device, per call site with a series, the rest, what NVML saw, the
 * PyTorch pool) and the moments on them (marks, on-demand snapshots,
 * out-of-memory events, the peak).  Read from history.jsonl where there is
 * one; without it, the few moments the report itself keeps (the peak copy,
 * the file's own moment).  What the exports that draw time (Perfetto, a
 * timeline page) share; it prints nothing.
 */
#ifndef GPUSPY_READ_TIMELINE_H
#define GPUSPY_READ_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "load_history.h"
#include "merge.h"

/* A value at a time, seconds since the epoch.  A bucket of the history
 * (several intervals merged) gives its max at its end: a peak never
 * disappears from a track. */
struct rd_tl_point {
	double t;
	int64_t v;
};

struct rd_tl_track {
	/* RD_HIST_DEVICE (key: device ordinal, -1 unknown), _SITE (site),
	 * _OTHER, _OUTSIDE (key: NVML index), _POOL_RESERVED and
	 * _POOL_ALLOCATED (key: device ordinal) */
	enum rd_hist_kind kind;
	int64_t key;
	const struct rd_report_site *site; /* RD_HIST_SITE: the merged site */
	struct rd_tl_point *points;	   /* by time */
	size_t n;
};

enum rd_tl_event_kind {
	RD_TL_MARK,	/* label, bytes: GPU memory live then */
	RD_TL_SNAPSHOT, /* number: snapshot-N.json; label (may be NULL) */
	RD_TL_OOM,	/* number; label: the api; bytes: requested */
	RD_TL_PEAK,	/* bytes: the peak copy's total */
};

struct rd_tl_event {
	double t;
	enum rd_tl_event_kind kind;
	int64_t number;
	const char *label; /* borrowed from the report or history; NULL: none */
	int64_t bytes;
	int64_t device; /* RD_TL_OOM: the device, -1 unknown */
};

struct rd_tl_process {
	bool history; /* read from history.jsonl */
	struct rd_tl_track *tracks;
	size_t ntracks;
	struct rd_tl_event *events; /* by time */
	size_t nevents;
};

struct rd_timeline {
	struct rd_tl_process *procs; /* as report.procs */
	size_t nprocs;
	double start;		 /* the earliest time of any point or event; 0 when none */
	struct rd_history *hist; /* owned: the labels of snapshot events live here */
};

/* The timeline of every process of R, loading each one's history.jsonl
 * first: -EINVAL (ERR names the file) when one is refused, -errno,
 * -ENOMEM. */
int timeline_load(const struct rd_report *r, struct rd_timeline *tl, struct rd_error *err);
void timeline_clear(struct rd_timeline *tl);

#endif
