/* SPDX-License-Identifier: MIT */
/*
 * Files in the process's directory, <run dir>/<host>-<pid>: named here,
 * and written whole or not at all.
 */
#ifndef GPUSPY_FILES_H
#define GPUSPY_FILES_H

#include <stddef.h>
#include <stdio.h>

/* <run dir>/<host>-<pid> into BUF (GS_PROCESS_PATH_SIZE): 0, or
 * -ENAMETOOLONG with BUF truncated. */
int files_process_dir(char *buf, size_t len);

struct gs_view;
/* DIR/NAME, written by FN through a temporary name and rename(), so that
 * a reader never sees half a file.  0 or -errno; nothing left behind on
 * failure. */
int files_write(const char *dir, const char *name, int (*fn)(FILE *, const struct gs_view *),
		const struct gs_view *view);

#endif /* GPUSPY_FILES_H */
