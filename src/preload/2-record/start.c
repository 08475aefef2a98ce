/* SPDX-License-Identifier: MIT */
/*
 * The process's start: the configuration read and the run chosen once
 * (gs_init, from the constructor or from a first allocation that comes
 * before it), and the activation at the first allocation, when the run
 * directory is created and checked, so that a bad one is reported at
 * once rather than at exit.  What runs once active (the snapshot thread)
 * is above this stage: lifecycle.c hands it over with gs_on_active().
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf.h"
#include "core.h"
#include "driver.h"
#include "files.h"
#include "locks.h"
#include "log.h"
#include "pystack.h"
#include "rundir.h"
#include "start.h"
#include "state.h"
#include "trace.h"
#include "unwind.h"

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
/* What starts once the process is active (gs_on_active). */
static void (*_Atomic on_active)(void);
/* Under gs_activate_lock. */
static bool warmed;
/* This thread is inside gs_activate(), which holds gs_activate_lock. */
static GS_TLS bool activating;

/* After locks.c's child handler: every gpuspy lock is free again.
 * CUDA is unusable in a child forked after it was initialised, and the
 * table describes the parent's memory: the child goes silent rather than
 * report its parent's allocations as its own leaks. */
static void fork_child(void)
{
	if (atomic_load(&gs_state.active)) {
		atomic_store(&gs_state.tracking, false);
		atomic_store(&gs_state.silent, true);
	}
}

/*
 * The run of this process (rundir_choose): its parent's, inherited
 * through GPUSPY_RUN_ID and GPUSPY_RUN_DIR, or one of its own, named
 * after its command line, its start and its pid.  Chosen at start, from
 * the working directory of then, so that the children it starts before
 * it allocates anything (a launcher's ranks) already know it.
 */
static void choose_run(void)
{
	static char args[4096];
	const char *argv[16];
	char cwd[GS_RUN_DIR_SIZE], id[GS_RUN_ID_SIZE];
	size_t argc = 0;
	ssize_t n = -1;
	int fd;

	if (!getcwd(cwd, sizeof(cwd))) {
		gs_state.run_err = -errno;
		return;
	}
	/* A process started by one of the run (a launcher's rank, a
	 * shell's command, a worker) takes its run: nothing to name, so
	 * its command line is not read (bench/worker-bench) */
	gs_state.run_err = rundir_choose(gs_config.output_given, gs_config.run_id,
					 gs_config.run_dir, cwd, NULL, &gs_state.run);
	if (gs_state.run_err != -ENOENT)
		return;
	fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, args, sizeof(args) - 1);
		close(fd);
	}
	args[n > 0 ? n : 0] = '\0';
	for (ssize_t i = 0; i < n && argc < sizeof(argv) / sizeof(argv[0]);
	     i += (ssize_t)strlen(args + i) + 1)
		argv[argc++] = args + i;
	gs_state.run_err =
		rundir_id(id, sizeof(id), (time_t)gs_state.start_time, argv, argc, getpid());
	if (gs_state.run_err)
		return;
	gs_state.run_err = rundir_choose(gs_config.output_given, gs_config.run_id,
					 gs_config.run_dir, cwd, id, &gs_state.run);
}

static void init_once_fn(void)
{
	config_load();
	if (gs_config.disabled)
		atomic_store(&gs_state.tracking, false);
	gs_state.start_time = gs_now();
	choose_run();
	unwind_init();
	/* fork: the locks' handlers first (locks.c), then the child's own
	 * state; child handlers run in the order they were registered. */
	locks_atfork();
	pthread_atfork(NULL, NULL, fork_child);
}

/* From gpuspy's constructor, or from the first allocation if a
 * .preinit_array function or another library's constructor makes one
 * first: either way the configuration is read before anything is
 * recorded (config.c reads the environment even before environ is set). */
void gs_init(void)
{
	pthread_once(&init_once, init_once_fn);
}

/*
 * The run directory and the directories above it, created 0700 where
 * missing.  One that exists is taken as it is (a shared /tmp, a job's
 * scratch space, a link the user made), provided it is a directory; the
 * run directory gpuspy itself creates must then be its own.
 */
