/* SPDX-License-Identifier: MIT */
/*
 * Text for people: the report (gpuspy report), the processes side by side
 * (gpuspy merge) and the difference of two runs (gpuspy diff).  Every
 * string from a file goes out through cli_put_clean or is sanitized:
 * a report must not be able to drive the terminal.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "diff.h"
#include "lineup.h"
#include "growth_view.h"
#include "ledger.h"
#include "merge.h"
#include "pools.h"
#include "print.h"
#include "sitename.h"
#include "stacks.h"
#include "trend.h"
#include "util.h"
#include "wrong_device.h"

/* gpuspy report */

void text_print_spread(FILE *out, const struct rd_report *r, enum rd_report_metric metric,
		       const struct rd_report_spread *sp, const int64_t *values)
{
	char a[32], b[32], c[32], name[REPORT_NAME_SIZE];

	fprintf(out, "min %s, median %s, max %s", merge_metric_value(metric, sp->min, a, sizeof(a)),
		merge_metric_value(metric, sp->median, b, sizeof(b)),
		merge_metric_value(metric, sp->max, c, sizeof(c)));
	if (sp->outlier >= 0)
		fprintf(out, "; outlier: %s (%s)",
			merge_process_name(r, sp->outlier, name, sizeof(name)),
			merge_metric_value(metric, values[sp->outlier], a, sizeof(a)));
}

static const char *plural(int64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* What R's figures of live memory are: every process's at exit (the
 * headings say "at exit"), every one's at its last snapshot (none
 * exited), or a mix. */
enum moment { AT_EXIT, AT_SNAPSHOT, AT_BOTH };

static size_t not_exited(const struct rd_report *r)
{
	size_t n = 0;

	for (size_t i = 0; i < r->nprocs; i++)
		n += rd_state_not_exited(r->procs[i]->state);
	return n;
}

static enum moment report_moment(const struct rd_report *r)
{
	size_t n = not_exited(r);

	return n == 0 ? AT_EXIT : n == r->nprocs ? AT_SNAPSHOT : AT_BOTH;
}

/* " (SIGKILL)" after "signal 9", or nothing for a number without a name. */
static void print_signal(FILE *out, int64_t sig)
{
	const char *abbrev = sig > 0 && sig < 256 ? sigabbrev_np((int)sig) : NULL;

	fprintf(out, "signal %" PRId64, sig);
	if (abbrev)
		fprintf(out, " (SIG%s)", abbrev);
}

/* ":12" for a frame's line, ":12,14" for the lines of a merged site's
 * frame, nothing when unknown. */
static void put_lines(FILE *out, const struct rd_report_frame *f)
{
	if (f->line > 0) {
		fprintf(out, ":%" PRId64, f->line);
		return;
	}
	for (size_t i = 0; i < f->nlines; i++)
		fprintf(out, "%c%" PRId64, i ? ',' : ':', f->lines[i]);
}

/* One frame on one line: "function (module) file:line" for native code,
 * "function (python) file:line" for Python. */
static void print_frame(FILE *out, const struct rd_report_frame *f)
{
	if (f->function) {
		cli_put_clean(out, f->function);
		if (f->python) {
			fputs(" (python)", out);
		} else if (f->module) {
			fputs(" (", out);
			cli_put_clean(out, f->module);
			putc(')', out);
		}
	} else if (f->module) {
		cli_put_clean(out, f->module);
		fprintf(out, "+0x%" PRIx64, f->offset);
	} else {
		fprintf(out, "0x%" PRIx64, f->offset);
	}
	if (f->file) {
		putc(' ', out);
		cli_put_clean(out, f->file);
		put_lines(out, f);
	}
	putc('\n', out);
}

void text_print_frame(FILE *out, const struct rd_report_frame *f)
{
	print_frame(out, f);
}

/* A frame in a list's row, as libgpuspy's /metrics names a site too
 * (sitename_short); no newline. */
static void put_short_frame(FILE *out, const struct rd_report_frame *f)
{
	const struct sitename_frame sf = {
		.function = f->function,
		.file = f->file,
		.line = f->line,
		.lines = f->lines,
		.nlines = f->nlines,
		.module = f->module,
		.offset = f->offset,
	};
	char small[512], *buf = small;
	size_t n = sitename_short(small, sizeof(small), &sf);

	/* a long C++ name: once more into a buffer of its size */
	if (n >= sizeof(small)) {
		buf = malloc(n + 1);
		if (buf)
			sitename_short(buf, n + 1, &sf);
	}
	fputs(buf ? buf : small, out);
	if (buf != small)
		free(buf);
}

void text_print_short_frame(FILE *out, const struct rd_report_frame *f)
{
	put_short_frame(out, f);
}

static void print_folded(FILE *out, size_t *folded)
{
	if (*folded)
		fprintf(out, "    %s %zu %s folded\n", cli_glyph(CLI_ELLIPSIS), *folded,
			*folded == 1 ? "frame" : "frames");
	*folded = 0;
}

/* The stack under its headline, which the line above it named: the other
 * frames, a run of noise frames folded into one line saying how many
 * there were (the JSON keeps them); nothing past main. */
static void print_stack(FILE *out, const struct rd_report_site *s, ssize_t headline)
{
	size_t folded = 0;

	for (size_t i = 0; i < s->nframes; i++) {
		const struct rd_report_frame *f = &s->frames[i];
		/* what runs main (__libc_start_main, _start) is the same for
		 * every site and tells nothing; the JSON keeps it */
		bool last = !f->python && f->function && strcmp(f->function, "main") == 0;

		if (f->noise != NOISE_NONE) {
			folded++;
		} else if ((ssize_t)i != headline) {
			print_folded(out, &folded);
			fputs("    ", out);
			print_frame(out, f);
		}
		if (last)
			break;
	}
	print_folded(out, &folded);
}

void text_print_sparkline(FILE *out, const int64_t *v, size_t n)
{
	static const char *const blocks[] = {
		"\u2581", "\u2582", "\u2583", "\u2584", "\u2585", "\u2586", "\u2587", "\u2588",
	};
	static const char ascii[] = "_.-=#";
	bool utf8 = cli_utf8();
	int levels = utf8 ? 8 : 5;
	int64_t lo = INT64_MAX, hi = 0;

	for (size_t i = 0; i < n; i++) {
		lo = v[i] < lo ? v[i] : lo;
		hi = v[i] > hi ? v[i] : hi;
	}
	for (size_t i = 0; i < n; i++) {
		double f = hi > lo ? (double)(v[i] - lo) / (double)(hi - lo) : 0;
		int k = (int)(f * (levels - 1) + 0.5);

		k = k < 0 ? 0 : k >= levels ? levels - 1 : k;
		if (utf8)
			fputs(blocks[k], out);
		else
			putc(ascii[k], out);
	}
}

/* A duration for people: "0.4 s", "12 s", "25 min", "3.5 h". */
static void put_seconds(FILE *out, double s)
{
	if (s < 10)
		fprintf(out, "%.1f s", s);
	else if (s < 600)
		fprintf(out, "%.0f s", s);
	else if (s < 36000)
		fprintf(out, "%.0f min", s / 60);
	else
		fprintf(out, "%.1f h", s / 3600);
}

/* "+40.0 MiB/min since 12 s (staircase)", or "+600.0 MiB/min from 0.1 s
 * to 0.4 s, then stopped (per-sample)", no newline; "not growing" when
 * the rule did not fire on G's replayed series. */
void text_print_growth_rate(FILE *out, const struct rd_growth *g)
{
	static const char *const fw_titles[GS_FW_COUNT] = {
		[GS_FW_PYTORCH] = "PyTorch",
		[GS_FW_PADDLE] = "PaddlePaddle",
		[GS_FW_JAX] = "JAX",
		[GS_FW_CUPY] = "CuPy",
	};

	if (!g->fired) {
		fputs("not growing in its history", out);
		return;
	}
	fprintf(out, "%+.1f MiB/min %s ", g->rate_bps * 60 / (1024.0 * 1024),
		g->state == TREND_STOPPED ? "from" : "since");
	put_seconds(out, g->since_s);
	if (g->state == TREND_STOPPED) {
		fputs(" to ", out);
		put_seconds(out, g->until_s);
		fputs(", then stopped", out);
	}
	fprintf(out, " (%s)", trend_shape_name(g->shape));
	if (g->recorded && g->by == RD_BY_MARKS)
		fputs(" from mark to mark", out);
	if (g->recorded && g->by == RD_BY_FRAMEWORK && g->fw >= 0 && g->fw < GS_FW_COUNT) {
		/* a pool's segment: what its framework's own count says */
		fprintf(out, " in %s's own allocated bytes", fw_titles[g->fw]);
		if (g->place == GS_FW_HOST)
			fputs(" of pinned host memory", out);
		else
			fprintf(out, " on device %d", g->place);
	}
}

/* Under a growing site: its rate, since when and the sparkline of its
 * history, from the process that grows fastest. */
static void print_growth(FILE *out, const struct rd_report *r, const struct rd_report_site *s)
{
	const struct rd_growth *g = growth_view_find(r->growth, s);
	int64_t v[TEXT_SPARK_WIDTH];
	char name[REPORT_NAME_SIZE];
	size_t n;

	if (!g || !g->taken)
		return;
	fputs("    growth: ", out);
	text_print_growth_rate(out, g);
	if (!g->nrows) {
		/* a verdict without a history to draw */
		if (r->nprocs > 1)
			fprintf(out, ", in %s", merge_process_name(r, g->proc, name, sizeof(name)));
		putc('\n', out);
		return;
	}
	n = growth_columns(g->rows, g->nrows, TEXT_SPARK_WIDTH, GROWTH_PICK_MAX, NULL, v);
	putc(' ', out);
	text_print_sparkline(out, v, n);
	fputs(" from ", out);
	put_seconds(out, g->rows[0].t1);
	fputs(" to ", out);
	put_seconds(out, g->rows[g->nrows - 1].t1);
	if (r->nprocs > 1)
		fprintf(out, ", in %s", merge_process_name(r, g->proc, name, sizeof(name)));
	putc('\n', out);
}

/* The lists of call sites.  SEC_PEAK is what was live at the peak when
 * the reports say (at_peak), else each site's own peak. */
enum section { SEC_GROWING, SEC_LEAKED, SEC_PINNED, SEC_PEAK, SEC_CALLS };

static bool in_section(const struct rd_report *r, enum section sec, const struct rd_report_site *s)
{
	switch (sec) {
	case SEC_GROWING:
		/* and those that grew, then stopped: said as such */
		return s->growing || s->stopped;
	case SEC_LEAKED:
		return s->kind != GS_KIND_PINNED && s->c.live_bytes > 0;
	case SEC_PINNED:
		return s->kind == GS_KIND_PINNED && s->c.live_bytes > 0;
	case SEC_PEAK:
		/* what was live at the peak is GPU memory: pinned host memory
		 * has its own peak (TOTALS, the JSON) */
		if (r->at_peak)
			return s->at_peak_bytes > 0 ||
			       (s->kind != GS_KIND_PINNED && s->c.peak_bytes > 0);
		return s->c.peak_bytes > 0;
	case SEC_CALLS:
		return s->c.allocations > 0;
	}
	return false;
}

/* Of two sites tied on what a list is ordered by, the larger first: more
 * bytes allocated, then more often, then as report.sites are. */
static int cmp_size(const struct rd_report_site *a, const struct rd_report_site *b)
{
	if (a->c.allocated_bytes != b->c.allocated_bytes)
		return a->c.allocated_bytes > b->c.allocated_bytes ? -1 : 1;
	if (a->c.allocations != b->c.allocations)
		return a->c.allocations > b->c.allocations ? -1 : 1;
	return a->number < b->number ? -1 : a->number > b->number;
}

static int cmp_peak(const void *pa, const void *pb)
{
	const struct rd_report_site *a = *(struct rd_report_site *const *)pa;
	const struct rd_report_site *b = *(struct rd_report_site *const *)pb;

	if (a->c.peak_bytes != b->c.peak_bytes)
		return a->c.peak_bytes > b->c.peak_bytes ? -1 : 1;
	return cmp_size(a, b);
}

/* Live at the peak, then the site's own peak. */
static int cmp_at_peak(const void *pa, const void *pb)
{
	const struct rd_report_site *a = *(struct rd_report_site *const *)pa;
	const struct rd_report_site *b = *(struct rd_report_site *const *)pb;

	if (a->at_peak_bytes != b->at_peak_bytes)
		return a->at_peak_bytes > b->at_peak_bytes ? -1 : 1;
	return cmp_peak(pa, pb);
}

/* GROWTH SUSPECTS: what keeps growing, then what grew and stopped; each
 * as report.sites are (by live bytes). */
static int cmp_growth(const void *pa, const void *pb)
{
	const struct rd_report_site *a = *(struct rd_report_site *const *)pa;
	const struct rd_report_site *b = *(struct rd_report_site *const *)pb;

	if (a->growing != b->growing)
		return a->growing ? -1 : 1;
	return a->number < b->number ? -1 : a->number > b->number;
}

static int cmp_calls(const void *pa, const void *pb)
{
	const struct rd_report_site *a = *(struct rd_report_site *const *)pa;
	const struct rd_report_site *b = *(struct rd_report_site *const *)pb;

	if (a->c.allocations != b->c.allocations)
		return a->c.allocations > b->c.allocations ? -1 : 1;
	return cmp_size(a, b);
}

/* "at the peak: X live (within 1% of the peak), device 0: Y, ...". */
static void print_at_peak_line(FILE *out, const struct rd_report *r)
{
	char a[32];

	fprintf(out, "  at the peak: %s live (%s), ",
		util_human_size(r->at_peak_bytes, a, sizeof(a)),
		r->nprocs > 1 ? "sum over processes, each within 1% of its peak" :
				"within 1% of the peak");
	for (size_t i = 0; i < r->at_peak_ndevices; i++) {
		const struct rd_peak_device *d = &r->at_peak_devices[i];

		if (i)
			fputs(", ", out);
		if (d->device >= 0)
			fprintf(out, "device %" PRId64 ": ", d->device);
		else
			fputs("unknown device: ", out);
		fputs(util_human_size(d->live_bytes, a, sizeof(a)), out);
	}
	if (r->at_peak_ndevices == 0)
		fputs("no device", out);
	putc('\n', out);
}

