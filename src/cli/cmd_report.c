/* SPDX-License-Identifier: MIT */
/* gpuspy report: load, symbolize, merge, print. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "format.h"
#include "names.h"
#include "print.h"
#include "util.h"

#define DEFAULT_TOP 10

static const char usage[] =
	"Usage: gpuspy report [--format FMT] [--at LABEL|--peak] [--top N] [--sections LIST]\n"
	"                     [--fail-on-leak SIZE [--include-pools]] [--strict]\n"
	"                     [PATH...]\n"
	"\n"
	"Summarize gpuspy reports.  Each PATH is a run directory (as written by\n"
	"'gpuspy run'), one of its process directories, or a report file\n"
	"(report.json, snapshot.json, snapshot-N.json, or an out-of-memory\n"
	"post-mortem oom-N.json); ./gpuspy-out stands for its latest run.\n"
	"Without PATH: $GPUSPY_OUTPUT_DIR, else the latest run of ./gpuspy-out.\n"
	"\n"
	"  -f, --format FMT   the output format, one of:\n"
	"@list:report@"
	"      --at LABEL     what was live at each process's last mark LABEL (text and\n"
	"                     json: a list beside the rest; pprof, collapsed, html:\n"
	"                     the stacks of that moment)\n"
	"      --peak         the same at each process's peak\n"
	"  -n, --top N        call sites per list (text: default 10; json: all);\n"
	"                     0 means all\n"
	"  -s, --sections L   text: only the sections of the comma-separated list L:\n"
	"                     summary, oom, growth, torch, processes, leaks, pinned,\n"
	"                     peak, allocations, sites (the stacks), totals, next\n"
	"                     (default: all)\n"
	"      --fail-on-leak SIZE\n"
	"                     exit 1 when the program's own code left more than\n"
	"                     SIZE of device, managed and VMM memory live at exit\n"
	"                     (exactly SIZE passes; 0: anything live fails); what\n"
	"                     a framework's pool still holds is not counted; a\n"
	"                     directory holding no report because nothing was\n"
	"                     allocated passes\n"
	"      --include-pools with --fail-on-leak: count the pools' segments too\n"
	"      --strict       a process or history that cannot be read is fatal\n"
	"                     (default: left out, said on stderr and in the report)\n"
	"  -h, --help         show this help\n"
	"\n"
	"SIZE is bytes, or a number with K, M, G or T (powers of 1024): 512K, 1.5M.\n"
	"Exit status: 0 success (with --fail-on-leak: not more than SIZE live in\n"
	"what could be read); 1 more than SIZE live, or gpuspy's own failure; 2 bad\n"
	"usage, or no usable input (with --strict: any that cannot be read).\n";

/*
 * --fail-on-leak SIZE, a CI gate on what is live at exit.  Taken out of
 * argv before the options common to report and merge are parsed, so that
 * merge never sees it.
 */
struct leak_gate {
	bool on;
	bool text;  /* the verdict goes below the text on stdout */
	bool pools; /* --include-pools: the pools' segments count too */
	int64_t limit;
	int64_t leaked; /* the report's, kept past cli_report_done */
	int64_t pooled; /* what the pools' segments hold, left out unless POOLS */
};

/* Whether DIR holds nothing a process wrote: no file but run.json, no
 * process directory (an empty one is a process killed before its first
 * snapshot, not one that allocated nothing), at any depth (run
 * directories inside an output directory). */
static bool gate_holds_nothing(const char *dir, int depth)
{
	struct dirent *de;
	bool nothing = true;
	DIR *d = opendir(dir);

	if (!d)
		return false;
	while (nothing && (de = readdir(d))) {
		struct stat st;
		pid_t pid;
		char *sub;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		sub = util_path_join(dir, de->d_name);
		if (!sub || lstat(sub, &st) < 0)
			nothing = false;
		else if (S_ISREG(st.st_mode))
			nothing = strcmp(de->d_name, GS_FILE_RUN) == 0;
		else if (S_ISDIR(st.st_mode))
			nothing = depth < 3 &&
				  names_parse_process_dir(de->d_name, &pid, NULL) < 0 &&
				  gate_holds_nothing(sub, depth + 1);
		else /* a link (a pointer to a run) is seen where it points */
			nothing = S_ISLNK(st.st_mode);
		free(sub);
	}
	closedir(d);
	return nothing;
}

/* Takes --fail-on-leak out of ARGV (*ARGC shrinks), and the directories
 * that hold nothing with it; -1 to go on, else the exit status. */
