/* SPDX-License-Identifier: MIT */
/*
 * Is the unwinder loaded once CUDA has started, before the first
 * allocation?  Run under gpuspy with GPUSPY_UNWIND=backtrace: glibc's
 * backtrace() loads libgcc_s on first use, so libgcc_s being mapped after
 * cudaFree(NULL) means gpuspy warmed it there rather than in the first
 * cudaMalloc.  Exits 0 if so, 1 if not.
 */
#include <link.h>

#include "prog.h"

static int find_libgcc(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	return info->dlpi_name && strstr(info->dlpi_name, "libgcc_s") != NULL;
}

int main(void)
{
	void *p;
	int loaded;

	rt_ok(cudaFree(NULL), "cudaFree(NULL)");
	loaded = dl_iterate_phdr(find_libgcc, NULL);
	rt_ok(cudaMalloc(&p, 4096), "cudaMalloc");
	rt_ok(cudaFree(p), "cudaFree");
	printf("warm_probe: unwinder %sloaded when CUDA started\n", loaded ? "" : "not ");
	return loaded ? 0 : 1;
}
