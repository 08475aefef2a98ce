/* SPDX-License-Identifier: MIT */
/*
 * Reading "gpuspy-process/1" reports (docs/format.md).
 *
 * Every value is checked for presence, JSON type and range before it is
 * used: the files come from processes that may have been killed half-way,
 * from another version of gpuspy, or from anywhere, and a report that is
 * wrong must cost the user one line naming the file, never a crash or a
 * silently wrong total.  Keys this version does not know are ignored, as
 * the format allows.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "read.h"

#define FORMAT_PROCESS "gpuspy-process/1"

/* A report of a day-long run with deep stacks stays far below this; a
 * bigger file is not one of ours, and reading it would only exhaust memory. */
#define MAX_REPORT_SIZE (1024L * 1024 * 1024)

static const char *const kind_names[RD_KIND_COUNT] = {
	[RD_KIND_DEVICE] = "device",
	[RD_KIND_MANAGED] = "managed",
	[RD_KIND_VMM] = "vmm",
	[RD_KIND_PINNED] = "pinned",
};

const char *rd_kind_name(enum rd_kind kind)
{
	return kind < RD_KIND_COUNT ? kind_names[kind] : "?";
}

/* Validation context: the file for messages, and the JSON path of the
 * object being read ("sites[3].frames[0]"), so that a message says where. */
struct vctx {
	const char *file;
	struct rd_error *err;
	const char *where;
};

static const char *type_name(const json_t *j)
{
	switch (json_typeof(j)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "an integer";
	case JSON_REAL:
		return "a real number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	case JSON_NULL:
		return "null";
	}
	return "unknown";
}

