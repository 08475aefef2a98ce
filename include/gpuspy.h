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

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Optional calls into gpuspy, from C or from Python through ctypes
 * (ctypes.CDLL(None).gpuspy_mark(b"epoch 3")).  They do something only
 * when libgpuspy.so is preloaded; link libgpuspy_stub.so to build a
 * program that calls them and runs without gpuspy too.
 */

/* Tag what follows: later snapshots and reports carry the label ("epoch
 * 3"), and `gpuspy diff --at` compares runs at the same mark.  Returns 0. */
int gpuspy_mark(const char *label);

/* Write a snapshot now, as <run dir>/<host>-<pid>/snapshot-N.json, with
 * the label.  Returns 0, or -1 when nothing was written (no allocation
 * yet, gpuspy off or not preloaded, 64 such snapshots already). */
int gpuspy_snapshot(const char *label);

#ifdef __cplusplus
}
#endif

#endif /* GPUSPY_H */
