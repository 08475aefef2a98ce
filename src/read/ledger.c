/* SPDX-License-Identifier: MIT */
/*
 * The ledger (ledger.h): the frameworks' counters of the document
 * ("frameworks"), its devices' live bytes and NVML's figure for the
 * process, at the document's moment.
 */
#include <errno.h>
#include <stdlib.h>

#include "ledger.h"

#define LEDGER_MAX 64

/*
 * GRAPH POOL: what the CUDA graph memory pool of DEVICE holds beyond the
 * graph allocations in use, from the device's graph-memory attributes
 * ("graph.devices", cudaDevAttrGraphMemReservedCurrent less
 * UsedMemCurrent).  The memory in use is in gpuspy's tracked bytes
 * already (device memory at the sites that made the nodes); the rest of
 * the pool is seen by no allocation.  -1 (unknown) when the document has
 * no graph figures for DEVICE: the context line then includes any pool.
 */
static int64_t ledger_graph_pool(const struct rd_process *p, int64_t device)
{
	for (size_t i = 0; i < p->graph.ndevices; i++) {
		const struct rd_graph_device *d = &p->graph.devices[i];

		if (d->device == device)
			return d->reserved_current > d->used_current ?
				       d->reserved_current - d->used_current :
				       0;
	}
	return -1;
}

static void ledger_fill(const struct rd_process *p, int64_t device, struct rd_ledger *l)
{
	const struct rd_frameworks *f = &p->frameworks;
	int64_t known;

	*l = (struct rd_ledger){ .device = device,
				 .fw_allocated = -1,
				 .fw_reserved = -1,
				 .pool_slack = -1,
				 .outside_pools = -1,
				 .untracked = -1,
				 .fw_age_s = -1 };
	for (size_t i = 0; i < p->ndevices; i++)
		if (p->devices[i].device == device)
			l->tracked = p->devices[i].live_bytes;
	for (int fw = 0; f->present && device < GS_FW_DEVICES && fw < GS_FW_COUNT; fw++) {
		const bool *has = f->has[fw][device];
		const int64_t *v = f->v[fw][device];
		struct rd_ledger_fw *x;

		if (!has[GS_FWC_ALLOCATED])
			continue;
		x = &l->fw[l->nfw++];
		x->fw = fw;
		x->allocated = v[GS_FWC_ALLOCATED];
		/* a pool that says nothing of its reserve: no slack known */
		x->reserved = has[GS_FWC_RESERVED] ? v[GS_FWC_RESERVED] : -1;
		l->fw_allocated = (l->fw_allocated < 0 ? 0 : l->fw_allocated) + x->allocated;
		l->fw_reserved = (l->fw_reserved < 0 ? 0 : l->fw_reserved) +
				 (x->reserved >= x->allocated ? x->reserved : x->allocated);
	}
	if (l->nfw) {
		l->pool_slack = l->fw_reserved - l->fw_allocated;
		l->outside_pools = l->tracked > l->fw_reserved ? l->tracked - l->fw_reserved : 0;
		l->untracked = l->fw_reserved > l->tracked ? l->fw_reserved - l->tracked : 0;
		if (p->end_time >= 0 && f->time > 0)
			l->fw_age_s = p->end_time - f->time;
	}
	l->graph_pool = ledger_graph_pool(p, device);
	l->nvml = rd_process_nvml(p, device);
	if (l->nvml >= 0) {
		known = l->nfw ? l->fw_reserved + l->outside_pools : l->tracked;
		l->context = l->nvml - known - (l->graph_pool > 0 ? l->graph_pool : 0);
	} else {
		l->context = -1;
	}
}

int rd_ledger(const struct rd_process *p, struct rd_ledger **out, size_t *n)
{
	int64_t devs[LEDGER_MAX];
	size_t nd = 0, k = 0;
	bool any = p->frameworks.present;

	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < p->outside.ngpus && !any; i++)
		any = rd_process_nvml(p, p->outside.gpus[i].index) >= 0;
	if (!any)
		return 0;
	for (size_t i = 0; i < p->ndevices; i++)
		rd_device_set_add(devs, &nd, LEDGER_MAX, p->devices[i].device);
	for (int d = 0; p->frameworks.present && d < GS_FW_DEVICES; d++)
		for (int fw = 0; fw < GS_FW_COUNT; fw++)
			if (p->frameworks.has[fw][d][GS_FWC_ALLOCATED])
				rd_device_set_add(devs, &nd, LEDGER_MAX, d);
	for (size_t i = 0; i < p->outside.ngpus; i++)
		if (rd_process_nvml(p, p->outside.gpus[i].index) >= 0)
			rd_device_set_add(devs, &nd, LEDGER_MAX, p->outside.gpus[i].index);
	if (!nd)
		return 0;
	*out = calloc(nd, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	for (size_t i = 0; i < nd; i++)
		ledger_fill(p, devs[i], &(*out)[k++]);
	*n = k;
	return 0;
}