/* With several processes, how the section's figure of S is spread over
 * them: one process far from the others (a rank that leaks, a worker that
 * peaks) is what to look at first. */
static void print_site_spread(FILE *out, const struct rd_report *r, enum section sec,
			      const struct rd_report_site *s)
{
	enum rd_report_metric m;

	if (r->nprocs < 2)
		return;
	switch (sec) {
	case SEC_LEAKED:
	case SEC_PINNED:
		m = REPORT_LEAKED;
		break;
	case SEC_PEAK:
		m = REPORT_PEAK;
		break;
	case SEC_CALLS:
		m = REPORT_ALLOCATIONS;
		break;
	default:
		return;
	}
	fprintf(out, "    across %zu processes: ", r->nprocs);
	text_print_spread(out, r, m, &s->spread[m], s->per_proc[m]);
	putc('\n', out);
}

/* What a section is measured by, for its share of the total. */
static int64_t section_value(const struct rd_report *r, enum section sec,
			     const struct rd_report_site *s)
{
	switch (sec) {
	case SEC_PEAK:
		return r->at_peak ? s->at_peak_bytes : s->c.peak_bytes;
	case SEC_CALLS:
		return s->c.allocations;
	default:
		return s->c.live_bytes;
	}
}

/* "top 10 of 12 call sites, 98% of 6.6 MiB live at the peak": how much
 * of the section's total its first SHOWN sites cover. */
static void print_share(FILE *out, const struct rd_report *r, enum section sec, size_t shown,
			size_t total, int64_t part, int64_t all)
{
	static const char *const what[] = {
		[SEC_GROWING] = "live",	     [SEC_LEAKED] = "leaked",
		[SEC_PINNED] = "leaked",     [SEC_PEAK] = "live at the peak",
		[SEC_CALLS] = "allocations",
	};
	const char *measure = what[sec];
	char a[32];
	int pct = all > 0 ? (int)((double)part * 100.0 / (double)all) : 100;

	if (sec == SEC_PEAK && !r->at_peak)
		measure = "of the sites' own peaks";
	if (report_moment(r) != AT_EXIT && (sec == SEC_LEAKED || sec == SEC_PINNED))
		measure = "live";
	if (shown < total)
		fprintf(out, " (top %zu of %zu call sites, ", shown, total);
	else
		fprintf(out, " (%zu call %s, ", total, plural((int64_t)total, "site", "sites"));
	/* a share that rounds up to 100% would hide what the rest holds */
	if (part < all && pct == 100)
		pct = 99;
	if (sec == SEC_CALLS)
		fprintf(out, "%d%% of %" PRId64 " %s", pct, all, measure);
	else
		fprintf(out, "%d%% of %s %s", pct, util_human_size(all, a, sizeof(a)), measure);
	if (shown < total)
		fputs("; --top 0 lists all", out);
	putc(')', out);
}

/* The labels of a site, after its origin. */
static void print_site_labels(FILE *out, const struct rd_report_site *s)
{
	if (s->library)
		fprintf(out, " [library memory: %s]", s->library);
	if (s->pool)
		fprintf(out, " [pool segment: %s]", s->pool);
	if (s->growing)
		fputs(" [growing]", out);
	else if (s->stopped)
		fputs(" [grew, then stopped]", out);
}

/* The section's figures of S, for its row. */
static const char *row_figures(const struct rd_report *r, enum section sec,
			       const struct rd_report_site *s, char *fig, size_t size)
{
	char a[32], b[32];

	switch (sec) {
	case SEC_GROWING:
	case SEC_LEAKED:
	case SEC_PINNED:
		snprintf(fig, size, "%s in %" PRId64,
			 util_human_size(s->c.live_bytes, a, sizeof(a)), s->c.live_allocations);
		break;
	case SEC_PEAK:
		if (r->at_peak)
			snprintf(fig, size, "%s of %s peak",
				 util_human_size(s->at_peak_bytes, a, sizeof(a)),
				 util_human_size(s->c.peak_bytes, b, sizeof(b)));
		else
			snprintf(fig, size, "%s peak",
				 util_human_size(s->c.peak_bytes, a, sizeof(a)));
		break;
	case SEC_CALLS:
		snprintf(fig, size, "%" PRId64 " of %s", s->c.allocations,
			 util_human_size(s->c.allocated_bytes, a, sizeof(a)));
		break;
	}
	return fig;
}

/* One row of a list: "#N", the section's figures (WIDTH wide), the
 * user's line, the API.  The stack is printed once, under CALL SITES. */
static bool first_shown(const struct rd_report_torch *t, size_t i);
static bool same_shown(const struct rd_report_tsite *a, const struct rd_report_tsite *b);

/* Whether the PyTorch view's site I of T heads a line the growth rule
 * flagged: a tensor's own line, with its stack. */
static bool torch_flagged(const struct rd_report_torch *t, size_t i)
{
	const struct rd_report_tsite *s = t->sites[i];

	return (s->growing || s->stopped) && torch_merge_headline(s) >= 0 && first_shown(t, i);
}

/* How many lines of the PyTorch view the rule flagged; GROWING: how many
 * of them grow still. */
static size_t torch_flagged_lines(const struct rd_report *r, size_t *growing)
{
	const struct rd_report_torch *t = &r->torch;
	size_t n = 0, g = 0;

	for (size_t i = 0; t->present && i < t->nsites; i++)
		if (torch_flagged(t, i)) {
			n++;
			g += t->sites[i]->growing;
		}
	if (growing)
		*growing = g;
	return n;
}

/* A segment of PyTorch's caching allocator, the pool the view's lines
 * fill. */
static bool torch_pool_site(const struct rd_report_site *s)
{
	return s->pool && strcmp(s->pool, pools_label(GS_POOL_TORCH)) == 0;
}

/* GROWTH SUSPECTS' first rows: the PyTorch view's flagged lines.  Where
 * the view names the tensors' line, that line is the verdict; the pool's
 * segments that grew for it are its consequence, said so under their
 * rows. */
static void print_torch_growth(FILE *out, const struct rd_report_torch *t)
{
	char a[32];

	for (size_t i = 0; t->present && i < t->nsites; i++) {
		const struct rd_report_tsite *s = t->sites[i];
		int64_t live = s->live_bytes, blocks = s->live_blocks;
		bool growing = s->growing;
		struct rd_growth g = { 0 };

		if (!torch_flagged(t, i))
			continue;
		for (size_t k = i + 1; k < t->nsites; k++)
			if (same_shown(s, t->sites[k])) {
				util_add_sat(&live, t->sites[k]->live_bytes);
				util_add_sat(&blocks, t->sites[k]->live_blocks);
				growing |= t->sites[k]->growing;
			}
		fprintf(out, "  PyTorch view %s in %" PRId64 " %s  %s [%s]\n",
			util_human_size(live, a, sizeof(a)), blocks,
			blocks == 1 ? "block" : "blocks", s->name ? s->name : "?",
			growing ? "growing" : "grew, then stopped");
		if (!s->growth.present)
			continue;
		g.fired = true;
		g.state = s->growth.state;
		g.shape = s->growth.shape;
		g.since_s = s->growth.since_s;
		g.rate_bps = s->growth.rate_bps;
		g.until_s = s->growth.until_s;
		fputs("    growth: ", out);
		text_print_growth_rate(out, &g);
		putc('\n', out);
	}
}

static void print_row(FILE *out, const struct rd_report *r, enum section sec,
		      const struct rd_report_site *s, int width)
{
	char fig[128];

	fprintf(out, "  #%-3zu %-*s  ", s->number, width, row_figures(r, sec, s, fig, sizeof(fig)));
	fputs(merge_site_name(s), out);
	fputs(" by ", out);
	cli_put_clean(out, s->api);
	fprintf(out, " (%s)", names_kind(s->kind));
	if (s->processes > 1)
		fprintf(out, " in %" PRId64 " processes", s->processes);
	print_site_labels(out, s);
	putc('\n', out);
	if (sec == SEC_GROWING)
		print_growth(out, r, s);
	if (sec == SEC_GROWING && torch_pool_site(s) && torch_flagged_lines(r, NULL))
		fputs("    its consequence: PyTorch's pool took these segments to hold the tensors "
		      "of the PyTorch view's line above; that line is the one to change\n",
		      out);
	print_site_spread(out, r, sec, s);
}

/* A section's list; SHOWN[number - 1] is set for every site it lists,
 * whose stack CALL SITES then prints.  Whether a list was cut short. */
static bool print_section(FILE *out, const struct rd_report *r, enum section sec, const char *title,
			  struct rd_report_site **order, size_t top, bool *shown_sites)
{
	size_t total = 0, shown = 0;
	int64_t part = 0, all = 0;
	/* no process exited: what is live was not (yet) leaked */
	bool live = report_moment(r) == AT_SNAPSHOT;

	int width = 0;
	char fig[128];

	for (size_t i = 0; i < r->nsites; i++) {
		if (!in_section(r, sec, order[i]))
			continue;
		util_add_sat(&all, section_value(r, sec, order[i]));
		if (!top || total < top) {
			int n = (int)strlen(row_figures(r, sec, order[i], fig, sizeof(fig)));

			util_add_sat(&part, section_value(r, sec, order[i]));
			width = n > width ? n : width;
		}
		total++;
	}
	if ((sec == SEC_PINNED || (sec == SEC_GROWING && !torch_flagged_lines(r, NULL))) &&
	    total == 0)
		return false;
	fprintf(out, "\n%s", title);
	if (total > 0)
		print_share(out, r, sec, top && total > top ? top : total, total, part, all);
	fputs("\n", out);
	if (sec == SEC_GROWING)
		print_torch_growth(out, &r->torch);
	if (sec == SEC_GROWING && total == 0)
		return false;
	if (sec == SEC_PEAK && r->at_peak)
		print_at_peak_line(out, r);
	if (total == 0) {
		if (sec != SEC_LEAKED)
			fputs("  none\n", out);
		else
			fputs(live ? "  nothing live\n" : "  nothing leaked\n", out);
		return false;
	}
	for (size_t i = 0; i < r->nsites && (!top || shown < top); i++) {
		const struct rd_report_site *s = order[i];

		if (!in_section(r, sec, s))
			continue;
		shown++;
		shown_sites[s->number - 1] = true;
		print_row(out, r, sec, s, width);
	}
	return shown < total;
}

/* Under a site merged from calls at several lines: each line's own
 * figures, on one line (the JSON has them all, as "lines"). */
static void print_site_lines(FILE *out, const struct rd_report_site *s)
{
	char a[32], b[32], c[32];

	if (s->nlines < 2)
		return;
	fputs("    by line:", out);
	for (size_t i = 0; i < s->nlines; i++) {
		const struct rd_report_line *l = &s->lines[i];

		fputs(i ? "; " : " ", out);
		if (l->file)
			cli_put_clean(out, util_basename(l->file));
		else
			fputs("?", out);
		if (l->line > 0)
			fprintf(out, ":%" PRId64, l->line);
		if (l->c.live_bytes > 0)
			fprintf(out, " leaked %s in %" PRId64 ",",
				util_human_size(l->c.live_bytes, a, sizeof(a)),
				l->c.live_allocations);
		fprintf(out, " peak %s, %" PRId64 " of %s",
			util_human_size(l->c.peak_bytes, b, sizeof(b)), l->c.allocations,
			util_human_size(l->c.allocated_bytes, c, sizeof(c)));
	}
	putc('\n', out);
}

/* Each listed site's stack, once, by number. */
static void print_call_sites(FILE *out, const struct rd_report *r, const bool *shown)
{
	size_t n = 0;

	for (size_t i = 0; i < r->nsites; i++)
		n += shown[i];
	if (!n)
		return;
	fputs("\nCALL SITES (the stacks of the sites listed above, by number)\n", out);
	for (size_t i = 0; i < r->nsites; i++) {
		const struct rd_report_site *s = r->sites[i];
		ssize_t headline = merge_site_headline(s);

		if (!shown[i])
			continue;
		fprintf(out, "#%zu %s\n", s->number, merge_site_name(s));
		if (headline < 0)
			continue;
		/* the headline in full where it says more than the name: the
		 * path of its file, the module it lies in */
		if (s->frames[headline].file) {
			fputs("    ", out);
			print_frame(out, &s->frames[headline]);
		}
		print_stack(out, s, headline);
		print_site_lines(out, s);
	}
}

/* "HH:MM:SS UTC" of T, seconds since the epoch: one clock for the hosts
 * of a job, whatever their time zones. */
static void print_clock(FILE *out, double t)
{
	time_t secs = (time_t)t;
	struct tm tm;
	char buf[32];

	if (gmtime_r(&secs, &tm) && strftime(buf, sizeof(buf), "%H:%M:%S UTC", &tm))
		fputs(buf, out);
	else
		fprintf(out, "%.0f", t);
}

/* The line of a process that did not exit: how it ended, as far as that
 * is known, and the moment of its figures. */
static void print_state(FILE *out, const struct rd_process *p)
{
	struct timespec now;

	fputs("    ", out);
	switch (p->state) {
	case RD_STATE_KILLED:
		fputs("killed by ", out);
		print_signal(out, p->signal);
		break;
	case RD_STATE_EXECED:
		fprintf(out,
			"replaced by exec (program %u of pid %" PRId64
			"; the programs after it have directories of their own)",
			p->image, p->pid);
		break;
	case RD_STATE_RUNNING:
		fputs("running", out);
		break;
	case RD_STATE_MAYBE_RUNNING:
		fprintf(out,
			"may still be running (pid %" PRId64
			" is alive on this host; when it started is unknown)",
			p->pid);
		break;
	default:
		fputs("did not exit (no report.json)", out);
		break;
	}
	if (p->event.number > 0)
		fprintf(out, ": at out-of-memory event %" PRId64, p->event.number);
	else
		fputs(": at the last snapshot", out);
	if (p->snapshot.present && !p->snapshot.periodic) {
		fprintf(out, " (on-demand snapshot %" PRId64, p->snapshot.number);
		if (p->snapshot.label) {
			fputs(" \"", out);
			cli_put_clean(out, p->snapshot.label);
			putc('"', out);
		}
		putc(')', out);
	}
	if (p->end_time >= 0) {
		if (p->run_end_time >= p->end_time) {
			fprintf(out, ", %.1f s before the end", p->run_end_time - p->end_time);
		} else {
			fputs(", ", out);
			print_clock(out, p->end_time);
			if (p->state == RD_STATE_RUNNING &&
			    clock_gettime(CLOCK_REALTIME, &now) == 0) {
				double ago = (double)now.tv_sec + (double)now.tv_nsec / 1e9 -
					     p->end_time;

				fprintf(out, ", %.1f s ago", ago > 0 ? ago : 0);
			}
		}
	}
	fputs(" (read ", out);
	cli_put_clean(out, util_basename(p->file));
	if (p->start_time >= 0 && p->end_time >= p->start_time)
		fprintf(out, ", %.1f s after it started", p->end_time - p->start_time);
	fputs(")\n", out);
}

