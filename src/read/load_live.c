/* SPDX-License-Identifier: MIT */
/*
 * Reading allocations.json ("gpuspy-allocations/1", docs/format.md): the
 * live allocations of a process at exit and its trace, beside the
 * report.json whose sites they name.  Strict, as every loader: a file
 * that breaks the format is refused with one line naming it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "load_live.h"
#include "names.h"
#include "schema.h"
#include "util.h"
#include "validate.h"

#define LIVE_TIME_MAX 1e12 /* seconds */

/* P's sites by id, sorted: the allocations and events name them. */
struct site_id {
	int64_t id;
	size_t index;
};

static int cmp_site_id(const void *pa, const void *pb)
{
	const struct site_id *a = pa, *b = pb;

	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	return a->index < b->index ? -1 : a->index > b->index;
}

struct sites_by_id {
	struct site_id *v;
	size_t n;
	const struct rd_process *p;
};

/* The site an allocation or an event names: one of the report's (of two
 * of one id, the first), or, in a report that folds sites, any (*INDEX
 * -1: folded, unnamed). */
static int live_site(const struct vctx *v, const struct sites_by_id *ix, const char *key,
		     int64_t site, ssize_t *index)
{
	size_t lo = 0, hi = ix->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ix->v[mid].id < site)
			lo = mid + 1;
		else
			hi = mid;
	}
	*index = lo < ix->n && ix->v[lo].id == site ? (ssize_t)ix->v[lo].index : -1;
	if (*index < 0 && ix->p->folded_sites == 0)
		return validate_bad(v, key, "%" PRId64 " is the id of none of the report's sites",
				    site);
	return 0;
}

/* An allocation's or an event's kind, by name, into *OUT; PINNED says
 * whether pinned host memory may be one. */
static int live_kind(const struct vctx *v, json_t *obj, const char *key, bool pinned,
		     enum gs_kind *out)
{
	char *name = NULL;
	int k, r = validate_str(v, obj, key, true, true, &name);

	if (r < 0)
		return r;
	k = schema_parse(names_kinds, GS_KIND_COUNT, name);
	if (k < 0 || (k == GS_KIND_PINNED && !pinned))
		r = validate_bad(v, key, "%s kind \"%.64s\"", k < 0 ? "unknown" : "not a GPU",
				 name);
	free(name);
	*out = (enum gs_kind)(k < 0 ? 0 : k);
	return r;
}

/* An address and a size that end within 63 bits: ADDR + SIZE does not
 * wrap (a range a driver could have handed out). */
static int live_range(const struct vctx *v, uint64_t addr, int64_t size)
{
	if (addr > (uint64_t)(INT64_MAX - size))
		return validate_bad(v, schema_allocation_key[SA_SIZE],
				    "%" PRId64 " from address %" PRIu64 " ends past 2^63", size,
				    addr);
	return 0;
}

/* "allocations" and "allocations_left_out" (schema.h, SCHEMA_EXIT);
 * each site named must be one of the report's unless it folds sites. */
static int load_allocations(const struct vctx *v, json_t *root, const struct sites_by_id *ix,
			    struct rd_live *l)
{
	const char *const *k = schema_allocation_key, *const *xk = schema_exit_key;
	int64_t total = 0, addr;
	json_t *arr, *j;
	size_t i;
	int r = validate_member(v, root, xk[SR_ALLOCATIONS], true, JSON_ARRAY, &arr);

	if (r < 0)
		return r;
	l->allocs = calloc(json_array_size(arr) + 1, sizeof(*l->allocs));
	if (!l->allocs)
		return -ENOMEM;
	json_array_foreach(arr, i, j)
	{
		struct rd_live_alloc *a = &l->allocs[i];
		struct vctx sub = *v;
		char where[48];
		int64_t stream = 0;

		addr = 0;
		if ((r = validate_element(&sub, j, where, sizeof(where), "%s[%zu]",
					  xk[SR_ALLOCATIONS], i)) < 0 ||
		    (r = live_kind(&sub, j, k[SA_KIND], false, &a->kind)) < 0 ||
		    (r = validate_int(&sub, j, k[SA_ADDRESS], a->kind != GS_KIND_VMM, 1, INT64_MAX,
				      &addr)) < 0 ||
		    (r = validate_int(&sub, j, k[SA_SIZE], true, 1, INT64_MAX, &a->size)) < 0 ||
		    (r = validate_int(&sub, j, k[SA_DEVICE], true, -1, INT32_MAX, &a->device)) <
			    0 ||
		    (r = validate_int(&sub, j, k[SA_SITE], true, 0, INT64_MAX, &a->site)) < 0 ||
		    (r = validate_int(&sub, j, k[SA_STREAM], false, 0, INT64_MAX, &stream)) < 0 ||
		    (r = live_range(&sub, (uint64_t)addr, a->size)) < 0 ||
		    (r = live_site(&sub, ix, k[SA_SITE], a->site, &a->site_index)) < 0)
			return r;
		a->address = (uint64_t)addr;
		a->stream = (uint64_t)stream;
		if (!util_add(&total, a->size))
			return validate_bad(&sub, k[SA_SIZE], "the allocations' sizes overflow");
		l->nallocs = i + 1;
	}
	if ((r = validate_member(v, root, xk[SR_LEFT_OUT], false, JSON_OBJECT, &j)) < 0 || !j)
		return r;
	{
		struct vctx sub = *v;

		sub.where = xk[SR_LEFT_OUT];
		if ((r = validate_int(&sub, j, xk[SR_ALLOCATIONS], true, 1, INT64_MAX,
				      &l->left_out)) < 0 ||
		    (r = validate_int(&sub, j, xk[SR_BYTES], true, l->left_out, INT64_MAX,
				      &l->left_out_bytes)) < 0)
			return r;
	}
	return 0;
}

