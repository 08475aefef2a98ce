/* SPDX-License-Identifier: MIT */
/*
 * gpuspy export --tensorboard LOGDIR: every process's history as
 * TensorBoard scalars, one event file per process in a directory of its
 * own under LOGDIR (a run, as TensorBoard lists them).
 *
 * Everything is read and built before anything is created, and every file
 * is created before any is written: a refused input or LOGDIR leaves
 * nothing behind.  LOGDIR may lie in a shared place, so it is opened
 * without following a link and must be ours, and the directories and files
 * under it are made relative to its descriptor, O_NOFOLLOW, O_EXCL.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "load_history.h"
#include "print.h"

#define DEFAULT_TOP 10

static const char usage[] =
	"Usage: gpuspy export --tensorboard LOGDIR [--step time|mark] [--top N] [--strict]\n"
	"                     [PATH...]\n"
	"\n"
	"Write the history of every process of the PATHs (history.jsonl: live bytes\n"
	"over time) for another tool.  Each PATH is a run directory, one of its\n"
	"process directories, or a report file, as for 'gpuspy report'; without\n"
	"PATH: $GPUSPY_OUTPUT_DIR, else the latest run of ./gpuspy-out.\n"
	"\n"
	"      --tensorboard LOGDIR\n"
	"                     TensorBoard scalars: one event file per process in\n"
	"                     LOGDIR/rank-R (or LOGDIR/HOST-PID), made when missing;\n"
	"                     tags device/D, sites/FUNCTION (FILE:LINE), sites/other,\n"
	"                     pool/reserved/D, pool/allocated/D, nvml/I, in bytes\n"
	"      --step S       time (default): whole seconds since the process's start;\n"
	"                     mark: the number of marks (gpuspy_mark) before the sample\n"
	"  -n, --top N        headlines with a tag of their own (default 10; 0: all),\n"
	"                     the sites of each summed; the others in sites/other\n"
	"      --strict       a process or history that cannot be read is fatal\n"
	"                     (default: left out, said on stderr, the rest exported)\n"
	"  -h, --help         show this help\n"
	"\n"
	"Exit status: 0 success (processes that could not be read are left out\n"
	"and said); 1 gpuspy's own failure (out of memory, cannot write); 2 bad\n"
	"usage, no usable input (or, with --strict, any that cannot be read), or\n"
	"a LOGDIR that is refused.\n";

static const struct option options[] = {
	{ "tensorboard", required_argument, NULL, 't' },
	{ "step", required_argument, NULL, 'S' },
	{ "top", required_argument, NULL, 'n' },
	{ "strict", no_argument, NULL, 's' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct export_file {
	char run[160];
	char name[200];
	int dfd, fd;
	bool made;    /* the run directory is new: removed again on failure */
	bool created; /* the file, likewise */
	struct tb_events ev;
};

/* LOGDIR opened, made when missing (its parent must exist; then *MADE is
 * its name, to remove on failure): a descriptor, or the exit status with
 * one line said. */
static int export_open_logdir(const char *logdir, int *out, char **made)
{
	char *dir = strdup(logdir);
	struct stat st;
	size_t n;
	int fd, e = 0;

	if (!dir)
		return EXIT_FAILURE_OTHER;
	/* "dir/" would follow a link named dir */
	for (n = strlen(dir); n > 1 && dir[n - 1] == '/'; n--)
		dir[n - 1] = '\0';
	if (mkdir(dir, 0755) == 0)
		*made = dir;
	else if (errno != EEXIST)
		e = errno;
	fd = e ? -1 : open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && !e)
		e = errno;
	if (e == ENOTDIR && lstat(dir, &st) == 0 && S_ISLNK(st.st_mode)) {
		cli_error(logdir, "a symbolic link: refused (give the directory itself)");
	} else if (e == ENOTDIR) {
		cli_error(logdir, "not a directory");
	} else if (e) {
		cli_error(logdir, "%s", strerror(e));
	} else if (fstat(fd, &st) < 0 || st.st_uid != geteuid()) {
		e = EPERM;
		cli_error(logdir, "belongs to another user: refused");
	}
	if (*made != dir)
		free(dir);
	if (e) {
		if (fd >= 0)
			close(fd);
		return EXIT_USAGE;
	}
	*out = fd;
	return 0;
}

