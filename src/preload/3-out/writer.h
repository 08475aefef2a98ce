/* SPDX-License-Identifier: MIT */
/* writer.c: the snapshot thread */
#ifndef GPUSPY_WRITER_H
#define GPUSPY_WRITER_H

#include <stdbool.h>

void writer_start(void);
void writer_stop(void);
void writer_forget(void);
/* Ask the snapshot thread for a naming pass now (writer_name_sites): any
 * thread holding no gpuspy lock; false when no thread runs to answer. */
bool writer_wake_names(void);
/* Names the frames of the sites not named yet (symbols.c): the snapshot
 * thread's, and the exit's once writer_stop has joined it; no gpuspy
 * lock held. */
void writer_name_sites(void);

#endif /* GPUSPY_WRITER_H */
