/* SPDX-License-Identifier: MIT */
/*
 * What every part of libgpuspy.so shares: the kinds, key spaces, doors
 * and APIs of an allocation, and the few macros of the library.  Each
 * module has its own header; data flows one way through them:
 *
 *   hooks_*.c (exported)  ->  record.c  ->  sites.c  table.c  vmm.c  peak.c
 *     (real.c, driver.c)        (unwind.c, pystack.c)
 *   writer.c (the snapshot thread)  ->  events.c  ->  view.c
 *     ->  process_json.c / summary.c  ->  files.c
 *
 * with lifecycle.c (start, fork, exit), config.c, log.c and locks.c (every
 * lock) beside them.  Everything is hidden; only the hooks in hooks_*.c and
 * api.c are exported (see libgpuspy.map).
 */
#ifndef GPUSPY_CORE_H
#define GPUSPY_CORE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuda_entries.h"
#include "names.h" /* enum gs_kind, what an allocation occupies */

/* uthash must never exit() the host program: an insert that cannot get
 * memory leaves the table unchanged and raises gs_hash_oom instead. */
extern __thread int gs_hash_oom __attribute__((tls_model("initial-exec")));
#define HASH_NONFATAL_OOM	 1
#define uthash_nonfatal_oom(obj) (gs_hash_oom = 1)
#include <uthash.h>

#define GS_EXPORT      __attribute__((visibility("default")))
#define GS_TLS	       __thread __attribute__((tls_model("initial-exec")))
#define GS_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define GS_LIKELY(x)   __builtin_expect(!!(x), 1)
/* A sanitizer's runtime calls dlsym while it starts, before its shadow
 * memory exists: what that dlsym runs must not be instrumented. */
#define GS_NO_SANITIZE __attribute__((no_sanitize("address", "thread")))

/* The bounds of GPUSPY_DEPTH, GPUSPY_PYTHON_DEPTH and GPUSPY_TRACE (at
 * most this many events of 64 bytes each). */
#define GS_MAX_DEPTH	64
#define GS_MAX_PY_DEPTH 64
#define GS_TRACE_MAX	(1u << 22)

/*
 * Namespaces of the keys in the live table: device pointers, host
 * pointers and VMM handles are different numbers that may coincide.
 * GS_SPACE_ORPHAN holds VMM memory whose handle was released while still
 * mapped: the driver frees it only at the last unmap, and may hand the
 * same handle number out again meanwhile.
 */
enum gs_space {
	GS_SPACE_DEVPTR,
	GS_SPACE_HOSTPTR,
	GS_SPACE_HANDLE,
	GS_SPACE_ORPHAN,
};

/* How a call reached gpuspy. */
enum gs_door {
	GS_DOOR_RUNTIME,
	GS_DOOR_DRIVER,
	GS_DOOR_DLSYM,
	GS_DOOR_GETPROC,
	GS_DOOR_COUNT,
};

/*
 * What a call site is reported as: one name per CUDA entry point gpuspy
 * wraps (cuda_entries.h; a per-thread form is reported as its plain
 * twin), and an async allocation on a capturing stream, which is the
 * graph's (graph.c).
 */
enum gs_api {
#define GS_API_ENUM(name, ...) GS_API_##name,
	GS_CUDA_ENTRIES(GS_API_ENUM)
#undef GS_API_ENUM
		GS_API_cudaMallocAsync_captured,
	GS_API_cuMemAllocAsync_captured,
	GS_API_COUNT,
};

extern const char *const gs_api_names[GS_API_COUNT];
extern const char *const gs_door_names[GS_DOOR_COUNT];

/*
 * Calls counted per door, whatever they did (the report's "calls"): the
 * first four are the doors themselves and count every call that came in
 * through them, a runtime call's nested driver call too; the lookups count
 * calls of cuGetProcAddress and cuGetProcAddress_v2; the last three are
 * families, counted once per call of the program (the outermost hook).
 */
enum gs_call {
	GS_CALL_RUNTIME,
	GS_CALL_DRIVER,
	GS_CALL_DLSYM,
	GS_CALL_GETPROC,
	GS_CALL_LOOKUP_V1,
	GS_CALL_LOOKUP_V2,
	GS_CALL_PER_THREAD,
	GS_CALL_VMM,
	GS_CALL_GRAPH,
	GS_CALL_COUNT,
};
extern const char *const gs_call_names[GS_CALL_COUNT];
/* record.c: one call seen (striped, lock-free, any time, even before activation). */
void calls_note(enum gs_call c);
long long calls_total(enum gs_call c);

/* Raise *peak to v; lock-free, so concurrent peaks never go backwards. */
static inline void gs_max(atomic_llong *peak, long long v)
{
	long long cur = atomic_load_explicit(peak, memory_order_relaxed);

	while (v > cur && !atomic_compare_exchange_weak_explicit(
				  peak, &cur, v, memory_order_relaxed, memory_order_relaxed))
		;
}

#endif /* GPUSPY_CORE_H */
