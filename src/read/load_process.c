/* SPDX-License-Identifier: MIT */
/*
 * Reading "gpuspy-process/1" reports (docs/format.md): report.json,
 * oom-N.json and snapshots, with the validation kit of validate.c.  Keys
 * this version does not know are ignored, as the format allows.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "load.h"
#include "names.h"
#include "schema.h"
#include "ranks.h"
#include "util.h"
#include "trend.h"
#include "validate.h"

/* A kind's or a site's counters, and the relations any correct tracker
 * keeps between them: what is live or was freed was allocated first, and
 * the high-water mark lies between what is live and all that was
 * allocated.  A file that breaks them is corrupt, and its sums would lie. */
static int get_counters(const struct vctx *v, json_t *obj, struct rd_counters *c)
{
	const char *const *k = schema_counter_key;
	int64_t *const fields[SC_COUNT] = {
		[SC_LIVE_BYTES] = &c->live_bytes,
		[SC_LIVE_ALLOCATIONS] = &c->live_allocations,
		[SC_PEAK_BYTES] = &c->peak_bytes,
		[SC_ALLOCATED_BYTES] = &c->allocated_bytes,
		[SC_ALLOCATIONS] = &c->allocations,
		[SC_FREED_BYTES] = &c->freed_bytes,
		[SC_FREES] = &c->frees,
	};

	for (unsigned i = 0; i < SC_COUNT; i++) {
		int r = validate_count(v, obj, k[i], fields[i]);
		if (r < 0)
			return r;
	}
	if (c->live_allocations > c->allocations)
		return validate_bad(v, k[SC_LIVE_ALLOCATIONS],
				    "%" PRId64 " exceeds %s (%" PRId64 ")", c->live_allocations,
				    k[SC_ALLOCATIONS], c->allocations);
	if (c->frees > c->allocations)
		return validate_bad(v, k[SC_FREES], "%" PRId64 " exceeds %s (%" PRId64 ")",
				    c->frees, k[SC_ALLOCATIONS], c->allocations);
	if (c->live_bytes > c->peak_bytes)
		return validate_bad(v, k[SC_LIVE_BYTES], "%" PRId64 " exceeds %s (%" PRId64 ")",
				    c->live_bytes, k[SC_PEAK_BYTES], c->peak_bytes);
	if (c->peak_bytes > c->allocated_bytes)
		return validate_bad(v, k[SC_PEAK_BYTES], "%" PRId64 " exceeds %s (%" PRId64 ")",
				    c->peak_bytes, k[SC_ALLOCATED_BYTES], c->allocated_bytes);
	if (c->freed_bytes > c->allocated_bytes)
		return validate_bad(v, k[SC_FREED_BYTES], "%" PRId64 " exceeds %s (%" PRId64 ")",
				    c->freed_bytes, k[SC_ALLOCATED_BYTES], c->allocated_bytes);
	return 0;
}

static bool is_hex(const char *s)
{
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f') ||
		      (*s >= 'A' && *s <= 'F')))
			return false;
	return true;
}

static int load_command(const struct vctx *v, json_t *root, struct rd_process *p)
{
	json_t *arr, *val;
	size_t i;
	int r = validate_member(v, root, "command", true, JSON_ARRAY, &arr);

	if (r < 0)
		return r;
	p->command = calloc(json_array_size(arr) + 1, sizeof(*p->command));
	if (!p->command)
		return -ENOMEM;
	json_array_foreach(arr, i, val)
	{
		if (!json_is_string(val))
			return validate_bad(v, NULL, "command[%zu]: expected a string, got %s", i,
					    validate_type_name(val));
		p->command[i] = strdup(json_string_value(val));
		if (!p->command[i])
			return -ENOMEM;
		p->ncommand = i + 1;
	}
	return 0;
}

/* Optional keys, most read only to be checked (depth is kept): a report
 * whose optional parts are of the wrong type was not written by a correct
 * gpuspy, and nothing it says can be trusted. */
static int check_optional(const struct vctx *v, json_t *root, struct rd_process *p)
{
	json_t *j, *val;
	const char *name;
	size_t i;
	int64_t x;
	int r;

	if ((r = validate_member(v, root, "gpuspy_version", false, JSON_STRING, &j)) < 0 ||
	    (r = validate_int(v, root, "ppid", false, 0, INT32_MAX, &x)) < 0 ||
	    (r = validate_int(v, root, "depth", false, 0, 1 << 20, &p->depth)) < 0 ||
	    (r = validate_time(v, root, "start_time", false, &p->start_time)) < 0 ||
	    (r = validate_time(v, root, "end_time", false, &p->end_time)) < 0 ||
	    (r = validate_counts_object(v, root, "doors")) < 0 ||
	    (r = validate_counts_object(v, root, "calls")) < 0 ||
	    (r = validate_counts_object(v, root, "vmm_address_space")) < 0 ||
	    (r = validate_member(v, root, "limit", false, JSON_OBJECT, &j)) < 0)
		return r;
	if (j) {
		struct vctx sub = *v;

		sub.where = "limit";
		if ((r = validate_int(&sub, j, "bytes", true, 1, INT64_MAX, &p->limit_bytes)) < 0)
			return r;
	}

	if ((r = validate_member(v, root, "environment", false, JSON_OBJECT, &j)) < 0)
		return r;
	if (j) {
		json_object_foreach(j, name, val)
		{
			if (!json_is_string(val))
				return validate_bad(v, "environment",
						    "%s: expected a string, got %s", name,
						    validate_type_name(val));
		}
	}

	if ((r = validate_member(v, root, "devices", false, JSON_ARRAY, &j)) < 0)
		return r;
	if (j) {
		/* kept for 'gpuspy top' (its per-device line) */
		p->devices = calloc(json_array_size(j) + 1, sizeof(*p->devices));
		if (!p->devices)
			return -ENOMEM;
		json_array_foreach(j, i, val)
		{
			struct rd_device *d = &p->devices[i];
			char where[64];
			struct vctx sub = *v;

			if ((r = validate_element(&sub, val, where, sizeof(where), "devices[%zu]",
						  i)) < 0)
				return r;
			if ((r = validate_int(&sub, val, "device", true, -1, INT32_MAX,
					      &d->device)) < 0 ||
			    (r = validate_count(&sub, val, "live_bytes", &d->live_bytes)) < 0 ||
			    (r = validate_count(&sub, val, "live_allocations",
						&d->live_allocations)) < 0)
				return r;
			p->ndevices = i + 1;
		}
	}
	return 0;
}

/* The interpreter the process ran, when it ran one. */
static int load_python(const struct vctx *v, json_t *root, struct rd_process *p)
{
	struct vctx sub = *v;
	json_t *obj, *j;
	int r = validate_member(v, root, "python", false, JSON_OBJECT, &obj);

	if (r < 0 || !obj)
		return r;
	sub.where = "python";
	if ((r = validate_str(&sub, obj, "version", true, false, &p->python.version)) < 0 ||
	    (r = validate_member(&sub, obj, "supported", true, JSON_TRUE, &j)) < 0)
		return r;
	p->python.supported = json_is_true(j);
	if ((r = validate_str(&sub, obj, "note", false, false, &p->python.note)) < 0)
		return r;
	p->python.present = true;
	return 0;
}

static int load_kinds(const struct vctx *v, json_t *root, struct rd_process *p)
{
	json_t *kinds, *k;
	int r = validate_member(v, root, "kinds", true, JSON_OBJECT, &kinds);

	if (r < 0)
		return r;
	for (int i = 0; i < GS_KIND_COUNT; i++) {
		char where[32];
		struct vctx sub = *v;

		snprintf(where, sizeof(where), "kinds.%s", names_kind(i));
		sub.where = "kinds";
		r = validate_member(&sub, kinds, names_kind(i), true, JSON_OBJECT, &k);
		if (r < 0)
			return r;
		sub.where = where;
		r = get_counters(&sub, k, &p->kinds[i]);
		if (r < 0)
			return r;
	}
	return 0;
}