__attribute__((format(printf, 3, 4))) static int bad(const struct vctx *v, const char *key,
						     const char *fmt, ...)
{
	char what[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (v->where && key)
		rd_error_set(v->err, v->file, "%s.%s: %s", v->where, key, what);
	else if (v->where || key)
		rd_error_set(v->err, v->file, "%s: %s", v->where ? v->where : key, what);
	else
		rd_error_set(v->err, v->file, "%s", what);
	return -EINVAL;
}

/* Element J of an array: SUB's path becomes the one FMT names (formatted
 * into BUF, which must outlive SUB's use), and J must be an object. */
__attribute__((format(printf, 5, 6))) static int element(struct vctx *sub, json_t *j, char *buf,
							 size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	sub->where = buf;
	if (!json_is_object(j))
		return bad(sub, NULL, "expected an object, got %s", type_name(j));
	return 0;
}

/* The member KEY of OBJ, which must exist when REQUIRED; *OUT is NULL when
 * it is absent and optional. */
static int member(const struct vctx *v, json_t *obj, const char *key, bool required, json_type type,
		  json_t **out)
{
	json_t *j = json_object_get(obj, key);
	const char *want;

	*out = NULL;
	if (!j) {
		if (required)
			return bad(v, key, "missing");
		return 0;
	}
	if (json_typeof(j) == type || (type == JSON_TRUE && json_typeof(j) == JSON_FALSE)) {
		*out = j;
		return 0;
	}
	switch (type) {
	case JSON_OBJECT:
		want = "an object";
		break;
	case JSON_ARRAY:
		want = "an array";
		break;
	case JSON_STRING:
		want = "a string";
		break;
	case JSON_INTEGER:
		want = "an integer";
		break;
	case JSON_TRUE:
		want = "a boolean";
		break;
	default:
		want = "a number";
		break;
	}
	return bad(v, key, "expected %s, got %s", want, type_name(j));
}

static int get_int(const struct vctx *v, json_t *obj, const char *key, bool required, int64_t min,
		   int64_t max, int64_t *out)
{
	json_t *j;
	int64_t x;
	int r = member(v, obj, key, required, JSON_INTEGER, &j);

	if (r < 0 || !j)
		return r;
	x = json_integer_value(j);
	if (x < min || x > max) {
		if (x < 0 && min == 0)
			return bad(v, key, "%" PRId64 " is negative", x);
		return bad(v, key, "%" PRId64 " is out of range [%" PRId64 ", %" PRId64 "]", x, min,
			   max);
	}
	*out = x;
	return 0;
}

static int get_count(const struct vctx *v, json_t *obj, const char *key, int64_t *out)
{
	return get_int(v, obj, key, true, 0, INT64_MAX, out);
}

/* A copy of string member KEY in *OUT (left untouched when absent). */
static int get_str(const struct vctx *v, json_t *obj, const char *key, bool required, bool nonempty,
		   char **out)
{
	json_t *j;
	char *s;
	int r = member(v, obj, key, required, JSON_STRING, &j);

	if (r < 0 || !j)
		return r;
	if (nonempty && json_string_length(j) == 0)
		return bad(v, key, "empty string");
	s = strdup(json_string_value(j));
	if (!s)
		return -ENOMEM;
	*out = s;
	return 0;
}

static int check_number(const struct vctx *v, json_t *obj, const char *key)
{
	json_t *j = json_object_get(obj, key);

	if (j && !json_is_number(j))
		return bad(v, key, "expected a number, got %s", type_name(j));
	if (j && json_number_value(j) < 0)
		return bad(v, key, "negative time");
	return 0;
}

/* A time in seconds since the epoch, in *OUT (left untouched when absent). */
static int get_time(const struct vctx *v, json_t *obj, const char *key, bool required, double *out)
{
	json_t *j = json_object_get(obj, key);
	int r;

	if (!j && required)
		return bad(v, key, "missing");
	r = check_number(v, obj, key);
	if (r < 0 || !j)
		return r;
	*out = json_number_value(j);
	return 0;
}

/* An optional object whose members must all be non-negative integers
 * ("doors", "vmm_address_space"). */
static int check_counts_object(const struct vctx *v, json_t *root, const char *key)
{
	struct vctx sub = *v;
	const char *name;
	json_t *obj, *val;
	int r = member(v, root, key, false, JSON_OBJECT, &obj);

	if (r < 0 || !obj)
		return r;
	sub.where = key;
	json_object_foreach(obj, name, val)
	{
		int64_t x;

		r = get_count(&sub, obj, name, &x);
		if (r < 0)
			return r;
	}
	return 0;
}

/* A kind's or a site's counters, and the relations any correct tracker
 * keeps between them: what is live or was freed was allocated first, and
 * the high-water mark lies between what is live and all that was
 * allocated.  A file that breaks them is corrupt, and its sums would lie. */
static int get_counters(const struct vctx *v, json_t *obj, struct rd_counters *c)
{
	static const struct {
		const char *key;
		size_t off;
	} fields[] = {
		{ "live_bytes", offsetof(struct rd_counters, live_bytes) },
		{ "live_allocations", offsetof(struct rd_counters, live_allocations) },
		{ "peak_bytes", offsetof(struct rd_counters, peak_bytes) },
		{ "allocated_bytes", offsetof(struct rd_counters, allocated_bytes) },
		{ "allocations", offsetof(struct rd_counters, allocations) },
		{ "freed_bytes", offsetof(struct rd_counters, freed_bytes) },
		{ "frees", offsetof(struct rd_counters, frees) },
	};

	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		int r = get_count(v, obj, fields[i].key, (int64_t *)((char *)c + fields[i].off));
		if (r < 0)
			return r;
	}
	if (c->live_allocations > c->allocations)
		return bad(v, "live_allocations", "%" PRId64 " exceeds allocations (%" PRId64 ")",
			   c->live_allocations, c->allocations);
	if (c->frees > c->allocations)
		return bad(v, "frees", "%" PRId64 " exceeds allocations (%" PRId64 ")", c->frees,
			   c->allocations);
	if (c->live_bytes > c->peak_bytes)
		return bad(v, "live_bytes", "%" PRId64 " exceeds peak_bytes (%" PRId64 ")",
			   c->live_bytes, c->peak_bytes);
	if (c->peak_bytes > c->allocated_bytes)
		return bad(v, "peak_bytes", "%" PRId64 " exceeds allocated_bytes (%" PRId64 ")",
			   c->peak_bytes, c->allocated_bytes);
	if (c->freed_bytes > c->allocated_bytes)
		return bad(v, "freed_bytes", "%" PRId64 " exceeds allocated_bytes (%" PRId64 ")",
			   c->freed_bytes, c->allocated_bytes);
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
	int r = member(v, root, "command", true, JSON_ARRAY, &arr);

	if (r < 0)
		return r;
	p->command = calloc(json_array_size(arr) + 1, sizeof(*p->command));
	if (!p->command)
		return -ENOMEM;
	json_array_foreach(arr, i, val)
	{
		if (!json_is_string(val))
			return bad(v, NULL, "command[%zu]: expected a string, got %s", i,
				   type_name(val));
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

	if ((r = member(v, root, "gpuspy_version", false, JSON_STRING, &j)) < 0 ||
	    (r = get_int(v, root, "ppid", false, 0, INT32_MAX, &x)) < 0 ||
	    (r = get_int(v, root, "depth", false, 0, 1 << 20, &p->depth)) < 0 ||
	    (r = get_time(v, root, "start_time", false, &p->start_time)) < 0 ||
	    (r = get_time(v, root, "end_time", false, &p->end_time)) < 0 ||
	    (r = check_counts_object(v, root, "doors")) < 0 ||
	    (r = check_counts_object(v, root, "vmm_address_space")) < 0)
		return r;

	if ((r = member(v, root, "environment", false, JSON_OBJECT, &j)) < 0)
		return r;
	if (j) {
		json_object_foreach(j, name, val)
		{
			if (!json_is_string(val))
				return bad(v, "environment", "%s: expected a string, got %s", name,
					   type_name(val));
		}
	}

	if ((r = member(v, root, "devices", false, JSON_ARRAY, &j)) < 0)
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

			if ((r = element(&sub, val, where, sizeof(where), "devices[%zu]", i)) < 0)
				return r;
			if ((r = get_int(&sub, val, "device", true, -1, INT32_MAX, &d->device)) <
				    0 ||
			    (r = get_count(&sub, val, "live_bytes", &d->live_bytes)) < 0 ||
			    (r = get_count(&sub, val, "live_allocations", &d->live_allocations)) <
				    0)
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
	int r = member(v, root, "python", false, JSON_OBJECT, &obj);

	if (r < 0 || !obj)
		return r;
	sub.where = "python";
	if ((r = get_str(&sub, obj, "version", true, false, &p->python.version)) < 0 ||
	    (r = member(&sub, obj, "supported", true, JSON_TRUE, &j)) < 0)
		return r;
	p->python.supported = json_is_true(j);
	if ((r = get_str(&sub, obj, "note", false, false, &p->python.note)) < 0)
		return r;
	p->python.present = true;
	return 0;
}

static int load_kinds(const struct vctx *v, json_t *root, struct rd_process *p)
{
	json_t *kinds, *k;
	int r = member(v, root, "kinds", true, JSON_OBJECT, &kinds);

	if (r < 0)
		return r;
	for (int i = 0; i < RD_KIND_COUNT; i++) {
		char where[32];
		struct vctx sub = *v;

		snprintf(where, sizeof(where), "kinds.%s", kind_names[i]);
		sub.where = "kinds";
		r = member(&sub, kinds, kind_names[i], true, JSON_OBJECT, &k);
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
	int r = member(v, root, "modules", true, JSON_ARRAY, &arr);

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

		if ((r = element(&sub, m, where, sizeof(where), "modules[%zu]", i)) < 0)
			return r;
		/* counted before the members are read, so that process_free
		 * sees every string that was copied */
		p->nmodules = i + 1;
		if ((r = get_str(&sub, m, "path", true, true, &mod->path)) < 0 ||
		    (r = get_str(&sub, m, "build_id", true, false, &mod->build_id)) < 0 ||
		    (r = get_int(&sub, m, "base", true, 0, INT64_MAX, &base)) < 0)
			return r;
		if (!is_hex(mod->build_id))
			return bad(&sub, "build_id", "not a hexadecimal string");
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
	int r = member(v, site, "frames", true, JSON_ARRAY, &arr);

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

		if ((r = element(&sub, f, where, sizeof(where), "%s.frames[%zu]", v->where, i)) < 0)
			return r;
		s->nframes = i + 1;
		r = get_int(&sub, f, "module", true, INT64_MIN, INT64_MAX, &fr->module);
		if (r < 0)
			return r;
		if (fr->module < -1 || fr->module >= (int64_t)p->nmodules)
			return bad(&sub, "module", "index %" PRId64 " out of range (%zu modules)",
				   fr->module, p->nmodules);
		if ((r = get_int(&sub, f, "offset", true, 0, INT64_MAX, &offset)) < 0 ||
		    (r = get_str(&sub, f, "symbol", false, false, &fr->symbol)) < 0)
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
	int r = member(v, site, "python", false, JSON_ARRAY, &arr);

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

		if ((r = element(&sub, f, where, sizeof(where), "%s.python[%zu]", v->where, i)) < 0)
			return r;
		s->npython = i + 1;
		if ((r = get_str(&sub, f, "file", true, false, &py->file)) < 0 ||
		    (r = get_str(&sub, f, "function", true, false, &py->function)) < 0 ||
		    (r = get_int(&sub, f, "line", true, 0, INT32_MAX, &py->line)) < 0)
			return r;
	}
	return 0;
}

static int load_sites(const struct vctx *v, json_t *root, struct rd_process *p)
{
	json_t *growing;
	json_t *arr, *js;
	size_t i;
	int r = member(v, root, "sites", true, JSON_ARRAY, &arr);

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

		if ((r = element(&sub, js, where, sizeof(where), "sites[%zu]", i)) < 0)
			return r;
		p->nsites = i + 1;
		s->id = -1;
		r = get_str(&sub, js, "kind", true, true, &kind);
		if (r < 0)
			return r;
		for (k = 0; k < RD_KIND_COUNT; k++)
			if (strcmp(kind, kind_names[k]) == 0)
				break;
		if (k == RD_KIND_COUNT) {
			r = bad(&sub, "kind", "unknown kind \"%.64s\"", kind);
			free(kind);
			return r;
		}
		free(kind);
		s->kind = k;
		if ((r = get_str(&sub, js, "api", true, true, &s->api)) < 0 ||
		    (r = member(&sub, js, "door", false, JSON_STRING, &door)) < 0 ||
		    (r = get_int(&sub, js, "id", false, 0, INT64_MAX, &s->id)) < 0 ||
		    (r = get_int(&sub, js, "first_seq", false, 0, INT64_MAX, &x)) < 0 ||
		    (r = get_counters(&sub, js, &s->c)) < 0 ||
		    (r = load_frames(&sub, js, p, s)) < 0 ||
		    (r = load_python_frames(&sub, js, s)) < 0 ||
		    (r = member(&sub, js, "growing", false, JSON_TRUE, &growing)) < 0)
			return r;
		s->growing = growing && json_is_true(growing);
	}
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
	int r = member(v, root, "outside", false, JSON_OBJECT, &obj);

	if (r < 0 || !obj)
		return r;
	sub.where = "outside";
	if ((r = member(&sub, obj, "devices", true, JSON_ARRAY, &gpus)) < 0)
		return r;
	o->gpus = calloc(json_array_size(gpus) + 1, sizeof(*o->gpus));
	if (!o->gpus)
		return -ENOMEM;
	o->present = true;
	json_array_foreach(gpus, i, g)
	{
		struct rd_outside_gpu *gpu = &o->gpus[i];
		char where[48];

		if ((r = element(&sub, g, where, sizeof(where), "outside.devices[%zu]", i)) < 0)
			return r;
		if ((r = get_int(&sub, g, "index", true, 0, INT32_MAX, &gpu->index)) < 0 ||
		    (r = get_count(&sub, g, "total_bytes", &gpu->total_bytes)) < 0 ||
		    (r = get_count(&sub, g, "used_bytes", &gpu->used_bytes)) < 0 ||
		    (r = member(&sub, g, "processes", true, JSON_ARRAY, &procs)) < 0)
			return r;
		o->ngpus = i + 1;
		gpu->procs = calloc(json_array_size(procs) + 1, sizeof(*gpu->procs));
		if (!gpu->procs)
			return -ENOMEM;
		json_array_foreach(procs, k, pj)
		{
			char w2[96];

			if ((r = element(&sub, pj, w2, sizeof(w2),
					 "outside.devices[%zu].processes[%zu]", i, k)) < 0)
				return r;
			if ((r = get_int(&sub, pj, "pid", true, 0, INT32_MAX, &gpu->procs[k].pid)) <
				    0 ||
			    (r = get_count(&sub, pj, "used_bytes", &gpu->procs[k].used_bytes)) < 0)
				return r;
			gpu->nprocs = k + 1;
		}
	}
	return 0;
}

