/* SPDX-License-Identifier: MIT */
/* The commands of gpuspy(1); each returns the process's exit status. */
#ifndef GPUSPY_CLI_H
#define GPUSPY_CLI_H

/* Exit statuses shared by the commands (gpuspy(1), EXIT STATUS). */
enum {
	EXIT_OK = 0,
	EXIT_FAILURE_OTHER = 1,	/* out of memory, cannot write the output */
	EXIT_USAGE = 2,		/* bad usage or bad input files */
	EXIT_EXEC_FAILED = 127,
};

int cmd_run(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_snapshot(int argc, char **argv);

#endif