static int load_modules(const struct vctx *v, json_t *root, struct rd_process *p)
{
	json_t *arr, *m;
	size_t i;
	int r = validate_member(v, root, "modules", true, JSON_ARRAY, &arr);

	if (r < 0)
		return r;
	p->modules = calloc(json_array_size(arr) + 1, sizeof(*p->modules));
	if (!p->modules)
		return -ENOMEM;
	json_array_foreach(arr, i, m)
	{
		struct rd_module *mod = &p->modules[i];
		char where[48];
		struct vctx sub = *v;
		int64_t base;

		if ((r = validate_element(&sub, m, where, sizeof(where), "modules[%zu]", i)) < 0)
			return r;
		/* counted before the members are read, so that process_free
		 * sees every string that was copied */
		p->nmodules = i + 1;
		if ((r = validate_str(&sub, m, "path", true, true, &mod->path)) < 0 ||
		    (r = validate_str(&sub, m, "build_id", true, false, &mod->build_id)) < 0 ||
		    (r = validate_int(&sub, m, "base", true, 0, INT64_MAX, &base)) < 0)
			return r;
		if (!is_hex(mod->build_id))
			return validate_bad(&sub, "build_id", "not a hexadecimal string");
		for (char *c = mod->build_id; *c; c++)
			if (*c >= 'A' && *c <= 'F')
				*c += 'a' - 'A';
		mod->base = (uint64_t)base;
	}
	return 0;
}

static int load_frames(const struct vctx *v, json_t *site, struct rd_process *p, struct rd_site *s)
{
	json_t *arr, *f;
	size_t i;
	const char *const *k = schema_frame_key;
	int r = validate_member(v, site, schema_site_key[SS_FRAMES], true, JSON_ARRAY, &arr);

	if (r < 0)
		return r;
	s->frames = calloc(json_array_size(arr) + 1, sizeof(*s->frames));
	if (!s->frames)
		return -ENOMEM;
	json_array_foreach(arr, i, f)
	{
		struct rd_frame *fr = &s->frames[i];
		char where[96];
		struct vctx sub = *v;
		int64_t offset;

		if ((r = validate_element(&sub, f, where, sizeof(where), "%s.%s[%zu]", v->where,
					  schema_site_key[SS_FRAMES], i)) < 0)
			return r;
		s->nframes = i + 1;
		r = validate_int(&sub, f, k[SF_MODULE], true, INT64_MIN, INT64_MAX, &fr->module);
		if (r < 0)
			return r;
		if (fr->module < -1 || fr->module >= (int64_t)p->nmodules)
			return validate_bad(&sub, k[SF_MODULE],
					    "index %" PRId64 " out of range (%zu modules)",
					    fr->module, p->nmodules);
		if ((r = validate_int(&sub, f, k[SF_OFFSET], true, 0, INT64_MAX, &offset)) < 0 ||
		    (r = validate_str(&sub, f, k[SF_SYMBOL], false, false, &fr->symbol)) < 0)
			return r;
		fr->offset = (uint64_t)offset;
	}
	return 0;
}

/* A site's Python frames, innermost first: optional, since a thread that
 * ran no Python has none. */
static int load_python_frames(const struct vctx *v, json_t *site, struct rd_site *s)
{
	json_t *arr, *f;
	size_t i;
	const char *const *k = schema_pyframe_key;
	int r = validate_member(v, site, schema_site_key[SS_PYTHON], false, JSON_ARRAY, &arr);

	if (r < 0 || !arr)
		return r;
	s->python = calloc(json_array_size(arr) + 1, sizeof(*s->python));
	if (!s->python)
		return -ENOMEM;
	json_array_foreach(arr, i, f)
	{
		struct rd_pyframe *py = &s->python[i];
		char where[96];
		struct vctx sub = *v;

		if ((r = validate_element(&sub, f, where, sizeof(where), "%s.%s[%zu]", v->where,
					  schema_site_key[SS_PYTHON], i)) < 0)
			return r;
		s->npython = i + 1;
		if ((r = validate_str(&sub, f, k[SP_FILE], true, false, &py->file)) < 0 ||
		    (r = validate_str(&sub, f, k[SP_FUNCTION], true, false, &py->function)) < 0 ||
		    (r = validate_int(&sub, f, k[SP_LINE], true, 0, INT32_MAX, &py->line)) < 0)
			return r;
	}
	return 0;
}

static int load_sites(const struct vctx *v, json_t *root, struct rd_process *p)
{
	const char *const *sk = schema_site_key;
	json_t *growing;
	json_t *arr, *js;
	size_t i;
	int r = validate_member(v, root, "sites", true, JSON_ARRAY, &arr);

	if (r < 0)
		return r;
	p->sites = calloc(json_array_size(arr) + 1, sizeof(*p->sites));
	if (!p->sites)
		return -ENOMEM;
	json_array_foreach(arr, i, js)
	{
		struct rd_site *s = &p->sites[i];
		char where[48];
		struct vctx sub = *v;
		char *kind = NULL;
		json_t *door;
		int64_t x;
		int k;

		if ((r = validate_element(&sub, js, where, sizeof(where), "sites[%zu]", i)) < 0)
			return r;
		p->nsites = i + 1;
		s->id = -1;
		r = validate_str(&sub, js, sk[SS_KIND], true, true, &kind);
		if (r < 0)
			return r;
		for (k = 0; k < GS_KIND_COUNT; k++)
			if (strcmp(kind, names_kind(k)) == 0)
				break;
		if (k == GS_KIND_COUNT) {
			r = validate_bad(&sub, sk[SS_KIND], "unknown kind \"%.64s\"", kind);
			free(kind);
			return r;
		}
		free(kind);
		s->kind = k;
		if ((r = validate_str(&sub, js, sk[SS_API], true, true, &s->api)) < 0 ||
		    (r = validate_member(&sub, js, sk[SS_DOOR], false, JSON_STRING, &door)) < 0 ||
		    (r = validate_int(&sub, js, sk[SS_ID], false, 0, INT64_MAX, &s->id)) < 0 ||
		    (r = validate_int(&sub, js, sk[SS_FIRST_SEQ], false, 0, INT64_MAX, &x)) < 0 ||
		    (r = get_counters(&sub, js, &s->c)) < 0 ||
		    (r = load_frames(&sub, js, p, s)) < 0 ||
		    (r = load_python_frames(&sub, js, s)) < 0 ||
		    (r = validate_member(&sub, js, sk[SS_GROWING], false, JSON_TRUE, &growing)) <
			    0 ||
		    (r = validate_growth(&sub, js, sk[SS_GROWTH], true, &s->growth)) < 0)
			return r;
		s->growing = json_is_true(growing);
		/* growing is the verdict growing: one verdict, said twice */
		if (s->growth.present && s->growing != (s->growth.state == TREND_GROWING))
			return validate_bad(&sub, sk[SS_GROWING], "%s, but growth.stopped is %s",
					    s->growing ? "true" : "false",
					    s->growing ? "true" : "false");
	}
	return 0;
}

/* "folded", optional: per kind, the sites a report sums rather than lists
 * (GPUSPY_MAX_SITES); each kind at most once. */
