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
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core.h"
#include "counters.h"
#include "events.h"
#include "files.h"
#include "history.h"
#include "limit.h"
#include "live_json.h"
#include "locks.h"
#include "log.h"
#include "names.h"
#include "oom_facts.h"
#include "peak.h"
#include "process_json.h"
#include "sites.h"
#include "state.h"
#include "summary.h"
#include "symbols.h"
#include "trace.h"
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
	memset(v, 0, sizeof(*v));
	v->event = event;
	v->ooms = ooms;
	v->n_ooms = n_ooms;
	v->oom_dropped = oom_dropped;
	v->marks = marks;
	v->n_marks = n_marks;
	return view_take(v);
}

/*
 * A write that failed: one line per problem, and gpuspy off for good only
 * when the failure cannot pass (files_lasting); a full disk, a size limit
 * or no descriptor left is tried again at the next write.
 */
static void write_failed(enum gs_problem id, const char *dir, const char *name, int err)
{
	if (files_lasting(err))
		gs_fail("cannot write %s/%s: %s", dir, name, strerror(-err));
	else
		gs_problem(id, err, "cannot write %s/%s: %s; tried again at the next one", dir,
			   name, strerror(-err));
}

/* The exit report's tries, EXIT_PAUSE_MS apart: a disk full for a moment
 * costs the exit that long at most, never the report. */
#define EXIT_TRIES    5
#define EXIT_PAUSE_MS 20

void events_exit(void)
{
	const char *name = GS_FILE_REPORT_JSON;
	struct gs_view v;
	int err;

	gs_lock(&gs_events_lock);
	if (take(&v, NULL) < 0) {
		gs_unlock(&gs_events_lock);
		return;
	}
	view_take_exit(&v);
	for (int i = 0; i < EXIT_TRIES; i++) {
		struct timespec pause = { 0, EXIT_PAUSE_MS * 1000L * 1000L };

		if (i)
			nanosleep(&pause, NULL);
		name = GS_FILE_REPORT_JSON;
		err = files_write(v.dir, name, process_json_write, &v);
		if (!err) {
			name = GS_FILE_REPORT_TEXT;
			err = files_write(v.dir, name, summary_write_text, &v);
		}
		if (!err || files_lasting(err) || err == -EFBIG)
			break;
		/* the history's descriptor may be the one the report lacks */
		if (err == -EMFILE || err == -ENFILE)
			history_close();
	}
	if (err)
		gs_problem(GS_PROBLEM_REPORT, err, "cannot write %s/%s: %s; no report", v.dir, name,
			   strerror(-err));
	else
		summary_exit(&v);
	/* after the report, which never waits on it; once: it is no report */
	if (!err && v.exit_taken) {
		err = files_write(v.dir, GS_FILE_ALLOCATIONS, live_json_write, &v);
		if (err)
			gs_warn("cannot write %s/%s: %s; gpuspy export --memory-viz has nothing to "
				"draw",
				v.dir, GS_FILE_ALLOCATIONS, strerror(-err));
	}
	view_drop(&v);
	gs_unlock(&gs_events_lock);
}

void events_postmortem(struct gs_oom *e)
{
	/* the sites the snapshot thread has not named yet get their dynamic
	 * symbols (only for a failure that gets a file) */
	if (atomic_load(&gs_totals.oom_events) < GS_OOM_FILES)
		symbols_catch_up();
	e->capped = limit_on() && limit_refused_here();
	oom_facts_sites(e);
	trace_put_oom(e->requested, e->device, e->free_bytes, e->site);
	events_oom(e);
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
	atomic_store(&gs_totals.oom_events, e->number);
	if (n_ooms >= GS_OOM_FILES) {
		oom_dropped++;
		gs_unlock(&gs_events_lock);
		return;
	}
	oom_facts_nvml(e);
	ooms[n_ooms++] = *e;
	history_event(HISTORY_OOM, NULL, e->number);
	if (take(&v, e) < 0) {
		gs_unlock(&gs_events_lock);
		return;
	}
	snprintf(name, sizeof(name), GS_FILE_OOM_N, e->number);
	err = files_write(v.dir, name, process_json_write, &v);
	if (err)
		write_failed(GS_PROBLEM_OOM, v.dir, name, err);
	else
		summary_oom(&v, e, name);
	view_drop(&v);
	gs_unlock(&gs_events_lock);
}

/* What PyTorch says of an out-of-memory is tied to the event it follows
 * only this soon after it (it follows at once, on the same thread). */
#define TORCH_OOM_WINDOW_S 60.0
/* torch_view.py's lines, JSON text: bounded, so that a file stays small */
#define TORCH_OOM_LINES_MAX 16384

/* Whether TEXT is what torch_view.py makes: a JSON object, printable
 * ASCII only (json.dumps(ensure_ascii=True) escapes everything else). */
static bool torch_lines_ok(const char *text)
{
	size_t n = strlen(text);

	if (n < 2 || n >= TORCH_OOM_LINES_MAX || text[0] != '{' || text[n - 1] != '}')
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)text[i] < 0x20 || (unsigned char)text[i] > 0x7e)
			return false;
	return true;
}

