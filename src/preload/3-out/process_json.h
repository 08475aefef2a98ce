/* SPDX-License-Identifier: MIT */
/* The gpuspy-process/1 document (docs/format.md). */
#ifndef GPUSPY_PROCESS_JSON_H
#define GPUSPY_PROCESS_JSON_H

#include <stdio.h>

struct gs_view;
/* report.json, snapshot.json, snapshot-N.json and oom-N.json: one
 * document, its optional members chosen by what the view is about.
 * 0, or -EIO. */
int process_json_write(FILE *f, const struct gs_view *v);

#endif /* GPUSPY_PROCESS_JSON_H */
