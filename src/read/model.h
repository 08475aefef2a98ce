/* SPDX-License-Identifier: MIT */
/*
 * The model of what libgpuspy wrote, as gpuspy_read holds it.
 *
 * Loading is strict: a report is either fully valid "gpuspy-process/1" or
 * refused with one message that names the file.  Everything after loading
 * (symbolizing, merging, printing) may then trust this model, and never
 * has to check a type again.
 *
 * Functions return 0 or -errno; those that can fail on input fill a
 * struct rd_error with a single line "FILE: what is wrong".
 */
#ifndef GPUSPY_READ_MODEL_H
#define GPUSPY_READ_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "names.h"

/* One line, without the "gpuspy: " prefix and without a newline; control
 * characters from file names or file contents are replaced by '?', so that
 * printing it can never produce a second line. */
struct rd_error {
	char msg[1024];
};

void rd_error_set(struct rd_error *err, const char *file, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The memory kinds of a report, in the order of "kinds", are names.h's
 * enum gs_kind; the tests of the reading library know them as RD_KIND_*. */
#define RD_KIND_DEVICE	GS_KIND_DEVICE
#define RD_KIND_MANAGED GS_KIND_MANAGED
#define RD_KIND_VMM	GS_KIND_VMM
#define RD_KIND_PINNED	GS_KIND_PINNED

struct rd_counters {
	int64_t live_bytes;
	int64_t live_allocations;
	int64_t peak_bytes;
	int64_t allocated_bytes;
	int64_t allocations;
	int64_t freed_bytes;
	int64_t frees;
};

struct rd_module {
	char *path;
	char *build_id; /* lower-case hex, "" when the module has none */
	uint64_t base;
};

struct rd_frame {
	int64_t module;	 /* index into modules, or -1 */
	uint64_t offset; /* from the module's base; absolute when module is -1 */
	char *symbol;	 /* as the process named it, or NULL */
};

/* A Python frame of the allocating thread, as the process recorded it. */
struct rd_pyframe {
	char *file;
	char *function;
	int64_t line; /* 0 when unknown */
};

/* What the growth rule said of a series, as the process recorded it
 * ("growth", docs/format.md): PRESENT when it was flagged once; STATE is
 * enum trend_state (src/common/trend.h), SHAPE enum trend_shape.  BY is
 * enum rd_verdict_by; FW and PLACE (a CUDA ordinal or GS_FW_HOST) say
 * which framework's allocated counter, for RD_BY_FRAMEWORK. */
enum rd_verdict_by { RD_BY_SAMPLES, RD_BY_MARKS, RD_BY_FRAMEWORK };
struct rd_verdict {
	bool present;
	int state, shape;
	double since_s, rate_bps, until_s;
	int by, fw, place;
};

struct rd_site {
	int64_t id; /* sites[].id; -1 when the report gave none */
	enum gs_kind kind;
	char *api;
	struct rd_counters c;
	struct rd_frame *frames;
	size_t nframes;
	struct rd_pyframe *python; /* innermost first; NULL when none */
	size_t npython;
	bool growing;		  /* its live bytes keep rising (docs/format.md) */
	struct rd_verdict growth; /* absent from files of gpuspy before 0.4 */
};

/* The process's "python" object: present when an interpreter was found. */
struct rd_python {
	bool present;
	bool supported;
	char *version;
	char *note; /* NULL when absent */
};

struct rd_process;

/* An out-of-memory event's other process on the device (NVML). */
struct rd_oom_other {
	int64_t pid;
	char *name; /* NULL: unknown */
	int64_t used_bytes;
};

/* PyTorch's figures when it raised OutOfMemoryError, and the lines whose
 * live blocks pin its segments (frames as torch.json's). */
struct rd_oom_torch_line {
	struct rd_pyframe *frames;
	size_t nframes;
	int64_t bytes, blocks;
	char *role; /* what its stack says it is ("weights", ...), NULL: nothing */
};
struct rd_oom_torch {
	int64_t requested_bytes, allocated_bytes, reserved_bytes;
	int64_t largest_free_bytes;	 /* -1: absent */
	struct rd_oom_torch_line *lines; /* pinning the segments that hold free memory */
	size_t nlines;
	struct rd_oom_torch_line *holders; /* holding most */
	size_t nholders;
};

/* An allocation that failed for want of memory (docs/format.md, "oom-N.json"):
 * an entry of a report's "oom", or an oom-N.json's own "event". */
struct rd_oom {
	int64_t number; /* 1, 2, ... in the process */
	double time;	/* seconds since the epoch */
	char *api;
	enum gs_kind kind;
	int64_t requested_bytes;
	int64_t device;	     /* -1: unknown */
	int64_t live_bytes;  /* GPU memory gpuspy tracked as live */
	int64_t free_bytes;  /* -1: unknown */
	int64_t total_bytes; /* -1: unknown */
	int64_t site;	     /* a sites[].id of the report that holds it */
	char *file;	     /* "oom-N.json", NULL when none was written */
	/* What the verdict is judged on (docs/format.md, "The verdict"),
	 * each absent from older files: */
	int64_t device_live_bytes; /* tracked on that device; -1: absent */
	int64_t limit_bytes;	   /* GPUSPY_LIMIT; 0: none */
	bool capped;		   /* the limit refused it */
	char *pool;		   /* the pool's label, NULL: none */
	int64_t pool_bytes;
	bool pool_requested; /* the request was the pool's */
	char *library;	     /* the library holding most, NULL: none */
	int64_t library_bytes, library_top_bytes;
	int64_t graph_bytes;  /* 0 when absent */
	int64_t others_bytes; /* -1: absent (unknown) */
	struct rd_oom_other *others;
	size_t nothers;
	struct rd_oom_torch *torch; /* NULL: absent */
	/* The oom-N.json FILE, read from the process's directory when it is
	 * there (discover_path; NULL otherwise, and always NULL for an "event"):
	 * the report of that moment.  It may be the process itself, when the
	 * process's report is that very file. */
	struct rd_process *snapshot;
};

/* GPU memory of one device ordinal (-1: unknown) in "at_peak". */
struct rd_peak_device {
	int64_t device;
	int64_t live_bytes;
};

/* A site's live memory in "at_peak". */
struct rd_peak_site {
	int64_t site; /* a sites[].id of the report */
	size_t index; /* that site's index in the process's sites */
	int64_t live_bytes;
};

/* The process's "at_peak" (docs/format.md, "What was live at the peak"):
 * the last copy of the live GPU memory, per device and per site, taken
 * within 1% of the peak. */
/* The "outside" view of a snapshot or post-mortem: what NVML said each GPU
 * and each process on it used (docs/format.md). */
struct rd_outside_proc {
	int64_t pid;
	int64_t used_bytes;
};
struct rd_outside_gpu {
	int64_t index;
	int64_t total_bytes, used_bytes;
	struct rd_outside_proc *procs;
	size_t nprocs;
};
struct rd_outside {
	struct rd_outside_gpu *gpus;
	size_t ngpus;
	bool present;
};

/* The frameworks' own counters at the document's moment ("frameworks",
 * docs/format.md): V[framework][place][counter] where HAS says so
 * (names.h: enum gs_fw, a CUDA ordinal or GS_FW_HOST, enum gs_fw_counter). */
struct rd_frameworks {
	bool present;
	double time; /* when the frameworks were asked, seconds since the epoch */
	bool has[GS_FW_COUNT][GS_FW_PLACES][GS_FWC_COUNT];
	int64_t v[GS_FW_COUNT][GS_FW_PLACES][GS_FWC_COUNT];
	/* "growth": the rule's verdict on each framework's allocated counter
	 * per place, and the sites[].id of its pool's segments (-1: none) */
	struct rd_verdict growth[GS_FW_COUNT][GS_FW_PLACES];
	int64_t growth_site[GS_FW_COUNT][GS_FW_PLACES];
};

/* "calls" (docs/format.md, "Which doors fired"): calls per door and per
 * family of entry points, in file order. */
struct rd_count {
	char *name;
	int64_t value;
};

/* "graph" (docs/format.md, "CUDA graph memory"): graph memory nodes as
 * gpuspy counted them, and each device's graph-memory attributes as the
 * driver gave them. */
struct rd_graph_device {
	int64_t device;
	int64_t used_current, used_high, reserved_current, reserved_high;
	double as_of; /* when the driver said so; -1 when not said */
};
struct rd_graph {
	bool present;
	int64_t alloc_nodes, alloc_node_bytes, reserved_bytes, launches;
	int64_t live_bytes, live_allocations, peak_bytes, trims;
	struct rd_graph_device *devices;
	size_t ndevices;
};

/* The "snapshot" of a snapshot.json (PERIODIC: samples, interval_us) or
 * of an on-demand snapshot-N.json (number, label). */
struct rd_snapshot {
	bool present;
	bool periodic;
	int64_t samples;     /* periodic: the samples taken so far */
	int64_t interval_us; /* periodic: GPUSPY_INTERVAL */
	int64_t number;	     /* on demand: N of snapshot-N.json */
	char *label;	     /* on demand: NULL when none */
};

struct rd_at_peak {
	bool present;
	int64_t bytes;
	double time; /* seconds since the epoch */
	struct rd_peak_device *devices;
	size_t ndevices;
	struct rd_peak_site *sites;
	size_t nsites;
	int64_t folded_sites, folded_live_bytes; /* "folded": those not listed */
};

/* "folded": the sites of one kind a report sums rather than lists
 * (GPUSPY_MAX_SITES); peak_bytes is the sum of their own peaks. */
struct rd_folded {
	int64_t sites;
	int64_t growing;
	struct rd_counters c;
};

/* "marks": gpuspy_mark() calls, oldest first, each with what every site
 * held live at that moment (sites reuse rd_peak_site: id, index, bytes). */
struct rd_mark {
	double time;
	char *label;
	int64_t live_bytes; /* GPU memory: device + managed + vmm */
	struct rd_peak_site *sites;
	size_t nsites;
	int64_t folded_sites, folded_live_bytes; /* "folded": those not listed */
};

/* Live GPU memory of one device ordinal (-1: unknown) in "devices":
 * device, managed and vmm memory at the report's moment. */
struct rd_device {
	int64_t device;
	int64_t live_bytes;
	int64_t live_allocations;
};

/* One entry of "environment", or of "cuda.devices". */
struct rd_env {
	char *name;
	char *value;
};
struct rd_gpu {
	int64_t device;
	char *name;
	int64_t total_bytes; /* -1: unknown */
};

/* torch.json, the PyTorch view (docs/format.md, "gpuspy-torch/1"): the live
 * blocks of PyTorch's caching allocator by the Python stack that allocated
 * them, as last sampled. */
struct rd_torch_site {
	struct rd_pyframe *frames; /* innermost first; none: allocated before
					 * the view started */
	size_t nframes;
	int64_t live_bytes;
	int64_t live_blocks;
	int64_t peak_bytes; /* the most seen in a sample */
	bool growing;
	struct rd_verdict growth; /* present once the rule flagged it */
	/* "source": "segment": blocks from before PyTorch's history, named
	 * from gpuspy's record of the segment holding them (frames: that
	 * allocation's Python frames); segment_site is the id of its site in
	 * the process's reports */
	bool from_segment;
	int64_t segment_site;
};
struct rd_torch_device {
	int64_t device;
	int64_t reserved_bytes;	 /* the pool's segments */
	int64_t allocated_bytes; /* in live blocks */
};
struct rd_torch {
	bool present;
	bool final; /* sampled at the program's exit */
	double time;
	int64_t samples;
	struct rd_torch_device *devices;
	size_t ndevices;
	struct rd_torch_site *sites;
	size_t nsites;
};

/* A live allocation of GPU memory at exit (allocations.json's
 * "allocations", docs/format.md). */
struct rd_live_alloc {
	uint64_t address; /* 0: VMM memory that was not mapped */
	int64_t size;
	enum gs_kind kind; /* device, managed or vmm */
	int64_t device;	   /* -1: unknown */
	int64_t site;	   /* a sites[].id */
	/* that site's index in the process's sites; -1: a site the report
	 * folded (GPUSPY_MAX_SITES), named by none of its sites */
	ssize_t site_index;
	uint64_t stream; /* a stream-ordered allocation's; 0: none */
};

/* An event of the trace (GPUSPY_TRACE; "trace", docs/format.md). */
enum rd_trace_action { RD_TRACE_ALLOC, RD_TRACE_FREE, RD_TRACE_OOM };
struct rd_trace_event {
	enum rd_trace_action action;
	double time; /* seconds since the epoch */
	/* 0: none (an out-of-memory event, a VMM handle's allocation) */
	uint64_t address;
	int64_t size; /* the request, for an out-of-memory event */
	enum gs_kind kind;
	int64_t device; /* -1: unknown */
	int64_t site;
	ssize_t site_index; /* as rd_live_alloc's */
	uint64_t stream;
	int64_t free_bytes; /* RD_TRACE_OOM: the driver's free bytes, -1 unknown */
};

/* allocations.json beside an exit report (gpuspy-allocations/1): its
 * live allocations, and the trace (load_live.h). */
struct rd_live {
	bool present; /* the file was there */
	struct rd_live_alloc *allocs;
	size_t nallocs;
	/* "allocations_left_out": those beyond the listed; 0 when none */
	int64_t left_out, left_out_bytes;
	bool traced; /* "trace": GPUSPY_TRACE was on */
	int64_t capacity, recorded, dropped;
	struct rd_trace_event *events; /* oldest first */
	size_t nevents;
};

/* How a process read from its directory came to its last file
 * (docs/format.md, gpuspy-report/1 "state"). */
enum rd_state {
	RD_STATE_NONE,	 /* a report file named directly: not judged */
	RD_STATE_EXITED, /* its report.json was read */
	/* no report.json: the figures are those of the file read, its last
	 * snapshot (or out-of-memory post-mortem) */
	RD_STATE_KILLED, /* run.json: the command was killed by a signal */
	/* an earlier program of its pid, replaced by an exec: its directory
	 * is "<host>-<pid>.image<K>" (names.h) */
	RD_STATE_EXECED,
	RD_STATE_RUNNING,	/* its pid is alive on this host, started when it did */
	RD_STATE_MAYBE_RUNNING, /* its pid is alive here; when it started is unknown */
	RD_STATE_UNKNOWN,	/* killed or crashed: how is not known */
};

/* Whether a process of STATE did not exit: its figures are not at exit. */
static inline bool rd_state_not_exited(enum rd_state state)
{
	return state >= RD_STATE_KILLED;
}

/* run.json (docs/format.md, "gpuspy-run/1"): how the command of gpuspy run
 * ended. */
struct rd_run {
	bool present;
	char *id;	/* its run id, NULL when not said */
	char **command; /* what gpuspy run ran, NCOMMAND strings */
	size_t ncommand;
	char *host;
	int64_t pid;
	double start_time, end_time;
	int64_t exit_status; /* -1: killed by SIGNAL */
	int64_t signal;	     /* 0: it exited */
	/* the commit it was built from (names_commit_valid), and where gpuspy
	 * run found it: a variable of names_commit_env, or "git"; NULL when
	 * not said */
	char *commit, *commit_from;
};

struct rd_process {
	char *path; /* the process directory, or the file when given one */
	char *file; /* the file read: report.json, oom-N.json, snapshot.json, ... */
	char *host;
	int64_t pid;
	/* K of a directory "<host>-<pid>.image<K>": the K-th program of a
	 * pid that exec'd, replaced by the next (RD_STATE_EXECED); else 0 */
	unsigned image;
	char *exe;     /* the main executable's path, or NULL */
	char *run_id;  /* the run it belongs to ("run"), or NULL */
	int64_t depth; /* native frames taken per site; -1 when not said */
	char **command;
	size_t ncommand;
	bool complete;
	int64_t leaked_bytes;
	int64_t leaked_allocations;
	int64_t peak_bytes;
	struct rd_counters kinds[GS_KIND_COUNT];
	int64_t untracked_frees;
	double start_time; /* -1 when not said */
	double end_time;   /* -1 when not said; a snapshot's: its moment */
	struct rd_python python;
	/* out-of-memory events so far, in the order of the report */
	struct rd_oom *oom;
	size_t noom;
	int64_t oom_dropped;
	/* An oom-N.json carries the event it was written for: then the
	 * report is PARTIAL, the state at that event rather than at exit. */
	bool partial;
	struct rd_oom event;
	/* A snapshot carries "snapshot" (docs/format.md, "Over time"): then
	 * the report is PARTIAL too, the state at that moment. */
	struct rd_snapshot snapshot;
	struct rd_module *modules;
	size_t nmodules;
	struct rd_site *sites;
	size_t nsites;
	struct rd_folded folded[GS_KIND_COUNT]; /* sites not listed, per kind */
	int64_t folded_sites;			/* over the kinds */
	struct rd_at_peak at_peak;
	struct rd_outside outside;
	struct rd_frameworks frameworks;
	struct rd_count *calls; /* "calls"; none when absent */
	size_t ncalls;
	struct rd_graph graph;
	struct rd_device *devices; /* "devices", in file order; none when absent */
	size_t ndevices;
	int64_t limit_bytes; /* "limit": GPUSPY_LIMIT, 0: none */
	/* what the run was: settings a diff puts side by side */
	char *version;	    /* gpuspy_version; NULL when not said */
	struct rd_env *env; /* "environment", in file order */
	size_t nenv;
	int64_t rank;		/* RANK, else LOCAL_RANK, from "environment"; -1: none */
	int64_t local_rank;	/* LOCAL_RANK alone; -1: none */
	int64_t driver_version; /* "cuda.driver_version"; 0: unknown */
	struct rd_gpu *gpus;	/* "cuda.devices" */
	size_t ngpus;
	struct rd_mark *marks;
	size_t nmarks;
	struct rd_torch torch; /* from torch.json beside the report */
	/* How it came to the file read (discover_path): for a process that
	 * did not exit, its end_time is its last snapshot's */
	enum rd_state state;
	int64_t signal;	     /* RD_STATE_KILLED: the command's signal */
	double run_end_time; /* the end of its gpuspy run (run.json), -1: unknown */
	/* device and inode of the report read, so that a process named twice
	 * (a run directory and one of its process directories) counts once */
	dev_t dev;
	ino_t ino;
};

/* A process directory of a run directory that holds no report at all
 * (no report.json, snapshot.json nor oom-N.json): a process that started
 * using CUDA and was killed, or is still running, before its first
 * snapshot (its directory empty), or whose snapshots could not be written
 * (other files only). */
struct rd_unreported {
	char *path;
	char *host;
	int64_t pid;
	enum rd_state state; /* RD_STATE_KILLED, _EXECED, _MAYBE_RUNNING or _UNKNOWN */
	int64_t signal;
	unsigned image; /* as rd_process's */
	bool empty;	/* else it holds files, none of them a report */
};

/* A process of the paths read whose report, or a file its report names (an
 * oom-N.json, torch.json), was refused: cut short, torn, of another format,
 * or not readable (discover_path).  It is left out; the others are read,
 * and the command says so. */
struct rd_unreadable {
	char *path; /* the process directory, or the file when one was named */
	char *msg;  /* the refusal, one line: "FILE: what is wrong" */
	/* MSG less the PATH it begins with: "report.json: what is wrong"
	 * (a pointer into MSG; MSG itself when it does not begin so) */
	const char *reason;
	int error; /* -errno: -EINVAL (bad content), -EACCES, ... */
};

struct rd_process_list {
	struct rd_process **items;
	size_t n;
	size_t cap;
	struct rd_unreported *unreported;
	size_t nunreported;
	struct rd_unreadable *unreadable; /* in the order they were met */
	size_t nunreadable;
};

/*
 * What the reading library reads around rather than refuses (a journal's
 * torn last record dropped, a history left out): said through a function
 * the command registers at start-up, one sanitized line "FILE: what" per
 * call, without a newline; nothing is said before one is registered.
 * STRICT: what would be read around is refused instead (a history, then,
 * fails its loader as any bad file does).
 */
enum rd_notice {
	RD_NOTICE_DROPPED,  /* a part of a file dropped: a torn last record */
	RD_NOTICE_LEFT_OUT, /* a whole file refused and read around */
};
typedef void rd_notice_fn(enum rd_notice kind, const char *line);
void rd_read_setup(rd_notice_fn *notice, bool strict);
bool rd_read_strict(void);
void rd_notice(enum rd_notice kind, const char *file, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

void rd_process_free(struct rd_process *p);
/* Adds device D (D >= 0) to the sorted set DEVS of *N, of MAX at most. */
void rd_device_set_add(int64_t *devs, size_t *n, size_t max, int64_t d);
/* What NVML saw P hold on DEVICE (its "outside" view), -1: unknown. */
int64_t rd_process_nvml(const struct rd_process *p, int64_t device);
void rd_process_list_clear(struct rd_process_list *list);

#endif
