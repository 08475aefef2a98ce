/* SPDX-License-Identifier: MIT */
/*
 * Internal interfaces of libgpuspy.so, the part of gpuspy that runs inside
 * the target process.  Data flows one way:
 *
 *   hooks_*.c  ->  record.c  ->  sites.c / table.c / vmm.c  ->  report.c
 *
 * Everything here is hidden; only the hooks in hooks_*.c are exported
 * (see libgpuspy.map).
 */
#ifndef GPUSPY_INT_H
#define GPUSPY_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* uthash must never exit() the host program: an insert that cannot get
 * memory leaves the table unchanged and raises gs_hash_oom instead. */
extern __thread int gs_hash_oom __attribute__((tls_model("initial-exec")));
#define HASH_NONFATAL_OOM	 1
#define uthash_nonfatal_oom(obj) (gs_hash_oom = 1)
#include <uthash.h>

#include "locks.h"

#define GS_EXPORT      __attribute__((visibility("default")))
#define GS_TLS	       __thread __attribute__((tls_model("initial-exec")))
#define GS_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define GS_LIKELY(x)   __builtin_expect(!!(x), 1)

#define GS_MAX_DEPTH 64

/* What an allocation occupies.  GPU-resident kinds first. */
enum gs_kind {
	GS_KIND_DEVICE,
	GS_KIND_MANAGED,
	GS_KIND_VMM,	/* physical memory from cuMemCreate */
	GS_KIND_PINNED, /* page-locked host memory, reported apart */
	GS_KIND_COUNT,
};

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

#define GS_API_LIST(X)                                                                             \
	X(cudaMalloc)                                                                              \
	X(cudaMallocAsync)                                                                         \
	X(cudaMallocFromPoolAsync)                                                                 \
	X(cudaMallocManaged)                                                                       \
	X(cudaMallocPitch)                                                                         \
	X(cudaMallocHost)                                                                          \
	X(cudaHostAlloc)                                                                           \
	X(cuMemAlloc_v2)                                                                           \
	X(cuMemAllocAsync)                                                                         \
	X(cuMemAllocFromPoolAsync)                                                                 \
	X(cuMemAllocManaged)                                                                       \
	X(cuMemAllocPitch_v2)                                                                      \
	X(cuMemCreate)                                                                             \
	X(cuMemHostAlloc)                                                                          \
	X(cuMemAllocHost_v2)

enum gs_api {
#define GS_API_ENUM(n) GS_API_##n,
	GS_API_LIST(GS_API_ENUM)
#undef GS_API_ENUM
		GS_API_COUNT,
};

extern const char *const gs_api_names[GS_API_COUNT];
extern const char *const gs_kind_names[GS_KIND_COUNT];
extern const char *const gs_door_names[GS_DOOR_COUNT];

/* ---- config.c: GPUSPY_* read once ---- */
struct gs_config {
	const char *output_dir;		/* as given; made absolute at first allocation */
	unsigned depth;			/* native frames kept per call site */
	unsigned py_depth;		/* Python frames kept per call site, 0 = none */
	unsigned long long interval_us; /* GPUSPY_INTERVAL, 0 = no snapshots */
	int signal;			/* GPUSPY_SIGNAL: on-demand snapshots, 0 = off */
	bool nvml;			/* GPUSPY_NVML: the outside view in snapshots */
	bool torch;	    /* GPUSPY_TORCH: PyTorch's live blocks by Python line (torch_probe.c) */
	const char *unwind; /* GPUSPY_UNWIND: backtrace, libunwind or fp */
	const char *libunwind; /* GPUSPY_LIBUNWIND: where to dlopen it from */
	bool quiet;	       /* no summary on stderr */
	bool disabled;	       /* GPUSPY_DISABLE: pass every call straight through */
};
extern struct gs_config gs_config;
void config_load(void);

/* ---- log.c ---- */
void gs_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* gpuspy's own failure: one line, once, and tracking stops for good. */
void gs_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Process-wide state.  `tracking` is read on every hook; it only ever
 * goes from true to false (gs_fail, a forked child of a tracking parent).
 */
struct gs_state {
	char run_dir[4096]; /* absolute, set at activation */
	atomic_bool tracking;
	atomic_bool complete; /* false once anything was missed */
	atomic_bool active;   /* at least one allocation recorded */
	atomic_bool silent;   /* forked child: write nothing */
	double start_time;
};
extern struct gs_state gs_state;

/* lifecycle.c: idempotent, safe from any hook at any time. */
void gs_init(void);
/* First allocation: resolve and check the output directory. */
bool gs_activate(void);

/* ---- real.c: the functions gpuspy wraps, as the process would see them ---- */
typedef void *(*dlsym_fn)(void *, const char *);
dlsym_fn glibc_dlsym(void);
void *real_dlsym(void *handle, const char *name);

/* ---- record.c: hook bracket and the single place events are recorded ---- */
extern GS_TLS unsigned gs_hook_depth;

/*
 * A runtime call nests a driver call (cudaMalloc -> cuMemAlloc_v2): only
 * the outermost hook records.  Returns true when this hook must record.
 */
