/* SPDX-License-Identifier: MIT */
/* doors.c: memory seen outside that no door saw (doors.h) */
#include <string.h>

#include "doors.h"

void rd_doors_gap(const struct rd_process *p, struct rd_doors_gap *g)
{
	memset(g, 0, sizeof(*g));
	if (p->graph.present) {
		g->graph = true;
		g->graph_tracked_bytes = p->graph.live_bytes;
		for (size_t i = 0; i < p->graph.ndevices; i++) {
			const struct rd_graph_device *d = &p->graph.devices[i];

			g->graph_driver_bytes += d->used_current;
			g->pool_slack += d->reserved_current - d->used_current;
		}
		g->graph_gap = g->graph_driver_bytes > g->graph_tracked_bytes;
	}
	for (size_t i = 0; i < p->outside.ngpus; i++) {
		const struct rd_outside_gpu *o = &p->outside.gpus[i];

		for (size_t k = 0; k < o->nprocs; k++) {
			if (o->procs[k].pid != p->pid)
				continue;
			g->nvml = true;
			g->nvml_bytes += o->procs[k].used_bytes;
			g->ngpus++;
		}
	}
	if (!g->nvml)
		return;
	g->tracked_bytes = p->leaked_bytes;
	g->allowance = RD_DOORS_ALLOWANCE_PER_GPU * g->ngpus;
	g->nvml_gap = g->nvml_bytes > g->tracked_bytes + g->pool_slack + g->allowance;
}
