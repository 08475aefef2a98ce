/* SPDX-License-Identifier: MIT */
/* The loaders: one file of each schema into the model (docs/format.md). */
#ifndef GPUSPY_READ_LOAD_H
#define GPUSPY_READ_LOAD_H

#include "model.h"

/* Read and validate one report.json, oom-N.json or snapshot; DISPLAY_PATH becomes
 * the process's "path".  The oom entries' snapshots are not read (see
 * load_snapshots).  -EINVAL (bad content), -errno (cannot read), -ENOMEM. */
int load_process_file(const char *file, const char *display_path, struct rd_process **out,
		      struct rd_error *err);

/* Read, for each of P's oom entries that names a file, that oom-N.json
 * from the directory of P's report, when it is there: it must be a valid
 * report of that very event. */
int load_snapshots(struct rd_process *p, struct rd_error *err);

/* torch.json beside P's report into P->torch, when it is there. */
int load_torch(struct rd_process *p, struct rd_error *err);

/* DIR/run.json into *RUN, when it is there (RUN->present); -EINVAL for a
 * file that is not a valid gpuspy-run/1 (ERR names it), -errno, -ENOMEM.
 * rd_run_clear frees it. */
int load_run(const char *dir, struct rd_run *run, struct rd_error *err);
void rd_run_clear(struct rd_run *run);

/* The optional "run" member of ROOT (a process report, run.json): a run
 * id (rundir.h) in *OUT, NULL when absent; -EINVAL for anything else. */
struct vctx;
typedef struct json_t json_t;
int load_run_id(const struct vctx *v, json_t *root, char **out);

/* Whether NAME is "oom-N.json"; N in *N. */
bool load_oom_file_name(const char *name, int64_t *n);

#endif