/* A process directory without any report: a process killed, or still
 * running, before its first snapshot. */
static void print_unreported(FILE *out, const struct rd_unreported *u)
{
	fputs("  ", out);
	cli_put_clean(out, u->path);
	fprintf(out, ": pid %" PRId64 " on ", u->pid);
	cli_put_clean(out, u->host);
	fputs(", no report: ", out);
	switch (u->state) {
	case RD_STATE_KILLED:
		fputs("killed by ", out);
		print_signal(out, u->signal);
		fputs(" before its first snapshot", out);
		break;
	case RD_STATE_EXECED:
		fprintf(out, "replaced by exec (program %u of pid %" PRId64 ")", u->image, u->pid);
		break;
	case RD_STATE_MAYBE_RUNNING:
		fprintf(out,
			"may still be running (pid %" PRId64 " is alive on this host), "
			"no snapshot yet",
			u->pid);
		break;
	default:
		fputs("did not exit, killed or crashed before its first snapshot", out);
		break;
	}
	fputs(u->empty ? " (its directory is empty)\n" :
			 " (its directory holds no report.json, snapshot.json nor oom-N.json)\n",
	      out);
}

/* One line of the ledger: SIGN, NAME, BYTES (-1: unknown), WHAT. */
static void print_ledger_line(FILE *out, const char *sign, const char *name, int64_t bytes,
			      const char *what)
{
	char a[32];

	fprintf(out, "      %s %-28s %10s  %s\n", sign, name,
		bytes < 0 ? "unknown" : util_human_size(bytes, a, sizeof(a)), what);
}

/* The ledger per device (gpuspy-report(1), "THE LEDGER"). */
static void print_ledger(FILE *out, const struct rd_process *p)
{
	static const char *const title[GS_FW_COUNT] = { "PyTorch", "PaddlePaddle", "JAX", "CuPy" };
	struct rd_ledger *l;
	size_t n;
	char a[32], b[32];

	if (rd_ledger(p, &l, &n) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		const struct rd_ledger *d = &l[i];

		fprintf(out, "    ledger, device %" PRId64, d->device);
		if (d->fw_age_s >= 0)
			fprintf(out, " (the frameworks' figures %.1f s before the report's moment)",
				d->fw_age_s);
		fputs(":\n", out);
		for (size_t k = 0; k < d->nfw; k++) {
			fprintf(out, "        %s: allocated %s", title[d->fw[k].fw],
				util_human_size(d->fw[k].allocated, a, sizeof(a)));
			if (d->fw[k].reserved >= 0)
				fprintf(out, ", reserved %s",
					util_human_size(d->fw[k].reserved, b, sizeof(b)));
			putc('\n', out);
		}
		if (d->nfw) {
			print_ledger_line(out, " ", "framework allocated", d->fw_allocated,
					  "in the program's tensors and arrays");
			print_ledger_line(out, "+", "pool slack", d->pool_slack,
					  "reserved by the pools, not allocated");
			print_ledger_line(out, "=", "framework reserved", d->fw_reserved,
					  "what the frameworks hold from CUDA");
			print_ledger_line(out, "+", "tracked outside the pools", d->outside_pools,
					  "what gpuspy tracked beyond it");
		} else {
			print_ledger_line(out, " ", "tracked by gpuspy", d->tracked,
					  "live allocations gpuspy saw");
		}
		/* the graph pool's unused part, where "graph" says (ledger.c) */
		if (d->graph_pool >= 0)
			print_ledger_line(out, "+", "graph pool", d->graph_pool,
					  "CUDA graph pool, reserved and unused");
		if (d->nvml >= 0) {
			print_ledger_line(
				out, "+", "CUDA context and libraries", d->context,
				d->graph_pool >= 0 ?
					"the rest of NVML's figure" :
					"the rest of NVML's figure (any graph pool included)");
			print_ledger_line(out, "=", "NVML, this process", d->nvml,
					  "what nvidia-smi shows");
		}
		if (d->nfw)
			print_ledger_line(out, " ", "tracked by gpuspy", d->tracked,
					  "live allocations gpuspy saw");
		if (d->untracked > 0)
			print_ledger_line(
				out, " ", "untracked", d->untracked,
				"reserved by the frameworks, seen by no door of gpuspy's");
	}
	free(l);
}

/* Graph memory: what gpuspy counted (device memory, at the sites that made
 * the nodes) beside the graph pool as the driver gave it. */
static void print_graph(FILE *out, const struct rd_process *p)
{
	const struct rd_graph *g = &p->graph;
	char a[32], b[32], c[32], d[32];

	if (!g->present)
		return;
	fprintf(out,
		"    CUDA graphs: %" PRId64
		" memory node%s (%s), %s still reserved by graphs; %" PRId64
		" launch%s; live %s in %" PRId64 ", peak %s; %" PRId64 " trim%s\n",
		g->alloc_nodes, g->alloc_nodes == 1 ? "" : "s",
		util_human_size(g->alloc_node_bytes, a, sizeof(a)),
		util_human_size(g->reserved_bytes, b, sizeof(b)), g->launches,
		g->launches == 1 ? "" : "es", util_human_size(g->live_bytes, c, sizeof(c)),
		g->live_allocations, util_human_size(g->peak_bytes, d, sizeof(d)), g->trims,
		g->trims == 1 ? "" : "s");
	for (size_t i = 0; i < g->ndevices; i++) {
		const struct rd_graph_device *dv = &g->devices[i];

		fprintf(out,
			"    GPU %" PRId64 " graph pool (driver): used %s (high %s), reserved %s "
			"(high %s)",
			dv->device, util_human_size(dv->used_current, a, sizeof(a)),
			util_human_size(dv->used_high, b, sizeof(b)),
			util_human_size(dv->reserved_current, c, sizeof(c)),
			util_human_size(dv->reserved_high, d, sizeof(d)));
		/* at exit the driver may be gone: then these are its last words */
		if (dv->as_of >= 0 && p->end_time >= 0 && p->end_time - dv->as_of >= 0.05)
			fprintf(out, ", as read %.1f s before the report", p->end_time - dv->as_of);
		putc('\n', out);
	}
}

static void print_process(FILE *out, const struct rd_process *p)
{
	char a[32], b[32];

	fputs("  ", out);
	cli_put_clean(out, p->path);
	fprintf(out, ": pid %" PRId64 " on ", p->pid);
	cli_put_clean(out, p->host);
	/* what the spread lines name the process by */
	if (p->rank >= 0)
		fprintf(out, ", rank %" PRId64, p->rank);
	fprintf(out,
		rd_state_not_exited(p->state) ? ", live %s in %" PRId64 " at the last snapshot" :
						", leaked %s in %" PRId64,
		util_human_size(p->leaked_bytes, a, sizeof(a)), p->leaked_allocations);
	fprintf(out, ", peak %s%s", util_human_size(p->peak_bytes, b, sizeof(b)),
		p->complete ? "" : " (incomplete)");
	if (p->limit_bytes)
		fprintf(out, ", capped at %s per device",
			util_human_size(p->limit_bytes, a, sizeof(a)));
	putc('\n', out);
	if (p->ncommand > 0) {
		fputs("    $", out);
		for (size_t i = 0; i < p->ncommand; i++) {
			putc(' ', out);
			cli_put_clean(out, p->command[i]);
		}
		putc('\n', out);
	}
	if (rd_state_not_exited(p->state)) {
		print_state(out, p);
	} else if (p->partial) {
		/* a directory's report.json is read first: when it was not,
		 * there was none */
		fputs("    partial: ", out);
		if (strcmp(p->path, p->file) != 0)
			fputs("no report.json (the process did not exit normally); read ", out);
		cli_put_clean(out, util_basename(p->file));
		if (p->event.number > 0) {
			fprintf(out,
				", the state at out-of-memory event %" PRId64 ", not at exit\n",
				p->event.number);
		} else {
			if (!p->snapshot.present)
				fputs(", the state at that snapshot", out);
			else if (p->snapshot.periodic)
				fputs(", the state at its last periodic snapshot", out);
			else
				fprintf(out, ", the state at on-demand snapshot %" PRId64,
					p->snapshot.number);
			if (p->snapshot.label) {
				fputs(" \"", out);
				cli_put_clean(out, p->snapshot.label);
				putc('"', out);
			}
			if (p->start_time >= 0 && p->end_time >= p->start_time)
				fprintf(out, ", %.1f s after it started",
					p->end_time - p->start_time);
			fputs(", not at exit\n", out);
		}
	}
	/* Inside (what gpuspy tracked) beside outside (what NVML, like
	 * nvidia-smi, says each process holds). */
	for (size_t i = 0; i < p->outside.ngpus; i++) {
		const struct rd_outside_gpu *g = &p->outside.gpus[i];

		fprintf(out, "    GPU %" PRId64 " (NVML): %s of %s used", g->index,
			util_human_size(g->used_bytes, a, sizeof(a)),
			util_human_size(g->total_bytes, b, sizeof(b)));
		for (size_t k = 0; k < g->nprocs; k++) {
			const struct rd_outside_proc *q = &g->procs[k];

			fprintf(out, "%s pid %" PRId64 " %s", k ? "," : ";", q->pid,
				util_human_size(q->used_bytes, a, sizeof(a)));
			if (q->pid == p->pid)
				fprintf(out,
					" (this process: gpuspy tracked %s, the rest is its "
					"context and memory gpuspy did not see)",
					util_human_size(p->leaked_bytes, b, sizeof(b)));
		}
		putc('\n', out);
	}
	print_ledger(out, p);
	print_graph(out, p);
	if (p->ncalls) {
		fputs("    calls per door:", out);
		for (size_t i = 0; i < p->ncalls; i++) {
			fprintf(out, "%s ", i ? "," : "");
			cli_put_clean(out, p->calls[i].name);
			fprintf(out, " %" PRId64, p->calls[i].value);
		}
		putc('\n', out);
	}
	if (p->python.present) {
		fputs("    Python ", out);
		cli_put_clean(out, p->python.version);
		if (!p->python.supported) {
			fputs(": no Python frames", out);
			if (p->python.note) {
				fputs(" (", out);
				cli_put_clean(out, p->python.note);
				putc(')', out);
			}
		}
		putc('\n', out);
	}
}

/* Leaked memory that libraries hold (a cuBLAS workspace, an NCCL
 * communicator, the CUDA context) apart from what the program's own code
 * leaked: the first is usually meant to live as long as the process. */
/* "  held by pools:    5.2 GiB in 89 segments of the PyTorch caching
 * allocator (the framework's cache at exit, not a leak)". */
static void print_pool_held(FILE *out, const struct rd_report *r, enum moment moment)
{
	char a[32];
	bool first = true;

	if (!r->pool_held_bytes)
		return;
	fprintf(out, "  held by pools:    %s in %" PRId64 " %s of ",
		util_human_size(r->pool_held_bytes, a, sizeof(a)), r->pool_held_allocations,
		plural(r->pool_held_allocations, "segment", "segments"));
	for (size_t k = 0; classify_pool_label(k); k++) {
		if (!r->pool_bytes[k])
			continue;
		fprintf(out, "%sthe %s", first ? "" : " and ", classify_pool_label(k));
		first = false;
	}
	fprintf(out, " (the framework's cache %s, not a leak of the program's)\n",
		moment == AT_EXIT ? "at exit" : "then");
}

/* The frameworks' own allocated counters the rule flagged, per process:
 * "  JAX allocated:    growing +75.0 MiB/min since 0.2 s (per-sample) on
 * device 0, its pool's segments #3". */
static void print_framework_growth(FILE *out, const struct rd_report *r)
{
	static const char *const titles[GS_FW_COUNT] = {
		[GS_FW_PYTORCH] = "PyTorch",
		[GS_FW_PADDLE] = "PaddlePaddle",
		[GS_FW_JAX] = "JAX",
		[GS_FW_CUPY] = "CuPy",
	};
	char name[REPORT_NAME_SIZE];

	for (size_t p = 0; p < r->nprocs; p++) {
		const struct rd_frameworks *fw = &r->procs[p]->frameworks;

		for (int f = 0; f < GS_FW_COUNT; f++)
			for (int q = 0; q < GS_FW_PLACES; q++) {
				const struct rd_verdict *v = &fw->growth[f][q];
				struct rd_growth g = { 0 };
				const struct rd_report_site *site = NULL;

				if (!v->present)
					continue;
				g.fired = true;
				g.state = v->state;
				g.shape = v->shape;
				g.since_s = v->since_s;
				g.rate_bps = v->rate_bps;
				g.until_s = v->until_s;
				snprintf(name, sizeof(name), "%s allocated:", titles[f]);
				fprintf(out, "  %-18s%s ", name,
					v->state == TREND_STOPPED ? "grew" : "growing");
				text_print_growth_rate(out, &g);
				if (q == GS_FW_HOST)
					fputs(", pinned host memory", out);
				else
					fprintf(out, ", device %d", q);
				for (size_t i = 0; fw->growth_site[f][q] >= 0 && r->site_of &&
						   i < r->procs[p]->nsites;
				     i++)
					if (r->procs[p]->sites[i].id == fw->growth_site[f][q])
						site = r->site_of[p][i];
				if (site)
					fprintf(out, "; its pool's segments: #%zu", site->number);
				if (r->nprocs > 1)
					fprintf(out, ", in %s",
						merge_process_name(r, p, name, sizeof(name)));
				putc('\n', out);
			}
	}
}

