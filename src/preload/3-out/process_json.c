/* SPDX-License-Identifier: MIT */
/*
 * The gpuspy-process/1 document (docs/format.md): the exit report, the
 * snapshots and the out-of-memory post-mortems are all one.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "config.h"
#include "core.h"
#include "counters.h"
#include "driver.h"
#include "endpoint.h"
#include "fw_counters.h"
#include "graph.h"
#include "json_out.h"
#include "locks.h"
#include "names.h"
#include "nvml.h"
#include "process_json.h"
#include "pystack.h"
#include "schema.h"
#include "sites.h"
#include "state.h"
#include "symbols.h"
#include "trend.h"
#include "unwind.h"
#include "view.h"

extern char **environ;

/* Variables that explain a run's memory behaviour, kept in the report. */
static const char *const env_prefixes[] = {
	"PYTORCH_",
	"CUDA_",
	"XLA_",
	"TF_GPU_",
	"TF_FORCE_GPU_",
	"TF_XLA_",
	"TF_CUDA_",
	"JAX_",
	"FLAGS_",
	"NCCL_",
	"CUPY_",
	"GPUSPY_",
	"RANK=",
	"LOCAL_RANK=",
	"WORLD_SIZE=",
	"LD_PRELOAD=",
	"NVIDIA_VISIBLE_DEVICES=",
};

/* Length of the valid UTF-8 sequence at p, or 0 (overlong forms,
 * surrogates and code points past U+10FFFF are invalid). */
static void write_command(FILE *f)
{
	char buf[8192];
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	bool first = true;

	if (fd >= 0)
		close(fd);
	fputc('[', f);
	for (ssize_t i = 0; n > 0 && i < n; i += (ssize_t)strlen(buf + i) + 1) {
		buf[n] = '\0';
		if (!first)
			fputs(", ", f);
		json_str(f, buf + i);
		first = false;
	}
	fputc(']', f);
}

static void write_env(FILE *f)
{
	bool first = true;

	fputc('{', f);
	for (char **e = environ; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		char name[256];
		bool keep = false;

		if (!eq || (size_t)(eq - *e) >= sizeof(name))
			continue;
		for (size_t i = 0; i < sizeof(env_prefixes) / sizeof(env_prefixes[0]); i++)
			if (strncmp(*e, env_prefixes[i], strlen(env_prefixes[i])) == 0)
				keep = true;
		/* the commit the run was built from, as CI systems say it */
		for (size_t i = 0; i < GS_COMMIT_ENV_COUNT; i++)
			if (strlen(names_commit_env[i]) == (size_t)(eq - *e) &&
			    strncmp(*e, names_commit_env[i], (size_t)(eq - *e)) == 0)
				keep = true;
		if (!keep)
			continue;
		memcpy(name, *e, (size_t)(eq - *e));
		name[eq - *e] = '\0';
		fputs(first ? "" : ", ", f);
		json_str(f, name);
		fputs(": ", f);
		json_str(f, eq + 1);
		first = false;
	}
	fputc('}', f);
}

/* A snapshot's counters in the order of schema.h's SCHEMA_COUNTERS. */
static void write_count_snap(FILE *f, const struct gs_count_snap *k)
{
	const long long v[SC_COUNT] = {
		[SC_LIVE_BYTES] = k->live_bytes, [SC_LIVE_ALLOCATIONS] = k->live_allocs,
		[SC_PEAK_BYTES] = k->peak_bytes, [SC_ALLOCATED_BYTES] = k->alloc_bytes,
		[SC_ALLOCATIONS] = k->allocs,	 [SC_FREED_BYTES] = k->freed_bytes,
		[SC_FREES] = k->frees,
	};
	char buf[SC_COUNT * 48];

	schema_counters_json(buf, sizeof(buf), v);
	fputs(buf, f);
}

static void write_counters(FILE *f, struct gs_counters *c)
{
	struct gs_count_snap k;

	counters_read(c, &k);
	write_count_snap(f, &k);
}

/* "growth" (docs/format.md): what the rule said of a site flagged once;
 * the caller holds gs_events_lock, under which the snapshot thread
 * publishes it (writer.c). */
