/* SPDX-License-Identifier: MIT */
/*
 * query.c: the live figures of the public API, on the caller's thread.
 * Each is the gpuspy_* call of include/gpuspy.h of the same name, with
 * its arguments and results; api.c only exports them.
 */
#ifndef GPUSPY_QUERY_H
#define GPUSPY_QUERY_H

#include <stddef.h>

struct gpuspy_totals;
struct gpuspy_scope_totals;
struct gpuspy_site;
struct gpuspy_framework;

int query_totals(struct gpuspy_totals *out, size_t size);
long long query_scope_open(void);
int query_scope_close(long long scope);
int query_scope_read(long long scope, struct gpuspy_scope_totals *out, size_t size);
int query_sites(struct gpuspy_site *out, unsigned n, size_t size, int wait_ms);
int query_scope_sites(long long scope, int sign, struct gpuspy_site *out, unsigned n, size_t size,
		      int wait_ms);
int query_frameworks(struct gpuspy_framework *out, unsigned n, size_t size);
int query_process_dir(char *buf, size_t size);

#endif /* GPUSPY_QUERY_H */