static void print_library_summary(FILE *out, const struct rd_report *r)
{
	const char *labels[16];
	size_t nlabels = 0;
	int64_t lib_bytes = 0, lib_allocs = 0, user_bytes = 0, user_allocs = 0;
	char a[32];

	for (size_t i = 0; i < r->nsites; i++) {
		const struct rd_report_site *s = r->sites[i];
		size_t k;

		if (s->kind == GS_KIND_PINNED || s->c.live_bytes == 0)
			continue;
		if (!s->library) {
			util_add_sat(&user_bytes, s->c.live_bytes);
			util_add_sat(&user_allocs, s->c.live_allocations);
			continue;
		}
		util_add_sat(&lib_bytes, s->c.live_bytes);
		util_add_sat(&lib_allocs, s->c.live_allocations);
		for (k = 0; k < nlabels; k++)
			if (strcmp(labels[k], s->library) == 0)
				break;
		if (k == nlabels && nlabels < sizeof(labels) / sizeof(labels[0]))
			labels[nlabels++] = s->library;
	}
	if (lib_bytes == 0)
		return;
	fprintf(out, "    user code:      %s in %" PRId64 " %s\n",
		util_human_size(user_bytes, a, sizeof(a)), user_allocs,
		plural(user_allocs, "allocation", "allocations"));
	fputs("    library memory (", out);
	for (size_t k = 0; k < nlabels; k++)
		fprintf(out, "%s%s", k ? ", " : "", labels[k]);
	fprintf(out, "): %s in %" PRId64 " %s\n", util_human_size(lib_bytes, a, sizeof(a)),
		lib_allocs, plural(lib_allocs, "allocation", "allocations"));
}

/* Which sites a section lists (its first TOP): SHOWN[number - 1]. */
static void mark_shown(const struct rd_report *r, enum section sec, struct rd_report_site **order,
		       size_t top, bool *shown)
{
	size_t n = 0;

	for (size_t i = 0; i < r->nsites && (!top || n < top); i++) {
		if (!in_section(r, sec, order[i]))
			continue;
		n++;
		shown[order[i]->number - 1] = true;
	}
}

/* One line per pool whose segments the report lists (SHOWN): what its
 * sites are, and how to get one site per tensor where the framework can. */
static void print_pool_hints(FILE *out, const struct rd_report *r, const bool *shown)
{
	bool seen[8] = { false };
	size_t n = 0;
	bool first = true;

	while (n < sizeof(seen) / sizeof(seen[0]) && classify_pool_label(n))
		n++;
	for (size_t i = 0; i < r->nsites; i++)
		for (size_t k = 0; shown[i] && r->sites[i]->pool && k < n; k++)
			if (classify_pool_label(k) == r->sites[i]->pool)
				seen[k] = true;
	for (size_t k = 0; k < n; k++) {
		if (!seen[k])
			continue;
		fprintf(out, "  %-18s%s: %s\n", first ? "pool segments:" : "",
			classify_pool_label(k), classify_pool_hint(classify_pool_label(k)));
		first = false;
	}
}

/* A site as "SIZE by API at HEADLINE", with its labels. */
static void print_oom_site(FILE *out, const struct rd_report_site *s)
{
	char a[32];

	fprintf(out, "    %s by ", util_human_size(s->c.live_bytes, a, sizeof(a)));
	cli_put_clean(out, s->api);
	if (s->library)
		fprintf(out, " [library memory: %s]", s->library);
	if (s->pool)
		fprintf(out, " [pool segment: %s]", s->pool);
	fprintf(out, " at %s\n", merge_site_name(s));
}

/* The event's verdict (oom_verdict.h) and what it names: PyTorch's lines
 * pinning its segments or holding most, the other processes; at most TOP
 * of each. */
static void print_oom_verdict(FILE *out, const struct rd_report_oom *ro, size_t top)
{
	const struct rd_oom_verdict *v = &ro->verdict;
	const struct rd_oom *ev = ro->ev;
	char a[32];

	if (!v->line)
		return;
	fputs("  why: ", out);
	cli_put_clean(out, v->line);
	putc('\n', out);
	if (v->v.cls == OOM_FRAGMENTATION)
		for (size_t i = 0; i < v->npins && i < top; i++) {
			fprintf(out, "    pinned: %s in %" PRId64 " %s at ",
				util_human_size(ev->torch->lines[i].bytes, a, sizeof(a)),
				ev->torch->lines[i].blocks,
				plural(ev->torch->lines[i].blocks, "block", "blocks"));
			cli_put_clean(out, v->pin_names[i]);
			putc('\n', out);
		}
	if (v->v.cls == OOM_CAP || v->v.cls == OOM_SHORTAGE || v->v.cls == OOM_OUTSIDE)
		for (size_t i = 0; i < v->nholders && i < top; i++) {
			fprintf(out, "    held: %s in %" PRId64 " %s at ",
				util_human_size(ev->torch->holders[i].bytes, a, sizeof(a)),
				ev->torch->holders[i].blocks,
				plural(ev->torch->holders[i].blocks, "block", "blocks"));
			cli_put_clean(out, v->holder_names[i]);
			putc('\n', out);
		}
	if (v->v.cls == OOM_OTHER_PROCESS || v->v.cls == OOM_SHORTAGE)
		for (size_t i = 0; i < ev->nothers && i < top; i++) {
			fprintf(out, "    other process: pid %" PRId64, ev->others[i].pid);
			if (ev->others[i].name) {
				fputs(" (", out);
				cli_put_clean(out, ev->others[i].name);
				putc(')', out);
			}
			fprintf(out, " holds %s\n",
				util_human_size(ev->others[i].used_bytes, a, sizeof(a)));
		}
}

/* One event: what failed and what the device held, who asked, and what
 * was live at that moment. */
static void print_oom(FILE *out, const struct rd_report *r, const struct rd_report_oom *ro,
		      size_t top)
{
	const struct rd_oom *ev = ro->ev;
	const struct rd_process *p = ro->proc;
	size_t n = top && top < ro->ntop ? top : ro->ntop;
	char a[32], b[32], c[32];

	if (r->nprocs > 1) {
		cli_put_clean(out, p->path);
		putc(' ', out);
	}
	if (p->start_time >= 0 && ev->time >= p->start_time)
		fprintf(out, "+%.1f s", ev->time - p->start_time);
	else
		fprintf(out, "event %" PRId64, ev->number);
	fputs(": ", out);
	cli_put_clean(out, ev->api);
	fprintf(out, " of %s", util_human_size(ev->requested_bytes, a, sizeof(a)));
	if (ev->kind == GS_KIND_PINNED)
		fputs(" of pinned host memory", out);
	else if (ev->device >= 0)
		fprintf(out, " on device %" PRId64, ev->device);
	else
		fputs(" on an unknown device", out);
	fprintf(out, " failed: tracked live %s", util_human_size(ev->live_bytes, a, sizeof(a)));
	if (ro->untracked_bytes >= 0)
		fprintf(out, ", device free %s of %s, not seen by gpuspy %s\n",
			util_human_size(ev->free_bytes, a, sizeof(a)),
			util_human_size(ev->total_bytes, b, sizeof(b)),
			util_human_size(ro->untracked_bytes, c, sizeof(c)));
	else
		fputs(", device free and total unknown\n", out);

	fprintf(out, "  requested by %s\n",
		ro->requested ? merge_site_name(ro->requested) : "(no stack)");
	/* the call that asked, in full: the line of the site it was */
	if (ro->requested && merge_site_headline(ro->requested) >= 0 &&
	    ro->requested->frames[merge_site_headline(ro->requested)].file) {
		fputs("    at ", out);
		print_frame(out, &ro->requested->frames[merge_site_headline(ro->requested)]);
	}
	print_oom_verdict(out, ro, top ? top : REPORT_OOM_TOP);

	if (!ev->file) {
		fputs("  (no post-mortem file: what was live then is unknown)\n", out);
		return;
	}
	if (!ev->snapshot) {
		fputs("  (", out);
		cli_put_clean(out, ev->file);
		fputs(" is gone: what was live then is unknown)\n", out);
		return;
	}
	fprintf(out, "  largest live %s at that moment:%s\n",
		ev->kind == GS_KIND_PINNED ? "pinned host memory" : "on the GPU",
		n == 0 ? " none" : "");
	for (size_t i = 0; i < n; i++)
		print_oom_site(out, ro->top[i]);
}

static void print_ooms(FILE *out, const struct rd_report *r, size_t top)
{
	if (r->nooms == 0 && r->oom_dropped == 0)
		return;
	fputs("\nOUT OF MEMORY\n", out);
	for (size_t i = 0; i < r->nooms; i++)
		print_oom(out, r, &r->ooms[i], top);
	if (r->oom_dropped > 0)
		fprintf(out, "%s and %" PRId64 " more %s, counted but not recorded\n",
			cli_glyph(CLI_ELLIPSIS), r->oom_dropped,
			plural(r->oom_dropped, "event", "events"));
}

/* "  did not exit:  N processes (...)": how many of R's processes, and how
 * they ended. */
static void print_not_exited(FILE *out, const struct rd_report *r, size_t n)
{
	size_t count[RD_STATE_UNKNOWN + 1] = { 0 };
	int64_t sig = 0;
	bool one_signal = true, first = true;

	for (size_t i = 0; i < r->nprocs; i++) {
		const struct rd_process *p = r->procs[i];

		if (!rd_state_not_exited(p->state))
			continue;
		count[p->state]++;
		if (p->state == RD_STATE_KILLED) {
			if (sig && sig != p->signal)
				one_signal = false;
			sig = p->signal;
		}
	}
	fprintf(out, "  did not exit:     %zu %s (", n, plural(n, "process", "processes"));
	if (count[RD_STATE_KILLED]) {
		fprintf(out, "%zu killed", count[RD_STATE_KILLED]);
		if (one_signal) {
			fputs(" by ", out);
			print_signal(out, sig);
		}
		first = false;
	}
	if (count[RD_STATE_EXECED]) {
		fprintf(out, "%s%zu replaced by exec", first ? "" : ", ", count[RD_STATE_EXECED]);
		first = false;
	}
	if (count[RD_STATE_RUNNING]) {
		fprintf(out, "%s%zu running", first ? "" : ", ", count[RD_STATE_RUNNING]);
		first = false;
	}
	if (count[RD_STATE_MAYBE_RUNNING]) {
		fprintf(out, "%s%zu may still be running", first ? "" : ", ",
			count[RD_STATE_MAYBE_RUNNING]);
		first = false;
	}
	if (count[RD_STATE_UNKNOWN])
		fprintf(out, "%s%zu killed or crashed", first ? "" : ", ", count[RD_STATE_UNKNOWN]);
	fprintf(out, "); %s figures are those of the last snapshot (see PROCESSES)\n",
		plural(n, "its", "their"));
}

const char text_section_names[] =
	"summary, oom, wrong-device, growth, torch, processes, leaks, pinned, peak, allocations, "
	"sites, totals, next";

int text_sections_parse(const char *list, unsigned *out, const char **bad, size_t *badlen)
{
	static const char *const names[TEXT_SECTIONS] = {
		[TEXT_SUMMARY] = "summary",
		[TEXT_OOM] = "oom",
		[TEXT_WRONG_DEVICE] = "wrong-device",
		[TEXT_GROWTH] = "growth",
		[TEXT_TORCH] = "torch",
		[TEXT_PROCESSES] = "processes",
		[TEXT_LEAKS] = "leaks",
		[TEXT_PINNED] = "pinned",
		[TEXT_PEAK] = "peak",
		[TEXT_ALLOCATIONS] = "allocations",
		[TEXT_SITES] = "sites",
		[TEXT_TOTALS] = "totals",
		[TEXT_NEXT] = "next",
	};
	unsigned set = 0;

	for (const char *p = list;;) {
		size_t n = strcspn(p, ",");
		int k = 0;

		while (k < TEXT_SECTIONS && (strlen(names[k]) != n || strncmp(names[k], p, n) != 0))
			k++;
		if (k == TEXT_SECTIONS) {
			*bad = p;
			*badlen = n;
			return -EINVAL;
		}
		set |= 1u << k;
		if (!p[n])
			break;
		p += n + 1;
	}
	*out = set;
	return 0;
}

/* WRONG DEVICE (wrong_device.h): each rank's memory on a device not its
 * own, its verdict line, then the sites that allocated it (at most TOP;
 * 0: all), most first, each by its one name and the line in that rank. */
static void print_wrong(FILE *out, const struct rd_report *r, size_t top)
{
	char line[REPORT_NAME_SIZE + 160], a[32], b[32];

	if (!r->wrong || r->wrong->n == 0)
		return;
	fputs("\nWRONG DEVICE\n", out);
	for (size_t i = 0; i < r->wrong->n; i++) {
		const struct rd_wrong *w = &r->wrong->items[i];

		fputs("  ", out);
		cli_put_clean(out, rd_wrong_line(r, w, line, sizeof(line)));
		putc('\n', out);
		if (w->fig.allocations > 0 && w->fig.context > 0)
			fprintf(out,
				"    allocations: %s; context: %s (NVML's figure beyond them)\n",
				util_human_size(w->fig.allocations, a, sizeof(a)),
				util_human_size(w->fig.context, b, sizeof(b)));
		for (size_t k = 0; k < w->nsites && (!top || k < top); k++) {
			const struct rd_wrong_site *ws = &w->sites[k];

			fprintf(out, "    %s in %" PRId64 " %s by ",
				util_human_size(ws->bytes, a, sizeof(a)), ws->allocations,
				plural(ws->allocations, "allocation", "allocations"));
			cli_put_clean(out, ws->site->api);
			if (ws->site->library)
				fprintf(out, " [library memory: %s]", ws->site->library);
			fprintf(out, " at %s", merge_site_name(ws->site));
			if (ws->site->nlines > 1 && ws->line > 0)
				fprintf(out, ", line %" PRId64 " here", ws->line);
			putc('\n', out);
		}
		if (top && w->nsites > top)
			fprintf(out, "    and %zu more call %s\n", w->nsites - top,
				plural(w->nsites - top, "site", "sites"));
		if (w->unsited_bytes > 0)
			fprintf(out, "    %s at call sites the report folded (GPUSPY_MAX_SITES)\n",
				util_human_size(w->unsited_bytes, a, sizeof(a)));
		if (w->fig.allocations > 0 && !w->sites_read) {
			const struct rd_process *p = r->procs[w->proc];

			fputs(w->sites_refused ?
				      "    (its call sites are not named: its "
				      "allocations.json could not be read)\n" :
			      p->partial || rd_state_not_exited(p->state) ?
				      "    (its call sites are named from the live "
				      "allocations at exit: this process did not exit)\n" :
				      "    (its call sites are not named: no "
				      "allocations.json beside its report)\n",
			      out);
		}
	}
}