/* F's run directory under LFD and its file, both new or the run ours:
 * 0, or the exit status with one line said. */
static int export_create(int lfd, const char *logdir, struct export_file *f)
{
	struct stat st;
	int e = 0;

	if (mkdirat(lfd, f->run, 0755) == 0)
		f->made = true;
	else if (errno != EEXIST)
		e = errno;
	f->dfd = e ? -1 : openat(lfd, f->run, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (f->dfd < 0 && !e)
		e = errno;
	if (!e && (fstat(f->dfd, &st) < 0 || st.st_uid != geteuid()))
		e = EPERM;
	if (e) {
		fprintf(stderr, "gpuspy export: ");
		cli_put_clean(stderr, logdir);
		fprintf(stderr, "/%s: %s\n", f->run,
			e == ENOTDIR || e == ELOOP ? "not a directory (or a link): refused" :
			e == EPERM		   ? "belongs to another user: refused" :
						     strerror(e));
		return e == ENOMEM ? EXIT_FAILURE_OTHER : EXIT_USAGE;
	}
	f->fd = openat(f->dfd, f->name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (f->fd < 0) {
		e = errno;
		fprintf(stderr, "gpuspy export: ");
		cli_put_clean(stderr, logdir);
		fprintf(stderr, "/%s/%s: %s\n", f->run, f->name,
			e == EEXIST ? "exists already (this process was exported there before)" :
				      strerror(e));
		return EXIT_USAGE;
	}
	f->created = true;
	return 0;
}

static int export_write(const struct export_file *f)
{
	size_t off = 0;

	while (off < f->ev.len) {
		ssize_t w = write(f->fd, f->ev.buf + off, f->ev.len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		off += (size_t)w;
	}
	return 0;
}

/* The run directories' names: "rank-R", or with the host and pid when two
 * processes have one rank, then a number when even that repeats. */
static void export_names(const struct rd_report *r, const struct rd_history *h,
			 struct export_file *files)
{
	for (size_t i = 0; i < r->nprocs; i++) {
		struct export_file *f = &files[i];
		bool twice = false;

		if (!h[i].present)
			continue;
		for (size_t j = 0; j < r->nprocs && !twice; j++)
			twice = j != i && h[j].present && r->procs[i]->rank >= 0 &&
				r->procs[j]->rank == r->procs[i]->rank;
		tensorboard_run_name(r->procs[i], twice, f->run, sizeof(f->run));
		for (size_t j = 0; j < i; j++)
			if (h[j].present && strcmp(files[j].run, f->run) == 0) {
				size_t n = strlen(f->run);

				snprintf(f->run + n, sizeof(f->run) - n, "-%zu", i + 1);
				break;
			}
		tensorboard_file_name(r->procs[i], &h[i], f->name, sizeof(f->name));
	}
}

static int export_tensorboard(struct cli_loaded *l, const char *logdir, enum tb_step step)
{
	const struct rd_report *r = &l->rep;
	struct rd_history *h = calloc(r->nprocs + 1, sizeof(*h));
	struct export_file *files = calloc(r->nprocs + 1, sizeof(*files));
	struct rd_error err = { .msg = "" };
	size_t with = 0, refused = 0;
	char *made = NULL;
	int e = h && files ? 0 : -ENOMEM, status = EXIT_OK, lfd = -1;

	for (size_t i = 0; files && i < r->nprocs; i++)
		files[i].dfd = files[i].fd = -1;

	/* every history read before anything is built: one bad file, one line */
	for (size_t i = 0; i < r->nprocs && e == 0; i++)
		e = load_history(r->procs[i], &h[i], &err);
	for (size_t i = 0; i < r->nprocs && e == 0; i++) {
		if (!h[i].present) {
			/* a refused one was said as it was read around */
			refused += h[i].refused;
			if (!h[i].refused)
				cli_error(r->procs[i]->path, "no history.jsonl: nothing to export");
			continue;
		}
		with++;
		e = tensorboard_build(r, i, &h[i], step, l->top, &files[i].ev);
		if (e == 0 && step == TB_STEP_MARK && files[i].ev.marks == 0)
			cli_error(r->procs[i]->path,
				  "its history has no mark: every value is at step 0 "
				  "(try --step time)");
	}
	if (e < 0) {
		cli_print_error(&err, e);
		status = e == -ENOMEM ? EXIT_FAILURE_OTHER : EXIT_USAGE;
	} else if (with == 0 && refused) {
		cli_notices_say(true);
		status = EXIT_USAGE;
	} else if (with == 0) {
		cli_error(NULL, "no process of these paths has a history: nothing written");
		status = EXIT_USAGE;
	}
	if (status == EXIT_OK) {
		export_names(r, h, files);
		status = export_open_logdir(logdir, &lfd, &made);
	}
	for (size_t i = 0; i < r->nprocs && status == EXIT_OK; i++) {
		if (!h[i].present)
			continue;
		status = export_create(lfd, logdir, &files[i]);
	}
	for (size_t i = 0; i < r->nprocs && status == EXIT_OK; i++) {
		if (files[i].fd < 0)
			continue;
		e = export_write(&files[i]);
		if (close(files[i].fd) < 0 && e == 0)
			e = -errno;
		files[i].fd = -1;
		if (e < 0) {
			cli_error(logdir, "%s/%s: cannot write: %s", files[i].run, files[i].name,
				  strerror(-e));
			status = EXIT_FAILURE_OTHER;
			break;
		}
	}
	for (size_t i = 0; i < r->nprocs && status == EXIT_OK; i++)
		if (files[i].created)
			printf("%s/%s/%s: %zu tags, %zu steps\n", logdir, files[i].run,
			       files[i].name, files[i].ev.ntags, files[i].ev.nsteps);
	/* a failure leaves nothing of this export behind */
	for (size_t i = 0; files && i < r->nprocs; i++) {
		if (files[i].fd >= 0)
			close(files[i].fd);
		if (status != EXIT_OK && files[i].created)
			unlinkat(files[i].dfd, files[i].name, 0);
		if (files[i].dfd >= 0)
			close(files[i].dfd);
		if (status != EXIT_OK && files[i].made)
			unlinkat(lfd, files[i].run, AT_REMOVEDIR);
		free(files[i].ev.buf);
	}
	if (lfd >= 0)
		close(lfd);
	if (status != EXIT_OK && made)
		rmdir(made);
	free(made);
	for (size_t i = 0; h && i < r->nprocs; i++)
		rd_history_clear(&h[i]);
	free(h);
	free(files);
	e = cli_report_done(l, 0);
	return status != EXIT_OK ? status : e;
}

int cmd_export(int argc, char **argv)
{
	struct cli_loaded l;
	const char *logdir = NULL;
	enum tb_step step = TB_STEP_TIME;
	size_t top = DEFAULT_TOP;
	int c, e;

	memset(&l, 0, sizeof(l));
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":n:h", options, NULL)) != -1) {
		switch (c) {
		case 't':
			logdir = optarg;
			break;
		case 'S':
			if (strcmp(optarg, "time") == 0)
				step = TB_STEP_TIME;
			else if (strcmp(optarg, "mark") == 0)
				step = TB_STEP_MARK;
			else
				return cli_usage_error("export", "--step is time or mark, not",
						       optarg);
			break;
		case 'n':
			if (cli_parse_count(optarg, &top) < 0)
				return cli_usage_error("export", "--top needs a number, not",
						       optarg);
			break;
		case 's':
			l.strict = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAILURE_OTHER;
		case ':':
			return cli_usage_error("export", "missing value for", argv[optind - 1]);
		default:
			return cli_usage_error("export", "unknown option", argv[optind - 1]);
		}
	}
	if (!logdir)
		return cli_usage_error("export", "which format: --tensorboard LOGDIR", NULL);
	if (!*logdir)
		return cli_usage_error("export", "--tensorboard needs a directory, not", logdir);
	l.paths = argv + optind;
	l.npaths = (size_t)(argc - optind);
	l.top = top;
	e = cli_report_load("export", &l);
	if (e >= 0)
		return e;
	return export_tensorboard(&l, logdir, step);
}
