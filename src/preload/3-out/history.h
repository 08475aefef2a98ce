/* SPDX-License-Identifier: MIT */
/*
 * The process's history of live bytes, history.jsonl (gpuspy-history/1,
 * docs/format.md): the store (history.c) and what feeds it once per
 * interval (history_sample.c).
 */
#ifndef GPUSPY_HISTORY_H
#define GPUSPY_HISTORY_H

#include <stdbool.h>
#include <stdint.h>

/* The snapshot thread, once per interval after the sites were sampled:
 * one sample of every device, site and NVML's view of the process. */
void history_tick(void);

/* What a point on the history is. */
enum history_event {
	HISTORY_MARK,	  /* gpuspy_mark(LABEL) */
	HISTORY_SNAPSHOT, /* snapshot-N.json (LABEL, N) */
	HISTORY_OOM,	  /* oom-N.json, or the N-th out-of-memory event */
};
/* An event, now; called with gs_events_lock held.  Nothing before the
 * first allocation (there is no process directory yet). */
void history_event(enum history_event what, const char *label, unsigned n);

/*
 * The store, in the order the snapshot thread calls it; the unit tests
 * drive it with their own clock.  history_setup() names the file's
 * directory, the process's start (seconds since the epoch) and the
 * interval; until it is called history_tick() calls it with the
 * process's own.  A failure is one gs_warn() line, then the history is
 * off for the rest of the run.
 */
void history_setup(const char *dir, double start, double interval_s);
/* A sample at T seconds since the start ... */
void history_begin(double t);
/* ... live bytes of device ordinal DEVICE (-1: unknown) ... */
void history_device(int device, long long bytes);
/* ... of every call site (not pinned host memory), with its kind of
 * memory (a static name) and its peak ... */
void history_site(uint32_t id, const char *kind, long long live, long long peak);
/* ... what NVML says the process uses on its GPU INDEX ... */
void history_outside(unsigned index, long long bytes);
/* ... and the sample is done: its line appended, compacted when due.
 * Takes gs_events_lock. */
void history_end(void);
/*
 * The PyTorch view's part (torch_view.py, on the program's main thread,
 * through ctypes): each takes gs_events_lock, never allocates, and
 * returns 0 or -EINVAL (a value out of range: nothing is kept).  Line ID
 * (0 to 15) of the view, first: FRAMES, its stack as torch.json has it
 * (a JSON array of printable ASCII, under 2 KiB); kept from the first
 * call on.  Then, each sample of the view: NPOOL triples (device 0 to
 * 15, reserved, allocated bytes of PyTorch's pool), NLINES pairs (line
 * id, live bytes) and what the other lines hold.  The latest is part
 * of every sample history_end() takes until the next one.
 */
int history_torch_line(unsigned id, const char *frames);
int history_torch(const long long *pool, unsigned npool, const long long *lines, unsigned nlines,
		  long long other);
/* The PyTorch pool of the view's latest sample: up to MAX (device,
 * reserved, allocated) triples into OUT; how many.  Takes gs_events_lock. */
unsigned history_torch_pool(long long (*out)[3], unsigned max);
/* history_event() at T seconds since the start. */
void history_event_at(double t, enum history_event what, const char *label, unsigned n);
/* At exit, when the report needs the descriptor: the file is closed,
 * complete, and nothing more is appended.  Under gs_events_lock. */
void history_close(void);
/* The file closed and the store freed (tests). */
void history_reset(void);
/* Whether history_setup() was called; whether by this process (not by
 * the parent of a forked child, whose file it is not). */
bool history_is_set(void);
bool history_owned(void);

struct history_stats {
	unsigned long long samples;	/* history_end() calls */
	unsigned long long file_bytes;	/* of history.jsonl now */
	unsigned long long max_bytes;	/* the most it ever held */
	unsigned long long compactions; /* rewrites from memory */
	unsigned long long width;	/* samples per bucket now */
	unsigned series, buckets, recent;
	int off; /* 1 after a failure */
};
void history_get_stats(struct history_stats *out);

#endif /* GPUSPY_HISTORY_H */