/* A list of {"site": ID, "live_bytes": N} (at_peak.sites, marks[].sites)
 * into *OUT: each ID must be one of P's sites, read before.  WHERE names
 * the list in messages ("at_peak.sites"). */
static int load_site_bytes(const struct vctx *v, const struct rd_process *p, json_t *arr,
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
		size_t k;

		if ((r = element(&sub, j, at, sizeof(at), "%s[%zu]", where, i)) < 0)
			return r;
		if ((r = get_int(&sub, j, "site", true, 0, INT64_MAX, &ps->site)) < 0 ||
		    (r = get_count(&sub, j, "live_bytes", &ps->live_bytes)) < 0)
			return r;
		for (k = 0; k < p->nsites; k++)
			if (p->sites[k].id == ps->site)
				break;
		if (k == p->nsites)
			return bad(&sub, "site", "%" PRId64 " is the id of none of the sites",
				   ps->site);
		ps->index = k;
		*n = i + 1;
	}
	return 0;
}

static int load_at_peak(const struct vctx *v, json_t *root, struct rd_process *p)
{
	struct rd_at_peak *ap = &p->at_peak;
	struct vctx sub = *v;
	json_t *obj, *devs, *sites, *j;
	size_t i;
	int r = member(v, root, "at_peak", false, JSON_OBJECT, &obj);

	if (r < 0 || !obj)
		return r;
	sub.where = "at_peak";
	if ((r = get_count(&sub, obj, "bytes", &ap->bytes)) < 0 ||
	    (r = get_time(&sub, obj, "time", true, &ap->time)) < 0 ||
	    (r = member(&sub, obj, "devices", true, JSON_ARRAY, &devs)) < 0 ||
	    (r = member(&sub, obj, "sites", true, JSON_ARRAY, &sites)) < 0)
		return r;
	ap->devices = calloc(json_array_size(devs) + 1, sizeof(*ap->devices));
	if (!ap->devices)
		return -ENOMEM;
	json_array_foreach(devs, i, j)
	{
		struct rd_peak_device *d = &ap->devices[i];
		char where[48];

		if ((r = element(&sub, j, where, sizeof(where), "at_peak.devices[%zu]", i)) < 0)
			return r;
		if ((r = get_int(&sub, j, "device", true, -1, INT32_MAX, &d->device)) < 0 ||
		    (r = get_count(&sub, j, "live_bytes", &d->live_bytes)) < 0)
			return r;
		ap->ndevices = i + 1;
	}
	if ((r = load_site_bytes(v, p, sites, "at_peak.sites", &ap->sites, &ap->nsites)) < 0)
		return r;
	ap->present = true;
	return 0;
}

