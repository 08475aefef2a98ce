/* SPDX-License-Identifier: MIT */
/*
 * The writer thread: every GPUSPY_INTERVAL it samples each call site's
 * live bytes, flags the sites that keep growing, and - when anything was
 * allocated or freed since the last time - rewrites snapshot.json, a
 * complete report of that moment (tmp + rename: never torn; a SIGKILL
 * loses at most one interval).
 *
 * Cost grows with the number of call sites, not of live allocations; the
 * allocating threads never wait for its I/O (it reads their lock-free
 * counters).  It starts at the first allocation with every signal blocked,
 * so signals meant for the program never land on it, and it is stopped
 * and joined before the exit report is written.
 *
 * Growth (libgpuspy(7), src/common/trend.h, the rule the PyTorch view
 * applies too): each site's live bytes go into a state of the rule at
 * every sample, from its first sample with live bytes; where the program
 * marks (gpuspy_mark), its live bytes at each mark go into a second state,
 * so that growth from mark to mark is judged whatever happens between
 * them.  A site growing by either is flagged, and named once on stderr;
 * so is a framework's own allocated counter that grows (fw_counters.c),
 * with the site of that framework's pool segments.  The site's verdict -
 * growing, or grew then stopped, with its shape, since, rate and latest
 * rise - is what every file records (struct gs_verdict, published under
 * gs_events_lock), and what the reports print.  A teardown that frees
 * what leaked is a fall, not a stop: it leaves the verdict growing.
 *
 * It also names the new sites' frames (symbols.c) and the sites (their
 * one names, site_names.c) at each interval, before anything it prints
 * or writes needs them and outside every gpuspy lock, so that no
 * allocating thread ever looks for a name.
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conf.h"
#include "core.h"
#include "counters.h"
#include "endpoint.h"
#include "events.h"
#include "history.h"
#include "locks.h"
#include "log.h"
#include "site_walk.h"
#include "sites.h"
#include "state.h"
#include "summary.h"
#include "site_names.h"
#include "symbols.h"
#include "fw_counters.h"
#include "pools.h"
#include "torch_probe.h"
#include "trend.h"
#include "view.h"
#include "writer.h"

static pthread_t thread;
static bool running;
static atomic_bool stop, requested;

/*
 * A series of the rule, kept flat while it can: most sites of a large
 * program hold what they allocated once and never change.  While every
 * sample so far is the same, the series is only that value, its count and
 * its first and latest times (a flat series is never growing), and a
 * sample costs a comparison.  At the first change, the samples so far are
 * pushed into a state of the rule, which so judges the same samples as if
 * it had had them all along: for equal samples the rule reads only the
 * first one's time and the latest's (tests/unit/test_common_trend.c).
 */
struct flat_trend {
	struct gs_trend *t;   /* NULL while flat */
	unsigned long long n; /* samples pushed, all of them v while flat */
	long long v;
	double t0, t_last;
};

/* A site's two series: its samples, and its live bytes at each mark;
 * and what was said of it. */
struct series {
	struct flat_trend samples; /* from its first sample with live bytes */
	struct flat_trend marks;   /* from the first mark after that */
	unsigned mark;		   /* the latest mark pushed into marks, plus 1 */
	/* its verdict as published: the site's verdict points here once
	 * flagged (a series is never freed), written under gs_events_lock */
	struct gs_verdict told;
	int8_t pool; /* enum gs_pool of its frames, once judged */
	bool pooled; /* pool is judged */
};

static int flat_push(struct flat_trend *f, double t, long long x)
{
	if (!f->t && (!f->n || x == f->v)) {
		if (!f->n++) {
			f->v = x;
			f->t0 = t;
		}
		f->t_last = t;
		return 0;
	}
	if (!f->t) {
		f->t = malloc(sizeof(*f->t));
		if (!f->t)
			return -ENOMEM;
		trend_init(f->t);
		for (unsigned long long i = 0; i < f->n; i++)
			trend_push(f->t, i + 1 < f->n ? f->t0 : f->t_last, f->v);
	}
	trend_push(f->t, t, x);
	return 0;
}

/* The state of the rule of F once found growing, or NULL. */
static struct gs_trend *flat_ever(const struct flat_trend *f)
{
	return f->t && trend_ever(f->t) ? f->t : NULL;
}

/* By site id, writer thread only; allocated at a site's first live bytes. */
static struct series **series;
static unsigned n_series, marks_judged;
static unsigned long long samples, written_events = (unsigned long long)-1;
static struct site_walk walk;

/* Verdicts that changed state (found growing, stopped, growing again):
 * writer thread only. */
static unsigned long long verdict_changes;

/* Per framework: the site of its pool segments that its own counter's
 * verdict is said of (never freed), and whether that verdict was named. */
