/* SPDX-License-Identifier: MIT */
/*
 * What a PATH on the command line holds: a report file, a process
 * directory (with report.json, or what a killed process left) or a run
 * directory of process directories.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "discover.h"
#include "load.h"
#include "names.h"
#include "rundir.h"
#include "util.h"
#include "validate.h"

/* Takes P; a report already in the list (same device and inode) is
 * dropped. */
static int list_add(struct rd_process_list *list, struct rd_process *p)
{
	for (size_t i = 0; i < list->n; i++) {
		if (list->items[i]->dev == p->dev && list->items[i]->ino == p->ino) {
			rd_process_free(p);
			return 0;
		}
	}
	if (list->n == list->cap) {
		size_t cap = list->cap ? list->cap * 2 : 16;
		struct rd_process **items = reallocarray(list->items, cap, sizeof(*items));

		if (!items) {
			rd_process_free(p);
			return -ENOMEM;
		}
		list->items = items;
		list->cap = cap;
	}
	list->items[list->n++] = p;
	return 0;
}

/* PATH's process left out, ERR saying why and E (-errno) how: the
 * others are read.  0, or -ENOMEM. */
static int add_unreadable(struct rd_process_list *list, const char *path,
			  const struct rd_error *err, int e)
{
	struct rd_unreadable *items, *u;
	char *clean = strdup(path);
	size_t n;

	items = clean ? reallocarray(list->unreadable, list->nunreadable + 1, sizeof(*items)) :
			NULL;
	if (!items) {
		free(clean);
		return -ENOMEM;
	}
	list->unreadable = items;
	u = &items[list->nunreadable];
	u->path = strdup(path);
	u->msg = strdup(err->msg[0] ? err->msg : strerror(-e));
	if (!u->path || !u->msg) {
		free(u->path);
		free(u->msg);
		free(clean);
		return -ENOMEM;
	}
	u->error = e;
	/* the message names the file as rd_error_set does: sanitized */
	util_sanitize(clean);
	n = strlen(clean);
	u->reason = u->msg;
	if (strncmp(u->msg, clean, n) == 0 && u->msg[n] == '/' && u->msg[n + 1])
		u->reason = u->msg + n + 1;
	else if (strncmp(u->msg, clean, n) == 0 && u->msg[n] == ':' && u->msg[n + 1] == ' ')
		u->reason = u->msg + n + 2;
	free(clean);
	list->nunreadable++;
	return 0;
}

/* R, the result of reading process PATH: a refusal (anything but -ENOMEM)
 * becomes an entry of LIST's unreadable, and 0. */
static int read_around(struct rd_process_list *list, const char *path, int r, struct rd_error *err)
{
	if (r >= 0 || r == -ENOMEM)
		return r;
	r = add_unreadable(list, path, err, r);
	if (r == 0)
		err->msg[0] = '\0';
	else
		rd_error_set(err, path, "out of memory");
	return r;
}

/* How far apart two clocks' readings of one moment may lie: the boot time
 * of /proc/stat is whole seconds, and both clocks are stepped by NTP. */
#define CLOCK_SLACK_S 2.0

/* When process PID of this machine started, in seconds since the epoch,
 * in *T: 0, or -errno (-ESRCH: no such process). */
static int proc_start_time(pid_t pid, double *t)
{
	char path[64], buf[1024], *p, *end;
	unsigned long long ticks = 0, btime = 0;
	long hz = sysconf(_SC_CLK_TCK);
	bool have_btime = false;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* the command name may hold spaces and parentheses: the fields
	 * resume after its last ')', with field 3; starttime is field 22 */
	p = strrchr(buf, ')');
	for (int field = 2; p && field < 22; field++) {
		p = strchr(p + 1, ' ');
	}
	if (!p || hz <= 0)
		return -EINVAL;
	errno = 0;
	ticks = strtoull(p + 1, &end, 10);
	if (end == p + 1 || errno)
		return -EINVAL;
	f = fopen("/proc/stat", "re");
	if (!f)
		return -errno;
	while (!have_btime && fgets(buf, sizeof(buf), f)) {
		if (strncmp(buf, "btime ", 6) != 0)
			continue;
		errno = 0;
		btime = strtoull(buf + 6, &end, 10);
		have_btime = end != buf + 6 && errno == 0;
	}
	fclose(f);
	if (!have_btime)
		return -EINVAL;
	*t = (double)btime + (double)ticks / (double)hz;
	return 0;
}