/* "trace" (schema.h, SCHEMA_TRACE): optional; its events and the count
 * of those not listed add up to those recorded, and fit its capacity. */
static int load_trace(const struct vctx *v, json_t *root, const struct sites_by_id *ix,
		      struct rd_live *l)
{
	const char *const *k = schema_event_key, *const *tk = schema_trace_key;
	struct vctx sub = *v;
	json_t *obj, *arr, *j;
	size_t i;
	int r = validate_member(v, root, schema_exit_key[SR_TRACE], false, JSON_OBJECT, &obj);

	if (r < 0 || !obj)
		return r;
	sub.where = schema_exit_key[SR_TRACE];
	if ((r = validate_int(&sub, obj, tk[ST_CAPACITY], true, 1, INT64_MAX, &l->capacity)) < 0 ||
	    (r = validate_count(&sub, obj, tk[ST_RECORDED], &l->recorded)) < 0 ||
	    (r = validate_int(&sub, obj, tk[ST_DROPPED], true, 0, l->recorded, &l->dropped)) < 0 ||
	    (r = validate_member(&sub, obj, tk[ST_EVENTS], true, JSON_ARRAY, &arr)) < 0)
		return r;
	if ((int64_t)json_array_size(arr) > l->capacity ||
	    (int64_t)json_array_size(arr) != l->recorded - l->dropped)
		return validate_bad(&sub, tk[ST_EVENTS],
				    "%zu events of %" PRId64 " recorded, %" PRId64
				    " dropped, at most %" PRId64 " kept",
				    json_array_size(arr), l->recorded, l->dropped, l->capacity);
	l->traced = true;
	l->events = calloc(json_array_size(arr) + 1, sizeof(*l->events));
	if (!l->events)
		return -ENOMEM;
	json_array_foreach(arr, i, j)
	{
		struct rd_trace_event *e = &l->events[i];
		struct vctx el = sub;
		char where[48], *action = NULL;
		int64_t addr = 0, stream = 0;
		int a;

		if ((r = validate_element(&el, j, where, sizeof(where), "trace.%s[%zu]",
					  tk[ST_EVENTS], i)) < 0 ||
		    (r = validate_str(&el, j, k[SE_ACTION], true, true, &action)) < 0)
			return r;
		a = schema_parse(schema_action_name, SX_COUNT, action);
		if (a < 0)
			r = validate_bad(&el, k[SE_ACTION], "unknown action \"%.64s\"", action);
		free(action);
		if (r < 0)
			return r;
		e->action = a == SX_ALLOC ? RD_TRACE_ALLOC :
			    a == SX_FREE  ? RD_TRACE_FREE :
					    RD_TRACE_OOM;
		e->free_bytes = -1;
		if ((r = validate_time(&el, j, k[SE_TIME], true, &e->time)) < 0 ||
		    (r = live_kind(&el, j, k[SE_KIND], true, &e->kind)) < 0 ||
		    (r = validate_int(&el, j, k[SE_SIZE], true, e->action == RD_TRACE_OOM ? 0 : 1,
				      INT64_MAX, &e->size)) < 0 ||
		    (r = validate_int(&el, j, k[SE_DEVICE], true, -1, INT32_MAX, &e->device)) < 0 ||
		    (r = validate_int(&el, j, k[SE_SITE], true, 0, INT64_MAX, &e->site)) < 0 ||
		    (r = validate_int(&el, j, k[SE_STREAM], false, 0, INT64_MAX, &stream)) < 0 ||
		    (r = live_site(&el, ix, k[SE_SITE], e->site, &e->site_index)) < 0)
			return r;
		/* a time the export can write in microseconds: within about
		 * 30,000 years of the clock's start (1e12 s; 2^63 us is 9.2e12 s) */
		if (!(e->time >= -LIVE_TIME_MAX && e->time <= LIVE_TIME_MAX))
			return validate_bad(&el, k[SE_TIME], "%g is no time of an event", e->time);
		if (e->action == RD_TRACE_OOM) {
			if ((r = validate_int(&el, j, k[SE_FREE_BYTES], true, -1, INT64_MAX,
					      &e->free_bytes)) < 0)
				return r;
			if (json_object_get(j, k[SE_ADDRESS]))
				return validate_bad(&el, k[SE_ADDRESS],
						    "an out-of-memory event has none");
		} else if ((r = validate_int(&el, j, k[SE_ADDRESS], e->kind != GS_KIND_VMM, 1,
					     INT64_MAX, &addr)) < 0 ||
			   (r = live_range(&el, (uint64_t)addr, e->size)) < 0) {
			return r;
		}
		e->address = (uint64_t)addr;
		e->stream = (uint64_t)stream;
		l->nevents = i + 1;
	}
	return 0;
}

