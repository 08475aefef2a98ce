/* SPDX-License-Identifier: MIT */
/*
 * gpuspy top PATH|PID: what a running job holds on the GPU, refreshed in
 * place.
 *
 * Each refresh reads PATH again as 'gpuspy report' does (a process that
 * has not exited is read from the snapshot.json its gpuspy thread rewrites
 * every GPUSPY_INTERVAL), merges it, and shows the totals and the call
 * sites that hold most, each with a sparkline of its live bytes.  The
 * sparklines start from the job's own history (history.jsonl) where a
 * process has one: on the first refresh, each site's series from the start
 * of the job is cut into HISTORY - 1 spans of equal time, the latest value
 * of each (what a refresh then would have read), summed over the
 * processes; every refresh then appends one column and the oldest go.
 * So the first frame already shows the trend of a job that was leaking
 * before top was opened; the whole run rather than its last 20 samples,
 * because a slow leak is flat over 20 intervals.
 *
 * On a terminal it draws on the alternate screen and reads single keys;
 * otherwise it prints one plain block per refresh, for logs and pipes, and
 * stops by itself once every process has written its report at exit.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "discover.h"
#include "growth_view.h"
#include "load_history.h"
#include "merge.h"
#include "print.h"
#include "util.h"

#define DEFAULT_TOP 10 /* call sites per block when not on a terminal */
#define HISTORY	    20 /* refreshes a sparkline spans */
#define SITE_MIN    28 /* columns a site's name keeps before the others go */
#define SPARK_MIN   8  /* the sparkline's narrowest, before it goes last */

static const char usage[] =
	"Usage: gpuspy top [--interval SEC] [--top N] [--count N] [PATH|PID]\n"
	"\n"
	"Show what a running job holds on the GPU, refreshed every interval: the\n"
	"totals, each device, and the call sites with most live memory, each with\n"
	"its live bytes over the last 20 refreshes (from the job's start, read\n"
	"from its history, on the first).  PATH is what 'gpuspy report'\n"
	"reads; PID stands for that process's directory.  On a terminal, q quits;\n"
	"otherwise one block is printed per refresh, until every process has\n"
	"written its report at exit.  A PATH that does not exist yet is waited for.\n"
	"\n"
	"  -i, --interval SEC  seconds between refreshes (default 1; 0.2 is fine)\n"
	"  -n, --top N         call sites shown (default: as many as fit the\n"
	"                      terminal, else 10); 0 means all\n"
	"  -c, --count N       stop after N refreshes (0, the default: never)\n"
	"  -h, --help          show this help\n";

/* The columns before a site's name, fitted to the terminal's width:
 * the sparkline narrows, then the count goes, then GROWING becomes "+",
 * then the sparkline goes, so that the name stays readable. */
struct top_layout {
	int spark; /* columns of the sparkline, 0 to HISTORY */
	bool count;
	int flag; /* 7: "GROWING", 1: "+" */
};

/* A site's live bytes at the last refreshes, oldest first. */
struct hist {
	char *key;
	int64_t v[HISTORY];
	size_t n;
};

struct top {
	const char *path;	/* what is read */
	char dir[PATH_MAX * 2]; /* PID's process directory */
	pid_t pid;		/* > 0: PATH is that process's directory */
	double interval;
	size_t top; /* 0: all, or as many as fit */
	bool tty;   /* drawn in place on a terminal that can (struct term_caps) */
	bool keys;  /* stdin may still send keys */
	struct term_caps tc;
	struct top_layout lay;
	bool missing;		/* PATH does not exist yet */
	bool said_waiting;	/* a pipe has been told what is waited for */
	struct symbolizer *sym; /* kept: it caches the modules it opened */
	/* the view: the last load that worked */
	struct rd_process_list list;
	struct rd_report rep;
	bool have;
	bool gone;	     /* process PID has exited */
	struct rd_error err; /* why the last refresh failed; "" when it worked */
	struct hist *hist;   /* one per site of the view, by key */
	size_t nhist;
	bool seeded; /* the history files were read */
	struct termios saved;
	bool termios_set;
};

static volatile sig_atomic_t quit_signal, resized;