static int load_folded(const struct vctx *v, json_t *root, struct rd_process *p)
{
	json_t *arr, *js;
	size_t i;
	int64_t x;
	int r;

	if ((r = validate_int(v, root, "max_sites", false, 0, INT64_MAX, &x)) < 0 ||
	    (r = validate_member(v, root, "folded", false, JSON_ARRAY, &arr)) < 0 || !arr)
		return r;
	json_array_foreach(arr, i, js)
	{
		struct vctx sub = *v;
		struct rd_folded *f;
		char where[48];
		char *kind = NULL;
		int k;

		if ((r = validate_element(&sub, js, where, sizeof(where), "folded[%zu]", i)) < 0 ||
		    (r = validate_str(&sub, js, "kind", true, true, &kind)) < 0)
			return r;
		for (k = 0; k < GS_KIND_COUNT; k++)
			if (strcmp(kind, names_kind(k)) == 0)
				break;
		if (k == GS_KIND_COUNT || p->folded[k].sites) {
			r = validate_bad(&sub, "kind", "%s kind \"%.64s\"",
					 k == GS_KIND_COUNT ? "unknown" : "a second entry of",
					 kind);
			free(kind);
			return r;
		}
		free(kind);
		f = &p->folded[k];
		if ((r = validate_int(&sub, js, "sites", true, 1, INT64_MAX, &f->sites)) < 0 ||
		    (r = validate_int(&sub, js, "growing", false, 0, f->sites, &f->growing)) < 0 ||
		    (r = get_counters(&sub, js, &f->c)) < 0)
			return r;
		if (!util_add(&p->folded_sites, f->sites))
			return validate_bad(&sub, "sites", "too many sites");
	}
	return 0;
}

/* The "folded" of a list of sites (at_peak, a mark): optional. */
static int load_list_folded(const struct vctx *v, json_t *obj, int64_t *sites, int64_t *live)
{
	struct vctx sub = *v;
	json_t *f;
	int r = validate_member(v, obj, "folded", false, JSON_OBJECT, &f);

	if (r < 0 || !f)
		return r;
	if ((r = validate_int(&sub, f, "sites", true, 1, INT64_MAX, sites)) < 0 ||
	    (r = validate_count(&sub, f, "live_bytes", live)) < 0)
		return r;
	return 0;
}

/* "at_peak": optional; each of its sites must be one of the report's,
 * so it is read after them. */
/* "outside": optional; present in snapshots and post-mortems. */
static int load_outside(const struct vctx *v, json_t *root, struct rd_process *p)
{
	struct rd_outside *o = &p->outside;
	struct vctx sub = *v;
	json_t *obj, *gpus, *g, *procs, *pj;
	size_t i, k;
	int r = validate_member(v, root, "outside", false, JSON_OBJECT, &obj);

	if (r < 0 || !obj)
		return r;
	sub.where = "outside";
	if ((r = validate_member(&sub, obj, "devices", true, JSON_ARRAY, &gpus)) < 0)
		return r;
	o->gpus = calloc(json_array_size(gpus) + 1, sizeof(*o->gpus));
	if (!o->gpus)
		return -ENOMEM;
	o->present = true;
	json_array_foreach(gpus, i, g)
	{
		struct rd_outside_gpu *gpu = &o->gpus[i];
		char where[48];

		if ((r = validate_element(&sub, g, where, sizeof(where), "outside.devices[%zu]",
					  i)) < 0)
			return r;
		if ((r = validate_int(&sub, g, "index", true, 0, INT32_MAX, &gpu->index)) < 0 ||
		    (r = validate_count(&sub, g, "total_bytes", &gpu->total_bytes)) < 0 ||
		    (r = validate_count(&sub, g, "used_bytes", &gpu->used_bytes)) < 0 ||
		    (r = validate_member(&sub, g, "processes", true, JSON_ARRAY, &procs)) < 0)
			return r;
		o->ngpus = i + 1;
		gpu->procs = calloc(json_array_size(procs) + 1, sizeof(*gpu->procs));
		if (!gpu->procs)
			return -ENOMEM;
		json_array_foreach(procs, k, pj)
		{
			char w2[96];

			if ((r = validate_element(&sub, pj, w2, sizeof(w2),
						  "outside.devices[%zu].processes[%zu]", i, k)) < 0)
				return r;
			if ((r = validate_int(&sub, pj, "pid", true, 0, INT32_MAX,
					      &gpu->procs[k].pid)) < 0 ||
			    (r = validate_count(&sub, pj, "used_bytes",
						&gpu->procs[k].used_bytes)) < 0)
				return r;
			gpu->nprocs = k + 1;
		}
	}
	return 0;
}

/* the places "0" to "15" are parsed as such below */
_Static_assert(GS_FW_DEVICES == 16, "framework places are ordinals 0 to 15");

/* "frameworks.growth", optional: {FRAMEWORK: {PLACE: {"counter":
 * "allocated", the members of a "growth", "site": ID (optional)}}}, the
 * rule's verdict on the framework's own allocated counter. */
static int load_frameworks_growth(const struct vctx *v, json_t *obj, struct rd_process *p)
{
	struct rd_frameworks *fw = &p->frameworks;
	struct vctx sub = *v;
	char where[96];
	const char *const *k = schema_frameworks_key;
	const char *fk, *pk;
	json_t *g, *fx, *px;
	int r = validate_member(v, obj, k[SW_GROWTH], false, JSON_OBJECT, &g);

	for (int f = 0; f < GS_FW_COUNT; f++)
		for (int q = 0; q < GS_FW_PLACES; q++)
			fw->growth_site[f][q] = -1;
	if (r < 0 || !g)
		return r;
	sub.where = where;
	json_object_foreach(g, fk, fx)
	{
		int f = names_fw_parse(fk);

		snprintf(where, sizeof(where), "frameworks.growth");
		if (f < 0)
			return validate_bad(&sub, NULL, "unknown framework \"%.40s\"", fk);
		if (!json_is_object(fx))
			return validate_bad(&sub, fk, "expected an object");
		json_object_foreach(fx, pk, px)
		{
			int place = validate_fw_place(pk);
			char *counter = NULL;

			snprintf(where, sizeof(where), "frameworks.growth.%s", fk);
			if (place < 0)
				return validate_bad(&sub, NULL,
						    "\"%.40s\" is not a device ordinal (0 to %d) "
						    "nor \"%s\"",
						    pk, GS_FW_DEVICES - 1, k[SW_HOST]);
			if (!json_is_object(px))
				return validate_bad(&sub, pk, "expected an object");
			snprintf(where, sizeof(where), "frameworks.growth.%s.%s", fk, pk);
			if ((r = validate_str(&sub, px, k[SW_COUNTER], true, true, &counter)) < 0)
				return r;
			r = names_fw_counter_parse(counter) == GS_FWC_ALLOCATED ?
				    0 :
				    validate_bad(&sub, k[SW_COUNTER], "only \"%s\" is judged",
						 names_fw_counter[GS_FWC_ALLOCATED]);
			free(counter);
			if (r < 0 || (r = validate_int(&sub, px, k[SW_SITE], false, 0, INT64_MAX,
						       &fw->growth_site[f][place])) < 0)
				return r;
			/* its members are those of a "growth", at its level */
			{
				struct vctx in = sub;
				char at[64];

				snprintf(at, sizeof(at), "frameworks.growth.%s", fk);
				in.where = at;
				if ((r = validate_growth(&in, fx, pk, false,
							 &fw->growth[f][place])) < 0)
					return r;
			}
			fw->growth[f][place].by = RD_BY_FRAMEWORK;
			fw->growth[f][place].fw = f;
			fw->growth[f][place].place = place;
		}
	}
	return 0;
}

/* "frameworks": optional; {"time", "counters": {FRAMEWORK: {PLACE:
 * {COUNTER: N}}}}, no level empty. */
