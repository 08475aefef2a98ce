/* SPDX-License-Identifier: MIT */
/*
 * doors.c: did memory reach the GPU through a door gpuspy does not hook?
 * Two outside views say so: what NVML attributes to the process (in a
 * snapshot or post-mortem) against what gpuspy tracked, and what the
 * driver says CUDA graphs use against the graph memory gpuspy saw.
 */
#ifndef GPUSPY_READ_DOORS_H
#define GPUSPY_READ_DOORS_H

#include <stdbool.h>
#include <stdint.h>

#include "model.h"

/* What each GPU the process is on may hold beyond what any door saw: the
 * CUDA context, the libraries' kernels and their own device data (about
 * 0.5 GiB on an H200 with cuBLAS and cuDNN loaded). */
#define RD_DOORS_ALLOWANCE_PER_GPU (1LL << 30)

struct rd_doors_gap {
	/* NVML: present when the report has an outside view of this pid */
	bool nvml;
	int64_t nvml_bytes;    /* NVML's figure for the process, over its GPUs */
	int64_t tracked_bytes; /* live GPU memory gpuspy tracked at that moment */
	int64_t pool_slack;    /* graph pool reserved beyond its use (the driver's) */
	int64_t allowance;     /* RD_DOORS_ALLOWANCE_PER_GPU per GPU it is on */
	int ngpus;
	bool nvml_gap; /* nvml_bytes > tracked_bytes + pool_slack + allowance */
	/* the driver's graph-memory attributes: present with a "graph" */
	bool graph;
	int64_t graph_driver_bytes; /* used now, over the devices */
	int64_t graph_tracked_bytes;
	bool graph_gap; /* the driver's figure beyond gpuspy's */
};

/* P's figures; no allocation, no printing. */
void rd_doors_gap(const struct rd_process *p, struct rd_doors_gap *g);

#endif /* GPUSPY_READ_DOORS_H */
