/* SPDX-License-Identifier: MIT */
/*
 * Runs and their directories (rundir.h).  No allocation, no state: the
 * preload library calls these from its constructor and at its first
 * allocation.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "env.h"
#include "rundir.h"

static const char *base_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n > k && strcmp(s + n - k, suffix) == 0;
}

static bool id_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == '+' || c == '-';
}

/* What a person calls the command: the script a python, bash or
 * torchrun runs, rather than the interpreter every run shares. */
static const char *command_name(const char *const *argv, size_t argc)
{
	if (argc == 0 || !argv[0])
		return "";
	for (size_t i = 1; i < argc && argv[i]; i++) {
		if (argv[i][0] != '-' && (ends_with(argv[i], ".py") || ends_with(argv[i], ".sh")))
			return base_of(argv[i]);
	}
	for (size_t i = 1; i + 1 < argc && argv[i] && argv[i + 1]; i++) {
		if (strcmp(argv[i], "-m") == 0)
			return argv[i + 1];
	}
	return base_of(argv[0]);
}

int rundir_id(char *buf, size_t size, time_t t, const char *const *argv, size_t argc, pid_t pid)
{
	const char *name = command_name(argv, argc);
	char cmd[GS_RUN_COMMAND_MAX + 1];
	size_t n = 0;
	struct tm tm;
	int k;

	for (; name[n] && n < GS_RUN_COMMAND_MAX; n++)
		cmd[n] = id_char(name[n]) ? name[n] : '_';
	cmd[n] = '\0';
	/* readers skip hidden names */
	if (cmd[0] == '.')
		cmd[0] = '_';
	if (!gmtime_r(&t, &tm))
		memset(&tm, 0, sizeof(tm));
	k = snprintf(buf, size, "%04d%02d%02dT%02d%02d%02dZ-%s-%d", tm.tm_year + 1900,
		     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, n ? cmd : "run",
		     (int)pid);
	return k < 0 || (size_t)k >= size ? -ENAMETOOLONG : 0;
}

bool rundir_id_valid(const char *name)
{
	size_t len = strlen(name), i;
	pid_t pid;

	if (len < 20 || len >= GS_RUN_ID_SIZE)
		return false;
	for (i = 0; i < 16; i++) {
		char c = name[i];
		bool ok = i == 8 ? c == 'T' : i == 15 ? c == 'Z' : c >= '0' && c <= '9';

		if (!ok)
			return false;
	}
	if (name[16] != '-')
		return false;
	for (i = 17; i < len; i++)
		if (!id_char(name[i]))
			return false;
	/* a command of at least one character, then "-<pid>" */
	return rundir_id_pid(name, &pid) == 0 && strrchr(name, '-') > name + 17;
}

int rundir_id_pid(const char *id, pid_t *pid)
{
	const char *dash = strrchr(id, '-');
	long long x = 0;

	if (!dash || dash[1] < '1' || dash[1] > '9')
		return -EINVAL;
	for (const char *d = dash + 1; *d; d++) {
		if (*d < '0' || *d > '9')
			return -EINVAL;
		x = x * 10 + (*d - '0');
		if (x > INT_MAX)
			return -EINVAL;
	}
	*pid = (pid_t)x;
	return 0;
}

int rundir_id_command(const char *id, char *buf, size_t size)
{
	const char *dash = strrchr(id, '-');
	size_t n;

	if (!rundir_id_valid(id) || !dash)
		return -EINVAL;
	n = (size_t)(dash - (id + 17));
	if (n >= size)
		return -EINVAL;
	memcpy(buf, id + 17, n);
	buf[n] = '\0';
	return 0;
}