static int load_frameworks(const struct vctx *v, json_t *root, struct rd_process *p)
{
	struct rd_frameworks *fw = &p->frameworks;
	struct vctx sub = *v;
	char where[96];
	const char *const *k = schema_frameworks_key;
	const char *fk, *pk, *ck;
	json_t *obj, *counters, *fx, *px, *cx;
	int r = validate_member(v, root, "frameworks", false, JSON_OBJECT, &obj);

	if (r < 0 || !obj)
		return r;
	sub.where = "frameworks";
	if (json_object_size(obj) != 2 + (json_object_get(obj, k[SW_GROWTH]) != NULL))
		return validate_bad(&sub, NULL,
				    "expected exactly \"%s\", \"%s\" and, optional, \"%s\"",
				    k[SW_TIME], k[SW_COUNTERS], k[SW_GROWTH]);
	if ((r = validate_time(&sub, obj, k[SW_TIME], true, &fw->time)) < 0 ||
	    (r = validate_member(&sub, obj, k[SW_COUNTERS], true, JSON_OBJECT, &counters)) < 0)
		return r;
	if (json_object_size(counters) == 0)
		return validate_bad(&sub, k[SW_COUNTERS], "empty");
	sub.where = where;
	json_object_foreach(counters, fk, fx)
	{
		int f = names_fw_parse(fk);

		snprintf(where, sizeof(where), "frameworks.counters");
		if (f < 0)
			return validate_bad(&sub, NULL, "unknown framework \"%.40s\"", fk);
		if (!json_is_object(fx) || json_object_size(fx) == 0)
			return validate_bad(&sub, fk, "expected an object that is not empty");
		json_object_foreach(fx, pk, px)
		{
			int place = validate_fw_place(pk);

			snprintf(where, sizeof(where), "frameworks.counters.%s", fk);
			if (place < 0)
				return validate_bad(&sub, NULL,
						    "\"%.40s\" is not a device ordinal (0 to %d) "
						    "nor \"%s\"",
						    pk, GS_FW_DEVICES - 1, k[SW_HOST]);
			if (!json_is_object(px) || json_object_size(px) == 0)
				return validate_bad(&sub, pk,
						    "expected an object that is not empty");
			snprintf(where, sizeof(where), "frameworks.counters.%s.%s", fk, pk);
			json_object_foreach(px, ck, cx)
			{
				int c = names_fw_counter_parse(ck);

				(void)cx;
				if (c < 0)
					return validate_bad(&sub, NULL, "unknown counter \"%.40s\"",
							    ck);
				if ((r = validate_count(&sub, px, ck, &fw->v[f][place][c])) < 0)
					return r;
				fw->has[f][place][c] = true;
			}
		}
	}
	fw->present = true;
	return load_frameworks_growth(v, obj, p);
}

/* "calls": optional, counts only (check_optional checked them). */
static int load_calls(const struct vctx *v, json_t *root, struct rd_process *p)
{
	const char *name;
	json_t *obj = json_object_get(root, "calls"), *val;

	if (!json_is_object(obj))
		return 0;
	p->calls = calloc(json_object_size(obj) + 1, sizeof(*p->calls));
	if (!p->calls)
		return -ENOMEM;
	json_object_foreach(obj, name, val)
	{
		p->calls[p->ncalls].name = strdup(name);
		if (!p->calls[p->ncalls].name)
			return -ENOMEM;
		p->calls[p->ncalls++].value = json_integer_value(val);
	}
	return 0;
}

/* What "graph" must say of itself and, at exit, of the report around it:
 * its memory is device memory, counted in kinds.device.  (A snapshot reads
 * the two while the program runs on: they may be an event apart.) */
static int check_graph(const struct vctx *v, json_t *root, const struct rd_process *p)
{
	bool at_exit = !json_object_get(root, "snapshot") && !json_object_get(root, "event");

	const struct rd_graph *g = &p->graph;
	const struct rd_counters *dev = &p->kinds[GS_KIND_DEVICE];

	if (g->live_bytes > g->peak_bytes)
		return validate_bad(v, "live_bytes", "%" PRId64 " exceeds peak_bytes (%" PRId64 ")",
				    g->live_bytes, g->peak_bytes);
	if (at_exit &&
	    (g->live_bytes > dev->live_bytes || g->live_allocations > dev->live_allocations))
		return validate_bad(
			v, "live_bytes",
			"%" PRId64 " in %" PRId64 " allocations, more than kinds.device "
			"holds (%" PRId64 " in %" PRId64 ")",
			g->live_bytes, g->live_allocations, dev->live_bytes, dev->live_allocations);
	if (at_exit && (g->live_bytes == 0) != (g->live_allocations == 0))
		return validate_bad(v, "live_bytes", "%" PRId64 " bytes in %" PRId64 " allocations",
				    g->live_bytes, g->live_allocations);
	if (g->reserved_bytes > g->alloc_node_bytes || (g->alloc_node_bytes && !g->alloc_nodes))
		return validate_bad(v, "reserved_bytes",
				    "%" PRId64 " of %" PRId64 " bytes in %" PRId64 " nodes",
				    g->reserved_bytes, g->alloc_node_bytes, g->alloc_nodes);
	for (size_t i = 0; i < g->ndevices; i++) {
		const struct rd_graph_device *d = &g->devices[i];

		if (d->used_current > d->used_high || d->reserved_current > d->reserved_high ||
		    d->used_current > d->reserved_current || d->used_high > d->reserved_high)
			return validate_bad(v, "devices",
					    "device %" PRId64 ": used %" PRId64 " (high %" PRId64
					    ") against reserved %" PRId64 " (high %" PRId64 ")",
					    d->device, d->used_current, d->used_high,
					    d->reserved_current, d->reserved_high);
		for (size_t k = 0; k < i; k++)
			if (g->devices[k].device == d->device)
				return validate_bad(v, "devices", "device %" PRId64 " twice",
						    d->device);
	}
	return 0;
}

/* "graph": optional; read after "kinds". */
static int load_graph(const struct vctx *v, json_t *root, struct rd_process *p)
{
	struct rd_graph *g = &p->graph;
	struct vctx sub = *v;
	json_t *obj, *devs, *dj;
	size_t i;
	int r = validate_member(v, root, "graph", false, JSON_OBJECT, &obj);

	if (r < 0 || !obj)
		return r;
	sub.where = "graph";
	if ((r = validate_count(&sub, obj, "alloc_nodes", &g->alloc_nodes)) < 0 ||
	    (r = validate_count(&sub, obj, "alloc_node_bytes", &g->alloc_node_bytes)) < 0 ||
	    (r = validate_count(&sub, obj, "reserved_bytes", &g->reserved_bytes)) < 0 ||
	    (r = validate_count(&sub, obj, "launches", &g->launches)) < 0 ||
	    (r = validate_count(&sub, obj, "live_bytes", &g->live_bytes)) < 0 ||
	    (r = validate_count(&sub, obj, "live_allocations", &g->live_allocations)) < 0 ||
	    (r = validate_count(&sub, obj, "peak_bytes", &g->peak_bytes)) < 0 ||
	    (r = validate_count(&sub, obj, "trims", &g->trims)) < 0 ||
	    (r = validate_member(&sub, obj, "devices", true, JSON_ARRAY, &devs)) < 0)
		return r;
	g->devices = calloc(json_array_size(devs) + 1, sizeof(*g->devices));
	if (!g->devices)
		return -ENOMEM;
	json_array_foreach(devs, i, dj)
	{
		struct rd_graph_device *d = &g->devices[i];
		/* its own context: validate_element points it at `where` */
		struct vctx el = sub;
		char where[48];

		if ((r = validate_element(&el, dj, where, sizeof(where), "graph.devices[%zu]", i)) <
		    0)
			return r;
		if ((r = validate_int(&el, dj, "device", true, 0, INT32_MAX, &d->device)) < 0 ||
		    (r = validate_count(&el, dj, "used_current", &d->used_current)) < 0 ||
		    (r = validate_count(&el, dj, "used_high", &d->used_high)) < 0 ||
		    (r = validate_count(&el, dj, "reserved_current", &d->reserved_current)) < 0 ||
		    (r = validate_count(&el, dj, "reserved_high", &d->reserved_high)) < 0)
			return r;
		d->as_of = -1;
		if ((r = validate_time(&el, dj, "as_of", false, &d->as_of)) < 0)
			return r;
		g->ndevices = i + 1;
	}
	g->present = true;
	return check_graph(&sub, root, p);
}