/* A decimal rank, as torchrun and mpirun set it; -1 for anything else. */
static int64_t parse_rank(const char *s)
{
	int64_t x = 0;

	if (!*s || strlen(s) > 9)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		x = x * 10 + (*s - '0');
	}
	return x;
}

/* What the run was: "gpuspy_version", "environment" (checked to be all
 * strings by check_optional), "cuda", all optional. */
static int load_settings(const struct vctx *v, json_t *root, struct rd_process *p)
{
	struct vctx sub = *v;
	json_t *obj, *val, *devs;
	const char *name;
	int64_t local_rank = -1;
	size_t i;
	int r;

	p->rank = -1;
	if ((r = get_str(v, root, "gpuspy_version", false, false, &p->version)) < 0 ||
	    (r = member(v, root, "environment", false, JSON_OBJECT, &obj)) < 0)
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
			if (strcmp(name, "RANK") == 0)
				p->rank = parse_rank(e->value);
			else if (strcmp(name, "LOCAL_RANK") == 0)
				local_rank = parse_rank(e->value);
		}
	}
	if (p->rank < 0)
		p->rank = local_rank;

	if ((r = member(v, root, "cuda", false, JSON_OBJECT, &obj)) < 0 || !obj)
		return r;
	sub.where = "cuda";
	if ((r = get_int(&sub, obj, "driver_version", true, 0, INT32_MAX, &p->driver_version)) <
		    0 ||
	    (r = member(&sub, obj, "devices", true, JSON_ARRAY, &devs)) < 0)
		return r;
	p->gpus = calloc(json_array_size(devs) + 1, sizeof(*p->gpus));
	if (!p->gpus)
		return -ENOMEM;
	json_array_foreach(devs, i, val)
	{
		struct rd_gpu *g = &p->gpus[i];
		char where[48];

		if ((r = element(&sub, val, where, sizeof(where), "cuda.devices[%zu]", i)) < 0)
			return r;
		p->ngpus = i + 1;
		if ((r = get_int(&sub, val, "device", true, 0, INT32_MAX, &g->device)) < 0 ||
		    (r = get_str(&sub, val, "name", true, false, &g->name)) < 0 ||
		    (r = get_int(&sub, val, "total_bytes", true, -1, INT64_MAX, &g->total_bytes)) <
			    0)
			return r;
	}
	return 0;
}

/* "marks" and "mark", optional; each mark's sites must be the report's. */
static int load_marks(const struct vctx *v, json_t *root, struct rd_process *p)
{
	struct vctx sub = *v;
	json_t *arr, *m, *sites, *j;
	size_t i;
	int r;

	if ((r = member(v, root, "mark", false, JSON_STRING, &j)) < 0 ||
	    (r = member(v, root, "marks", false, JSON_ARRAY, &arr)) < 0 || !arr)
		return r;
	p->marks = calloc(json_array_size(arr) + 1, sizeof(*p->marks));
	if (!p->marks)
		return -ENOMEM;
	json_array_foreach(arr, i, m)
	{
		struct rd_mark *mk = &p->marks[i];
		char where[32], list[48];

		if ((r = element(&sub, m, where, sizeof(where), "marks[%zu]", i)) < 0)
			return r;
		p->nmarks = i + 1;
		if ((r = get_time(&sub, m, "time", true, &mk->time)) < 0 ||
		    (r = get_str(&sub, m, "label", true, false, &mk->label)) < 0 ||
		    (r = get_int(&sub, m, "live_bytes", false, 0, INT64_MAX, &mk->live_bytes)) <
			    0 ||
		    (r = member(&sub, m, "sites", false, JSON_ARRAY, &sites)) < 0)
			return r;
		if (!sites)
			continue; /* a mark of a gpuspy before 0.2: label and time */
		snprintf(list, sizeof(list), "marks[%zu].sites", i);
		if ((r = load_site_bytes(v, p, sites, list, &mk->sites, &mk->nsites)) < 0)
			return r;
	}
	return 0;
}

/* Whether NAME is "oom-N.json" (N decimal digits, at most 9 of them: a
 * process writes 16 at most); *N gets N. */
static bool oom_file_name(const char *name, int64_t *n)
{
	const char *d = name + 4;
	int64_t x = 0;
	size_t len = 0;

	if (strncmp(name, "oom-", 4) != 0)
		return false;
	for (; *d >= '0' && *d <= '9'; d++, len++) {
		if (len == 9)
			return false;
		x = x * 10 + (*d - '0');
	}
	if (len == 0 || strcmp(d, ".json") != 0)
		return false;
	*n = x;
	return true;
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
		return bad(v, NULL, "expected an object, got %s", type_name(obj));
	if ((r = get_str(v, obj, "type", true, false, &type)) < 0)
		return r;
	if (strcmp(type, "oom") != 0) {
		r = bad(v, "type", "unknown event type \"%.64s\" (expected \"oom\")", type);
		free(type);
		return r;
	}
	free(type);
	if ((r = get_int(v, obj, "number", true, 1, INT64_MAX, &o->number)) < 0 ||
	    (r = get_time(v, obj, "time", true, &o->time)) < 0 ||
	    (r = get_str(v, obj, "api", true, true, &o->api)) < 0 ||
	    (r = get_str(v, obj, "kind", true, true, &kind)) < 0)
		return r;
	for (k = 0; k < RD_KIND_COUNT; k++)
		if (strcmp(kind, kind_names[k]) == 0)
			break;
	if (k == RD_KIND_COUNT) {
		r = bad(v, "kind", "unknown kind \"%.64s\"", kind);
		free(kind);
		return r;
	}
	free(kind);
	o->kind = k;
	if ((r = get_count(v, obj, "requested_bytes", &o->requested_bytes)) < 0 ||
	    (r = get_int(v, obj, "device", true, -1, INT32_MAX, &o->device)) < 0 ||
	    (r = get_count(v, obj, "live_bytes", &o->live_bytes)) < 0 ||
	    (r = get_int(v, obj, "free_bytes", true, -1, INT64_MAX, &o->free_bytes)) < 0 ||
	    (r = get_int(v, obj, "total_bytes", true, -1, INT64_MAX, &o->total_bytes)) < 0 ||
	    (r = get_int(v, obj, "site", true, 0, INT64_MAX, &o->site)) < 0)
		return r;
	if (!with_file)
		return 0;
	if ((r = get_str(v, obj, "file", false, false, &o->file)) < 0)
		return r;
	/* the name is joined to the process's directory: nothing else, no
	 * "../", may come in */
	if (o->file && !oom_file_name(o->file, &n))
		return bad(v, "file", "\"%.64s\" is not a name oom-N.json", o->file);
	return 0;
}

