/* SPDX-License-Identifier: MIT */
/*
 * The keys of the gpuspy-process/1 document (docs/format.md) that the
 * library writes (src/preload/3-out/process_json.c) and the reader reads
 * (src/read/load_process.c, validate.c): one row per key, in one table per
 * object, so that a key is spelled once and both sides compile it.  The
 * order of a table is the order the writer writes its members in.
 *
 * The objects: a site's and a kind's counters; a site; a native and a
 * Python frame; a "growth" verdict; "frameworks"; an out-of-memory event's
 * PyTorch lines ("lines" and "holders"); the exit report's live
 * allocations and its trace.  The frameworks' and their
 * counters' names are names.h's.  libc only: the library links it.
 */
#ifndef GPUSPY_COMMON_SCHEMA_H
#define GPUSPY_COMMON_SCHEMA_H

#include <stddef.h>

/* A site's, a kind's and a folded kind's counters, in the order written. */
#define SCHEMA_COUNTERS(X)                                                                         \
	X(SC_LIVE_BYTES, "live_bytes")                                                             \
	X(SC_LIVE_ALLOCATIONS, "live_allocations")                                                 \
	X(SC_PEAK_BYTES, "peak_bytes")                                                             \
	X(SC_ALLOCATED_BYTES, "allocated_bytes")                                                   \
	X(SC_ALLOCATIONS, "allocations")                                                           \
	X(SC_FREED_BYTES, "freed_bytes")                                                           \
	X(SC_FREES, "frees")

/* An entry of "sites" (its counters are SCHEMA_COUNTERS, after DOOR). */
#define SCHEMA_SITE(X)                                                                             \
	X(SS_ID, "id")                                                                             \
	X(SS_KIND, "kind")                                                                         \
	X(SS_API, "api")                                                                           \
	X(SS_DOOR, "door")                                                                         \
	X(SS_GROWING, "growing")                                                                   \
	X(SS_FIRST_SEQ, "first_seq")                                                               \
	X(SS_GROWTH, "growth")                                                                     \
	X(SS_FRAMES, "frames")                                                                     \
	X(SS_PYTHON, "python")

/* An entry of a site's "frames", innermost first. */
#define SCHEMA_FRAME(X)                                                                            \
	X(SF_MODULE, "module")                                                                     \
	X(SF_OFFSET, "offset")                                                                     \
	X(SF_SYMBOL, "symbol")

/* An entry of a site's "python", and of an event's PyTorch line's
 * "frames". */
#define SCHEMA_PYFRAME(X)                                                                          \
	X(SP_FILE, "file")                                                                         \
	X(SP_FUNCTION, "function")                                                                 \
	X(SP_LINE, "line")

/* A "growth": the rule's verdict (common/trend.h) and, for a site, what
 * it was judged on ("by", with a framework's counter's "framework" and
 * "place"). */
#define SCHEMA_GROWTH(X)                                                                           \
	X(SG_SHAPE, "shape")                                                                       \
	X(SG_SINCE_S, "since_s")                                                                   \
	X(SG_RATE_BYTES_PER_S, "rate_bytes_per_s")                                                 \
	X(SG_STOPPED, "stopped")                                                                   \
	X(SG_UNTIL_S, "until_s")                                                                   \
	X(SG_BY, "by")                                                                             \
	X(SG_FRAMEWORK, "framework")                                                               \
	X(SG_PLACE, "place")

/* The values of a site's growth.by. */
#define SCHEMA_BY(X)                                                                               \
	X(SB_SAMPLES, "samples")                                                                   \
	X(SB_MARKS, "marks")                                                                       \
	X(SB_FRAMEWORK, "framework")

/* "frameworks": {"time", "counters": {FW: {PLACE: {COUNTER: N}}},
 * "growth": {FW: {PLACE: {"counter", the members of a growth, "site"}}}};
 * a PLACE is a CUDA ordinal or "host". */
#define SCHEMA_FRAMEWORKS(X)                                                                       \
	X(SW_TIME, "time")                                                                         \
	X(SW_COUNTERS, "counters")                                                                 \
	X(SW_GROWTH, "growth")                                                                     \
	X(SW_COUNTER, "counter")                                                                   \
	X(SW_SITE, "site")                                                                         \
	X(SW_HOST, "host")

/* An out-of-memory event's "torch": its per-line figures, "lines" (the
 * lines pinning its segments) and "holders" (those holding most), each
 * an array of {"frames": [a Python frame...], "bytes", "blocks", "role"}.
 * torch_view.py writes them, inside the process. */
#define SCHEMA_LINES(X)                                                                            \
	X(SL_LINES, "lines")                                                                       \
	X(SL_HOLDERS, "holders")                                                                   \
	X(SL_FRAMES, "frames")                                                                     \
	X(SL_BYTES, "bytes")                                                                       \
	X(SL_BLOCKS, "blocks")                                                                     \
	X(SL_ROLE, "role")