static struct gs_site *fw_site[GS_FW_COUNT];
static bool fw_told[GS_FW_COUNT];

/* The verdict that speaks for a site from its own series: the one still
 * growing, the samples' before the marks'; false when neither fired. */
static bool own_verdict(const struct series *r, struct gs_verdict *v)
{
	const struct gs_trend *sam = flat_ever(&r->samples), *mk = flat_ever(&r->marks);
	struct trend_verdict b;

	if (!sam && !mk)
		return false;
	memset(v, 0, sizeof(*v));
	if (sam)
		trend_verdict(sam, &v->v);
	if (mk) {
		trend_verdict(mk, &b);
		if (!sam || (v->v.state != TREND_GROWING && b.state == TREND_GROWING)) {
			v->v = b;
			v->by = GS_BY_MARKS;
		}
	}
	return true;
}

/* Framework FW's verdict in G: a place still growing first, else the
 * first found growing once, by ordinal; false when none fired. */
static bool fw_verdict(const struct fw_growth *g, unsigned fw, struct gs_verdict *v)
{
	int pick = -1;

	for (unsigned p = 0; p < GS_FW_PLACES; p++) {
		if (!g->has[fw][p])
			continue;
		if (pick < 0 || (g->v[fw][p].state == TREND_GROWING &&
				 g->v[fw][(unsigned)pick].state != TREND_GROWING))
			pick = (int)p;
	}
	if (pick < 0)
		return false;
	*v = (struct gs_verdict){ .v = g->v[fw][pick],
				  .by = GS_BY_FRAMEWORK,
				  .fw = (uint8_t)fw,
				  .place = (uint8_t)pick };
	return true;
}

static bool verdict_same(const struct gs_verdict *a, const struct gs_verdict *b)
{
	return a->v.state == b->v.state && a->v.shape == b->v.shape && a->v.since == b->v.since &&
	       a->v.rate == b->v.rate && a->v.until == b->v.until && a->by == b->by &&
	       a->fw == b->fw && a->place == b->place;
}

/* V is S's verdict now: published where it changed, its growing flag
 * set, and named on stderr the first time (unless QUIET_FIRST: the
 * framework's line named it) and when it stops or grows again. */
static void verdict_publish(struct gs_site *s, struct series *r, const struct gs_verdict *v,
			    bool quiet_first)
{
	int before = r->told.v.state;

	if (!s->verdict || !verdict_same(&r->told, v)) {
		/* with the flag, under the lock: a document says one verdict */
		gs_lock(&gs_events_lock);
		r->told = *v;
		s->verdict = &r->told;
		atomic_store_explicit(&s->growing, v->v.state == TREND_GROWING,
				      memory_order_relaxed);
		gs_unlock(&gs_events_lock);
	}
	if (!atomic_exchange(&s->growth_told, true)) {
		verdict_changes++;
		/* the growing line leads its site's name: named again first */
		site_names_refresh(&walk, true);
		if (!quiet_first)
			summary_growth(s, v);
	} else if (before != v->v.state) {
		verdict_changes++;
		site_names_refresh(&walk, true);
		summary_growth_change(s, v);
	}
}

static bool series_fit(unsigned sites)
{
	struct series **s;

	if (sites <= n_series)
		return true;
	s = realloc(series, sites * sizeof(*s));
	if (!s)
		return false;
	memset(s + n_series, 0, (sites - n_series) * sizeof(*s));
	series = s;
	n_series = sites;
	return true;
}

/* Allocations and frees so far: unchanged means nothing to write. */
static unsigned long long events(void)
{
	/* a framework's new figures are a new moment for snapshot.json too,
	 * and so is a verdict that changed: a site that stopped growing is
	 * said so in the snapshot, though nothing was allocated since */
	return totals_events() + fw_counters_changes() + verdict_changes;
}

/*
 * Mark number N (from 0), under gs_events_lock: each site with a series
 * gets its live bytes then, those the mark did not list 0.  A site first
 * sampled after the mark joins at the next.
 */
static void judge_mark(const struct gs_mark *m, unsigned number, void *arg)
{
	double t = m->time - gs_state.start_time;
	bool *nomem = arg;

	for (unsigned i = 0; i < m->n; i++) {
		struct series *r = m->sites[i].site < n_series ? series[m->sites[i].site] : NULL;

		if (!r)
			continue;
		if (flat_push(&r->marks, t, m->sites[i].live_bytes) < 0) {
			*nomem = true;
			return;
		}
		r->mark = number + 1;
	}
	for (unsigned id = 0; id < n_series; id++) {
		struct series *r = series[id];

		if (r && r->marks.n && r->mark != number + 1) {
			if (flat_push(&r->marks, t, 0) < 0) {
				*nomem = true;
				return;
			}
			r->mark = number + 1;
		}
	}
}