static int check_oom_site(const struct vctx *v, const struct rd_process *p, const struct rd_oom *o)
{
	for (size_t i = 0; i < p->nsites; i++)
		if (p->sites[i].id == o->site)
			return 0;
	return bad(v, "site", "%" PRId64 " is the id of none of the sites", o->site);
}

/* "snapshot", optional: a periodic snapshot (snapshot.json: samples and
 * interval_us) or an on-demand one (snapshot-N.json: number, label), the
 * state of that moment.  Read after "event": a post-mortem is not one. */
static int load_snapshot(const struct vctx *v, json_t *root, struct rd_process *p)
{
	struct rd_snapshot *sn = &p->snapshot;
	struct vctx sub = *v;
	json_t *obj;
	int r = member(v, root, "snapshot", false, JSON_OBJECT, &obj);

	if (r < 0 || !obj)
		return r;
	if (p->event.number > 0)
		return bad(v, "snapshot",
			   "present beside \"event\" (a report is an "
			   "out-of-memory post-mortem or a snapshot, not both)");
	sub.where = "snapshot";
	sn->periodic = json_object_get(obj, "samples") || json_object_get(obj, "interval_us");
	if (sn->periodic) {
		if ((r = get_count(&sub, obj, "samples", &sn->samples)) < 0 ||
		    (r = get_count(&sub, obj, "interval_us", &sn->interval_us)) < 0)
			return r;
	} else if ((r = get_int(&sub, obj, "number", true, 1, INT64_MAX, &sn->number)) < 0 ||
		   (r = get_str(&sub, obj, "label", false, false, &sn->label)) < 0) {
		return r;
	}
	sn->present = true;
	p->partial = true;
	return 0;
}

/* "oom", "oom_dropped", and the "event" of an oom-N.json: all optional. */
static int load_oom(const struct vctx *v, json_t *root, struct rd_process *p)
{
	struct vctx sub = *v;
	json_t *arr, *j;
	size_t i;
	int r;

	if ((r = get_int(v, root, "oom_dropped", false, 0, INT64_MAX, &p->oom_dropped)) < 0 ||
	    (r = member(v, root, "event", false, JSON_OBJECT, &j)) < 0)
		return r;
	if (j) {
		sub.where = "event";
		if ((r = load_oom_event(&sub, j, false, &p->event)) < 0 ||
		    (r = check_oom_site(&sub, p, &p->event)) < 0)
			return r;
		p->partial = true;
	}
	if ((r = load_snapshot(v, root, p)) < 0)
		return r;
	if ((r = member(v, root, "oom", false, JSON_ARRAY, &arr)) < 0 || !arr)
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
		    (r = check_oom_site(&sub, p, &p->oom[i])) < 0)
			return r;
	}
	return 0;
}

static int load_root(const struct vctx *v, json_t *root, struct rd_process *p)
{
	struct vctx sub = *v;
	json_t *j, *obj;
	int r;

	if (!json_is_object(root))
		return bad(v, NULL, "not a gpuspy report (the top level is %s)", type_name(root));
	j = json_object_get(root, "format");
	if (!j)
		return bad(v, NULL, "not a gpuspy report (no \"format\")");
	if (!json_is_string(j))
		return bad(v, "format", "expected a string, got %s", type_name(j));
	if (strcmp(json_string_value(j), FORMAT_PROCESS) != 0)
		return bad(v, NULL,
			   "unsupported format \"%.64s\" (this gpuspy reads \"" FORMAT_PROCESS
			   "\")",
			   json_string_value(j));

	if ((r = get_str(v, root, "host", true, false, &p->host)) < 0 ||
	    (r = get_int(v, root, "pid", true, 1, INT32_MAX, &p->pid)) < 0 ||
	    (r = get_str(v, root, "exe", false, false, &p->exe)) < 0 ||
	    (r = load_python(v, root, p)) < 0 || (r = load_command(v, root, p)) < 0 ||
	    (r = member(v, root, "complete", true, JSON_TRUE, &j)) < 0)
		return r;
	p->complete = json_is_true(j);

	if ((r = member(v, root, "leaked", true, JSON_OBJECT, &obj)) < 0)
		return r;
	sub.where = "leaked";
	if ((r = get_count(&sub, obj, "bytes", &p->leaked_bytes)) < 0 ||
	    (r = get_count(&sub, obj, "allocations", &p->leaked_allocations)) < 0)
		return r;
	if ((r = member(v, root, "peak", true, JSON_OBJECT, &obj)) < 0)
		return r;
	sub.where = "peak";
	if ((r = get_count(&sub, obj, "bytes", &p->peak_bytes)) < 0)
		return r;
	/* what is live at exit was live at the peak's moment or less */
	if (p->leaked_bytes > p->peak_bytes)
		return bad(v, "leaked.bytes", "%" PRId64 " exceeds peak.bytes (%" PRId64 ")",
			   p->leaked_bytes, p->peak_bytes);

	if ((r = load_kinds(v, root, p)) < 0 ||
	    (r = get_count(v, root, "untracked_frees", &p->untracked_frees)) < 0 ||
	    (r = check_optional(v, root, p)) < 0 || (r = load_modules(v, root, p)) < 0 ||
	    (r = load_sites(v, root, p)) < 0 || (r = load_at_peak(v, root, p)) < 0 ||
	    (r = load_settings(v, root, p)) < 0 || (r = load_marks(v, root, p)) < 0 ||
	    (r = load_outside(v, root, p)) < 0 || (r = load_oom(v, root, p)) < 0)
		return r;
	return 0;
}

/* The whole file in memory.  O_NONBLOCK so that a FIFO named by mistake
 * fails instead of hanging; it is refused below as not a regular file. */
static int read_all(const char *file, char **bufp, size_t *lenp, struct stat *st,
		    struct rd_error *err)
{
	size_t cap, len = 0;
	char *buf;
	int fd, r;

	fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		r = -errno;
		rd_error_set(err, file, "%s", strerror(-r));
		return r;
	}
	if (fstat(fd, st) < 0) {
		r = -errno;
		rd_error_set(err, file, "%s", strerror(-r));
		goto out_close;
	}
	if (S_ISDIR(st->st_mode)) {
		r = -EISDIR;
		rd_error_set(err, file, "is a directory, not a report");
		goto out_close;
	}
	if (!S_ISREG(st->st_mode)) {
		r = -EINVAL;
		rd_error_set(err, file, "not a regular file");
		goto out_close;
	}
	if (st->st_size > MAX_REPORT_SIZE) {
		r = -EFBIG;
		rd_error_set(err, file, "too large for a gpuspy report (%lld bytes)",
			     (long long)st->st_size);
		goto out_close;
	}
	cap = (size_t)st->st_size + 1;
	buf = malloc(cap);
	if (!buf) {
		r = -ENOMEM;
		goto out_close;
	}
	for (;;) {
		ssize_t n;

		if (len == cap) {
			char *nb;

			/* the file grew since fstat */
			if (cap > MAX_REPORT_SIZE) {
				r = -EFBIG;
				rd_error_set(err, file, "too large for a gpuspy report");
				goto out_free;
			}
			nb = realloc(buf, cap * 2);
			if (!nb) {
				r = -ENOMEM;
				goto out_free;
			}
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			rd_error_set(err, file, "%s", strerror(-r));
			goto out_free;
		}
		if (n == 0)
			break;
		len += n;
	}
	close(fd);
	*bufp = buf;
	*lenp = len;
	return 0;

out_free:
	free(buf);
out_close:
	close(fd);
	return r;
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
	r = read_all(file, &buf, &len, &st, err);
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
		rd_error_set(err, file, "invalid JSON at line %d, column %d: %s", jerr.line,
			     jerr.column, jerr.text);
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
	process_free(p);
	json_decref(root);
	free(buf);
	return r;
}

static void oom_clear(const struct rd_process *p, struct rd_oom *o)
{
	free(o->api);
	free(o->file);
	if (o->snapshot != p)
		process_free(o->snapshot);
}

void process_free(struct rd_process *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->noom; i++)
		oom_clear(p, &p->oom[i]);
	free(p->oom);
	oom_clear(p, &p->event);
	free(p->path);
	free(p->file);
	free(p->host);
	free(p->exe);
	free(p->python.version);
	free(p->python.note);
	free(p->snapshot.label);
	for (size_t i = 0; i < p->ncommand; i++)
		free(p->command[i]);
	free(p->command);
	for (size_t i = 0; i < p->nmodules; i++) {
		free(p->modules[i].path);
		free(p->modules[i].build_id);
	}
	free(p->modules);
	for (size_t i = 0; i < p->nsites; i++) {
		struct rd_site *s = &p->sites[i];

		free(s->api);
		for (size_t j = 0; j < s->nframes; j++)
			free(s->frames[j].symbol);
		free(s->frames);
		for (size_t j = 0; j < s->npython; j++) {
			free(s->python[j].file);
			free(s->python[j].function);
		}
		free(s->python);
	}
	free(p->sites);
	for (size_t i = 0; i < p->outside.ngpus; i++)
		free(p->outside.gpus[i].procs);
	free(p->outside.gpus);
	free(p->at_peak.devices);
	free(p->at_peak.sites);
	free(p->devices);
	free(p->version);
	for (size_t i = 0; i < p->nenv; i++) {
		free(p->env[i].name);
		free(p->env[i].value);
	}
	free(p->env);
	for (size_t i = 0; i < p->ngpus; i++)
		free(p->gpus[i].name);
	free(p->gpus);
	for (size_t i = 0; i < p->nmarks; i++) {
		free(p->marks[i].label);
		free(p->marks[i].sites);
	}
	free(p->marks);
	for (size_t i = 0; i < p->torch.nsites; i++) {
		for (size_t j = 0; j < p->torch.sites[i].nframes; j++) {
			free(p->torch.sites[i].frames[j].file);
			free(p->torch.sites[i].frames[j].function);
		}
		free(p->torch.sites[i].frames);
	}
	free(p->torch.sites);
	free(p->torch.devices);
	free(p);
}

void process_list_clear(struct rd_process_list *list)
{
	for (size_t i = 0; i < list->n; i++)
		process_free(list->items[i]);
	free(list->items);
	list->items = NULL;
	list->n = list->cap = 0;
}

/* Takes P; a report already in the list (same device and inode) is
 * dropped. */
static int list_add(struct rd_process_list *list, struct rd_process *p)
{
	for (size_t i = 0; i < list->n; i++) {
		if (list->items[i]->dev == p->dev && list->items[i]->ino == p->ino) {
			process_free(p);
			return 0;
		}
	}
	if (list->n == list->cap) {
		size_t cap = list->cap ? list->cap * 2 : 16;
		struct rd_process **items = reallocarray(list->items, cap, sizeof(*items));

		if (!items) {
			process_free(p);
			return -ENOMEM;
		}
		list->items = items;
		list->cap = cap;
	}
	list->items[list->n++] = p;
	return 0;
}

