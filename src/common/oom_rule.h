/* SPDX-License-Identifier: MIT */
/*
 * Why an allocation failed for lack of memory: one rule over the figures
 * gpuspy recorded at that moment (docs/format.md, "The verdict";
 * libgpuspy(7), "OUT OF MEMORY"), and the one line that says it.  Both
 * sides compile this: libgpuspy judges each failure on the spot, from what
 * the process knows, and prints the line on stderr; `gpuspy report`
 * judges the same figures read back from oom-N.json, so that the two say
 * the same thing of the same event.
 *
 * No allocation, no state, no stdio stream (snprintf into the caller's
 * buffer only): libgpuspy calls it on the failing thread.
 */
#ifndef GPUSPY_COMMON_OOM_RULE_H
#define GPUSPY_COMMON_OOM_RULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The verdicts, in the order the rule tries them (the names are the
 * report's "class" values). */
enum oom_class {
	OOM_FRAGMENTATION, /* the pool held enough free memory, in no block large enough */
	OOM_OTHER_PROCESS, /* other processes hold what was missing */
	OOM_OUTSIDE,	   /* the program's memory outside its framework's pool */
	OOM_CAP,	   /* GPUSPY_LIMIT refused it: too much for the smaller card */
	OOM_SHORTAGE,	   /* the program needs more than the device had for it */
	OOM_UNEXPLAINED,   /* the device said it had room, or too little is known */
	OOM_PINNED_HOST,   /* pinned host memory: the host's, not the device's */
	OOM_CLASS_COUNT,
};

/* "fragmentation", "other-process", "outside-framework", "cap",
 * "shortage", "unexplained", "pinned-host"; "?" out of range. */
const char *oom_class_name(int cls);

/*
 * What is known of one failed request, on the device it asked of.  Sizes
 * are bytes; -1 is "unknown" wherever a figure may be.  Site figures
 * (POOL_BYTES, LIBRARY_BYTES, HOLDER) are the process's, all devices: a
 * call site is not split by device.
 */
struct oom_facts {
	int64_t requested;     /* the failed call's size */
	bool pinned;	       /* of pinned host memory: judged apart, first */
	int64_t device_total;  /* the driver's view (cuMemGetInfo), -1 unknown */
	int64_t device_free;   /* ditto */
	int64_t limit;	       /* GPUSPY_LIMIT, 0 for none */
	bool capped;	       /* the limit refused it, not the device */
	int64_t tracked;       /* the program's memory gpuspy tracked on that device */
	const char *pool;      /* the label of the framework pool in the process, NULL: none */
	int64_t pool_bytes;    /* tracked at the pool's segment sites */
	bool from_pool;	       /* the pool made the failed request (its segment site) */
	int64_t library_bytes; /* tracked at library sites (cuBLAS, cuDNN, NCCL, ...) */
	const char *library;   /* the label of the one holding most, NULL: none */
	int64_t library_top;   /* its bytes */
	int64_t graph_bytes;   /* CUDA graphs' memory made resident by launches */
	/* other processes on that device, from NVML; -1: unknown (no NVML,
	 * or this process not among those it lists) */
	int64_t others_bytes;
	int64_t other_pid, other_bytes; /* the one holding most */
	const char *other_name;		/* its command name, NULL: unknown */
	/*
	 * The pool's own figures at the failure, where its framework gave
	 * them then (PyTorch's out-of-memory observer), -1 unknown: the
	 * block it looked for, what its tensors held, what it reserved from
	 * CUDA, its largest free block.  A framework's counters sampled
	 * earlier are never judged: a step's tensors come and go between two
	 * samples.
	 */
	int64_t pool_request, pool_allocated, pool_reserved, pool_largest_free;
	bool expandable; /* PYTORCH_CUDA_ALLOC_CONF has expandable_segments:True */
	/* the largest holder by the surface's own names, NULL: none named;
	 * HOLDER_IS_POOL: it is a pool's segments ("the ... 's segments") */
	const char *holder;
	int64_t holder_bytes;
	bool holder_is_pool;
	/* of the live blocks in the pool's segments that hold free memory,
	 * the line holding most (PyTorch's figures), NULL: none named */
	const char *pinner;
	int64_t pinner_bytes;
};

/* What the rule found, with the figures it used (-1: unknown). */
struct oom_verdict {
	enum oom_class cls;
	int64_t card;	   /* what the request had to fit in: the device, or the limit */
	int64_t available; /* free for it then: the driver's free, or the limit less tracked */
	int64_t missing;   /* requested - available, when that is above 0 */
	int64_t held;	   /* the program's own memory: the pool's tensors, not its free
			    * blocks, where its figures at the failure are known */
	int64_t fits;	   /* the largest request that would have succeeded then: the
			    * available memory, or the pool's largest free block */
	int64_t slack;	   /* the pool's reserved less allocated at the failure */
	int64_t outside;   /* tracked memory outside the pool, when there is a pool */
	/* a request of a pool whose figures at the failure are unknown:
	 * part of its segments may be free, and it may empty its cache and
	 * try again (PyTorch does) */
	bool pool_may_retry;
};

/* The rule (docs/format.md, "The verdict"): V from F.  Pure. */
void oom_judge(const struct oom_facts *f, struct oom_verdict *v);

/*
 * The verdict as one line of text into BUF of SIZE ("fragmentation: the
 * PyTorch caching allocator held ..."), with its numbers and the one
 * change to try; snprintf's return.  Strings of F (names, labels) are
 * written as they are: the caller cleans what it prints.
 */
int oom_verdict_line(char *buf, size_t size, const struct oom_facts *f,
		     const struct oom_verdict *v);

/* Whether PYTORCH_CUDA_ALLOC_CONF's value CONF (NULL: unset) turns on
 * expandable segments, as PyTorch reads it: comma-separated key:value
 * pairs, "expandable_segments:True" (any case of "true" taken). */
bool oom_expandable(const char *conf);

/* BYTES as people read them into BUF: "512 B", "1.5 MiB", "8.0 GiB". */
const char *oom_size(int64_t bytes, char *buf, size_t size);

#endif
