/* SPDX-License-Identifier: MIT */
/* Reading torch.json, the PyTorch view (docs/format.md, "gpuspy-torch/1"). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "load.h"
#include "names.h"
#include "util.h"
#include "trend.h"
#include "validate.h"

/* One gpuspy-torch/1 document into T (docs/format.md). */
static int load_torch_root(const struct vctx *v, json_t *root, int64_t pid, struct rd_torch *t)
{
	struct vctx sub = *v;
	json_t *j, *arr, *e, *frames, *f;
	size_t i, k;
	int64_t x;
	int r;

	if ((r = validate_format(v, root, "PyTorch view", GS_FORMAT_TORCH)) < 0)
		return r;
	if ((r = validate_int(v, root, "pid", true, 1, INT32_MAX, &x)) < 0)
		return r;
	if (x != pid)
		return validate_bad(
			v, "pid",
			"%" PRId64 " is not the pid of the report beside it (%" PRId64 ")", x, pid);
	if ((r = validate_time(v, root, "time", true, &t->time)) < 0 ||
	    (r = validate_member(v, root, "final", true, JSON_TRUE, &j)) < 0)
		return r;
	t->final = json_is_true(j);
	if ((r = validate_count(v, root, "samples", &t->samples)) < 0 ||
	    (r = validate_member(v, root, "devices", true, JSON_ARRAY, &arr)) < 0)
		return r;
	t->devices = calloc(json_array_size(arr) + 1, sizeof(*t->devices));
	if (!t->devices)
		return -ENOMEM;
	json_array_foreach(arr, i, e)
	{
		struct rd_torch_device *d = &t->devices[i];
		char where[40];

		if ((r = validate_element(&sub, e, where, sizeof(where), "devices[%zu]", i)) < 0)
			return r;
		if ((r = validate_int(&sub, e, "device", true, -1, INT32_MAX, &d->device)) < 0 ||
		    (r = validate_count(&sub, e, "reserved_bytes", &d->reserved_bytes)) < 0 ||
		    (r = validate_count(&sub, e, "allocated_bytes", &d->allocated_bytes)) < 0)
			return r;
		if (d->allocated_bytes > d->reserved_bytes)
			return validate_bad(&sub, "allocated_bytes",
					    "%" PRId64 " exceeds reserved_bytes",
					    d->allocated_bytes);
		t->ndevices = i + 1;
	}
	if ((r = validate_member(v, root, "sites", true, JSON_ARRAY, &arr)) < 0)
		return r;
	t->sites = calloc(json_array_size(arr) + 1, sizeof(*t->sites));
	if (!t->sites)
		return -ENOMEM;
	json_array_foreach(arr, i, e)
	{
		struct rd_torch_site *s = &t->sites[i];
		char where[40], *source = NULL;

		if ((r = validate_element(&sub, e, where, sizeof(where), "sites[%zu]", i)) < 0)
			return r;
		t->nsites = i + 1;
		if ((r = validate_count(&sub, e, "live_bytes", &s->live_bytes)) < 0 ||
		    (r = validate_count(&sub, e, "live_blocks", &s->live_blocks)) < 0 ||
		    (r = validate_count(&sub, e, "peak_bytes", &s->peak_bytes)) < 0 ||
		    (r = validate_member(&sub, e, "growing", true, JSON_TRUE, &j)) < 0 ||
		    (r = validate_member(&sub, e, "frames", true, JSON_ARRAY, &frames)) < 0 ||
		    (r = validate_growth(&sub, e, "growth", false, &s->growth)) < 0)
			return r;
		s->growing = json_is_true(j);
		if (s->growth.present && s->growing != (s->growth.state == TREND_GROWING))
			return validate_bad(&sub, "growing", "%s, but growth.stopped is %s",
					    s->growing ? "true" : "false",
					    s->growing ? "true" : "false");
		if (s->live_bytes > s->peak_bytes)
			return validate_bad(&sub, "live_bytes", "%" PRId64 " exceeds peak_bytes",
					    s->live_bytes);
		if ((r = validate_str(&sub, e, "source", false, true, &source)) < 0)
			return r;
		if (source) {
			s->from_segment = strcmp(source, "segment") == 0;
			free(source);
			if (!s->from_segment)
				return validate_bad(&sub, "source", "is not \"segment\"");
			if ((r = validate_int(&sub, e, "site", true, 0, UINT32_MAX,
					      &s->segment_site)) < 0)
				return r;
		}
		s->frames = calloc(json_array_size(frames) + 1, sizeof(*s->frames));
		if (!s->frames)
			return -ENOMEM;
		json_array_foreach(frames, k, f)
		{
			struct rd_pyframe *pf = &s->frames[k];
			char w2[64];

			if ((r = validate_element(&sub, f, w2, sizeof(w2), "sites[%zu].frames[%zu]",
						  i, k)) < 0)
				return r;
			s->nframes = k + 1;
			if ((r = validate_str(&sub, f, "file", true, false, &pf->file)) < 0 ||
			    (r = validate_str(&sub, f, "function", true, false, &pf->function)) <
				    0 ||
			    (r = validate_int(&sub, f, "line", true, 0, INT32_MAX, &pf->line)) < 0)
				return r;
		}
	}
	t->present = true;
	return 0;
}

/* torch.json beside P's report, when it is there. */
int load_torch(struct rd_process *p, struct rd_error *err)
{
	char *dir = util_dir_of(p->file), *file = dir ? util_path_join(dir, GS_FILE_TORCH) : NULL;
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
	r = validate_read_file(file, &buf, &len, &st, err);
	if (r < 0)
		goto out;
	root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		if (len)
			validate_json_error(err, file, &jerr);
		else
			rd_error_set(err, file, "empty file");
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