static inline bool hook_enter(void)
{
	return gs_hook_depth++ == 0 &&
	       atomic_load_explicit(&gs_state.tracking, memory_order_relaxed);
}

static inline void hook_leave(void)
{
	gs_hook_depth--;
}

/*
 * The bracket around every free hook: the allocation leaves the table
 * before the real call hands the address back to CUDA (where another
 * thread could be given it and record it first), and is accounted, or put
 * back if CUDA refused, after.  `call` is evaluated once; its result is
 * returned unchanged.
 */
#define GS_FREE_HOOK(rtype, success, space, addr, call)                                            \
	do {                                                                                       \
		uint64_t addr_ = (uint64_t)(uintptr_t)(addr);                                      \
		struct gs_alloc *a_ = NULL;                                                        \
		bool outer_ = hook_enter();                                                        \
		rtype r_;                                                                          \
		if (outer_ && addr_)                                                               \
			a_ = record_free_begin(space, addr_);                                      \
		r_ = (call);                                                                       \
		if (outer_ && addr_)                                                               \
			record_free_end(a_, addr_, r_ == (success));                               \
		hook_leave();                                                                      \
		return r_;                                                                         \
	} while (0)

struct gs_alloc;
/* device: CUDA ordinal, or -1 unknown, or GS_DEVICE_CURRENT to ask the driver */
#define GS_DEVICE_CURRENT (-2)
void record_alloc(enum gs_api api, enum gs_door door, enum gs_kind kind, enum gs_space space,
		  uint64_t addr, uint64_t size, int device);
/* Take the allocation out of the table before the real free runs, so the
 * address cannot be handed out again and recorded while we still hold it. */
struct gs_alloc *record_free_begin(enum gs_space space, uint64_t addr);
/* After the real free: account it (ok) or put it back (the free failed). */
void record_free_end(struct gs_alloc *a, uint64_t addr, bool ok);

/*
 * The counters kept per call site and per kind.  Only totals are counted
 * (two atomic additions per event); what is live is their difference.
 * Totals only grow, so a reader that loads the freed ones first never
 * sees more freed than allocated.
 */
struct gs_counters {
	atomic_llong alloc_bytes, allocs, freed_bytes, frees, peak_bytes;
};
struct gs_count_snap {
	long long live_bytes, live_allocs, peak_bytes;
	long long alloc_bytes, allocs, freed_bytes, frees;
};
static inline long long counters_live_bytes(const struct gs_counters *c)
{
	long long freed = atomic_load_explicit(&c->freed_bytes, memory_order_relaxed);

	return atomic_load_explicit(&c->alloc_bytes, memory_order_relaxed) - freed;
}
void counters_alloc(struct gs_counters *c, uint64_t size);
void counters_free(struct gs_counters *c, uint64_t size);
/* A consistent copy, even while other threads still allocate (at exit). */
void counters_read(struct gs_counters *c, struct gs_count_snap *out);

struct gs_totals {
	struct gs_counters kind[GS_KIND_COUNT];
	atomic_llong gpu_live_bytes, gpu_peak_bytes; /* device + managed + vmm */
	atomic_llong doors[GS_DOOR_COUNT];
	atomic_llong untracked_frees;
	atomic_llong replaced; /* allocation over a live key: its free was missed */
	atomic_llong vmm_reserved_bytes, vmm_mapped_bytes;
	atomic_ullong seq;
};
extern struct gs_totals gs_totals;

/* ---- peak.c: what was live at the high-water mark ---- */
#define GS_MAX_DEVICES 64
/* Live GPU bytes per device ordinal + 1 (index 0: unknown device). */
extern atomic_llong gs_device_live[GS_MAX_DEVICES + 1];
extern atomic_llong gs_device_allocs[GS_MAX_DEVICES + 1];
static inline unsigned gs_device_index(int device)
{
	return device >= 0 && device < GS_MAX_DEVICES ? (unsigned)device + 1 : 0;
}
struct gs_peak_site {
	uint32_t site;
	long long live_bytes;
};
struct gs_peak_snap {
	double time;
	long long bytes; /* GPU memory live when taken, within 1% of the peak */
	unsigned n;
	struct gs_peak_site *sites;
	long long devices[GS_MAX_DEVICES + 1];
};
/* After GPU memory grew to `live` bytes. */
void peak_note(long long live);
/* The last snapshot, or NULL; read it under peak_lock(). */
const struct gs_peak_snap *peak_snapshot(void);
void peak_lock(void);
void peak_unlock(void);

/* ---- unwind.c: raw stacks and the modules they fall in ---- */
struct gs_frame {
	int32_t module;	 /* index in the module registry, -1 = unknown */
	uint64_t offset; /* return address - module base (absolute if no module) */
	char *symbol;	 /* dynamic symbol, from dladdr; may be NULL */
};
struct gs_module {
	char *path;
	char build_id[41 * 2];
	uintptr_t base, start, end;
};
/* Return addresses of the first frames above gpuspy, innermost first. */
unsigned unwind_capture(uintptr_t *pcs, unsigned max);
void unwind_resolve(uintptr_t pc, struct gs_frame *out);
void unwind_init(void);
void unwind_warm(void);
void unwind_select(const char *name);
const char *unwind_name(void);
/* Registry access for the report; the registry only grows. */
unsigned unwind_module_count(void);
const struct gs_module *unwind_module(unsigned i);

