/* SPDX-License-Identifier: MIT */
/* The fuzz targets' directory and their way into gpuspy(1)'s commands. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "fuzz.h"

static char dir[256];

#define ZERO                                                                                       \
	"{\"live_bytes\": 0, \"live_allocations\": 0, \"peak_bytes\": 0, \"allocated_bytes\": 0,"  \
	" \"allocations\": 0, \"freed_bytes\": 0, \"frees\": 0}"
#define SITE(id, fn)                                                                               \
	"{\"id\": " #id ", \"kind\": \"device\", \"api\": \"cudaMalloc\", \"live_bytes\": 0,"      \
	" \"live_allocations\": 0, \"peak_bytes\": 0, \"allocated_bytes\": 0, \"allocations\": 0," \
	" \"freed_bytes\": 0, \"frees\": 0, \"frames\": [{\"module\": 0, \"offset\": 4096,"        \
	" \"symbol\": \"" fn "\"}]}"

const char fuzz_report66[] =
	"{\"format\": \"gpuspy-process/1\", \"host\": \"node6\", \"pid\": 66,"
	" \"command\": [\"./train\"], \"complete\": true,"
	" \"leaked\": {\"bytes\": 0, \"allocations\": 0}, \"peak\": {\"bytes\": 0},"
	" \"kinds\": {\"device\": " ZERO ", \"managed\": " ZERO ", \"vmm\": " ZERO
	", \"pinned\": " ZERO "}, \"untracked_frees\": 0,"
	" \"modules\": [{\"path\": \"/nonexistent/train\", \"build_id\": \"\", \"base\": 0}],"
	" \"sites\": [" SITE(1, "step") ", " SITE(2, "forward") "]}";

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static void remove_dir(void)
{
	nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

const char *fuzz_dir(void)
{
	const char *tmp = getenv("TMPDIR");

	if (dir[0])
		return dir;
	snprintf(dir, sizeof(dir), "%s/gpuspy-fuzz-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		abort();
	atexit(remove_dir);
	return dir;
}

const char *fuzz_path(const char *name)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/%s", fuzz_dir(), name);
	return path;
}

void fuzz_write(const char *name, const uint8_t *data, size_t size)
{
	const char *path = fuzz_path(name);
	char dirs[512];
	int fd;

	if (!data) {
		if (unlink(path) < 0 && errno != ENOENT)
			abort();
		return;
	}
	/* the directories of NAME: a run, its process directories */
	snprintf(dirs, sizeof(dirs), "%s", name);
	for (char *slash = strchr(dirs, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (mkdir(fuzz_path(dirs), 0700) < 0 && errno != EEXIST)
			abort();
		*slash = '/';
	}
	path = fuzz_path(name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		abort();
	while (size > 0) {
		ssize_t n = write(fd, data, size);

		if (n <= 0)
			abort();
		data += n;
		size -= (size_t)n;
	}
	close(fd);
}

int fuzz_run(const char *const *args)
{
	char *argv[16];
	int argc = 0, status;

	/* a copy: getopt may permute it */
	for (; args[argc]; argc++) {
		if (argc == 15)
			abort();
		argv[argc] = (char *)args[argc];
	}
	argv[argc] = NULL;
	if (strcmp(argv[0], "report") == 0)
		status = cmd_report(argc, argv);
	else if (strcmp(argv[0], "merge") == 0)
		status = cmd_merge(argc, argv);
	else if (strcmp(argv[0], "diff") == 0)
		status = cmd_diff(argc, argv);
	else if (strcmp(argv[0], "export") == 0)
		status = cmd_export(argc, argv);
	else
		abort();
	/* what a command may end with: anything else is a bug */
	if (status != EXIT_OK && status != EXIT_FAILURE_OTHER && status != EXIT_USAGE)
		abort();
	/* the output goes to /dev/null (-close_fd_mask): its errors too */
	clearerr(stdout);
	return status;
}
