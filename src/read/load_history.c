/* SPDX-License-Identifier: MIT */
/*
 * Reading history.jsonl (docs/format.md, "gpuspy-history/1"), line by
 * line with the validation kit: every value is checked for type and
 * range, every site series must have been declared by a site line before
 * a value of it, and time never goes back.  A NUL byte, a line longer
 * than the writer ever writes, or anything else out of the format refuses
 * the whole file; only a last line without its newline is dropped, what
 * a process killed in the middle of its write(2) leaves.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "load_history.h"
#include "names.h"
#include "util.h"
#include "validate.h"

/* The writer's lines stay below 32 KiB. */
#define LINE_MAX_BYTES (1L << 20)
/* Times are seconds since the process started: a century is not one. */
#define TIME_MAX	 3.2e9
#define MAX_SITE_SERIES	 64
#define MAX_TORCH_SERIES 64 /* the writer keeps 16 */
#define MAX_FRAMES	 4096
#define MAX_DEVICE	 63 /* ordinals -1 to 63, NVML indexes 0 to 63 */
#define MAX_FW_SERIES	 64 /* the writer's bound */

struct parse {
	struct vctx v;
	struct rd_history *h;
	double last_key; /* every line's time: t, or t1 of a bucket */
	double last_row; /* of samples and buckets: a bucket's t0 is after it */
	size_t nsites, ntorch, nfw;
};

static int member_allowed(const struct vctx *v, json_t *o, const char *const *keys)
{
	const char *k;
	json_t *x;

	json_object_foreach(o, k, x)
	{
		size_t i;

		for (i = 0; keys[i] && strcmp(keys[i], k) != 0; i++)
			;
		if (!keys[i])
			return validate_bad(v, NULL, "unknown member \"%.40s\"", k);
	}
	return 0;
}

/* A time in seconds since the start, in [0, TIME_MAX]. */
static int get_time(const struct vctx *v, json_t *o, const char *key, double *out)
{
	json_t *j = json_object_get(o, key);

	if (!j)
		return validate_bad(v, key, "missing");
	if (!json_is_number(j))
		return validate_bad(v, key, "expected a number, got %s", validate_type_name(j));
	*out = json_number_value(j);
	if (!(*out >= 0 && *out <= TIME_MAX))
		return validate_bad(v, key, "%g is out of range [0, %g]", *out, TIME_MAX);
	return 0;
}

/* KEY, a decimal integer in [MIN, MAX] without sign or leading zero (but
 * "-1"), as the writer writes object keys. */
static int parse_key(const char *s, int64_t min, int64_t max, int64_t *out)
{
	const char *p = s;
	int64_t x = 0;

	if (strcmp(s, "-1") == 0 && min <= -1) {
		*out = -1;
		return 0;
	}
	if (!*p || (p[0] == '0' && p[1]))
		return -EINVAL;
	for (; *p; p++) {
		if (*p < '0' || *p > '9' || x > (max - (*p - '0')) / 10)
			return -EINVAL;
		x = x * 10 + (*p - '0');
	}
	if (x < min)
		return -EINVAL;
	*out = x;
	return 0;
}

static ssize_t find_series(const struct rd_history *h, enum rd_hist_kind kind, int64_t key)
{
	for (size_t i = 0; i < h->nseries; i++)
		if (h->series[i].kind == kind && h->series[i].key == key)
			return (ssize_t)i;
	return -1;
}

static ssize_t add_series(struct rd_history *h, enum rd_hist_kind kind, int64_t key,
			  enum gs_kind site_kind)
{
	struct rd_hist_series *s = realloc(h->series, (h->nseries + 1) * sizeof(*s));

	if (!s)
		return -ENOMEM;
	h->series = s;
	s[h->nseries] = (struct rd_hist_series){ kind, key, site_kind, NULL };
	return (ssize_t)h->nseries++;
}

static struct rd_hist_row *add_row(struct rd_history *h)
{
	if (h->nrows == h->caprows) {
		size_t cap = h->caprows ? h->caprows * 2 : 256;
		struct rd_hist_row *r = realloc(h->rows, cap * sizeof(*r));

		if (!r)
			return NULL;
		h->rows = r;
		h->caprows = cap;
	}
	memset(&h->rows[h->nrows], 0, sizeof(h->rows[0]));
	return &h->rows[h->nrows++];
}