/* The pool S's segments belong to (summary.c judges its frames), once. */
static int series_pool(struct series *r, const struct gs_site *s)
{
	if (!r->pooled) {
		r->pool = (int8_t)summary_site_pool(s);
		r->pooled = true;
	}
	return r->pool;
}

/*
 * The frameworks whose own allocated counter the rule flagged: each said
 * of the site of its pool's segments - the one with most live bytes when
 * first linked, BEST[fw] of this sample - unless that site's own series
 * speak for it; named once on stderr.
 */
static void judge_frameworks(const struct fw_growth *g, struct gs_site *const *best)
{
	for (unsigned fw = 0; fw < GS_FW_COUNT; fw++) {
		struct gs_verdict v, own;
		struct series *r;
		struct gs_site *s;

		if (!fw_verdict(g, fw, &v))
			continue;
		if (!fw_site[fw] && best[fw]) {
			fw_site[fw] = best[fw];
			gs_lock(&gs_events_lock);
			fw_counters_link(fw, best[fw]->id);
			gs_unlock(&gs_events_lock);
		}
		s = fw_site[fw];
		/* where the PyTorch view runs, its line names the tensors'
		 * line that grows: the pool's growth is its consequence */
		if (!fw_told[fw]) {
			fw_told[fw] = true;
			if (fw != GS_FW_PYTORCH || !torch_view_on())
				summary_growth_fw(&v, g->allocated[fw][v.place], s);
		}
		r = s && s->id < n_series ? series[s->id] : NULL;
		if (r && !own_verdict(r, &own))
			verdict_publish(s, r, &v, true);
	}
}

static void tick(void)
{
	struct gs_site *best[GS_FW_COUNT] = { 0 };
	long long best_live[GS_FW_COUNT] = { 0 };
	static struct fw_growth fg; /* 3 KiB: not on the thread's stack */
	unsigned long long ev;
	bool nomem = false, unlinked = false;
	double now;

	if (site_walk_refresh(&walk) < 0 || !series_fit(walk.n)) {
		gs_fail("out of memory in the snapshot thread");
		return;
	}
	/* the growth line, the file and the metrics below name them */
	symbols_name(&walk);
	site_names_refresh(&walk, false);
	marks_judged = events_marks_since(marks_judged, judge_mark, &nomem);
	if (nomem) {
		gs_fail("out of memory in the snapshot thread");
		return;
	}
	gs_lock(&gs_events_lock);
	fw_counters_growth(&fg);
	gs_unlock(&gs_events_lock);
	/* a framework's counter found growing, without its pool's site yet:
	 * only then are the sites' frames judged for a pool */
	for (unsigned fw = 0; fw < GS_FW_COUNT; fw++)
		for (unsigned p = 0; p < GS_FW_PLACES && !fw_site[fw]; p++)
			unlinked |= fg.has[fw][p];
	samples++;
	now = gs_now() - gs_state.start_time;
	for (unsigned i = 0; i < walk.n; i++) {
		struct gs_site *s = site_walk_at(&walk, i);
		struct series *r;
		struct gs_verdict v;
		long long live;
		int fw;

		if (i + SITE_WALK_AHEAD < n_series && series[i + SITE_WALK_AHEAD])
			__builtin_prefetch(series[i + SITE_WALK_AHEAD]);
		if (!s || s->kind == GS_KIND_PINNED || s->id >= n_series)
			continue;
		live = counters_live_bytes(&s->c);
		r = series[s->id];
		if (!r) {
			if (live <= 0)
				continue;
			r = series[s->id] = calloc(1, sizeof(struct series));
			if (!r) {
				gs_fail("out of memory in the snapshot thread");
				return;
			}
		}
		if (flat_push(&r->samples, now, live) < 0) {
			gs_fail("out of memory in the snapshot thread");
			return;
		}
		/* a flat series is not growing, its marks may be */
		if (own_verdict(r, &v))
			verdict_publish(s, r, &v, false);
		/* the largest of each framework's pool sites, while a
		 * framework's counter found growing has none yet */
		fw = unlinked && live > 0 ? pools_framework(series_pool(r, s)) : -1;
		if (fw >= 0 && !fw_site[fw] && live > best_live[fw]) {
			best[fw] = s;
			best_live[fw] = live;
		}
	}
	judge_frameworks(&fg, best);
	history_tick();
	ev = events();
	/* one not written is tried again at the next interval */
	if (ev != written_events && events_periodic(samples) == 0)
		written_events = ev;
}

/*
 * On-demand snapshots: GPUSPY_SIGNAL (default SIGUSR2; `gpuspy snapshot
 * PID` sends it).  The handler only raises a flag and posts the
 * semaphore the thread sleeps on, both async-signal-safe.
 */