static int gate_setup(int *argc, char **argv, struct leak_gate *g)
{
	int n = 1, paths = 0, nothing = 0, c;
	bool opts = true;
	FILE *out = stdout; /* stderr when stdout is not text for people */

	for (int i = 1; i < *argc; i++) {
		const char *v = NULL;

		if (opts && strcmp(argv[i], "--") == 0) {
			opts = false;
		} else if (opts && strcmp(argv[i], "--fail-on-leak") == 0) {
			if (i + 1 >= *argc)
				return cli_usage_error("report", "missing value for", argv[i]);
			v = argv[++i];
		} else if (opts && strncmp(argv[i], "--fail-on-leak=", 15) == 0) {
			v = argv[i] + 15;
		} else if (opts && strcmp(argv[i], "--include-pools") == 0) {
			g->pools = true;
			continue;
		}
		if (v) {
			if (util_parse_size(v, &g->limit) < 0)
				return cli_usage_error("report", "--fail-on-leak needs a size, not",
						       v);
			g->on = true;
			continue;
		}
		argv[n++] = argv[i];
	}
	*argc = n;
	if (g->pools && !g->on)
		return cli_usage_error("report", "--include-pools goes with", "--fail-on-leak");
	if (!g->on)
		return -1;
	/* the paths: what getopt leaves after the options, found the same way */
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(*argc, argv, cli_report_shortopts, cli_report_options, NULL)) != -1)
		if (c == 'f') {
			const struct format *f = format_find("report", optarg);

			out = f && f->people ? stdout : stderr;
		}
	n = optind;
	for (int i = optind; i < *argc; i++) {
		struct stat st;

		paths++;
		if (stat(argv[i], &st) < 0) {
			/* still bad input (a typo must not pass the gate), but
			 * say why it is likely missing */
			if (errno == ENOENT) {
				cli_error(argv[i], "no such file or directory (a command that "
						   "allocates nothing through CUDA leaves no run "
						   "directory)");
				return EXIT_USAGE;
			}
		} else if (S_ISDIR(st.st_mode) && gate_holds_nothing(argv[i], 0)) {
			nothing++;
			fputs("gpuspy report: ", out);
			cli_put_clean(out, argv[i]);
			fputs(": no process wrote a report here: nothing was allocated through CUDA "
			      "(or gpuspy was not loaded; see gpuspy-report(1), --fail-on-leak)\n",
			      out);
			continue;
		}
		argv[n++] = argv[i];
	}
	*argc = n;
	if (paths > 0 && nothing == paths) {
		fputs("OK: nothing is live at exit (--fail-on-leak)\n", out);
		return fflush(out) == 0 ? EXIT_OK : EXIT_FAILURE_OTHER;
	}
	return -1;
}

/* The verdict, after the report: on stdout below the text, on stderr
 * when stdout is JSON or CSV; the exit status. */
static int gate_verdict(const struct leak_gate *g, int status)
{
	FILE *out = g->text ? stdout : stderr;
	char a[32], b[32];

	char c[32], pools[128] = "";
	/* the program's own leak; a framework's pool keeps its cache until
	 * the process goes, which is not one */
	int64_t leaked = g->pools ? g->leaked : g->leaked - g->pooled;

	if (!g->on || status != EXIT_OK)
		return status;
	util_human_size(leaked, a, sizeof(a));
	util_human_size(g->limit, b, sizeof(b));
	if (g->pooled)
		snprintf(
			pools, sizeof(pools),
			g->pools ?
				"; %s of it held by the pools, counted (--include-pools)" :
				"; %s more held by the pools, not counted (--include-pools counts it)",
			util_human_size(g->pooled, c, sizeof(c)));
	if (leaked > g->limit) {
		fprintf(out, "%sFAIL: %s live at exit, more than %s (--fail-on-leak%s)\n",
			out == stdout ? "\n" : "", a, b, pools);
		status = EXIT_LEAK;
	} else {
		fprintf(out, "%sOK: %s live at exit, not more than %s (--fail-on-leak%s)\n",
			out == stdout ? "\n" : "", a, b, pools);
	}
	if (fflush(out) != 0)
		status = EXIT_FAILURE_OTHER;
	return status;
}

int cmd_report(int argc, char **argv)
{
	struct cli_loaded l;
	struct leak_gate gate = { 0 };
	int e = gate_setup(&argc, argv, &gate);

	if (e >= 0)
		return e;
	e = cli_report_setup("report", usage, DEFAULT_TOP, argc, argv, &l);
	if (e >= 0)
		return e;
	gate.leaked = l.rep.leaked_bytes;
	gate.pooled = l.rep.pool_held_bytes;
	gate.text = l.format->people;
	/* text only: the sections to print */
	l.text_sections = TEXT_ALL_SECTIONS;
	if (l.sections) {
		const char *bad;
		size_t badlen;
		char name[64];

		if (text_sections_parse(l.sections, &l.text_sections, &bad, &badlen) < 0) {
			snprintf(name, sizeof(name), "%.*s", (int)(badlen < 60 ? badlen : 60), bad);
			cli_report_done(&l, 0);
			return cli_usage_error("report", "unknown section", name);
		}
	}
	e = format_print(&l, NULL);
	return gate_verdict(&gate, cli_report_done(&l, e));
}
