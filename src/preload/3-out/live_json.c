/* SPDX-License-Identifier: MIT */
/*
 * allocations.json, the gpuspy-allocations/1 document (docs/format.md):
 * written at exit beside report.json, what only the exit can say and
 * what no bounded report holds: every allocation of GPU memory still
 * live, and the trace (GPUSPY_TRACE).  Its sites are report.json's, by
 * id.
 */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "config.h"
#include "json_out.h"
#include "live_json.h"
#include "names.h"
#include "schema.h"
#include "state.h"
#include "trace.h"
#include "view.h"

/* "allocations", "allocations_left_out" and "trace" (schema.h,
 * SCHEMA_EXIT). */
static void write_live(FILE *f, const struct gs_view *v)
{
	const char *const *ak = schema_allocation_key, *const *ek = schema_event_key;
	const char *const *tk = schema_trace_key;

	fprintf(f, "  \"%s\": [", schema_exit_key[SR_ALLOCATIONS]);
	for (size_t i = 0; i < v->n_live; i++) {
		const struct gs_live *a = &v->live[i];

		fputs(i ? ",\n    {" : "\n    {", f);
		if (a->addr)
			fprintf(f, "\"%s\": %llu, ", ak[SA_ADDRESS], (unsigned long long)a->addr);
		fprintf(f, "\"%s\": %llu, \"%s\": \"%s\", \"%s\": %d, \"%s\": %u", ak[SA_SIZE],
			(unsigned long long)a->size, ak[SA_KIND], names_kinds[a->kind],
			ak[SA_DEVICE], (int)a->device, ak[SA_SITE], (unsigned)a->site);
		if (a->stream)
			fprintf(f, ", \"%s\": %llu", ak[SA_STREAM], (unsigned long long)a->stream);
		fputc('}', f);
	}
	fputc(']', f);
	if (v->live_left_out)
		fprintf(f, ",\n  \"%s\": {\"%s\": %llu, \"%s\": %llu}",
			schema_exit_key[SR_LEFT_OUT], schema_exit_key[SR_ALLOCATIONS],
			v->live_left_out, schema_exit_key[SR_BYTES], v->live_left_out_bytes);
	if (!v->trace_capacity)
		return;
	fprintf(f, ",\n  \"%s\": {\"%s\": %u, \"%s\": %llu, \"%s\": %llu, \"%s\": [",
		schema_exit_key[SR_TRACE], tk[ST_CAPACITY], v->trace_capacity, tk[ST_RECORDED],
		(unsigned long long)v->trace_recorded, tk[ST_DROPPED],
		(unsigned long long)(v->trace_recorded - v->n_trace), tk[ST_EVENTS]);
	for (size_t i = 0; i < v->n_trace; i++) {
		const struct trace_event *e = &v->trace[i];
		static const enum schema_action action[] = {
			[TRACE_ALLOC] = SX_ALLOC, [TRACE_FREE] = SX_FREE, [TRACE_OOM] = SX_OOM
		};

		fprintf(f, "%s{\"%s\": \"%s\", \"%s\": %llu.%06llu", i ? ",\n    " : "\n    ",
			ek[SE_ACTION], schema_action_name[action[e->action]], ek[SE_TIME],
			(unsigned long long)(e->time_ns / 1000000000u),
			(unsigned long long)(e->time_ns % 1000000000u / 1000u));
		if (e->action == TRACE_OOM)
			fprintf(f, ", \"%s\": %lld", ek[SE_FREE_BYTES], (long long)e->addr);
		else if (e->space == GS_SPACE_DEVPTR || e->space == GS_SPACE_HOSTPTR)
			fprintf(f, ", \"%s\": %llu", ek[SE_ADDRESS], (unsigned long long)e->addr);
		fprintf(f, ", \"%s\": %llu, \"%s\": \"%s\", \"%s\": %d, \"%s\": %u", ek[SE_SIZE],
			(unsigned long long)e->size, ek[SE_KIND], names_kinds[e->kind],
			ek[SE_DEVICE], (int)e->device, ek[SE_SITE], (unsigned)e->site);
		if (e->stream)
			fprintf(f, ", \"%s\": %llu", ek[SE_STREAM], (unsigned long long)e->stream);
		fputc('}', f);
	}
	fputs("]}", f);
}

int live_json_write(FILE *f, const struct gs_view *v)
{
	fprintf(f,
		"{\n  \"format\": \"" GS_FORMAT_ALLOCATIONS "\",\n  \"gpuspy_version\": \"%s\",\n",
		GPUSPY_VERSION);
	fputs("  \"host\": ", f);
	json_str(f, v->host);
	/* the report's process, started when it did */
	fprintf(f, ",\n  \"pid\": %d,\n  \"start_time\": %.3f,\n", (int)getpid(),
		gs_state.start_time);
	write_live(f, v);
	fputs("\n}\n", f);
	return ferror(f) ? -EIO : 0;
}