static void on_signal(int sig)
{
	int saved = errno;

	atomic_store(&requested, true);
	sem_post(&gs_wake_sem);
	errno = saved;
}

/* a naming pass asked for out of turn (writer_wake_names); alive: the
 * thread runs and will answer */
static atomic_bool names_asked, alive;

bool writer_wake_names(void)
{
	if (!atomic_load(&gs_wake_ready) || !atomic_load(&alive))
		return false;
	atomic_store(&names_asked, true);
	sem_post(&gs_wake_sem);
	return true;
}

static void install_signal(void)
{
	struct sigaction sa, old;

	if (gs_config.signal <= 0)
		return;
	/* A program that handles this signal itself keeps it. */
	if (sigaction(gs_config.signal, NULL, &old) == 0 && old.sa_handler != SIG_DFL &&
	    old.sa_handler != on_signal)
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(gs_config.signal, &sa, NULL);
}

static void *writer_main(void *arg)
{
	struct timespec next;

	clock_gettime(CLOCK_MONOTONIC, &next);
	/* PyTorch allocates its first block once CUDA is initialized: the
	 * sooner its view starts, the fewer blocks it misses */
	if (atomic_load(&gs_state.tracking)) {
		torch_poll();
		/* the first page names the sites already there */
		writer_name_sites();
		endpoint_start();
	}
	while (!atomic_load(&stop)) {
		bool periodic = gs_config.interval_us > 0;
		int r;

		if (periodic) {
			next.tv_sec += (time_t)(gs_config.interval_us / 1000000);
			next.tv_nsec += (long)(gs_config.interval_us % 1000000) * 1000;
			if (next.tv_nsec >= 1000000000) {
				next.tv_sec++;
				next.tv_nsec -= 1000000000;
			}
		}
		do {
			struct timespec soon;
			/* the PyTorch view, while it waits to start, is asked
			 * more often than the interval (torch_probe.c) */
			bool early = periodic && torch_waiting(&soon) &&
				     (soon.tv_sec < next.tv_sec ||
				      (soon.tv_sec == next.tv_sec && soon.tv_nsec < next.tv_nsec));

			r = periodic ? sem_clockwait(&gs_wake_sem, CLOCK_MONOTONIC,
						     early ? &soon : &next) :
				       sem_wait(&gs_wake_sem);
			if (r == 0 && atomic_exchange(&requested, false) &&
			    atomic_load(&gs_state.tracking)) {
				writer_name_sites();
				events_requested();
			}
			if (r == 0 && atomic_exchange(&gs_wake_torch_asked, false) &&
			    atomic_load(&gs_state.tracking))
				torch_poll();
			if (r == 0 && atomic_exchange(&names_asked, false) &&
			    atomic_load(&gs_state.tracking))
				writer_name_sites();
			if (r < 0 && errno == ETIMEDOUT && early) {
				if (atomic_load(&gs_state.tracking))
					torch_poll();
				r = 0;
			}
		} while ((r == 0 && !atomic_load(&stop)) || (r < 0 && errno == EINTR));
		if (atomic_load(&stop))
			break;
		if (atomic_load(&gs_state.tracking)) {
			tick();
			torch_poll();
			endpoint_publish();
		}
	}
	return NULL;
}

void writer_start(void)
{
	sigset_t all, old;
	int err;

	if (running)
		return;
	/* the page is made after each sample: without samples, none */
	if (gs_config.interval_us == 0 && gs_config.prometheus)
		gs_warn("GPUSPY_PROMETHEUS needs periodic samples, and GPUSPY_INTERVAL=0 has none; "
			"no metrics endpoint");
	if (gs_config.interval_us == 0 && gs_config.signal <= 0)
		return;
	atomic_store(&stop, false);
	sem_init(&gs_wake_sem, 0, 0);
	atomic_store(&gs_wake_ready, true);
	/* Born with every signal blocked: the program's handlers must run on
	 * the program's threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&thread, NULL, writer_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		gs_warn("cannot start the snapshot thread: %s; no periodic snapshots",
			strerror(err));
		return;
	}
	running = true;
	atomic_store(&alive, true);
	install_signal();
}

void writer_stop(void)
{
	if (!running)
		return;
	atomic_store(&alive, false);
	atomic_store(&stop, true);
	sem_post(&gs_wake_sem);
	pthread_join(thread, NULL);
	running = false;
}

void writer_name_sites(void)
{
	/* a failed refresh names the sites known so far */
	site_walk_refresh(&walk);
	symbols_name(&walk);
	site_names_refresh(&walk, true);
}

/* fork(): the thread is not in the child; a child that keeps tracking
 * (forked before any allocation) starts its own at its first one. */
void writer_forget(void)
{
	running = false;
	atomic_store(&alive, false);
	atomic_store(&stop, false);
}
