/* SPDX-License-Identifier: MIT */
/*
 * Allocates SIZE (so that gpuspy starts and installs its GPUSPY_SIGNAL
 * handler), says "ready", then: "sleep" waits up to 30 s for a signal to
 * end it; "segv" stores through a null pointer, and must die of SIGSEGV
 * rather than fault for ever under a handler.
 * Usage: signal_prog SIZE sleep|segv
 */
#include <unistd.h>

#include "prog.h"

void leak_signal(size_t size);

__attribute__((noinline)) void leak_signal(size_t size)
{
	CUdeviceptr p;

	cu_ok(cuMemAlloc_v2(&p, size), "cuMemAlloc_v2");
}

/* The null store is the point: no sanitizer may turn it into a report. */
__attribute__((no_sanitize("undefined"))) int main(int argc, char **argv)
{
	driver_context();
	leak_signal(arg_size(argc, argv, 1));
	printf("ready\n");
	fflush(stdout);
	if (argc > 2 && strcmp(argv[2], "segv") == 0) {
		volatile int *null = NULL;

		*null = 1;
		return PROG_FAIL;
	}
	/* a signal gpuspy handles interrupts sleep(): sleep on */
	for (unsigned left = 30; left;)
		left = sleep(left);
	return 0;
}
