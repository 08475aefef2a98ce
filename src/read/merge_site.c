/* SPDX-License-Identifier: MIT */
/* A call site of a merged report: its key, its headline and its one name
 * (merge_site.h). */
#include <stdlib.h>

#include "merge_site.h"
#include "sitename.h"

char *merge_site_key(const char *api, const struct rd_report_frame *frames, size_t nframes)
{
	struct sitename_frame *v = calloc(nframes + 1, sizeof(*v));
	char *buf = NULL;
	size_t n;

	if (!v)
		return NULL;
	/* one rule with libgpuspy's (sitename_key): the process labels a
	 * site by the digest of the key the report gives it */
	merge_frames_view(frames, nframes, v);
	n = sitename_key(NULL, 0, api, v, nframes);
	buf = malloc(n + 1);
	if (buf)
		sitename_key(buf, n + 1, api, v, nframes);
	free(v);
	return buf;
}

const char *merge_key_digest(const char *key, char *buf, size_t size)
{
	return sitename_digest(key, buf, size);
}

void merge_frames_view(const struct rd_report_frame *frames, size_t n, struct sitename_frame *out)
{
	for (size_t i = 0; i < n; i++) {
		const struct rd_report_frame *f = &frames[i];

		out[i] = (struct sitename_frame){
			.function = f->function,
			.file = f->file,
			.line = f->line,
			.lines = f->lines,
			.nlines = f->nlines,
			.module = f->module,
			.offset = f->offset,
			.python = f->python,
			.user = f->user,
			.noise = f->noise != NOISE_NONE,
		};
	}
}

/* Room on the stack for the frames of most sites (GPUSPY_DEPTH and
 * GPUSPY_PYTHON_DEPTH by default) */
#define VIEW_FRAMES 64

ssize_t merge_frames_headline(const struct rd_report_frame *frames, size_t n)
{
	struct sitename_frame small[VIEW_FRAMES], *v = small;
	ssize_t h;

	if (n > VIEW_FRAMES && !(v = malloc(n * sizeof(*v)))) {
		/* out of memory: the first frame, never none */
		return n ? 0 : -1;
	}
	merge_frames_view(frames, n, v);
	h = sitename_headline(v, n);
	if (v != small)
		free(v);
	return h;
}

ssize_t merge_site_headline(const struct rd_report_site *s)
{
	return merge_frames_headline(s->frames, s->nframes);
}

const char *merge_site_name(const struct rd_report_site *s)
{
	return s->name ? s->name : "(no stack)";
}
