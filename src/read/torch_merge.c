/* SPDX-License-Identifier: MIT */
/*
 * The PyTorch view in a report: the live blocks of PyTorch's caching
 * allocator by the Python stack that allocated them (each process's
 * torch.json, written by libgpuspy inside it), merged over the processes
 * on file basenames, function names and lines (the question here is which
 * line holds the memory, within one program).
 *
 * gpuspy's own call sites see the pool's segments, made by whichever
 * request found the pool full; this view says which lines hold the blocks
 * inside them, which is the question when a pool keeps growing.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classify.h"
#include "merge_site.h"
#include "sitename.h"
#include "torch_merge.h"
#include "trend.h"
#include "util.h"

static void tsite_free(struct rd_report_tsite *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nframes; i++) {
		free(s->frames[i].function);
		free(s->frames[i].file);
	}
	free(s->frames);
	free(s->key);
	free(s->name);
	free(s);
}

void torch_merge_clear(struct rd_report_torch *t)
{
	for (size_t i = 0; i < t->nsites; i++)
		tsite_free(t->sites[i]);
	free(t->sites);
	memset(t, 0, sizeof(*t));
}

static char *tsite_key(const struct rd_torch_site *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	/* gpuspy's record of a segment says which request made it, not
	 * which line holds the block: apart from PyTorch's stacks */
	if (s->from_segment && s->nframes)
		fputs("(segment);", f);
	else if (s->from_segment)
		fprintf(f, "(segment of site %" PRId64 ")", s->segment_site);
	else if (s->nframes == 0)
		fputs("(no stack)", f);
	/* lines too: this view answers "which line", and two lines of one
	 * function holding blocks are two answers */
	for (size_t i = 0; i < s->nframes; i++)
		fprintf(f, "%s%s!%s:%" PRId64, i ? ";" : "", util_basename(s->frames[i].file),
			s->frames[i].function, s->frames[i].line);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

static struct rd_report_tsite *tsite_new(const struct rd_torch_site *s, char *key)
{
	struct rd_report_tsite *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->key = key;
	t->from_segment = s->from_segment;
	t->segment_site = s->segment_site;
	t->frames = calloc(s->nframes + 1, sizeof(*t->frames));
	if (!t->frames) {
		free(t);
		return NULL;
	}
	for (size_t i = 0; i < s->nframes; i++) {
		struct rd_report_frame *f = &t->frames[i];

		t->nframes = i + 1;
		f->python = true;
		f->function = strdup(s->frames[i].function);
		f->file = strdup(s->frames[i].file);
		f->line = s->frames[i].line;
		f->user = classify_user_file(f->file);
		if (!f->function || !f->file) {
			t->key = NULL;
			tsite_free(t);
			return NULL;
		}
	}
	return t;
}

static int cmp_tsites(const void *pa, const void *pb)
{
	const struct rd_report_tsite *a = *(struct rd_report_tsite *const *)pa;
	const struct rd_report_tsite *b = *(struct rd_report_tsite *const *)pb;

	if (a->live_bytes != b->live_bytes)
		return a->live_bytes > b->live_bytes ? -1 : 1;
	if (a->peak_bytes != b->peak_bytes)
		return a->peak_bytes > b->peak_bytes ? -1 : 1;
	return strcmp(a->key, b->key);
}

/* Sites are few (one per allocating line): a linear search is enough. */
static struct rd_report_tsite *tsite_find(const struct rd_report_torch *t, const char *key)
{
	for (size_t i = 0; i < t->nsites; i++)
		if (strcmp(t->sites[i]->key, key) == 0)
			return t->sites[i];
	return NULL;
}

/* Each line's one name, told apart from the view's other lines. */
static int name_tsites(struct rd_report_torch *t)
{
	struct sitename_site *v = calloc(t->nsites + 1, sizeof(*v));
	char **names = calloc(t->nsites + 1, sizeof(*names));
	int e = v && names ? 0 : -ENOMEM;

	for (size_t i = 0; i < t->nsites && e == 0; i++) {
		struct sitename_frame *f = calloc(t->sites[i]->nframes + 1, sizeof(*f));

		if (!f) {
			e = -ENOMEM;
			break;
		}
		merge_frames_view(t->sites[i]->frames, t->sites[i]->nframes, f);
		v[i].frames = f;
		v[i].nframes = t->sites[i]->nframes;
	}
	if (e == 0)
		e = sitename_names(v, t->nsites, names);
	for (size_t i = 0; e == 0 && i < t->nsites; i++)
		t->sites[i]->name = names[i];
	for (size_t i = 0; v && i < t->nsites; i++)
		free((void *)v[i].frames);
	free(v);
	free(names);
	return e;
}

int torch_merge_build(struct rd_report_torch *t, struct rd_process *const *procs, size_t n)
{
	memset(t, 0, sizeof(*t));
	t->final = true;
	for (size_t p = 0; p < n; p++) {
		const struct rd_torch *pt = &procs[p]->torch;

		if (!pt->present)
			continue;
		t->present = true;
		t->processes++;
		t->final &= pt->final;
		for (size_t d = 0; d < pt->ndevices; d++)
			if (!util_add(&t->reserved_bytes, pt->devices[d].reserved_bytes) ||
			    !util_add(&t->allocated_bytes, pt->devices[d].allocated_bytes))
				return -EOVERFLOW;
		for (size_t i = 0; i < pt->nsites; i++) {
			const struct rd_torch_site *s = &pt->sites[i];
			char *key = tsite_key(s);
			struct rd_report_tsite *ts;

			if (!key)
				return -ENOMEM;
			ts = tsite_find(t, key);
			if (ts) {
				free(key);
			} else {
				struct rd_report_tsite **grown;

				ts = tsite_new(s, key);
				if (!ts) {
					free(key);
					return -ENOMEM;
				}
				grown = reallocarray(t->sites, t->nsites + 1, sizeof(*grown));
				if (!grown) {
					tsite_free(ts);
					return -ENOMEM;
				}
				t->sites = grown;
				t->sites[t->nsites++] = ts;
			}
			if (ts->last_process != p + 1) {
				ts->processes++;
				ts->last_process = p + 1;
			}
			ts->growing |= s->growing;
			if (s->growth.present &&
			    (!ts->growth.present ||
			     ((s->growth.state == TREND_GROWING) !=
					      (ts->growth.state == TREND_GROWING) ?
				      s->growth.state == TREND_GROWING :
				      s->growth.rate_bps > ts->growth.rate_bps)))
				ts->growth = s->growth;
			if (!util_add(&ts->live_bytes, s->live_bytes) ||
			    !util_add(&ts->live_blocks, s->live_blocks) ||
			    !util_add(&ts->peak_bytes, s->peak_bytes))
				return -EOVERFLOW;
			if (!util_add(&t->live_bytes, s->live_bytes) ||
			    !util_add(&t->live_blocks, s->live_blocks))
				return -EOVERFLOW;
		}
	}
	for (size_t i = 0; i < t->nsites; i++)
		t->sites[i]->stopped = t->sites[i]->growth.present && !t->sites[i]->growing;
	if (t->nsites > 1)
		qsort(t->sites, t->nsites, sizeof(*t->sites), cmp_tsites);
	return name_tsites(t);
}

ssize_t torch_merge_headline(const struct rd_report_tsite *s)
{
	return merge_frames_headline(s->frames, s->nframes);
}