static void write_verdict(FILE *f, const struct gs_verdict *v)
{
	static const unsigned char by[] = { [GS_BY_SAMPLES] = SB_SAMPLES,
					    [GS_BY_MARKS] = SB_MARKS,
					    [GS_BY_FRAMEWORK] = SB_FRAMEWORK };
	const char *const *k = schema_growth_key;
	char buf[256];

	if (!v)
		return;
	trend_verdict_json(buf, sizeof(buf), &v->v);
	fprintf(f, "\"%s\": {%s, \"%s\": \"%s\"", schema_site_key[SS_GROWTH], buf, k[SG_BY],
		schema_by_name[by[v->by]]);
	if (v->by == GS_BY_FRAMEWORK) {
		fprintf(f, ", \"%s\": \"%s\", ", k[SG_FRAMEWORK], names_fw[v->fw]);
		if (v->place == GS_FW_HOST)
			fprintf(f, "\"%s\": \"%s\"", k[SG_PLACE], schema_frameworks_key[SW_HOST]);
		else
			fprintf(f, "\"%s\": \"%u\"", k[SG_PLACE], v->place);
	}
	fputs("},\n     ", f);
}

/* The frameworks' verdicts as of this document (fw_counters.h): those of
 * its sites that a framework's counter speaks for are these, not the
 * snapshot thread's copy of its last sample (a put may have come since). */
static struct fw_growth doc_fw_growth;

/* S's verdict as this document says it, into *NOW; NULL when never
 * flagged. */
static const struct gs_verdict *site_verdict(const struct gs_site *s, struct gs_verdict *now)
{
	if (!s->verdict)
		return NULL;
	*now = *s->verdict;
	if (now->by == GS_BY_FRAMEWORK && now->fw < GS_FW_COUNT && now->place < GS_FW_PLACES &&
	    doc_fw_growth.has[now->fw][now->place])
		now->v = doc_fw_growth.v[now->fw][now->place];
	return now;
}

static void write_site(FILE *f, struct gs_site *s)
{
	struct gs_verdict now;
	const struct gs_verdict *v = site_verdict(s, &now);
	/* one verdict, said twice: "growing" is "growth" growing */
	bool growing = v ? v->v.state == TREND_GROWING : atomic_load(&s->growing);

	const char *const *k = schema_site_key;

	fprintf(f, "    {\"%s\": %u, \"%s\": \"%s\", \"%s\": \"%s\", \"%s\": \"%s\", ", k[SS_ID],
		s->id, k[SS_KIND], names_kinds[s->kind], k[SS_API], gs_api_names[s->api],
		k[SS_DOOR], gs_door_names[s->door]);
	write_counters(f, &s->c);
	fprintf(f, ", \"%s\": %s, \"%s\": %llu,\n     ", k[SS_GROWING], growing ? "true" : "false",
		k[SS_FIRST_SEQ], (unsigned long long)s->first_seq);
	write_verdict(f, v);
	fprintf(f, "\"%s\": [", k[SS_FRAMES]);
	for (unsigned i = 0; i < s->depth; i++) {
		const struct gs_frame *fr = &s->frames[i];

		const struct gs_name *n = symbols_of(fr);

		fprintf(f, "%s{\"%s\": %d, \"%s\": %llu", i ? ", " : "",
			schema_frame_key[SF_MODULE], fr->module, schema_frame_key[SF_OFFSET],
			(unsigned long long)fr->offset);
		if (n) {
			fprintf(f, ", \"%s\": ", schema_frame_key[SF_SYMBOL]);
			json_str(f, n->symbol);
		}
		fputc('}', f);
	}
	fputc(']', f);
	if (s->pydepth) {
		fprintf(f, ",\n     \"%s\": [", k[SS_PYTHON]);
		for (unsigned i = 0; i < s->pydepth; i++) {
			const struct gs_pyframe *p = &s->py[i];

			fprintf(f, "%s{\"%s\": ", i ? ", " : "", schema_pyframe_key[SP_FILE]);
			json_str(f, p->file ? p->file : "?");
			fprintf(f, ", \"%s\": ", schema_pyframe_key[SP_FUNCTION]);
			json_str(f, p->function ? p->function : "?");
			fprintf(f, ", \"%s\": %d}", schema_pyframe_key[SP_LINE],
				p->line > 0 ? p->line : 0);
		}
		fputc(']', f);
	}
	fputc('}', f);
}

