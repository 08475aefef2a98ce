/* SPDX-License-Identifier: MIT */
/*
 * Writes a page of every family, for two processes with extra labels and
 * label values that need escaping, for `promtool check metrics`.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "prom.h"

int main(void)
{
	struct prom_site s0[] = {
		{ "00000000000000aa", "step (train.py:41)", GS_KIND_DEVICE, 4096, true },
		{ "00000000000000bb", "odd \"name\"\\\nline \xff", GS_KIND_MANAGED, 512, false },
		{ "00000000000000cc", "small (x.py:3)", GS_KIND_PINNED, 64, false },
	};
	struct prom_site s1[] = {
		{ "00000000000000aa", "step (train.py:41)", GS_KIND_DEVICE, 8192, false },
	};
	struct prom_device d[] = { { 0, 4608 }, { 1, 0 } };
	struct prom_nvml nv[] = { { 0, true, true, true, 1 << 20, 2 << 20, 80ULL << 30 } };
	struct prom_pool pool[] = { { 0, "pytorch", true, true, 8192, 4096 } };
	struct prom_label l0[] = { { "host", "n1" }, { "rank", "0" } };
	struct prom_label l1[] = { { "host", "n1" }, { "rank", "1" } };
	struct prom_process p[2];
	struct prom_process *procs[] = { &p[0], &p[1] };
	struct prom_buf b = { 0 };
	int i, k;

	memset(p, 0, sizeof(p));
	for (i = 0; i < 2; i++) {
		p[i].pid = 100 + i;
		p[i].host = "n1";
		p[i].rank = i ? "1" : "0";
		p[i].command = "python3 \"train.py\"";
		p[i].version = "0.1.0";
		p[i].labels = i ? l1 : l0;
		p[i].nlabels = 2;
		for (k = 0; k < GS_KIND_COUNT; k++)
			p[i].kinds[k] = (struct prom_kind_counts){ true, 10, 20, 3, 2, 30, 20 };
		p[i].has_gpu_peak = p[i].has_oom = p[i].has_growing = p[i].has_sample_time = true;
		p[i].gpu_peak = 60;
		p[i].has_limit = true;
		p[i].limit = 8ULL << 30;
		p[i].growing_sites = 1;
		p[i].sample_time = 1764600000.5;
		p[i].devices = d;
		p[i].ndevices = 2;
		p[i].nvml = nv;
		p[i].nnvml = 1;
		p[i].pools = pool;
		p[i].npools = 1;
	}
	p[0].sites = s0;
	p[0].nsites = 3;
	p[1].sites = s1;
	p[1].nsites = 1;
	p[1].folded_live[GS_KIND_DEVICE] = 100;
	p[1].folded_sites = 3;
	/* rank 1 owns device 1 and holds memory on device 0 */
	p[1].has_own_device = true;
	p[1].own_device = 1;
	if (prom_write(&b, procs, 2, 2) < 0)
		return 1;
	if (write(1, b.p, b.len) != (ssize_t)b.len)
		return 1;
	prom_buf_free(&b);
	return 0;
}