/* P's sites by id, so that the lists that name them (at_peak, marks, the
 * out-of-memory events: hundreds of thousands of entries in a large run)
 * cost a search each, not a walk of every site. */
struct site_index {
	struct site_ref {
		int64_t id;
		size_t index;
	} * refs;
	size_t n;
};

static int cmp_site_ref(const void *pa, const void *pb)
{
	const struct site_ref *a = pa, *b = pb;

	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	return a->index < b->index ? -1 : a->index > b->index;
}

static int site_index_build(struct site_index *ix, const struct rd_process *p)
{
	ix->n = 0;
	ix->refs = calloc(p->nsites + 1, sizeof(*ix->refs));
	if (!ix->refs)
		return -ENOMEM;
	for (size_t i = 0; i < p->nsites; i++) {
		if (p->sites[i].id < 0)
			continue;
		ix->refs[ix->n].id = p->sites[i].id;
		ix->refs[ix->n].index = i;
		ix->n++;
	}
	if (ix->n > 1)
		qsort(ix->refs, ix->n, sizeof(*ix->refs), cmp_site_ref);
	return 0;
}

/* The index in P's sites of the first site of id ID, or -1. */
static ssize_t site_index_find(const struct site_index *ix, int64_t id)
{
	size_t lo = 0, hi = ix->n;

	/* the lowest entry >= ID: of two sites with one id, the first */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ix->refs[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < ix->n && ix->refs[lo].id == id)
		return (ssize_t)ix->refs[lo].index;
	return -1;
}

/* A list of {"site": ID, "live_bytes": N} (at_peak.sites, marks[].sites)
 * into *OUT: each ID must be one of P's sites (IX), read before.  WHERE
 * names the list in messages ("at_peak.sites"). */