/* What the verdict is judged on (oom_facts.c), each only when known. */
static void write_oom_facts(FILE *f, const struct gs_oom *e)
{
	const struct gs_oom_torch *t = e->torch;

	if (e->device_live >= 0)
		fprintf(f, ", \"device_live_bytes\": %lld", e->device_live);
	if (e->limit > 0)
		fprintf(f, ", \"limit_bytes\": %lld, \"capped\": %s", e->limit,
			e->capped ? "true" : "false");
	if (e->pool) {
		fputs(", \"pool\": {\"label\": ", f);
		json_str(f, e->pool);
		fprintf(f, ", \"bytes\": %lld, \"requested\": %s}", e->pool_bytes,
			e->from_pool ? "true" : "false");
	}
	if (e->library) {
		fprintf(f, ", \"library\": {\"bytes\": %lld, \"top\": ", e->library_bytes);
		json_str(f, e->library);
		fprintf(f, ", \"top_bytes\": %lld}", e->library_top);
	}
	if (e->graph_bytes > 0)
		fprintf(f, ", \"graph_bytes\": %lld", e->graph_bytes);
	if (e->others_bytes >= 0) {
		fprintf(f, ", \"others\": {\"bytes\": %lld, \"processes\": [", e->others_bytes);
		for (unsigned i = 0; i < e->n_others; i++) {
			fprintf(f, "%s{\"pid\": %u", i ? ", " : "", e->others[i].pid);
			if (e->others[i].name[0]) {
				fputs(", \"name\": ", f);
				json_str(f, e->others[i].name);
			}
			fprintf(f, ", \"used_bytes\": %lld}", e->others[i].used);
		}
		fputs("]}", f);
	}
	if (t) {
		fprintf(f,
			",\n     \"torch\": {\"requested_bytes\": %lld, \"allocated_bytes\": %lld, "
			"\"reserved_bytes\": %lld",
			t->request, t->allocated, t->reserved);
		if (t->largest_free >= 0)
			fprintf(f, ", \"largest_free_bytes\": %lld", t->largest_free);
		/* the members of torch_view.py's own JSON object, "lines" and
		 * "holders" (events_torch_oom checked its shape) */
		if (t->lines && strlen(t->lines) > 2)
			fprintf(f, ", %.*s", (int)strlen(t->lines) - 2, t->lines + 1);
		fputc('}', f);
	}
}

static void write_oom_event(FILE *f, const struct gs_oom *e, bool with_file)
{
	fprintf(f,
		"{\"type\": \"oom\", \"number\": %u, \"time\": %.3f, \"api\": \"%s\", "
		"\"kind\": \"%s\", \"requested_bytes\": %llu, \"device\": %d, "
		"\"live_bytes\": %lld, \"free_bytes\": %lld, \"total_bytes\": %lld, \"site\": %u",
		e->number, e->time, gs_api_names[e->api], names_kinds[e->kind],
		(unsigned long long)e->requested, e->device, e->live, e->free_bytes, e->total_bytes,
		e->site);
	write_oom_facts(f, e);
	if (with_file && e->number <= GS_OOM_FILES)
		fprintf(f, ", \"file\": \"" GS_FILE_OOM_N "\"", e->number);
	fputc('}', f);
}

/* The sites a list does not show (view.c): how many, and their bytes. */
static void write_list_folded(FILE *f, unsigned n, long long live)
{
	if (n)
		fprintf(f, ", \"folded\": {\"sites\": %u, \"live_bytes\": %lld}", n, live);
}

static void write_at_peak(FILE *f, const struct gs_view *v)
{
	const struct gs_peak_snap *p = &v->peak;
	bool first = true;

	if (!v->has_peak)
		return;
	fprintf(f, ",\n  \"at_peak\": {\"bytes\": %lld, \"time\": %.3f, \"devices\": [", p->bytes,
		p->time);
	for (int d = 0; d <= GS_MAX_DEVICES; d++) {
		if (!p->devices[d])
			continue;
		fprintf(f, "%s{\"device\": %d, \"live_bytes\": %lld}", first ? "" : ", ", d - 1,
			p->devices[d]);
		first = false;
	}
	fputs("],\n    \"sites\": [", f);
	for (unsigned i = 0; i < p->n; i++)
		fprintf(f, "%s{\"site\": %u, \"live_bytes\": %lld}", i ? ", " : "",
			p->sites[i].site, p->sites[i].live_bytes);
	fputc(']', f);
	write_list_folded(f, v->peak_folded, v->peak_folded_live);
	fputc('}', f);
}

