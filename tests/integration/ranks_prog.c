/* SPDX-License-Identifier: MIT */
/*
 * One rank of a data-parallel job, for tests/integration/ranks.py: it
 * takes its device from LOCAL_RANK, as a training script does
 * (cuda.set_device(LOCAL_RANK)), and holds OWN bytes there; with
 * "wrong DEVICE BYTES" it then also makes DEVICE current and holds BYTES
 * there, the fault of a rank that allocates on device 0 rather than its
 * own.  Both are held to exit.  It prints the pid and what it did; with
 * "hold" last, it then waits for the end of its standard input (a test
 * scraping its endpoint meanwhile).
 *
 * Usage: ranks_prog OWN [wrong DEVICE BYTES] [hold]
 */
#include <unistd.h>

#include "prog.h"

void hold_own(size_t size);
void hold_wrong(int device, size_t size);

static void *own, *wrong;

__attribute__((noinline)) void hold_own(size_t size)
{
	rt_ok(cudaMalloc(&own, size), "cudaMalloc"); /* LINE own */
}

__attribute__((noinline)) void hold_wrong(int device, size_t size)
{
	rt_ok(cudaSetDevice(device), "cudaSetDevice");
	rt_ok(cudaMalloc(&wrong, size), "cudaMalloc"); /* LINE wrong */
}

int main(int argc, char **argv)
{
	const char *lr = getenv("LOCAL_RANK");
	int dev = lr ? atoi(lr) : 0;

	rt_ok(cudaSetDevice(dev), "cudaSetDevice");
	hold_own(arg_size(argc, argv, 1));
	if (argc > 2 && strcmp(argv[2], "wrong") == 0)
		hold_wrong((int)arg_size(argc, argv, 3), arg_size(argc, argv, 4));
	printf("ranks_prog: pid %d, device %d\n", (int)getpid(), dev);
	fflush(stdout);
	if (strcmp(argv[argc - 1], "hold") == 0)
		while (getchar() != EOF)
			;
	return 0;
}