/* "  wrong device:     rank 1 holds 512.0 MiB on device 0 (see WRONG DEVICE)" */
static void print_wrong_summary(FILE *out, const struct rd_report *r)
{
	char name[REPORT_NAME_SIZE], a[32];
	const struct rd_wrong *w;

	if (!r->wrong || r->wrong->n == 0)
		return;
	w = &r->wrong->items[0];
	fprintf(out, "  wrong device:     %s holds %s on device %" PRId64 ", not its device %d",
		merge_process_name(r, w->proc, name, sizeof(name)),
		util_human_size(w->bytes, a, sizeof(a)), w->fig.device, w->own);
	if (r->wrong->n > 1)
		fprintf(out, "; %zu more", r->wrong->n - 1);
	fputs(" (see WRONG DEVICE)\n", out);
}

/* Every process's counters of each kind of memory, summed. */
/* "  capped: at 8.0 GiB per device (GPUSPY_LIMIT)": a run on a smaller
 * card, on purpose; the processes that were, when not all. */
static void print_limit(FILE *out, const struct rd_report *r)
{
	size_t n = 0;
	int64_t limit = 0;
	bool same = true;
	char a[32];

	for (size_t i = 0; i < r->nprocs; i++) {
		if (!r->procs[i]->limit_bytes)
			continue;
		same &= !n || limit == r->procs[i]->limit_bytes;
		limit = r->procs[i]->limit_bytes;
		n++;
	}
	if (!n)
		return;
	if (same)
		fprintf(out, "  capped:           at %s per device (GPUSPY_LIMIT)",
			util_human_size(limit, a, sizeof(a)));
	else
		fputs("  capped:           at limits that differ between processes (GPUSPY_LIMIT; see "
		      "PROCESSES)",
		      out);
	if (n < r->nprocs)
		fprintf(out, " in %zu of %zu processes", n, r->nprocs);
	putc('\n', out);
}

static void print_totals(FILE *out, const struct rd_report *r)
{
	struct rd_counters k[GS_KIND_COUNT] = { 0 };
	char a[32], b[32], c[32], d[32];

	for (size_t i = 0; i < r->nprocs; i++)
		for (int m = 0; m < GS_KIND_COUNT; m++) {
			const struct rd_counters *x = &r->procs[i]->kinds[m];

			util_add_sat(&k[m].allocations, x->allocations);
			util_add_sat(&k[m].allocated_bytes, x->allocated_bytes);
			util_add_sat(&k[m].frees, x->frees);
			util_add_sat(&k[m].freed_bytes, x->freed_bytes);
			util_add_sat(&k[m].live_bytes, x->live_bytes);
			util_add_sat(&k[m].live_allocations, x->live_allocations);
			util_add_sat(&k[m].peak_bytes, x->peak_bytes);
		}
	fprintf(out, "\nTOTALS (by kind of memory%s; %" PRId64 " untracked %s)\n",
		r->nprocs > 1 ? ", summed over the processes" : "", r->untracked_frees,
		plural(r->untracked_frees, "free", "frees"));
	for (int m = 0; m < GS_KIND_COUNT; m++) {
		if (!k[m].allocations && !k[m].live_bytes)
			continue;
		fprintf(out,
			"  %-8s %" PRId64 " %s of %s, %" PRId64 " %s of %s; %s %s in %" PRId64
			", peak %s\n",
			names_kind(m), k[m].allocations,
			plural(k[m].allocations, "allocation", "allocations"),
			util_human_size(k[m].allocated_bytes, a, sizeof(a)), k[m].frees,
			plural(k[m].frees, "free", "frees"),
			util_human_size(k[m].freed_bytes, b, sizeof(b)),
			report_moment(r) == AT_EXIT ? "leaked" : "live",
			util_human_size(k[m].live_bytes, c, sizeof(c)), k[m].live_allocations,
			util_human_size(k[m].peak_bytes, d, sizeof(d)));
	}
}

static void put_paths(FILE *out, const struct text_report_opts *o)
{
	for (size_t i = 0; i < o->npaths; i++) {
		putc(' ', out);
		cli_put_clean(out, o->paths[i]);
	}
}

/* One "next:" line: CMD, the paths the report read, then WHAT; a blank
 * line before the first. */
static void put_next(FILE *out, const struct text_report_opts *o, bool *first, const char *cmd,
		     const char *what)
{
	fputs(*first ? "\nnext: " : "next: ", out);
	fputs(cmd, out);
	put_paths(out, o);
	fputs(what, out);
	putc('\n', out);
	*first = false;
}

/* The commands that take the reader further from what this report shows,
 * one a line: "next: COMMAND  (what it shows)". */
static void print_next(FILE *out, const struct rd_report *r, const struct text_report_opts *o)
{
	bool growing = false, marks = false, first = true;

	if (!o->npaths)
		return;
	for (size_t i = 0; i < r->nsites; i++)
		growing |= r->sites[i]->growing || r->sites[i]->stopped;
	for (size_t i = 0; i < r->nprocs; i++)
		marks |= r->procs[i]->nmarks > 0;
	if (r->leaked_bytes > 0 || r->pinned_leaked_bytes > 0 || growing)
		put_next(out, o, &first, "gpuspy diff",
			 " NEW_RUN_DIR  (after a fix: what it changed)");
	if (marks)
		put_next(out, o, &first, "gpuspy diff --at LABEL",
			 " NEW_RUN_DIR  (live at a mark, run against run)");
	if (growing)
		put_next(out, o, &first, "gpuspy report --format csv",
			 "  (live bytes over time, to plot)");
}

static bool want(const struct text_report_opts *o, enum text_section s)
{
	return o->sections & (1u << s);
}

/* report --at LABEL, --peak: what was live at that moment, by site, most
 * first, each by its name as the lists below name it. */
static int print_moment(FILE *out, const struct rd_report *r, size_t top)
{
	const struct rd_stacks *st = r->moment;
	const struct rd_report_site **order;
	size_t n, shown;
	int64_t *bytes;
	int width = 0;
	char a[32];

	if (stacks_by_site(r, st, &bytes, &order, &n) < 0)
		return -ENOMEM;
	shown = top && top < n ? top : n;
	if (st->state == STACKS_MARK) {
		fputs("\nLIVE AT THE MARK \"", out);
		cli_put_clean(out, st->label);
		putc('"', out);
	} else {
		fputs("\nLIVE AT THE PEAK", out);
	}
	fprintf(out, " (%s in %zu of %zu %s; %zu call %s",
		util_human_size(st->live_bytes, a, sizeof(a)), st->processes, r->nprocs,
		plural(r->nprocs, "process", "processes"), n, plural(n, "site", "sites"));
	if (shown < n)
		fprintf(out, ", top %zu; --top 0 lists all", shown);
	fputs(")\n", out);
	for (size_t i = 0; i < shown; i++) {
		int w = (int)strlen(util_human_size(bytes[order[i]->number - 1], a, sizeof(a)));

		width = w > width ? w : width;
	}
	for (size_t i = 0; i < shown; i++) {
		const struct rd_report_site *s = order[i];

		fprintf(out, "  #%-3zu %*s  %s by ", s->number, width,
			util_human_size(bytes[s->number - 1], a, sizeof(a)), merge_site_name(s));
		cli_put_clean(out, s->api);
		fprintf(out, " (%s)\n", names_kind(s->kind));
	}
	if (!n)
		fputs("  nothing live\n", out);
	free(bytes);
	free(order);
	return 0;
}

int text_print_report(const struct rd_report *r, const struct rd_process_list *list, FILE *out,
		      const struct text_report_opts *o)
{
	struct rd_report_site **by_peak = NULL, **by_calls = NULL, **by_growth = NULL;
	enum moment moment = report_moment(r);
	/* what "leaked" means: lost at exit, or still live at the last
	 * snapshot of a process that did not exit */
	static const char *const leaked[] = { "leaked", "live", "leaked or live" };
	size_t partial = 0, stopped = not_exited(r), top = o->top;
	bool *shown = calloc(r->nsites + 1, sizeof(*shown));
	char a[32], b[32];

	if (!shown)
		return -ENOMEM;
	if (r->nsites > 0) {
		by_peak = malloc(r->nsites * sizeof(*by_peak));
		by_calls = malloc(r->nsites * sizeof(*by_calls));
		by_growth = malloc(r->nsites * sizeof(*by_growth));
		if (!by_peak || !by_calls || !by_growth) {
			free(by_peak);
			free(by_calls);
			free(by_growth);
			free(shown);
			return -ENOMEM;
		}
		memcpy(by_peak, r->sites, r->nsites * sizeof(*by_peak));
		memcpy(by_calls, r->sites, r->nsites * sizeof(*by_calls));
		memcpy(by_growth, r->sites, r->nsites * sizeof(*by_growth));
	}
	if (r->nsites > 1) {
		qsort(by_peak, r->nsites, sizeof(*by_peak), r->at_peak ? cmp_at_peak : cmp_peak);
		qsort(by_calls, r->nsites, sizeof(*by_calls), cmp_calls);
		qsort(by_growth, r->nsites, sizeof(*by_growth), cmp_growth);
	}

	fprintf(out, "gpuspy report: %zu %s, %zu call %s", r->nprocs,
		plural(r->nprocs, "process", "processes"), r->nsites,
		plural(r->nsites, "site", "sites"));
	if (list->nunreported)
		fprintf(out, "; %zu more %s no report (see PROCESSES)", list->nunreported,
			plural(list->nunreported, "process wrote", "processes wrote"));
	putc('\n', out);
	text_print_unreadable(out, r, "");

	if (want(o, TEXT_SUMMARY)) {
		fputs("\nSUMMARY\n", out);
		fputs(moment == AT_EXIT	    ? "  leaked at exit:   " :
		      moment == AT_SNAPSHOT ? "  live at the end:  " :
					      "  leaked or live:   ",
		      out);
		/* what the framework pools still hold is said apart: their
		 * cache, not the program's leak */
		fprintf(out,
			"%s in %" PRId64 " %s (%" PRId64
			" bytes of device, managed and VMM memory%s",
			util_human_size(r->leaked_bytes - r->pool_held_bytes, a, sizeof(a)),
			r->leaked_allocations - r->pool_held_allocations,
			plural(r->leaked_allocations - r->pool_held_allocations, "allocation",
			       "allocations"),
			r->leaked_bytes - r->pool_held_bytes,
			r->pool_held_bytes ? ", by the program's own code" : "");
		if (moment == AT_SNAPSHOT)
			fputs(r->nprocs == 1 ? "; at the last snapshot: the process did not exit" :
					       "; at the last snapshot of each: no process exited",
			      out);
		else if (moment == AT_BOTH)
			fprintf(out,
				"; leaked at exit by %zu, live at the last snapshot of %zu that did not exit",
				r->nprocs - stopped, stopped);
		fputs(")\n", out);
		print_pool_held(out, r, moment);
		print_library_summary(out, r);
		print_limit(out, r);
		print_wrong_summary(out, r);
		fprintf(out, "  peak:             %s%s\n",
			util_human_size(r->peak_bytes, a, sizeof(a)),
			r->nprocs > 1 ? " (sum of each process's peak)" : "");
		if (r->nprocs > 1) {
			fprintf(out, "  per process:      %s ", leaked[moment]);
			text_print_spread(out, r, REPORT_LEAKED, &r->spread[REPORT_LEAKED],
					  r->totals[REPORT_LEAKED]);
			fputs("\n                    peak ", out);
			text_print_spread(out, r, REPORT_PEAK, &r->spread[REPORT_PEAK],
					  r->totals[REPORT_PEAK]);
			putc('\n', out);
		}
		fprintf(out, "  pinned host:      %s %s in %" PRId64 " %s, peak %s\n",
			util_human_size(r->pinned_leaked_bytes, a, sizeof(a)), leaked[moment],
			r->pinned_leaked_allocations,
			plural(r->pinned_leaked_allocations, "allocation", "allocations"),
			util_human_size(r->pinned_peak_bytes, b, sizeof(b)));
		/* TOTALS says it always */
		if (r->untracked_frees)
			fprintf(out, "  untracked frees:  %" PRId64 "\n", r->untracked_frees);
		if (r->folded_sites)
			fprintf(out,
				"  folded:           %" PRId64
				" more %s folded: %s live in %" PRId64 " %s (GPUSPY_MAX_SITES)\n",
				r->folded_sites, plural(r->folded_sites, "site", "sites"),
				util_human_size(r->folded_live_bytes, a, sizeof(a)),
				r->folded_live_allocations,
				plural(r->folded_live_allocations, "allocation", "allocations"));
		if (r->incomplete)
			fprintf(out,
				"  warning: %zu %s stopped tracking early; %s figures are a lower bound\n",
				r->incomplete, plural(r->incomplete, "process", "processes"),
				plural(r->incomplete, "its", "their"));
		{
			size_t growing = 0, stopped_sites = 0;

			for (size_t i = 0; i < r->nsites; i++) {
				growing += r->sites[i]->growing;
				stopped_sites += r->sites[i]->stopped;
			}
			size_t tgrowing = 0, tflagged = torch_flagged_lines(r, &tgrowing);

			/* the tensors' lines first: the pool's segments grew for them */
			for (size_t i = 0; tgrowing && i < r->torch.nsites; i++)
				if (torch_flagged(&r->torch, i) && r->torch.sites[i]->growing) {
					fprintf(out, "  growing:          %s [PyTorch view]",
						r->torch.sites[i]->name ? r->torch.sites[i]->name :
									  "?");
					if (tgrowing > 1)
						fprintf(out, " and %zu more %s", tgrowing - 1,
							plural(tgrowing - 1, "line", "lines"));
					fputs(" (see GROWTH SUSPECTS)\n", out);
					break;
				}
			if (tflagged > tgrowing)
				fprintf(out,
					"  grew, then stopped: %zu %s of the PyTorch view (see GROWTH "
					"SUSPECTS)\n",
					tflagged - tgrowing,
					plural(tflagged - tgrowing, "line", "lines"));
			if (growing)
				fprintf(out,
					"  growing:          %zu call %s keep%s growing (see GROWTH SUSPECTS)\n",
					growing, plural(growing, "site", "sites"),
					growing == 1 ? "s" : "");
			/* warm-ups, caches filled to their bound, pools that
			 * doubled: flagged while they grew, not growing now */
			if (stopped_sites)
				fprintf(out,
					"  grew, then stopped: %zu call %s, not growing at the end (see "
					"GROWTH SUSPECTS)\n",
					stopped_sites, plural(stopped_sites, "site", "sites"));
			print_framework_growth(out, r);
		}
		if (stopped)
			print_not_exited(out, r, stopped);
		/* the others: report files named directly */
		for (size_t i = 0; i < r->nprocs; i++)
			partial += r->procs[i]->partial && !rd_state_not_exited(r->procs[i]->state);
		if (partial)
			fprintf(out,
				"  warning: %zu %s read from a snapshot or an out-of-memory post-mortem, not from a report at exit; %s figures are those of that moment\n",
				partial, plural(partial, "process is", "processes are"),
				plural(partial, "its", "their"));
		{
			/* the pools of the sites the lists below show */
			bool *listed = calloc(r->nsites + 1, sizeof(*listed));

			if (!listed) {
				free(by_peak);
				free(by_calls);
				free(by_growth);
				free(shown);
				return -ENOMEM;
			}
			if (want(o, TEXT_GROWTH))
				mark_shown(r, SEC_GROWING, by_growth, top, listed);
			if (want(o, TEXT_LEAKS))
				mark_shown(r, SEC_LEAKED, r->sites, top, listed);
			if (want(o, TEXT_PINNED))
				mark_shown(r, SEC_PINNED, r->sites, top, listed);
			if (want(o, TEXT_PEAK))
				mark_shown(r, SEC_PEAK, by_peak, top, listed);
			if (want(o, TEXT_ALLOCATIONS))
				mark_shown(r, SEC_CALLS, by_calls, top, listed);
			print_pool_hints(out, r, listed);
			free(listed);
		}
		text_print_torch_summary(out, r);
	}

	if (r->moment && print_moment(out, r, top) < 0) {
		free(by_peak);
		free(by_calls);
		free(by_growth);
		free(shown);
		return -ENOMEM;
	}
	if (want(o, TEXT_OOM))
		print_ooms(out, r, top);
	if (want(o, TEXT_WRONG_DEVICE))
		print_wrong(out, r, top);
	/* by live bytes: what a growing site holds now */
	if (want(o, TEXT_GROWTH))
		print_section(out, r, SEC_GROWING, "GROWTH SUSPECTS", by_growth, top, shown);
	if (want(o, TEXT_TORCH))
		text_print_torch(out, r, top);

	if (want(o, TEXT_PROCESSES)) {
		fputs("\nPROCESSES\n", out);
		for (size_t i = 0; i < r->nprocs; i++)
			print_process(out, r->procs[i]);
		for (size_t i = 0; i < list->nunreported; i++)
			print_unreported(out, &list->unreported[i]);
	}

	{
		static const char *const title[][2] = {
			{ "LEAKED AT EXIT", "PINNED HOST MEMORY LEAKED AT EXIT" },
			{ "LIVE AT THE LAST SNAPSHOT",
			  "PINNED HOST MEMORY LIVE AT THE LAST SNAPSHOT" },
			{ "LEAKED AT EXIT OR LIVE AT THE LAST SNAPSHOT",
			  "PINNED HOST MEMORY LEAKED AT EXIT OR LIVE AT THE LAST SNAPSHOT" },
		};

		if (want(o, TEXT_LEAKS))
			print_section(out, r, SEC_LEAKED, title[moment][0], r->sites, top, shown);
		if (want(o, TEXT_PINNED))
			print_section(out, r, SEC_PINNED, title[moment][1], r->sites, top, shown);
	}
	if (want(o, TEXT_PEAK))
		print_section(out, r, SEC_PEAK, r->at_peak ? "LIVE AT PEAK" : "PEAK CONSUMERS",
			      by_peak, top, shown);
	if (want(o, TEXT_ALLOCATIONS))
		print_section(out, r, SEC_CALLS, "MOST ALLOCATIONS", by_calls, top, shown);
	if (want(o, TEXT_SITES))
		print_call_sites(out, r, shown);
	if (want(o, TEXT_TOTALS))
		print_totals(out, r);
	if (want(o, TEXT_NEXT))
		print_next(out, r, o);
	free(by_peak);
	free(by_calls);
	free(by_growth);
	free(shown);
	return ferror(out) ? -EIO : 0;
}