static void on_signal(int sig)
{
	if (sig == SIGWINCH)
		resized = 1;
	else
		quit_signal = sig;
}

/* A usage error: one line, then status 2. */
static int usage_error(const char *what, const char *arg)
{
	return cli_usage_error("top", what, arg);
}

static int parse_interval(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	/* below 10 ms the refreshes would only burn the CPU: the files
	 * change at most every GPUSPY_INTERVAL */
	if (errno || end == s || *end || !isfinite(v) || v < 0.01 || v > 86400)
		return -EINVAL;
	*out = v;
	return 0;
}

/* All digits, and a process of that id: a PID rather than a path. */
static pid_t parse_pid(const char *s)
{
	char proc[32];
	long pid;

	if (!*s || strspn(s, "0123456789") != strlen(s) || strlen(s) > 10)
		return 0;
	pid = strtol(s, NULL, 10);
	if (pid <= 0 || pid > INT_MAX)
		return 0;
	snprintf(proc, sizeof(proc), "/proc/%ld", pid);
	return access(proc, F_OK) == 0 ? (pid_t)pid : 0;
}

static int cmp_hist(const void *pa, const void *pb)
{
	return strcmp(((const struct hist *)pa)->key, ((const struct hist *)pb)->key);
}

static struct hist *hist_find(const struct top *t, const char *key)
{
	struct hist k = { .key = (char *)key };

	if (!t->nhist)
		return NULL;
	return bsearch(&k, t->hist, t->nhist, sizeof(k), cmp_hist);
}

static void hist_free(struct hist *h, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(h[i].key);
	free(h);
}

/* The history key of a PyTorch view line: apart from call sites' keys. */
static char *torch_key(const struct rd_report_tsite *s)
{
	char *k = malloc(strlen(s->key) + 7);

	if (k) {
		stpcpy(stpcpy(k, "torch\t"), s->key);
	}
	return k;
}

/* One more sample for every site of R, and every line of its PyTorch
 * view: a new history, in which what is no longer reported is forgotten. */
static int hist_update(struct top *t, const struct rd_report *r)
{
	size_t n = r->nsites + r->torch.nsites;
	struct hist *nh = calloc(n + 1, sizeof(*nh));

	if (!nh)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		bool site = i < r->nsites;
		const struct rd_report_tsite *ts = site ? NULL : r->torch.sites[i - r->nsites];
		char *key = site ? strdup(r->sites[i]->key) : torch_key(ts);
		const struct hist *old = key ? hist_find(t, key) : NULL;
		struct hist *h = &nh[i];

		if (!key) {
			hist_free(nh, i);
			return -ENOMEM;
		}
		if (old) {
			memcpy(h->v, old->v, sizeof(h->v));
			h->n = old->n;
		}
		h->key = key;
		if (h->n == HISTORY)
			memmove(h->v, h->v + 1, (HISTORY - 1) * sizeof(h->v[0]));
		else
			h->n++;
		h->v[h->n - 1] = site ? r->sites[i]->c.live_bytes : ts->live_bytes;
	}
	qsort(nh, n, sizeof(*nh), cmp_hist);
	hist_free(t->hist, t->nhist);
	t->hist = nh;
	t->nhist = n;
	return 0;
}

/* The first sparklines, from the history of every process of R that has
 * one (see the top of this file); T->hist is empty then.  A history that
 * cannot be read seeds nothing: 'gpuspy report' is where it is refused. */
