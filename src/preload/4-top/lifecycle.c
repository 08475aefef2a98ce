/* SPDX-License-Identifier: MIT */
/*
 * Start, fork and exit: the top of the library.
 *
 * Loading gpuspy costs nearly nothing: the constructor reads the
 * configuration and registers fork handlers.  Children that inherit
 * LD_PRELOAD (a shell, ptxas, /bin/true) and never allocate device memory
 * start no thread and write no file.  The first allocation activates
 * gpuspy (start.c), and the snapshot thread starts then.  The report is written by the
 * library destructor, which glibc runs after the program's atexit
 * handlers, so whatever the runtime frees on its way out is not a leak.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/auxv.h>

#include "conf.h"
#include "endpoint.h"
#include "events.h"
#include "history.h"
#include "rundir.h"
#include "start.h"
#include "state.h"
#include "torch_probe.h"
#include "writer.h"

/*
 * A run of its own is exported to the processes this one starts, before
 * the program runs: a launcher's ranks, a script's workers and a shell's
 * commands then write into its run directory.  The program sees the two
 * variables too (libgpuspy(7), GPUSPY_RUN_ID).  Never before the C
 * library has set up the environment, never in a privileged program.
 */
static void export_run(void)
{
	extern char **environ;

	if (gs_config.disabled || gs_state.run_err || gs_state.run.inherited || !environ ||
	    getauxval(AT_SECURE))
		return;
	if (setenv(GS_ENV_RUN_ID, gs_state.run.id, 1) < 0 ||
	    setenv(GS_ENV_RUN_DIR, gs_state.run.dir, 1) < 0)
		unsetenv(GS_ENV_RUN_ID);
}

/* After locks.c's child handler and start.c's: the threads and the
 * server are the parent's, gone in the child. */
static void fork_child(void)
{
	writer_forget();
	endpoint_forget();
	torch_forget();
}

/* Once the process is active (start.c): the snapshot thread.  From the
 * first allocation's thread, or from the constructor when an allocation
 * came before it (a .preinit_array function's): whichever comes second
 * finds it started. */
static void start_writer(void)
{
	static atomic_bool started;

	if (!atomic_exchange(&started, true))
		writer_start();
}

__attribute__((constructor)) static void gpuspy_ctor(void)
{
	gs_init();
	pthread_atfork(NULL, NULL, fork_child);
	gs_on_active(start_writer);
	if (atomic_load(&gs_state.active))
		start_writer();
	export_run();
}

__attribute__((destructor)) static void gpuspy_dtor(void)
{
	writer_stop();
	if (atomic_load(&gs_state.active) && !atomic_load(&gs_state.silent)) {
		/* The history's last sample is the state at exit: the writer
		 * thread, joined above, no longer touches it; nor its walk of
		 * the sites, whose frames the report names. */
		history_tick();
		writer_name_sites();
		events_exit();
	}
	/* After the report, which therefore never waits on the server; the
	 * server only copies the last page meanwhile, and its stop closes
	 * every client at once, within a deadline (http_stop). */
	endpoint_stop();
}