/* NAME into BUF, one line whatever it holds (a program's file names). */
static void one_line(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s", name ? name : "");
	for (char *c = buf; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
}

int events_torch_oom(int device, long long request, long long allocated, long long reserved,
		     long long largest_free, const char *lines, const char *pinner,
		     long long pinner_bytes, const char *holder, long long holder_bytes)
{
	struct gs_oom_torch *t;
	struct gs_oom *e = NULL;
	struct gs_view v;
	char name[32];
	int err;

	if (request < 0 || allocated < 0 || reserved < allocated || largest_free < -1 ||
	    pinner_bytes < 0 || holder_bytes < 0 || (lines && !torch_lines_ok(lines)))
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t || (lines && !(t->lines = strdup(lines)))) {
		free(t);
		return -ENOMEM;
	}
	t->request = request;
	t->allocated = allocated;
	t->reserved = reserved;
	t->largest_free = largest_free;
	one_line(t->pinner, sizeof(t->pinner), pinner);
	t->pinner_bytes = pinner_bytes;
	one_line(t->holder, sizeof(t->holder), holder);
	t->holder_bytes = holder_bytes;

	gs_lock(&gs_events_lock);
	/* the latest event, if it is this device's and recent: the failed
	 * request PyTorch gave up on */
	if (n_ooms && ooms[n_ooms - 1].device == device &&
	    ooms[n_ooms - 1].kind != GS_KIND_PINNED &&
	    gs_now() - ooms[n_ooms - 1].time < TORCH_OOM_WINDOW_S)
		e = &ooms[n_ooms - 1];
	if (!e) {
		gs_unlock(&gs_events_lock);
		free(t->lines);
		free(t);
		return -ENOENT;
	}
	if (e->torch) {
		free(e->torch->lines);
		free(e->torch);
	}
	e->torch = t;
	err = take(&v, e);
	if (err == 0) {
		snprintf(name, sizeof(name), GS_FILE_OOM_N, e->number);
		err = files_write(v.dir, name, process_json_write, &v);
		if (err)
			write_failed(GS_PROBLEM_OOM, v.dir, name, err);
		else
			summary_torch_oom(&v, e, name);
		view_drop(&v);
	}
	gs_unlock(&gs_events_lock);
	return err;
}

/* The snapshot thread's periodic file: the whole report, as of now. */
int events_periodic(unsigned long long samples)
{
	struct gs_view v;
	int err;

	gs_lock(&gs_events_lock);
	err = take(&v, NULL);
	if (err == 0) {
		v.samples = samples;
		err = files_write(v.dir, GS_FILE_SNAPSHOT, process_json_write, &v);
		view_drop(&v);
		if (err)
			write_failed(GS_PROBLEM_SNAPSHOT, v.dir, GS_FILE_SNAPSHOT, err);
	}
	gs_unlock(&gs_events_lock);
	return err;
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
	free(marks[m].shown.top);
	memset(&marks[m].shown, 0, sizeof(marks[m].shown));
	marks[m].time = gs_now();
	snprintf(marks[m].label, GS_LABEL_MAX, "%s", label ? label : "");
	marks[m].live = live;
	marks[m].sites = copy;
	marks[m].n = copy ? n : 0;
	n_marks++;
	history_event(HISTORY_MARK, marks[m].label, 0);
	gs_unlock(&gs_events_lock);
}

unsigned events_marks_since(unsigned from,
			    void (*fn)(const struct gs_mark *m, unsigned number, void *arg),
			    void *arg)
{
	unsigned made;

	gs_lock(&gs_events_lock);
	made = n_marks;
	if (made - from > GS_MARKS)
		from = made - GS_MARKS;
	for (unsigned i = from; i != made; i++)
		if (marks[i % GS_MARKS].sites)
			fn(&marks[i % GS_MARKS], i, arg);
	gs_unlock(&gs_events_lock);
	return made;
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
		write_failed(GS_PROBLEM_ONDEMAND, v.dir, name, err);
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
	char dir[GS_PROCESS_PATH_SIZE], label[GS_LABEL_MAX] = "signal";
	struct stat st;
	int dfd, fd;

	files_process_dir(dir, sizeof(dir));
	dfd = files_dir_open(dir);
	/* never through a link, only a regular file, at most a label's size */
	fd = dfd < 0 ? -1 :
		       openat(dfd, GS_FILE_REQUEST, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ?
				    read(fd, label, sizeof(label) - 1) :
				    -1;

		close(fd);
		unlinkat(dfd, GS_FILE_REQUEST, 0);
		if (n > 0) {
			label[n] = '\0';
			label[strcspn(label, "\n")] = '\0';
		} else {
			snprintf(label, sizeof(label), "signal");
		}
	}
	if (fd < 0 && dfd >= 0 && errno == ELOOP)
		unlinkat(dfd, GS_FILE_REQUEST, 0); /* a link: removed, unread */
	if (dfd >= 0)
		close(dfd);
	events_snapshot(label);
}