/* Listed: what holds memory now, or was found growing. */
static bool listed(const struct rd_report_tsite *s)
{
	return s->live_bytes > 0 || s->growing || s->stopped;
}

/* gpuspy's record of the segment says which request made the segment,
 * which is the block's own line when the block made it */
#define FROM_SEGMENT " (from gpuspy's record of its segment)"

/* The report's site that S's segment is gpuspy's record of: its last
 * process's site of that id; NULL when R is NULL or has none. */
static const struct rd_report_site *segment_report_site(const struct rd_report *r,
							const struct rd_report_tsite *s)
{
	const struct rd_process *p;

	if (!r || !r->site_of || !s->last_process || s->last_process > r->nprocs)
		return NULL;
	p = r->procs[s->last_process - 1];
	for (size_t k = 0; k < p->nsites; k++)
		if (p->sites[k].id == s->segment_site)
			return r->site_of[s->last_process - 1][k];
	return NULL;
}

/* S's line; R (NULL: none) names the site of a segment gpuspy recorded.
 * A block PyTorch recorded no Python frames for, in a segment whose own
 * request had none either, was allocated on a thread that runs no Python
 * (autograd's engine runs backward on its own threads): named by gpuspy's
 * native site, not said to predate the view, which it may not. */
static void put_headline(FILE *out, const struct rd_report *r, const struct rd_report_tsite *s)
{
	const struct rd_report_site *seg;

	if ((torch_merge_headline(s) < 0 || !s->name) && s->from_segment) {
		seg = segment_report_site(r, s);
		fputs("(no Python stack: in a segment gpuspy recorded from ", out);
		if (seg)
			fprintf(out, "#%zu %s", seg->number, merge_site_name(seg));
		else
			fprintf(out, "the process's site %" PRId64, s->segment_site);
		fputs(", a thread that runs no Python, such as autograd's backward)", out);
	} else if (torch_merge_headline(s) < 0 || !s->name)
		fputs("(allocated before gpuspy's PyTorch view started: no stack)", out);
	else
		fprintf(out, "%s%s", s->name, s->from_segment ? FROM_SEGMENT : "");
}

void text_print_torch_summary(FILE *out, const struct rd_report *r)
{
	const struct rd_report_torch *t = &r->torch;
	char a[32], b[32];

	if (!t->present)
		return;
	fprintf(out, "  PyTorch tensors:  %s in %" PRId64 " %s of a %s pool",
		util_human_size(t->live_bytes, a, sizeof(a)), t->live_blocks,
		t->live_blocks == 1 ? "block" : "blocks",
		util_human_size(t->reserved_bytes, b, sizeof(b)));
	/* the largest holder with a stack: blocks from before the view
	 * started name no line */
	for (size_t i = 0; i < t->nsites && listed(t->sites[i]); i++) {
		if (!t->sites[i]->nframes)
			continue;
		fputs("; most by ", out);
		put_headline(out, r, t->sites[i]);
		if (t->sites[i]->growing)
			fputs(", growing", out);
		else if (t->sites[i]->stopped)
			fputs(", grew, then stopped", out);
		break;
	}
	fputs(" (see PYTORCH TENSORS)\n", out);
}

static bool same_pyframe(const struct rd_report_frame *a, const struct rd_report_frame *b)
{
	return a->line == b->line && strcmp(a->function, b->function) == 0 &&
	       strcmp(a->file, b->file) == 0;
}

/* Whether A and B print alike: the same headline and the same user
 * frames under it (their stacks differ only in frames the text leaves
 * out), so that the text shows them as one line. */
static bool same_shown(const struct rd_report_tsite *a, const struct rd_report_tsite *b)
{
	ssize_t ha = torch_merge_headline(a), hb = torch_merge_headline(b);
	size_t i, j;

	if (a->from_segment != b->from_segment)
		return false;
	if (ha < 0 || hb < 0)
		return ha == hb;
	if (!same_pyframe(&a->frames[ha], &b->frames[hb]))
		return false;
	for (i = (size_t)ha + 1, j = (size_t)hb + 1;; i++, j++) {
		while (i < a->nframes && !a->frames[i].user)
			i++;
		while (j < b->nframes && !b->frames[j].user)
			j++;
		if (i >= a->nframes || j >= b->nframes)
			return i >= a->nframes && j >= b->nframes;
		if (!same_pyframe(&a->frames[i], &b->frames[j]))
			return false;
	}
}

/* Whether listed site I of T is the first of those that print alike. */
static bool first_shown(const struct rd_report_torch *t, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (listed(t->sites[j]) && same_shown(t->sites[j], t->sites[i]))
			return false;
	return true;
}

void text_print_torch(FILE *out, const struct rd_report *r, size_t top)
{
	const struct rd_report_torch *t = &r->torch;
	char a[32], b[32];
	size_t shown = 0, n = 0;

	if (!t->present)
		return;
	for (size_t i = 0; i < t->nsites; i++)
		n += listed(t->sites[i]) && first_shown(t, i);
	fprintf(out,
		"\nPYTORCH TENSORS (live blocks of PyTorch's caching allocator, by the "
		"Python line that allocated them; %s)\n",
		t->final ? "at exit" : "last sample of a running or killed process");
	fprintf(out, "  pool: %s reserved, %s in live blocks",
		util_human_size(t->reserved_bytes, a, sizeof(a)),
		util_human_size(t->allocated_bytes, b, sizeof(b)));
	if (t->processes > 1)
		fprintf(out, ", over %zu processes", t->processes);
	putc('\n', out);
	for (size_t i = 0; i < t->nsites && (!top || shown < top); i++) {
		const struct rd_report_tsite *s = t->sites[i];
		ssize_t h = torch_merge_headline(s);
		int64_t live, blocks, peak;
		bool growing, stopped;
		size_t stacks = 1;

		if (!listed(s) || !first_shown(t, i))
			continue;
		shown++;
		live = s->live_bytes;
		blocks = s->live_blocks;
		peak = s->peak_bytes;
		growing = s->growing;
		stopped = s->stopped;
		/* stacks that differ only in what the text leaves out (library
		 * frames) are one line here; the JSON keeps them apart */
		for (size_t k = i + 1; k < t->nsites; k++) {
			const struct rd_report_tsite *o = t->sites[k];

			if (!listed(o) || !same_shown(s, o))
				continue;
			util_add_sat(&live, o->live_bytes);
			util_add_sat(&blocks, o->live_blocks);
			util_add_sat(&peak, o->peak_bytes);
			growing |= o->growing;
			stopped |= o->stopped;
			stacks++;
		}
		fprintf(out, "%s live in %" PRId64 " %s (peak %s%s)%s\n",
			util_human_size(live, a, sizeof(a)), blocks,
			blocks == 1 ? "block" : "blocks", util_human_size(peak, b, sizeof(b)),
			stacks > 1 ? ", summed" : "",
			growing ? ", GROWING" :
			stopped ? ", grew, then stopped" :
				  "");
		if (stacks > 1)
			fprintf(out, "  (%zu stacks that differ only in library frames)\n", stacks);
		if (h < 0) {
			fputs("  ", out);
			put_headline(out, r, s);
			putc('\n', out);
			continue;
		}
		fprintf(out, "  at %s%s\n    ", s->name ? s->name : "?",
			s->from_segment ? FROM_SEGMENT : "");
		text_print_frame(out, &s->frames[h]);
		for (size_t k = (size_t)h + 1; k < s->nframes; k++) {
			if (!s->frames[k].user)
				continue;
			fputs("    ", out);
			text_print_frame(out, &s->frames[k]);
		}
	}
	if (shown < n)
		fprintf(out, "  %s %zu more (--top 0 shows all)\n", cli_glyph(CLI_ELLIPSIS),
			n - shown);
	if (!n)
		fputs("  none\n", out);
}

/* gpuspy merge.  Beyond MAX_COLUMNS processes a site's figures are summed
 * up as min, median and max: a column each would not fit a terminal. */
#define MAX_COLUMNS 8

/* A table of strings, printed with its columns aligned: each cell is
 * formatted once, so that the widths are known before the first line. */
#define TABLE_MAX_COLUMNS 16

struct table {
	size_t nrows, ncols;
	char **cells;	   /* nrows * ncols; NULL is an empty cell */
	const char *align; /* per column: 'l' or 'r' */
};

static int table_init(struct table *t, size_t nrows, size_t ncols, const char *align)
{
	t->nrows = nrows;
	t->ncols = ncols;
	t->align = align;
	t->cells = NULL;
	if (ncols > TABLE_MAX_COLUMNS)
		return -EINVAL;
	t->cells = calloc(nrows * ncols + 1, sizeof(*t->cells));
	return t->cells ? 0 : -ENOMEM;
}

