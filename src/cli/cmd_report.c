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
	"                     [--fail-on-leak SIZE [--include-pools] [--junit FILE]]\n"
	"                     [--strict] [PATH...]\n"
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
	"                     summary, oom, wrong-device, growth, torch, processes,\n"
	"                     leaks, pinned, peak, allocations, sites (the stacks),\n"
	"                     totals, next\n"
	"                     (default: all)\n"
	"      --fail-on-leak SIZE\n"
	"                     exit 1 when the program's own code left more than\n"
	"                     SIZE of device, managed and VMM memory live at exit\n"
	"                     (exactly SIZE passes; 0: anything live fails); what\n"
	"                     a framework's pool still holds is not counted; a\n"
	"                     directory holding no report because nothing was\n"
	"                     allocated passes\n"
	"      --include-pools with --fail-on-leak: count the pools' segments too\n"
	"      --junit FILE   with --fail-on-leak: the verdict as JUnit XML in FILE,\n"
	"                     a failure naming each site that holds the leak\n"
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
	int64_t leaked;	   /* the report's, kept past cli_report_done */
	int64_t pooled;	   /* what the pools' segments hold, left out unless POOLS */
	const char *junit; /* --junit FILE, or NULL */
	/* for --junit: the sites that hold what is counted, one line each,
	 * largest first, made before the report is freed */
	char *sites;
	size_t nsites;
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

/* The verdict as JUnit XML in G->junit (when given): one test case, the
 * leak at exit, failed when more than the limit is live, its text naming
 * every site that holds what was counted.  NOTE: a line for system-out.
 * The exit status: EXIT_OK, or EXIT_FAILURE_OTHER when the file cannot be
 * written (said in one line). */
static int gate_junit(const struct leak_gate *g, const char *note)
{
	int64_t leaked = g->pools ? g->leaked : g->leaked - g->pooled;
	struct junit j = { 0 };
	char a[32], b[32], *name, *msg = NULL, *out;
	int e;

	if (!g->junit)
		return EXIT_OK;
	util_human_size(g->limit, b, sizeof(b));
	name = cli_strdup_printf("gpuspy report --fail-on-leak %s%s", b,
				 g->pools ? " --include-pools" : "");
	junit_suite(&j, name ? name : "gpuspy report --fail-on-leak", "fail-on-leak");
	free(name);
	snprintf(a, sizeof(a), "%" PRId64, g->limit);
	junit_property(&j, "limit_bytes", a);
	snprintf(a, sizeof(a), "%" PRId64, leaked);
	junit_property(&j, "leaked_bytes", a);
	if (leaked > g->limit) {
		msg = cli_strdup_printf("%s live at exit, more than %s, in %zu %s",
					util_human_size(leaked, a, sizeof(a)), b, g->nsites,
					g->nsites == 1 ? "call site" : "call sites");
		if (!msg)
			j.err = -ENOMEM;
	}
	/* what was live, when it passed; and what the pools hold */
	out = cli_strdup_printf("%s%s%s", note ? note : "", note && !msg && g->nsites ? "\n" : "",
				!msg && g->sites ? g->sites : "");
	if (!out)
		j.err = -ENOMEM;
	junit_case(&j, "gpuspy.report.leak", "live at exit", msg, g->sites,
		   out && *out ? out : NULL);
	free(msg);
	free(out);
	e = junit_write(&j, g->junit);
	junit_free(&j);
	if (e < 0) {
		cli_error(g->junit, "cannot write the JUnit report: %s", strerror(-e));
		return EXIT_FAILURE_OTHER;
	}
	return EXIT_OK;
}

static int cmp_live(const void *a, const void *b)
{
	const struct rd_report_site *x = *(const struct rd_report_site *const *)a;
	const struct rd_report_site *y = *(const struct rd_report_site *const *)b;

	if (x->c.live_bytes != y->c.live_bytes)
		return x->c.live_bytes > y->c.live_bytes ? -1 : 1;
	return strcmp(x->key, y->key);
}