/* Whether process PID of HOST may still be running: 2 when it is alive on
 * this machine and started at STARTED (seconds since the epoch), 1 when it
 * is alive but that cannot be compared (STARTED < 0, or its start time
 * unreadable) and it started no later than NOT_AFTER (< 0: unknown), 0
 * otherwise.  A pid is reused: a process that started at another time is
 * another process. */
static int still_running(const char *host, int64_t pid, double started, double not_after)
{
	char here[GS_HOST_SIZE], dir[GS_HOST_SIZE], path[64];
	double t = 0;
	int r;

	/* HOST as a report says it, or as a process directory's name does */
	names_host(here, sizeof(here));
	names_host_component(dir, sizeof(dir));
	if ((strcmp(host, here) != 0 && strcmp(host, dir) != 0) || pid <= 0 || pid > INT32_MAX)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (access(path, F_OK) < 0)
		return 0;
	r = proc_start_time((pid_t)pid, &t);
	if (r == -ESRCH)
		return 0;
	if (r < 0)
		return 1;
	if (started >= 0)
		return t >= started - CLOCK_SLACK_S && t <= started + CLOCK_SLACK_S ? 2 : 0;
	return not_after < 0 || t <= not_after + CLOCK_SLACK_S ? 1 : 0;
}

/* Whether something of HOST at time T belongs to the gpuspy run RUN. */
static bool in_run(const struct rd_run *run, const char *host, double t)
{
	return run && run->present && t >= 0 && strcmp(run->host, host) == 0 &&
	       t >= run->start_time - 1 && t <= run->end_time + 1;
}

/* The state of P, read from its process directory, and what run.json (RUN,
 * may be NULL) says of it. */
static void judge_process(struct rd_process *p, const char *base, const struct rd_run *run)
{
	size_t host_len;
	pid_t pid;
	int alive;

	if (names_parse_process_image(util_basename(p->path), &pid, &host_len, &p->image) < 0)
		p->image = 0;
	if (strcmp(base, GS_FILE_REPORT_JSON) == 0) {
		p->state = RD_STATE_EXITED;
		return;
	}
	/* its pid went on in another program, which renamed its directory:
	 * whether that one still runs, how the run ended, say nothing of
	 * this one */
	if (p->image > 0) {
		p->state = RD_STATE_EXECED;
		return;
	}
	if (in_run(run, p->host, p->start_time >= 0 ? p->start_time : p->end_time))
		p->run_end_time = run->end_time;
	alive = still_running(p->host, p->pid, p->start_time, p->end_time);
	if (alive == 2) {
		p->state = RD_STATE_RUNNING;
	} else if (alive == 1) {
		p->state = RD_STATE_MAYBE_RUNNING;
	} else if (p->run_end_time >= 0 && run->signal > 0) {
		p->state = RD_STATE_KILLED;
		p->signal = run->signal;
	} else {
		p->state = RD_STATE_UNKNOWN;
	}
}

/* FILE is read; FROM_DIR: as the report of its process directory, which
 * run RUN (may be NULL) made. */
