/* SPDX-License-Identifier: MIT */
/* What the commands learn of a process running under gpuspy from /proc. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "env.h"
#include "names.h"
#include "rundir.h"

char *procfs_env(pid_t pid, const char *name)
{
	char path[64], *buf = NULL, *val = NULL;
	size_t len = 0, cap = 0, nlen = strlen(name);
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	for (;;) {
		if (len + 4096 + 1 > cap) {
			char *b = realloc(buf, cap = len + 65536);

			if (!b)
				break;
			buf = b;
		}
		n = read(fd, buf + len, 4096);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	for (size_t i = 0; buf && i < len; i += strlen(buf + i) + 1) {
		buf[len] = '\0';
		if (strncmp(buf + i, name, nlen) == 0 && buf[i + nlen] == '=') {
			val = strdup(buf + i + nlen + 1);
			break;
		}
	}
	free(buf);
	return val;
}

/* The newest run directory of output directory OUT that holds process
 * PID's directory, into DIR: 0, or -ENOENT. */
static int find_in_runs(const char *out, pid_t pid, char *dir, size_t size)
{
	char best[GS_RUN_ID_SIZE] = "", pdir[GS_PROCESS_DIR_SIZE];
	struct dirent *de;
	struct stat st;
	DIR *d = opendir(out);
	int dfd;

	if (!d)
		return -ENOENT;
	dfd = dirfd(d);
	names_process_dir(pdir, sizeof(pdir), pid);
	while ((de = readdir(d))) {
		char sub[NAME_MAX + 1 + GS_PROCESS_DIR_SIZE];

		if (!rundir_id_valid(de->d_name) || strcmp(de->d_name, best) <= 0)
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", de->d_name, pdir);
		if (fstatat(dfd, sub, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode))
			memcpy(best, de->d_name, strlen(de->d_name) + 1); /* valid: fits */
	}
	closedir(d);
	if (!best[0])
		return -ENOENT;
	snprintf(dir, size, "%s/%s/%s", out, best, pdir);
	return 0;
}

void procfs_process_dir(pid_t pid, char *dir, size_t size)
{
	char cwd_link[64], cwd[PATH_MAX], run[PATH_MAX * 2];
	char *out, *id, *rdir;
	struct rundir_choice c;
	const char *d;
	ssize_t n;

	/* Its run directory, as the library chose it (rundir_choose):
	 * inherited, explicit (relative to its working directory), or one
	 * of its own under gpuspy-out, which it exported to its children
	 * but not to its own /proc/PID/environ: found there by its pid. */
	snprintf(cwd_link, sizeof(cwd_link), "/proc/%d/cwd", (int)pid);
	n = readlink(cwd_link, cwd, sizeof(cwd) - 1);
	cwd[n > 0 ? n : 0] = '\0';
	out = procfs_env(pid, "GPUSPY_OUTPUT_DIR");
	id = procfs_env(pid, GS_ENV_RUN_ID);
	rdir = procfs_env(pid, GS_ENV_RUN_DIR);
	if (rundir_choose(out, id, rdir, cwd[0] ? cwd : "/", NULL, &c) == 0) {
		names_process_path(dir, size, c.dir, pid);
	} else {
		d = env_output_dir(out);
		if (d[0] != '/') {
			names_join(run, sizeof(run), cwd, d);
			d = run;
		}
		/* explicit: the run directory itself */
		if ((out && out[0]) || find_in_runs(d, pid, dir, size) < 0)
			names_process_path(dir, size, d, pid);
	}
	free(out);
	free(id);
	free(rdir);
}
