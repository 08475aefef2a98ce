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
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "classify.h"
#include "merge.h"
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
	free(s);
}

void report_torch_clear(struct rd_report_torch *t)
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
	if (s->nframes == 0)
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

int report_torch_build(struct rd_report_torch *t, struct rd_process *const *procs, size_t n)
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
			if (!util_add(&ts->live_bytes, s->live_bytes) ||
			    !util_add(&ts->live_blocks, s->live_blocks) ||
			    !util_add(&ts->peak_bytes, s->peak_bytes))
				return -EOVERFLOW;
			if (!util_add(&t->live_bytes, s->live_bytes) ||
			    !util_add(&t->live_blocks, s->live_blocks))
				return -EOVERFLOW;
		}
	}
	if (t->nsites > 1)
		qsort(t->sites, t->nsites, sizeof(*t->sites), cmp_tsites);
	return 0;
}

ssize_t report_tsite_headline(const struct rd_report_tsite *s)
{
	for (size_t i = 0; i < s->nframes; i++)
		if (s->frames[i].user)
			return (ssize_t)i;
	return s->nframes ? 0 : -1;
}

/* Listed: what holds memory now, or kept growing. */
static bool listed(const struct rd_report_tsite *s)
{
	return s->live_bytes > 0 || s->growing;
}

static void put_headline(FILE *out, const struct rd_report_tsite *s)
{
	ssize_t h = report_tsite_headline(s);
	const struct rd_report_frame *f;

	if (h < 0) {
		fputs("(allocated before gpuspy's PyTorch view started: no stack)", out);
		return;
	}
	f = &s->frames[h];
	util_put_clean(out, f->function);
	fputs(" (", out);
	util_put_clean(out, util_basename(f->file));
	fprintf(out, ":%" PRId64 ")", f->line);
}

void report_torch_print_summary(FILE *out, const struct rd_report_torch *t)
{
	char a[32], b[32];

	if (!t->present)
		return;
	fprintf(out, "  PyTorch tensors:  %s in %" PRId64 " %s of a %s pool",
		report_human_size(t->live_bytes, a, sizeof(a)), t->live_blocks,
		t->live_blocks == 1 ? "block" : "blocks",
		report_human_size(t->reserved_bytes, b, sizeof(b)));
	/* the largest holder with a stack: blocks from before the view
	 * started name no line */
	for (size_t i = 0; i < t->nsites && listed(t->sites[i]); i++) {
		if (!t->sites[i]->nframes)
			continue;
		fputs("; most by ", out);
		put_headline(out, t->sites[i]);
		if (t->sites[i]->growing)
			fputs(", growing", out);
		break;
	}
	fputs(" (see PYTORCH TENSORS)\n", out);
}

void report_torch_print_text(FILE *out, const struct rd_report_torch *t, size_t top)
{
	char a[32], b[32];
	size_t shown = 0, n = 0;

	if (!t->present)
		return;
	for (size_t i = 0; i < t->nsites; i++)
		n += listed(t->sites[i]);
	fprintf(out,
		"\nPYTORCH TENSORS (live blocks of PyTorch's caching allocator, by the "
		"Python line that allocated them; %s)\n",
		t->final ? "at exit" : "last sample of a running or killed process");
	fprintf(out, "  pool: %s reserved, %s in live blocks",
		report_human_size(t->reserved_bytes, a, sizeof(a)),
		report_human_size(t->allocated_bytes, b, sizeof(b)));
	if (t->processes > 1)
		fprintf(out, ", over %zu processes", t->processes);
	putc('\n', out);
	for (size_t i = 0; i < t->nsites && (!top || shown < top); i++) {
		const struct rd_report_tsite *s = t->sites[i];
		ssize_t h = report_tsite_headline(s);

		if (!listed(s))
			continue;
		shown++;
		fprintf(out, "%s live in %" PRId64 " %s (peak %s)%s\n",
			report_human_size(s->live_bytes, a, sizeof(a)), s->live_blocks,
			s->live_blocks == 1 ? "block" : "blocks",
			report_human_size(s->peak_bytes, b, sizeof(b)),
			s->growing ? ", GROWING" : "");
		if (h < 0) {
			fputs("  ", out);
			put_headline(out, s);
			putc('\n', out);
			continue;
		}
		fputs("  at ", out);
		report_print_frame(out, &s->frames[h]);
		for (size_t k = (size_t)h + 1; k < s->nframes; k++) {
			if (!s->frames[k].user)
				continue;
			fputs("    ", out);
			report_print_frame(out, &s->frames[k]);
		}
	}
	if (shown < n)
		fprintf(out, "  \u2026 %zu more (--top 0 shows all)\n", n - shown);
	if (!n)
		fputs("  none\n", out);
}

json_t *report_torch_json(const struct rd_report_torch *t, size_t top)
{
	json_t *o, *sites;
	size_t shown = 0;

	if (!t->present)
		return NULL;
	o = json_object();
	sites = json_array();
	if (!o || !sites) {
		json_decref(o);
		json_decref(sites);
		return NULL;
	}
	json_object_set_new(o, "processes", json_integer((json_int_t)t->processes));
	json_object_set_new(o, "final", json_boolean(t->final));
	json_object_set_new(o, "reserved_bytes", json_integer(t->reserved_bytes));
	json_object_set_new(o, "allocated_bytes", json_integer(t->allocated_bytes));
	for (size_t i = 0; i < t->nsites && (!top || shown < top); i++) {
		const struct rd_report_tsite *s = t->sites[i];
		ssize_t h = report_tsite_headline(s);
		json_t *j = json_object(), *frames = json_array();

		shown++;
		json_object_set_new(j, "key", json_string(s->key));
		json_object_set_new(j, "processes", json_integer(s->processes));
		json_object_set_new(j, "live_bytes", json_integer(s->live_bytes));
		json_object_set_new(j, "live_blocks", json_integer(s->live_blocks));
		json_object_set_new(j, "peak_bytes", json_integer(s->peak_bytes));
		json_object_set_new(j, "growing", json_boolean(s->growing));
		if (h >= 0)
			json_object_set_new(j, "headline", report_frame_json(&s->frames[h]));
		for (size_t k = 0; k < s->nframes; k++)
			json_array_append_new(frames, report_frame_json(&s->frames[k]));
		json_object_set_new(j, "frames", frames);
		json_array_append_new(sites, j);
	}
	json_object_set_new(o, "sites", sites);
	return o;
}
