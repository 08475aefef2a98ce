/* SPDX-License-Identifier: MIT */
/*
 * The names of what libgpuspy writes and gpuspy reads (docs/format.md):
 * files of a process directory, format ids, memory kinds, and the
 * process directory <run dir>/<host>-<pid> itself.
 *
 * Both sides compile this: a name spelled twice is a file that one side
 * writes and the other never finds.  The preload library calls it from
 * its writer and report paths, so nothing here allocates, keeps state or
 * touches a stdio stream (snprintf into the caller's buffer only).
 */
#ifndef GPUSPY_COMMON_NAMES_H
#define GPUSPY_COMMON_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The files of a process directory. */
#define GS_FILE_REPORT_JSON "report.json"   /* at exit, gpuspy-process/1 */
#define GS_FILE_REPORT_TEXT "report.txt"    /* at exit, for people */
#define GS_FILE_SNAPSHOT    "snapshot.json" /* rewritten every GPUSPY_INTERVAL */
#define GS_FILE_TORCH	    "torch.json"    /* the PyTorch view, gpuspy-torch/1 */
#define GS_FILE_REQUEST	    ".request"	    /* the label `gpuspy snapshot` leaves */
#define GS_FILE_HISTORY	    "history.jsonl" /* live bytes over time, appended */
#define GS_FILE_PROMETHEUS  "prometheus"    /* the metrics endpoint's address */
/* at exit, gpuspy-allocations/1: every live allocation, and the trace */
#define GS_FILE_ALLOCATIONS "allocations.json"
/* In the run directory itself: how the command of `gpuspy run` ended. */
#define GS_FILE_RUN "run.json" /* gpuspy-run/1 */
/* Numbered files: "snapshot-N.json" (on demand), "oom-N.json" (post-mortems).
 * The formats take one unsigned; the prefixes are what a reader matches. */
#define GS_FILE_SNAPSHOT_N	  "snapshot-%u.json"
#define GS_FILE_SNAPSHOT_N_PREFIX "snapshot-"
#define GS_FILE_OOM_N		  "oom-%u.json"
#define GS_FILE_OOM_N_PREFIX	  "oom-"
#define GS_FILE_NUMBERED_SUFFIX	  ".json"

/* Format ids: the "format" member of each document. */
#define GS_FORMAT_PROCESS     "gpuspy-process/1"     /* report.json, snapshots, oom-N.json */
#define GS_FORMAT_TORCH	      "gpuspy-torch/1"	     /* torch.json */
#define GS_FORMAT_HISTORY     "gpuspy-history/1"     /* history.jsonl */
#define GS_FORMAT_ALLOCATIONS "gpuspy-allocations/1" /* allocations.json */
#define GS_FORMAT_RUN	      "gpuspy-run/1"	     /* run.json */
#define GS_FORMAT_REPORT      "gpuspy-report/1"	     /* gpuspy report --format json */
#define GS_FORMAT_MERGE	      "gpuspy-merge/1"	     /* gpuspy merge --format json */
#define GS_FORMAT_DIFF	      "gpuspy-diff/1"	     /* gpuspy diff --format json */

/* What an allocation occupies, GPU-resident kinds first; the names are
 * the keys of "kinds" and the values of a site's "kind", in this order. */
enum gs_kind {
	GS_KIND_DEVICE,
	GS_KIND_MANAGED,
	GS_KIND_VMM,	/* physical memory from cuMemCreate */
	GS_KIND_PINNED, /* page-locked host memory, reported apart */
	GS_KIND_COUNT,
};

extern const char *const names_kinds[GS_KIND_COUNT];

/* KIND's name, "?" for a value out of range. */
const char *names_kind(int kind);
/* The kind named S, or -EINVAL. */
int names_kind_parse(const char *s);

/*
 * The frameworks' own counters (docs/format.md, "fw"): which framework,
 * which of its counters, and where (a CUDA ordinal 0 to GS_FW_DEVICES - 1,
 * or "host" for a pinned host pool).  The names are the file's keys.
 */
enum gs_fw { GS_FW_PYTORCH, GS_FW_PADDLE, GS_FW_JAX, GS_FW_CUPY, GS_FW_COUNT };
enum gs_fw_counter {
	GS_FWC_ALLOCATED,      /* in the program's tensors or arrays */
	GS_FWC_RESERVED,       /* held from CUDA by its pool */
	GS_FWC_PEAK_ALLOCATED, /* the most ever allocated */
	GS_FWC_PEAK_RESERVED,  /* the most ever reserved */
	GS_FWC_LIMIT,	       /* what its pool may grow to (JAX's bytes_limit) */
	GS_FWC_FREE_BLOCKS,    /* a count, not bytes: blocks free in the pool */
	GS_FWC_COUNT,
};
#define GS_FW_DEVICES 16	    /* CUDA ordinals 0 to 15 */
#define GS_FW_HOST    GS_FW_DEVICES /* the place "host" */
#define GS_FW_PLACES  (GS_FW_DEVICES + 1)

