/* SPDX-License-Identifier: MIT */
/*
 * The wrong-device fault of a data-parallel job (gpuspy-report(1), "WRONG
 * DEVICE"): a rank that holds memory on a device other than its own
 * (ranks.h: LOCAL_RANK's, else RANK mod the devices), a context made there
 * by a call before cuda.set_device, tensors put on "cuda" rather than
 * "cuda:LOCAL_RANK".  Every rank that does so costs that memory on one
 * device, usually device 0, which runs out first.
 *
 * What a process holds on each device it does not own: the allocations
 * gpuspy tracked there at the report's moment ("devices"), and the CUDA
 * context, what NVML's figure for the process on that device adds to
 * them (ranks_context_bytes; in a snapshot or a post-mortem, whose
 * "outside" view has NVML's, NVML's index taken as the ordinal as the
 * ledger does).  The sites that allocated it come from the process's live
 * allocations at exit (allocations.json, device and site of each); a
 * process read from a snapshot names none.  It prints nothing.
 */
#ifndef GPUSPY_READ_WRONG_DEVICE_H
#define GPUSPY_READ_WRONG_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "merge.h"
#include "model.h"

/* What one process holds on one device it does not own. */
struct rd_wrong_figure {
	int64_t device;
	int64_t allocations; /* tracked live bytes there; 0: none */
	int64_t context;     /* NVML's figure beyond them; 0: none or unknown */
	bool nvml;	     /* NVML's figure for the process there is known */
};

/* The device P owns (ranks_own_device over its recorded RANK, LOCAL_RANK
 * and "cuda.devices"), -1 for no verdict; with OUT, its figures for every
 * device it is on but does not own, by ordinal, those holding nothing
 * left out: how many, at most MAX written. */
int rd_wrong_own_device(const struct rd_process *p);
size_t rd_wrong_figures(const struct rd_process *p, struct rd_wrong_figure *out, size_t max);

/* A site that allocated what is held on the wrong device. */
struct rd_wrong_site {
	const struct rd_report_site *site; /* the report's merged site */
	int64_t line;			   /* its headline's line in this process; 0: unknown */
	int64_t bytes, allocations;
};

/* A finding: process PROC of the report holds BYTES on DEVICE. */
struct rd_wrong {
	size_t proc; /* index in the report's procs */
	int64_t rank, local_rank;
	int own;
	struct rd_wrong_figure fig;
	int64_t bytes; /* fig.allocations + fig.context */
	/* the live allocations at exit on DEVICE by site, most first; SITES_READ
	 * false when the process has none to read (a snapshot) */
	bool sites_read;
	bool sites_refused; /* an allocations.json there could not be read */
	struct rd_wrong_site *sites;
	size_t nsites;
	int64_t unsited_bytes; /* of those, at sites the report folded */
};

struct rd_wrong_list {
	struct rd_wrong *items; /* by process, then device */
	size_t n;
};

/* The findings of R into *OUT; 0 or -ENOMEM.  An allocations.json that
 * cannot be read leaves that finding without sites, said (rd_notice,
 * RD_NOTICE_LEFT_OUT). */
int rd_wrong_build(const struct rd_report *r, struct rd_wrong_list *out);
void rd_wrong_clear(struct rd_wrong_list *l);

/* The verdict's line, for people:
 *   rank 1 (LOCAL_RANK 1, its device 1) holds 512.0 MiB on device 0:
 *   context and allocations
 * (": allocations", ": context" when only one is there); the process by
 * merge_process_name when it has no LOCAL_RANK.  Into BUF; BUF. */
const char *rd_wrong_line(const struct rd_report *r, const struct rd_wrong *w, char *buf,
			  size_t size);

/* "context and allocations", "allocations" or "context". */
const char *rd_wrong_what(const struct rd_wrong *w);

/*
 * gpuspy merge's PER RANK (gpuspy-merge(1)): each process's GPU memory at
 * the report's moment on its own device, at call sites of the libraries
 * (NCCL, cuBLAS, ...: classify.h, on any device) and on devices not its
 * own; for a process with no own device (ranks.h: no verdict), OWN and
 * ELSEWHERE are -1 and it is left out of their spread.
 */
enum rd_rank_figure { RD_RANK_OWN, RD_RANK_LIBRARY, RD_RANK_ELSEWHERE, RD_RANK_FIGURES };
#define RD_RANK_OUTLIER_MIN (64LL << 20)
struct rd_rank_spread {
	int64_t min, median, max; /* over the processes that have the figure */
	ssize_t outlier;	  /* a process index; -1: none */
	size_t n;		  /* the processes that have it */
};
struct rd_ranks {
	bool present;		     /* some process has an own device */
	int *own;		     /* per process: its device, -1: none */
	int64_t *v[RD_RANK_FIGURES]; /* v[FIGURE][process]; -1: not for it */
	struct rd_rank_spread spread[RD_RANK_FIGURES];
};
/* The outlier of a figure: the process whose value is more than twice the
 * median of the others' and more than RD_RANK_OUTLIER_MIN above it (the
 * largest of those), so that of two ranks, one at 0 and one at 512 MiB
 * elsewhere, the second is named. */
int rd_ranks_build(const struct rd_report *r, struct rd_ranks *out);
void rd_ranks_clear(struct rd_ranks *k);
/* "on its device", "library", "elsewhere" */
const char *rd_rank_figure_name(enum rd_rank_figure f);

#endif
