/* SPDX-License-Identifier: MIT */
/* The processes of a report merged by call site (docs/format.md). */
#ifndef GPUSPY_READ_MERGE_H
#define GPUSPY_READ_MERGE_H

#include <sys/types.h>

#include "classify.h"
#include "pools.h"
#include "model.h"
#include "oom_verdict.h"
#include "symbolize.h"
#include "torch_merge.h"

/* What a merged site, or a process, is measured by when processes are
 * put side by side (docs/format.md, "spread"). */
enum rd_report_metric {
	REPORT_LEAKED,	    /* bytes live at exit (at the moment of the file read) */
	REPORT_PEAK,	    /* peak bytes */
	REPORT_ALLOCATIONS, /* allocations made */
	REPORT_METRICS,
};

/* The spread of one metric over every process of a report: a process
 * without the site counts as 0. */
struct rd_growth_view;

struct rd_report_spread {
	int64_t min, median, max;
	ssize_t outlier; /* index into report.procs; -1: none */
};

/* One source line of a merged site: the calls made at its headline's
 * FILE:LINE (docs/format.md, "lines"), with their own counters. */
struct rd_report_line {
	char *file; /* NULL when unknown */
	int64_t line;
	struct rd_counters c;
	int64_t at_peak_bytes;
	bool growing; /* a call of this line is growing in some process */
};

struct rd_report_site {
	char *key; /* the key text; merge_key_digest() is what reports print */
	/* its one name (sitename_names() over the report's sites): what
	 * every printer calls it by */
	char *name;
	enum gs_kind kind;
	char *api;
	const char *library; /* static label, NULL for user code */
	const char *pool;    /* static label, NULL when not a pool segment */
	bool growing;	     /* growing in any process */
	bool flagged;	     /* found growing once in some process */
	bool stopped;	     /* grew, then stopped: flagged, growing in none */
	int64_t processes;
	struct rd_counters c;
	/* live at each process's peak (its "at_peak" copy), summed; 0 when none */
	int64_t at_peak_bytes;
	struct rd_report_frame *frames;
	size_t nframes;
	/* Of a site merged from calls at more than one line of its headline's
	 * function: each line, in order of file and line; none otherwise. */
	struct rd_report_line *lines;
	size_t nlines;
	size_t number;	     /* of report.sites: 1 + its index there; else 0 */
	size_t last_process; /* merge bookkeeping: 1 + index of the last process counted */
	/* Of a site of report.sites only (NULL elsewhere): what each process
	 * contributed, per_proc[METRIC][process index], 0 for a process
	 * without the site; and the spread of each metric over them. */
	int64_t *per_proc[REPORT_METRICS];
	struct rd_report_spread spread[REPORT_METRICS];
};

/* How many of the sites live at an out-of-memory event a report shows. */
#define REPORT_OOM_TOP 5

/* An out-of-memory event, with what the reports say of its moment. */
struct rd_report_oom {
	const struct rd_process *proc; /* the process whose report holds it */
	size_t proc_index;	       /* in report.procs */
	const struct rd_oom *ev;
	int64_t untracked_bytes; /* total - free - live, >= 0; -1: unknown */
	/* The site that made the request, symbolized (key, kind, api, frames,
	 * library, pool; its counters are those of the report it comes from);
	 * NULL when the report is not at hand. */
	struct rd_report_site *requested;
	/* The sites (merged by key) with most live bytes of the event's kind
	 * of memory (pinned host memory for a pinned request, else device,
	 * managed and VMM) in the event's oom-N.json, most first; none when
	 * that file was not read. */
	struct rd_report_site **top;
	size_t ntop;
	/* why it failed (oom_verdict.h), decided once the sites are named */
	struct rd_oom_verdict verdict;
};

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

/* The key of a site: api, then per frame that is not noise
 * "module!function" or "module+0xOFFSET" (native), "file-basename!function"
 * (Python).  Exposed for the tests. */
char *merge_site_key(const char *api, const struct rd_report_frame *frames, size_t nframes);

/* The short key reports print: 16 lower-case hex digits of the 64-bit
 * FNV-1a hash of KEY (the key text above); BUF of MERGE_DIGEST_SIZE. */
#define MERGE_DIGEST_SIZE 17
const char *merge_key_digest(const char *key, char *buf, size_t size);

/* The index of the frame a person should look at first (docs/format.md,
 * "headline"; sitename_headline), or -1 when the site has no frames. */
ssize_t merge_site_headline(const struct rd_report_site *s);

/* S's one name (docs/format.md, "name"): the report's name for it, set by
 * merge_build() for every site it makes, "(no stack)" for none. */
const char *merge_site_name(const struct rd_report_site *s);

/* FRAMES[0..N-1] as the naming rule takes them, into OUT[0..N-1]: they
 * point into FRAMES. */
struct sitename_frame;
void merge_frames_view(const struct rd_report_frame *frames, size_t n, struct sitename_frame *out);

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
