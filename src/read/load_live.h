/* SPDX-License-Identifier: MIT */
/*
 * allocations.json (gpuspy-allocations/1): a process's live allocations at
 * exit and its trace, read beside its report.json (model.h: struct
 * rd_live), for gpuspy export --memory-viz.
 */
#ifndef GPUSPY_READ_LOAD_LIVE_H
#define GPUSPY_READ_LOAD_LIVE_H

#include "model.h"

/* FILE, of P (its host, pid and start, its sites by id), into *OUT:
 * 0, -EINVAL with ERR naming the file, -errno (cannot read), -ENOMEM. */
int load_live_file(const char *file, const struct rd_process *p, struct rd_live *out,
		   struct rd_error *err);
/* allocations.json beside P's report.json, when P was read from one and
 * the file is there (else OUT is not present, and 0). */
int load_live(const struct rd_process *p, struct rd_live *out, struct rd_error *err);
void rd_live_clear(struct rd_live *l);

#endif