/* The sites not listed, per kind (GPUSPY_MAX_SITES): only when some are. */
static void write_folded(FILE *f, const struct gs_view *v)
{
	bool first = true;

	if (!v->n_folded)
		return;
	fputs(",\n  \"folded\": [", f);
	for (int k = 0; k < GS_KIND_COUNT; k++) {
		const struct gs_folded *x = &v->folded[k];

		if (!x->sites)
			continue;
		fprintf(f, "%s\n    {\"kind\": \"%s\", \"sites\": %llu, \"growing\": %llu, ",
			first ? "" : ",", names_kinds[k], x->sites, x->growing);
		write_count_snap(f, &x->c);
		fputc('}', f);
		first = false;
	}
	fprintf(f, "],\n  \"max_sites\": %u", gs_config.max_sites);
}

/* A framework's place P opening its object: a CUDA ordinal or "host". */
static void write_place(FILE *f, unsigned p, bool first)
{
	if (p == GS_FW_HOST)
		fprintf(f, "%s\"%s\": {", first ? "" : ", ", schema_frameworks_key[SW_HOST]);
	else
		fprintf(f, "%s\"%u\": {", first ? "" : ", ", p);
}

/* The frameworks' allocated counters the growth rule flagged, shaped as
 * "counters" (docs/format.md, "frameworks.growth"), with the site of the
 * framework's pool segments they are said of. */
static void write_frameworks_growth(FILE *f)
{
	const char *const *k = schema_frameworks_key;
	const struct fw_growth *g = &doc_fw_growth; /* taken before the sites */
	bool ffirst = true;
	char buf[256];

	for (unsigned fw = 0; fw < GS_FW_COUNT; fw++) {
		bool pfirst = true;

		for (unsigned p = 0; p < GS_FW_PLACES; p++) {
			if (!g->has[fw][p])
				continue;
			if (ffirst)
				fprintf(f, ", \"%s\": {", k[SW_GROWTH]);
			if (pfirst)
				fprintf(f, "%s\"%s\": {", ffirst ? "" : ", ", names_fw[fw]);
			write_place(f, p, pfirst);
			trend_verdict_json(buf, sizeof(buf), &g->v[fw][p]);
			fprintf(f, "\"%s\": \"%s\", %s", k[SW_COUNTER],
				names_fw_counter[GS_FWC_ALLOCATED], buf);
			if (g->site[fw] >= 0)
				fprintf(f, ", \"%s\": %lld", k[SW_SITE], g->site[fw]);
			fputc('}', f);
			ffirst = pfirst = false;
		}
		if (!pfirst)
			fputc('}', f);
	}
	if (!ffirst)
		fputc('}', f);
}

/* The frameworks' latest figures (fw_counters.h), the shape of the
 * history's "fw" member; every caller holds gs_events_lock (events.c). */
static void write_frameworks(FILE *f)
{
	static struct fw_latest l;
	bool ffirst = true;

	fw_counters_copy(&l);
	if (!l.any)
		return;
	fprintf(f, ",\n  \"frameworks\": {\"%s\": %.3f, \"%s\": {", schema_frameworks_key[SW_TIME],
		l.time, schema_frameworks_key[SW_COUNTERS]);
	for (unsigned fw = 0; fw < GS_FW_COUNT; fw++) {
		bool pfirst = true;

		for (unsigned p = 0; p < GS_FW_PLACES; p++) {
			bool cfirst = true;

			for (unsigned c = 0; c < GS_FWC_COUNT; c++) {
				if (!l.has[fw][p][c])
					continue;
				if (pfirst)
					fprintf(f, "%s\"%s\": {", ffirst ? "" : ", ", names_fw[fw]);
				if (cfirst)
					write_place(f, p, pfirst);
				fprintf(f, "%s\"%s\": %lld", cfirst ? "" : ", ",
					names_fw_counter[c], l.v[fw][p][c]);
				ffirst = pfirst = cfirst = false;
			}
			if (!cfirst)
				fputc('}', f);
		}
		if (!pfirst)
			fputc('}', f);
	}
	fputc('}', f);
	write_frameworks_growth(f);
	fputc('}', f);
}

