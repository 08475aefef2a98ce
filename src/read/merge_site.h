/* SPDX-License-Identifier: MIT */
/*
 * A call site of a merged report (merge.h): what it holds and how people
 * read it, its key and its one name.  Below the report itself, so that
 * what works on sites alone (the out-of-memory verdict, the PyTorch view's
 * merge) needs nothing of the report.
 */
#ifndef GPUSPY_READ_MERGE_SITE_H
#define GPUSPY_READ_MERGE_SITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "classify.h"
#include "model.h"

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
/* The same of any frames (a PyTorch view's line, torch_merge.h). */
ssize_t merge_frames_headline(const struct rd_report_frame *frames, size_t n);

/* S's one name (docs/format.md, "name"): the report's name for it, set by
 * merge_build() for every site it makes, "(no stack)" for none. */
const char *merge_site_name(const struct rd_report_site *s);

/* FRAMES[0..N-1] as the naming rule takes them, into OUT[0..N-1]: they
 * point into FRAMES. */
struct sitename_frame;
void merge_frames_view(const struct rd_report_frame *frames, size_t n, struct sitename_frame *out);

#endif
