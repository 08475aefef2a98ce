/* SPDX-License-Identifier: MIT */
/*
 * What a PATH on the command line holds: a report file, a process
 * directory (with report.json, or what a killed process left) or a run
 * directory of process directories.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "discover.h"
#include "load.h"
#include "names.h"
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

static int load_one(struct rd_process_list *list, const char *file, const char *display_path,
		    struct rd_error *err)
{
	struct rd_process *p;
	const char *base;
	int64_t n;
	int r = load_process_file(file, display_path, &p, err);

	if (r < 0)
		return r;
	base = strrchr(file, '/');
	base = base ? base + 1 : file;
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

static int load_run_dir(struct rd_process_list *list, const char *dir, struct rd_error *err)
{
	char **names = NULL;
	size_t n = 0, cap = 0, found = 0;
	struct dirent *de;
	DIR *d;
	int r = 0;

	d = opendir(dir);
	if (!d) {
		r = -errno;
		rd_error_set(err, dir, "%s", strerror(-r));
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
		 * oom-N.json is a process that allocated nothing, or one
		 * still running with GPUSPY_INTERVAL=0: not an error. */
		r = has_report(dir, names[i], &file);
		if (r < 0) {
			if (file)
				rd_error_set(err, file, "%s", strerror(-r));
			free(file);
			goto out;
		}
		if (r == 0)
			continue;
		display = util_path_join(dir, names[i]);
		if (!display) {
			free(file);
			r = -ENOMEM;
			goto out;
		}
		r = load_one(list, file, display, err);
		free(display);
		free(file);
		if (r < 0)
			goto out;
		found++;
	}
	r = 0;
	if (found == 0) {
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
	if (r == -ENOMEM)
		rd_error_set(err, dir, "out of memory");
	return r;
}

int discover_path(struct rd_process_list *list, const char *path, struct rd_error *err)
{
	struct stat st;
	char *file;
	int r;

	if (stat(path, &st) < 0) {
		r = -errno;
		rd_error_set(err, path, "%s", strerror(-r));
		return r;
	}
	if (!S_ISDIR(st.st_mode))
		return load_one(list, path, path, err);

	r = process_report(path, &file);
	if (r > 0)
		r = load_one(list, file, path, err);
	else if (r == 0)
		r = load_run_dir(list, path, err);
	else if (file)
		rd_error_set(err, file, "%s", strerror(-r));
	else
		rd_error_set(err, path, "out of memory");
	free(file);
	return r;
}

bool discover_has_reports(const char *dir)
{
	struct dirent *de;
	bool found = false;
	DIR *d = opendir(dir);

	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		char *file = NULL;

		if (de->d_name[0] == '.')
			continue;
		found = has_report(dir, de->d_name, &file) > 0;
		free(file);
	}
	closedir(d);
	return found;
}