/* For --junit: the sites of R that hold what the gate counts (device,
 * managed and VMM memory live at exit; a pool's segments only with
 * --include-pools), one line each, into G.  0 or -ENOMEM. */
static int gate_sites(struct leak_gate *g, const struct rd_report *r)
{
	const struct rd_report_site **v = calloc(r->nsites + 1, sizeof(*v));
	size_t n = 0, len = 0;
	char a[32];
	FILE *f;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < r->nsites; i++) {
		const struct rd_report_site *s = r->sites[i];

		if (s->c.live_bytes > 0 && s->kind != GS_KIND_PINNED && (g->pools || !s->pool))
			v[n++] = s;
	}
	qsort(v, n, sizeof(*v), cmp_live);
	f = open_memstream(&g->sites, &len);
	if (!f) {
		free(v);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s: %s in %" PRId64 " %s, by %s (%s)%s%s\n",
			v[i]->name ? v[i]->name : "?",
			util_human_size(v[i]->c.live_bytes, a, sizeof(a)), v[i]->c.live_allocations,
			v[i]->c.live_allocations == 1 ? "allocation" : "allocations",
			v[i]->api ? v[i]->api : "?", names_kind(v[i]->kind),
			v[i]->pool ? ", a pool: " : "", v[i]->pool ? v[i]->pool : "");
	g->nsites = n;
	free(v);
	return fclose(f) == 0 ? 0 : -ENOMEM;
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
		} else if (opts && (strcmp(argv[i], "--junit") == 0 ||
				    strncmp(argv[i], "--junit=", 8) == 0)) {
			if (argv[i][7] == '=')
				g->junit = argv[i] + 8;
			else if (i + 1 < *argc)
				g->junit = argv[++i];
			else
				return cli_usage_error("report", "missing value for", argv[i]);
			if (!*g->junit)
				return cli_usage_error("report", "--junit needs a file", NULL);
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
	if (g->junit && !g->on)
		return cli_usage_error("report", "--junit goes with", "--fail-on-leak");
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
		if (fflush(out) != 0)
			return EXIT_FAILURE_OTHER;
		return gate_junit(g,
				  "nothing was allocated through CUDA: no process wrote a report");
	}
	return -1;
}

/* The verdict, after the report: on stdout below the text, on stderr
 * when stdout is JSON or CSV; the exit status. */
static int gate_verdict(struct leak_gate *g, int status)
{
	FILE *out = g->text ? stdout : stderr;
	char a[32], b[32];

	char c[32], pools[128] = "";
	/* the program's own leak; a framework's pool keeps its cache until
	 * the process goes, which is not one */
	int64_t leaked = g->pools ? g->leaked : g->leaked - g->pooled;

	if (!g->on || status != EXIT_OK) {
		free(g->sites);
		return status;
	}
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
	if (fflush(out) != 0 || gate_junit(g, pools[0] ? pools + 2 : NULL) != EXIT_OK)
		status = EXIT_FAILURE_OTHER;
	free(g->sites);
	g->sites = NULL;
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
	if (gate.junit && gate_sites(&gate, &l.rep) < 0) {
		cli_error(NULL, "out of memory");
		cli_report_done(&l, 0);
		return EXIT_FAILURE_OTHER;
	}
	gate.text = l.format->people;
	/* text only: the sections to print */
	l.text_sections = TEXT_ALL_SECTIONS;
	if (l.sections) {
		const char *bad;
		size_t badlen;
		char name[64];

		if (text_sections_parse(l.sections, &l.text_sections, &bad, &badlen) < 0) {
			snprintf(name, sizeof(name), "%.*s", (int)(badlen < 60 ? badlen : 60), bad);
			free(gate.sites);
			cli_report_done(&l, 0);
			return cli_usage_error("report", "unknown section", name);
		}
	}
	e = format_print(&l, NULL);
	return gate_verdict(&gate, cli_report_done(&l, e));
}
