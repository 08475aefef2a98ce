/* SPDX-License-Identifier: MIT */
/*
 * Runs: which run directory a process writes into, how a run directory
 * under the default output directory is named, and the "latest" pointer
 * beside them (docs/format.md, "Layout of the output directory").
 *
 * Both sides compile this: the library chooses its run from its
 * environment, `gpuspy run` chooses one for its command, and the commands
 * find the latest run and a running process's directory by the same
 * rules.  Like names.c it allocates nothing and keeps no state.
 */
#ifndef GPUSPY_COMMON_RUNDIR_H
#define GPUSPY_COMMON_RUNDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#include "names.h"

/* In the default output directory: a symbolic link to the newest run
 * directory, by its bare name. */
#define GS_FILE_LATEST "latest"

/* What the first process of a run exports for its descendants. */
#define GS_ENV_RUN_ID  "GPUSPY_RUN_ID"
#define GS_ENV_RUN_DIR "GPUSPY_RUN_DIR"

/* "YYYYMMDDTHHMMSSZ-<command>-<pid>": 16 + 1 + 32 + 1 + 10, and the NUL. */
#define GS_RUN_COMMAND_MAX 32
#define GS_RUN_ID_SIZE	   64

/*
 * The id of a run started at T (UTC) by process PID running ARGV (ARGC
 * strings): "20261201T134502Z-train.py-4242".  The command is the script
 * of an interpreter or launcher (the first argument ending in .py or .sh,
 * else the module of "-m") or the program's own name, reduced to letters,
 * digits, '.', '_', '+' and '-' ('_' for anything else, no leading '.'),
 * at most GS_RUN_COMMAND_MAX characters; "run" when nothing is left.
 * 0, or -ENAMETOOLONG when BUF is too small.
 */
int rundir_id(char *buf, size_t size, time_t t, const char *const *argv, size_t argc, pid_t pid);

/* Whether NAME is such an id (its shape; the date is not checked). */
bool rundir_id_valid(const char *name);

/* The pid at the end of run id ID in *PID: 0, or -EINVAL. */
int rundir_id_pid(const char *id, pid_t *pid);

/* The command part of run id ID into BUF: 0, or -EINVAL. */
int rundir_id_command(const char *id, char *buf, size_t size);

/*
 * The run a process belongs to.  OUTPUT, RUN_ID and RUN_DIR are its
 * GPUSPY_OUTPUT_DIR, GPUSPY_RUN_ID and GPUSPY_RUN_DIR (NULL when unset),
 * CWD its working directory (absolute), NEW_ID the id it would give a run
 * of its own.
 *
 * The run is inherited when RUN_ID is an id, RUN_DIR an absolute path and
 * OUTPUT is unset (or empty) or names RUN_DIR itself: the process then
 * writes into RUN_DIR.  Otherwise the process starts a run: NEW_ID, into
 * OUTPUT when that is set (an explicit run directory, as it is) and else
 * into GS_OUTPUT_DIR_DEFAULT/NEW_ID.  NEW_ID NULL: no run is started, and
 * -ENOENT is returned when none is inherited.
 */
struct rundir_choice {
	char id[GS_RUN_ID_SIZE];
	char dir[GS_RUN_DIR_SIZE]; /* absolute: the run directory */
	/* DIR is OUTPUT_DIR/ID under the default output directory, which
	 * keeps the latest pointer; else OUTPUT_DIR is empty */
	char output_dir[GS_RUN_DIR_SIZE];
	bool inherited;
};
int rundir_choose(const char *output, const char *run_id, const char *run_dir, const char *cwd,
		  const char *new_id, struct rundir_choice *c);

/*
 * Point OUTPUT_DIR/latest at its run ID: a new symbolic link made under a
 * temporary name of this process's own and renamed over the old one, so
 * that a reader sees the old pointer or the new one, and nothing is ever
 * written through a link.  0 or -errno (-EISDIR: a directory named
 * "latest" is there, and left alone).
 */
int rundir_point_latest(const char *output_dir, const char *id);

/*
 * The run that OUTPUT_DIR/latest points at, into ID: 1; 0 when there is
 * no "latest"; -errno when it is not what gpuspy leaves there: -ENOLINK
 * when it is not a symbolic link, -EXDEV when its target is not a run id
 * (a path, "..", a name of another shape: it points outside the output
 * directory), -ENOTDIR when the run it names is not a directory there
 * (a file, a link, nothing).
 */
int rundir_read_latest(const char *output_dir, char *id, size_t size);

#endif /* GPUSPY_COMMON_RUNDIR_H */
