/* SPDX-License-Identifier: MIT */
/*
 * gpuspy — the calls a program may make into the preload library.
 *
 * Using gpuspy needs no code change: preload libgpuspy.so (or use
 * `gpuspy run`).  The files and formats it writes are described in
 * docs/format.md.
 */
#ifndef GPUSPY_H
#define GPUSPY_H

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
