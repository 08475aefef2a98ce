/* SPDX-License-Identifier: MIT */
/*
 * The real driver: binding its functions, and what gpuspy asks it for
 * itself.  The exported hooks and the dlsym / cuGetProcAddress doors are
 * in hooks_driver.c.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "cuda_abi.h"
#include "driver.h"
#include "real.h"

const char *const drv_names[D_COUNT] = {
#define DRV_NAME(name, ...) [D_##name] = #name,
#define DRV_USED_NAME(name) [D_##name] = #name,
	GS_CUDA_DRIVER_ENTRIES(DRV_NAME) DRIVER_USED(DRV_USED_NAME)
#undef DRV_USED_NAME
#undef DRV_NAME
};

_Atomic(void *) drv_real_fn[D_COUNT];
atomic_bool drv_bound;

void driver_bind_handle(void *h)
{
	for (unsigned i = 0; i < D_COUNT; i++) {
		void *p;

		if (atomic_load_explicit(&drv_real_fn[i], memory_order_acquire))
			continue;
		p = real_dlsym(h, drv_names[i]);
		if (p)
			atomic_store_explicit(&drv_real_fn[i], p, memory_order_release);
	}
	/* Only a handle that really was libcuda counts as bound. */
	if (atomic_load(&drv_real_fn[D_cuGetProcAddress_v2]))
		atomic_store(&drv_bound, true);
}

/*
 * libcuda is in the global
 * scope when the program links it; when only a runtime dlopen()ed it
 * (RTLD_LOCAL), RTLD_NEXT misses it and its handle is used instead.
 */
void *driver_bind(enum drv_fn f)
{
	void *p, *h;

	p = real_dlsym(RTLD_NEXT, drv_names[f]);
	if (p) {
		atomic_store_explicit(&drv_real_fn[f], p, memory_order_release);
		return p;
	}
	h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return NULL;
	driver_bind_handle(h);
	dlclose(h); /* NOLOAD took a reference; the library stays loaded */
	return atomic_load_explicit(&drv_real_fn[f], memory_order_acquire);
}

/* Set by driver_describe(): the driver presents one device, so that a
 * thread that allocated has it current. */
static atomic_bool one_device;

int driver_allocated_device(void)
{
	if (atomic_load_explicit(&one_device, memory_order_relaxed))
		return 0;
	return driver_current_device();
}

int driver_current_device(void)
{
	CUresult (*get)(CUdevice *) = REAL(cuCtxGetDevice);
	CUdevice dev;

	/* Fails (201) on a thread without a current context. */
	if (get && get(&dev) == CUDA_SUCCESS)
		return (int)dev;
	return -1;
}

bool driver_mem_info(long long *free_bytes, long long *total_bytes)
{
	CUresult (*info)(size_t *, size_t *) = REAL(cuMemGetInfo_v2);
	size_t f, t;

	if (!info || info(&f, &t) != CUDA_SUCCESS)
		return false;
	*free_bytes = (long long)f;
	*total_bytes = (long long)t;
	return true;
}

/* The hexadecimal number at *P, up to END (':' or '.'), past it; false
 * when there is none or something else follows. */
static bool hex_field(const char **p, char end, unsigned *out)
{
	char *stop;
	unsigned long v = strtoul(*p, &stop, 16);

	if (stop == *p || *stop != end || v > 0xffffffffUL)
		return false;
	*out = (unsigned)v;
	*p = stop + 1;
	return true;
}

bool driver_pci(int ordinal, unsigned *domain, unsigned *bus, unsigned *device)
{
	CUresult (*get)(CUdevice *, int) = REAL(cuDeviceGet);
	CUresult (*pci)(char *, int, CUdevice) = REAL(cuDeviceGetPCIBusId);
	const char *p;
	char id[64];
	CUdevice d;

	if (!get || !pci || get(&d, ordinal) != CUDA_SUCCESS ||
	    pci(id, (int)sizeof(id), d) != CUDA_SUCCESS)
		return false;
	id[sizeof(id) - 1] = '\0';
	/* "[domain]:[bus]:[device].[function]", each hexadecimal */
	p = id;
	return hex_field(&p, ':', domain) && hex_field(&p, ':', bus) && hex_field(&p, '.', device);
}