static int mkdir_p(char *path, bool *madep)
{
	struct stat st;
	bool made = false;

	for (char *p = path + 1;; p++) {
		char c = *p;

		if (c != '/' && c != '\0')
			continue;
		*p = '\0';
		made = mkdir(path, 0700) == 0;
		if (!made && errno != EEXIST) {
			int err = -errno;

			*p = c;
			return err;
		}
		*p = c;
		if (!c)
			break;
	}
	if (stat(path, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (made && (lstat(path, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid()))
		return -EPERM;
	*madep = made;
	return 0;
}

static const char *dir_problem(int err)
{
	switch (-err) {
	case ELOOP:
		return "a symlink, not a directory of ours";
	case EPERM:
		return "owned by another user";
	default:
		return strerror(-err);
	}
}

/* gs_activate_lock held. */
static void warm_locked(void)
{
	if (!warmed) {
		unwind_warm();
		warmed = true;
	}
}

/*
 * When the program binds the CUDA driver (its runtime's first call):
 * what the first allocation would otherwise pay before it returns, paid
 * at CUDA's start-up, which costs far more.  A process that never binds
 * CUDA never pays it.  Writes no file: one that binds CUDA but never
 * allocates leaves nothing behind.
 */
bool gs_warm(void)
{
	if (activating)
		return false; /* the driver bound from inside gs_activate() */
	gs_init();
	if (!atomic_load(&gs_state.tracking))
		return false;
	gs_lock(&gs_activate_lock);
	warm_locked();
	gs_unlock(&gs_activate_lock);
	return true;
}

static void say_warning(const char *line)
{
	gs_warn("%s", line);
}

static bool activate(void)
{
	void (*then)(void);
	char pdir[GS_PROCESS_PATH_SIZE];
	bool made = false;
	int err;

	gs_lock(&gs_activate_lock);
	if (atomic_load(&gs_state.active) || !atomic_load(&gs_state.tracking)) {
		gs_unlock(&gs_activate_lock);
		return atomic_load(&gs_state.tracking);
	}
	/* This process allocates: what was wrong in its settings is worth
	 * saying now, and only now. */
	config_warnings(say_warning);

	if (gs_state.run_err) {
		gs_unlock(&gs_activate_lock);
		if (gs_state.run_err == -ENAMETOOLONG)
			gs_fail("the output directory's path is longer than %d characters",
				GS_RUN_DIR_SIZE - 1);
		else
			gs_fail("cannot resolve the output directory %s: %s", gs_config.output_dir,
				strerror(-gs_state.run_err));
		return false;
	}
	memcpy(gs_state.run_dir, gs_state.run.dir, sizeof(gs_state.run_dir));
	/* never cut: a cut path is another directory */
	if (files_process_dir(pdir, sizeof(pdir)) < 0) {
		gs_state.run_dir[0] = '\0';
		gs_unlock(&gs_activate_lock);
		gs_fail("the output directory's path is longer than %d characters",
			GS_RUN_DIR_SIZE - 1);
		return false;
	}
	err = mkdir_p(gs_state.run_dir, &made);
	if (err == 0 && access(gs_state.run_dir, W_OK | X_OK) < 0)
		err = -errno;
	if (err) {
		gs_unlock(&gs_activate_lock);
		gs_fail("cannot write to %s: %s", gs_state.run_dir, strerror(-err));
		return false;
	}
	/* A run directory under the default output directory is this run's
	 * own, never another user's: its name is easy to guess.  Whichever
	 * process of the run makes it points "latest" at it. */
	if (gs_state.run.output_dir[0]) {
		err = files_dir_open(gs_state.run_dir);
		if (err < 0) {
			gs_unlock(&gs_activate_lock);
			gs_fail("cannot use %s: %s", gs_state.run_dir, dir_problem(err));
			return false;
		}
		close(err);
		if (made) {
			err = rundir_point_latest(gs_state.run.output_dir, gs_state.run.id);
			if (err < 0)
				gs_warn("cannot point %s/" GS_FILE_LATEST " at %s: %s",
					gs_state.run.output_dir, gs_state.run.id, strerror(-err));
		}
	}
	/* The process's own directory, now: `gpuspy snapshot` leaves its
	 * request there before any report is written.  One that exists
	 * already must be ours: in a shared run directory another user may
	 * have made it, or a link by that name, for us to write through.
	 * One that holds files is an earlier program's of this pid (the
	 * one that exec'd this one): kept under a name of its own. */
	err = files_keep_earlier(pdir);
	if (err < 0)
		gs_warn("cannot keep the files of the program this process ran before its exec "
			"(%s): %s; they are replaced",
			pdir, strerror(-err));
	err = files_dir_open(pdir);
	if (err < 0) {
		gs_unlock(&gs_activate_lock);
		gs_fail("cannot use %s: %s", pdir, dir_problem(err));
		return false;
	}
	close(err);
	warm_locked();
	pystack_init();
	driver_describe();
	/* before active: a thread that sees active sees the ring */
	trace_init(gs_config.trace);
	atomic_store_explicit(&gs_state.active, true, memory_order_release);
	gs_unlock(&gs_activate_lock);
	then = atomic_load(&on_active);
	if (then)
		then();
	return true;
}

bool gs_activate(void)
{
	bool ok;

	gs_init();
	activating = true;
	ok = activate();
	activating = false;
	return ok;
}

void gs_on_active(void (*fn)(void))
{
	atomic_store(&on_active, fn);
}