/* ---- pystack.c: the calling thread's Python frames, without the GIL ---- */
#define GS_MAX_PY_DEPTH 64
struct gs_pyraw {
	uintptr_t code, addr, file; /* file: guards against a reused code address */
};
struct gs_pyframe {
	char *file, *function; /* UTF-8, may be NULL */
	int line;	       /* -1 unknown */
};
void pystack_init(void);
unsigned pystack_capture(struct gs_pyraw *out, unsigned max);
void pystack_decode(const struct gs_pyraw *raw, struct gs_pyframe *out);
/* The line of bytecode offset ADDR in a code object's line table of SIZE
 * bytes (FIRST: co_firstlineno), or -1: the 3.11+ locations table and
 * the 3.10 one.  Pure functions of their arguments. */
int pystack_line_locations(const unsigned char *p, long size, int first, long addr);
int pystack_line_pairs(const unsigned char *p, long size, int first, long addr);
/* false when no interpreter is in the process */
bool pystack_info(const char **version, bool *supported, const char **note);

/* ---- sites.c: interned call sites with their counters ---- */
struct gs_site {
	struct gs_site *next_all; /* every site, newest first, for the report */
	uint32_t id;
	uint8_t api, kind, door;
	uint16_t depth, pydepth;
	uint64_t first_seq;
	struct gs_counters c;
	struct gs_frame *frames; /* resolved once, when the site is new */
	struct gs_pyframe *py;	 /* decoded once, innermost first */
	atomic_bool growing;	 /* set by the snapshot thread (writer.c) */
	atomic_bool growth_told; /* named on stderr once */
				 /* hash-table linkage and the key live in sites.c */
};
struct gs_site *site_intern(enum gs_api api, enum gs_kind kind, enum gs_door door,
			    const uintptr_t *pcs, unsigned depth, const struct gs_pyraw *py,
			    unsigned pydepth);
struct gs_site *site_list(void);
unsigned site_count(void);

/* ---- table.c: live allocations keyed by (space, address or handle) ---- */
struct gs_alloc {
	uint64_t addr;
	uint32_t space;
	int32_t device;
	uint64_t size;
	uint64_t seq;
	struct gs_site *site;
	uint8_t kind;
	UT_hash_handle hh;
};
/* Insert; returns the entry it displaced (same key), or NULL.  -ENOMEM
 * (table full, gpuspy out of memory) is reported through *err. */
struct gs_alloc *table_insert(struct gs_alloc *a, int *err);
struct gs_alloc *table_remove(enum gs_space space, uint64_t addr);
/* Change the key of a live entry (VMM release-while-mapped). */
int table_rekey(enum gs_space space, uint64_t addr, enum gs_space nspace, uint64_t naddr);

/* ---- vmm.c: physical handles, their mappings, reserved address space ---- */
void vmm_on_map(uint64_t va, uint64_t size, uint64_t handle);
void vmm_on_unmap(uint64_t va, uint64_t size);
/* Before the real cuMemRelease: returns what record_free_end needs. */
struct gs_alloc *vmm_release_begin(uint64_t handle, bool *deferred, uint64_t *orphan_key);
void vmm_release_end(uint64_t handle, struct gs_alloc *a, bool deferred, uint64_t orphan_key,
		     bool ok);

/* ---- nvml.c: what NVML says each GPU and process holds ---- */
#include <stdio.h>
void nvml_write(FILE *f);

/* ---- torch_probe.c: PyTorch's live blocks by Python line ---- */
/* From the snapshot thread, each interval, holding none of gpuspy's locks. */
void torch_poll(void);
/* fork(): a child has no view of its own (CUDA does not survive a fork);
 * the parent's namespace, copied into it, checks its pid as well. */
void torch_forget(void);
/* Whether the view waits to start and wants asking again soon: *SOON
 * (CLOCK_MONOTONIC) is when. */
struct timespec;
bool torch_waiting(struct timespec *soon);

/* ---- writer.c: the snapshot thread ---- */
void writer_start(void);
void writer_stop(void);
void writer_forget(void);
/* An allocation failed for lack of memory (record.c). */
void record_oom(enum gs_api api, enum gs_door door, enum gs_kind kind, uint64_t size, int device);

/* helpers */
double gs_now(void);

/* Raise *peak to v; lock-free, so concurrent peaks never go backwards. */
static inline void gs_max(atomic_llong *peak, long long v)
{
	long long cur = atomic_load_explicit(peak, memory_order_relaxed);

	while (v > cur && !atomic_compare_exchange_weak_explicit(
				  peak, &cur, v, memory_order_relaxed, memory_order_relaxed))
		;
}

#endif /* GPUSPY_INT_H */