bool driver_capture_graph(const void *stream, bool per_thread, const void **graph)
{
	CUresult (*info)(CUstream, CUstreamCaptureStatus *, cuuint64_t *, CUgraph *,
			 const CUgraphNode **, const CUgraphEdgeData **, size_t *) =
		REAL(cuStreamGetCaptureInfo_v3);
	CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
	CUstream s = (CUstream)stream;
	CUgraph g = NULL;

	/* The legacy default stream is never captured. */
	if (!info || (!s && !per_thread) || s == CU_STREAM_LEGACY)
		return false;
	if (!s)
		s = CU_STREAM_PER_THREAD;
	if (info(s, &status, NULL, &g, NULL, NULL, NULL) != CUDA_SUCCESS ||
	    status != CU_STREAM_CAPTURE_STATUS_ACTIVE || !g)
		return false;
	*graph = g;
	return true;
}

bool driver_graph_mem(int ordinal, unsigned long long v[4])
{
	static const CUgraphMem_attribute attrs[4] = {
		CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT,
		CU_GRAPH_MEM_ATTR_USED_MEM_HIGH,
		CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT,
		CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH,
	};
	CUresult (*attr)(CUdevice, CUgraphMem_attribute, void *) =
		REAL(cuDeviceGetGraphMemAttribute);
	CUresult (*get)(CUdevice *, int) = REAL(cuDeviceGet);
	CUdevice d;

	if (!attr || !get || get(&d, ordinal) != CUDA_SUCCESS)
		return false;
	for (unsigned k = 0; k < 4; k++) {
		cuuint64_t x;

		if (attr(d, attrs[k], &x) != CUDA_SUCCESS)
			return false;
		v[k] = (unsigned long long)x;
	}
	return true;
}

/*
 * The driver and the GPUs, asked once at the first allocation (the driver
 * is initialized then; at exit it may already be torn down).  Nothing
 * here allocates, and a driver that lacks a function leaves its part out.
 */
static struct gs_cuda_info cuda_info;

void driver_describe(void)
{
	CUresult (*version)(int *) = REAL(cuDriverGetVersion);
	CUresult (*count)(int *) = REAL(cuDeviceGetCount);
	CUresult (*get)(CUdevice *, int) = REAL(cuDeviceGet);
	CUresult (*name)(char *, int, CUdevice) = REAL(cuDeviceGetName);
	CUresult (*total)(size_t *, CUdevice) = REAL(cuDeviceTotalMem_v2);
	int n = 0;

	if (version && version(&cuda_info.driver_version) != CUDA_SUCCESS)
		cuda_info.driver_version = 0;
	if (!count || !get || count(&n) != CUDA_SUCCESS || n < 0)
		n = 0;
	for (int i = 0; i < n && cuda_info.ndevices < GS_INFO_DEVICES; i++) {
		struct gs_cuda_device *d = &cuda_info.devices[cuda_info.ndevices];
		CUdevice dev;
		size_t bytes = 0;

		if (get(&dev, i) != CUDA_SUCCESS)
			continue;
		d->ordinal = i;
		if (!name || name(d->name, sizeof(d->name), dev) != CUDA_SUCCESS)
			d->name[0] = '\0';
		d->name[sizeof(d->name) - 1] = '\0';
		d->total_bytes =
			total && total(&bytes, dev) == CUDA_SUCCESS ? (long long)bytes : -1;
		cuda_info.ndevices++;
	}
	atomic_store(&one_device, n == 1 && cuda_info.ndevices == 1);
}

const struct gs_cuda_info *driver_info(void)
{
	return &cuda_info;
}