static int add_value(struct rd_history *h, size_t series, int64_t min, int64_t max, int64_t last)
{
	if (h->nvalues == h->capvalues) {
		size_t cap = h->capvalues ? h->capvalues * 2 : 1024;
		struct rd_hist_value *v = realloc(h->values, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		h->values = v;
		h->capvalues = cap;
	}
	h->values[h->nvalues++] = (struct rd_hist_value){ series, min, max, last };
	return 0;
}

/* A value: N of a sample, [min, max, last] of a bucket. */
static int get_value(const struct vctx *v, const char *key, json_t *j, bool bucket, int64_t out[3])
{
	if (!bucket) {
		if (!json_is_integer(j))
			return validate_bad(v, key, "expected an integer, got %s",
					    validate_type_name(j));
		out[0] = out[1] = out[2] = json_integer_value(j);
		if (out[0] < 0)
			return validate_bad(v, key, "%" PRId64 " is negative", out[0]);
		return 0;
	}
	if (!json_is_array(j) || json_array_size(j) != 3)
		return validate_bad(v, key, "expected [min, max, last], got %s",
				    validate_type_name(j));
	for (size_t i = 0; i < 3; i++) {
		json_t *x = json_array_get(j, i);

		if (!json_is_integer(x))
			return validate_bad(v, key, "expected integers, got %s",
					    validate_type_name(x));
		out[i] = json_integer_value(x);
		if (out[i] < 0)
			return validate_bad(v, key, "%" PRId64 " is negative", out[i]);
	}
	if (out[0] > out[1] || out[2] < out[0] || out[2] > out[1])
		return validate_bad(v, key, "not min <= last <= max");
	return 0;
}

/* "dev", "sites" or "outside" of a sample or bucket. */
static int get_group(struct parse *ps, json_t *o, const char *name, enum rd_hist_kind kind,
		     bool required, bool bucket)
{
	struct rd_history *h = ps->h;
	struct vctx sub = ps->v;
	char where[64];
	const char *k;
	json_t *g, *x;
	int r = validate_member(&ps->v, o, name, required, JSON_OBJECT, &g);

	if (r < 0 || !g)
		return r;
	snprintf(where, sizeof(where), "%s.%s", ps->v.where, name);
	sub.where = where;
	json_object_foreach(g, k, x)
	{
		int64_t key, val[3] = { 0 };
		bool declared = kind == RD_HIST_SITE || kind == RD_HIST_TORCH;
		ssize_t s;

		if (parse_key(k, kind == RD_HIST_DEVICE ? -1 : 0,
			      kind == RD_HIST_SITE  ? UINT32_MAX :
			      kind == RD_HIST_TORCH ? INT32_MAX :
						      MAX_DEVICE,
			      &key) < 0)
			return validate_bad(&sub, NULL, "\"%.40s\" is not %s", k,
					    kind == RD_HIST_SITE    ? "a site id" :
					    kind == RD_HIST_TORCH   ? "a PyTorch-view line id" :
					    kind == RD_HIST_OUTSIDE ? "a GPU index" :
								      "a device ordinal");
		if ((r = get_value(&sub, k, x, bucket, val)) < 0)
			return r;
		s = find_series(h, kind, key);
		if (s < 0 && declared)
			return validate_bad(&sub, k, "no %s line declared this series",
					    kind == RD_HIST_SITE ? "site" : "torch");
		if (s < 0)
			s = add_series(h, kind, key, GS_KIND_DEVICE);
		if (s < 0)
			return (int)s;
		if ((r = add_value(h, (size_t)s, val[0], val[1], val[2])) < 0)
			return r;
	}
	return 0;
}

/* A place of a framework's counters: a CUDA ordinal 0 to 15, or "host". */
static int fw_place(const char *k)
{
	int64_t d;

	if (strcmp(k, "host") == 0)
		return GS_FW_HOST;
	return parse_key(k, 0, GS_FW_DEVICES - 1, &d) < 0 ? -1 : (int)d;
}

/* An object of NAME in G, not empty: what each level of "fw" is. */
static int fw_level(const struct vctx *v, const char *name, json_t *x)
{
	if (!json_is_object(x))
		return validate_bad(v, name, "expected an object, got %s", validate_type_name(x));
	if (json_object_size(x) == 0)
		return validate_bad(v, name, "empty");
	return 0;
}

/* "fw": {FRAMEWORK: {PLACE: {COUNTER: value}}} of a sample or bucket. */
static int get_fw(struct parse *ps, json_t *o, bool bucket)
{
	struct rd_history *h = ps->h;
	struct vctx sub = ps->v;
	char where[160];
	const char *fk, *pk, *ck;
	json_t *g, *fx, *px, *cx;
	int r = validate_member(&ps->v, o, "fw", false, JSON_OBJECT, &g);

	if (r < 0 || !g)
		return r;
	if (json_object_size(g) == 0)
		return validate_bad(&ps->v, "fw", "empty");
	sub.where = where;
	json_object_foreach(g, fk, fx)
	{
		int fw = names_fw_parse(fk);

		snprintf(where, sizeof(where), "%s.fw", ps->v.where);
		if (fw < 0)
			return validate_bad(&sub, NULL, "unknown framework \"%.40s\"", fk);
		if ((r = fw_level(&sub, fk, fx)) < 0)
			return r;
		json_object_foreach(fx, pk, px)
		{
			int place = fw_place(pk);

			snprintf(where, sizeof(where), "%s.fw.%s", ps->v.where, fk);
			if (place < 0)
				return validate_bad(&sub, NULL,
						    "\"%.40s\" is not a device ordinal (0 to %d) "
						    "nor \"host\"",
						    pk, GS_FW_DEVICES - 1);
			if ((r = fw_level(&sub, pk, px)) < 0)
				return r;
			snprintf(where, sizeof(where), "%s.fw.%s.%s", ps->v.where, fk, pk);
			json_object_foreach(px, ck, cx)
			{
				int c = names_fw_counter_parse(ck);
				int64_t key, val[3] = { 0 };
				ssize_t s;

				if (c < 0)
					return validate_bad(&sub, NULL, "unknown counter \"%.40s\"",
							    ck);
				if ((r = get_value(&sub, ck, cx, bucket, val)) < 0)
					return r;
				key = rd_hist_fw_key(fw, place, c);
				s = find_series(h, RD_HIST_FW, key);
				if (s < 0 && ++ps->nfw > MAX_FW_SERIES)
					return validate_bad(&sub, ck,
							    "more than %d framework-counter series",
							    MAX_FW_SERIES);
				if (s < 0)
					s = add_series(h, RD_HIST_FW, key, GS_KIND_DEVICE);
				if (s < 0)
					return (int)s;
				if ((r = add_value(h, (size_t)s, val[0], val[1], val[2])) < 0)
					return r;
			}
		}
	}
	return 0;
}

static int parse_values(struct parse *ps, json_t *o, struct rd_hist_row *row, bool bucket)
{
	struct rd_history *h = ps->h;
	int64_t val[3] = { 0 };
	ssize_t s;
	json_t *j;
	int r;

	row->first = h->nvalues;
	if ((r = get_group(ps, o, "dev", RD_HIST_DEVICE, true, bucket)) < 0 ||
	    (r = get_group(ps, o, "sites", RD_HIST_SITE, true, bucket)) < 0 ||
	    (r = get_group(ps, o, "outside", RD_HIST_OUTSIDE, false, bucket)) < 0)
		return r;
	if ((r = get_group(ps, o, "pool_reserved", RD_HIST_POOL_RESERVED, false, bucket)) < 0 ||
	    (r = get_group(ps, o, "pool_allocated", RD_HIST_POOL_ALLOCATED, false, bucket)) < 0 ||
	    (r = get_group(ps, o, "torch", RD_HIST_TORCH, false, bucket)) < 0 ||
	    (r = get_fw(ps, o, bucket)) < 0)
		return r;
	for (int k = 0; k < 2; k++) {
		const char *name = k ? "torch_other" : "other";
		enum rd_hist_kind kind = k ? RD_HIST_TORCH_OTHER : RD_HIST_OTHER;

		j = json_object_get(o, name);
		if (!j && k)
			continue;
		if (!j)
			return validate_bad(&ps->v, name, "missing");
		if ((r = get_value(&ps->v, name, j, bucket, val)) < 0)
			return r;
		s = find_series(h, kind, 0);
		if (s < 0)
			s = add_series(h, kind, 0, GS_KIND_DEVICE);
		if (s < 0)
			return (int)s;
		if ((r = add_value(h, (size_t)s, val[0], val[1], val[2])) < 0)
			return r;
	}
	row->count = h->nvalues - row->first;
	return 0;
}

/* A frame of a torch line, as torch.json has them: {"file", "function",
 * "line"}. */
static int parse_frame(const struct vctx *v, json_t *f, char **file, int64_t *line)
{
	static const char *const keys[] = { "file", "function", "line", NULL };
	json_t *j;
	int r;

	if (!json_is_object(f))
		return validate_bad(v, NULL, "expected an object, got %s", validate_type_name(f));
	if ((r = member_allowed(v, f, keys)) < 0 ||
	    (r = validate_member(v, f, "function", true, JSON_STRING, &j)) < 0 ||
	    (r = validate_int(v, f, "line", true, 0, INT32_MAX, line)) < 0 ||
	    (r = validate_str(v, f, "file", true, false, file)) < 0)
		return r;
	return 0;
}

/* {"torch": ID, "frames": [...]}: a PyTorch-view line's series. */
static int parse_torch(struct parse *ps, json_t *o)
{
	static const char *const keys[] = { "torch", "frames", NULL };
	struct vctx sub = ps->v;
	char where[64], *file = NULL, *label = NULL;
	int64_t id, line = 0;
	size_t i;
	json_t *frames, *f;
	ssize_t s;
	int r;

	if ((r = member_allowed(&ps->v, o, keys)) < 0 ||
	    (r = validate_int(&ps->v, o, "torch", true, 0, INT32_MAX, &id)) < 0 ||
	    (r = validate_member(&ps->v, o, "frames", true, JSON_ARRAY, &frames)) < 0)
		return r;
	if (json_array_size(frames) > MAX_FRAMES)
		return validate_bad(&ps->v, "frames", "more than %d frames", MAX_FRAMES);
	sub.where = where;
	json_array_foreach(frames, i, f)
	{
		char *name = NULL;
		int64_t ln = 0;

		snprintf(where, sizeof(where), "%s.frames[%zu]", ps->v.where, i);
		if ((r = parse_frame(&sub, f, &name, &ln)) < 0)
			goto out;
		if (i == 0) {
			file = name;
			line = ln;
		} else {
			free(name);
		}
	}
	if (find_series(ps->h, RD_HIST_TORCH, id) >= 0) {
		r = validate_bad(&ps->v, "torch", "line %" PRId64 " declared twice", id);
		goto out;
	}
	if (++ps->ntorch > MAX_TORCH_SERIES) {
		r = validate_bad(&ps->v, "torch", "more than %d PyTorch-view series",
				 MAX_TORCH_SERIES);
		goto out;
	}
	if (file && asprintf(&label, "%s:%" PRId64, file, line) < 0) {
		r = -ENOMEM;
		goto out;
	}
	s = add_series(ps->h, RD_HIST_TORCH, id, GS_KIND_DEVICE);
	if (s < 0) {
		free(label);
		r = (int)s;
		goto out;
	}
	ps->h->series[s].label = label;
	r = 0;
out:
	free(file);
	return r;
}

static int parse_header(struct parse *ps, json_t *o)
{
	static const char *const keys[] = { "format",  "pid", "start",	   "interval_s", "recent",
					    "buckets", "top", "max_sites", NULL };
	struct rd_history *h = ps->h;
	int64_t x;
	int r;

	if ((r = validate_format(&ps->v, o, "history", GS_FORMAT_HISTORY)) < 0)
		return r;
	if ((r = member_allowed(&ps->v, o, keys)) < 0 ||
	    (r = validate_int(&ps->v, o, "pid", true, 1, INT32_MAX, &h->pid)) < 0 ||
	    (r = validate_time(&ps->v, o, "start", true, &h->start)) < 0 ||
	    (r = validate_time(&ps->v, o, "interval_s", true, &h->interval_s)) < 0)
		return r;
	if (!(h->interval_s > 0 && h->interval_s <= TIME_MAX))
		return validate_bad(&ps->v, "interval_s", "%g is out of range (0, %g]",
				    h->interval_s, TIME_MAX);
	for (size_t i = 4; keys[i]; i++)
		if ((r = validate_int(&ps->v, o, keys[i], false, 0, 1 << 20, &x)) < 0)
			return r;
	return 0;
}

static int parse_site(struct parse *ps, json_t *o)
{
	static const char *const keys[] = { "site", "kind", NULL };
	int64_t id;
	json_t *j;
	int r, kind;
	ssize_t s;

	if ((r = member_allowed(&ps->v, o, keys)) < 0 ||
	    (r = validate_int(&ps->v, o, "site", true, 0, UINT32_MAX, &id)) < 0 ||
	    (r = validate_member(&ps->v, o, "kind", true, JSON_STRING, &j)) < 0)
		return r;
	for (kind = 0; kind < GS_KIND_COUNT; kind++)
		if (strcmp(json_string_value(j), names_kind(kind)) == 0)
			break;
	if (kind == GS_KIND_COUNT)
		return validate_bad(&ps->v, "kind", "unknown kind \"%.40s\"", json_string_value(j));
	if (find_series(ps->h, RD_HIST_SITE, id) >= 0)
		return validate_bad(&ps->v, "site", "site %" PRId64 " declared twice", id);
	if (++ps->nsites > MAX_SITE_SERIES)
		return validate_bad(&ps->v, "site", "more than %d site series", MAX_SITE_SERIES);
	s = add_series(ps->h, RD_HIST_SITE, id, (enum gs_kind)kind);
	return s < 0 ? (int)s : 0;
}

static int parse_event(struct parse *ps, json_t *o)
{
	static const char *const keys[] = { "t", "event", "n", "label", NULL };
	static const char *const names[] = { "mark", "snapshot", "oom" };
	struct rd_hist_row *row;
	double t = 0;
	json_t *j;
	int r, e;

	if ((r = member_allowed(&ps->v, o, keys)) < 0 || (r = get_time(&ps->v, o, "t", &t)) < 0 ||
	    (r = validate_member(&ps->v, o, "event", true, JSON_STRING, &j)) < 0)
		return r;
	for (e = 0; e < 3 && strcmp(json_string_value(j), names[e]) != 0; e++)
		;
	if (e == 3)
		return validate_bad(&ps->v, "event", "unknown event \"%.40s\"",
				    json_string_value(j));
	if (t < ps->last_key)
		return validate_bad(&ps->v, "t", "%.3f goes back in time (after %.3f)", t,
				    ps->last_key);
	ps->last_key = t;
	row = add_row(ps->h);
	if (!row)
		return -ENOMEM;
	row->type = RD_HIST_EVENT;
	row->t0 = row->t1 = t;
	row->event = (enum rd_hist_event)e;
	if ((r = validate_int(&ps->v, o, "n", false, 1, UINT32_MAX, &row->number)) < 0 ||
	    (r = validate_str(&ps->v, o, "label", false, false, &row->label)) < 0)
		return r;
	return 0;
}

static int parse_row(struct parse *ps, json_t *o, bool bucket)
{
	static const char *const sample_keys[] = {
		"t",
		"dev",
		"sites",
		"other",
		"outside",
		"pool_reserved",
		"pool_allocated",
		"torch",
		"torch_other",
		"fw",
		NULL,
	};
	static const char *const bucket_keys[] = {
		"t0",
		"t1",
		"n",
		"dev",
		"sites",
		"other",
		"outside",
		"pool_reserved",
		"pool_allocated",
		"torch",
		"torch_other",
		"fw",
		NULL,
	};
	struct rd_hist_row *row;
	double t0 = 0, t1 = 0;
	int64_t n = 1;
	int r;

	if ((r = member_allowed(&ps->v, o, bucket ? bucket_keys : sample_keys)) < 0)
		return r;
	if (bucket) {
		if ((r = get_time(&ps->v, o, "t0", &t0)) < 0 ||
		    (r = get_time(&ps->v, o, "t1", &t1)) < 0 ||
		    (r = validate_int(&ps->v, o, "n", true, 1, INT32_MAX, &n)) < 0)
			return r;
		if (t1 < t0)
			return validate_bad(&ps->v, "t1", "%.3f is before t0 (%.3f)", t1, t0);
	} else {
		if ((r = get_time(&ps->v, o, "t", &t0)) < 0)
			return r;
		t1 = t0;
	}
	if (t0 < ps->last_row || t1 < ps->last_key)
		return validate_bad(&ps->v, bucket ? "t0" : "t",
				    "%.3f goes back in time (after %.3f)", t0,
				    t0 < ps->last_row ? ps->last_row : ps->last_key);
	ps->last_row = ps->last_key = t1;
	row = add_row(ps->h);
	if (!row)
		return -ENOMEM;
	row->type = bucket ? RD_HIST_BUCKET : RD_HIST_SAMPLE;
	row->t0 = t0;
	row->t1 = t1;
	row->n = n;
	return parse_values(ps, o, row, bucket);
}

static int parse_line(struct parse *ps, const char *line, size_t len, size_t lineno)
{
	json_error_t jerr;
	json_t *o;
	int r;

	if (len == 0)
		return validate_bad(&ps->v, NULL, "empty line");
	o = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!o)
		return validate_bad(&ps->v, NULL, "invalid JSON at column %d: %s", jerr.column,
				    validate_json_what(&jerr));
	if (!json_is_object(o))
		r = validate_bad(&ps->v, NULL, "expected an object, got %s", validate_type_name(o));
	else if (lineno == 1 && !json_object_get(o, "format"))
		r = validate_bad(&ps->v, NULL, "not a gpuspy history (no header)");
	else if (lineno == 1)
		r = parse_header(ps, o);
	else if (json_object_get(o, "format"))
		r = validate_bad(&ps->v, NULL, "a second header");
	else if (json_object_get(o, "site"))
		r = parse_site(ps, o);
	else if (json_object_get(o, "event"))
		r = parse_event(ps, o);
	else if (json_object_get(o, "t0"))
		r = parse_row(ps, o, true);
	else if (json_object_get(o, "t"))
		r = parse_row(ps, o, false);
	else if (json_object_get(o, "torch"))
		r = parse_torch(ps, o);
	else
		r = validate_bad(&ps->v, NULL, "not a line of a history");
	json_decref(o);
	return r;
}