static int hist_seed(struct top *t, const struct rd_report *r)
{
	struct hist *nh = calloc(r->nsites + 1, sizeof(*nh));
	size_t n = 0;

	if (!nh)
		return -ENOMEM;
	for (size_t p = 0; p < r->nprocs; p++) {
		struct rd_history h;
		struct rd_error err;
		struct rd_site_series *ss = NULL;
		size_t nss = 0;
		int e = load_history(r->procs[p], &h, &err);

		if (e == 0 && h.present)
			e = growth_process_series(r, p, &h, &ss, &nss);
		rd_history_clear(&h);
		if (e == -ENOMEM) {
			hist_free(nh, n);
			return e;
		}
		for (size_t j = 0; j < nss; j++) {
			int64_t v[HISTORY - 1];
			size_t c = growth_columns(ss[j].rows, ss[j].nrows, HISTORY - 1,
						  GROWTH_PICK_LAST, NULL, v);
			struct hist *x = NULL;

			for (size_t i = 0; i < n && !x; i++)
				if (strcmp(nh[i].key, ss[j].site->key) == 0)
					x = &nh[i];
			if (!c)
				continue;
			if (!x) {
				x = &nh[n];
				x->key = strdup(ss[j].site->key);
				if (!x->key) {
					growth_series_free(ss, nss);
					hist_free(nh, n);
					return -ENOMEM;
				}
				n++;
			}
			/* right-aligned: every process's columns end now */
			for (size_t i = 0; i < c; i++)
				x->v[HISTORY - 1 - c + i] += v[i];
			if (x->n < c)
				x->n = c;
		}
		growth_series_free(ss, nss);
	}
	/* the values sit at the end of V: move them to its start */
	for (size_t i = 0; i < n; i++)
		memmove(nh[i].v, nh[i].v + HISTORY - 1 - nh[i].n, nh[i].n * sizeof(nh[i].v[0]));
	qsort(nh, n, sizeof(*nh), cmp_hist);
	hist_free(t->hist, t->nhist);
	t->hist = nh;
	t->nhist = n;
	return 0;
}

/* Read PATH again.  A failure replaces nothing: the view shown stays the
 * last one that loaded (a file may be mid-replacement, or its process be
 * writing a report we cannot read yet), and says why it is stale.  A path
 * that is not there yet (PID's directory before its first allocation), or
 * a directory without reports yet, is waited for: -ENOENT only when PATH
 * itself is missing and was named by the user. */
static int refresh(struct top *t, struct rd_error *err)
{
	struct rd_process_list list = { 0 };
	struct rd_report rep;
	struct stat st;
	int e;

	/* before loading: a process that exits writes its report first */
	if (t->pid > 0 && kill(t->pid, 0) < 0 && errno == ESRCH)
		t->gone = true;
	err->msg[0] = '\0';
	e = discover_path(&list, t->path, err);
	if (e < 0) {
		rd_process_list_clear(&list);
		/* a directory the job has not created yet (top started
		 * before it) is waited for too, as for a PID */
		bool exists = stat(t->path, &st) == 0;

		t->missing = !exists && errno == ENOENT;
		if (e == -ENOENT && !t->have &&
		    (t->pid > 0 || t->missing || (exists && S_ISDIR(st.st_mode)))) {
			err->msg[0] = '\0';
			return 0;
		}
		return e;
	}
	t->missing = false;
	/* A process that cannot be read is left out and shown (render) when
	 * it never could be; one the view holds is mid-replacement, as any
	 * file that turns bad: the refresh fails, the view stays.  None left
	 * is a failure like any. */
	for (size_t i = 0; i < list.nunreadable; i++) {
		const struct rd_unreadable *u = &list.unreadable[i];
		bool held = list.n == 0;

		for (size_t k = 0; t->have && !held && k < t->list.n; k++)
			held = strcmp(t->list.items[k]->path, u->path) == 0;
		if (held) {
			e = u->error;
			snprintf(err->msg, sizeof(err->msg), "%s", u->msg);
			rd_process_list_clear(&list);
			return e;
		}
	}
	e = merge_build(&rep, &list, t->sym, err);
	if (e < 0) {
		rd_process_list_clear(&list);
		return e;
	}
	e = 0;
	if (!t->seeded && rep.nprocs > 0) {
		t->seeded = true;
		e = hist_seed(t, &rep);
	}
	if (e == 0)
		e = hist_update(t, &rep);
	if (e < 0) {
		rd_error_set(err, NULL, "out of memory");
		merge_clear(&rep);
		rd_process_list_clear(&list);
		return e;
	}
	if (t->have) {
		merge_clear(&t->rep);
		rd_process_list_clear(&t->list);
	}
	t->rep = rep;
	t->list = list;
	t->have = true;
	return 0;
}

/* Whether nothing will change any more: every process has written its
 * report at exit, or process PID is gone. */
