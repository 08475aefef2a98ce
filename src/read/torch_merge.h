/* SPDX-License-Identifier: MIT */
#ifndef GPUSPY_READ_TORCH_MERGE_H
#define GPUSPY_READ_TORCH_MERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "classify.h"
#include "model.h"

/* The PyTorch view of the processes that have one, merged. */
struct rd_report_tsite {
	char *key;			/* "file-basename!function:line;..." innermost first */
	char *name;			/* its one name among the view's lines (sitename_names) */
	struct rd_report_frame *frames; /* Python frames, innermost first */
	size_t nframes;
	int64_t processes;
	int64_t live_bytes, live_blocks, peak_bytes;
	bool growing; /* growing in any process */
	bool stopped; /* grew, then stopped: flagged in some, growing in none */
	/* the verdict recorded for it: a growing process's before a stopped
	 * one's, then the fastest (absent from older torch.json) */
	struct rd_verdict growth;
	/* named from gpuspy's record of the segments holding its blocks
	 * (torch.json's "source": "segment"), never merged with PyTorch's
	 * own stacks of the same frames; segment_site: the site's id in the
	 * first process that has it */
	bool from_segment;
	int64_t segment_site;
	size_t last_process; /* merge bookkeeping: 1 + index of the last one counted */
};
struct rd_report_torch {
	bool present;
	bool final; /* every process's view was sampled at its exit */
	size_t processes;
	int64_t reserved_bytes, allocated_bytes; /* the pools, summed */
	int64_t live_bytes, live_blocks;
	struct rd_report_tsite **sites; /* by live bytes, then peak, descending */
	size_t nsites;
};

/* Merge the views of PROCS[0..N-1] that have one into T. */
int torch_merge_build(struct rd_report_torch *t, struct rd_process *const *procs, size_t n);
void torch_merge_clear(struct rd_report_torch *t);
/* The frame to look at first (sitename_headline): the innermost of the
 * user's code; -1 when the blocks were allocated before the view started
 * (no frames: PyTorch recorded none and gpuspy saw no segment, or its
 * record of the segment has no Python frames). */
ssize_t torch_merge_headline(const struct rd_report_tsite *s);

#endif