int load_history_file(const char *file, int64_t pid, struct rd_history *h, struct rd_error *err)
{
	struct parse ps = { .v = { .file = file, .err = err }, .h = h };
	char where[40], *buf = NULL, *p, *end;
	size_t len = 0, lineno = 0, torn = 0, torn_at = 0;
	struct stat st;
	int r;

	memset(h, 0, sizeof(*h));
	r = validate_read_file(file, &buf, &len, &st, err);
	/* validate_read_file refused a NUL byte */
	if (r < 0)
		return r;
	ps.v.where = where;
	for (p = buf, end = buf + len; p < end;) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

		lineno++;
		snprintf(where, sizeof(where), "line %zu", lineno);
		if (n > LINE_MAX_BYTES) {
			r = validate_bad(&ps.v, NULL, "longer than %ld bytes", LINE_MAX_BYTES);
			goto out;
		}
		/* the last line, cut short by a kill: dropped, and said once
		 * the rest is read */
		if (!nl) {
			torn = n;
			torn_at = (size_t)(p - buf);
			lineno--;
			break;
		}
		r = parse_line(&ps, p, n, lineno);
		if (r < 0)
			goto out;
		p = nl + 1;
	}
	if (lineno == 0) {
		rd_error_set(err, file, "empty: not a gpuspy history (no header)");
		r = -EINVAL;
		goto out;
	}
	if (pid && h->pid != pid) {
		rd_error_set(err, file,
			     "line 1.pid: %" PRId64 " is not the pid of the report "
			     "beside it (%" PRId64 ")",
			     h->pid, pid);
		r = -EINVAL;
		goto out;
	}
	h->present = true;
	if (torn)
		rd_notice(RD_NOTICE_DROPPED, file,
			  "its last record is cut short (%zu bytes from byte %zu, as a writer "
			  "killed mid-line leaves it): dropped",
			  torn, torn_at);
