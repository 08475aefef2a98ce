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
#include "peak.h"
#include "sites.h"
#include "table.h"
#include "trace.h"

/* The first GS_OOM_FILES out-of-memory events get a post-mortem file. */
#define GS_OOM_FILES 16
/* gpuspy_mark(): the last GS_MARKS marks are kept. */
#define GS_MARKS     64
#define GS_LABEL_MAX 128

/* Other processes on the failing device, as NVML lists them. */
#define GS_OOM_OTHERS 4
struct gs_oom_other {
	unsigned pid;
	long long used;
	char name[16]; /* /proc/PID/comm; "" when it cannot be read */
};

/* PyTorch's own figures when it raised OutOfMemoryError (torch_view.py's
 * observer, events_torch_oom), -1 unknown. */
struct gs_oom_torch {
	long long request, allocated, reserved, largest_free;
	/* JSON text, an object: its "lines" pinning its segments and its
	 * "holders" (docs/format.md); NULL: none */
	char *lines;
	char pinner[256]; /* the first of its lines by name, "" none */
	long long pinner_bytes;
	char holder[256]; /* the first of its holders by name, with its role */
	long long holder_bytes;
};

struct gs_oom {
	unsigned number; /* 1, 2, ... in the process; set by events_oom */
	double time;
	uint8_t api, kind;
	uint64_t requested;
	int device;
	long long live;			   /* GPU memory gpuspy tracked as live */
	long long free_bytes, total_bytes; /* the driver's view, -1 unknown */
	uint32_t site;			   /* the requesting call site's id */
	/* What the verdict is judged on (oom_facts.c, docs/format.md): */
	long long device_live; /* tracked on that device, -1: unknown device */
	long long limit;       /* GPUSPY_LIMIT, 0: none */
	bool capped;	       /* the limit refused it, not the device */
	/* where the tracked memory was, by the sites' frames (all devices) */
	const char *pool; /* a framework pool's label (frame_rules.h), NULL: none */
	long long pool_bytes;
	bool from_pool; /* the request was the pool's */
	const char *library;
	long long library_bytes, library_top;
	long long graph_bytes;
	/* NVML: other processes on that device; -1: unknown */
	long long others_bytes;
	unsigned n_others;
	struct gs_oom_other others[GS_OOM_OTHERS];
	/* the largest holder that is not a pool segment, by the process's
	 * name for it (summary_site_name), "" none */
	char holder[256];
	long long holder_bytes;
	bool holder_is_pool;
	struct gs_oom_torch *torch; /* NULL until PyTorch said (events.c owns it) */
};

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
