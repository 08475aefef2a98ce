/* SPDX-License-Identifier: MIT */
/*
 * The output formats, one row each (format.h).  A row says what its
 * printer needs and format_print builds exactly that, so a printer only
 * prints.  Everything is read and built before a byte is written: a bad
 * input ends the command with one line and nothing on stdout.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "doors.h"
#include "format.h"
#include "growth_view.h"
#include "load_history.h"
#include "load_live.h"
#include "names.h"
#include "print.h"
#include "util.h"

/*
 * One line on stderr per process whose outside views show memory no door
 * saw: NVML's figure for it beyond what gpuspy tracked plus the graph
 * pool's slack and an allowance for the CUDA context and libraries, or
 * the driver's graph memory beyond the graph memory gpuspy saw.  Stderr,
 * so that JSON on stdout stays a document.  The report's text and JSON.
 */
static void warn_missed_doors(const struct rd_process_list *list)
{
	char a[32], b[32], c[32], d[32], e[32];

	for (size_t i = 0; i < list->n; i++) {
		const struct rd_process *p = list->items[i];
		struct rd_doors_gap g;

		rd_doors_gap(p, &g);
		if (g.nvml_gap) {
			fputs("gpuspy report: warning: ", stderr);
			cli_put_clean(stderr, p->path);
			fprintf(stderr,
				": NVML says the process holds %s on %d GPU%s, gpuspy tracked %s "
				"(allowed beside it: %s for the CUDA context and libraries, %s of "
				"graph pool): %s seen through no door gpuspy hooks\n",
				util_human_size(g.nvml_bytes, a, sizeof(a)), g.ngpus,
				g.ngpus == 1 ? "" : "s",
				util_human_size(g.tracked_bytes, b, sizeof(b)),
				util_human_size(g.allowance, c, sizeof(c)),
				util_human_size(g.pool_slack, d, sizeof(d)),
				util_human_size(g.nvml_bytes - g.tracked_bytes - g.pool_slack -
							g.allowance,
						e, sizeof(e)));
		}
		if (g.graph_gap) {
			fputs("gpuspy report: warning: ", stderr);
			cli_put_clean(stderr, p->path);
			fprintf(stderr,
				": the driver says CUDA graphs use %s, gpuspy saw %s of graph "
				"memory: graph memory made through a door gpuspy does not hook\n",
				util_human_size(g.graph_driver_bytes, a, sizeof(a)),
				util_human_size(g.graph_tracked_bytes, b, sizeof(b)));
		}
	}
}

/* --format text: the sections asked for, and what was live at the
 * moment asked for beside them */
static int print_text(const struct format_input *in)
{
	struct cli_loaded *l = in->l;
	int e;

	warn_missed_doors(&l->list);
	l->rep.moment = in->stacks;
	e = text_print_report(&l->rep, &l->list, in->out,
			      &(struct text_report_opts){ .top = l->top,
							  .sections = l->text_sections,
							  .paths = l->paths,
							  .npaths = l->npaths });
	l->rep.moment = NULL;
	return e;
}

static int print_json(const struct format_input *in)
{
	struct cli_loaded *l = in->l;
	int e;

	warn_missed_doors(&l->list);
	l->rep.moment = in->stacks;
	e = json_print_report(&l->rep, &l->list, in->out, l->top);
	l->rep.moment = NULL;
	return e;
}

/* A process without a history prints nothing; when every history there
 * was is refused, nothing is left: the refusals, exit status 2. */
static int print_csv(const struct format_input *in)
{
	size_t present = 0, refused = 0;

	for (size_t i = 0; i < in->l->rep.nprocs; i++) {
		present += in->history[i].present;
		refused += in->history[i].refused;
	}
	if (refused && !present) {
		cli_notices_say(true);
		return EXIT_USAGE;
	}
	return csv_print_history(&in->l->rep, in->history, in->out);
}

static int print_pprof(const struct format_input *in)
{
	return pprof_print(&in->l->rep, in->stacks, in->out);
}

static int print_perfetto(const struct format_input *in)
{
	return perfetto_print(&in->l->rep, in->timeline, in->out);
}

static int print_collapsed(const struct format_input *in)
{
	return collapsed_print(&in->l->rep, in->stacks, in->out);
}

/* The page builds every moment itself and opens on the one asked for
 * (its stacks were built only to know that it exists). */
