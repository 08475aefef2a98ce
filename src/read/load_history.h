/* SPDX-License-Identifier: MIT */
/*
 * Reading history.jsonl, a process's live bytes over time (docs/format.md,
 * "gpuspy-history/1").  Strict like every loader: the whole file is valid
 * or it is refused with one line naming it; only a last line without its
 * newline (the process was killed while writing it) is dropped, and said
 * (rd_notice, RD_NOTICE_DROPPED).
 */
#ifndef GPUSPY_READ_LOAD_HISTORY_H
#define GPUSPY_READ_LOAD_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

/* What a series counts. */
enum rd_hist_kind {
	RD_HIST_DEVICE,	 /* a device ordinal's live bytes (key -1: unknown) */
	RD_HIST_SITE,	 /* a call site's (key: its sites[].id in the reports) */
	RD_HIST_OTHER,	 /* every site without a series of its own */
	RD_HIST_OUTSIDE, /* what NVML says the process uses (key: NVML index) */
	/* The PyTorch view's (a PyTorch process): its caching allocator's
	 * reserved and allocated bytes (key: device ordinal), a line's live
	 * bytes (key: its id in the torch line that declared it), and what
	 * the lines without a series hold */
	RD_HIST_POOL_RESERVED,
	RD_HIST_POOL_ALLOCATED,
	RD_HIST_TORCH,
	RD_HIST_TORCH_OTHER,
	/* A framework's own counter (key: rd_hist_fw_key) */
	RD_HIST_FW,
};

/* The key of framework FW's COUNTER at PLACE (names.h: enum gs_fw,
 * enum gs_fw_counter, a CUDA ordinal or GS_FW_HOST); and back. */
static inline int64_t rd_hist_fw_key(int fw, int place, int counter)
{
	return (int64_t)fw * 10000 + place * 100 + counter;
}
static inline void rd_hist_fw_split(int64_t key, int *fw, int *place, int *counter)
{
	*fw = (int)(key / 10000);
	*place = (int)(key / 100 % 100);
	*counter = (int)(key % 100);
}

struct rd_hist_series {
	enum rd_hist_kind kind;
	int64_t key;
	enum gs_kind site_kind; /* RD_HIST_SITE */
	char *label;		/* RD_HIST_TORCH: "FILE:LINE" of its innermost frame; NULL:
				 * no frames (blocks from before the view started) */
};

enum rd_hist_row_type {
	RD_HIST_SAMPLE, /* one interval: min == max == last */
	RD_HIST_BUCKET, /* N intervals from T0 to T1 merged */
	RD_HIST_EVENT,
};

enum rd_hist_event { RD_HIST_MARK, RD_HIST_SNAPSHOT, RD_HIST_OOM };

/* One value of a row: series SERIES (index into series). */
struct rd_hist_value {
	size_t series;
	int64_t min, max, last;
};

/* A line of the file, in file order (which is the order of time). */
struct rd_hist_row {
	enum rd_hist_row_type type;
	double t0, t1;	     /* seconds since start; equal but for buckets */
	int64_t n;	     /* intervals */
	size_t first, count; /* values[first .. first + count) */
	enum rd_hist_event event;
	int64_t number; /* snapshot-N.json, the N-th out-of-memory; 0: none */
	char *label;	/* NULL: none */
};

struct rd_history {
	bool present;
	bool refused; /* load_history: there, but refused and read around */
	int64_t pid;
	double start;	   /* seconds since the epoch */
	double interval_s; /* GPUSPY_INTERVAL */
	struct rd_hist_series *series;
	size_t nseries;
	struct rd_hist_row *rows;
	size_t nrows, caprows;
	struct rd_hist_value *values;
	size_t nvalues, capvalues;
};

/* FILE into H; PID, when not 0, must be its "pid".  -EINVAL (bad
 * content), -errno (cannot read), -ENOMEM; ERR says which. */
int load_history_file(const char *file, int64_t pid, struct rd_history *h, struct rd_error *err);
/* history.jsonl beside P's report, when it is there (else H stays not
 * present and 0 is returned).  A file that is there but refused is read
 * around unless rd_read_strict(): said (rd_notice, RD_NOTICE_LEFT_OUT, its
 * message), H not present but REFUSED, and 0; the other processes'
 * histories are still read.  -ENOMEM is always returned. */
int load_history(const struct rd_process *p, struct rd_history *h, struct rd_error *err);
void rd_history_clear(struct rd_history *h);

#endif
