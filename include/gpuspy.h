/* SPDX-License-Identifier: MIT */
/*
 * gpuspy — public definitions shared by the preload library, the gpuspy
 * command and programs that want to talk to them.
 *
 * Using gpuspy needs no code change: preload libgpuspy.so (or use
 * `gpuspy run`).  This header names the files and formats it writes.
 */
#ifndef GPUSPY_H
#define GPUSPY_H

/* Format of one process's report.json (see docs/format.md). */
#define GPUSPY_PROCESS_FORMAT "gpuspy-process/1"
/* Format printed by `gpuspy report --format json`. */
#define GPUSPY_REPORT_FORMAT "gpuspy-report/1"

/* File names inside a process directory <run dir>/<host>-<pid>/. */
#define GPUSPY_REPORT_JSON "report.json"
#define GPUSPY_REPORT_TEXT "report.txt"

#endif /* GPUSPY_H */