static int print_html(const struct format_input *in)
{
	const struct cli_loaded *l = in->l;

	return html_print(&l->rep, &l->list, in->timeline, l->at, l->peak, l->top, in->out);
}

static int print_tensorboard(const struct format_input *in)
{
	const struct cli_loaded *l = in->l;

	return tensorboard_export(&l->rep, in->history, in->dest,
				  l->by_mark ? TB_STEP_MARK : TB_STEP_TIME, l->top);
}

static int print_memviz(const struct format_input *in)
{
	return memviz_export(&in->l->rep, in->live, in->dest);
}

static int diff_json(const struct diff *d, const struct diff_setting_row *set, size_t nset,
		     const struct diff_total *tot, size_t ntot, size_t top, FILE *out)
{
	return json_print_diff(d, set, nset, tot, ntot, out);
}

#define EVERY_MOMENT (FORMAT_AT_EXIT | FORMAT_AT_MARK | FORMAT_AT_PEAK)

/* The formats, the default first.  Those with an ARG are gpuspy
 * export's options; the others, gpuspy report's --format. */
static const struct format formats[] = {
	{
		.name = "text",
		.help = "the report, for people (the default)",
		.needs = FORMAT_GROWTH | FORMAT_MOMENT,
		.moments = EVERY_MOMENT,
		.people = true,
		.print = print_text,
		.merge = text_print_merge,
		.diff = text_print_diff,
	},
	{
		.name = "json",
		.help = "the report, for programs (" GS_FORMAT_REPORT ")",
		.needs = FORMAT_GROWTH | FORMAT_MOMENT,
		.moments = EVERY_MOMENT,
		.all_sites = true,
		.print = print_json,
		.merge = json_print_merge,
		.diff = diff_json,
	},
	{
		.name = "csv",
		.help = "each process's history of live bytes",
		.needs = FORMAT_HISTORY,
		.print = print_csv,
	},
	{
		.name = "pprof",
		.help = "live stacks, gzip'ed profile.proto (pprof)",
		.needs = FORMAT_STACKS,
		.moments = EVERY_MOMENT,
		.print = print_pprof,
	},
	{
		.name = "perfetto",
		.help = "the run as trace-event JSON (Perfetto UI)",
		.needs = FORMAT_TIMELINE,
		.print = print_perfetto,
	},
	{
		.name = "collapsed",
		.help = "live stacks, folded (flame graphs)",
		.needs = FORMAT_STACKS,
		.moments = EVERY_MOMENT,
		.print = print_collapsed,
	},
	{
		.name = "html",
		.help = "one self-contained page, for a browser",
		/* the sparklines of the growing sites, from the histories */
		.needs = FORMAT_TIMELINE | FORMAT_GROWTH | FORMAT_MOMENT,
		.moments = EVERY_MOMENT,
		.print = print_html,
	},
	{
		.name = "tensorboard",
		.arg = "LOGDIR",
		.help = "TensorBoard scalars: one event file per process in\n"
			"LOGDIR/rank-R (or LOGDIR/HOST-PID), made when missing;\n"
			"tags device/D, sites/FUNCTION (FILE:LINE), sites/other,\n"
			"pool/reserved/D, pool/allocated/D, nvml/I, in bytes\n",
		.needs = FORMAT_HISTORY,
		.print = print_tensorboard,
	},
	{
		.name = "memory-viz",
		.arg = "FILE",
		.help = "PyTorch's memory viewer (pytorch.org/memory_viz,\n"
			"torch.cuda._memory_viz): one process's live\n"
			"allocations at exit as segments, with the trace of its\n"
			"last allocations and frees under GPUSPY_TRACE=N\n",
		.needs = FORMAT_LIVE,
		.print = print_memviz,
	},
};
#define NFORMATS (sizeof(formats) / sizeof(formats[0]))

/* Whether F is a format of command CMD. */
static bool format_of(const struct format *f, const char *cmd)
{
	if (strcmp(cmd, "report") == 0)
		return f->print && !f->arg;
	if (strcmp(cmd, "export") == 0)
		return f->print && f->arg;
	if (strcmp(cmd, "merge") == 0)
		return f->merge;
	if (strcmp(cmd, "diff") == 0)
		return f->diff;
	return false;
}

