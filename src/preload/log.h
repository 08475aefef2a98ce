/* SPDX-License-Identifier: MIT */
/* log.c: one-line warnings, and gpuspy's own failure */
#ifndef GPUSPY_LOG_H
#define GPUSPY_LOG_H

void gs_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* gpuspy's own failure: one line, once, and tracking stops for good. */
void gs_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* GPUSPY_LOG_H */