/* The directory of FILE ("." when it names none); NULL on out-of-memory. */
static char *dir_of(const char *file)
{
	const char *slash = strrchr(file, '/');

	if (!slash)
		return strdup(".");
	if (slash == file)
		return strdup("/");
	return strndup(file, slash - file);
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

/* One gpuspy-torch/1 document into T (docs/format.md). */
static int load_torch_root(const struct vctx *v, json_t *root, int64_t pid, struct rd_torch *t)
{
	struct vctx sub = *v;
	json_t *j, *arr, *e, *frames, *f;
	size_t i, k;
	int64_t x;
	int r;

	if (!json_is_object(root))
		return bad(v, NULL, "not a gpuspy PyTorch view (the top level is %s)",
			   type_name(root));
	if ((r = member(v, root, "format", true, JSON_STRING, &j)) < 0)
		return r;
	if (strcmp(json_string_value(j), "gpuspy-torch/1") != 0)
		return bad(v, NULL,
			   "unsupported format \"%.64s\" (this gpuspy reads "
			   "\"gpuspy-torch/1\")",
			   json_string_value(j));
	if ((r = get_int(v, root, "pid", true, 1, INT32_MAX, &x)) < 0)
		return r;
	if (x != pid)
		return bad(v, "pid",
			   "%" PRId64 " is not the pid of the report beside it (%" PRId64 ")", x,
			   pid);
	if ((r = get_time(v, root, "time", true, &t->time)) < 0 ||
	    (r = member(v, root, "final", true, JSON_TRUE, &j)) < 0)
		return r;
	t->final = json_is_true(j);
	if ((r = get_count(v, root, "samples", &t->samples)) < 0 ||
	    (r = member(v, root, "devices", true, JSON_ARRAY, &arr)) < 0)
		return r;
	t->devices = calloc(json_array_size(arr) + 1, sizeof(*t->devices));
	if (!t->devices)
		return -ENOMEM;
	json_array_foreach(arr, i, e)
	{
		struct rd_torch_device *d = &t->devices[i];
		char where[40];

		if ((r = element(&sub, e, where, sizeof(where), "devices[%zu]", i)) < 0)
			return r;
		if ((r = get_int(&sub, e, "device", true, -1, INT32_MAX, &d->device)) < 0 ||
		    (r = get_count(&sub, e, "reserved_bytes", &d->reserved_bytes)) < 0 ||
		    (r = get_count(&sub, e, "allocated_bytes", &d->allocated_bytes)) < 0)
			return r;
		if (d->allocated_bytes > d->reserved_bytes)
			return bad(&sub, "allocated_bytes", "%" PRId64 " exceeds reserved_bytes",
				   d->allocated_bytes);
		t->ndevices = i + 1;
	}
	if ((r = member(v, root, "sites", true, JSON_ARRAY, &arr)) < 0)
		return r;
	t->sites = calloc(json_array_size(arr) + 1, sizeof(*t->sites));
	if (!t->sites)
		return -ENOMEM;
	json_array_foreach(arr, i, e)
	{
		struct rd_torch_site *s = &t->sites[i];
		char where[40];

		if ((r = element(&sub, e, where, sizeof(where), "sites[%zu]", i)) < 0)
			return r;
		t->nsites = i + 1;
		if ((r = get_count(&sub, e, "live_bytes", &s->live_bytes)) < 0 ||
		    (r = get_count(&sub, e, "live_blocks", &s->live_blocks)) < 0 ||
		    (r = get_count(&sub, e, "peak_bytes", &s->peak_bytes)) < 0 ||
		    (r = member(&sub, e, "growing", true, JSON_TRUE, &j)) < 0 ||
		    (r = member(&sub, e, "frames", true, JSON_ARRAY, &frames)) < 0)
			return r;
		s->growing = json_is_true(j);
		if (s->live_bytes > s->peak_bytes)
			return bad(&sub, "live_bytes", "%" PRId64 " exceeds peak_bytes",
				   s->live_bytes);
		s->frames = calloc(json_array_size(frames) + 1, sizeof(*s->frames));
		if (!s->frames)
			return -ENOMEM;
		json_array_foreach(frames, k, f)
		{
			struct rd_pyframe *pf = &s->frames[k];
			char w2[64];

			if ((r = element(&sub, f, w2, sizeof(w2), "sites[%zu].frames[%zu]", i, k)) <
			    0)
				return r;
			s->nframes = k + 1;
			if ((r = get_str(&sub, f, "file", true, false, &pf->file)) < 0 ||
			    (r = get_str(&sub, f, "function", true, false, &pf->function)) < 0 ||
			    (r = get_int(&sub, f, "line", true, 0, INT32_MAX, &pf->line)) < 0)
				return r;
		}
	}
	t->present = true;
	return 0;
}

/* torch.json beside P's report, when it is there. */
static int load_torch(struct rd_process *p, struct rd_error *err)
{
	char *dir = dir_of(p->file), *file = dir ? util_path_join(dir, "torch.json") : NULL;
	struct vctx v = { .file = file, .err = err };
	json_error_t jerr;
	json_t *root = NULL;
	struct stat st;
	char *buf = NULL;
	size_t len = 0;
	int r;

	free(dir);
	if (!file)
		return -ENOMEM;
	if (lstat(file, &st) < 0 && errno == ENOENT) {
		free(file);
		return 0;
	}
	r = read_all(file, &buf, &len, &st, err);
	if (r < 0)
		goto out;
	root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		rd_error_set(err, file,
			     len ? "invalid JSON at line %d, column %d: %s" : "empty file",
			     jerr.line, jerr.column, jerr.text);
		r = -EINVAL;
		goto out;
	}
	r = load_torch_root(&v, root, p->pid, &p->torch);
	if (r == -ENOMEM)
		rd_error_set(err, file, "out of memory");
out:
	json_decref(root);
	free(buf);
	free(file);
	return r;
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
		if (!dir && !(dir = dir_of(p->file)))
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
				process_free(snap);
		}
		free(file);
	}
	free(dir);
	return r;
}

static int load_one(struct rd_process_list *list, const char *file, const char *display_path,
		    struct rd_error *err)
{
	struct rd_process *p;
	const char *base;
	int64_t n;
	int r = load_process_file(file, display_path, &p, err);

	if (r < 0)
		return r;
	base = strrchr(file, '/');
	base = base ? base + 1 : file;
	if (!p->partial && oom_file_name(base, &n)) {
		rd_error_set(err, file,
			     "event: missing (an oom-N.json is the report of "
			     "an out-of-memory event)");
		process_free(p);
		return -EINVAL;
	}
	if (!p->snapshot.present && strcmp(base, "snapshot.json") == 0) {
		rd_error_set(err, file,
			     "snapshot: missing (a snapshot.json is the report "
			     "of a snapshot)");
		process_free(p);
		return -EINVAL;
	}
	for (size_t i = 0; i < list->n; i++) {
		if (list->items[i]->dev == p->dev && list->items[i]->ino == p->ino) {
			process_free(p);
			return 0;
		}
	}
	r = load_snapshots(p, err);
	/* torch.json is rewritten with snapshot.json: it says nothing of the
	 * moment of an oom-N.json or snapshot-N.json */
	if (r == 0 && (strcmp(base, "report.json") == 0 || strcmp(base, "snapshot.json") == 0))
		r = load_torch(p, err);
	if (r < 0) {
		if (r == -ENOMEM)
			rd_error_set(err, p->file, "out of memory");
		process_free(p);
		return r;
	}
	return list_add(list, p);
}

/* The name of DIR's highest-numbered oom-N.json in *NAMEP, NULL when it
 * holds none (or is no directory).  -errno when DIR cannot be read. */
static int highest_oom(const char *dir, char **namep)
{
	struct dirent *de;
	int64_t best = -1, n;
	DIR *d;

	*namep = NULL;
	d = opendir(dir);
	if (!d)
		return (errno == ENOENT || errno == ENOTDIR) ? 0 : -errno;
	while ((errno = 0, de = readdir(d))) {
		if (!oom_file_name(de->d_name, &n) || n <= best)
			continue;
		free(*namep);
		*namep = strdup(de->d_name);
		if (!*namep) {
			closedir(d);
			return -ENOMEM;
		}
		best = n;
	}
	n = errno;
	closedir(d);
	if (n) {
		free(*namep);
		*namep = NULL;
		return (int)-n;
	}
	return 0;
}