const struct format *format_find(const char *cmd, const char *name)
{
	for (size_t i = 0; i < NFORMATS; i++)
		if (format_of(&formats[i], cmd) && strcmp(formats[i].name, name) == 0)
			return &formats[i];
	return NULL;
}

const struct format *format_default(const char *cmd)
{
	for (size_t i = 0; i < NFORMATS; i++)
		if (format_of(&formats[i], cmd))
			return &formats[i];
	return NULL;
}

int format_check(const char *cmd, const struct format *f, const struct cli_loaded *l)
{
	char what[256];
	size_t n = 0, k = 0, len;
	bool report = f->arg == NULL;

	if (l->at && l->peak)
		return cli_usage_error(cmd, "--at and --peak choose one moment, not both", NULL);
	if ((!l->at || (f->moments & FORMAT_AT_MARK)) &&
	    (!l->peak || (f->moments & FORMAT_AT_PEAK)))
		return -1;
	/* "--at and --peak go with --format text, json or html" */
	for (size_t i = 0; i < NFORMATS; i++)
		n += format_of(&formats[i], cmd) &&
		     (formats[i].moments & (FORMAT_AT_MARK | FORMAT_AT_PEAK));
	len = (size_t)snprintf(what, sizeof(what), "--at and --peak go with %s",
			       report ? "--format " : "");
	for (size_t i = 0; i < NFORMATS && len < sizeof(what); i++) {
		const struct format *g = &formats[i];

		if (!format_of(g, cmd) || !(g->moments & (FORMAT_AT_MARK | FORMAT_AT_PEAK)))
			continue;
		k++;
		len += (size_t)snprintf(what + len, sizeof(what) - len, "%s%s%s",
					k == 1 ? "" : (k == n ? " or " : ", "), report ? "" : "--",
					g->name);
	}
	if (n == 0)
		snprintf(what, sizeof(what), "--at and --peak go with no format of %s", cmd);
	return cli_usage_error(cmd, what, NULL);
}

int format_print(struct cli_loaded *l, const char *dest)
{
	const struct format *f = l->format;
	struct rd_error err = { .msg = "" };
	struct rd_history *h = NULL;
	struct rd_live *live = NULL;
	struct rd_timeline tl = { 0 };
	struct rd_growth_view growth = { 0 };
	struct rd_stacks st = { 0 };
	struct format_input in = { .l = l, .dest = dest, .out = stdout };
	int e = 0;

	/* in the order of the reading library's notices: the histories,
	 * what is drawn from them, then the stacks */
	if (f->needs & FORMAT_HISTORY) {
		h = calloc(l->rep.nprocs + 1, sizeof(*h));
		e = h ? 0 : -ENOMEM;
		for (size_t i = 0; i < l->rep.nprocs && e == 0; i++)
			e = load_history(l->rep.procs[i], &h[i], &err);
		in.history = h;
	}
	if (e == 0 && (f->needs & FORMAT_LIVE)) {
		live = calloc(l->rep.nprocs + 1, sizeof(*live));
		e = live ? 0 : -ENOMEM;
		for (size_t i = 0; i < l->rep.nprocs && e == 0; i++)
			e = load_live(l->rep.procs[i], &live[i], &err);
		in.live = live;
	}
	if (e == 0 && (f->needs & FORMAT_TIMELINE)) {
		e = timeline_load(&l->rep, &tl, &err);
		in.timeline = &tl;
	}
	if (e == 0 && (f->needs & FORMAT_GROWTH)) {
		e = growth_view_load(&l->rep, &growth, &err);
		l->rep.growth = &growth;
	}
	if (e == 0 &&
	    ((f->needs & FORMAT_STACKS) || ((f->needs & FORMAT_MOMENT) && (l->at || l->peak)))) {
		enum stacks_state s = l->at ? STACKS_MARK : l->peak ? STACKS_PEAK : STACKS_EXIT;

		e = stacks_build(&l->rep, s, l->at, &st, &err);
		in.stacks = &st;
	}
	if (e < 0) {
		cli_print_error(&err, e);
		e = e == -ENOMEM ? EXIT_FAILURE_OTHER : EXIT_USAGE;
	} else {
		e = f->print(&in);
	}
	l->rep.growth = NULL;
	stacks_clear(&st);
	growth_view_clear(&growth);
	timeline_clear(&tl);
	for (size_t i = 0; h && i < l->rep.nprocs; i++)
		rd_history_clear(&h[i]);
	free(h);
	for (size_t i = 0; live && i < l->rep.nprocs; i++)
		rd_live_clear(&live[i]);
	free(live);
	return e;
}

