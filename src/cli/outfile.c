/* SPDX-License-Identifier: MIT */
/*
 * A file the command writes at a path it was given (run.json, --junit,
 * --memory-viz, trend --html): written whole to a temporary name of this
 * process's own beside it, created exclusively and without following a
 * link, then renamed over PATH.  A reader sees the old file or the new one,
 * never half of one; a symbolic link at PATH is replaced, not written
 * through (another user's link in a shared directory must not redirect
 * the write); a failure leaves PATH as it was.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

int cli_write_file(const char *path, const void *data, size_t len)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	char tmp[PATH_MAX];
	size_t off = 0;
	int fd, n, r = 0;

	/* "dir/" names no file; "." and ".." are directories */
	if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
		return -EISDIR;
	n = snprintf(tmp, sizeof(tmp), "%.*s.%s.%ld.tmp", slash ? (int)(base - path) : 0, path,
		     base, (long)getpid());
	if (n < 0 || (size_t)n >= sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	/* one left by an earlier gpuspy of this pid that was killed while
	 * writing: ours to replace (unlink removes a link, not its target) */
	if (fd < 0 && errno == EEXIST && unlink(tmp) == 0)
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	while (off < len && r == 0) {
		ssize_t w = write(fd, (const char *)data + off, len - off);

		if (w < 0 && errno != EINTR)
			r = -errno;
		else if (w == 0)
			r = -EIO;
		else if (w > 0)
			off += (size_t)w;
	}
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0)
		unlink(tmp);
	return r;
}
