/* SPDX-License-Identifier: MIT */
/*
 * The live memory of a report by call stack, at one moment: at exit (or,
 * for a process that did not exit, at the moment of the file read: its
 * last snapshot or post-mortem), at each process's peak ("at_peak"), or
 * at the last mark of a label in each process ("marks").  What the
 * exports that draw stacks (pprof, collapsed stacks, a flame graph) share;
 * it prints nothing.
 *
 * Only GPU memory counts (device, managed, vmm): what "at_peak" and a
 * report's totals count.  Pinned host memory is left out.
 */
#ifndef GPUSPY_READ_STACKS_H
#define GPUSPY_READ_STACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "merge.h"

enum stacks_state {
	STACKS_EXIT,
	STACKS_PEAK,
	STACKS_MARK,
};

/* One site of one process at the moment. */
struct rd_stack_sample {
	size_t proc;			   /* index into report.procs */
	const struct rd_report_site *site; /* the merged site it went into */
	/* the line of the site's headline in this process (0: unknown):
	 * the line that a merged site of several lines has not */
	int64_t line;
	/* The device ordinal of the process's GPU memory when all of it lies
	 * on one device, else -1 (several, or unknown): a site does not say
	 * which device it allocated on. */
	int64_t device;
	int64_t live_bytes;
	int64_t live_objects; /* -1: unknown (the peak and marks keep bytes only) */
	/* made over the process's life, up to the file read, whatever STATE */
	int64_t alloc_bytes;
	int64_t allocations;
};

struct rd_stacks {
	enum stacks_state state;
	const char *label;		 /* STACKS_MARK: the mark's label */
	double time;			 /* the latest moment of a process that counts, -1: none */
	size_t processes;		 /* that have the moment (a peak copy, the mark) */
	int64_t live_bytes;		 /* the samples' sum */
	int64_t live_objects;		 /* -1: unknown */
	struct rd_stack_sample *samples; /* by process, then site of the process */
	size_t n;
};

/* The moment STATE (LABEL for STACKS_MARK) of every process of R.  Every
 * site that has live memory then, or that made allocations (for the
 * alloc_* figures), is a sample.  -EINVAL (ERR names the first process's
 * file) when STATE is STACKS_MARK and no process has the label, or
 * STACKS_PEAK and none has a copy of its peak; -ENOMEM. */
int stacks_build(const struct rd_report *r, enum stacks_state state, const char *label,
		 struct rd_stacks *out, struct rd_error *err);
void stacks_clear(struct rd_stacks *s);

/* The frames of S to draw, innermost first, into OUT (room for
 * S->nframes): all of them, or with FOLD those that are not noise
 * (classify.h) — all of them when every frame is noise.  Returns how many. */
size_t stacks_frames(const struct rd_report_site *s, bool fold, const struct rd_report_frame **out);

/* What each of R's sites (by number - 1) held in ST, summed over its
 * processes, into *OUT (R->nsites values, the caller's to free); and the
 * order of the sites by it, most first, ties as the report orders them,
 * those that held nothing left out, into *ORDER (*NORDER of them).
 * -ENOMEM. */
int stacks_by_site(const struct rd_report *r, const struct rd_stacks *st, int64_t **out,
		   const struct rd_report_site ***order, size_t *norder);

/* "exit", "peak", or "mark"; for people: "at exit", "at the peak", ... */
const char *stacks_state_name(enum stacks_state state);

#endif
