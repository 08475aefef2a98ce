/* SPDX-License-Identifier: MIT */
/*
 * Files in the process's directory, <run dir>/<host>-<pid>: named here,
 * and written whole or not at all.
 */
#ifndef GPUSPY_FILES_H
#define GPUSPY_FILES_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* <run dir>/<host>-<pid> into BUF (GS_PROCESS_PATH_SIZE): 0, or
 * -ENAMETOOLONG with BUF truncated. */
int files_process_dir(char *buf, size_t len);

/*
 * PATH as a directory of ours: created (0700) when missing, then checked
 * to be a directory owned by this effective user and not a symlink.  An
 * O_DIRECTORY fd of it (the caller closes it), or -errno: -ENOTDIR for
 * something else there, -ELOOP for a symlink, -EPERM for another user's.
 */
int files_dir_open(const char *path);

/*
 * The files an earlier program of this process (the one an exec
 * replaced) left in its directory PATH, kept: when PATH holds any entry
 * whose name does not start with '.', the directory is renamed
 * PATH.image<K> (names_image_path), K the lowest not taken, so that this
 * program starts a directory of its own rather than truncate that one's
 * history and replace its snapshot.  K, 0 when there was nothing to keep
 * (no directory, an empty one, or one that is not ours: files_dir_open
 * refuses that), or -errno.
 */
int files_keep_earlier(const char *path);

struct gs_view;
/* DIR/NAME, written by FN through a temporary name and rename(), so that
 * a reader never sees half a file.  0 or -errno; nothing left behind on
 * failure.  Never raises SIGXFSZ (files_guard). */
int files_write(const char *dir, const char *name, int (*fn)(FILE *, const struct gs_view *),
		const struct gs_view *view);

/* Whether a failed write cannot pass by retrying (libgpuspy(7), FILES AND
 * FAILURES): the directory is gone, not a directory, not ours, not
 * writable, or its path too long.  A full disk, a file size limit, no descriptor
 * left or an I/O error pass, and are retried. */
bool files_lasting(int err);

/*
 * LEN bytes of BUF to FD, written again after a short write until all are
 * or one fails: 0, or that write's errno (EFBIG under a file size limit,
 * ENOSPC on a full disk; a write that writes nothing without one is
 * ENOSPC), never a stale errno.  *DONE: the bytes written.
 */
int files_write_all(int fd, const void *buf, size_t len, size_t *done);

/*
 * Around gpuspy's own writes, on the writing thread: SIGXFSZ blocked, so
 * that a file size limit (ulimit -f) makes the write fail with EFBIG
 * instead of killing the program, and a SIGXFSZ that our write left
 * pending taken back, so that the program never receives it.  The
 * program's disposition is not touched.
 */
struct files_guard {
	sigset_t old;
	bool pending; /* SIGXFSZ was pending before: not ours to take */
};
void files_guard_begin(struct files_guard *g);
void files_guard_end(struct files_guard *g);

#endif /* GPUSPY_FILES_H */