/* The "end_time" of report FILE in *T: 1 when it says one, 0 when that is
 * unknown (the file cannot be read, is not JSON, has none), -ENOMEM.
 * Only to choose between a killed process's files: the file chosen is then
 * read, and refused, like any other. */
static int file_end_time(const char *file, double *t)
{
	struct rd_error ignored;
	struct stat st;
	json_t *root, *j;
	char *buf;
	size_t len;
	int r;

	r = read_all(file, &buf, &len, &st, &ignored);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return 0;
	root = json_loadb(buf, len, 0, NULL);
	free(buf);
	j = root && json_is_object(root) ? json_object_get(root, "end_time") : NULL;
	r = j && json_is_number(j);
	if (r)
		*t = json_number_value(j);
	json_decref(root);
	return r;
}

/* The report of process directory DIR in *FILEP: its report.json (the
 * state at exit), else, the process having been killed or having crashed,
 * the newer by their own end_time of its snapshot.json (its last periodic
 * snapshot) and its highest-numbered oom-N.json (its last out-of-memory
 * post-mortem); snapshot.json on a tie or when a time is unknown.
 * 1, 0 when there is none of them, -errno for a failure other than their
 * absence (*FILEP then names what could not be read). */
static int process_report(const char *dir, char **filep)
{
	char *file = util_path_join(dir, "report.json");
	char *name = NULL, *oom = NULL;
	double snap_t, oom_t;
	struct stat st;
	int r;

	*filep = NULL;
	if (!file)
		return -ENOMEM;
	if (stat(file, &st) == 0) {
		*filep = file;
		return 1;
	}
	if (errno != ENOENT && errno != ENOTDIR) {
		r = -errno;
		*filep = file;
		return r;
	}
	free(file);
	r = highest_oom(dir, &name);
	if (r < 0) {
		*filep = r == -ENOMEM ? NULL : strdup(dir);
		return r;
	}
	if (name) {
		oom = util_path_join(dir, name);
		free(name);
		if (!oom)
			return -ENOMEM;
	}
	file = util_path_join(dir, "snapshot.json");
	if (!file) {
		free(oom);
		return -ENOMEM;
	}
	if (stat(file, &st) != 0) {
		r = -errno;
		if (r != -ENOENT && r != -ENOTDIR) {
			free(oom);
			*filep = file;
			return r;
		}
		free(file);
		*filep = oom;
		return oom ? 1 : 0;
	}
	if (oom) {
		int rs = file_end_time(file, &snap_t), ro = file_end_time(oom, &oom_t);

		if (rs < 0 || ro < 0) {
			free(file);
			free(oom);
			return -ENOMEM;
		}
		if (rs && ro && oom_t > snap_t) {
			free(file);
			*filep = oom;
			return 1;
		}
		free(oom);
	}
	*filep = file;
	return 1;
}

/* Process directories sort as "node-9" before "node-10". */
static int cmp_names(const void *a, const void *b)
{
	return strverscmp(*(char *const *)a, *(char *const *)b);
}

/* The report of process directory DIR/NAME (process_report). */
static int has_report(const char *dir, const char *name, char **filep)
{
	char *sub = util_path_join(dir, name);
	int r;

	*filep = NULL;
	if (!sub)
		return -ENOMEM;
	r = process_report(sub, filep);
	free(sub);
	return r;
}

static int load_run_dir(struct rd_process_list *list, const char *dir, struct rd_error *err)
{
	char **names = NULL;
	size_t n = 0, cap = 0, found = 0;
	struct dirent *de;
	DIR *d;
	int r = 0;

	d = opendir(dir);
	if (!d) {
		r = -errno;
		rd_error_set(err, dir, "%s", strerror(-r));
		return r;
	}
	while ((errno = 0, de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (n == cap) {
			size_t c = cap ? cap * 2 : 32;
			char **nn = reallocarray(names, c, sizeof(*nn));

			if (!nn) {
				r = -ENOMEM;
				goto out;
			}
			names = nn;
			cap = c;
		}
		names[n] = strdup(de->d_name);
		if (!names[n]) {
			r = -ENOMEM;
			goto out;
		}
		n++;
	}
	if (errno) {
		r = -errno;
		rd_error_set(err, dir, "%s", strerror(-r));
		goto out;
	}
	if (n > 0)
		qsort(names, n, sizeof(*names), cmp_names);
	for (size_t i = 0; i < n; i++) {
		char *file = NULL, *display;

		/* A directory without report.json, snapshot.json nor
		 * oom-N.json is a process that allocated nothing, or one
		 * still running with GPUSPY_INTERVAL=0: not an error. */
		r = has_report(dir, names[i], &file);
		if (r < 0) {
			if (file)
				rd_error_set(err, file, "%s", strerror(-r));
			free(file);
			goto out;
		}
		if (r == 0)
			continue;
		display = util_path_join(dir, names[i]);
		if (!display) {
			free(file);
			r = -ENOMEM;
			goto out;
		}
		r = load_one(list, file, display, err);
		free(display);
		free(file);
		if (r < 0)
			goto out;
		found++;
	}
	r = 0;
	if (found == 0) {
		rd_error_set(err, dir,
			     "no gpuspy reports here (neither report.json "
			     "nor */report.json, nor */snapshot.json, nor */oom-N.json)");
		r = -ENOENT;
	}
out:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	closedir(d);
	if (r == -ENOMEM)
		rd_error_set(err, dir, "out of memory");
	return r;
}

int load_path(struct rd_process_list *list, const char *path, struct rd_error *err)
{
	struct stat st;
	char *file;
	int r;

	if (stat(path, &st) < 0) {
		r = -errno;
		rd_error_set(err, path, "%s", strerror(-r));
		return r;
	}
	if (!S_ISDIR(st.st_mode))
		return load_one(list, path, path, err);

	r = process_report(path, &file);
	if (r > 0)
		r = load_one(list, file, path, err);
	else if (r == 0)
		r = load_run_dir(list, path, err);
	else if (file)
		rd_error_set(err, file, "%s", strerror(-r));
	else
		rd_error_set(err, path, "out of memory");
	free(file);
	return r;
}

bool load_dir_has_reports(const char *dir)
{
	struct dirent *de;
	bool found = false;
	DIR *d = opendir(dir);

	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		char *file = NULL;

		if (de->d_name[0] == '.')
			continue;
		found = has_report(dir, de->d_name, &file) > 0;
		free(file);
	}
	closedir(d);
	return found;
}
