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

/* The first GS_OOM_FILES out-of-memory events get a post-mortem file. */
#define GS_OOM_FILES 16
/* gpuspy_mark(): the last GS_MARKS marks are kept. */
#define GS_MARKS     64
#define GS_LABEL_MAX 128

struct gs_oom {
	unsigned number; /* 1, 2, ... in the process; set by events_oom */
	double time;
	uint8_t api, kind;
	uint64_t requested;
	int device;
	long long live;			   /* GPU memory gpuspy tracked as live */
	long long free_bytes, total_bytes; /* the driver's view, -1 unknown */
	uint32_t site;			   /* the requesting call site's id */
};

struct gs_mark {
	double time;
	char label[GS_LABEL_MAX];
	long long live;		    /* GPU memory (device + managed + vmm) */
	struct gs_peak_site *sites; /* live > 0, any kind; NULL: none or no memory */
	unsigned n;
};

struct gs_view {
	struct gs_site **sites; /* sorted by live bytes */
	unsigned n;
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
	const struct gs_mark *marks; /* a ring of GS_MARKS; n_marks ever made */
	unsigned n_marks;
};

/* 0, or -errno with a line printed.  view_drop() after a success. */
int view_take(struct gs_view *v, const struct gs_oom *event);
void view_drop(struct gs_view *v);

#endif /* GPUSPY_VIEW_H */
