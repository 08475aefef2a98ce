/* SPDX-License-Identifier: MIT */
/*
 * Files in the process's directory: its name, its creation and check, and
 * the atomic write (a temporary name, fsync, rename) of every file gpuspy
 * leaves there.
 *
 * The run directory may be shared with other users (/tmp, a job's
 * scratch space), so nothing here follows a link or trusts a name that
 * someone else could have put there: the process directory is opened
 * with O_NOFOLLOW and checked to be ours, and every file is created
 * relative to that descriptor, O_EXCL, mode 0600.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "files.h"
#include "names.h"
#include "state.h"

int files_process_dir(char *buf, size_t len)
{
	return names_process_path(buf, len, gs_state.run_dir, getpid());
}

static int check_ours(int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (st.st_uid != geteuid())
		return -EPERM;
	return 0;
}

int files_keep_earlier(const char *path)
{
	char to[GS_PROCESS_PATH_SIZE + 32];
	struct dirent *de;
	bool data = false;
	DIR *d;
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return errno == ENOENT || errno == ENOTDIR || errno == ELOOP ? 0 : -errno;
	if (check_ours(fd) < 0) {
		close(fd);
		return 0;
	}
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	/* hidden names are gpuspy snapshot's request and temporaries: a
	 * request waits for this program as well */
	while (!data && (de = readdir(d)))
		data = de->d_name[0] != '.';
	closedir(d);
	if (!data)
		return 0;
	for (unsigned k = 1; k < 1000000; k++) {
		struct stat st;

		if (names_image_path(to, sizeof(to), path, k) < 0)
			return -ENAMETOOLONG;
		/* never onto a name someone made: rename() would replace an
		 * empty directory there */
		if (renameat2(AT_FDCWD, path, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
			return (int)k;
		if (errno == EEXIST)
			continue;
		if (errno != EINVAL && errno != ENOSYS)
			return -errno;
		/* a file system without RENAME_NOREPLACE */
		if (lstat(to, &st) == 0)
			continue;
		if (errno != ENOENT)
			return -errno;
		return rename(path, to) == 0 ? (int)k : -errno;
	}
	return -EEXIST;
}

int files_dir_open(const char *path)
{
	int fd, err;

	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return -errno;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		struct stat st;

		err = -errno;
		/* O_DIRECTORY | O_NOFOLLOW on a symlink fails ENOTDIR: say what
		 * is there */
		if (err == -ENOTDIR && lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
			err = -ELOOP;
		return err;
	}
	err = check_ours(fd);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

bool files_lasting(int err)
{
	switch (err < 0 ? -err : err) {
	case ENOENT: /* the run directory is gone */
	case ENOTDIR:
	case ELOOP:
	case EPERM:
	case EACCES:
	case EROFS:
	case ENAMETOOLONG:
		return true;
	default:
		return false;
	}
}

int files_write_all(int fd, const void *buf, size_t len, size_t *done)
{
	const char *p = buf;
	size_t n = 0;

	while (n < len) {
		ssize_t k = write(fd, p + n, len - n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			*done = n;
			return k < 0 ? errno : ENOSPC;
		}
		n += (size_t)k;
	}
	*done = n;
	return 0;
}

void files_guard_begin(struct files_guard *g)
{
	sigset_t xfsz, pending;

	sigemptyset(&xfsz);
	sigaddset(&xfsz, SIGXFSZ);
	pthread_sigmask(SIG_BLOCK, &xfsz, &g->old);
	g->pending = sigpending(&pending) == 0 && sigismember(&pending, SIGXFSZ);
}

/* A SIGXFSZ sent to the whole process by someone else in the window is
 * taken too: a deliberate compromise, the window is one file's write. */
void files_guard_end(struct files_guard *g)
{
	sigset_t xfsz, pending;
	struct timespec zero = { 0, 0 };

	sigemptyset(&xfsz);
	sigaddset(&xfsz, SIGXFSZ);
	if (!g->pending && !sigismember(&g->old, SIGXFSZ) && sigpending(&pending) == 0 &&
	    sigismember(&pending, SIGXFSZ)) {
		while (sigtimedwait(&xfsz, NULL, &zero) < 0 && errno == EINTR) {
		}
	}
	pthread_sigmask(SIG_SETMASK, &g->old, NULL);
}

/* A temporary file of ours, new: a name someone planted (a symlink, say)
 * is never opened, and only our own regular file is replaced. */
static int open_tmp(int dfd, const char *tmp)
{
	struct stat st;
	int fd;

	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 && errno == EEXIST) {
		if (fstatat(dfd, tmp, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return -errno;
		if (!S_ISREG(st.st_mode) || st.st_uid != geteuid())
			return -EEXIST;
		if (unlinkat(dfd, tmp, 0) < 0)
			return -errno;
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	}
	if (fd < 0)
		return -errno;
	/* whatever the umask: 0600, never less for us, never more for others */
	fchmod(fd, 0600);
	return fd;
}

int files_write(const char *dir, const char *name, int (*fn)(FILE *, const struct gs_view *),
		const struct gs_view *view)
{
	char tmp[GS_FILE_PATH_SIZE];
	struct files_guard g;
	FILE *f;
	int dfd, fd, err;

	if (names_tmp(tmp, sizeof(tmp), "", name) < 0)
		return -ENAMETOOLONG;
	files_guard_begin(&g);
	dfd = files_dir_open(dir);
	if (dfd < 0) {
		files_guard_end(&g);
		return dfd;
	}
	/* names_tmp with an empty dir: "/.<name>.tmp" */
	fd = open_tmp(dfd, tmp + 1);
	if (fd < 0) {
		close(dfd);
		files_guard_end(&g);
		return fd;
	}
	f = fdopen(fd, "w");
	if (!f) {
		err = -errno;
		close(fd);
		unlinkat(dfd, tmp + 1, 0);
		close(dfd);
		files_guard_end(&g);
		return err;
	}
	err = fn(f, view);
	/* the stream's own error (EFBIG, ENOSPC) says more than FN's EIO */
	if (fflush(f) != 0)
		err = -errno;
	if (fsync(fd) != 0 && !err && errno != EINVAL)
		err = -errno;
	if (fclose(f) != 0 && !err)
		err = -errno;
	if (!err && renameat(dfd, tmp + 1, dfd, name) != 0)
		err = -errno;
	if (err)
		unlinkat(dfd, tmp + 1, 0);
	close(dfd);
	files_guard_end(&g);
	return err;
}
