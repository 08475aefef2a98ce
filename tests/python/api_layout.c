/* SPDX-License-Identifier: MIT */
/* The layout of include/gpuspy.h's structures as the C compiler makes it,
 * one line per field ("struct field offset size") and per structure
 * ("struct - 0 sizeof"), for tests/python/api_live.py to compare with the
 * Python package's ctypes structures. */
#include <stddef.h>
#include <stdio.h>

#include "gpuspy.h"

#define FIELD(s, f)                                                                                \
	printf("%s %s %zu %zu\n", #s, #f, offsetof(struct s, f), sizeof(((struct s *)0)->f))
#define SIZE(s) printf("%s - 0 %zu\n", #s, sizeof(struct s))

int main(void)
{
	FIELD(gpuspy_totals, live_bytes);
	FIELD(gpuspy_totals, live_allocs);
	FIELD(gpuspy_totals, peak_bytes);
	FIELD(gpuspy_totals, pinned_bytes);
	FIELD(gpuspy_totals, events);
	FIELD(gpuspy_totals, tracking);
	SIZE(gpuspy_totals);
	FIELD(gpuspy_scope_totals, before_bytes);
	FIELD(gpuspy_scope_totals, live_bytes);
	FIELD(gpuspy_scope_totals, peak_bytes);
	FIELD(gpuspy_scope_totals, events);
	FIELD(gpuspy_scope_totals, seconds);
	SIZE(gpuspy_scope_totals);
	FIELD(gpuspy_site, name);
	FIELD(gpuspy_site, key);
	FIELD(gpuspy_site, kind);
	FIELD(gpuspy_site, pool);
	FIELD(gpuspy_site, growth);
	FIELD(gpuspy_site, live_bytes);
	FIELD(gpuspy_site, live_allocs);
	FIELD(gpuspy_site, change_bytes);
	FIELD(gpuspy_site, growth_rate);
	FIELD(gpuspy_site, growth_since);
	FIELD(gpuspy_site, named);
	SIZE(gpuspy_site);
	FIELD(gpuspy_framework, name);
	FIELD(gpuspy_framework, device);
	FIELD(gpuspy_framework, allocated);
	FIELD(gpuspy_framework, reserved);
	FIELD(gpuspy_framework, peak_allocated);
	FIELD(gpuspy_framework, peak_reserved);
	FIELD(gpuspy_framework, limit);
	FIELD(gpuspy_framework, free_blocks);
	FIELD(gpuspy_framework, age);
	SIZE(gpuspy_framework);
	return 0;
}
