/* SPDX-License-Identifier: MIT */
/*
 * The ledger of a process, per device (gpuspy-report(1), "THE LEDGER"): what
 * the frameworks say they allocated and reserved, what gpuspy tracked,
 * what NVML says the process holds, and the differences between them,
 * which add up:
 *
 *   framework allocated + pool slack                    = framework reserved
 *   framework reserved + tracked outside the pools
 *     + graph pool + CUDA context and libraries         = NVML for the process
 *
 * where "tracked outside the pools" is what gpuspy tracked beyond the
 * frameworks' reserved bytes (0 when it tracked less: the difference is
 * then "untracked", framework memory no door saw), and the context line
 * is what remains of NVML's figure.
 */
#ifndef GPUSPY_READ_LEDGER_H
#define GPUSPY_READ_LEDGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

/* One framework's figures on one device; -1: not said. */
struct rd_ledger_fw {
	int fw; /* enum gs_fw */
	int64_t allocated, reserved;
};

/* Every figure in bytes; -1 where unknown. */
struct rd_ledger {
	int64_t device; /* CUDA ordinal (NVML's index taken as the ordinal) */
	struct rd_ledger_fw fw[GS_FW_COUNT];
	size_t nfw;
	int64_t fw_allocated, fw_reserved; /* over the frameworks; -1: none */
	int64_t pool_slack;		   /* fw_reserved - fw_allocated */
	int64_t tracked;		   /* gpuspy's live bytes on the device */
	int64_t outside_pools;		   /* tracked - fw_reserved, 0 or more */
	int64_t untracked;		   /* fw_reserved - tracked, 0 or more */
	int64_t graph_pool;		   /* the CUDA graph pool's (see ledger.c) */
	int64_t nvml;			   /* NVML's figure for the process */
	int64_t context;		   /* NVML's less the lines above it; may be < 0 */
	double fw_age_s;		   /* the document's moment - the frameworks'; -1 */
};

/* P's ledger, one entry per device its files name (its memory, the
 * frameworks' devices, NVML's GPUs that list it), by ordinal; none when
 * P has neither framework figures nor an NVML figure for itself.  *OUT
 * is malloc'd (free it); 0 or -ENOMEM. */
int rd_ledger(const struct rd_process *p, struct rd_ledger **out, size_t *n);

#endif /* GPUSPY_READ_LEDGER_H */