static bool finished(const struct top *t)
{
	return t->gone || (t->have && t->rep.nprocs > 0 && t->rep.partial == 0);
}

static int cmp_live(const void *pa, const void *pb)
{
	const struct rd_report_site *a = *(struct rd_report_site *const *)pa;
	const struct rd_report_site *b = *(struct rd_report_site *const *)pb;

	if (a->c.live_bytes != b->c.live_bytes)
		return a->c.live_bytes > b->c.live_bytes ? -1 : 1;
	return strcmp(a->key, b->key);
}

static int cmp_device(const void *pa, const void *pb)
{
	const struct rd_device *a = pa, *b = pb;

	return (a->device > b->device) - (a->device < b->device);
}

/* WIDTH columns, right-aligned: one block per refresh, the latest WIDTH,
 * each scaled to the site's own highest in the window (a small site's
 * growth shows as well as a big one's). */
static void put_spark(FILE *out, const struct hist *h, int width)
{
	static const char *const blocks[] = {
		"\u2581", "\u2582", "\u2583", "\u2584", "\u2585", "\u2586", "\u2587", "\u2588",
	};
	static const char ascii[] = "_.-=#";
	int levels = cli_utf8() ? 8 : 5;
	size_t n = h ? h->n : 0, from = n > (size_t)width ? n - (size_t)width : 0;
	int64_t max = 0;

	for (size_t i = from; i < n; i++)
		if (h->v[i] > max)
			max = h->v[i];
	fprintf(out, "%*s", (int)((size_t)width - (n - from)), "");
	for (size_t i = from; i < n; i++) {
		int k = max > 0 ? (int)((double)h->v[i] * (levels - 1) / (double)max + 0.5) : 0;

		k = k < 0 ? 0 : k >= levels ? levels - 1 : k;
		if (levels == 8)
			fputs(blocks[k], out);
		else
			putc(ascii[k], out);
	}
}

/* The columns before a name, as T->lay has them: a heading (H the
 * sparkline's, G the flag's, COUNT the count's) when LIVE is a heading,
 * else a row of the live bytes, the COUNT and the sparkline of H. */
static void put_columns(FILE *out, const struct top *t, const char *live, const char *count,
			const struct hist *h, const char *heading, bool growing)
{
	const struct top_layout *l = &t->lay;

	fprintf(out, "%10s", live);
	if (l->count)
		fprintf(out, " %8s", count);
	fputs("  ", out);
	if (l->spark) {
		if (heading)
			fprintf(out, "%*s", l->spark,
				(int)strlen(heading) <= l->spark ? heading : "");
		else
			put_spark(out, h, l->spark);
		fputs("  ", out);
	}
	fprintf(out, "%-*s  ", l->flag, !growing ? "" : l->flag >= 7 ? "GROWING" : "+");
}

static void put_site(FILE *out, const struct top *t, const struct rd_report_site *s)
{
	char a[32], n[24];

	snprintf(n, sizeof(n), "%" PRId64, s->c.live_allocations);
	put_columns(out, t, util_human_size(s->c.live_bytes, a, sizeof(a)), n, hist_find(t, s->key),
		    NULL, s->growing);
	/* the site's one name, as the report lists it */
	fputs(merge_site_name(s), out);
	if (s->library)
		fprintf(out, " [library memory: %s]", s->library);
	if (s->pool)
		fprintf(out, " [pool segment: %s]", s->pool);
	putc('\n', out);
}

/* The PyTorch view's lines that hold memory, at most MAX (0: all): inside
 * the caching allocator's segments, which the call sites above are. */