/* DIR (absolute) and NAME joined: 0 or -ENAMETOOLONG. */
static int join(char *buf, size_t size, const char *dir, const char *name)
{
	int n;

	if (name[0] == '/')
		n = snprintf(buf, size, "%s", name);
	else
		n = snprintf(buf, size, "%s%s%s", dir,
			     dir[0] && dir[strlen(dir) - 1] == '/' ? "" : "/", name);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int rundir_choose(const char *output, const char *run_id, const char *run_dir, const char *cwd,
		  const char *new_id, struct rundir_choice *c)
{
	char out[GS_RUN_DIR_SIZE];
	bool explicit = output && output[0];
	int r;

	memset(c, 0, sizeof(*c));
	r = join(out, sizeof(out), cwd, explicit ? output : GS_OUTPUT_DIR_DEFAULT);
	if (r < 0)
		return r;
	if (run_id && rundir_id_valid(run_id) && run_dir && run_dir[0] == '/' &&
	    strlen(run_dir) < sizeof(c->dir) && (!explicit || strcmp(out, run_dir) == 0)) {
		snprintf(c->id, sizeof(c->id), "%s", run_id);
		snprintf(c->dir, sizeof(c->dir), "%s", run_dir);
		c->inherited = true;
		/* one of the default output directory's runs: its children
		 * may be the ones that make it, and point latest at it */
		if (!explicit && strcmp(base_of(run_dir), run_id) == 0 &&
		    run_dir + strlen(run_dir) - strlen(run_id) - 1 > run_dir) {
			size_t n = strlen(run_dir) - strlen(run_id) - 1;

			memcpy(c->output_dir, run_dir, n);
			c->output_dir[n] = '\0';
		}
		return 0;
	}
	if (!new_id)
		return -ENOENT;
	if (!rundir_id_valid(new_id))
		return -EINVAL;
	snprintf(c->id, sizeof(c->id), "%s", new_id);
	if (explicit) {
		memcpy(c->dir, out, sizeof(c->dir));
		return 0;
	}
	memcpy(c->output_dir, out, sizeof(c->output_dir));
	return join(c->dir, sizeof(c->dir), out, new_id);
}

int rundir_point_latest(const char *output_dir, const char *id)
{
	char tmp[64];
	struct stat st;
	int dfd, r = 0;

	if (!rundir_id_valid(id))
		return -EINVAL;
	snprintf(tmp, sizeof(tmp), "." GS_FILE_LATEST ".%d.tmp", (int)getpid());
	dfd = open(output_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	/* a directory by that name is not ours to replace, nor to write
	 * into: rename() would move our link inside it */
	if (fstatat(dfd, GS_FILE_LATEST, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
		close(dfd);
		return -EISDIR;
	}
	/* one left by a process of this pid that died in between */
	if (symlinkat(id, dfd, tmp) < 0 &&
	    (errno != EEXIST || unlinkat(dfd, tmp, 0) < 0 || symlinkat(id, dfd, tmp) < 0))
		r = -errno;
	if (r == 0 && renameat(dfd, tmp, dfd, GS_FILE_LATEST) < 0) {
		r = -errno;
		unlinkat(dfd, tmp, 0);
	}
	close(dfd);
	return r;
}

int rundir_read_latest(const char *output_dir, char *id, size_t size)
{
	char target[GS_RUN_ID_SIZE + 1];
	struct stat st;
	ssize_t n;
	int dfd, r = 1;

	dfd = open(output_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	if (fstatat(dfd, GS_FILE_LATEST, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		r = errno == ENOENT ? 0 : -errno;
		close(dfd);
		return r;
	}
	if (!S_ISLNK(st.st_mode)) {
		close(dfd);
		return -ENOLINK;
	}
	n = readlinkat(dfd, GS_FILE_LATEST, target, sizeof(target));
	if (n < 0) {
		r = -errno;
	} else if ((size_t)n >= sizeof(target)) {
		r = -EXDEV;
	} else {
		target[n] = '\0';
		/* a bare run id: no '/', no "..", nothing outside */
		if (!rundir_id_valid(target))
			r = -EXDEV;
		else if (fstatat(dfd, target, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
			r = -ENOTDIR;
		else if ((size_t)n >= size)
			r = -ENAMETOOLONG;
		else
			memcpy(id, target, (size_t)n + 1);
	}
	close(dfd);
	return r;
}
