/* SPDX-License-Identifier: MIT */
/*
 * What gpuspy says to people from inside the process: report.txt and the
 * lines on stderr (none of the latter under GPUSPY_QUIET).
 */
#ifndef GPUSPY_SUMMARY_H
#define GPUSPY_SUMMARY_H

#include <stdbool.h>
#include <stdio.h>

struct gs_view;
struct gs_oom;
struct gs_site;
struct gs_verdict;

/* report.txt.  0, or -EIO. */
int summary_write_text(FILE *f, const struct gs_view *v);
/* At exit: what is still live, and where. */
void summary_exit(const struct gs_view *v);
/* An out-of-memory post-mortem, NAME in the view's directory, was written. */
void summary_oom(const struct gs_view *v, const struct gs_oom *e, const char *name);
/* PyTorch raised OutOfMemoryError after event E, whose post-mortem NAME
 * was written again with PyTorch's own figures (events_torch_oom). */
void summary_torch_oom(const struct gs_view *v, const struct gs_oom *e, const char *name);
/* An on-demand snapshot, NAME in DIR, was written. */
void summary_snapshot(const char *label, const char *dir, const char *name);
/* Named once while the job runs, when a site is first seen growing: the
 * rate, since when and shape of its verdict V (libgpuspy(7)); and when
 * it stops (grew, then stopped) or grows again. */
void summary_growth(const struct gs_site *s, const struct gs_verdict *v);
void summary_growth_change(const struct gs_site *s, const struct gs_verdict *v);
/* A framework's own allocated counter first seen growing (V, by
 * GS_BY_FRAMEWORK; its allocated bytes then, ALLOCATED), said with the
 * site of its pool's segments, SITE (NULL: none seen). */
void summary_growth_fw(const struct gs_verdict *v, long long allocated, const struct gs_site *site);
/* The pool (enum gs_pool, src/common/pools.h) whose segment S is: the
 * innermost of its frames that names one decides, as `gpuspy report`'s. */
int summary_site_pool(const struct gs_site *s);

/* The PyTorch view's largest holders, from torch_view.py after each
 * sample: entry I (0 starts a new list) is LIVE bytes in BLOCKS blocks
 * allocated at WHERE ("function (file:line)").  The exit summary names
 * them first: the Python line, where the CUDA sites name the pool.  0, or
 * -EINVAL. */
/*
 * These three name native frames with what the snapshot thread found
 * (symbols.c): they run on it, or at exit once it is joined.
 *
 * S's user line as report.txt and stderr name it, "step (/work/train.py:41)",
 * into BUF. */
void summary_where(char *buf, size_t len, const struct gs_site *s);
/* S's name as `gpuspy report` lists it and the metrics' name label carries
 * it, "step (train.py:41)" (sitename_short of the headline frame): the
 * same as the reader's wherever the process knows what the reader does
 * (a native frame's source line only where libdw could read it). */
void summary_site_name(char *buf, size_t len, const struct gs_site *s);
/* A 16-hex digest of S's frames (api, then each frame that is not noise:
 * Python file basename and function, native module basename and symbol
 * or offset), for the metrics' site label: stable for one site, but not
 * the report's key, which is made of symbolized frames. */
void summary_site_key(char *buf, size_t len, const struct gs_site *s);

int summary_torch_top(unsigned i, const char *where, long long live, long long blocks);

#endif /* GPUSPY_SUMMARY_H */
