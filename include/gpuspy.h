/* SPDX-License-Identifier: MIT */
/*
 * gpuspy — the calls a program may make into the preload library.
 *
 * Using gpuspy needs no code change: preload libgpuspy.so (or use
 * `gpuspy run`).  The files and formats it writes are described in
 * docs/format.md.
 */
#ifndef GPUSPY_H
#define GPUSPY_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Optional calls into gpuspy, from C or from Python through ctypes
 * (ctypes.CDLL(None).gpuspy_mark(b"epoch 3")).  They do something only
 * when libgpuspy.so is preloaded; link libgpuspy_stub.so to build a
 * program that calls them and runs without gpuspy too.
 */

/* Tag what follows: later snapshots and reports carry the label ("epoch
 * 3"), and `gpuspy diff --at` compares runs at the same mark.  Returns 0. */
int gpuspy_mark(const char *label);

/* Write a snapshot now, as <run dir>/<host>-<pid>/snapshot-N.json, with
 * the label.  Returns 0, or -1 when nothing was written (no allocation
 * yet, gpuspy off or not preloaded, 64 such snapshots already). */
int gpuspy_snapshot(const char *label);

/*
 * Live figures, for a notebook after each cell, a test suite around each
 * test, or a program that watches itself (the Python package gpuspy calls
 * them through ctypes).  They run on the calling thread, against
 * allocations on any other, and never slow an allocation: the live
 * figures are read from the counters every allocation keeps anyway.
 *
 * Each returns -1 from the stub (libgpuspy.so not preloaded), in a forked
 * child that gpuspy left silent, and for bad arguments.  A structure is
 * passed with its size, sizeof as the caller was built: the library
 * writes at most that many bytes of each, so a caller built against an
 * older gpuspy.h keeps working with a newer library.
 *
 * Memory is GPU memory - device, managed and VMM physical - unless said:
 * page-locked host memory is counted apart, as the reports do.
 */

struct gpuspy_totals {
	long long live_bytes;	   /* GPU memory live now */
	long long live_allocs;	   /* in this many allocations */
	long long peak_bytes;	   /* the most live at once, in the whole process */
	long long pinned_bytes;	   /* page-locked host memory live now */
	unsigned long long events; /* GPU allocations and frees so far */
	int tracking;		   /* 0 once gpuspy stopped (its stderr line said why) */
};

/* The totals now.  0, or -1. */
int gpuspy_totals(struct gpuspy_totals *out, size_t size);

/*
 * A scope: what each call site held when it opened, and a peak of its own
 * since (a notebook's cell, a test).  Scopes nest and overlap, from any
 * threads.  gpuspy_scope_open() returns its number (> 0), or -1; close it
 * with gpuspy_scope_close() (0, or -1 for a number not open).
 */
long long gpuspy_scope_open(void);
int gpuspy_scope_close(long long scope);

struct gpuspy_scope_totals {
	long long before_bytes;	   /* GPU memory live when the scope opened */
	long long live_bytes;	   /* and now */
	long long peak_bytes;	   /* the most live at once since, at least both */
	unsigned long long events; /* GPU allocations and frees since */
	double seconds;		   /* since it opened */
};

/* What changed since SCOPE opened.  0, or -1. */
int gpuspy_scope_read(long long scope, struct gpuspy_scope_totals *out, size_t size);

/*
 * A call site as `gpuspy report` lists it: the allocations of one code
 * path, with the report's one name ("step (train.py:41)", "<module>
 * (2845938.py:3 +1 lines)"; docs/format.md, "name") and key digest.
 */
#define GPUSPY_NAME_MAX 512
struct gpuspy_site {
	char name[GPUSPY_NAME_MAX];
	char key[24];  /* the digest of its key, "" while not named */
	char kind[16]; /* "device", "managed" or "vmm" */
	/* the framework pool whose segments these are, "PyTorch", "CuPy",
	 * "JAX/XLA"; "" for the program's own memory */
	char pool[32];
	char growth[32];	/* "growing", "grew, then stopped", or "" */
	long long live_bytes;	/* held now */
	long long live_allocs;	/* in this many allocations */
	long long change_bytes; /* since the scope opened (gpuspy_scope_sites) */
	double growth_rate;	/* bytes per second of its growth, 0 without */
	double growth_since;	/* seconds from the process's start to its growth */
	/* 0: not named yet, and NAME is its innermost line of the program's
	 * own Python code, or its first native frame */
	int named;
};

/*
 * The sites holding the most GPU memory now, most first: up to N into
 * OUT (SIZE is sizeof(struct gpuspy_site)); how many, or -1.  A site new
 * since gpuspy last named the sites (on its own thread, every
 * GPUSPY_INTERVAL) is named now, waiting up to WAIT_MS milliseconds for
 * it; past that, or with 0, it comes with named 0.
 */
int gpuspy_sites(struct gpuspy_site *out, unsigned n, size_t size, int wait_ms);

/*
 * The sites whose live bytes changed most since SCOPE opened: with SIGN
 * > 0 those that grew, most first (what a cell or a test left); with SIGN
 * < 0 those that shrank, most freed first.  As gpuspy_sites otherwise.
 */
int gpuspy_scope_sites(long long scope, int sign, struct gpuspy_site *out, unsigned n, size_t size,
		       int wait_ms);

/*
 * The frameworks' own counters (PyTorch, PaddlePaddle, JAX, CuPy), as
 * gpuspy last read them (every GPUSPY_INTERVAL, on the program's main
 * thread): one entry per framework and device.  Up to N into OUT; how
 * many, or -1.  None without such a framework, or with GPUSPY_FRAMEWORKS=0.
 */
struct gpuspy_framework {
	char name[16]; /* "pytorch", "paddle", "jax", "cupy" */
	int device;    /* its CUDA ordinal, or -1: its pool of page-locked host memory */
	/* bytes, -1 where the framework says nothing of it */
	long long allocated;	  /* in the program's tensors or arrays */
	long long reserved;	  /* held from CUDA by its pool */
	long long peak_allocated; /* the most ever allocated */
	long long peak_reserved;
	long long limit;       /* what its pool may grow to */
	long long free_blocks; /* a count: blocks free in its pool */
	double age;	       /* seconds since it said so */
};
int gpuspy_frameworks(struct gpuspy_framework *out, unsigned n, size_t size);

/* This process's directory of files, <run dir>/<host>-<pid>, into BUF of
 * SIZE: 0, or -1 before the first allocation (none is chosen yet) or when
 * it does not fit. */
int gpuspy_process_dir(char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* GPUSPY_H */