static int load_one(struct rd_process_list *list, const char *file, const char *display_path,
		    bool from_dir, const struct rd_run *run, struct rd_error *err)
{
	struct rd_process *p;
	const char *base;
	int64_t n;
	int r = load_process_file(file, display_path, &p, err);

	if (r < 0)
		return r;
	base = strrchr(file, '/');
	base = base ? base + 1 : file;
	p->run_end_time = -1;
	if (from_dir)
		judge_process(p, base, run);
	if (!p->partial && load_oom_file_name(base, &n)) {
		rd_error_set(err, file,
			     "event: missing (an oom-N.json is the report of "
			     "an out-of-memory event)");
		rd_process_free(p);
		return -EINVAL;
	}
	if (!p->snapshot.present && strcmp(base, GS_FILE_SNAPSHOT) == 0) {
		rd_error_set(err, file,
			     "snapshot: missing (a snapshot.json is the report "
			     "of a snapshot)");
		rd_process_free(p);
		return -EINVAL;
	}
	for (size_t i = 0; i < list->n; i++) {
		if (list->items[i]->dev == p->dev && list->items[i]->ino == p->ino) {
			rd_process_free(p);
			return 0;
		}
	}
	r = load_snapshots(p, err);
	/* torch.json is rewritten with snapshot.json: it says nothing of the
	 * moment of an oom-N.json or snapshot-N.json */
	if (r == 0 &&
	    (strcmp(base, GS_FILE_REPORT_JSON) == 0 || strcmp(base, GS_FILE_SNAPSHOT) == 0))
		r = load_torch(p, err);
	if (r < 0) {
		if (r == -ENOMEM)
			rd_error_set(err, p->file, "out of memory");
		rd_process_free(p);
		return r;
	}
	return list_add(list, p);
}

/* The name of DIR's highest-numbered oom-N.json in *NAMEP, NULL when it
 * holds none (or is no directory).  -errno when DIR cannot be read. */
static int highest_oom(const char *dir, char **namep)
{
	struct dirent *de;
	int64_t best = -1, n;
	DIR *d;

	*namep = NULL;
	d = opendir(dir);
	if (!d)
		return (errno == ENOENT || errno == ENOTDIR) ? 0 : -errno;
	while ((errno = 0, de = readdir(d))) {
		if (!load_oom_file_name(de->d_name, &n) || n <= best)
			continue;
		free(*namep);
		*namep = strdup(de->d_name);
		if (!*namep) {
			closedir(d);
			return -ENOMEM;
		}
		best = n;
	}
	n = errno;
	closedir(d);
	if (n) {
		free(*namep);
		*namep = NULL;
		return (int)-n;
	}
	return 0;
}

/* The "end_time" of report FILE in *T: 1 when it says one, 0 when that is
 * unknown (the file cannot be read, is not JSON, has none), -ENOMEM.
 * Only to choose between a killed process's files: the file chosen is then
 * read, and refused, like any other. */
static int file_end_time(const char *file, double *t)
{
	struct rd_error ignored;
	struct stat st;
	json_t *root, *j;
	char *buf;
	size_t len;
	int r;

	r = validate_read_file(file, &buf, &len, &st, &ignored);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return 0;
	root = json_loadb(buf, len, 0, NULL);
	free(buf);
	j = json_is_object(root) ? json_object_get(root, "end_time") : NULL;
	r = j && json_is_number(j);
	if (r)
		*t = json_number_value(j);
	json_decref(root);
	return r;
}

/* The report of process directory DIR in *FILEP: its report.json (the
 * state at exit), else, the process having been killed or having crashed,
 * the newer by their own end_time of its snapshot.json (its last periodic
 * snapshot) and its highest-numbered oom-N.json (its last out-of-memory
 * post-mortem); snapshot.json on a tie or when a time is unknown.
 * 1, 0 when there is none of them, -errno for a failure other than their
 * absence (*FILEP then names what could not be read). */
