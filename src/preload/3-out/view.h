/* SPDX-License-Identifier: MIT */
/*
 * What one file describes: the process's figures and its sites, read once
 * so that the JSON, the text and the stderr lines of one moment agree,
 * with the events (out-of-memory, marks) so far.  Taken, and read, under
 * gs_events_lock.
 */
#ifndef GPUSPY_VIEW_H
#define GPUSPY_VIEW_H

#include "core.h"
#include "counters.h"
#include "names.h"
#include "oom.h"
#include "peak.h"
#include "sites.h"
#include "table.h"
#include "trace.h"

/* gpuspy_mark(): the last GS_MARKS marks are kept. */
#define GS_MARKS     64
#define GS_LABEL_MAX 128

/* A list of (site, live bytes) as the files show it: its largest entries,
 * most first, and the rest summed (view.c). */
struct gs_top {
	struct gs_peak_site *top;
	unsigned ntop;
	unsigned folded;       /* entries not in top */
	long long folded_live; /* their live bytes */
	bool taken;	       /* top computed */
};

struct gs_mark {
	double time;
	char label[GS_LABEL_MAX];
	long long live;		    /* GPU memory (device + managed + vmm) */
	struct gs_peak_site *sites; /* live > 0, any kind; NULL: none or no memory */
	unsigned n;
	struct gs_top shown; /* of sites: taken by the first file that shows the mark */
};

/* The sites of one kind that a file sums rather than lists. */
struct gs_folded {
	unsigned long long sites, growing;
	struct gs_count_snap c; /* summed; peak_bytes: the sum of their own peaks */
};

/*
 * The sites a file lists are bounded by GPUSPY_MAX_SITES (gs_config.max_sites,
 * 0: no bound), whatever the number of sites: the largest of each ranking a
 * reader looks for (live bytes, own peak, live at the process's peak, at
 * each mark, allocations, growing); the others are summed per kind in
 * folded[], so that every total still equals listed + folded.
 */
struct gs_view {
	struct gs_site **sites; /* those listed, sorted by live bytes */
	unsigned n;
	unsigned n_all;				/* sites in the process */
	struct gs_folded folded[GS_KIND_COUNT]; /* the others */
	unsigned long long n_folded;
	/* what was live at the peak, copied: at_peak's figures and its
	 * largest sites (all of them listed), the rest folded */
	bool has_peak;
	struct gs_peak_snap peak; /* peak.sites: the top only, peak.n of them */
	unsigned peak_folded;
	long long peak_folded_live;
	struct gs_count_snap kind[GS_KIND_COUNT];
	long long gpu_live, gpu_allocs, gpu_peak;
	char host[GS_HOST_SIZE];
	char dir[GS_PROCESS_PATH_SIZE]; /* <run dir>/<host>-<pid>, created */
	const struct gs_oom *event;	/* the out-of-memory this file is about */
	unsigned long long samples;	/* snapshot.json: the thread's samples so far */
	const char *label;		/* snapshot-N.json: what asked for it */
	unsigned number;		/* snapshot-N.json */
	/* The events so far (events.c). */
	const struct gs_oom *ooms; /* n_ooms of them */
	unsigned n_ooms, oom_dropped;
	struct gs_mark *marks; /* a ring of GS_MARKS; n_marks ever made */
	unsigned n_marks;
	/* At exit only (view_take_exit, for allocations.json): every live
	 * allocation of GPU memory, a VMM one by its mapping's address (0:
	 * not mapped), at most GS_LIVE_LISTED, the rest counted; and the
	 * trace's events (trace.h).  NULL: none, or not taken. */
	struct gs_live *live;
	size_t n_live;
	unsigned long long live_left_out, live_left_out_bytes;
	struct trace_event *trace;
	size_t n_trace;
	uint64_t trace_recorded;
	unsigned trace_capacity; /* 0: no trace (GPUSPY_TRACE off) */
	bool exit_taken;	 /* live and trace taken: allocations.json says them */
};

/* allocations.json's allocations listed at most (about 26 MB, written by
 * the exit): a process holding more lists the first found and counts
 * the others. */
#define GS_LIVE_LISTED (1u << 18)

/* The moment, under gs_events_lock: V's event, ooms and marks set by the
 * caller (events.c), the rest here.  0, or -errno with a line printed.
 * view_drop() after a success. */
int view_take(struct gs_view *v);
void view_drop(struct gs_view *v);
/* What only the exit says, into V (taken), for allocations.json: the
 * live allocations and the trace; without memory for them, a warning,
 * and no file (exit_taken false).  view_drop() frees them. */
void view_take_exit(struct gs_view *v);

#endif /* GPUSPY_VIEW_H */
