/* SPDX-License-Identifier: MIT */
/*
 * Files in the process's directory: its name, and the atomic write (a
 * temporary name, fsync, rename) of every file gpuspy leaves there.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "files.h"
#include "names.h"
#include "state.h"

int files_process_dir(char *buf, size_t len)
{
	return names_process_path(buf, len, gs_state.run_dir, getpid());
}

int files_write(const char *dir, const char *name, int (*fn)(FILE *, const struct gs_view *),
		const struct gs_view *view)
{
	char tmp[GS_FILE_PATH_SIZE], path[GS_FILE_PATH_SIZE];
	FILE *f;
	int fd, err;

	names_join(path, sizeof(path), dir, name);
	names_tmp(tmp, sizeof(tmp), dir, name);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		err = -errno;
		close(fd);
		unlink(tmp);
		return err;
	}
	err = fn(f, view);
	if (fflush(f) != 0 && !err)
		err = -errno;
	if (fsync(fd) != 0 && !err && errno != EINVAL)
		err = -errno;
	if (fclose(f) != 0 && !err)
		err = -errno;
	if (!err && rename(tmp, path) != 0)
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}
