/* SPDX-License-Identifier: MIT */
/*
 * gpuspy report --format collapsed: the live GPU memory of one moment
 * (stacks.h) as folded stacks, "root;...;leaf BYTES" a line, the input of
 * flamegraph.pl and speedscope.  Frames are those the text report shows:
 * noise folded (classify.h); the leaf is the CUDA call.  Stacks of the same
 * text are added up, zeros left out, lines sorted: the same input, the same
 * bytes out.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "print.h"
#include "util.h"

struct collapsed_line {
	char *stack;
	int64_t bytes;
};

/* S appended to the buffer, ';' and control characters replaced: a frame
 * name must not split a stack nor a line. */
static void collapsed_put(FILE *f, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == ';')
			putc(':', f);
		else if (*p < 0x20 || *p == 0x7f)
			putc('?', f);
		else if (util_is_c1(p))
			putc('?', f), p++;
		else
			putc(*p, f);
	}
}

static void collapsed_frame(FILE *f, const struct rd_report_frame *fr)
{
	char buf[64];

	if (fr->function) {
		collapsed_put(f, fr->function);
	} else {
		snprintf(buf, sizeof(buf), "%s0x%" PRIx64, fr->module ? "+" : "", fr->offset);
		if (fr->module)
			collapsed_put(f, fr->module);
		collapsed_put(f, buf);
	}
	/* a Python function's name says little without its file */
	if (fr->python && fr->file) {
		fputs(" (", f);
		collapsed_put(f, util_basename(fr->file));
		if (fr->line > 0)
			fprintf(f, ":%" PRId64, fr->line);
		putc(')', f);
	}
}

/* The stack of SITE, root first; NULL on out-of-memory. */
static char *collapsed_stack(const struct rd_report_site *site, const struct rd_report_frame **tmp)
{
	size_t n = stacks_frames(site, true, tmp);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	for (size_t i = n; i-- > 0;) {
		collapsed_frame(f, tmp[i]);
		putc(';', f);
	}
	collapsed_put(f, site->api);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

static int cmp_line(const void *pa, const void *pb)
{
	return strcmp(((const struct collapsed_line *)pa)->stack,
		      ((const struct collapsed_line *)pb)->stack);
}

int collapsed_print(const struct rd_report *r, const struct rd_stacks *st, FILE *out)
{
	struct collapsed_line *lines = calloc(st->n + 1, sizeof(*lines));
	const struct rd_report_frame **tmp = NULL;
	size_t n = 0, maxf = 0;
	int e = lines ? 0 : -ENOMEM;

	for (size_t i = 0; i < st->n; i++)
		if (st->samples[i].site->nframes > maxf)
			maxf = st->samples[i].site->nframes;
	tmp = calloc(maxf + 1, sizeof(*tmp));
	if (!tmp)
		e = -ENOMEM;
	for (size_t i = 0; i < st->n && e == 0; i++) {
		const struct rd_stack_sample *x = &st->samples[i];

		if (x->live_bytes <= 0)
			continue;
		lines[n].stack = collapsed_stack(x->site, tmp);
		lines[n].bytes = x->live_bytes;
		if (!lines[n++].stack)
			e = -ENOMEM;
	}
	if (e == 0)
		qsort(lines, n, sizeof(*lines), cmp_line);
	/* the whole text first: nothing on stdout unless all of it */
	for (size_t i = 0; i < n && e == 0; i++) {
		int64_t bytes = lines[i].bytes;

		while (i + 1 < n && strcmp(lines[i + 1].stack, lines[i].stack) == 0)
			util_add_sat(&bytes, lines[++i].bytes);
		if (fprintf(out, "%s %" PRId64 "\n", lines[i].stack, bytes) < 0)
			e = -EIO;
	}
	for (size_t i = 0; lines && i < n; i++)
		free(lines[i].stack);
	free(lines);
	free(tmp);
	(void)r;
	return e;
}
