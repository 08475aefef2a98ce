/* SPDX-License-Identifier: MIT */
/*
 * What the fuzz targets share: a private directory for the files an input
 * becomes, and gpuspy(1)'s commands run on them as the command line would.
 */
#ifndef GPUSPY_FUZZ_H
#define GPUSPY_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* A valid report of pid 66 (the seeds' pid of torch.json and
 * history.jsonl): two device sites, of ids 1 and 2, nothing live. */
extern const char fuzz_report66[];

/* A directory of its own, made once, removed at exit. */
const char *fuzz_dir(void);

/* NAME in fuzz_dir() (a path of a static buffer, NAME may hold '/'). */
const char *fuzz_path(const char *name);

/* Write DATA to fuzz_path(NAME), or remove it when DATA is NULL. */
void fuzz_write(const char *name, const uint8_t *data, size_t size);

/* gpuspy ARGS[0] ARGS[1] ... (NULL-terminated, at most 15), through
 * cmd_report, cmd_merge, cmd_diff or cmd_export; its status, which must be
 * 0, 1 or 2. */
int fuzz_run(const char *const *args);

#endif