/* The longest name of CMD's formats. */
static size_t names_width(const char *cmd)
{
	size_t w = 0;

	for (size_t i = 0; i < NFORMATS; i++)
		if (format_of(&formats[i], cmd) && strlen(formats[i].name) > w)
			w = strlen(formats[i].name);
	return w;
}

/* One marker of format_usage, KIND:CMD (LEN bytes): its text on OUT;
 * false when it is none. */
static bool usage_marker(FILE *out, const char *m, size_t len)
{
	static const char *const kinds[] = { "names", "list", "options", "help" };
	const char *colon = memchr(m, ':', len);
	char cmd[16];
	size_t kind, k = 0;

	if (!colon || (size_t)(m + len - colon - 1) >= sizeof(cmd))
		return false;
	for (kind = 0; kind < sizeof(kinds) / sizeof(kinds[0]); kind++)
		if (strlen(kinds[kind]) == (size_t)(colon - m) &&
		    memcmp(kinds[kind], m, (size_t)(colon - m)) == 0)
			break;
	if (kind == sizeof(kinds) / sizeof(kinds[0]))
		return false;
	memcpy(cmd, colon + 1, (size_t)(m + len - colon - 1));
	cmd[m + len - colon - 1] = '\0';
	if (!format_default(cmd))
		return false;
	for (size_t i = 0; i < NFORMATS; i++) {
		const struct format *f = &formats[i];

		if (!format_of(f, cmd))
			continue;
		switch (kind) {
		case 0: /* text|json */
			fprintf(out, "%s%s", k++ ? "|" : "", f->name);
			break;
		case 1: /* "                       text       the report, ..." */
			fprintf(out, "%23s%-*s  %s\n", "", (int)names_width(cmd), f->name, f->help);
			break;
		case 2: /* --tensorboard LOGDIR|--other FILE */
			fprintf(out, "%s--%s %s", k++ ? "|" : "", f->name, f->arg ? f->arg : "");
			break;
		default: /* the option, then its description, a line each */
			fprintf(out, "      --%s %s\n", f->name, f->arg ? f->arg : "");
			for (const char *p = f->help; *p;) {
				const char *nl = strchr(p, '\n');
				size_t n = nl ? (size_t)(nl - p) : strlen(p);

				fprintf(out, "%21s%.*s\n", "", (int)n, p);
				p += n + (nl != NULL);
			}
			break;
		}
	}
	return true;
}

int format_usage(FILE *out, const char *usage)
{
	const char *p = usage;

	while (*p) {
		const char *at = strchr(p, '@'), *end = at ? strchr(at + 1, '@') : NULL;

		if (!end) {
			fputs(p, out);
			break;
		}
		fwrite(p, 1, (size_t)(at - p), out);
		if (usage_marker(out, at + 1, (size_t)(end - at - 1))) {
			p = end + 1;
		} else {
			putc('@', out);
			p = at + 1;
		}
	}
	return ferror(out) ? -EIO : 0;
}

void format_usage_string(char *buf, size_t size, const char *usage)
{
	FILE *m = fmemopen(buf, size, "w");

	if (size)
		buf[0] = '\0';
	if (!m)
		return;
	/* the last byte stays for the '\0' fclose writes */
	setvbuf(m, NULL, _IONBF, 0);
	format_usage(m, usage);
	fclose(m);
	buf[size - 1] = '\0';
}

struct option *format_options(const char *cmd, const struct option *own)
{
	size_t n = 0, nown = 0;
	struct option *o;

	while (own[nown].name)
		nown++;
	o = calloc(NFORMATS + nown + 1, sizeof(*o));
	if (!o)
		return NULL;
	for (size_t i = 0; i < NFORMATS; i++)
		if (format_of(&formats[i], cmd))
			o[n++] = (struct option){ formats[i].name, required_argument, NULL,
						  FORMAT_OPTION + (int)i };
	memcpy(o + n, own, (nown + 1) * sizeof(*o));
	return o;
}

const struct format *format_option(int c)
{
	if (c < FORMAT_OPTION || (size_t)(c - FORMAT_OPTION) >= NFORMATS)
		return NULL;
	return &formats[c - FORMAT_OPTION];
}