/* What only the exit report says: "allocations" (an array of
 * SCHEMA_ALLOCATION), "allocations_left_out" ({"allocations": N,
 * "bytes": N}: those beyond the listed), "trace" (SCHEMA_TRACE). */
#define SCHEMA_EXIT(X)                                                                             \
	X(SR_ALLOCATIONS, "allocations")                                                           \
	X(SR_LEFT_OUT, "allocations_left_out")                                                     \
	X(SR_TRACE, "trace")                                                                       \
	X(SR_BYTES, "bytes")

/* A live allocation of GPU memory at exit: "address" absent for VMM
 * memory that is not mapped, "stream" only for a stream-ordered one. */
#define SCHEMA_ALLOCATION(X)                                                                       \
	X(SA_ADDRESS, "address")                                                                   \
	X(SA_SIZE, "size")                                                                         \
	X(SA_KIND, "kind")                                                                         \
	X(SA_DEVICE, "device")                                                                     \
	X(SA_SITE, "site")                                                                         \
	X(SA_STREAM, "stream")

/* "trace" (GPUSPY_TRACE): its capacity, the events recorded since the
 * start, those not listed, and "events", oldest first. */
#define SCHEMA_TRACE(X)                                                                            \
	X(ST_CAPACITY, "capacity")                                                                 \
	X(ST_RECORDED, "recorded")                                                                 \
	X(ST_DROPPED, "dropped")                                                                   \
	X(ST_EVENTS, "events")

/* An event of the trace: "address" for an allocation or a free of a
 * pointer (not of a VMM handle), "free_bytes" for an out-of-memory one. */
#define SCHEMA_EVENT(X)                                                                            \
	X(SE_ACTION, "action")                                                                     \
	X(SE_TIME, "time")                                                                         \
	X(SE_ADDRESS, "address")                                                                   \
	X(SE_SIZE, "size")                                                                         \
	X(SE_KIND, "kind")                                                                         \
	X(SE_DEVICE, "device")                                                                     \
	X(SE_SITE, "site")                                                                         \
	X(SE_STREAM, "stream")                                                                     \
	X(SE_FREE_BYTES, "free_bytes")

/* The values of an event's "action". */
#define SCHEMA_ACTION(X)                                                                           \
	X(SX_ALLOC, "alloc")                                                                       \
	X(SX_FREE, "free")                                                                         \
	X(SX_OOM, "oom")

#define SCHEMA_ENUM(id, key) id,
enum schema_counter { SCHEMA_COUNTERS(SCHEMA_ENUM) SC_COUNT };
enum schema_site { SCHEMA_SITE(SCHEMA_ENUM) SS_COUNT };
enum schema_frame { SCHEMA_FRAME(SCHEMA_ENUM) SF_COUNT };
enum schema_pyframe { SCHEMA_PYFRAME(SCHEMA_ENUM) SP_COUNT };
enum schema_growth { SCHEMA_GROWTH(SCHEMA_ENUM) SG_COUNT };
enum schema_by { SCHEMA_BY(SCHEMA_ENUM) SB_COUNT };
enum schema_frameworks { SCHEMA_FRAMEWORKS(SCHEMA_ENUM) SW_COUNT };
enum schema_lines { SCHEMA_LINES(SCHEMA_ENUM) SL_COUNT };
enum schema_exit { SCHEMA_EXIT(SCHEMA_ENUM) SR_COUNT };
enum schema_allocation { SCHEMA_ALLOCATION(SCHEMA_ENUM) SA_COUNT };
enum schema_trace { SCHEMA_TRACE(SCHEMA_ENUM) ST_COUNT };
enum schema_event { SCHEMA_EVENT(SCHEMA_ENUM) SE_COUNT };
enum schema_action { SCHEMA_ACTION(SCHEMA_ENUM) SX_COUNT };
#undef SCHEMA_ENUM

extern const char *const schema_counter_key[SC_COUNT];
extern const char *const schema_site_key[SS_COUNT];
extern const char *const schema_frame_key[SF_COUNT];
extern const char *const schema_pyframe_key[SP_COUNT];
extern const char *const schema_growth_key[SG_COUNT];
extern const char *const schema_by_name[SB_COUNT];
extern const char *const schema_frameworks_key[SW_COUNT];
extern const char *const schema_lines_key[SL_COUNT];
extern const char *const schema_exit_key[SR_COUNT];
extern const char *const schema_allocation_key[SA_COUNT];
extern const char *const schema_trace_key[ST_COUNT];
extern const char *const schema_event_key[SE_COUNT];
extern const char *const schema_action_name[SX_COUNT];

/* The counters V (indexed by enum schema_counter) as JSON members,
 * without braces, into BUF of SIZE: "live_bytes": 1, ..., "frees": 0.
 * Returns snprintf's. */
int schema_counters_json(char *buf, size_t size, const long long v[SC_COUNT]);

/* The index of NAME in TABLE of N entries, or -1. */
int schema_parse(const char *const *table, size_t n, const char *name);

#endif
