/* SPDX-License-Identifier: MIT */
/*
 * For tests/integration/secure.py: a program that links libgpuspy.so and
 * the fake driver by absolute run paths (the loader honours those in a
 * set-user-ID program, unlike LD_PRELOAD and LD_LIBRARY_PATH), made
 * set-user-ID root by the test and run by another user: it says whether
 * it runs in secure-execution mode (AT_SECURE) and with gpuspy loaded,
 * then allocates and exits.
 */
#include <sys/auxv.h>

#include "prog.h"

int main(void)
{
	CUdeviceptr p;

	driver_context();
	cu_ok(cuMemAlloc_v2(&p, 1 << 20), "cuMemAlloc_v2");
	printf("secure=%lu gpuspy=%d\n", getauxval(AT_SECURE),
	       dlsym(RTLD_DEFAULT, "gpuspy_mark") != NULL);
	return 0;
}
