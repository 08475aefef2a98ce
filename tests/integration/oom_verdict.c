/* SPDX-License-Identifier: MIT */
/*
 * An allocation that fails for lack of memory, for the verdicts of
 * tests/integration/oom_verdict.py: holds HOLD bytes from hold_memory(),
 * asks ASK more from ask_more(), both through cudaMalloc; when that fails
 * it frees what it held and asks again, as a program that catches the
 * error goes on.  Prints what each call returned.
 * Usage: oom_verdict HOLD ASK
 */
#include "prog.h"

void hold_memory(size_t size, void **p);
cudaError_t ask_more(size_t size, void **p);

__attribute__((noinline)) void hold_memory(size_t size, void **p)
{
	rt_ok(cudaMalloc(p, size), "cudaMalloc");
}

__attribute__((noinline)) cudaError_t ask_more(size_t size, void **p)
{
	return cudaMalloc(p, size);
}

int main(int argc, char **argv)
{
	size_t hold = arg_size(argc, argv, 1), ask = arg_size(argc, argv, 2);
	void *held, *more;
	cudaError_t e;

	hold_memory(hold, &held);
	e = ask_more(ask, &more);
	printf("oom_verdict: ask -> %d (%s)\n", (int)e, cudaGetErrorString(e));
	if (e == cudaSuccess)
		return 0;
	rt_ok(cudaFree(held), "cudaFree");
	e = ask_more(ask, &more);
	printf("oom_verdict: asked again after freeing -> %d\n", (int)e);
	return e == cudaSuccess ? 0 : PROG_FAIL;
}
