/* SPDX-License-Identifier: MIT */
/*
 * For bench/alloc-callgrind: N cudaMalloc/cudaFree pairs, each from a call
 * stack of its own, so that each pair makes a new call site.  alloc_one()
 * holds the pair (callgrind counts it, with what it calls); walk()
 * recurses LEVELS deep, branching eight ways on three bits of the pair's
 * number, one call instruction per branch (built unoptimized, so that no
 * two branches are merged).
 *   new_sites N
 */
#include <stdio.h>
#include <stdlib.h>

#include "cuda_abi.h"

#define LEVELS 6 /* 8^6 = 262,144 distinct stacks */

void alloc_one(void);
void walk(unsigned level, unsigned long code);

__attribute__((noinline)) void alloc_one(void)
{
	void *p;

	if (cudaMalloc(&p, 4096) != cudaSuccess || cudaFree(p) != cudaSuccess) {
		fprintf(stderr, "new_sites: CUDA call failed\n");
		exit(1);
	}
}

__attribute__((noinline)) void walk(unsigned level, unsigned long code)
{
	if (level == 0) {
		alloc_one();
		return;
	}
	switch ((code >> (3 * (level - 1))) & 7) {
	case 0:
		walk(level - 1, code);
		break;
	case 1:
		walk(level - 1, code);
		break;
	case 2:
		walk(level - 1, code);
		break;
	case 3:
		walk(level - 1, code);
		break;
	case 4:
		walk(level - 1, code);
		break;
	case 5:
		walk(level - 1, code);
		break;
	case 6:
		walk(level - 1, code);
		break;
	default:
		walk(level - 1, code);
		break;
	}
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000;

	if (n < 1 || n > (1ul << (3 * LEVELS))) {
		fprintf(stderr, "usage: new_sites N (1 to %lu)\n", 1ul << (3 * LEVELS));
		return 2;
	}
	if (cudaFree(NULL) != cudaSuccess)
		return 1;
	for (unsigned long i = 0; i < n; i++)
		walk(LEVELS, i);
	return 0;
}
