/* SPDX-License-Identifier: MIT */
/* start.c: the process's start and its activation at the first allocation */
#ifndef GPUSPY_START_H
#define GPUSPY_START_H

#include <stdbool.h>

/* Idempotent, safe from any hook at any time. */
void gs_init(void);
/* First allocation: resolve and check the output directory. */
bool gs_activate(void);
/* What runs once the process is active, after gs_activate() set it, on
 * the activating thread (lifecycle.c: the snapshot thread). */
void gs_on_active(void (*fn)(void));
/* The driver was bound: get ready for the first allocation.
 * Takes gs_activate_lock: call it holding no gpuspy lock.  False when
 * the process does not track (or is activating already). */
bool gs_warm(void);

#endif /* GPUSPY_START_H */