static void put_torch(FILE *out, const struct top *t, size_t max)
{
	const struct rd_report_torch *v = &t->rep.torch;
	size_t shown = 0;
	char a[32], b[32];

	if (t->tty)
		putc('\n', out);
	put_columns(out, t, "LIVE", "BLOCKS", NULL, "", false);
	fprintf(out, "PYTORCH TENSORS (%s of a %s pool)\n",
		util_human_size(v->live_bytes, a, sizeof(a)),
		util_human_size(v->reserved_bytes, b, sizeof(b)));
	for (size_t i = 0; i < v->nsites && (!max || shown < max); i++) {
		const struct rd_report_tsite *s = v->sites[i];
		ssize_t h = torch_merge_headline(s);
		char *key, n[24];

		if (s->live_bytes <= 0 && !s->growing)
			continue;
		shown++;
		snprintf(n, sizeof(n), "%" PRId64, s->live_blocks);
		key = torch_key(s);
		put_columns(out, t, util_human_size(s->live_bytes, a, sizeof(a)), n,
			    key ? hist_find(t, key) : NULL, NULL, s->growing);
		free(key);
		if (h < 0 || !s->name)
			fputs("(allocated before the PyTorch view started)", out);
		else
			fprintf(out, "%s%s", s->name,
				s->from_segment ? " (from gpuspy's record of its segment)" : "");
		putc('\n', out);
	}
}

/* Live GPU memory per device ordinal, summed over the processes. */
static void put_devices(FILE *out, const struct top *t)
{
	struct rd_device *devs;
	size_t n = 0, max = 0;
	char a[32];

	for (size_t i = 0; i < t->rep.nprocs; i++)
		max += t->rep.procs[i]->ndevices;
	devs = calloc(max + 1, sizeof(*devs));
	if (!devs || max == 0) {
		free(devs);
		return;
	}
	for (size_t i = 0; i < t->rep.nprocs; i++) {
		const struct rd_process *p = t->rep.procs[i];

		for (size_t j = 0; j < p->ndevices; j++) {
			size_t k = 0;

			while (k < n && devs[k].device != p->devices[j].device)
				k++;
			if (k == n)
				devs[n++].device = p->devices[j].device;
			devs[k].live_bytes += p->devices[j].live_bytes;
			devs[k].live_allocations += p->devices[j].live_allocations;
		}
	}
	qsort(devs, n, sizeof(*devs), cmp_device);
	for (size_t k = 0; k < n; k++) {
		fprintf(out, "%s", k ? ", " : "");
		if (devs[k].device < 0)
			fputs("unknown device: ", out);
		else
			fprintf(out, "device %" PRId64 ": ", devs[k].device);
		fprintf(out, "%s in %" PRId64, util_human_size(devs[k].live_bytes, a, sizeof(a)),
			devs[k].live_allocations);
	}
	putc('\n', out);
	free(devs);
}

/* The lines of one refresh; on a terminal the call sites are cut to what
 * fits ROWS. */
