/* SPDX-License-Identifier: MIT */
/*
 * The fakes export every entry point gpuspy wraps (src/common/
 * cuda_entries.h), so that the tests can reach each one through its
 * doors: every driver row is a symbol of the fake libcuda.so.1 and a
 * name its cuGetProcAddress_v2 answers, with that symbol's address;
 * every runtime row a symbol of the fake libcudart.so.13, in its
 * libcudart.so.13 version node, as NVIDIA's.  One line per miss; the
 * exit status is the number of misses (capped), 0 when there is none.
 * Usage: exports LIBCUDA LIBCUDART
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "cuda_abi.h"

#define NAME(name, ...) #name,
static const char *const driver_rows[] = { GS_CUDA_DRIVER_ENTRIES(NAME) };
static const char *const runtime_rows[] = { GS_CUDA_RUNTIME_ENTRIES(NAME) };
#undef NAME

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

int main(int argc, char **argv)
{
	CUresult (*get_proc)(const char *, void **, int, cuuint64_t,
			     CUdriverProcAddressQueryResult *);
	void *cuda, *cudart, *sym;
	unsigned misses = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: exports LIBCUDA LIBCUDART\n");
		return 2;
	}
	cuda = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	cudart = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
	if (!cuda || !cudart) {
		fprintf(stderr, "exports: %s\n", dlerror());
		return 2;
	}
	sym = dlsym(cuda, "cuGetProcAddress_v2");
	if (!sym) {
		fprintf(stderr, "exports: %s has no cuGetProcAddress_v2\n", argv[1]);
		return 2;
	}
	memcpy(&get_proc, &sym, sizeof(sym));
	for (size_t i = 0; i < COUNT(driver_rows); i++) {
		CUdriverProcAddressQueryResult status;
		void *p = dlsym(cuda, driver_rows[i]), *q = NULL;

		if (!p) {
			printf("missing: %s in %s\n", driver_rows[i], argv[1]);
			misses++;
			continue;
		}
		/* At the lowest version each name is its own row, whatever
		 * newer rows answer for it. */
		if (get_proc(driver_rows[i], &q, 0, 0, &status) != CUDA_SUCCESS || q != p) {
			printf("missing: %s in the cuGetProcAddress_v2 of %s\n", driver_rows[i],
			       argv[1]);
			misses++;
		}
	}
	for (size_t i = 0; i < COUNT(runtime_rows); i++) {
		if (!dlvsym(cudart, runtime_rows[i], "libcudart.so.13")) {
			printf("missing: %s@libcudart.so.13 in %s\n", runtime_rows[i], argv[2]);
			misses++;
		}
	}
	printf("exports: %zu driver and %zu runtime entry points, %u missing\n", COUNT(driver_rows),
	       COUNT(runtime_rows), misses);
	return misses > 100 ? 100 : (int)misses;
}
