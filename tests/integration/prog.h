/* SPDX-License-Identifier: MIT */
/*
 * Helpers for the integration programs.  Each program leaks what its
 * command line says from named, exported, non-inlined functions, so that
 * every expected figure is written once, in meson.build.  Anything that
 * goes wrong where a test expects success exits PROG_FAIL, which no test
 * expects.
 */
#ifndef GPUSPY_TEST_PROG_H
#define GPUSPY_TEST_PROG_H

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_abi.h"

#define PROG_FAIL 99

static inline size_t arg_size(int argc, char **argv, int i)
{
	char *end;
	unsigned long long v;

	if (i >= argc) {
		fprintf(stderr, "%s: missing argument %d\n", argv[0], i);
		exit(PROG_FAIL);
	}
	v = strtoull(argv[i], &end, 0);
	if (*end || !*argv[i]) {
		fprintf(stderr, "%s: bad number '%s'\n", argv[0], argv[i]);
		exit(PROG_FAIL);
	}
	return (size_t)v;
}

static inline void cu_ok(CUresult r, const char *what)
{
	if (r != CUDA_SUCCESS) {
		fprintf(stderr, "%s failed: %d\n", what, (int)r);
		exit(PROG_FAIL);
	}
}

static inline void rt_ok(cudaError_t e, const char *what)
{
	if (e != cudaSuccess) {
		fprintf(stderr, "%s failed: %d\n", what, (int)e);
		exit(PROG_FAIL);
	}
}

static inline void *open_driver(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		fprintf(stderr, "dlopen libcuda.so.1: %s\n", dlerror());
		exit(PROG_FAIL);
	}
	return h;
}

/*
 * dlsym into a function pointer of any type: `slot` is its address.
 * memcpy because ISO C has no conversion from void * to a function pointer.
 */
static inline void load_sym(void *handle, const char *name, void *slot)
{
	void *p = dlsym(handle, name);

	if (!p) {
		fprintf(stderr, "dlsym %s: %s\n", name, dlerror());
		exit(PROG_FAIL);
	}
	memcpy(slot, &p, sizeof(p));
}

/*
 * For programs linked with the driver: what a driver-API program does
 * before it may allocate.  Only emitted where used, so the others need no
 * libcuda.
 */
static inline void driver_context(void)
{
	CUdevice dev;
	CUcontext ctx;

	cu_ok(cuInit(0), "cuInit");
	cu_ok(cuDeviceGet(&dev, 0), "cuDeviceGet");
	cu_ok(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
	cu_ok(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
}

/*
 * The same steps for programs that reach the driver only through pointers
 * they looked up (dlsym, cuGetProcAddress): each fills these slots its own
 * way, then calls make_current().
 */
struct ctx_fns {
	typeof(cuInit) *init;
	typeof(cuDeviceGet) *device_get;
	typeof(cuDevicePrimaryCtxRetain) *primary_ctx_retain;
	typeof(cuCtxSetCurrent) *ctx_set_current;
};

static inline void make_current(const struct ctx_fns *f)
{
	CUdevice dev;
	CUcontext ctx;

	cu_ok(f->init(0), "cuInit");
	cu_ok(f->device_get(&dev, 0), "cuDeviceGet");
	cu_ok(f->primary_ctx_retain(&ctx, dev), "cuDevicePrimaryCtxRetain");
	cu_ok(f->ctx_set_current(ctx), "cuCtxSetCurrent");
}

/* cuGetProcAddress_v2 into a function pointer of any type; must succeed. */
static inline void getproc_v2(typeof(cuGetProcAddress_v2) *gp, const char *name, int version,
			      cuuint64_t flags, void *slot)
{
	CUdriverProcAddressQueryResult status;
	void *p = NULL;

	cu_ok(gp(name, &p, version, flags, &status), name);
	if (status != CU_GET_PROC_ADDRESS_SUCCESS || !p) {
		fprintf(stderr, "%s: status %d\n", name, (int)status);
		exit(PROG_FAIL);
	}
	memcpy(slot, &p, sizeof(p));
}

#endif /* GPUSPY_TEST_PROG_H */