int process_json_write(FILE *f, const struct gs_view *v)
{
	struct gs_site **sites = v->sites;
	unsigned n = v->n;
	char hostq[256];
	bool first;

	snprintf(hostq, sizeof(hostq), "%s", v->host);

	fprintf(f, "{\n  \"format\": \"" GS_FORMAT_PROCESS "\",\n  \"gpuspy_version\": \"%s\",\n",
		GPUSPY_VERSION);
	fputs("  \"host\": ", f);
	json_str(f, hostq);
	fprintf(f, ",\n  \"pid\": %d,\n  \"ppid\": %d,\n", (int)getpid(), (int)getppid());
	/* the run it belongs to: what tells two runs in one directory apart */
	if (gs_state.run.id[0]) {
		fputs("  \"run\": ", f);
		json_str(f, gs_state.run.id);
		fputs(",\n", f);
	}
	/* GPUSPY_LIMIT: a run on a smaller card, on purpose */
	if (gs_config.limit)
		fprintf(f, "  \"limit\": {\"bytes\": %llu},\n", gs_config.limit);
	/* where its metrics are served (GPUSPY_PROMETHEUS), port 0 resolved */
	if (endpoint_address()) {
		fputs("  \"prometheus\": ", f);
		json_str(f, endpoint_address());
		fputs(",\n", f);
	}
	fputs("  \"exe\": ", f);
	{
		char exe[4096];
		ssize_t k = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

		exe[k > 0 ? k : 0] = '\0';
		json_str(f, exe);
	}
	fputs(",\n  \"command\": ", f);
	write_command(f);
	fputs(",\n  \"environment\": ", f);
	write_env(f);
	fprintf(f, ",\n  \"start_time\": %.3f,\n  \"end_time\": %.3f,\n", gs_state.start_time,
		gs_now());
	fprintf(f, "  \"complete\": %s,\n  \"depth\": %u,\n  \"unwinder\": \"%s\",\n",
		atomic_load(&gs_state.complete) ? "true" : "false", gs_config.depth, unwind_name());
	{
		const char *version, *note;
		bool supported;

		if (pystack_info(&version, &supported, &note)) {
			fprintf(f, "  \"python\": {\"version\": \"%s\", \"supported\": %s", version,
				supported ? "true" : "false");
			if (!supported) {
				fputs(", \"note\": ", f);
				json_str(f, note);
			}
			fputs("},\n", f);
		}
	}
	{
		const struct gs_cuda_info *ci = driver_info();

		fprintf(f, "  \"cuda\": {\"driver_version\": %d, \"devices\": [",
			ci->driver_version);
		for (unsigned i = 0; i < ci->ndevices; i++) {
			fprintf(f, "%s{\"device\": %d, \"name\": ", i ? ", " : "",
				ci->devices[i].ordinal);
			json_str(f, ci->devices[i].name);
			fprintf(f, ", \"total_bytes\": %lld}", ci->devices[i].total_bytes);
		}
		fputs("]},\n", f);
	}
	fprintf(f, "  \"leaked\": {\"bytes\": %lld, \"allocations\": %lld},\n", v->gpu_live,
		v->gpu_allocs);
	fprintf(f, "  \"peak\": {\"bytes\": %lld},\n  \"kinds\": {\n", v->gpu_peak);
	for (int k = 0; k < GS_KIND_COUNT; k++) {
		fprintf(f, "    \"%s\": {", names_kinds[k]);
		write_counters(f, &gs_totals.kind[k]);
		fputs(k + 1 < GS_KIND_COUNT ? "},\n" : "}\n  },\n", f);
	}
	fprintf(f,
		"  \"vmm_address_space\": {\"reserved_bytes\": %lld, \"mapped_bytes\": %lld},\n"
		"  \"untracked_frees\": %lld,\n  \"replaced\": %lld,\n  \"python_calls\": %llu,\n",
		atomic_load(&gs_totals.vmm_reserved_bytes),
		atomic_load(&gs_totals.vmm_mapped_bytes), atomic_load(&gs_totals.untracked_frees),
		atomic_load(&gs_totals.replaced), atomic_load(&gs_totals.torch_calls));
	fputs("  \"doors\": {", f);
	for (int d = 0; d < GS_DOOR_COUNT; d++)
		fprintf(f, "%s\"%s\": %lld", d ? ", " : "", gs_door_names[d],
			totals_door((enum gs_door)d));
	fputs("},\n  \"calls\": {", f);
	for (int c = 0; c < GS_CALL_COUNT; c++)
		fprintf(f, "%s\"%s\": %lld", c ? ", " : "", gs_call_names[c],
			calls_total((enum gs_call)c));
	fputc('}', f);
	graph_write(f);
	fputs(",\n  \"devices\": [", f);
	first = true;
	/* From counters, not a walk of the table: a snapshot's cost grows with
	 * the number of sites, not of live allocations. */
	for (int i = 0; i <= GS_MAX_DEVICES; i++) {
		long long cnt = totals_device_allocs((unsigned)i);

		if (cnt <= 0)
			continue;
		fprintf(f, "%s{\"device\": %d, \"live_bytes\": %lld, \"live_allocations\": %lld}",
			first ? "" : ", ", i - 1, totals_device_live((unsigned)i), cnt);
		first = false;
	}
	fputs("],\n  \"modules\": [\n", f);
	for (unsigned i = 0, nm = unwind_module_count(); i < nm; i++) {
		const struct gs_module *m = unwind_module(i);

		fputs("    {\"path\": ", f);
		json_str(f, m->path);
		fprintf(f, ", \"build_id\": \"%s\", \"base\": %llu}%s\n", m->build_id,
			(unsigned long long)m->base, i + 1 < nm ? "," : "");
	}
	fputs("  ],\n  \"sites\": [\n", f);
	fw_counters_growth(&doc_fw_growth);
	for (unsigned i = 0; i < n; i++) {
		write_site(f, sites[i]);
		fputs(i + 1 < n ? ",\n" : "\n", f);
	}
	fputs("  ]", f);
	write_folded(f, v);
	write_at_peak(f, v);
	write_frameworks(f);
	/* The outside view, for snapshots and post-mortems (not at exit). */
	if (v->samples || v->label || v->event)
		nvml_write(f);
	if (v->n_ooms || v->oom_dropped) {
		fputs(",\n  \"oom\": [", f);
		for (unsigned i = 0; i < v->n_ooms; i++) {
			fputs(i ? ",\n    " : "\n    ", f);
			write_oom_event(f, &v->ooms[i], true);
		}
		fprintf(f, "],\n  \"oom_dropped\": %u", v->oom_dropped);
	}
	if (v->event) {
		fputs(",\n  \"event\": ", f);
		write_oom_event(f, v->event, false);
	}
	if (v->samples)
		fprintf(f, ",\n  \"snapshot\": {\"samples\": %llu, \"interval_us\": %llu}",
			v->samples, gs_config.interval_us);
	if (v->label) {
		fprintf(f, ",\n  \"snapshot\": {\"number\": %u, \"label\": ", v->number);
		json_str(f, v->label);
		fputc('}', f);
	}
	if (v->n_marks) {
		unsigned oldest = v->n_marks > GS_MARKS ? v->n_marks - GS_MARKS : 0;

		fputs(",\n  \"marks\": [", f);
		for (unsigned i = oldest; i < v->n_marks; i++) {
			const unsigned m = i % GS_MARKS;
			const struct gs_top *sh = &v->marks[m].shown;

			fprintf(f,
				"%s{\"time\": %.3f, \"label\": ", i > oldest ? ",\n    " : "\n    ",
				v->marks[m].time);
			json_str(f, v->marks[m].label);
			fprintf(f, ", \"live_bytes\": %lld, \"sites\": [", v->marks[m].live);
			for (unsigned j = 0; j < sh->ntop; j++)
				fprintf(f, "%s{\"site\": %u, \"live_bytes\": %lld}", j ? ", " : "",
					sh->top[j].site, sh->top[j].live_bytes);
			fputc(']', f);
			write_list_folded(f, sh->folded, sh->folded_live);
			fputc('}', f);
		}
		fputs("],\n  \"mark\": ", f);
		json_str(f, v->marks[(v->n_marks - 1) % GS_MARKS].label);
	}
	fputs("\n}\n", f);
	return ferror(f) ? -EIO : 0;
}