out:
	if (r == -ENOMEM)
		rd_error_set(err, file, "out of memory");
	if (r < 0)
		rd_history_clear(h);
	free(buf);
	return r;
}

int load_history(const struct rd_process *p, struct rd_history *h, struct rd_error *err)
{
	char *dir = util_dir_of(p->file), *file = dir ? util_path_join(dir, GS_FILE_HISTORY) : NULL;
	struct stat st;
	int r;

	memset(h, 0, sizeof(*h));
	free(dir);
	if (!file)
		return -ENOMEM;
	if (lstat(file, &st) < 0 && errno == ENOENT)
		r = 0;
	else
		r = load_history_file(file, p->pid, h, err);
	/* one bad history does not hide the others' */
	if (r < 0 && r != -ENOMEM && !rd_read_strict()) {
		rd_notice(RD_NOTICE_LEFT_OUT, NULL, "%s", err->msg[0] ? err->msg : strerror(-r));
		err->msg[0] = '\0';
		h->refused = true;
		r = 0;
	}
	free(file);
	return r;
}

void rd_history_clear(struct rd_history *h)
{
	for (size_t i = 0; i < h->nrows; i++)
		free(h->rows[i].label);
	for (size_t i = 0; i < h->nseries; i++)
		free(h->series[i].label);
	free(h->rows);
	free(h->values);
	free(h->series);
	memset(h, 0, sizeof(*h));
}
