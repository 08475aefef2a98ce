/* SPDX-License-Identifier: MIT */
/*
 * The Prometheus text exposition (format 0.0.4) of gpuspy's metrics: the
 * one formatter, for the endpoint in the process (GPUSPY_PROMETHEUS) and
 * for gpuspy exporter.  Each side fills a struct prom_process per process
 * from what it has; prom_write() writes any number of them into one page,
 * each family once (HELP and TYPE, then the series of every process).
 *
 * A value the filler does not know is left out (its has_* flag clear), not
 * written as 0.  libc only, no stdio streams: the text goes into a
 * growable buffer.
 */
#ifndef GPUSPY_COMMON_PROM_H
#define GPUSPY_COMMON_PROM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "names.h"

#define PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"
/* GPUSPY_PROMETHEUS_TOP: sites written by name; the rest sum into "other" */
#define PROM_TOP_DEFAULT 20
#define PROM_TOP_MAX	 200

struct prom_buf {
	char *p;
	size_t len, cap;
	int err; /* the first -errno met; every later write does nothing */
};

/* an extra label written on every series of a process (host, rank) */
struct prom_label {
	const char *name;
	const char *value;
};

struct prom_kind_counts {
	bool has; /* the kind was seen: its live/peak/counters are written */
	uint64_t live, peak;
	uint64_t allocs, frees;
	uint64_t alloc_bytes, freed_bytes;
};

struct prom_device {
	int ordinal; /* CUDA ordinal */
	uint64_t tracked;
};

struct prom_nvml {
	int index; /* NVML index */
	bool has_used, has_device_used, has_device_total;
	uint64_t used, device_used, device_total;
};

struct prom_pool {
	int device;
	const char *framework; /* "pytorch", ... */
	bool has_reserved, has_allocated;
	uint64_t reserved, allocated;
};

struct prom_site {
	const char *key;  /* the 16-hex site key of the reports */
	const char *name; /* the user line, "step (train.py:41)" */
	int kind;	  /* enum gs_kind */
	uint64_t live;
	bool growing;
};

struct prom_process {
	/* gpuspy_info; NULL strings are written empty */
	long pid;
	const char *host, *rank, *command, *version;
	/* written on every series of this process, after its own labels; on
	 * gpuspy_info a label it has already (host, rank) is not repeated */
	const struct prom_label *labels;
	size_t nlabels;

	struct prom_kind_counts kinds[GS_KIND_COUNT];
	bool has_gpu_peak, has_oom, has_growing, has_sample_time, has_limit;
	uint64_t gpu_peak, oom_events, growing_sites;
	uint64_t limit;	    /* GPUSPY_LIMIT, bytes per device: a capped run */
	double sample_time; /* Unix time, seconds */

	const struct prom_device *devices;
	size_t ndevices;
	/* the device its rank owns (ranks.h), for gpuspy_wrong_device_bytes:
	 * what it holds on each other device of DEVICES and NVML (its index
	 * taken as the ordinal), allocations and context (ranks_context_bytes) */
	bool has_own_device;
	int own_device;
	const struct prom_nvml *nvml;
	size_t nnvml;
	const struct prom_pool *pools;
	size_t npools;

	/*
	 * Every site with live bytes, in any order: prom_write() sorts them
	 * in place (live bytes down, then key) and writes the first TOP, the
	 * rest summed per kind into "other".  Sites the filler has already
	 * folded (a bounded table) are added in folded_live/folded_sites.
	 */
	struct prom_site *sites;
	size_t nsites;
	uint64_t folded_live[GS_KIND_COUNT];
	uint64_t folded_sites;
};

/*
 * Where a process runs, as labels of every series, so that dashboards can
 * join gpuspy's per-site series with the cluster's own (kube-state-metrics,
 * cAdvisor, DCGM's per-pod series): "pod", "namespace" and "container",
 * from the variables contrib/k8s sets through the downward API, and "mig",
 * the MIG device the process uses, when CUDA_VISIBLE_DEVICES (else
 * NVIDIA_VISIBLE_DEVICES, what NVIDIA's device plugin sets) names one
 * first ("MIG-<uuid>", or the older "MIG-GPU-<uuid>/<gi>/<ci>").  A label
 * whose variable is unset or empty is left out; a value is cut at
 * PROM_PLACE_MAX - 1 bytes (a pod name is at most 253), and escaped when
 * written.  The library reads its own environment; gpuspy exporter the
 * environment each process recorded (docs/format.md, "environment").
 */
#define PROM_ENV_POD		"GPUSPY_POD_NAME"	/* fieldRef metadata.name */
#define PROM_ENV_NAMESPACE	"GPUSPY_POD_NAMESPACE"	/* fieldRef metadata.namespace */
#define PROM_ENV_CONTAINER	"GPUSPY_CONTAINER_NAME" /* the container's name, as written */
#define PROM_ENV_CUDA_VISIBLE	"CUDA_VISIBLE_DEVICES"
#define PROM_ENV_NVIDIA_VISIBLE "NVIDIA_VISIBLE_DEVICES"
#define PROM_PLACE_MAX		256
#define PROM_PLACE_LABELS	4

struct prom_place {
	char value[PROM_PLACE_LABELS][PROM_PLACE_MAX];
	struct prom_label labels[PROM_PLACE_LABELS]; /* the ones set, in order */
	size_t nlabels;
};

/* The value of variable NAME in the environment ARG stands for, or NULL. */
typedef const char *(*prom_env_fn)(const char *name, void *arg);
/* PL's labels from the environment GET reads. */
void prom_place_from_env(struct prom_place *pl, prom_env_fn get, void *arg);

/* Appends; on failure sets B->err.  B starts zeroed; prom_buf_free() after. */
void prom_buf_append(struct prom_buf *b, const char *s, size_t n);
void prom_buf_free(struct prom_buf *b);

/*
 * A label value, escaped as the exposition format wants (backslash,
 * double quote, newline), bytes that are not UTF-8 as U+FFFD.
 */
void prom_escape(struct prom_buf *b, const char *s);

/*
 * The page for N processes into B: every family in the order of the
 * metric list, HELP and TYPE once each, then that family's series for
 * each process; a family no process has a value for is left out.  TOP is
 * clamped to PROM_TOP_MAX.  0 or -errno (-ENOMEM; -EINVAL for an extra
 * label whose name is not a Prometheus label name).
 */
int prom_write(struct prom_buf *b, struct prom_process *const *procs, size_t n, unsigned top);

#endif
