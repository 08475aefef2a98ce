/* SPDX-License-Identifier: MIT */
/* The keys of the gpuspy-process/1 document, as schema.h lists them. */
#include <stdio.h>
#include <string.h>

#include "schema.h"

#define SCHEMA_NAME(id, key) [id] = (key),
const char *const schema_counter_key[SC_COUNT] = { SCHEMA_COUNTERS(SCHEMA_NAME) };
const char *const schema_site_key[SS_COUNT] = { SCHEMA_SITE(SCHEMA_NAME) };
const char *const schema_frame_key[SF_COUNT] = { SCHEMA_FRAME(SCHEMA_NAME) };
const char *const schema_pyframe_key[SP_COUNT] = { SCHEMA_PYFRAME(SCHEMA_NAME) };
const char *const schema_growth_key[SG_COUNT] = { SCHEMA_GROWTH(SCHEMA_NAME) };
const char *const schema_by_name[SB_COUNT] = { SCHEMA_BY(SCHEMA_NAME) };
const char *const schema_frameworks_key[SW_COUNT] = { SCHEMA_FRAMEWORKS(SCHEMA_NAME) };
const char *const schema_lines_key[SL_COUNT] = { SCHEMA_LINES(SCHEMA_NAME) };
const char *const schema_exit_key[SR_COUNT] = { SCHEMA_EXIT(SCHEMA_NAME) };
const char *const schema_allocation_key[SA_COUNT] = { SCHEMA_ALLOCATION(SCHEMA_NAME) };
const char *const schema_trace_key[ST_COUNT] = { SCHEMA_TRACE(SCHEMA_NAME) };
const char *const schema_event_key[SE_COUNT] = { SCHEMA_EVENT(SCHEMA_NAME) };
const char *const schema_action_name[SX_COUNT] = { SCHEMA_ACTION(SCHEMA_NAME) };
#undef SCHEMA_NAME

int schema_counters_json(char *buf, size_t size, const long long v[SC_COUNT])
{
	size_t len = 0;
	int n = 0;

	for (unsigned i = 0; i < SC_COUNT; i++) {
		n = snprintf(len < size ? buf + len : NULL, len < size ? size - len : 0,
			     "%s\"%s\": %lld", i ? ", " : "", schema_counter_key[i], v[i]);
		if (n < 0)
			return n;
		len += (size_t)n;
	}
	return (int)len;
}

int schema_parse(const char *const *table, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(table[i], name) == 0)
			return (int)i;
	return -1;
}
