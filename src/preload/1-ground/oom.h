/* SPDX-License-Identifier: MIT */
/*
 * An out-of-memory event as gpuspy records it: filled by the recorder on
 * the failing thread (record_oom), judged and written by the stages above
 * (oom_facts.c, events.c).
 */
#ifndef GPUSPY_OOM_H
#define GPUSPY_OOM_H

#include <stdbool.h>
#include <stdint.h>

/* The first GS_OOM_FILES out-of-memory events get a post-mortem file. */
#define GS_OOM_FILES 16

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

/* E as the verdict rule of src/common/oom_rule.h takes it (the
 * environment read now): oom.c. */
struct oom_facts;
void oom_as_facts(const struct gs_oom *e, struct oom_facts *f);

#endif /* GPUSPY_OOM_H */
