/* SPDX-License-Identifier: MIT */
/* What gpuspy asks the driver (driver.h), without one (driver_stub.h). */
#include "driver.h"
#include "driver_stub.h"

int driver_current_device(void)
{
	return UNIT_DEVICE;
}

int driver_allocated_device(void)
{
	return UNIT_DEVICE;
}

bool driver_mem_info(long long *free_bytes, long long *total_bytes)
{
	return false;
}

void driver_describe(void)
{
}

const struct gs_cuda_info *driver_info(void)
{
	static const struct gs_cuda_info none;

	return &none;
}

bool driver_capture_graph(const void *stream, bool per_thread, const void **graph)
{
	return false;
}

bool driver_graph_mem(int ordinal, unsigned long long v[4])
{
	return false;
}

bool driver_pci(int ordinal, unsigned *domain, unsigned *bus, unsigned *device)
{
	return false;
}
