/* SPDX-License-Identifier: MIT */
/*
 * Door: PLT calls of driver symbols, as a program linked with -lcuda makes.
 * Usage: driver_plt DEV_SIZE DEV_COUNT MANAGED_SIZE PITCH_WIDTH PITCH_HEIGHT
 * Leaks DEV_COUNT x DEV_SIZE from leak_device(), MANAGED_SIZE from
 * leak_managed() and one pitched allocation from leak_pitch().
 */
#include "prog.h"

void leak_device(size_t size, size_t count);
void leak_managed(size_t size);
size_t leak_pitch(size_t width, size_t height);
void churn(void);

__attribute__((noinline)) void leak_device(size_t size, size_t count)
{
	CUdeviceptr p;

	for (size_t i = 0; i < count; i++)
		cu_ok(cuMemAlloc_v2(&p, size), "cuMemAlloc_v2");
}

__attribute__((noinline)) void leak_managed(size_t size)
{
	CUdeviceptr p;

	cu_ok(cuMemAllocManaged(&p, size, CU_MEM_ATTACH_GLOBAL), "cuMemAllocManaged");
}

__attribute__((noinline)) size_t leak_pitch(size_t width, size_t height)
{
	CUdeviceptr p;
	size_t pitch;

	cu_ok(cuMemAllocPitch_v2(&p, &pitch, width, height, 4), "cuMemAllocPitch_v2");
	return pitch;
}

/* Memory that comes and goes, so that frees are exercised too. */
__attribute__((noinline)) void churn(void)
{
	CUdeviceptr p[3], m, q;
	size_t pitch;

	for (int i = 0; i < 3; i++)
		cu_ok(cuMemAlloc_v2(&p[i], (size_t)(i + 1) << 20), "cuMemAlloc_v2");
	cu_ok(cuMemAllocManaged(&m, 4096, CU_MEM_ATTACH_GLOBAL), "cuMemAllocManaged");
	cu_ok(cuMemAllocPitch_v2(&q, &pitch, 100, 100, 4), "cuMemAllocPitch_v2");
	for (int i = 2; i >= 0; i--)
		cu_ok(cuMemFree_v2(p[i]), "cuMemFree_v2");
	cu_ok(cuMemFree_v2(m), "cuMemFree_v2 managed");
	cu_ok(cuMemFree_v2(q), "cuMemFree_v2 pitched");
}

int main(int argc, char **argv)
{
	size_t pitch;

	driver_context();
	churn();
	leak_device(arg_size(argc, argv, 1), arg_size(argc, argv, 2));
	leak_managed(arg_size(argc, argv, 3));
	pitch = leak_pitch(arg_size(argc, argv, 4), arg_size(argc, argv, 5));
	churn();
	printf("driver_plt: pitch %zu\n", pitch);
	printf("driver_plt: done\n");
	return 0;
}
