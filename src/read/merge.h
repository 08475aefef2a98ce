/* SPDX-License-Identifier: MIT */
/* The processes of a report merged by call site (docs/format.md). */
#ifndef GPUSPY_READ_MERGE_H
#define GPUSPY_READ_MERGE_H

#include <sys/types.h>

#include "classify.h"
#include "merge_site.h"
#include "model.h"
#include "oom_verdict.h"
#include "pools.h"
#include "symbolize.h"
#include "torch_merge.h"

struct rd_growth_view;
struct rd_wrong_list;
struct rd_ranks;

struct rd_report {
	struct rd_process **procs; /* borrowed from the process list */
	size_t nprocs;
	size_t incomplete;
	size_t partial; /* processes read from an oom-N.json or a snapshot */
	int64_t leaked_bytes;
	int64_t leaked_allocations;
	int64_t peak_bytes;
	int64_t pinned_leaked_bytes;
	int64_t pinned_leaked_allocations;
	int64_t pinned_peak_bytes;
	int64_t untracked_frees;
	/* of leaked_bytes, what the framework pools' segments hold (sites with
	 * a pool): per pool, in classify_pool_label's order, and in all; the
	 * rest is what the program's own code left */
	int64_t pool_bytes[GS_POOL_COUNT];
	int64_t pool_held_bytes, pool_held_allocations;
	/* the sites the processes summed rather than listed ("folded"): how
	 * many, and their live GPU memory (device, managed and VMM) */
	int64_t folded_sites, folded_live_bytes, folded_live_allocations;
	/* "at_peak" summed over the processes that have one */
	bool at_peak; /* whether any process has one */
	int64_t at_peak_bytes;
	struct rd_peak_device *at_peak_devices; /* by device ordinal */
	size_t at_peak_ndevices;
	struct rd_report_site **sites; /* sorted: leaked_bytes, peak_bytes desc */
	size_t nsites;
	struct rd_report_oom *ooms; /* every process's, by time */
	size_t nooms;
	int64_t oom_dropped;
	/* each process's own totals, totals[METRIC][process index]: its
	 * leaked and peak bytes, its allocations of every kind; and their
	 * spread */
	int64_t *totals[REPORT_METRICS];
	struct rd_report_spread spread[REPORT_METRICS];
	bool several_hosts; /* the processes are not all on one host */
	struct rd_report_torch torch;
	/* site_of[P][I]: the merged site that process P's sites[I] went into;
	 * line_of[P][I]: the line of its headline there (0: unknown), which
	 * the merged site's headline may not have when it has several */
	struct rd_report_site ***site_of;
	int64_t **line_of;
	/* the processes of the paths that could not be read, borrowed from
	 * the process list (model.h), for the printers to say so */
	const struct rd_unreadable *unreadable;
	size_t nunreadable;
	/* Growth read from the processes' history.jsonl (growth_view.h),
	 * set by whoever loaded it and owned by them; NULL: not loaded. */
	const struct rd_growth_view *growth;
	/* report --at LABEL, --peak: what was live at that moment (stacks.h),
	 * set and owned as GROWTH is; NULL: no moment asked for */
	const struct rd_stacks *moment;
	/* the ranks that hold memory on a device not their own
	 * (wrong_device.h), set and owned as GROWTH is; NULL: not judged */
	const struct rd_wrong_list *wrong;
	/* each rank's memory on its device, the libraries' and elsewhere
	 * (wrong_device.h), set and owned as GROWTH is; NULL: not built */
	const struct rd_ranks *ranks;
	/* key -> site, open addressing */
	struct rd_report_site **table;
	size_t table_size;
};

/* Symbolize and merge every process of LIST (S may be NULL: no
 * symbolization, only the processes' own symbols).  -EOVERFLOW names the
 * file whose counters no longer fit in 64 bits. */
int merge_build(struct rd_report *r, const struct rd_process_list *list, struct symbolizer *s,
		struct rd_error *err);
void merge_clear(struct rd_report *r);

/* The spread of VALUES[0..N-1], one per process, of METRIC: min, median
 * (of an even count, the mean of the two middle values, rounded down), max,
 * and the outlier (docs/format.md, "spread"): with at least 3 values, the
 * one farthest from the median (the first of those tied), when it lies at
 * least 1 MiB (2 allocations) and at least half the median away from it.
 * -ENOMEM only. */
int merge_spread(const int64_t *values, size_t n, enum rd_report_metric metric,
		 struct rd_report_spread *out);

/* The same for site S of R (one of R->sites) over all R->nprocs processes. */
int merge_site_spread(const struct rd_report *r, const struct rd_report_site *s,
		      enum rd_report_metric metric, struct rd_report_spread *out);

/* "leaked", "peak", "allocations": the JSON names. */
const char *merge_metric_name(enum rd_report_metric metric);

/* A value of METRIC for people: "1.5 MiB", or a count; BUF of 32 bytes. */
const char *merge_metric_value(enum rd_report_metric metric, int64_t v, char *buf, size_t size);

/* Room for merge_process_name: "rank N on " and a host name. */
#define REPORT_NAME_SIZE 320

/* Process I of R for people: "rank N" (its RANK, else LOCAL_RANK), else
 * "pid N"; then " on HOST" when the processes are on several hosts.
 * Control characters are replaced by '?'. */
const char *merge_process_name(const struct rd_report *r, size_t i, char *buf, size_t size);

/* How far apart the processes lie on METRIC for S: its spread's max - min. */
int64_t merge_spread_width(const struct rd_report_site *s, enum rd_report_metric m);

/* R's sites ordered for gpuspy merge: by how far apart the processes lie
 * (the spread's max - min of leaked, then peak bytes), most first.  *OUT
 * is the caller's to free, also on -ENOMEM (then NULL). */
int merge_by_spread(const struct rd_report *r, struct rd_report_site ***out);

#endif
