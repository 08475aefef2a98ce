/* SPDX-License-Identifier: MIT */
/*
 * The outside view: what NVML (what nvidia-smi shows) says each GPU and
 * each process on it holds, beside what gpuspy tracked.  libnvidia-ml is
 * loaded with dlopen, never linked, the first time a snapshot or an
 * out-of-memory post-mortem asks; without it there is no outside view.
 * Not asked at exit: the process may be tearing its GPU state down.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "driver.h"
#include "nvml.h"
#include "real.h"
#include "view.h"

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
struct nvml_pci {
	char bus_id_legacy[16];
	unsigned int domain, bus, device, pci_device_id, pci_subsystem_id;
	char bus_id[32];
};

#define MAX_GPUS  64
#define MAX_PROCS 256

static pthread_once_t once = PTHREAD_ONCE_INIT;
static unsigned n_gpus;
static nvml_device gpus[MAX_GPUS];
static nvml_return (*memory_info)(nvml_device, struct nvml_memory *);
static nvml_return (*running_processes)(nvml_device, unsigned int *, struct nvml_process *);
static nvml_return (*pci_info)(nvml_device, struct nvml_pci *);

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
	pci_info = (nvml_return(*)(nvml_device, struct nvml_pci *))real_dlsym(
		h, "nvmlDeviceGetPciInfo_v3");
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

/* The NVML device that CUDA device ORDINAL is: the one at the same PCI
 * address (the CUDA ordinal follows CUDA_VISIBLE_DEVICES and
 * CUDA_DEVICE_ORDER, NVML's index neither), else the only one; -1. */
static int nvml_index_of(int ordinal)
{
	unsigned dom, bus, dev;

	if (driver_pci(ordinal, &dom, &bus, &dev) && pci_info)
		for (unsigned i = 0; i < n_gpus; i++) {
			struct nvml_pci p;

			if (pci_info(gpus[i], &p) == 0 && p.domain == dom && p.bus == bus &&
			    p.device == dev)
				return (int)i;
		}
	return n_gpus == 1 && driver_info()->ndevices <= 1 ? 0 : -1;
}

/* PID's command name (/proc/PID/comm) into NAME, "" when unreadable. */
static void comm_of(unsigned pid, char *name, size_t size)
{
	char path[32];
	ssize_t n;
	int fd;

	name[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, name, size - 1);
	close(fd);
	name[n > 0 ? n : 0] = '\0';
	name[strcspn(name, "\n")] = '\0';
	for (char *c = name; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f || *c == '"' || *c == '\\')
			*c = '?';
}

long long nvml_others(int ordinal, struct gs_oom_other *out, unsigned max, unsigned *n)
{
	static struct nvml_process procs[MAX_PROCS];
	unsigned pid = (unsigned)getpid(), np = MAX_PROCS;
	long long total = 0;
	bool self = false;
	int i;

	*n = 0;
	pthread_once(&once, load);
	if (!running_processes || ordinal < 0 || (i = nvml_index_of(ordinal)) < 0 ||
	    running_processes(gpus[i], &np, procs) != 0)
		return -1;
	for (unsigned j = 0; j < np && j < MAX_PROCS; j++) {
		unsigned k;

		/* ULLONG_MAX: not available (in a container) */
		if (procs[j].used > (unsigned long long)INT64_MAX)
			return -1;
		if (procs[j].pid == pid) {
			self = true;
			continue;
		}
		total += (long long)procs[j].used;
		/* the largest MAX, largest first */
		for (k = *n; k > 0 && out[k - 1].used < (long long)procs[j].used; k--)
			if (k < max)
				out[k] = out[k - 1];
		if (k < max) {
			out[k].pid = procs[j].pid;
			out[k].used = (long long)procs[j].used;
			if (*n < max)
				(*n)++;
		}
	}
	/* this process not listed: its pid is not NVML's (a container), and
	 * which of them is this process cannot be told */
	if (!self) {
		*n = 0;
		return -1;
	}
	for (unsigned j = 0; j < *n; j++)
		comm_of(out[j].pid, out[j].name, sizeof(out[j].name));
	return total;
}