extern const char *const names_fw[GS_FW_COUNT];
extern const char *const names_fw_counter[GS_FWC_COUNT];
/* The framework, or counter, named S; or -EINVAL. */
int names_fw_parse(const char *s);
int names_fw_counter_parse(const char *s);

/*
 * Buffer sizes.  Linux host names have at most HOST_NAME_MAX (64) bytes;
 * 256 holds any POSIX one.  "<host>-<pid>" adds '-', at most 11
 * characters of an int and the NUL.
 */
#define GS_HOST_SIZE	    256
#define GS_PROCESS_DIR_SIZE (GS_HOST_SIZE + 12 + 16)
/* An absolute run directory (PATH_MAX), a process directory in it, and a
 * file there: its longest name, a numbered one's temporary, fits in 64. */
#define GS_RUN_DIR_SIZE	     4096
#define GS_PROCESS_PATH_SIZE (GS_RUN_DIR_SIZE + GS_PROCESS_DIR_SIZE)
#define GS_FILE_PATH_SIZE    (GS_PROCESS_PATH_SIZE + 64)

/*
 * This machine's name in BUF (SIZE > 0), always NUL-terminated: "unknown"
 * (truncated to fit) when gethostname fails, which it does when the name
 * does not fit, or gives an empty name.  The only caller of gethostname
 * in gpuspy.
 */
void names_host(char *buf, size_t size);

/*
 * This machine's name as a path component, in BUF (SIZE > 0): the host
 * name is data (a container's, a hostile administrator's: "../../esc"),
 * so every byte but A-Z a-z 0-9 '_' '-' and a '.' that does not lead is
 * written %XX, and nothing is "", "." or "..", nor hidden; cut at an
 * escape's edge to fit.  "unknown" when there is no name.
 */
void names_host_component(char *buf, size_t size);

/*
 * "<host>-<pid>", the name of process PID's directory on this machine,
 * its host as names_host_component writes it.
 * 0, or -ENAMETOOLONG when it did not fit: BUF then holds as much as fit,
 * NUL-terminated (nothing when SIZE is 0).  Same for the functions below.
 */
int names_process_dir(char *buf, size_t size, pid_t pid);
/* "<run_dir>/<host>-<pid>". */
int names_process_path(char *buf, size_t size, const char *run_dir, pid_t pid);
/* "<dir>/<name>". */
int names_join(char *buf, size_t size, const char *dir, const char *name);
/* "<dir>/.<name>.tmp": where NAME is written before its rename, hidden from
 * readers, which skip names that start with a dot. */
int names_tmp(char *buf, size_t size, const char *dir, const char *name);

/*
 * An earlier program of a process, one that an exec replaced: its
 * directory "<host>-<pid>" is renamed "<host>-<pid>.image<K>" (K from 1,
 * in the order of the programs) when the next program starts writing
 * its own (libgpuspy(7), EXEC).  The suffix holds no '-': the pid is
 * still the digits after the last one.
 */
#define GS_PROCESS_IMAGE_SUFFIX ".image"
/* "<dir>.image<K>": DIR's name as the directory of earlier program K. */
int names_image_path(char *buf, size_t size, const char *dir, unsigned k);

/*
 * NAME read as "<host>-<pid>", or "<host>-<pid>.image<K>": the pid after
 * the last '-' (1 to INT_MAX, decimal digits, no leading zero) and a host
 * before it of at least one character; K likewise (1 to 999999999).  0
 * with *PID (and *HOST_LEN when not NULL), or -EINVAL.
 */
int names_parse_process_dir(const char *name, pid_t *pid, size_t *host_len);
/* The same, and *IMAGE (when not NULL): K, or 0 for "<host>-<pid>". */
int names_parse_process_image(const char *name, pid_t *pid, size_t *host_len, unsigned *image);

/*
 * NAME read as PREFIX N ".json" (GS_FILE_OOM_N_PREFIX, GS_FILE_SNAPSHOT_N_PREFIX):
 * N of 1 to 9 decimal digits (a process writes far fewer files).  0 with
 * *N, or -EINVAL.
 */
int names_parse_numbered(const char *name, const char *prefix, unsigned *n);

/*
 * The commit a run was built from, as CI systems name it in the
 * environment: GIT_COMMIT (Jenkins' git plugin, and by hand), CI_COMMIT_SHA
 * (GitLab CI), GITHUB_SHA (GitHub Actions), the first one set wins.  The
 * library records them among a process's "environment"; `gpuspy run`
 * records the commit in run.json ("commit"), from these or else from `git
 * rev-parse HEAD` in its working directory.
 */
#define GS_COMMIT_ENV_COUNT 3
extern const char *const names_commit_env[GS_COMMIT_ENV_COUNT];
/* The longest commit recorded, in bytes. */
#define GS_COMMIT_MAX 128
/* Whether S is a commit as recorded: 1 to GS_COMMIT_MAX bytes of
 * printable ASCII without a blank (a hash, a tag, "v1.2-rc1"). */
bool names_commit_valid(const char *s);

#endif /* GPUSPY_COMMON_NAMES_H */
