/* SPDX-License-Identifier: MIT */
/*
 * For tests/cli/test_layout.py: step() calls cudaMalloc at two lines, one
 * that keeps its allocation (LINE leak) and one that frees it at once
 * (LINE temp): one call site, two lines.  Then two sites tied on leaked
 * and peak bytes, tie_z_big() allocating twice what tie_a_small() does,
 * from one line.
 * Usage: two_lines STEPS SIZE
 */
#include "prog.h"

void step(size_t bytes);
void tie_a_small(size_t bytes);
void tie_z_big(size_t bytes);

__attribute__((noinline)) void step(size_t bytes)
{
	void *keep, *tmp;

	rt_ok(cudaMalloc(&keep, bytes), "cudaMalloc"); /* LINE leak */
	rt_ok(cudaMalloc(&tmp, bytes), "cudaMalloc");  /* LINE temp */
	rt_ok(cudaFree(tmp), "cudaFree");
}

__attribute__((noinline)) void tie_a_small(size_t bytes)
{
	void *p;

	rt_ok(cudaMalloc(&p, bytes), "cudaMalloc");
}

__attribute__((noinline)) void tie_z_big(size_t bytes)
{
	void *p;

	/* one line, so one site: the first block freed, the second kept */
	for (int i = 0; i < 2; i++) {
		rt_ok(cudaMalloc(&p, bytes), "cudaMalloc");
		if (i == 0)
			rt_ok(cudaFree(p), "cudaFree");
	}
}

int main(int argc, char **argv)
{
	int steps = (int)arg_size(argc, argv, 1);
	size_t bytes = arg_size(argc, argv, 2);

	for (int i = 0; i < steps; i++)
		step(bytes);
	tie_a_small(bytes);
	tie_z_big(bytes);
	printf("done\n");
	return 0;
}
