/* SPDX-License-Identifier: MIT */
/*
 * What happens to a process that gpuspy writes a file about: its exit,
 * an allocation failing for lack of memory, a snapshot (periodic, asked
 * for by signal or by gpuspy_snapshot()) and gpuspy_mark().  The log of
 * out-of-memory events and marks lives here, under gs_events_lock, which
 * is also held while a file is written so that files never interleave.
 * Any failure (a full disk, say) is one line on stderr; the host
 * program's exit is never disturbed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core.h"
#include "counters.h"
#include "events.h"
#include "files.h"
#include "history.h"
#include "locks.h"
#include "log.h"
#include "names.h"
#include "peak.h"
#include "process_json.h"
#include "sites.h"
#include "state.h"
#include "summary.h"
#include "view.h"

/* Out-of-memory events: the first GS_OOM_FILES get a post-mortem file;
 * all are listed in every later report. */
static struct gs_oom ooms[GS_OOM_FILES];
static unsigned n_ooms, oom_dropped;

/*
 * gpuspy_mark(): the last GS_MARKS marks, oldest first.  Each keeps what
 * every site held live at that moment, so that two runs can be compared
 * at the same phase (`gpuspy diff --at LABEL`).
 */
static struct gs_mark marks[GS_MARKS];
static unsigned n_marks; /* ever made */

/* On-demand snapshots: snapshot-1.json ... snapshot-64.json. */
#define LABELLED_FILES 64
static unsigned n_labelled;

/* With gs_events_lock held: the moment, with the events so far. */
static int take(struct gs_view *v, const struct gs_oom *event)
{
	int err = view_take(v, event);

	if (err)
		return err;
	v->ooms = ooms;
	v->n_ooms = n_ooms;
	v->oom_dropped = oom_dropped;
	v->marks = marks;
	v->n_marks = n_marks;
	return 0;
}

void events_exit(void)
{
	struct gs_view v;
	int err;

	gs_lock(&gs_events_lock);
	if (take(&v, NULL) < 0) {
		gs_unlock(&gs_events_lock);
		return;
	}
	err = files_write(v.dir, GS_FILE_REPORT_JSON, process_json_write, &v);
	if (!err)
		err = files_write(v.dir, GS_FILE_REPORT_TEXT, summary_write_text, &v);
	if (err)
		gs_warn("cannot write the report in %s: %s", v.dir, strerror(-err));
	else
		summary_exit(&v);
	view_drop(&v);
	gs_unlock(&gs_events_lock);
}

/*
 * An allocation just failed for lack of memory: write the post-mortem now,
 * on the failing thread, before the error goes back to a framework that
 * may empty its caches and retry (after which the evidence is gone).
 */
void events_oom(struct gs_oom *e)
{
	struct gs_view v;
	char name[32];
	int err;

	gs_lock(&gs_events_lock);
	e->number = n_ooms + oom_dropped + 1;
	if (n_ooms >= GS_OOM_FILES) {
		oom_dropped++;
		gs_unlock(&gs_events_lock);
		return;
	}
	ooms[n_ooms++] = *e;
	history_event(HISTORY_OOM, NULL, e->number);
	if (take(&v, e) < 0) {
		gs_unlock(&gs_events_lock);
		return;
	}
	snprintf(name, sizeof(name), GS_FILE_OOM_N, e->number);
	err = files_write(v.dir, name, process_json_write, &v);
	if (err)
		gs_warn("cannot write %s/%s: %s", v.dir, name, strerror(-err));
	else
		summary_oom(&v, e, name);
	view_drop(&v);
	gs_unlock(&gs_events_lock);
}

/* The snapshot thread's periodic file: the whole report, as of now. */
void events_periodic(unsigned long long samples)
{
	struct gs_view v;
	int err;

	gs_lock(&gs_events_lock);
	if (take(&v, NULL) == 0) {
		v.samples = samples;
		err = files_write(v.dir, GS_FILE_SNAPSHOT, process_json_write, &v);
		view_drop(&v);
		if (err) {
			gs_unlock(&gs_events_lock);
			gs_fail("cannot write %s/snapshot.json: %s", v.dir, strerror(-err));
			return;
		}
	}
	gs_unlock(&gs_events_lock);
}

/*
 * On the caller's thread: a copy of each site's live bytes, O(sites) with
 * no walk of the live table.  Without memory for the copy the mark keeps
 * its label and time and an empty list, and says so by being empty.
 */
void events_mark(const char *label)
{
	unsigned cap = site_count() + 16, n = 0, m;
	struct gs_peak_site *copy = calloc(cap, sizeof(*copy));
	long long live = 0;

	for (struct gs_site *s = site_list(); copy && s && n < cap; s = s->next_all) {
		long long b = counters_live_bytes(&s->c);

		if (b <= 0)
			continue;
		copy[n].site = s->id;
		copy[n].live_bytes = b;
		n++;
	}
	for (int k = 0; k < GS_KIND_COUNT; k++)
		if (k != GS_KIND_PINNED)
			live += counters_live_bytes(&gs_totals.kind[k]);
	gs_lock(&gs_events_lock);
	m = n_marks % GS_MARKS;
	free(marks[m].sites);
	marks[m].time = gs_now();
	snprintf(marks[m].label, GS_LABEL_MAX, "%s", label ? label : "");
	marks[m].live = live;
	marks[m].sites = copy;
	marks[m].n = copy ? n : 0;
	n_marks++;
	history_event(HISTORY_MARK, marks[m].label, 0);
	gs_unlock(&gs_events_lock);
}

/* snapshot-N.json, now, on the calling thread.  0, or -1 if not written. */
int events_snapshot(const char *label)
{
	struct gs_view v;
	char name[32];
	int err;

	gs_lock(&gs_events_lock);
	if (n_labelled >= LABELLED_FILES) {
		gs_unlock(&gs_events_lock);
		gs_warn("snapshot '%s' not written: %d on-demand snapshots already", label,
			LABELLED_FILES);
		return -1;
	}
	if (take(&v, NULL) < 0) {
		gs_unlock(&gs_events_lock);
		return -1;
	}
	v.label = label;
	v.number = ++n_labelled;
	snprintf(name, sizeof(name), GS_FILE_SNAPSHOT_N, v.number);
	err = files_write(v.dir, name, process_json_write, &v);
	if (err)
		gs_warn("cannot write %s/%s: %s", v.dir, name, strerror(-err));
	else
		summary_snapshot(label, v.dir, name);
	if (!err)
		history_event(HISTORY_SNAPSHOT, label, v.number);
	view_drop(&v);
	gs_unlock(&gs_events_lock);
	return err ? -1 : 0;
}

/*
 * The signal asked for a snapshot.  `gpuspy snapshot PID LABEL` leaves
 * the label in <process dir>/.request before signalling.
 */
void events_requested(void)
{
	char dir[GS_PROCESS_PATH_SIZE], path[GS_FILE_PATH_SIZE], label[GS_LABEL_MAX] = "signal";
	int fd;

	files_process_dir(dir, sizeof(dir));
	names_join(path, sizeof(path), dir, GS_FILE_REQUEST);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = read(fd, label, sizeof(label) - 1);

		close(fd);
		unlink(path);
		if (n > 0) {
			label[n] = '\0';
			label[strcspn(label, "\n")] = '\0';
		} else {
			snprintf(label, sizeof(label), "signal");
		}
	}
	events_snapshot(label);
}
