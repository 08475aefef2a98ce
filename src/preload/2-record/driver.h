/* SPDX-License-Identifier: MIT */
/*
 * The real driver: its functions, bound once (driver.c), for the hooks
 * (hooks_driver.c) and for what gpuspy itself asks it (the current
 * device, free memory, the GPUs' names).
 */
#ifndef GPUSPY_DRIVER_H
#define GPUSPY_DRIVER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "cuda_entries.h"

/*
 * The functions of the driver: first those gpuspy wraps, exporting its
 * own entry point for each (the driver's rows of cuda_entries.h), then
 * those it only uses, DRIVER_USED.
 */
#define DRIVER_USED(X)                                                                             \
	X(cuCtxGetDevice)                                                                          \
	X(cuDriverGetVersion)                                                                      \
	X(cuDeviceGetCount)                                                                        \
	X(cuDeviceGet)                                                                             \
	X(cuDeviceGetName)                                                                         \
	X(cuDeviceGetPCIBusId)                                                                     \
	X(cuStreamGetCaptureInfo_v3)                                                               \
	X(cuDeviceGetGraphMemAttribute)

enum drv_fn {
#define DRV_ENUM(name, ...) D_##name,
#define DRV_USED_ENUM(name) D_##name,
	GS_CUDA_DRIVER_ENTRIES(DRV_ENUM) DRIVER_USED(DRV_USED_ENUM)
#undef DRV_USED_ENUM
#undef DRV_ENUM
		D_COUNT,
	D_WRAPPED = D_cuCtxGetDevice,
};

extern const char *const drv_names[D_COUNT];
/* The real functions, once bound; read on every hook. */
extern _Atomic(void *) drv_real_fn[D_COUNT];
/* True once bound from a handle that really was libcuda. */
extern atomic_bool drv_bound;

/* Bind every real driver function from one libcuda handle.  Idempotent;
 * racing callers store the same values. */
void driver_bind_handle(void *h);
/* The slow path of drv_real(): not yet bound. */
void *driver_bind(enum drv_fn f);

/* The real function for an exported wrapper. */
static inline void *drv_real(enum drv_fn f)
{
	void *p = atomic_load_explicit(&drv_real_fn[f], memory_order_acquire);

	if (__builtin_expect(p != NULL, 1))
		return p;
	return driver_bind(f);
}

#define REAL(name) ((__typeof__(&name))drv_real(D_##name))

/* hooks_driver.c: for a pointer the real cuGetProcAddress returned (the
 * address of an exported libcuda symbol), the wrapper of that entry
 * point at the cuGetProcAddress door; P itself when gpuspy wraps none. */
void *driver_wrap_pointer(void *p);

/* The current context's device, or -1. */
int driver_current_device(void);
/* The device of an allocation that just succeeded on this thread (its
 * context is current): without asking, on a driver that presents one
 * device (driver_describe()), else driver_current_device(). */
int driver_allocated_device(void);
/* cuMemGetInfo of the current context; false when it cannot be asked. */
bool driver_mem_info(long long *free_bytes, long long *total_bytes);
/* Device ORDINAL's PCI domain, bus and device numbers; false when the
 * driver does not say. */
bool driver_pci(int ordinal, unsigned *domain, unsigned *bus, unsigned *device);
/* Is STREAM capturing, and into which graph?  PER_THREAD: asked for a
 * _ptsz call, where stream 0 is the per-thread default stream. */
bool driver_capture_graph(const void *stream, bool per_thread, const void **graph);
/* The graph-memory attributes of device ORDINAL: used current and high,
 * reserved current and high; false when the driver does not answer. */
bool driver_graph_mem(int ordinal, unsigned long long v[4]);
/* The driver's version and the GPUs' names and sizes: asked once, at
 * activation; read by the report writer. */
#define GS_INFO_DEVICES 16
struct gs_cuda_device {
	int ordinal;
	char name[96];
	long long total_bytes; /* -1 unknown */
};
struct gs_cuda_info {
	int driver_version; /* 0 unknown; 13000 is CUDA 13.0 */
	unsigned ndevices;
	struct gs_cuda_device devices[GS_INFO_DEVICES];
};
void driver_describe(void);
const struct gs_cuda_info *driver_info(void);

#endif /* GPUSPY_DRIVER_H */
