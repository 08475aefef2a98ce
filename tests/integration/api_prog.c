/* SPDX-License-Identifier: MIT */
/*
 * The public API (include/gpuspy.h) from a program linked with
 * libgpuspy_stub.so: the stub answers without gpuspy, the preloaded
 * library with it.  For tests/integration/ondemand.py.
 */
#include "gpuspy.h"
#include "prog.h"

int main(void)
{
	void *p, *q;

	rt_ok(cudaMalloc(&p, 3 << 20), "cudaMalloc");
	printf("mark %d\n", gpuspy_mark("epoch 1"));
	printf("snapshot %d\n", gpuspy_snapshot("after epoch 1"));
	/* epoch 2 holds 1 MiB from another line, and no longer the 3 MiB */
	rt_ok(cudaMalloc(&q, 1 << 20), "cudaMalloc");
	rt_ok(cudaFree(p), "cudaFree");
	gpuspy_mark("epoch 2");
	return 0;
}
