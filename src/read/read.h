/* SPDX-License-Identifier: MIT */
/*
 * gpuspy_read: the part of the CLI that reads what libgpuspy wrote.
 *
 * Loading is strict: a report is either fully valid "gpuspy-process/1" or
 * refused with one message that names the file.  Everything after loading
 * (symbolizing, merging, printing) may then trust the data model below, and
 * never has to check a type again.
 *
 * Functions return 0 or -errno; those that can fail on input fill a
 * struct rd_error with a single line "FILE: what is wrong".
 */
#ifndef GPUSPY_CLI_READ_H
#define GPUSPY_CLI_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* One line, without the "gpuspy: " prefix and without a newline; control
 * characters from file names or file contents are replaced by '?', so that
 * printing it can never produce a second line. */
struct rd_error {
	char msg[1024];
};

void rd_error_set(struct rd_error *err, const char *file, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The memory kinds of a report, in the order of "kinds". */
enum rd_kind {
	RD_KIND_DEVICE,
	RD_KIND_MANAGED,
	RD_KIND_VMM,
	RD_KIND_PINNED,
	RD_KIND_COUNT,
};

const char *rd_kind_name(enum rd_kind kind);

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

struct rd_site {
	int64_t id; /* sites[].id; -1 when the report gave none */
	enum rd_kind kind;
	char *api;
	struct rd_counters c;
	struct rd_frame *frames;
	size_t nframes;
	struct rd_pyframe *python; /* innermost first; NULL when none */
	size_t npython;
	bool growing; /* its live bytes keep rising (docs/format.md) */
};

/* The process's "python" object: present when an interpreter was found. */
struct rd_python {
	bool present;
	bool supported;
	char *version;
	char *note; /* NULL when absent */
};

struct rd_process;

/* An allocation that failed for want of memory (docs/format.md, "oom-N.json"):
 * an entry of a report's "oom", or an oom-N.json's own "event". */
struct rd_oom {
	int64_t number; /* 1, 2, ... in the process */
	double time;	/* seconds since the epoch */
	char *api;
	enum rd_kind kind;
	int64_t requested_bytes;
	int64_t device;	     /* -1: unknown */
	int64_t live_bytes;  /* GPU memory gpuspy tracked as live */
	int64_t free_bytes;  /* -1: unknown */
	int64_t total_bytes; /* -1: unknown */
	int64_t site;	     /* a sites[].id of the report that holds it */
	char *file;	     /* "oom-N.json", NULL when none was written */
	/* The oom-N.json FILE, read from the process's directory when it is
	 * there (load_path; NULL otherwise, and always NULL for an "event"):
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
};

/* "marks": gpuspy_mark() calls, oldest first, each with what every site
 * held live at that moment (sites reuse rd_peak_site: id, index, bytes). */
struct rd_mark {
	double time;
	char *label;
	int64_t live_bytes; /* GPU memory: device + managed + vmm */
	struct rd_peak_site *sites;
	size_t nsites;
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

struct rd_process {
	char *path; /* the process directory, or the file when given one */
	char *file; /* the file read: report.json, oom-N.json, snapshot.json, ... */
	char *host;
	int64_t pid;
	char *exe;     /* the main executable's path, or NULL */
	int64_t depth; /* native frames taken per site; -1 when not said */
	char **command;
	size_t ncommand;
	bool complete;
	int64_t leaked_bytes;
	int64_t leaked_allocations;
	int64_t peak_bytes;
	struct rd_counters kinds[RD_KIND_COUNT];
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
	struct rd_at_peak at_peak;
	struct rd_outside outside;
	struct rd_device *devices; /* "devices", in file order; none when absent */
	size_t ndevices;
	/* what the run was: settings a diff puts side by side */
	char *version;	    /* gpuspy_version; NULL when not said */
	struct rd_env *env; /* "environment", in file order */
	size_t nenv;
	int64_t rank;		/* RANK, else LOCAL_RANK, from "environment"; -1: none */
	int64_t driver_version; /* "cuda.driver_version"; 0: unknown */
	struct rd_gpu *gpus;	/* "cuda.devices" */
	size_t ngpus;
	struct rd_mark *marks;
	size_t nmarks;
	struct rd_torch torch; /* from torch.json beside the report */
	/* device and inode of the report read, so that a process named twice
	 * (a run directory and one of its process directories) counts once */
	dev_t dev;
	ino_t ino;
};

struct rd_process_list {
	struct rd_process **items;
	size_t n;
	size_t cap;
};

/* util.c */

/* The last component of PATH ("a/b.py" -> "b.py"); PATH when it ends in '/'. */
const char *util_basename(const char *path);
/* *A += B; false (and *A undefined) when the sum overflows 64 bits. */
bool util_add(int64_t *a, int64_t b);
/* *A += B, stopping at INT64_MAX or INT64_MIN rather than wrap: for sums
 * of figures a report need not keep consistent. */
void util_add_sat(int64_t *a, int64_t b);

/* A size as people write it: "1048576", "512K", "1.5M", "2GiB", "64kb"
 * (K, M, G, T are powers of 1024; a trailing "B" or "iB" is allowed).
 * -EINVAL for anything else, negative or beyond INT64_MAX. */
int util_parse_size(const char *s, int64_t *out);
/* A plain decimal count, 0 or more. */
int util_parse_count(const char *s, int64_t *out);

/* "DIR/NAME" without doubling a trailing slash; NULL on out-of-memory. */
char *util_path_join(const char *dir, const char *name);
/* Collapse "//" and "/./" in place, and "dir/../" too when DOTDOT: that is
 * only lexical, so wrong across a symbolic link to a directory; fine for
 * source file names from debug info, not for a directory given by a user. */
void util_path_normalize(char *path, bool dotdot);
/* Replace control characters (C0, DEL, C1) in place by '?'. */
void util_sanitize(char *s);
/* Write S to OUT with control characters replaced by '?'. */
void util_put_clean(FILE *out, const char *s);

/* load.c */

/* Read and validate one report.json, oom-N.json or snapshot; DISPLAY_PATH becomes
 * the process's "path".  The oom entries' snapshots are not read (see
 * load_snapshots).  -EINVAL (bad content), -errno (cannot read), -ENOMEM. */
int load_process_file(const char *file, const char *display_path, struct rd_process **out,
		      struct rd_error *err);

/* Read, for each of P's oom entries that names a file, that oom-N.json
 * from the directory of P's report, when it is there: it must be a valid
 * report of that very event. */
int load_snapshots(struct rd_process *p, struct rd_error *err);

/* PATH is a report file (report.json, oom-N.json, snapshot.json,
 * snapshot-N.json), a process directory or a run directory.  A process
 * directory without report.json (a process killed, or crashed) is read
 * from the newer, by their own end_time, of its snapshot.json and its
 * highest-numbered oom-N.json (snapshot.json on a tie, or when either time
 * is unknown).  Appends every process found (run directories in version
 * order of their entries), each with its snapshots. */
int load_path(struct rd_process_list *list, const char *path, struct rd_error *err);

void process_free(struct rd_process *p);
void process_list_clear(struct rd_process_list *list);

/* Whether DIR directly holds at least one <process>/report.json,
 * <process>/snapshot.json or <process>/oom-N.json. */
bool load_dir_has_reports(const char *dir);

/* symbolize.c */

struct symbolizer;
struct sym_module;

struct sym_info {
	char *function; /* demangled; NULL when unknown */
	char *file;	/* NULL when unknown */
	int64_t line;	/* 0 when unknown */
};

int symbolizer_new(struct symbolizer **out);
void symbolizer_free(struct symbolizer *s);

/* The module at PATH, opened once per path; NULL when it cannot be read or
 * when both build-ids are known and differ (a rebuilt binary would give
 * wrong names, and none is better than a wrong one). */
struct sym_module *symbolizer_module(struct symbolizer *s, const char *path, const char *build_id);

/* Fill INFO for the return address at OFFSET in MOD (which may be NULL);
 * FALLBACK_SYMBOL is used when no function is found.  -ENOMEM only. */
int symbolize_frame(struct sym_module *mod, uint64_t offset, const char *fallback_symbol,
		    struct sym_info *info);

void sym_info_clear(struct sym_info *info);

/* Demangled copy of NAME (a copy of NAME itself when it is not mangled or
 * demangling is unavailable); NULL on out-of-memory. */
char *symbolize_demangle(const char *name);

/* classify.c: what a frame means to the person reading the report.  The
 * rules live in tables there, each with its reason. */

/* Why a native frame is noise: the same for every call site of its kind,
 * so it tells nothing about which of them to look at. */
enum rd_noise {
	NOISE_NONE,
	NOISE_GPUSPY,	 /* gpuspy itself */
	NOISE_CUDA,	 /* libcuda, libcudart (shared or linked in) */
	NOISE_START,	 /* what runs main or a thread */
	NOISE_PYTHON,	 /* the CPython interpreter's own machinery */
	NOISE_FFI,	 /* ctypes and libffi */
	NOISE_ALLOCATOR, /* a framework's caching allocator */
};

/* PATH: the module's path (NULL when the frame lies in no module);
 * MAIN_EXE: whether that module is the process's executable; FUNCTION:
 * the symbolized name, NULL when unknown. */
enum rd_noise classify_noise(const char *path, bool main_exe, const char *function);

/* Whether the module (a basename) is CPython's: libpython*, python3*. */
bool classify_python_module(const char *module);

struct rd_report_frame;

/* The label of memory a library holds rather than its caller (docs/format.md,
 * "library"): "cuBLAS", ..., CLASSIFY_CUDA_CONTEXT, or NULL for user code.
 * FRAMES must carry their noise already. */
const char *classify_site_library(const struct rd_report_frame *frames, size_t nframes);

/* The framework allocator whose pool segment an allocation by API is
 * (docs/format.md, "pool"), judged on one native frame of its stack, noise
 * or not (PATH and FUNCTION as classify_noise takes them): "PyTorch caching
 * allocator", "CuPy memory pool", "XLA allocator", or NULL.  The innermost
 * frame with a label decides for the site. */
const char *classify_pool(const char *api, const char *path, const char *function);

/* The I-th pool label in a fixed order, NULL past the last; the one-line
 * hint for a label's sites (without the label), NULL for another string. */
const char *classify_pool_label(size_t i);
const char *classify_pool_hint(const char *label);

/* Whether a Python source file is the user's own code: not the standard
 * library, not an installed package. */
bool classify_user_file(const char *file);

/* The label of a site whose every frame is the CUDA driver or runtime. */
#define CLASSIFY_CUDA_CONTEXT "CUDA runtime/context"

/* report.c */

struct rd_report_frame {
	char *function;
	char *module; /* basename; NULL when the frame lies in no module */
	char *file;
	int64_t line;
	uint64_t offset;
	char *build_id;	     /* NULL when unknown */
	bool python;	     /* a Python frame: function, file and line only */
	bool user;	     /* Python: a file of the user's code */
	enum rd_noise noise; /* native only */
};

/* What a merged site, or a process, is measured by when processes are
 * put side by side (docs/format.md, "spread"). */
enum rd_report_metric {
	REPORT_LEAKED,	    /* bytes live at exit (at the moment of the file read) */
	REPORT_PEAK,	    /* peak bytes */
	REPORT_ALLOCATIONS, /* allocations made */
	REPORT_METRICS,
};

/* The spread of one metric over every process of a report: a process
 * without the site counts as 0. */
struct rd_report_spread {
	int64_t min, median, max;
	ssize_t outlier; /* index into report.procs; -1: none */
};

struct rd_report_site {
	char *key;
	enum rd_kind kind;
	char *api;
	const char *library; /* static label, NULL for user code */
	const char *pool;    /* static label, NULL when not a pool segment */
	bool growing;	     /* growing in any process */
	int64_t processes;
	struct rd_counters c;
	/* live at each process's peak (its "at_peak" copy), summed; 0 when none */
	int64_t at_peak_bytes;
	struct rd_report_frame *frames;
	size_t nframes;
	size_t last_process; /* merge bookkeeping: 1 + index of the last process counted */
	/* Of a site of report.sites only (NULL elsewhere): what each process
	 * contributed, per_proc[METRIC][process index], 0 for a process
	 * without the site; and the spread of each metric over them. */
	int64_t *per_proc[REPORT_METRICS];
	struct rd_report_spread spread[REPORT_METRICS];
};

/* How many of the sites live at an out-of-memory event a report shows. */
#define REPORT_OOM_TOP 5

/* An out-of-memory event, with what the reports say of its moment. */
struct rd_report_oom {
	const struct rd_process *proc; /* the process whose report holds it */
	size_t proc_index;	       /* in report.procs */
	const struct rd_oom *ev;
	int64_t untracked_bytes; /* total - free - live, >= 0; -1: unknown */
	/* The site that made the request, symbolized (key, kind, api, frames,
	 * library, pool; its counters are those of the report it comes from);
	 * NULL when the report is not at hand. */
	struct rd_report_site *requested;
	/* The sites (merged by key) with most live bytes of the event's kind
	 * of memory (pinned host memory for a pinned request, else device,
	 * managed and VMM) in the event's oom-N.json, most first; none when
	 * that file was not read. */
	struct rd_report_site **top;
	size_t ntop;
};

/* torch.c: the PyTorch view of the processes that have one, merged. */
struct rd_report_tsite {
	char *key;			/* "file-basename!function:line;..." innermost first */
	struct rd_report_frame *frames; /* Python frames, innermost first */
	size_t nframes;
	int64_t processes;
	int64_t live_bytes, live_blocks, peak_bytes;
	bool growing;
	size_t last_process; /* merge bookkeeping: 1 + index of the last one counted */
};
struct rd_report_torch {
	bool present;
	bool final; /* every process's view was sampled at its exit */
	size_t processes;
	int64_t reserved_bytes, allocated_bytes; /* the pools, summed */
	int64_t live_bytes, live_blocks;
	struct rd_report_tsite **sites; /* by live bytes, then peak, descending */
	size_t nsites;
};

struct rd_report {
	struct rd_process **procs; /* borrowed from the process list */
	size_t nprocs;
	size_t incomplete;
	size_t partial; /* processes read from an oom-N.json or a snapshot */
	int64_t leaked_bytes;
	int64_t leaked_allocations;
	int64_t peak_bytes;
	int64_t pinned_leaked_bytes;
	int64_t pinned_leaked_allocations;
	int64_t pinned_peak_bytes;
	int64_t untracked_frees;
	/* "at_peak" summed over the processes that have one */
	bool at_peak; /* whether any process has one */
	int64_t at_peak_bytes;
	struct rd_peak_device *at_peak_devices; /* by device ordinal */
	size_t at_peak_ndevices;
	struct rd_report_site **sites; /* sorted: leaked_bytes, peak_bytes desc */
	size_t nsites;
	struct rd_report_oom *ooms; /* every process's, by time */
	size_t nooms;
	int64_t oom_dropped;
	/* each process's own totals, totals[METRIC][process index]: its
	 * leaked and peak bytes, its allocations of every kind; and their
	 * spread */
	int64_t *totals[REPORT_METRICS];
	struct rd_report_spread spread[REPORT_METRICS];
	bool several_hosts; /* the processes are not all on one host */
	struct rd_report_torch torch;
	/* site_of[P][I]: the merged site that process P's sites[I] went into */
	struct rd_report_site ***site_of;
	/* key -> site, open addressing */
	struct rd_report_site **table;
	size_t table_size;
};

/* Symbolize and merge every process of LIST (S may be NULL: no
 * symbolization, only the processes' own symbols).  -EOVERFLOW names the
 * file whose counters no longer fit in 64 bits. */
int report_build(struct rd_report *r, const struct rd_process_list *list, struct symbolizer *s,
		 struct rd_error *err);
void report_clear(struct rd_report *r);

/* TOP limits every list; 0 means all. */
int report_print_json(const struct rd_report *r, FILE *out, size_t top);
int report_print_text(const struct rd_report *r, FILE *out, size_t top);

/* "1.5 MiB"; BUF of at least 32 bytes. */
const char *report_human_size(int64_t bytes, char *buf, size_t size);

/* The key of a site: api, then per frame that is not noise
 * "module!function" or "module+0xOFFSET" (native), "file-basename!function"
 * (Python).  Exposed for the tests. */
char *report_site_key(const char *api, const struct rd_report_frame *frames, size_t nframes);

/* The index of the frame a person should look at first (docs/format.md,
 * "headline"), or -1 when the site has no frames. */
ssize_t report_site_headline(const struct rd_report_site *s);

/* "function (module) file:line" and a newline, as the text report prints
 * a frame. */
void report_print_frame(FILE *out, const struct rd_report_frame *f);

struct json_t;

/* A frame as "gpuspy-report/1" writes it; NULL on out-of-memory. */
struct json_t *report_frame_json(const struct rd_report_frame *f);

/* The spread of VALUES[0..N-1], one per process, of METRIC: min, median
 * (of an even count, the mean of the two middle values, rounded down), max,
 * and the outlier (docs/format.md, "spread"): with at least 3 values, the
 * one farthest from the median (the first of those tied), when it lies at
 * least 1 MiB (2 allocations) and at least half the median away from it.
 * -ENOMEM only. */
int report_spread(const int64_t *values, size_t n, enum rd_report_metric metric,
		  struct rd_report_spread *out);

/* The same for site S of R (one of R->sites) over all R->nprocs processes. */
int report_site_spread(const struct rd_report *r, const struct rd_report_site *s,
		       enum rd_report_metric metric, struct rd_report_spread *out);

/* "leaked", "peak", "allocations": the JSON names. */
const char *report_metric_name(enum rd_report_metric metric);

/* A value of METRIC for people: "1.5 MiB", or a count; BUF of 32 bytes. */
const char *report_metric_value(enum rd_report_metric metric, int64_t v, char *buf, size_t size);

/* Room for report_process_name: "rank N on " and a host name. */
#define REPORT_NAME_SIZE 320

/* Process I of R for people: "rank N" (its RANK, else LOCAL_RANK), else
 * "pid N"; then " on HOST" when the processes are on several hosts.
 * Control characters are replaced by '?'. */
const char *report_process_name(const struct rd_report *r, size_t i, char *buf, size_t size);

/* "min A, median B, max C", then "; outlier: NAME (V)" when there is one
 * (V: its value in VALUES, indexed like R->procs); no newline. */
void report_print_spread(FILE *out, const struct rd_report *r, enum rd_report_metric metric,
			 const struct rd_report_spread *sp, const int64_t *values);

/* {"min", "median", "max", "outlier"} ("outlier" absent when none); NULL
 * on out-of-memory. */
struct json_t *report_spread_json(const struct rd_report_spread *sp);
/* {"leaked": SPREAD, "peak": SPREAD, "allocations": SPREAD} */
struct json_t *report_spreads_json(const struct rd_report_spread *sp);

/* torch.c */
int report_torch_build(struct rd_report_torch *t, struct rd_process *const *procs, size_t n);
void report_torch_clear(struct rd_report_torch *t);
/* The frame to look at first: the innermost of the user's code; -1 when
 * the blocks were allocated before the view started (no frames). */
ssize_t report_tsite_headline(const struct rd_report_tsite *s);
void report_torch_print_summary(FILE *out, const struct rd_report_torch *t);
void report_torch_print_text(FILE *out, const struct rd_report_torch *t, size_t top);
/* "torch" of gpuspy-report/1; NULL when no process has the view. */
struct json_t *report_torch_json(const struct rd_report_torch *t, size_t top);

#endif