static void table_free(struct table *t)
{
	for (size_t i = 0; t->cells && i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	t->cells = NULL;
}

static int table_set(struct table *t, size_t row, size_t col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int table_set(struct table *t, size_t row, size_t col, const char *fmt, ...)
{
	char **cell = &t->cells[row * t->ncols + col];
	va_list ap;
	int n;

	free(*cell);
	va_start(ap, fmt);
	n = vasprintf(cell, fmt, ap);
	va_end(ap);
	if (n < 0) {
		*cell = NULL;
		return -ENOMEM;
	}
	/* host names and the like come from the files */
	util_sanitize(*cell);
	return 0;
}

/* Each row indented by INDENT, columns two spaces apart, no trailing
 * blanks. */
static void table_print(FILE *out, const struct table *t, const char *indent)
{
	size_t width[TABLE_MAX_COLUMNS] = { 0 };

	for (size_t r = 0; r < t->nrows; r++)
		for (size_t c = 0; c < t->ncols; c++) {
			const char *s = t->cells[r * t->ncols + c];
			size_t n = s ? strlen(s) : 0;

			if (n > width[c])
				width[c] = n;
		}
	for (size_t r = 0; r < t->nrows; r++) {
		size_t last = t->ncols;
		size_t pending = 0; /* blanks owed before the next cell */

		/* the row ends after its last non-empty cell */
		while (last > 0 && !t->cells[r * t->ncols + last - 1])
			last--;
		fputs(indent, out);
		for (size_t c = 0; c < last; c++) {
			const char *s = t->cells[r * t->ncols + c];
			size_t n = s ? strlen(s) : 0;

			if (c > 0)
				pending += 2;
			if (t->align[c] == 'r')
				pending += width[c] - n;
			if (n > 0) {
				fprintf(out, "%*s%s", (int)pending, "", s);
				pending = 0;
			}
			if (t->align[c] != 'r')
				pending += width[c] - n;
		}
		putc('\n', out);
	}
}

static const char *merge_process_state(const struct rd_process *p)
{
	/* read from its last snapshot: say how it ended */
	switch (p->state) {
	case RD_STATE_KILLED:
		return p->complete ? "killed" : "killed, incomplete";
	case RD_STATE_EXECED:
		return p->complete ? "replaced by exec" : "replaced by exec, incomplete";
	case RD_STATE_RUNNING:
		return p->complete ? "running" : "running, incomplete";
	case RD_STATE_MAYBE_RUNNING:
		return p->complete ? "may be running" : "may be running, incomplete";
	case RD_STATE_UNKNOWN:
		return p->complete ? "did not exit" : "did not exit, incomplete";
	default:
		break;
	}
	if (p->partial)
		return p->complete ? "partial" : "partial, incomplete";
	return p->complete ? "complete" : "incomplete";
}

/* "leaked, peak": the metrics of which process I is the outlier of
 * SPREAD; "" when none. */
static const char *merge_outlier_of(const struct rd_report_spread *spread, size_t i, char *buf,
				    size_t size)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int m = 0; m < REPORT_METRICS; m++)
		if (spread[m].outlier == (ssize_t)i)
			n += snprintf(buf + n, size - n, "%s%s", n ? ", " : "",
				      merge_metric_name(m));
	return buf;
}

static int merge_print_processes(FILE *out, const struct rd_report *r)
{
	static const char *const header[] = {
		"#",	  "process", "host",	    "pid",    "rank",
		"leaked", "peak",    "allocations", "report", "outlier of",
	};
	struct table t;
	char a[32], name[REPORT_NAME_SIZE];
	int e;

	e = table_init(&t, r->nprocs + 1, 10, "rllrrrrrll");
	for (size_t c = 0; e == 0 && c < 10; c++)
		e = table_set(&t, 0, c, "%s", header[c]);
	for (size_t i = 0; e == 0 && i < r->nprocs; i++) {
		const struct rd_process *p = r->procs[i];
		size_t row = i + 1;

		e = table_set(&t, row, 0, "%zu", i);
		if (e == 0)
			e = table_set(&t, row, 1, "%s",
				      merge_process_name(r, i, name, sizeof(name)));
		if (e == 0)
			e = table_set(&t, row, 2, "%s", p->host);
		if (e == 0)
			e = table_set(&t, row, 3, "%" PRId64, p->pid);
		if (e == 0)
			e = p->rank >= 0 ? table_set(&t, row, 4, "%" PRId64, p->rank) :
					   table_set(&t, row, 4, "-");
		for (int m = 0; e == 0 && m < REPORT_METRICS; m++)
			e = table_set(&t, row, 5 + m, "%s",
				      merge_metric_value(m, r->totals[m][i], a, sizeof(a)));
		if (e == 0)
			e = table_set(&t, row, 8, "%s", merge_process_state(p));
		if (e == 0 && *merge_outlier_of(r->spread, i, name, sizeof(name)))
			e = table_set(&t, row, 9, "%s", name);
	}
	if (e == 0) {
		fputs("\nPROCESSES\n", out);
		table_print(out, &t, "  ");
		for (int m = 0; m < REPORT_METRICS; m++) {
			fprintf(out, "  %-13s", merge_metric_name(m));
			text_print_spread(out, r, m, &r->spread[m], r->totals[m]);
			putc('\n', out);
		}
		/* of two, each is as far from their median as the other */
		if (r->nprocs < 3)
			fputs("  (an outlier is named among 3 processes or more)\n", out);
	}
	table_free(&t);
	return e;
}

/* PER RANK (wrong_device.h, rd_ranks): each process's memory on its own
 * device, the libraries' and elsewhere, then their spread; only when some
 * process has a device of its own. */
static int merge_print_ranks(FILE *out, const struct rd_report *r)
{
	static const char *const header[] = { "#",	 "process",  "device", "on its device",
					      "library", "elsewhere" };
	const struct rd_ranks *k = r->ranks;
	char a[32], name[REPORT_NAME_SIZE];
	struct table t;
	int e;

	if (!k || !k->present)
		return 0;
	e = table_init(&t, r->nprocs + 1, 6, "rlrrrr");
	for (size_t c = 0; e == 0 && c < 6; c++)
		e = table_set(&t, 0, c, "%s", header[c]);
	for (size_t i = 0; e == 0 && i < r->nprocs; i++) {
		e = table_set(&t, i + 1, 0, "%zu", i);
		if (e == 0)
			e = table_set(&t, i + 1, 1, "%s",
				      merge_process_name(r, i, name, sizeof(name)));
		if (e == 0)
			e = k->own[i] >= 0 ? table_set(&t, i + 1, 2, "%d", k->own[i]) :
					     table_set(&t, i + 1, 2, "-");
		for (int f = 0; e == 0 && f < RD_RANK_FIGURES; f++)
			e = k->v[f][i] >= 0 ? table_set(&t, i + 1, 3 + (size_t)f, "%s",
							util_human_size(k->v[f][i], a, sizeof(a))) :
					      table_set(&t, i + 1, 3 + (size_t)f, "-");
	}
	if (e == 0) {
		fputs("\nPER RANK\n", out);
		table_print(out, &t, "  ");
		for (int f = 0; f < RD_RANK_FIGURES; f++) {
			const struct rd_rank_spread *sp = &k->spread[f];
			char b[32], c[32];

			fprintf(out, "  %-14s min %s, median %s, max %s", rd_rank_figure_name(f),
				util_human_size(sp->min, a, sizeof(a)),
				util_human_size(sp->median, b, sizeof(b)),
				util_human_size(sp->max, c, sizeof(c)));
			if (sp->outlier >= 0)
				fprintf(out, "; outlier: %s (%s)",
					merge_process_name(r, (size_t)sp->outlier, name,
							   sizeof(name)),
					util_human_size(k->v[f][sp->outlier], a, sizeof(a)));
			putc('\n', out);
		}
	}
	table_free(&t);
	return e;
}

/* The site's first line: the user's line (its headline), api, kind, in
 * how many processes, its labels; then its spreads. */
static void merge_print_site_line(FILE *out, const struct rd_report *r,
				  const struct rd_report_site *s)
{
	char a[32], b[32];

	fputs(merge_site_name(s), out);
	fputs(" by ", out);
	cli_put_clean(out, s->api);
	fprintf(out, " (%s) in %" PRId64 " of %zu %s", names_kind(s->kind), s->processes, r->nprocs,
		r->nprocs == 1 ? "process" : "processes");
	print_site_labels(out, s);
	fprintf(out, "\n  leaked spread %s, peak spread %s\n",
		util_human_size(merge_spread_width(s, REPORT_LEAKED), a, sizeof(a)),
		util_human_size(merge_spread_width(s, REPORT_PEAK), b, sizeof(b)));
}

/* What each process gave site S: a column per process when they fit,
 * else min, median and max; then the outliers. */
static int merge_print_site(FILE *out, const struct rd_report *r, const struct rd_report_site *s)
{
	char a[32], name[REPORT_NAME_SIZE];
	bool columns = r->nprocs <= MAX_COLUMNS;
	bool any = false;
	int e = 0;

	merge_print_site_line(out, r, s);
	if (columns) {
		struct table t;
		char align[MAX_COLUMNS + 2] = "l";

		memset(align + 1, 'r', r->nprocs);
		align[r->nprocs + 1] = '\0';
		e = table_init(&t, REPORT_METRICS + 1, r->nprocs + 1, align);
		for (size_t i = 0; e == 0 && i < r->nprocs; i++)
			e = table_set(&t, 0, i + 1, "%s",
				      merge_process_name(r, i, name, sizeof(name)));
		for (int m = 0; e == 0 && m < REPORT_METRICS; m++) {
			e = table_set(&t, m + 1, 0, "%s", merge_metric_name(m));
			for (size_t i = 0; e == 0 && i < r->nprocs; i++)
				e = table_set(
					&t, m + 1, i + 1, "%s",
					merge_metric_value(m, s->per_proc[m][i], a, sizeof(a)));
		}
		if (e == 0)
			table_print(out, &t, "  ");
		table_free(&t);
		if (e < 0)
			return e;
	} else {
		for (int m = 0; m < REPORT_METRICS; m++) {
			/* the outliers follow, on a line of their own */
			struct rd_report_spread sp = s->spread[m];

			sp.outlier = -1;
			fprintf(out, "  %-13s", merge_metric_name(m));
			text_print_spread(out, r, m, &sp, s->per_proc[m]);
			putc('\n', out);
		}
	}
	for (int m = 0; m < REPORT_METRICS; m++) {
		ssize_t o = s->spread[m].outlier;

		if (o < 0)
			continue;
		fprintf(out, "%s%s %s (%s)", any ? ", " : "  outlier: ", merge_metric_name(m),
			merge_process_name(r, o, name, sizeof(name)),
			merge_metric_value(m, s->per_proc[m][o], a, sizeof(a)));
		any = true;
	}
	fputs(any ? "\n" : "  outlier: none\n", out);
	return 0;
}

int text_print_merge(FILE *out, const struct rd_report *r, struct rd_report_site **order,
		     size_t top)
{
	size_t n = top && top < r->nsites ? top : r->nsites;
	int e;

	fprintf(out, "gpuspy merge: %zu %s, %zu call %s\n", r->nprocs,
		r->nprocs == 1 ? "process" : "processes", r->nsites,
		r->nsites == 1 ? "site" : "sites");
	text_print_unreadable(out, r, "");
	e = merge_print_processes(out, r);
	if (e < 0)
		return e;
	e = merge_print_ranks(out, r);
	if (e < 0)
		return e;
	print_wrong(out, r, top);
	fputs("\nCALL SITES BY SPREAD", out);
	if (n < r->nsites)
		fprintf(out, " (top %zu of %zu call sites)", n, r->nsites);
	fputs("\n", out);
	if (r->nsites == 0)
		fputs("  none\n", out);
	for (size_t i = 0; i < n && e == 0; i++)
		e = merge_print_site(out, r, order[i]);
	if (e < 0)
		return e;
	return ferror(out) ? -EIO : 0;
}

/* gpuspy diff */

/* "+1.0 MiB", "-512 B", "0" */
static const char *signed_size(int64_t v, char *buf, size_t len)
{
	char h[32];

	if (v == 0)
		return "0";
	util_human_size(diff_abs_sat(v), h, sizeof(h));
	snprintf(buf, len, "%c%s", v > 0 ? '+' : '-', h);
	return buf;
}

static void print_value(FILE *out, const struct diff_setting *v, int width)
{
	char buf[64];
	const char *s = !v->value ? "-" : v->distinct > 1 ? "(several values)" : v->value;
	size_t n = strlen(s);

	/* long values (a command line) are cut: the JSON has them whole */
	if (width > 0 && n > (size_t)width) {
		int keep = width - (cli_utf8() ? 1 : 3);

		snprintf(buf, sizeof(buf), "%.*s%s",
			 util_utf8_prefix(s, keep < 0  ? 0 :
					     keep < 60 ? (size_t)keep :
							 60),
			 s, cli_glyph(CLI_ELLIPSIS));
		s = buf;
	}
	cli_put_clean(out, s);
	if (width > 0)
		for (int pad = width - (int)(n > (size_t)width ? (size_t)width : n); pad > 0; pad--)
			putc(' ', out);
}

static void print_headline(FILE *out, const struct rd_report_site *s)
{
	fputs(merge_site_name(s), out);
	if (s->library)
		fprintf(out, " [library: %s]", s->library);
	if (s->pool)
		fprintf(out, " [pool segment: %s]", s->pool);
}

/* A function name, cut to fit a line: C++ template names run to pages. */
static void put_name(FILE *out, const char *name)
{
	char buf[72];

	if (strlen(name) < sizeof(buf)) {
		cli_put_clean(out, name);
		return;
	}
	snprintf(buf, sizeof(buf), "%.*s%s", util_utf8_prefix(name, sizeof(buf) - 4), name,
		 cli_glyph(CLI_ELLIPSIS));
	cli_put_clean(out, buf);
}

/* The innermost frame under the headline that is not noise, a Python one
 * (the library function the user called) before any native one; -1. */
static ssize_t via_frame(const struct rd_report_site *s, ssize_t h)
{
	for (int pass = 0; pass < 2; pass++)
		for (ssize_t i = 0; i < h; i++) {
			const struct rd_report_frame *f = &s->frames[i];

			if (f->noise == NOISE_NONE && f->function && (pass == 1 || f->python))
				return i;
		}
	return -1;
}

/* Where a site differs from its neighbours with the same headline (the
 * innermost frame that is not noise, when it is not the headline), then
 * the headline's callers that are the user's: up to three, in one line. */
static void print_callers(FILE *out, const struct rd_report_site *s)
{
	ssize_t h = merge_site_headline(s), v;
	int shown = 0;

	if (h < 0)
		return;
	v = via_frame(s, h);
	if (v >= 0) {
		const struct rd_report_frame *f = &s->frames[v];

		fputs("      via ", out);
		put_name(out, f->function);
		if (f->file) {
			const char *b = strrchr(f->file, '/');

			fputs(" (", out);
			cli_put_clean(out, b ? b + 1 : f->file);
			if (f->line > 0)
				fprintf(out, ":%" PRId64, f->line);
			putc(')', out);
		} else if (f->module) {
			fputs(" (", out);
			cli_put_clean(out, f->module);
			putc(')', out);
		}
		putc('\n', out);
	}
	for (size_t i = (size_t)h + 1; i < s->nframes && shown < 3; i++) {
		const struct rd_report_frame *f = &s->frames[i];

		if (f->noise != NOISE_NONE || !f->function || (f->python && !f->user))
			continue;
		if (shown)
			fprintf(out, " %s ", cli_glyph(CLI_LARROW));
		else
			fputs("      called from ", out);
		put_name(out, f->function);
		shown++;
		if (!f->python && strcmp(f->function, "main") == 0)
			break;
	}
	if (shown)
		putc('\n', out);
}

