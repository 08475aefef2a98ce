/* SPDX-License-Identifier: MIT */
/*
 * One rank of a data-parallel job, for tests/integration/ranks.py: it
 * takes its device from LOCAL_RANK, as a training script does
 * (cuda.set_device(LOCAL_RANK)), holds OWN bytes there and NCCL bytes
 * through a library named as NCCL is (nccl_fake.c, a communicator's
 * buffers); with
 * "wrong DEVICE BYTES" it then also makes DEVICE current and holds BYTES
 * there, the fault of a rank that allocates on device 0 rather than its
 * own.  Both are held to exit.  It prints the pid and what it did; with
 * "hold" last, it then waits for the end of its standard input (a test
 * scraping its endpoint meanwhile).
 *
 * Usage: ranks_prog OWN NCCL [wrong DEVICE BYTES] [hold]
 */
#include <unistd.h>

#include "prog.h"

int nccl_fake_init(size_t size);
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
	rt_ok((cudaError_t)nccl_fake_init(arg_size(argc, argv, 2)), "nccl_fake_init");
	if (argc > 3 && strcmp(argv[3], "wrong") == 0)
		hold_wrong((int)arg_size(argc, argv, 4), arg_size(argc, argv, 5));
	printf("ranks_prog: pid %d, device %d\n", (int)getpid(), dev);
	fflush(stdout);
	if (strcmp(argv[argc - 1], "hold") == 0)
		while (getchar() != EOF)
			;
	return 0;
}