static void render(FILE *out, char **buf, size_t *len, const struct top *t, size_t rows)
{
	const struct rd_report *r = &t->rep;
	int64_t live = 0, pinned = 0;
	struct rd_report_site **order;
	size_t n = 0, shown, room = 0, used = 0;
	char stamp[32], heading[16], a[32], b[32], c[32];
	time_t now = time(NULL);

	strftime(stamp, sizeof(stamp), t->tty ? "%H:%M:%S" : "%Y-%m-%d %H:%M:%S", localtime(&now));
	if (t->tty)
		fprintf(out, "gpuspy top  %s  every %g s  q: quit\n", stamp, t->interval);
	else
		fprintf(out, "--- gpuspy top %s ---\n", stamp);
	if (!t->have) {
		fputs("waiting for ", out);
		cli_put_clean(out, t->path);
		if (t->missing)
			fputs(" (it does not exist yet)", out);
		if (t->gone)
			fprintf(out, " (process %d has exited)", (int)t->pid);
		putc('\n', out);
		if (t->err.msg[0])
			fprintf(out, "cannot read it: %s\n", t->err.msg);
		if (!t->tty)
			putc('\n', out);
		return;
	}
	cli_put_clean(out, t->path);
	fprintf(out, ": %zu %s, %zu running", r->nprocs, r->nprocs == 1 ? "process" : "processes",
		r->partial);
	if (t->gone && r->partial)
		fprintf(out, " (process %d has exited without a report)", (int)t->pid);
	putc('\n', out);
	text_print_unreadable(out, r, "");
	/* nothing will change: the figures are the end's, not live ones */
	if (finished(t)) {
		if (t->gone && r->partial)
			fputs("finished: the figures are those of its last snapshot\n", out);
		else if (t->gone)
			fprintf(out, "finished: process %d has exited\n", (int)t->pid);
		else
			fputs("finished: every process has written its report at exit\n", out);
	}
	/* the message was sanitized when it was made */
	if (t->err.msg[0])
		fprintf(out, "not refreshed: %s\n", t->err.msg);
	for (size_t i = 0; i < r->nprocs; i++) {
		const struct rd_process *p = r->procs[i];

		live += p->kinds[GS_KIND_DEVICE].live_bytes + p->kinds[GS_KIND_MANAGED].live_bytes +
			p->kinds[GS_KIND_VMM].live_bytes;
		pinned += p->kinds[GS_KIND_PINNED].live_bytes;
	}
	fprintf(out, "%s %s  peak %s  pinned host %s\n",
		!finished(t)	      ? "live" :
		t->gone && r->partial ? "live at the last snapshot" :
					"live at exit",
		util_human_size(live, a, sizeof(a)), util_human_size(r->peak_bytes, b, sizeof(b)),
		util_human_size(pinned, c, sizeof(c)));
	put_devices(out, t);

	/* sites that hold memory now, or held some within the sparkline's
	 * window: one that just freed everything shows its fall */
	order = calloc(r->nsites + 1, sizeof(*order));
	if (!order)
		return;
	for (size_t i = 0; i < r->nsites; i++) {
		const struct hist *h = hist_find(t, r->sites[i]->key);
		bool held = r->sites[i]->c.live_bytes > 0;

		for (size_t k = 0; h && !held && k < h->n; k++)
			held = h->v[k] > 0;
		if (held)
			order[n++] = r->sites[i];
	}
	qsort(order, n, sizeof(*order), cmp_live);
	shown = t->top && t->top < n ? t->top : n;
	if (t->tty) {
		fflush(out);
		for (size_t i = 0; i < *len; i++)
			used += (*buf)[i] == '\n';
		room = rows > used + 2 ? rows - used - 2 : 0; /* blank, heading */
		if (shown > room)
			shown = room;
	}
	snprintf(heading, sizeof(heading), "LAST %d", HISTORY);
	/* on a pipe a block is one paragraph, for readers that split on
	 * blank lines */
	if (t->tty)
		putc('\n', out);
	put_columns(out, t, "LIVE", "ALLOCS", NULL, heading, false);
	fprintf(out, "CALL SITES (%zu of %zu)\n", shown, n);
	if (n == 0)
		fputs("  no GPU memory live\n", out);
	for (size_t i = 0; i < shown; i++)
		put_site(out, t, order[i]);
	if (r->torch.present)
		put_torch(out, t, t->tty ? (room > shown + 2 ? room - shown - 2 : 0) : t->top);
	if (!t->tty)
		putc('\n', out);
	free(order);
}

/* The widest columns that leave a site's name SITE_MIN of COLS (a
 * pipe's lines are not cut: all of them). */
static struct top_layout layout_for(size_t cols)
{
	struct top_layout l = { .spark = HISTORY, .count = true, .flag = 7 };
	int room = cols > INT_MAX ? INT_MAX : (int)cols;

#define PREFIX(l) (10 + ((l).count ? 9 : 0) + 2 + ((l).spark ? (l).spark + 2 : 0) + (l).flag + 2)
	while (room - PREFIX(l) < SITE_MIN) {
		if (l.spark > SPARK_MIN)
			l.spark = SPARK_MIN > l.spark - (SITE_MIN - room + PREFIX(l)) ?
					  SPARK_MIN :
					  l.spark - (SITE_MIN - room + PREFIX(l));
		else if (l.count)
			l.count = false;
		else if (l.flag > 1)
			l.flag = 1;
		else if (l.spark)
			l.spark = 0;
		else
			break;
	}
#undef PREFIX
	return l;
}

/* Draw the view: a block on a pipe, the whole screen on a terminal, each
 * line cut to its width (counted in UTF-8 characters). */
