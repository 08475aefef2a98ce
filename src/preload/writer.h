/* SPDX-License-Identifier: MIT */
/* writer.c: the snapshot thread */
#ifndef GPUSPY_WRITER_H
#define GPUSPY_WRITER_H

void writer_start(void);
void writer_stop(void);
void writer_forget(void);

#endif /* GPUSPY_WRITER_H */
