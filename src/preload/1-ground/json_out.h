/* SPDX-License-Identifier: MIT */
/* The small JSON emitter of the files gpuspy writes. */
#ifndef GPUSPY_JSON_OUT_H
#define GPUSPY_JSON_OUT_H

#include <stdio.h>

/* S as a JSON string, quotes included; NULL is "". */
void json_str(FILE *f, const char *s);

#endif /* GPUSPY_JSON_OUT_H */
