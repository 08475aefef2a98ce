/* SPDX-License-Identifier: MIT */
/*
 * A fake libnvidia-ml.so.1 with the five calls libgpuspy makes
 * (src/preload/nvml.c): one GPU of FAKE_NVML_TOTAL bytes (default 80 GiB),
 * FAKE_NVML_USED of it in use (default 1 GiB), and the calling process
 * holding FAKE_NVML_PROCESS_USED (default 100 MiB).  Built in a directory
 * of its own: only the tests that put it on LD_LIBRARY_PATH get an
 * outside view.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int nvmlReturn_t;
typedef void *nvmlDevice_t;
typedef struct {
	unsigned long long total, free, used;
} nvmlMemory_t;
typedef struct {
	unsigned int pid;
	unsigned long long usedGpuMemory;
	unsigned int gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_t;

#define NVML_SUCCESS		     0
#define NVML_ERROR_INVALID_ARGUMENT  2
#define NVML_ERROR_INSUFFICIENT_SIZE 7

nvmlReturn_t nvmlInit_v2(void);
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count);
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device);
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory);
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *count,
						     nvmlProcessInfo_t *infos);

static int the_gpu;

static unsigned long long env_bytes(const char *name, unsigned long long def)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 10) : def;
}

nvmlReturn_t nvmlInit_v2(void)
{
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count)
{
	*count = 1;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
	if (index != 0)
		return NVML_ERROR_INVALID_ARGUMENT;
	*device = &the_gpu;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
	if (device != &the_gpu)
		return NVML_ERROR_INVALID_ARGUMENT;
	memory->total = env_bytes("FAKE_NVML_TOTAL", 80ULL << 30);
	memory->used = env_bytes("FAKE_NVML_USED", 1ULL << 30);
	memory->free = memory->total - memory->used;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *count,
						     nvmlProcessInfo_t *infos)
{
	if (device != &the_gpu)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (*count < 1) {
		*count = 1;
		return NVML_ERROR_INSUFFICIENT_SIZE;
	}
	memset(infos, 0, sizeof(*infos));
	infos->pid = (unsigned int)getpid();
	infos->usedGpuMemory = env_bytes("FAKE_NVML_PROCESS_USED", 100ULL << 20);
	*count = 1;
	return NVML_SUCCESS;
}