static void print_change(FILE *out, const char *what, int64_t o, int64_t n, bool bytes)
{
	char a[32], b[32], c[40];

	if (bytes)
		fprintf(out, "%s %s %s %s (%s)", what, util_human_size(o, a, sizeof(a)),
			cli_glyph(CLI_RARROW), util_human_size(n, b, sizeof(b)),
			signed_size(diff_sub_sat(n, o), c, sizeof(c)));
	else
		fprintf(out, "%s %" PRId64 " %s %" PRId64 " (%+" PRId64 ")", what, o,
			cli_glyph(CLI_RARROW), n, diff_sub_sat(n, o));
}

/* ", growth +1.0 MiB/min \u2192 +2.0 MiB/min" when either side grows
 * (a side whose rate the history does not tell: "?"). */
static void print_growth_change(FILE *out, const struct diff *d, const struct rd_report_site *o,
				const struct rd_report_site *n)
{
	double rate[2];
	bool known[2] = { growth_rate_of(&d->side[0].rep, o, &rate[0]),
			  growth_rate_of(&d->side[1].rep, n, &rate[1]) };

	const struct rd_report_site *side[2] = { o, n };

	if ((!(o && (o->growing || o->stopped)) && !(n && (n->growing || n->stopped))) ||
	    (!known[0] && !known[1]))
		return;
	fputs(", growth ", out);
	for (int k = 0; k < 2; k++) {
		if (k)
			fprintf(out, " %s ", cli_glyph(CLI_RARROW));
		/* grew, then stopped: no rate now, and said so */
		if (side[k] && side[k]->stopped)
			fputs("stopped", out);
		else if (known[k])
			fprintf(out, "%+.1f MiB/min", rate[k] * 60 / (1024.0 * 1024));
		else
			fputs("?", out);
	}
}

static void print_total(FILE *out, const char *name, int64_t o, int64_t n)
{
	char a[32], b[32], c[40];

	fprintf(out, "  %-24s %12s %12s %14s\n", name, util_human_size(o, a, sizeof(a)),
		util_human_size(n, b, sizeof(b)), signed_size(diff_sub_sat(n, o), c, sizeof(c)));
}

/* The PyTorch views' lines that changed by the threshold or more. */
static void print_torch(FILE *out, const struct diff *d, size_t top)
{
	size_t shown = 0, hidden = 0;
	char a[32], b[40];

	fprintf(out, "\nPYTORCH TENSORS CHANGED (live blocks at exit by Python line; %s or more)\n",
		util_human_size(d->threshold, a, sizeof(a)));
	for (size_t i = 0; i < d->ntrows; i++) {
		const struct diff_trow *w = &d->trows[i];
		const struct rd_report_tsite *t = w->site[1] ? w->site[1] : w->site[0];
		int64_t delta = diff_sub_sat(w->live[1], w->live[0]);
		ssize_t h = torch_merge_headline(t);

		if (w->status == DIFF_SAME || diff_abs_sat(delta) < d->threshold || delta == 0 ||
		    (top && shown >= top)) {
			hidden += w->status != DIFF_SAME;
			continue;
		}
		shown++;
		fprintf(out, "\n%-9s %s  ",
			w->status == DIFF_NEW	   ? "NEW" :
			w->status == DIFF_VANISHED ? "VANISHED" :
						     "CHANGED",
			signed_size(delta, b, sizeof(b)));
		if (h < 0) {
			fputs("(allocated before the PyTorch view started)", out);
		} else {
			put_headline(out, NULL, t);
		}
		fputs("\n      ", out);
		print_change(out, "live", w->live[0], w->live[1], true);
		fputs(", ", out);
		print_change(out, "peak in the samples", w->peak[0], w->peak[1], true);
		putc('\n', out);
	}
	if (!shown)
		fputs("  none\n", out);
	if (hidden)
		fprintf(out, "\n%zu other %s changed less or %s beyond --top\n", hidden,
			hidden == 1 ? "line" : "lines", hidden == 1 ? "is" : "are");
}

int text_print_diff(const struct diff *d, const struct diff_setting_row *set, size_t nset,
		    const struct diff_total *tot, size_t ntot, size_t top, FILE *out)
{
	const struct rd_report *ro = &d->side[0].rep, *rn = &d->side[1].rep;
	size_t shown = 0, hidden = 0, listed = 0;
	char a[32], b[40];

	fputs("gpuspy diff:", out);
	for (int k = 0; k < 2; k++) {
		const struct diff_side *s = &d->side[k];

		if (k)
			fprintf(out, "  %s ", cli_glyph(CLI_RARROW));
		fprintf(out, " %s ", s->name);
		for (size_t i = 0; i < s->npaths; i++) {
			if (i)
				fputs(", ", out);
			cli_put_clean(out, s->paths[i]);
		}
		fprintf(out, " (%zu %s)", s->list.n, s->list.n == 1 ? "process" : "processes");
	}
	putc('\n', out);
	text_print_unreadable(out, ro, "OLD: ");
	text_print_unreadable(out, rn, "NEW: ");

	fprintf(out, "\nSETTINGS%*s%-32s %s\n", 27 - 8, "", "OLD", "NEW");
	for (size_t i = 0; i < nset; i++) {
		fprintf(out, "%c ", set[i].differs ? '*' : ' ');
		print_value(out, &(struct diff_setting){ .value = set[i].name, .distinct = 1 }, 24);
		putc(' ', out);
		print_value(out, &set[i].v[0], 32);
		putc(' ', out);
		print_value(out, &set[i].v[1], 0);
		putc('\n', out);
	}
	if (nset)
		fputs("  (* differs)\n", out);

	fprintf(out, "\nTOTALS%*s%12s %12s %14s\n", 26 - 6, "", "OLD", "NEW", "CHANGE");
	{
		/* a side of processes that did not exit has no leaks yet,
		 * only what was live at their last snapshot */
		enum moment mo = report_moment(ro), mn = report_moment(rn);

		print_total(out,
			    mo == AT_EXIT && mn == AT_EXIT	   ? "leaked at exit" :
			    mo == AT_SNAPSHOT && mn == AT_SNAPSHOT ? "live at last snapshot" :
								     "leaked or live at end",
			    ro->leaked_bytes, rn->leaked_bytes);
	}
	print_total(out, "peak", ro->peak_bytes, rn->peak_bytes);
	if (d->at_label) {
		char name[64];

		snprintf(name, sizeof(name), "live at \"%.*s\"", util_utf8_prefix(d->at_label, 40),
			 d->at_label);
		util_sanitize(name);
		print_total(out, name, d->side[0].at_total, d->side[1].at_total);
	}
	for (size_t i = 0; i < ntot; i++) {
		char name[64];

		if (tot[i].device < 0)
			snprintf(name, sizeof(name), "unknown device, %s", tot[i].name);
		else
			snprintf(name, sizeof(name), "device %" PRId64 ", %s", tot[i].device,
				 tot[i].name);
		print_total(out, name, tot[i].v[0], tot[i].v[1]);
	}

	fprintf(out, "\nCHANGED CALL SITES (by size of change; %s %s or more",
		d->at_label ? "live at the mark changed by" : "leaked or peak changed by",
		util_human_size(d->threshold, a, sizeof(a)));
	fputs(")\n", out);
	for (size_t i = 0; i < d->nrows; i++) {
		const struct diff_row *w = &d->rows[i];
		const struct rd_report_site *s = diff_row_site(w);
		const struct rd_report_site *o = w->site[0], *n = w->site[1];

		if (w->status == DIFF_SAME || w->size < d->threshold ||
		    (w->size == 0 && w->status == DIFF_CHANGED)) {
			hidden += w->status != DIFF_SAME;
			continue;
		}
		if (top && listed >= top) {
			hidden++;
			continue;
		}
		listed++;
		shown++;
		fprintf(out, "\n%-9s %s  ",
			w->status == DIFF_NEW	   ? "NEW" :
			w->status == DIFF_VANISHED ? "VANISHED" :
						     "CHANGED",
			signed_size(d->at_label ?
					    w->d_at :
					    (diff_abs_sat(w->d_leaked) >= diff_abs_sat(w->d_peak) ?
						     w->d_leaked :
						     w->d_peak),
				    b, sizeof(b)));
		print_headline(out, s);
		fputs("\n     ", out);
		{
			/* only what either side has: a new site's "leaked 0 B ->
			 * 0 B" would be noise */
			const int64_t v[4][2] = {
				{ w->at[0], w->at[1] },
				{ o ? o->c.live_bytes : 0, n ? n->c.live_bytes : 0 },
				{ o ? o->c.peak_bytes : 0, n ? n->c.peak_bytes : 0 },
				{ o ? o->c.allocations : 0, n ? n->c.allocations : 0 },
			};
			static const char *const what[4] = { "at the mark", "leaked", "peak",
							     "allocations" };
			bool first = true;

			for (int m = d->at_label ? 0 : 1; m < 4; m++) {
				if (!v[m][0] && !v[m][1])
					continue;
				fputs(first ? " " : ", ", out);
				print_change(out, what[m], v[m][0], v[m][1], m < 3);
				first = false;
			}
		}
		print_growth_change(out, d, o, n);
		fputs("\n      by ", out);
		cli_put_clean(out, s->api);
		fprintf(out, " (%s)\n", names_kind(s->kind));
		print_callers(out, s);
	}
	if (!shown)
		fputs("  none\n", out);
	if (hidden) {
		fprintf(out, "\n%zu other %s changed less or %s beyond --top", hidden,
			hidden == 1 ? "site" : "sites", hidden == 1 ? "is" : "are");
		fputs(" (all are in --format json)\n", out);
	}
	if (d->torch)
		print_torch(out, d, top);
	if (d->fail_limit >= 0) {
		util_human_size(d->fail_limit, a, sizeof(a));
		if (d->failed)
			fprintf(out, "\nFAIL: %zu %s grew by more than %s (--fail-on-growth)\n",
				d->failed, d->failed == 1 ? "site" : "sites", a);
		else
			fprintf(out, "\nOK: no site grew by more than %s\n", a);
	}
	return ferror(out) ? -EIO : 0;
}

void text_print_unreadable(FILE *out, const struct rd_report *r, const char *who)
{
	size_t total = r->nprocs + r->nunreadable;

	if (r->nunreadable == 0)
		return;
	fprintf(out, "%s%zu of %zu %s could not be read, left out of every figure:\n", who,
		r->nunreadable, total, total == 1 ? "process" : "processes");
	for (size_t i = 0; i < r->nunreadable; i++) {
		fputs("  ", out);
		cli_put_clean(out, r->unreadable[i].path);
		fputs(": ", out);
		/* sanitized when it was made */
		fputs(r->unreadable[i].reason, out);
		putc('\n', out);
	}
}

const char *commits_label(const struct lineup_run *r, char *buf, size_t size)
{
	snprintf(buf, size, "%.12s", r->commit ? r->commit : "-");
	return buf;
}

int text_print_commits(const struct commits_view *v, FILE *out)
{
	char a[32], b[32], c[40], label[16], when[32];

	fprintf(out, "gpuspy commits: %zu %s, %s\n\n", v->nruns, v->nruns == 1 ? "run" : "runs",
		strcmp(v->order, "given") == 0 ? "in the order given" :
		strcmp(v->order, "time") == 0  ? "by start time" :
						 "by commit date (git)");
	fprintf(out, "  %-3s %-12s  %-19s  %12s %12s %14s\n", "#", "COMMIT", "STARTED (UTC)",
		"LEAKED", "PEAK", "PEAK CHANGE");
	for (size_t i = 0; i < v->nruns; i++) {
		const struct lineup_run *r = &v->runs[i];
		time_t t = (time_t)r->start_time;
		struct tm tm;

		if (r->start_time < 0 || !gmtime_r(&t, &tm) ||
		    !strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm))
			snprintf(when, sizeof(when), "?");
		fprintf(out, "  %-3zu ", i + 1);
		commits_label(r, label, sizeof(label));
		cli_put_clean(out, label);
		fprintf(out, "%*s  %-19s  %12s %12s", (int)(12 - strlen(label)), "", when,
			util_human_size(r->leaked, a, sizeof(a)),
			util_human_size(r->peak, b, sizeof(b)));
		if (i > 0)
			fprintf(out, " %14s",
				signed_size(diff_sub_sat(r->peak, v->runs[i - 1].peak), c,
					    sizeof(c)));
		putc('\n', out);
	}
	if (v->ntop) {
		fprintf(out,
			"\nTOP SITES BY PEAK (%zu; each run's peak of the site, '-' where it has "
			"none)\n",
			v->ntop);
		for (size_t i = 0; i < v->nruns; i++) {
			char n[24];

			snprintf(n, sizeof(n), "#%zu", i + 1);
			fprintf(out, " %11s", n);
		}
		putc('\n', out);
		for (size_t k = 0; k < v->ntop; k++) {
			for (size_t i = 0; i < v->nruns; i++) {
				int64_t p = lineup_site_peak(&v->runs[i], v->top[k].key);

				fprintf(out, " %11s",
					p >= 0 ? util_human_size(p, a, sizeof(a)) : "-");
			}
			fputs("  ", out);
			cli_put_clean(out, v->top[k].name);
			putc('\n', out);
		}
	}
	fputs("\nRUNS\n", out);
	for (size_t i = 0; i < v->nruns; i++) {
		const struct lineup_run *r = &v->runs[i];

		fprintf(out, "  #%-3zu ", i + 1);
		cli_put_clean(out, r->path);
		fprintf(out, " (%zu %s", r->nprocs, r->nprocs == 1 ? "process" : "processes");
		if (r->commit) {
			fputs(", commit ", out);
			cli_put_clean(out, r->commit);
			fputs(" from ", out);
			cli_put_clean(out, r->commit_from);
		} else {
			fputs(", no commit recorded", out);
		}
		if (r->pools)
			fprintf(out, ", %s more held by the pools at exit",
				util_human_size(r->pools, a, sizeof(a)));
		fputs(")\n", out);
	}
	return ferror(out) ? -EIO : 0;
}
