/* SPDX-License-Identifier: MIT */
/* gpuspy(1): dispatch to a command. */
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "cli.h"
#include "format.h"

static const char usage[] =
	"Usage: gpuspy COMMAND [OPTIONS] [ARGS]\n"
	"\n"
	"Commands:\n"
	"  run [-o DIR] [--prometheus ADDR] [--] CMD [ARGS...]\n"
	"                                    run CMD with libgpuspy preloaded\n"
	"  report [--format @names:report@] [--at LABEL|--peak]\n"
	"         [--top N] [--sections LIST] [--fail-on-leak SIZE [--include-pools]\n"
	"         [--junit FILE]] [--strict] [PATH...]\n"
	"                                    summarize the reports of a run\n"
	"  merge [--format @names:merge@] [--top N] [--strict] [PATH...]\n"
	"                                    the processes of a run side by side\n"
	"  snapshot PID [LABEL]              ask a running process for a snapshot now\n"
	"  top [--interval SEC] [--top N] [--count N] [PATH|PID]\n"
	"                                    watch live GPU memory by call site\n"
	"  export @options:export@ [--step time|mark] [--top N] [--strict] [PATH...]\n"
	"                                    the history as TensorBoard scalars\n"
	"  diff [--format @names:diff@] [--fail-on-growth SIZE] [--budget FILE] [--junit FILE]\n"
	"       [--threshold SIZE] [--at LABEL] [--top N] [--strict]\n"
	"       [OLD [NEW]] | --old PATH... --new PATH...\n"
	"                                    compare two runs call site by call site\n"
	"  commits [--format text|csv|html] [--order given|time|commit] [--top N]\n"
	"          [--strict] RUN...          memory per commit: runs lined up\n"
	"  exporter [--listen ADDR] RUN_DIR  serve a run's metrics to Prometheus\n"
	"\n"
	"Options:\n"
	"  -h, --help      show this help\n"
	"  -V, --version   show the version\n"
	"      --lib       print the path of the libgpuspy.so that 'run' preloads\n"
	"                  (for LD_PRELOAD=$(gpuspy --lib) CMD)\n"
	"\n"
	"'gpuspy COMMAND --help' describes a command; gpuspy-COMMAND(1) in full.\n";

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} commands[] = {
	{ "run", cmd_run },	      { "report", cmd_report },	    { "merge", cmd_merge },
	{ "snapshot", cmd_snapshot }, { "top", cmd_top },	    { "diff", cmd_diff },
	{ "export", cmd_export },     { "exporter", cmd_exporter }, { "commits", cmd_commits },
};

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;

	if (!cmd) {
		format_usage(stderr, usage);
		return EXIT_USAGE;
	}
	if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0) {
		return format_usage(stdout, usage) == 0 && fflush(stdout) == 0 ? EXIT_OK :
										 EXIT_FAILURE_OTHER;
	}
	if (strcmp(cmd, "-V") == 0 || strcmp(cmd, "--version") == 0 ||
	    strcmp(cmd, "version") == 0) {
		puts("gpuspy " GPUSPY_VERSION);
		return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAILURE_OTHER;
	}
	if (strcmp(cmd, "--lib") == 0)
		return run_print_library();
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(cmd, commands[i].name) == 0) {
			cli_command = commands[i].name;
			return commands[i].fn(argc - 1, argv + 1);
		}
	/* "-x" before any command is an option gpuspy does not have */
	fputs(cmd[0] == '-' && cmd[1] ? "gpuspy: unknown option '" : "gpuspy: unknown command '",
	      stderr);
	cli_put_clean(stderr, cmd);
	fputs("' (try 'gpuspy --help')\n", stderr);
	return EXIT_USAGE;
}
