/* SPDX-License-Identifier: MIT */
/*
 * A fake libnvidia-ml.so.1 with the six calls libgpuspy makes
 * (src/preload/3-out/nvml.c): one GPU of FAKE_NVML_TOTAL bytes (default 80 GiB),
 * FAKE_NVML_USED of it in use (default 1 GiB), at PCI 0000:10:00.0 (the
 * fake driver's device 0), and the calling process holding
 * FAKE_NVML_PROCESS_USED (default 100 MiB; FAKE_NVML_NO_SELF=1 leaves it
 * out of the list, as NVML does in a container, whose pids are not its
 * own), then FAKE_NVML_OTHERS ("PID:BYTES,PID:BYTES": other processes).
 * Built in a directory of its own: only the tests that put it on
 * LD_LIBRARY_PATH get an outside view.
 */
#include <stdio.h>
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
typedef struct {
	char busIdLegacy[16];
	unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
	char busId[32];
} nvmlPciInfo_t;

#define NVML_SUCCESS		     0
#define NVML_ERROR_INVALID_ARGUMENT  2
#define NVML_ERROR_INSUFFICIENT_SIZE 7

nvmlReturn_t nvmlInit_v2(void);
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count);
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device);
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory);
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *count,
						     nvmlProcessInfo_t *infos);
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci);

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
	nvmlProcessInfo_t list[16];
	const char *others = getenv("FAKE_NVML_OTHERS");
	unsigned int n = 0;

	if (device != &the_gpu)
		return NVML_ERROR_INVALID_ARGUMENT;
	memset(list, 0, sizeof(list));
	if (!getenv("FAKE_NVML_NO_SELF")) {
		list[n].pid = (unsigned int)getpid();
		list[n++].usedGpuMemory = env_bytes("FAKE_NVML_PROCESS_USED", 100ULL << 20);
	}
	while (others && *others && n < 16) {
		char *end;

		list[n].pid = (unsigned int)strtoul(others, &end, 10);
		if (*end != ':')
			break;
		list[n++].usedGpuMemory = strtoull(end + 1, &end, 10);
		others = *end == ',' ? end + 1 : "";
	}
	if (*count < n) {
		*count = n;
		return NVML_ERROR_INSUFFICIENT_SIZE;
	}
	memcpy(infos, list, n * sizeof(*infos));
	*count = n;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
	if (device != &the_gpu)
		return NVML_ERROR_INVALID_ARGUMENT;
	memset(pci, 0, sizeof(*pci));
	pci->bus = 0x10;
	snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy), "0000:10:00.0");
	snprintf(pci->busId, sizeof(pci->busId), "00000000:10:00.0");
	return NVML_SUCCESS;
}