/* The process the file says it is of must be the report's: a file left
 * by another program of the pid is not this one's. */
static int check_process(const struct vctx *v, json_t *root, const struct rd_process *p)
{
	char *host = NULL;
	int64_t pid = 0;
	double start = -1;
	int r;

	if ((r = validate_str(v, root, "host", true, false, &host)) < 0)
		return r;
	r = strcmp(host, p->host) != 0 ?
		    validate_bad(v, "host", "\"%.64s\" is not the report's (\"%.64s\")", host,
				 p->host) :
		    0;
	free(host);
	if (r < 0 || (r = validate_int(v, root, "pid", true, 1, INT32_MAX, &pid)) < 0 ||
	    (r = validate_time(v, root, "start_time", true, &start)) < 0)
		return r;
	if (pid != p->pid)
		return validate_bad(v, "pid", "%" PRId64 " is not the report's (%" PRId64 ")", pid,
				    p->pid);
	/* both written "%.3f" from the one start: the same text */
	if (p->start_time >= 0 &&
	    (start - p->start_time > 0.0005 || p->start_time - start > 0.0005))
		return validate_bad(v, "start_time", "%.3f is not the report's (%.3f)", start,
				    p->start_time);
	return 0;
}

int load_live_file(const char *file, const struct rd_process *p, struct rd_live *out,
		   struct rd_error *err)
{
	struct vctx v = { .file = file, .err = err };
	struct sites_by_id ix = { .p = p };
	json_error_t jerr;
	json_t *root = NULL, *j;
	struct stat st;
	char *buf = NULL;
	size_t len = 0;
	int r;

	memset(out, 0, sizeof(*out));
	r = validate_read_file(file, &buf, &len, &st, err);
	if (r < 0)
		return r;
	root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	free(buf);
	if (!root) {
		validate_json_error(err, file, &jerr);
		return -EINVAL;
	}
	ix.v = calloc(p->nsites + 1, sizeof(*ix.v));
	if (!ix.v) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < p->nsites; i++)
		if (p->sites[i].id >= 0)
			ix.v[ix.n++] = (struct site_id){ p->sites[i].id, i };
	qsort(ix.v, ix.n, sizeof(*ix.v), cmp_site_id);
	if ((r = validate_format(&v, root, "allocations file", GS_FORMAT_ALLOCATIONS)) < 0 ||
	    (r = validate_member(&v, root, "gpuspy_version", false, JSON_STRING, &j)) < 0 ||
	    (r = check_process(&v, root, p)) < 0 ||
	    (r = load_allocations(&v, root, &ix, out)) < 0 ||
	    (r = load_trace(&v, root, &ix, out)) < 0)
		goto out;
	out->present = true;
out:
	free(ix.v);
	json_decref(root);
	if (r < 0)
		rd_live_clear(out);
	return r;
}

int load_live(const struct rd_process *p, struct rd_live *out, struct rd_error *err)
{
	char *dir, *file;
	struct stat st;
	int r = 0;

	memset(out, 0, sizeof(*out));
	/* only beside an exit report: a snapshot's process had not exited */
	if (!p->file || strcmp(util_basename(p->file), GS_FILE_REPORT_JSON) != 0)
		return 0;
	dir = util_dir_of(p->file);
	file = dir ? util_path_join(dir, GS_FILE_ALLOCATIONS) : NULL;
	free(dir);
	if (!file)
		return -ENOMEM;
	if (lstat(file, &st) == 0 || errno != ENOENT)
		r = load_live_file(file, p, out, err);
	free(file);
	return r;
}

void rd_live_clear(struct rd_live *l)
{
	free(l->allocs);
	free(l->events);
	memset(l, 0, sizeof(*l));
}