static int draw(struct top *t)
{
	struct winsize ws;
	size_t rows = 24, cols = 80, len = 0, row = 0;
	char *buf = NULL;
	const char *line, *end;
	FILE *m;

	if (t->tty) {
		if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row && ws.ws_col) {
			rows = ws.ws_row;
			cols = ws.ws_col;
		} else if (t->tc.nlines > 0 && t->tc.ncols > 0) {
			rows = (size_t)t->tc.nlines;
			cols = (size_t)t->tc.ncols;
		}
	} else if (!t->have && t->said_waiting) {
		/* a log says once what it waits for */
		return 0;
	}
	t->lay = layout_for(t->tty ? cols : SIZE_MAX);
	t->said_waiting = !t->have;
	m = open_memstream(&buf, &len);
	if (!m)
		return -ENOMEM;
	render(m, &buf, &len, t, rows);
	if (fclose(m) != 0) {
		free(buf);
		return -ENOMEM;
	}
	if (!t->tty) {
		fwrite(buf, 1, len, stdout);
	} else {
		cli_term_put(t->tc.home);
		for (line = buf, end = buf + len; line < end && row < rows; row++) {
			const char *nl = memchr(line, '\n', end - line);
			size_t n = nl ? (size_t)(nl - line) : (size_t)(end - line), i, w = 0;

			for (i = 0; i < n; i++)
				if (((unsigned char)line[i] & 0xc0) != 0x80 && w++ == cols)
					break;
			/* no newline after the last row: it would scroll */
			fprintf(stdout, "%s%.*s", row ? "\r\n" : "", (int)i, line);
			cli_term_put(t->tc.el);
			line += n + 1;
		}
		cli_term_put(t->tc.ed);
	}
	free(buf);
	return fflush(stdout) == 0 ? 0 : -errno;
}

/* CLOCK_MONOTONIC, in seconds: a refresh waits whatever the wall clock does. */
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Wait until DEADLINE (now_s) for a key or a signal, the signals unblocked
 * only inside ppoll so that none is lost between the check and the wait:
 * 1 to quit ('q', SIGINT, SIGTERM, SIGHUP), 2 for a resized window, 0 at
 * the deadline. */
static int wait_event(struct top *t, double deadline, const sigset_t *mask)
{
	struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
	struct timespec left;
	double s;
	char c;

	for (;;) {
		if (quit_signal)
			return 1;
		if (resized) {
			resized = 0;
			return 2;
		}
		s = deadline - now_s();
		if (s <= 0)
			return 0;
		left.tv_sec = (time_t)s;
		left.tv_nsec = (long)((s - (double)left.tv_sec) * 1e9);
		if (ppoll(&pfd, t->keys ? 1 : 0, &left, mask) <= 0)
			continue; /* a signal (checked above), or the deadline */
		if (read(STDIN_FILENO, &c, 1) != 1)
			t->keys = false; /* end of input: wait for signals only */
		else if (c == 'q' || c == 'Q')
			return 1;
	}
}

/* Single keys without echo (Ctrl-C still interrupts), the alternate
 * screen, no cursor; term_leave undoes each. */
static void term_enter(struct top *t)
{
	struct termios tio;

	if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &t->saved) == 0) {
		tio = t->saved;
		tio.c_lflag &= ~(ICANON | ECHO);
		tio.c_cc[VMIN] = 1;
		tio.c_cc[VTIME] = 0;
		t->termios_set = tcsetattr(STDIN_FILENO, TCSANOW, &tio) == 0;
	}
	cli_term_put(t->tc.smcup);
	cli_term_put(t->tc.civis);
	fflush(stdout);
}

static void term_leave(struct top *t)
{
	cli_term_put(t->tc.rmcup);
	cli_term_put(t->tc.cnorm);
	fflush(stdout);
	if (t->termios_set)
		tcsetattr(STDIN_FILENO, TCSANOW, &t->saved);
}