static int process_report(const char *dir, char **filep)
{
	char *file = util_path_join(dir, GS_FILE_REPORT_JSON);
	char *name = NULL, *oom = NULL;
	double snap_t, oom_t;
	struct stat st;
	int r;

	*filep = NULL;
	if (!file)
		return -ENOMEM;
	if (stat(file, &st) == 0) {
		*filep = file;
		return 1;
	}
	if (errno != ENOENT && errno != ENOTDIR) {
		r = -errno;
		*filep = file;
		return r;
	}
	free(file);
	r = highest_oom(dir, &name);
	if (r < 0) {
		*filep = r == -ENOMEM ? NULL : strdup(dir);
		return r;
	}
	if (name) {
		oom = util_path_join(dir, name);
		free(name);
		if (!oom)
			return -ENOMEM;
	}
	file = util_path_join(dir, GS_FILE_SNAPSHOT);
	if (!file) {
		free(oom);
		return -ENOMEM;
	}
	if (stat(file, &st) != 0) {
		r = -errno;
		if (r != -ENOENT && r != -ENOTDIR) {
			free(oom);
			*filep = file;
			return r;
		}
		free(file);
		*filep = oom;
		return oom ? 1 : 0;
	}
	if (oom) {
		int rs = file_end_time(file, &snap_t), ro = file_end_time(oom, &oom_t);

		if (rs < 0 || ro < 0) {
			free(file);
			free(oom);
			return -ENOMEM;
		}
		if (rs && ro && oom_t > snap_t) {
			free(file);
			*filep = oom;
			return 1;
		}
		free(oom);
	}
	*filep = file;
	return 1;
}

/* Process directories sort as "node-9" before "node-10". */
static int cmp_names(const void *a, const void *b)
{
	return strverscmp(*(char *const *)a, *(char *const *)b);
}

/* The report of process directory DIR/NAME (process_report). */
static int has_report(const char *dir, const char *name, char **filep)
{
	char *sub = util_path_join(dir, name);
	int r;

	*filep = NULL;
	if (!sub)
		return -ENOMEM;
	r = process_report(sub, filep);
	free(sub);
	return r;
}

/* Whether directory PATH holds nothing but hidden entries (the label of
 * `gpuspy snapshot`, a temporary): 1, with its modification time in
 * *MTIME; 0; -ENOMEM. */
static int empty_dir(const char *path, double *mtime)
{
	struct dirent *de;
	struct stat st;
	int r = 1;
	DIR *d;

	if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
		return -ENOTDIR;
	*mtime = (double)st.st_mtim.tv_sec + (double)st.st_mtim.tv_nsec / 1e9;
	d = opendir(path);
	if (!d)
		return 0;
	while (r == 1 && (errno = 0, de = readdir(d)))
		if (de->d_name[0] != '.')
			r = 0;
	if (r == 1 && errno)
		r = 0;
	closedir(d);
	return r;
}

/* Process directory DIR/NAME, which holds no report: listed in LIST, as
 * empty (its process started using CUDA and wrote nothing yet) or as
 * holding other files only (a snapshot that could not be written). */
static int add_unreported(struct rd_process_list *list, const char *dir, const char *name,
			  const struct rd_run *run)
{
	struct rd_unreported *u, *items;
	size_t host_len;
	double mtime = 0;
	pid_t pid;
	char *path;
	int r;

	/* a run directory in an output directory is not a process's */
	unsigned image;

	if (names_parse_process_image(name, &pid, &host_len, &image) < 0 || rundir_id_valid(name))
		return 0;
	path = util_path_join(dir, name);
	if (!path)
		return -ENOMEM;
	r = empty_dir(path, &mtime);
	if (r < 0) {
		free(path);
		return 0;
	}
	items = reallocarray(list->unreported, list->nunreported + 1, sizeof(*items));
	if (!items) {
		free(path);
		return -ENOMEM;
	}
	list->unreported = items;
	u = &items[list->nunreported];
	memset(u, 0, sizeof(*u));
	u->path = path;
	u->pid = pid;
	u->empty = r == 1;
	u->host = strndup(name, host_len);
	if (!u->host) {
		free(path);
		return -ENOMEM;
	}
	list->nunreported++;
	/* the directory is made when the process starts using CUDA: it
	 * started before that */
	u->image = image;
	r = image > 0 ? 0 : still_running(u->host, u->pid, -1, mtime);
	if (image > 0) {
		u->state = RD_STATE_EXECED;
	} else if (r > 0) {
		u->state = RD_STATE_MAYBE_RUNNING;
	} else if (in_run(run, u->host, mtime) && run->signal > 0) {
		u->state = RD_STATE_KILLED;
		u->signal = run->signal;
	} else {
		u->state = RD_STATE_UNKNOWN;
	}
	return 0;
}

