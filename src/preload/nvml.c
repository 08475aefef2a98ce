/* SPDX-License-Identifier: MIT */
/*
 * The outside view: what NVML (what nvidia-smi shows) says each GPU and
 * each process on it holds, beside what gpuspy tracked.  libnvidia-ml is
 * loaded with dlopen, never linked, the first time a snapshot or an
 * out-of-memory post-mortem asks; without it there is no outside view.
 * Not asked at exit: the process may be tearing its GPU state down.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "nvml.h"
#include "real.h"

/* NVML's types, as its header declares them (the struct layouts are part
 * of NVML's stable ABI). */
typedef int nvml_return;
typedef void *nvml_device;
struct nvml_memory {
	unsigned long long total, free, used;
};
struct nvml_process {
	unsigned int pid;
	unsigned long long used;
	unsigned int gpu_instance, compute_instance;
};

#define MAX_GPUS  64
#define MAX_PROCS 256

static pthread_once_t once = PTHREAD_ONCE_INIT;
static unsigned n_gpus;
static nvml_device gpus[MAX_GPUS];
static nvml_return (*memory_info)(nvml_device, struct nvml_memory *);
static nvml_return (*running_processes)(nvml_device, unsigned int *, struct nvml_process *);

static void load(void)
{
	nvml_return (*init)(void), (*count)(unsigned int *), (*handle)(unsigned int, nvml_device *);
	unsigned int n = 0;
	void *h;

	if (!gs_config.nvml)
		return;
	h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return;
	init = (nvml_return(*)(void))real_dlsym(h, "nvmlInit_v2");
	count = (nvml_return(*)(unsigned int *))real_dlsym(h, "nvmlDeviceGetCount_v2");
	handle = (nvml_return(*)(unsigned int, nvml_device *))real_dlsym(
		h, "nvmlDeviceGetHandleByIndex_v2");
	memory_info = (nvml_return(*)(nvml_device, struct nvml_memory *))real_dlsym(
		h, "nvmlDeviceGetMemoryInfo");
	running_processes =
		(nvml_return(*)(nvml_device, unsigned int *, struct nvml_process *))real_dlsym(
			h, "nvmlDeviceGetComputeRunningProcesses_v3");
	if (!init || !count || !handle || !memory_info || init() != 0 || count(&n) != 0)
		return;
	for (unsigned i = 0; i < n && n_gpus < MAX_GPUS; i++)
		if (handle(i, &gpus[n_gpus]) == 0)
			n_gpus++;
}

void nvml_write(FILE *f)
{
	static struct nvml_process procs[MAX_PROCS];
	bool first = true;

	pthread_once(&once, load);
	if (!n_gpus)
		return;
	fputs(",\n  \"outside\": {\"source\": \"nvml\", \"devices\": [", f);
	for (unsigned i = 0; i < n_gpus; i++) {
		struct nvml_memory m;
		unsigned int np = MAX_PROCS;

		if (memory_info(gpus[i], &m) != 0)
			continue;
		fprintf(f,
			"%s\n    {\"index\": %u, \"total_bytes\": %llu, \"used_bytes\": %llu, "
			"\"processes\": [",
			first ? "" : ",", i, m.total, m.used);
		first = false;
		/* Called with gs_events_lock held: procs[] is not shared. */
		if (running_processes && running_processes(gpus[i], &np, procs) == 0)
			for (unsigned j = 0; j < np && j < MAX_PROCS; j++)
				fprintf(f, "%s{\"pid\": %u, \"used_bytes\": %llu}", j ? ", " : "",
					procs[j].pid, procs[j].used);
		fputs("]}", f);
	}
	fputs("]}", f);
}

/* The snapshot thread's history (history_sample.c): one NVML call per
 * GPU, its own buffer, no lock. */
unsigned nvml_process_used(long long *used, unsigned max)
{
	static struct nvml_process procs[MAX_PROCS];
	unsigned pid = (unsigned)getpid(), n = 0;

	pthread_once(&once, load);
	if (!running_processes)
		return 0;
	for (unsigned i = 0; i < n_gpus && i < max; i++) {
		unsigned int np = MAX_PROCS;

		used[i] = -1;
		if (running_processes(gpus[i], &np, procs) == 0)
			for (unsigned j = 0; j < np && j < MAX_PROCS; j++)
				/* ULLONG_MAX: not available (in a container) */
				if (procs[j].pid == pid &&
				    procs[j].used <= (unsigned long long)INT64_MAX)
					used[i] = (long long)procs[j].used;
		n = i + 1;
	}
	return n;
}

unsigned nvml_device_memory(long long *used, long long *total, unsigned max)
{
	unsigned n = 0;

	pthread_once(&once, load);
	for (unsigned i = 0; i < n_gpus && i < max; i++) {
		struct nvml_memory m;

		used[i] = total[i] = -1;
		if (memory_info(gpus[i], &m) == 0 && m.used <= (unsigned long long)INT64_MAX &&
		    m.total <= (unsigned long long)INT64_MAX) {
			used[i] = (long long)m.used;
			total[i] = (long long)m.total;
		}
		n = i + 1;
	}
	return n;
}