int cmd_top(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "top", required_argument, NULL, 'n' },
		{ "count", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	static const int view_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGWINCH };
	struct top t = { .interval = 1.0 };
	struct sigaction sa = { .sa_handler = on_signal };
	sigset_t block, unblocked;
	size_t count = 0, n;
	bool top_given = false;
	int c, e, status = EXIT_OK;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":i:n:c:h", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			if (parse_interval(optarg, &t.interval) < 0)
				return usage_error("--interval needs seconds (0.01 or more), not",
						   optarg);
			break;
		case 'n':
			if (cli_parse_count(optarg, &t.top) < 0)
				return usage_error("--top needs a number, not", optarg);
			top_given = true;
			break;
		case 'c':
			if (cli_parse_count(optarg, &count) < 0)
				return usage_error("--count needs a number, not", optarg);
			break;
		case 'h':
			fputs(usage, stdout);
			return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAILURE_OTHER;
		case ':':
			return usage_error("missing value for", argv[optind - 1]);
		default:
			return usage_error("unknown option", argv[optind - 1]);
		}
	}
	if (optind + 1 < argc)
		return usage_error("one PATH or PID only, not also", argv[optind + 1]);
	t.pid = optind < argc ? parse_pid(argv[optind]) : 0;
	if (t.pid > 0) {
		procfs_process_dir(t.pid, t.dir, sizeof(t.dir));
		t.path = t.dir;
	} else {
		/* the report.txt the library names stands for its directory;
		 * no PATH, or an output directory: its latest run */
		static char *run;
		char *dir = optind < argc ? cli_text_report_dir(argv[optind]) : NULL;

		e = cli_run_path("top", dir ? dir : optind < argc ? argv[optind] : NULL, 0, &run);
		free(dir);
		if (e != EXIT_OK)
			return e;
		t.path = run;
	}
	/* keys only on a terminal: a pipe's reader may share our stdin */
	t.tty = t.keys = cli_term_caps(&t.tc);
	if (!top_given)
		t.top = t.tty ? 0 : DEFAULT_TOP;

	/* The first load decides whether PATH is readable at all, before
	 * the terminal is touched: its error stays on the normal screen. */
	e = symbolizer_new(&t.sym);
	if (e == 0)
		e = refresh(&t, &t.err);
	if (e < 0) {
		cli_print_error(&t.err, e);
		symbolizer_free(t.sym);
		return e == -ENOMEM ? EXIT_FAILURE_OTHER : EXIT_USAGE;
	}
	/* on the normal screen too, before the view takes it */
	if (t.have)
		cli_said_unreadable(&t.list, false);

	/* The signals that end or redraw the view are taken only while
	 * waiting (wait_event); a reader that goes away is a write error. */
	sigemptyset(&block);
	for (size_t i = 0; i < sizeof(view_signals) / sizeof(view_signals[0]); i++) {
		/* a pipe's blocks do not depend on the window */
		if (view_signals[i] == SIGWINCH && !t.tty)
			continue;
		sigaction(view_signals[i], &sa, NULL);
		sigaddset(&block, view_signals[i]);
	}
	signal(SIGPIPE, SIG_IGN);
	sigprocmask(SIG_BLOCK, &block, &unblocked);
	if (t.tty)
		term_enter(&t);

	for (n = 1;; n++) {
		double deadline;
		bool last;
		int ev;

		e = draw(&t);
		if (e < 0)
			break;
		/* on a terminal the last view stays up for one interval */
		last = count && n >= count;
		if (!t.tty && (last || finished(&t)))
			break;
		deadline = now_s() + t.interval;
		while ((ev = wait_event(&t, deadline, &unblocked)) == 2 && (e = draw(&t)) == 0)
			;
		if (ev != 0 || last)
			break;
		e = refresh(&t, &t.err);
		if (e < 0 && !t.err.msg[0])
			rd_error_set(&t.err, NULL, "%s", strerror(-e));
	}

	if (t.tty)
		term_leave(&t);
	/* a reader that has gone (a closed pipe, a hung-up terminal) ends it
	 * quietly, like an interrupt */
	if (e < 0 && e != -EPIPE && e != -EIO && !quit_signal) {
		cli_error(NULL, "cannot write the view: %s", strerror(-e));
		status = EXIT_FAILURE_OTHER;
	}
	sigprocmask(SIG_SETMASK, &unblocked, NULL);
	hist_free(t.hist, t.nhist);
	if (t.have) {
		merge_clear(&t.rep);
		rd_process_list_clear(&t.list);
	}
	symbolizer_free(t.sym);
	return status;
}