/* " (run.json: python3 -c ..., exited 0)", what RUN says of the command
 * and its end, into BUF; "" without a run.json. */
static void run_said(const struct rd_run *run, char *buf, size_t size)
{
	size_t len;

	buf[0] = '\0';
	if (!run->present || size < 64)
		return;
	len = (size_t)snprintf(buf, size, " (" GS_FILE_RUN ":");
	for (size_t i = 0; i < run->ncommand; i++) {
		size_t a = strlen(run->command[i]);

		/* room left for " ...", then the end */
		if (len + 1 + a + 40 >= size) {
			memcpy(buf + len, " ...", 5);
			len += 4;
			break;
		}
		buf[len++] = ' ';
		memcpy(buf + len, run->command[i], a + 1);
		len += a;
	}
	if (run->signal > 0)
		snprintf(buf + len, size - len, ", killed by signal %" PRId64 ")", run->signal);
	else
		snprintf(buf + len, size - len, ", exited %" PRId64 ")", run->exit_status);
}

static int load_run_dir(struct rd_process_list *list, const char *dir, struct rd_error *err)
{
	char **names = NULL;
	size_t n = 0, cap = 0, found = 0, unreadable = 0;
	struct rd_run run;
	struct dirent *de;
	DIR *d;
	int r = 0;

	r = load_run(dir, &run, err);
	if (r < 0)
		return r;
	d = opendir(dir);
	if (!d) {
		r = -errno;
		rd_error_set(err, dir, "%s", strerror(-r));
		rd_run_clear(&run);
		return r;
	}
	while ((errno = 0, de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (n == cap) {
			size_t c = cap ? cap * 2 : 32;
			char **nn = reallocarray(names, c, sizeof(*nn));

			if (!nn) {
				r = -ENOMEM;
				goto out;
			}
			names = nn;
			cap = c;
		}
		names[n] = strdup(de->d_name);
		if (!names[n]) {
			r = -ENOMEM;
			goto out;
		}
		n++;
	}
	if (errno) {
		r = -errno;
		rd_error_set(err, dir, "%s", strerror(-r));
		goto out;
	}
	if (n > 0)
		qsort(names, n, sizeof(*names), cmp_names);
	for (size_t i = 0; i < n; i++) {
		char *file = NULL, *display;

		/* A directory without report.json, snapshot.json nor
		 * oom-N.json is a process killed or still running before
		 * its first snapshot (or with GPUSPY_INTERVAL=0): not an
		 * error, and listed when it is empty, as the library left
		 * it. */
		r = has_report(dir, names[i], &file);
		if (r < 0 && r != -ENOMEM) {
			/* a process directory that cannot be searched, a
			 * report that cannot be looked at: left out */
			char *sub = util_path_join(dir, names[i]);

			rd_error_set(err, file ? file : sub ? sub : dir, "%s", strerror(-r));
			r = sub ? read_around(list, sub, r, err) : -ENOMEM;
			free(sub);
			free(file);
			if (r < 0)
				goto out;
			unreadable++;
			continue;
		}
		if (r < 0) {
			free(file);
			goto out;
		}
		if (r == 0) {
			r = add_unreported(list, dir, names[i], &run);
			if (r < 0)
				goto out;
			continue;
		}
		display = util_path_join(dir, names[i]);
		if (!display) {
			free(file);
			r = -ENOMEM;
			goto out;
		}
		r = load_one(list, file, display, true, &run, err);
		if (r < 0 && r != -ENOMEM) {
			/* one bad process does not hide the others */
			r = read_around(list, display, r, err);
			unreadable++;
		} else if (r == 0) {
			found++;
		}
		free(display);
		free(file);
		if (r < 0)
			goto out;
	}
	r = 0;
	/* only bad processes: the caller says so, as it does for any */
	if (found == 0 && unreadable == 0) {
		char what[256];

		run_said(&run, what, sizeof(what));
		size_t empty = 0;

		for (size_t i = 0; i < list->nunreported; i++)
			empty += list->unreported[i].empty;
		if (list->nunreported)
			rd_error_set(err, dir,
				     "no gpuspy reports here (neither report.json "
				     "nor */report.json, nor */snapshot.json, nor */oom-N.json); "
				     "%zu process %s: killed or still running before "
				     "the first snapshot%s",
				     list->nunreported,
				     empty == list->nunreported ?
					     (list->nunreported == 1 ? "directory is empty" :
								       "directories are empty") :
					     (list->nunreported == 1 ?
						      "directory holds no report" :
						      "directories hold no report"),
				     what);
		else if (run.present)
			rd_error_set(err, dir,
				     "no process of this run allocated GPU memory through CUDA%s; "
				     "see libgpuspy(7), NOTHING RECORDED",
				     what);
		else
			rd_error_set(err, dir,
				     "no gpuspy reports here (neither report.json "
				     "nor */report.json, nor */snapshot.json, nor */oom-N.json)");
		r = -ENOENT;
	}
out:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	closedir(d);
	rd_run_clear(&run);
	if (r == -ENOMEM)
		rd_error_set(err, dir, "out of memory");
	return r;
}

/* Process directory PATH, whose report is FILE (process_report); AROUND:
 * a refused report is listed as unreadable (read_around), not returned. */
static int load_process_dir(struct rd_process_list *list, const char *path, const char *file,
			    bool around, struct rd_error *err)
{
	/* its run's run.json, one level up */
	struct rd_run run = { .exit_status = -1 };
	char *parent = util_dir_of(path);
	pid_t pid;
	int r = 0;

	if (!parent)
		r = -ENOMEM;
	else if (names_parse_process_dir(util_basename(path), &pid, NULL) == 0)
		r = load_run(parent, &run, err);
	if (r >= 0) {
		r = load_one(list, file, path, true, &run, err);
		if (around)
			r = read_around(list, path, r, err);
	} else if (r == -ENOMEM) {
		rd_error_set(err, path, "out of memory");
	}
	rd_run_clear(&run);
	free(parent);
	return r;
}

int discover_path(struct rd_process_list *list, const char *path, struct rd_error *err)
{
	struct stat st;
	char *file;
	int r;

	if (stat(path, &st) < 0) {
		r = -errno;
		if (r == -ENOENT)
			rd_error_set(err, path,
				     "no such file or directory (a run in which no process "
				     "allocated GPU memory through CUDA writes nothing: see "
				     "libgpuspy(7), NOTHING RECORDED)");
		else
			rd_error_set(err, path, "%s", strerror(-r));
		return r;
	}
	if (!S_ISDIR(st.st_mode))
		return read_around(list, path, load_one(list, path, path, false, NULL, err), err);

	r = process_report(path, &file);
	if (r > 0) {
		r = load_process_dir(list, path, file, true, err);
	} else if (r == 0) {
		r = load_run_dir(list, path, err);
	} else if (r != -ENOMEM) {
		rd_error_set(err, file ? file : path, "%s", strerror(-r));
		r = read_around(list, path, r, err);
	} else {
		rd_error_set(err, path, "out of memory");
	}
	free(file);
	return r;
}

int discover_process_dir(struct rd_process_list *list, const char *dir, struct rd_error *err)
{
	size_t before = list->n;
	char *file;
	int r = process_report(dir, &file);

	if (r > 0)
		r = load_process_dir(list, dir, file, false, err);
	else if (r < 0 && file)
		rd_error_set(err, file, "%s", strerror(-r));
	else if (r < 0)
		rd_error_set(err, dir, "out of memory");
	free(file);
	/* a report already listed (the same file twice) appends nothing */
	return r < 0 ? r : list->n > before;
}

static int cmp_strings(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The run directories of output directory PATH, by name (which is by
 * time), in *NAMESP: how many, or -errno. */
static int list_runs(const char *path, char ***namesp, bool *latestp)
{
	char **names = NULL;
	size_t n = 0;
	struct dirent *de;
	DIR *d = opendir(path);

	*namesp = NULL;
	*latestp = false;
	if (!d)
		return -errno;
	while ((errno = 0, de = readdir(d))) {
		char **nn;
		struct stat st;

		if (strcmp(de->d_name, GS_FILE_LATEST) == 0)
			*latestp = true;
		if (!rundir_id_valid(de->d_name) ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISDIR(st.st_mode))
			continue;
		nn = reallocarray(names, n + 1, sizeof(*names));
		if (!nn || !(nn[n] = strdup(de->d_name))) {
			names = nn ? nn : names;
			for (size_t i = 0; i < n; i++)
				free(names[i]);
			free(names);
			closedir(d);
			return -ENOMEM;
		}
		names = nn;
		n++;
	}
	closedir(d);
	if (n > 1)
		qsort(names, n, sizeof(*names), cmp_strings);
	*namesp = names;
	return (int)n;
}

int discover_output_dir(const char *path, unsigned back, char **runp, size_t *nrunsp,
			struct rd_error *err)
{
	char id[GS_RUN_ID_SIZE], target[PATH_MAX];
	struct stat st;
	char **names = NULL;
	bool latest;
	size_t at;
	ssize_t k;
	int n, r;

	*runp = NULL;
	*nrunsp = 0;
	if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
		return 0;
	n = list_runs(path, &names, &latest);
	if (n < 0)
		return n == -ENOMEM ? (rd_error_set(err, path, "out of memory"), n) : 0;
	if (n == 0 && !latest) {
		free(names);
		return 0;
	}
	*nrunsp = (size_t)n;
	r = latest ? rundir_read_latest(path, id, sizeof(id)) : 0;
	if (r < 0) {
		char *l = util_path_join(path, GS_FILE_LATEST);

		k = l ? readlink(l, target, sizeof(target) - 1) : -1;
		target[k > 0 ? k : 0] = '\0';
		if (r == -ENOLINK)
			rd_error_set(err, l ? l : path,
				     "not a symbolic link to a run: not what gpuspy leaves "
				     "there; remove it, or name a run directory");
		else if (r == -EXDEV)
			rd_error_set(err, l ? l : path,
				     "points outside its output directory (to '%.200s'); not "
				     "read: remove it, or name a run directory",
				     target);
		else if (r == -ENOTDIR)
			rd_error_set(err, l ? l : path,
				     "points to '%.200s', which is not a run directory there; "
				     "not read: remove it, or name a run directory",
				     target);
		else
			rd_error_set(err, l ? l : path, "%s", strerror(-r));
		free(l);
		goto out;
	}
	/* from latest, else the newest, BACK runs back by name */
	at = (size_t)n;
	for (size_t i = 0; r == 1 && i < (size_t)n; i++)
		if (strcmp(names[i], id) == 0)
			at = i + 1;
	if (n == 0 || !names || back >= at) {
		rd_error_set(err, path,
			     n == 0 ? "holds no run directory" :
				      "holds %d run%s: there is none %u before the latest",
			     n, n == 1 ? "" : "s", back);
		r = -ENOENT;
		goto out;
	}
	*runp = util_path_join(path, names[at - 1 - back]);
	r = *runp ? 1 : -ENOMEM;
	if (r == -ENOMEM)
		rd_error_set(err, path, "out of memory");
out:
	for (int i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
	return r;
}

bool discover_has_reports_since(const char *dir, double since)
{
	struct dirent *de;
	bool found = false;
	DIR *d = opendir(dir);

	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		char *file = NULL;
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		found = has_report(dir, de->d_name, &file) > 0 &&
			(since < 0 || (stat(file, &st) == 0 &&
				       (double)st.st_mtim.tv_sec + 1 >= since - CLOCK_SLACK_S));
		free(file);
	}
	closedir(d);
	return found;
}

bool discover_has_reports(const char *dir)
{
	return discover_has_reports_since(dir, -1);
}