static int load_site_bytes(const struct vctx *v, const struct site_index *ix, json_t *arr,
			   const char *where, struct rd_peak_site **out, size_t *n)
{
	struct vctx sub = *v;
	json_t *j;
	size_t i;
	int r;

	*out = calloc(json_array_size(arr) + 1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	json_array_foreach(arr, i, j)
	{
		struct rd_peak_site *ps = &(*out)[i];
		char at[96];
		ssize_t k;

		if ((r = validate_element(&sub, j, at, sizeof(at), "%s[%zu]", where, i)) < 0)
			return r;
		if ((r = validate_int(&sub, j, "site", true, 0, INT64_MAX, &ps->site)) < 0 ||
		    (r = validate_count(&sub, j, "live_bytes", &ps->live_bytes)) < 0)
			return r;
		k = site_index_find(ix, ps->site);
		if (k < 0)
			return validate_bad(&sub, "site",
					    "%" PRId64 " is the id of none of the sites", ps->site);
		ps->index = (size_t)k;
		*n = i + 1;
	}
	return 0;
}

static int load_at_peak(const struct vctx *v, json_t *root, struct rd_process *p,
			const struct site_index *ix)
{
	struct rd_at_peak *ap = &p->at_peak;
	struct vctx sub = *v;
	json_t *obj, *devs, *sites, *j;
	size_t i;
	int r = validate_member(v, root, "at_peak", false, JSON_OBJECT, &obj);

	if (r < 0 || !obj)
		return r;
	sub.where = "at_peak";
	if ((r = validate_count(&sub, obj, "bytes", &ap->bytes)) < 0 ||
	    (r = validate_time(&sub, obj, "time", true, &ap->time)) < 0 ||
	    (r = validate_member(&sub, obj, "devices", true, JSON_ARRAY, &devs)) < 0 ||
	    (r = validate_member(&sub, obj, "sites", true, JSON_ARRAY, &sites)) < 0)
		return r;
	ap->devices = calloc(json_array_size(devs) + 1, sizeof(*ap->devices));
	if (!ap->devices)
		return -ENOMEM;
	json_array_foreach(devs, i, j)
	{
		struct rd_peak_device *d = &ap->devices[i];
		char where[48];

		if ((r = validate_element(&sub, j, where, sizeof(where), "at_peak.devices[%zu]",
					  i)) < 0)
			return r;
		if ((r = validate_int(&sub, j, "device", true, -1, INT32_MAX, &d->device)) < 0 ||
		    (r = validate_count(&sub, j, "live_bytes", &d->live_bytes)) < 0)
			return r;
		ap->ndevices = i + 1;
	}
	/* the loop pointed it at its own buffer, out of scope now */
	sub.where = "at_peak";
	if ((r = load_site_bytes(v, ix, sites, "at_peak.sites", &ap->sites, &ap->nsites)) < 0 ||
	    (r = load_list_folded(&sub, obj, &ap->folded_sites, &ap->folded_live_bytes)) < 0)
		return r;
	ap->present = true;
	return 0;
}

/* What the run was: "gpuspy_version", "environment" (checked to be all
 * strings by check_optional), "cuda", all optional. */
static int load_settings(const struct vctx *v, json_t *root, struct rd_process *p)
{
	struct vctx sub = *v;
	json_t *obj, *val, *devs;
	const char *name;
	size_t i;
	int r;

	p->rank = p->local_rank = -1;
	if ((r = validate_str(v, root, "gpuspy_version", false, false, &p->version)) < 0 ||
	    (r = validate_member(v, root, "environment", false, JSON_OBJECT, &obj)) < 0)
		return r;
	if (obj) {
		p->env = calloc(json_object_size(obj) + 1, sizeof(*p->env));
		if (!p->env)
			return -ENOMEM;
		json_object_foreach(obj, name, val)
		{
			struct rd_env *e = &p->env[p->nenv];

			e->name = strdup(name);
			e->value = strdup(json_string_value(val));
			p->nenv++;
			if (!e->name || !e->value)
				return -ENOMEM;
			if (strcmp(name, RANKS_ENV_RANK) == 0)
				p->rank = ranks_parse(e->value);
			else if (strcmp(name, RANKS_ENV_LOCAL_RANK) == 0)
				p->local_rank = ranks_parse(e->value);
		}
	}
	if (p->rank < 0)
		p->rank = p->local_rank;

	if ((r = validate_member(v, root, "cuda", false, JSON_OBJECT, &obj)) < 0 || !obj)
		return r;
	sub.where = "cuda";
	if ((r = validate_int(&sub, obj, "driver_version", true, 0, INT32_MAX,
			      &p->driver_version)) < 0 ||
	    (r = validate_member(&sub, obj, "devices", true, JSON_ARRAY, &devs)) < 0)
		return r;
	p->gpus = calloc(json_array_size(devs) + 1, sizeof(*p->gpus));
	if (!p->gpus)
		return -ENOMEM;
	json_array_foreach(devs, i, val)
	{
		struct rd_gpu *g = &p->gpus[i];
		char where[48];

		if ((r = validate_element(&sub, val, where, sizeof(where), "cuda.devices[%zu]",
					  i)) < 0)
			return r;
		p->ngpus = i + 1;
		if ((r = validate_int(&sub, val, "device", true, 0, INT32_MAX, &g->device)) < 0 ||
		    (r = validate_str(&sub, val, "name", true, false, &g->name)) < 0 ||
		    (r = validate_int(&sub, val, "total_bytes", true, -1, INT64_MAX,
				      &g->total_bytes)) < 0)
			return r;
	}
	return 0;
}

/* "marks" and "mark", optional; each mark's sites must be the report's. */
static int load_marks(const struct vctx *v, json_t *root, struct rd_process *p,
		      const struct site_index *ix)
{
	struct vctx sub = *v;
	json_t *arr, *m, *sites, *j;
	size_t i;
	int r;

	if ((r = validate_member(v, root, "mark", false, JSON_STRING, &j)) < 0 ||
	    (r = validate_member(v, root, "marks", false, JSON_ARRAY, &arr)) < 0 || !arr)
		return r;
	p->marks = calloc(json_array_size(arr) + 1, sizeof(*p->marks));
	if (!p->marks)
		return -ENOMEM;
	json_array_foreach(arr, i, m)
	{
		struct rd_mark *mk = &p->marks[i];
		char where[32], list[48];

		if ((r = validate_element(&sub, m, where, sizeof(where), "marks[%zu]", i)) < 0)
			return r;
		p->nmarks = i + 1;
		if ((r = validate_time(&sub, m, "time", true, &mk->time)) < 0 ||
		    (r = validate_str(&sub, m, "label", true, false, &mk->label)) < 0 ||
		    (r = validate_int(&sub, m, "live_bytes", false, 0, INT64_MAX,
				      &mk->live_bytes)) < 0 ||
		    (r = validate_member(&sub, m, "sites", false, JSON_ARRAY, &sites)) < 0)
			return r;
		if (!sites)
			continue; /* a mark of a gpuspy before 0.2: label and time */
		snprintf(list, sizeof(list), "marks[%zu].sites", i);
		if ((r = load_site_bytes(v, ix, sites, list, &mk->sites, &mk->nsites)) < 0 ||
		    (r = load_list_folded(&sub, m, &mk->folded_sites, &mk->folded_live_bytes)) < 0)
			return r;
	}
	return 0;
}

/* Whether NAME is "oom-N.json" (N decimal digits, at most 9 of them: a
 * process writes 16 at most); *N gets N. */
bool load_oom_file_name(const char *name, int64_t *n)
{
	unsigned x;

	if (names_parse_numbered(name, GS_FILE_OOM_N_PREFIX, &x) < 0)
		return false;
	*n = x;
	return true;
}

/* An event's "torch" lines or holders (KEY):
 * [{"frames": [...], "bytes", "blocks", "role"}]. */
static int load_oom_torch_lines(const struct vctx *v, json_t *arr, const char *key,
				struct rd_oom_torch_line **out, size_t *nout)
{
	const char *const *lk = schema_lines_key, *const *pk = schema_pyframe_key;
	json_t *e, *frames, *f;
	size_t i, k;
	int r;

	*out = calloc(json_array_size(arr) + 1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	json_array_foreach(arr, i, e)
	{
		struct rd_oom_torch_line *l = &(*out)[i];
		struct vctx sub = *v;
		char where[64];

		if ((r = validate_element(&sub, e, where, sizeof(where), "%s.torch.%s[%zu]",
					  v->where, key, i)) < 0)
			return r;
		*nout = i + 1;
		if ((r = validate_count(&sub, e, lk[SL_BYTES], &l->bytes)) < 0 ||
		    (r = validate_count(&sub, e, lk[SL_BLOCKS], &l->blocks)) < 0 ||
		    (r = validate_str(&sub, e, lk[SL_ROLE], false, true, &l->role)) < 0 ||
		    (r = validate_member(&sub, e, lk[SL_FRAMES], true, JSON_ARRAY, &frames)) < 0)
			return r;
		l->frames = calloc(json_array_size(frames) + 1, sizeof(*l->frames));
		if (!l->frames)
			return -ENOMEM;
		json_array_foreach(frames, k, f)
		{
			struct rd_pyframe *pf = &l->frames[k];
			struct vctx fsub = sub;
			char w2[96];

			if ((r = validate_element(&fsub, f, w2, sizeof(w2), "%s.%s[%zu]", where,
						  lk[SL_FRAMES], k)) < 0)
				return r;
			l->nframes = k + 1;
			if ((r = validate_str(&fsub, f, pk[SP_FILE], true, false, &pf->file)) < 0 ||
			    (r = validate_str(&fsub, f, pk[SP_FUNCTION], true, false,
					      &pf->function)) < 0 ||
			    (r = validate_int(&fsub, f, pk[SP_LINE], true, 0, INT32_MAX,
					      &pf->line)) < 0)
				return r;
		}
	}
	return 0;
}

/* What an event's verdict is judged on (docs/format.md, "event"): every
 * member optional, each checked when present. */
static int load_oom_facts(const struct vctx *v, json_t *obj, struct rd_oom *o)
{
	json_t *j, *arr, *e;
	size_t i;
	int r;

	o->device_live_bytes = -1;
	o->others_bytes = -1;
	if ((r = validate_int(v, obj, "device_live_bytes", false, 0, INT64_MAX,
			      &o->device_live_bytes)) < 0 ||
	    (r = validate_int(v, obj, "limit_bytes", false, 1, INT64_MAX, &o->limit_bytes)) < 0 ||
	    (r = validate_member(v, obj, "capped", false, JSON_TRUE, &j)) < 0)
		return r;
	if (!!j != (o->limit_bytes > 0))
		return validate_bad(v, j ? "capped" : "limit_bytes",
				    "present without %s (the two come together)",
				    j ? "limit_bytes" : "capped");
	o->capped = json_is_true(j);
	if ((r = validate_int(v, obj, "graph_bytes", false, 0, INT64_MAX, &o->graph_bytes)) < 0 ||
	    (r = validate_member(v, obj, "pool", false, JSON_OBJECT, &j)) < 0)
		return r;
	if (j) {
		struct vctx sub = *v;
		json_t *req;
		char where[64];

		snprintf(where, sizeof(where), "%s.pool", v->where);
		sub.where = where;
		if ((r = validate_str(&sub, j, "label", true, true, &o->pool)) < 0 ||
		    (r = validate_count(&sub, j, "bytes", &o->pool_bytes)) < 0 ||
		    (r = validate_member(&sub, j, "requested", true, JSON_TRUE, &req)) < 0)
			return r;
		o->pool_requested = json_is_true(req);
	}
	if ((r = validate_member(v, obj, "library", false, JSON_OBJECT, &j)) < 0)
		return r;
	if (j) {
		struct vctx sub = *v;
		char where[64];

		snprintf(where, sizeof(where), "%s.library", v->where);
		sub.where = where;
		if ((r = validate_count(&sub, j, "bytes", &o->library_bytes)) < 0 ||
		    (r = validate_str(&sub, j, "top", true, true, &o->library)) < 0 ||
		    (r = validate_count(&sub, j, "top_bytes", &o->library_top_bytes)) < 0)
			return r;
		if (o->library_top_bytes > o->library_bytes)
			return validate_bad(&sub, "top_bytes", "%" PRId64 " exceeds bytes",
					    o->library_top_bytes);
	}
	if ((r = validate_member(v, obj, "others", false, JSON_OBJECT, &j)) < 0)
		return r;
	if (j) {
		struct vctx sub = *v;
		char where[64];

		snprintf(where, sizeof(where), "%s.others", v->where);
		sub.where = where;
		if ((r = validate_count(&sub, j, "bytes", &o->others_bytes)) < 0 ||
		    (r = validate_member(&sub, j, "processes", true, JSON_ARRAY, &arr)) < 0)
			return r;
		o->others = calloc(json_array_size(arr) + 1, sizeof(*o->others));
		if (!o->others)
			return -ENOMEM;
		json_array_foreach(arr, i, e)
		{
			struct rd_oom_other *x = &o->others[i];
			struct vctx psub = sub;
			char w2[96];

			if ((r = validate_element(&psub, e, w2, sizeof(w2), "%s.processes[%zu]",
						  where, i)) < 0)
				return r;
			o->nothers = i + 1;
			if ((r = validate_int(&psub, e, "pid", true, 1, INT64_MAX, &x->pid)) < 0 ||
			    (r = validate_str(&psub, e, "name", false, false, &x->name)) < 0 ||
			    (r = validate_count(&psub, e, "used_bytes", &x->used_bytes)) < 0)
				return r;
		}
	}
	if ((r = validate_member(v, obj, "torch", false, JSON_OBJECT, &j)) < 0 || !j)
		return r;
	o->torch = calloc(1, sizeof(*o->torch));
	if (!o->torch)
		return -ENOMEM;
	{
		struct rd_oom_torch *t = o->torch;
		struct vctx sub = *v;
		char where[64];

		snprintf(where, sizeof(where), "%s.torch", v->where);
		sub.where = where;
		t->largest_free_bytes = -1;
		if ((r = validate_count(&sub, j, "requested_bytes", &t->requested_bytes)) < 0 ||
		    (r = validate_count(&sub, j, "allocated_bytes", &t->allocated_bytes)) < 0 ||
		    (r = validate_count(&sub, j, "reserved_bytes", &t->reserved_bytes)) < 0 ||
		    (r = validate_int(&sub, j, "largest_free_bytes", false, 0, INT64_MAX,
				      &t->largest_free_bytes)) < 0 ||
		    (r = validate_member(&sub, j, schema_lines_key[SL_LINES], false, JSON_ARRAY,
					 &arr)) < 0)
			return r;
		if (t->allocated_bytes > t->reserved_bytes)
			return validate_bad(&sub, "allocated_bytes",
					    "%" PRId64 " exceeds reserved_bytes",
					    t->allocated_bytes);
		if (arr && (r = load_oom_torch_lines(v, arr, schema_lines_key[SL_LINES], &t->lines,
						     &t->nlines)) < 0)
			return r;
		if ((r = validate_member(&sub, j, schema_lines_key[SL_HOLDERS], false, JSON_ARRAY,
					 &arr)) < 0 ||
		    (arr && (r = load_oom_torch_lines(v, arr, schema_lines_key[SL_HOLDERS],
						      &t->holders, &t->nholders)) < 0))
			return r;
	}
	return 0;
}

/* One out-of-memory event: an entry of "oom" (WITH_FILE: it may name its
 * oom-N.json) or the "event" of an oom-N.json.  Its site is checked
 * against the report's sites by check_oom_site, once they are read. */
static int load_oom_event(const struct vctx *v, json_t *obj, bool with_file, struct rd_oom *o)
{
	char *type = NULL, *kind = NULL;
	int64_t n;
	int r, k;

	if (!json_is_object(obj))
		return validate_bad(v, NULL, "expected an object, got %s", validate_type_name(obj));
	if ((r = validate_str(v, obj, "type", true, false, &type)) < 0)
		return r;
	if (strcmp(type, "oom") != 0) {
		r = validate_bad(v, "type", "unknown event type \"%.64s\" (expected \"oom\")",
				 type);
		free(type);
		return r;
	}
	free(type);
	if ((r = validate_int(v, obj, "number", true, 1, INT64_MAX, &o->number)) < 0 ||
	    (r = validate_time(v, obj, "time", true, &o->time)) < 0 ||
	    (r = validate_str(v, obj, "api", true, true, &o->api)) < 0 ||
	    (r = validate_str(v, obj, "kind", true, true, &kind)) < 0)
		return r;
	for (k = 0; k < GS_KIND_COUNT; k++)
		if (strcmp(kind, names_kind(k)) == 0)
			break;
	if (k == GS_KIND_COUNT) {
		r = validate_bad(v, "kind", "unknown kind \"%.64s\"", kind);
		free(kind);
		return r;
	}
	free(kind);
	o->kind = k;
	if ((r = validate_count(v, obj, "requested_bytes", &o->requested_bytes)) < 0 ||
	    (r = validate_int(v, obj, "device", true, -1, INT32_MAX, &o->device)) < 0 ||
	    (r = validate_count(v, obj, "live_bytes", &o->live_bytes)) < 0 ||
	    (r = validate_int(v, obj, "free_bytes", true, -1, INT64_MAX, &o->free_bytes)) < 0 ||
	    (r = validate_int(v, obj, "total_bytes", true, -1, INT64_MAX, &o->total_bytes)) < 0 ||
	    (r = validate_int(v, obj, "site", true, 0, INT64_MAX, &o->site)) < 0 ||
	    (r = load_oom_facts(v, obj, o)) < 0)
		return r;
	if (!with_file)
		return 0;
	if ((r = validate_str(v, obj, "file", false, false, &o->file)) < 0)
		return r;
	/* the name is joined to the process's directory: nothing else, no
	 * "../", may come in */
	if (o->file && !load_oom_file_name(o->file, &n))
		return validate_bad(v, "file", "\"%.64s\" is not a name oom-N.json", o->file);
	return 0;
}

static int check_oom_site(const struct vctx *v, const struct site_index *ix, const struct rd_oom *o)
{
	if (site_index_find(ix, o->site) >= 0)
		return 0;
	return validate_bad(v, "site", "%" PRId64 " is the id of none of the sites", o->site);
}

/* "snapshot", optional: a periodic snapshot (snapshot.json: samples and
 * interval_us) or an on-demand one (snapshot-N.json: number, label), the
 * state of that moment.  Read after "event": a post-mortem is not one. */
static int load_snapshot(const struct vctx *v, json_t *root, struct rd_process *p)
{
	struct rd_snapshot *sn = &p->snapshot;
	struct vctx sub = *v;
	json_t *obj;
	int r = validate_member(v, root, "snapshot", false, JSON_OBJECT, &obj);

	if (r < 0 || !obj)
		return r;
	if (p->event.number > 0)
		return validate_bad(v, "snapshot",
				    "present beside \"event\" (a report is an "
				    "out-of-memory post-mortem or a snapshot, not both)");
	sub.where = "snapshot";
	sn->periodic = json_object_get(obj, "samples") || json_object_get(obj, "interval_us");
	if (sn->periodic) {
		if ((r = validate_count(&sub, obj, "samples", &sn->samples)) < 0 ||
		    (r = validate_count(&sub, obj, "interval_us", &sn->interval_us)) < 0)
			return r;
	} else if ((r = validate_int(&sub, obj, "number", true, 1, INT64_MAX, &sn->number)) < 0 ||
		   (r = validate_str(&sub, obj, "label", false, false, &sn->label)) < 0) {
		return r;
	}
	sn->present = true;
	p->partial = true;
	return 0;
}

/* "oom", "oom_dropped", and the "event" of an oom-N.json: all optional. */
static int load_oom(const struct vctx *v, json_t *root, struct rd_process *p,
		    const struct site_index *ix)
{
	struct vctx sub = *v;
	json_t *arr, *j;
	size_t i;
	int r;

	if ((r = validate_int(v, root, "oom_dropped", false, 0, INT64_MAX, &p->oom_dropped)) < 0 ||
	    (r = validate_member(v, root, "event", false, JSON_OBJECT, &j)) < 0)
		return r;
	if (j) {
		sub.where = "event";
		if ((r = load_oom_event(&sub, j, false, &p->event)) < 0 ||
		    (r = check_oom_site(&sub, ix, &p->event)) < 0)
			return r;
		p->partial = true;
	}
	if ((r = load_snapshot(v, root, p)) < 0)
		return r;
	if ((r = validate_member(v, root, "oom", false, JSON_ARRAY, &arr)) < 0 || !arr)
		return r;
	p->oom = calloc(json_array_size(arr) + 1, sizeof(*p->oom));
	if (!p->oom)
		return -ENOMEM;
	json_array_foreach(arr, i, j)
	{
		char where[32];

		snprintf(where, sizeof(where), "oom[%zu]", i);
		sub.where = where;
		p->noom = i + 1;
		if ((r = load_oom_event(&sub, j, true, &p->oom[i])) < 0 ||
		    (r = check_oom_site(&sub, ix, &p->oom[i])) < 0)
			return r;
	}
	return 0;
}

static int load_root(const struct vctx *v, json_t *root, struct rd_process *p)
{
	struct site_index ix = { 0 };
	struct vctx sub = *v;
	json_t *j, *obj;
	int r;

	if (!json_is_object(root))
		return validate_bad(v, NULL, "not a gpuspy report (the top level is %s)",
				    validate_type_name(root));
	j = json_object_get(root, "format");
	if (!j)
		return validate_bad(v, NULL, "not a gpuspy report (no \"format\")");
	if (!json_is_string(j))
		return validate_bad(v, "format", "expected a string, got %s",
				    validate_type_name(j));
	if (strcmp(json_string_value(j), GS_FORMAT_PROCESS) != 0)
		return validate_bad(
			v, NULL,
			"unsupported format \"%.64s\" (this gpuspy reads \"" GS_FORMAT_PROCESS
			"\"%s)",
			json_string_value(j),
			validate_newer_format(json_string_value(j), GS_FORMAT_PROCESS) ?
				"; a newer gpuspy wrote it" :
				"");

	if ((r = validate_str(v, root, "host", true, false, &p->host)) < 0 ||
	    (r = validate_int(v, root, "pid", true, 1, INT32_MAX, &p->pid)) < 0 ||
	    (r = validate_str(v, root, "exe", false, false, &p->exe)) < 0 ||
	    (r = load_run_id(v, root, &p->run_id)) < 0 || (r = load_python(v, root, p)) < 0 ||
	    (r = load_command(v, root, p)) < 0 ||
	    (r = validate_member(v, root, "complete", true, JSON_TRUE, &j)) < 0)
		return r;
	p->complete = json_is_true(j);

	if ((r = validate_member(v, root, "leaked", true, JSON_OBJECT, &obj)) < 0)
		return r;
	sub.where = "leaked";
	if ((r = validate_count(&sub, obj, "bytes", &p->leaked_bytes)) < 0 ||
	    (r = validate_count(&sub, obj, "allocations", &p->leaked_allocations)) < 0)
		return r;
	if ((r = validate_member(v, root, "peak", true, JSON_OBJECT, &obj)) < 0)
		return r;
	sub.where = "peak";
	if ((r = validate_count(&sub, obj, "bytes", &p->peak_bytes)) < 0)
		return r;
	/* what is live at exit was live at the peak's moment or less */
	if (p->leaked_bytes > p->peak_bytes)
		return validate_bad(v, "leaked.bytes",
				    "%" PRId64 " exceeds peak.bytes (%" PRId64 ")", p->leaked_bytes,
				    p->peak_bytes);

	if ((r = load_kinds(v, root, p)) < 0 ||
	    (r = validate_count(v, root, "untracked_frees", &p->untracked_frees)) < 0 ||
	    (r = check_optional(v, root, p)) < 0 || (r = load_modules(v, root, p)) < 0 ||
	    (r = load_sites(v, root, p)) < 0 || (r = load_folded(v, root, p)) < 0 ||
	    (r = site_index_build(&ix, p)) < 0)
		return r;
	if ((r = load_at_peak(v, root, p, &ix)) < 0 || (r = load_settings(v, root, p)) < 0 ||
	    (r = load_marks(v, root, p, &ix)) < 0 || (r = load_outside(v, root, p)) < 0 ||
	    (r = load_frameworks(v, root, p)) < 0 || (r = load_calls(v, root, p)) < 0 ||
	    (r = load_graph(v, root, p)) < 0 || (r = load_oom(v, root, p, &ix)) < 0) {
		free(ix.refs);
		return r;
	}
	free(ix.refs);
	return 0;
}

int load_process_file(const char *file, const char *display_path, struct rd_process **out,
		      struct rd_error *err)
{
	struct vctx v = { .file = file, .err = err };
	struct rd_process *p = NULL;
	json_error_t jerr;
	json_t *root = NULL;
	struct stat st;
	char *buf = NULL;
	size_t len = 0;
	int r;

	*out = NULL;
	r = validate_read_file(file, &buf, &len, &st, err);
	if (r < 0)
		return r;
	if (len == 0) {
		rd_error_set(err, file,
			     "empty file (the process may have been killed "
			     "while gpuspy wrote it)");
		r = -EINVAL;
		goto out;
	}
	/* duplicate keys would make "which value counts" a guess */
	root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		validate_json_error(err, file, &jerr);
		r = -EINVAL;
		goto out;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		r = -ENOMEM;
		goto out;
	}
	p->depth = -1;
	p->start_time = -1;
	p->end_time = -1;
	p->dev = st.st_dev;
	p->ino = st.st_ino;
	p->file = strdup(file);
	p->path = strdup(display_path ? display_path : file);
	if (!p->file || !p->path) {
		r = -ENOMEM;
		goto out;
	}
	r = load_root(&v, root, p);
	if (r == -ENOMEM)
		rd_error_set(err, file, "out of memory");
	if (r < 0)
		goto out;
	*out = p;
	p = NULL;
out:
	rd_process_free(p);
	json_decref(root);
	free(buf);
	return r;
}

/* Whether SNAP, read from FILE, is the post-mortem of P's event O. */
static int check_snapshot(const struct rd_process *p, const struct rd_oom *o,
			  const struct rd_process *snap, const char *file, struct rd_error *err)
{
	if (!snap->partial) {
		rd_error_set(err, file,
			     "event: missing, but %s names this file as the "
			     "post-mortem of out-of-memory event %" PRId64,
			     p->file, o->number);
		return -EINVAL;
	}
	if (snap->event.number != o->number) {
		rd_error_set(err, file,
			     "event.number: %" PRId64 ", but %s names this file "
			     "for out-of-memory event %" PRId64,
			     snap->event.number, p->file, o->number);
		return -EINVAL;
	}
	if (snap->pid != p->pid || strcmp(snap->host, p->host) != 0) {
		rd_error_set(err, file,
			     "the report of another process (pid %" PRId64 ") than %s (pid %" PRId64
			     ")",
			     snap->pid, p->file, p->pid);
		return -EINVAL;
	}
	return 0;
}

int load_snapshots(struct rd_process *p, struct rd_error *err)
{
	char *dir = NULL;
	int r = 0;

	for (size_t i = 0; i < p->noom && r == 0; i++) {
		struct rd_oom *o = &p->oom[i];
		struct rd_process *snap = NULL;
		struct stat st;
		char *file;

		if (!o->file || o->snapshot)
			continue;
		if (!dir && !(dir = util_dir_of(p->file)))
			return -ENOMEM;
		file = util_path_join(dir, o->file);
		if (!file) {
			r = -ENOMEM;
			break;
		}
		if (stat(file, &st) < 0) {
			/* removed since, or never written whole: the event
			 * stays, without the state of its moment */
			if (errno != ENOENT && errno != ENOTDIR) {
				r = -errno;
				rd_error_set(err, file, "%s", strerror(-r));
			}
		} else if (st.st_dev == p->dev && st.st_ino == p->ino) {
			/* the process's report is this post-mortem */
			r = check_snapshot(p, o, p, file, err);
			if (r == 0)
				o->snapshot = p;
		} else {
			r = load_process_file(file, file, &snap, err);
			if (r == 0)
				r = check_snapshot(p, o, snap, file, err);
			if (r == 0)
				o->snapshot = snap;
			else
				rd_process_free(snap);
		}
		free(file);
	}
	free(dir);
	return r;
}
