/* SPDX-License-Identifier: MIT */
/*
 * graph.c: CUDA graph memory.  A memory-alloc node reserves an address
 * when it is made (its call site is taken then); its memory becomes live,
 * in the device kind and at that site, when an executable graph holding
 * the node is launched; a free node's launch, cudaFree/cuMemFree or an
 * auto-free relaunch frees it.  Handles are the driver's (the runtime's
 * cudaGraph_t and cudaGraphExec_t are the same pointers).
 */
#ifndef GPUSPY_GRAPH_H
#define GPUSPY_GRAPH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core.h"

/* A memory-alloc node was added to GRAPH (by cu/cudaGraphAddMemAllocNode,
 * or by an async allocation on a capturing stream). */
void graph_node_alloc(const void *graph, uint64_t dptr, uint64_t size, int device, enum gs_api api,
		      enum gs_door door);
/* A memory-free node of DPTR was added to GRAPH. */
void graph_node_free(const void *graph, uint64_t dptr);
void graph_instantiated(const void *graph, const void *exec, unsigned long long flags);
/* EXEC was launched (the real launch succeeded). */
void graph_launched(const void *exec);
void graph_destroyed(const void *handle);
void graph_trimmed(void);
/* A stream capture is beginning (any cuStreamBeginCapture*, before the
 * real call). */
void graph_capture_begins(void);
/* Is STREAM capturing, and into which graph?  False without asking once
 * no capture ever began in the process, else asks the real driver;
 * PER_THREAD: the call was a _ptsz one, where stream 0 is the per-thread
 * default stream. */
bool graph_capturing(const void *stream, bool per_thread, const void **graph);
/* Graph memory resident now (launched, not yet freed: counters.h). */
long long graph_resident_bytes(void);
/* The "graph" member of the process document, with its leading ",\n";
 * nothing when the process made no graph call. */
void graph_write(FILE *f);

#endif /* GPUSPY_GRAPH_H */
