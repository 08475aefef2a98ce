/* SPDX-License-Identifier: MIT */
/* live_json.c: allocations.json, the live allocations at exit and the trace */
#ifndef GPUSPY_LIVE_JSON_H
#define GPUSPY_LIVE_JSON_H

#include <stdio.h>

struct gs_view;
/* V's live allocations and trace (view_take_exit) as gpuspy-allocations/1
 * on F: 0, or -EIO. */
int live_json_write(FILE *f, const struct gs_view *v);

#endif /* GPUSPY_LIVE_JSON_H */
