/* SPDX-License-Identifier: MIT */
/*
 * gpuspy exporter RUN_DIR: one Prometheus endpoint for every process that
 * writes into a run directory, for a node's DaemonSet or a job's sidecar,
 * and for jobs that cannot open ports of their own.
 *
 * Each scrape of /metrics is answered from a page that this thread
 * prepares: the server's thread (http.h) only copies it.  A scrape that
 * finds the page older than REFRESH_S wakes this thread, which reads the
 * run directory again as 'gpuspy report' does, and waits for the new page
 * at most WAIT_S.  So the run directory is read at most once a REFRESH_S
 * however many clients ask, and never when nobody does.
 *
 * A running process is read from the snapshot.json its gpuspy thread
 * rewrites (with torch.json) at an interval when something was allocated
 * or freed since the last one, and from its history.jsonl, which gets a
 * line every interval: the snapshot's counters and sites are exact until
 * the next allocation or free, and the history's last line is the moment
 * they are from, and what changes without one (NVML's view of the
 * process, the frameworks' pools).
 *
 * The page is written by the one formatter of src/common/prom.h, the same
 * families as the process's own endpoint (GPUSPY_PROMETHEUS), each series
 * with the labels host and rank of its process (label_ranks()).  A
 * process's report that cannot be read is left out with one line on
 * stderr, said again only when what is wrong changes.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "discover.h"
#include "env.h"
#include "http.h"
#include "load_history.h"
#include "merge.h"
#include "print.h"
#include "prom.h"
#include "util.h"
#include "wrong_device.h"

/* The in-process endpoint's default is 9464, and the ranks of a node take
 * the ports above it (9464 + LOCAL_RANK): an exporter beside them takes the
 * one below. */
#define EXPORTER_LISTEN_DEFAULT "127.0.0.1:9463"
#define REFRESH_S		1.0 /* a page younger than this is served as it is */
#define WAIT_S			2.0 /* a scrape waits this long for a fresh page */
/* A process that has not written its report at exit is served while its
 * last sample (history.jsonl) is younger than STALE_INTERVALS of its
 * GPUSPY_INTERVAL, and at least STALE_MIN_S: one that was killed drops out
 * then. */
#define STALE_INTERVALS 5
#define STALE_MIN_S	30.0
/* processes on one page at most: a run directory is untrusted input */
#define MAX_PROCESSES 4096

static const char usage[] =
	"Usage: gpuspy exporter [--listen ADDR] RUN_DIR\n"
	"\n"
	"Serve the Prometheus metrics of every process running in RUN_DIR on\n"
	"http://ADDR/metrics, as each would serve them itself with\n"
	"GPUSPY_PROMETHEUS, with the labels host and rank on every series; from\n"
	"their snapshots, read again at most once a second.  An output directory\n"
	"(./gpuspy-out) stands for its latest run; a RUN_DIR that does not exist\n"
	"yet is waited for.  Runs until SIGINT or SIGTERM.\n"
	"\n"
	"  -l, --listen ADDR   PORT, IPV4:PORT or [IPV6]:PORT (default " EXPORTER_LISTEN_DEFAULT
	");\n"
	"                      a non-loopback address is said on stderr\n"
	"  -h, --help          show this help\n";

/* A line said on stderr about PATH, kept so that it is not said again at
 * every refresh while it stays true. */
struct said {
	char *path;
	char *msg;
	bool seen; /* at this refresh */
};

/* One process of the page and what its prom_process points into. */
struct served {
	struct rd_process_list list; /* that one process */
	struct rd_report rep;
	struct rd_history hist;
	const struct rd_hist_row *last; /* its last sample or bucket, or NULL */
	double time;			/* when the figures are from; -1: unknown */
	const struct rd_process *p;
	char rank[48];
	char *command;
	struct prom_label labels[2 + PROM_PLACE_LABELS];
	struct prom_place place; /* pod, namespace, container, MIG: prom.h */
	struct prom_process pp;
	struct prom_device *devices;
	struct prom_nvml *nvml;
	struct prom_pool *pools;
	bool *pool_view; /* pools[i] is PyTorch's from the PyTorch view */
	struct prom_site *sites;
	char (*keys)[MERGE_DIGEST_SIZE];
	char **names;
	size_t nnames;
};

struct exporter {
	const char *dir; /* the run directory */
	unsigned top;
	struct symbolizer *sym; /* kept: it caches the modules it opened */
	struct said *said;
	size_t nsaid;
	bool said_missing; /* that DIR is not there */
	bool said_cap;
	char *dir_msg; /* the last error said about DIR itself */

	/* shared with the server's thread, under LOCK */
	pthread_mutex_t lock;
	pthread_cond_t fresh; /* GEN moved on */
	char *page;
	size_t len;
	double page_time; /* now_s() of the refresh that made it */
	unsigned long gen;
	bool asked; /* a wake-up is in the pipe */
	bool stopping;
	int wake[2]; /* the server's thread -> this one */
};

static volatile sig_atomic_t quit_signal;

static void on_signal(int sig)
{
	quit_signal = sig;
}

/* CLOCK_MONOTONIC, in seconds. */
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* "gpuspy exporter: MSG" once while it stays what is said of PATH. */
static void say(struct exporter *x, const char *path, const char *msg)
{
	struct said *s = NULL, *n;

	for (size_t i = 0; i < x->nsaid && !s; i++)
		if (strcmp(x->said[i].path, path) == 0)
			s = &x->said[i];
	if (s && s->msg && strcmp(s->msg, msg) == 0) {
		s->seen = true;
		return;
	}
	fputs("gpuspy exporter: ", stderr);
	cli_put_clean(stderr, msg);
	fputs(" (left out)\n", stderr);
	if (!s) {
		n = reallocarray(x->said, x->nsaid + 1, sizeof(*n));
		if (!n)
			return;
		x->said = n;
		s = &n[x->nsaid];
		s->path = strdup(path);
		s->msg = NULL;
		if (!s->path)
			return;
		x->nsaid++;
	}
	free(s->msg);
	s->msg = strdup(msg);
	if (!s->msg)
		s->msg = strdup("");
	s->seen = s->msg != NULL;
}

/* Forget what was said of paths that were not met at this refresh (read
 * well, or gone): said again when they go wrong again. */
static void said_sweep(struct exporter *x)
{
	size_t k = 0;

	for (size_t i = 0; i < x->nsaid; i++) {
		if (x->said[i].seen && x->said[i].msg) {
			x->said[i].seen = false;
			x->said[k++] = x->said[i];
		} else {
			free(x->said[i].path);
			free(x->said[i].msg);
		}
	}
	x->nsaid = k;
}

/* Whether the process of S is still writing: not read from its report at
 * exit, not known to have been killed, and alive on this host or its last
 * sample recent.  Its pid alone cannot tell: an exporter in another
 * container does not see it. */
static bool still_writing(const struct served *s, double now)
{
	const struct rd_process *p = s->p;
	double interval = p->snapshot.periodic ? (double)p->snapshot.interval_us / 1e6 :
			  s->hist.present      ? s->hist.interval_s :
						 0;
	double stale = interval * STALE_INTERVALS;

	if (!rd_state_not_exited(p->state) || p->state == RD_STATE_KILLED ||
	    p->state == RD_STATE_EXECED)
		return false;
	if (stale < STALE_MIN_S)
		stale = STALE_MIN_S;
	return p->state == RD_STATE_RUNNING || s->time < 0 || now - s->time <= stale;
}

/* The last sample or bucket of S's history, and the moment S's figures
 * are from: that line's, or the snapshot's when it is later. */
static void last_sample(struct served *s)
{
	const struct rd_history *h = &s->hist;

	s->time = s->p->end_time;
	for (size_t i = h->present ? h->nrows : 0; i-- > 0 && !s->last;)
		if (h->rows[i].type != RD_HIST_EVENT)
			s->last = &h->rows[i];
	if (s->last && h->start + s->last->t1 > s->time)
		s->time = h->start + s->last->t1;
}

static void served_free(struct served *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nnames; i++)
		free(s->names[i]);
	free(s->names);
	free(s->keys);
	free(s->sites);
	free(s->pools);
	free(s->pool_view);
	free(s->nvml);
	free(s->devices);
	free(s->command);
	rd_history_clear(&s->hist);
	merge_clear(&s->rep);
	rd_process_list_clear(&s->list);
	free(s);
}

static int cmp_names(const void *a, const void *b)
{
	return strverscmp(*(char *const *)a, *(char *const *)b);
}

/* Site S's one name, as the reports list it. */
static char *site_name(const struct rd_report_site *s)
{
	return strdup(merge_site_name(s));
}

static char *join_command(const struct rd_process *p)
{
	size_t len = 1;
	char *s, *e;

	for (size_t i = 0; i < p->ncommand; i++)
		len += strlen(p->command[i]) + 1;
	s = malloc(len);
	if (!s)
		return NULL;
	e = s;
	*e = '\0';
	for (size_t i = 0; i < p->ncommand; i++) {
		if (i)
			*e++ = ' ';
		e = stpcpy(e, p->command[i]);
	}
	return s;
}

static uint64_t u64(int64_t v)
{
	return v > 0 ? (uint64_t)v : 0;
}

static struct prom_nvml *nvml_of(struct served *s, int64_t index)
{
	struct prom_process *pp = &s->pp;

	for (size_t i = 0; i < pp->nnvml; i++)
		if (s->nvml[i].index == index)
			return &s->nvml[i];
	s->nvml[pp->nnvml] = (struct prom_nvml){ .index = (int)index };
	return &s->nvml[pp->nnvml++];
}

/* Framework FW's pool on DEVICE, added when new.  PyTorch's from the
 * PyTorch view (VIEW) is NULL where its own counters gave that pool, as
 * the process's own endpoint has it. */
static struct prom_pool *pool_of(struct served *s, int fw, int64_t device, bool view)
{
	struct prom_process *pp = &s->pp;

	for (size_t i = 0; i < pp->npools; i++)
		if (s->pools[i].device == device && s->pools[i].framework == names_fw[fw])
			return view && !s->pool_view[i] ? NULL : &s->pools[i];
	s->pools[pp->npools] =
		(struct prom_pool){ .device = (int)device, .framework = names_fw[fw] };
	s->pool_view[pp->npools] = view;
	return &s->pools[pp->npools++];
}

/* What changes without an allocation or a free, from the history's last
 * line: what NVML says the process uses, the frameworks' pools (their
 * counters first: they win over the PyTorch view's).  The arrays have
 * room for one entry per series. */
static void apply_history(struct served *s)
{
	const struct rd_hist_row *row = s->last;

	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; row && i < row->count; i++) {
			const struct rd_hist_value *v = &s->hist.values[row->first + i];
			const struct rd_hist_series *se = &s->hist.series[v->series];
			bool reserved = se->kind == RD_HIST_POOL_RESERVED;
			int fw = GS_FW_PYTORCH, place, counter;
			struct prom_nvml *nv;
			struct prom_pool *pl;

			if (pass == 0 && se->kind == RD_HIST_OUTSIDE) {
				nv = nvml_of(s, se->key);
				nv->has_used = true;
				nv->used = u64(v->last);
				continue;
			}
			if (pass == 0 && se->kind == RD_HIST_FW) {
				rd_hist_fw_split(se->key, &fw, &place, &counter);
				if (fw < 0 || fw >= GS_FW_COUNT || place < 0 ||
				    place >= GS_FW_DEVICES ||
				    (counter != GS_FWC_RESERVED && counter != GS_FWC_ALLOCATED))
					continue;
				reserved = counter == GS_FWC_RESERVED;
				pl = pool_of(s, fw, place, false);
			} else if (pass == 1 && (reserved || se->kind == RD_HIST_POOL_ALLOCATED)) {
				pl = pool_of(s, GS_FW_PYTORCH, se->key, true);
			} else {
				continue;
			}
			if (!pl)
				continue;
			if (reserved) {
				pl->has_reserved = true;
				pl->reserved = u64(v->last);
			} else {
				pl->has_allocated = true;
				pl->allocated = u64(v->last);
			}
		}
}

/* Variable NAME of the environment process ARG recorded, or NULL. */
static const char *recorded_env(const char *name, void *arg)
{
	const struct rd_process *p = arg;

	for (size_t i = 0; i < p->nenv; i++)
		if (strcmp(p->env[i].name, name) == 0)
			return p->env[i].value;
	return NULL;
}

/* S's prom_process from its process and its report (the process's sites
 * merged by key and symbolized, as 'gpuspy report' names them). */
static int fill(struct served *s)
{
	const struct rd_process *p = s->p;
	const struct rd_report *r = &s->rep;
	struct prom_process *pp = &s->pp;
	size_t n = 0, npools;
	int64_t growing = 0;

	pp->pid = (long)p->pid;
	pp->host = p->host;
	pp->rank = s->rank;
	pp->version = p->version;
	s->command = join_command(p);
	if (!s->command)
		return -ENOMEM;
	pp->command = s->command;
	s->labels[0] = (struct prom_label){ "host", p->host };
	s->labels[1] = (struct prom_label){ "rank", s->rank };
	/* where the process ran, from the environment it recorded */
	prom_place_from_env(&s->place, recorded_env, (void *)p);
	memcpy(s->labels + 2, s->place.labels, s->place.nlabels * sizeof(*s->labels));
	pp->labels = s->labels;
	pp->nlabels = 2 + s->place.nlabels;

	for (int k = 0; k < GS_KIND_COUNT; k++) {
		const struct rd_counters *c = &p->kinds[k];
		struct prom_kind_counts *pk = &pp->kinds[k];

		/* every kind, as the process serves them: 0 is a value */
		pk->has = true;
		pk->live = u64(c->live_bytes);
		pk->peak = u64(c->peak_bytes);
		pk->allocs = u64(c->allocations);
		pk->frees = u64(c->frees);
		pk->alloc_bytes = u64(c->allocated_bytes);
		pk->freed_bytes = u64(c->freed_bytes);
		growing += p->folded[k].growing;
		if (p->folded[k].c.live_bytes > 0) {
			pp->folded_live[k] = u64(p->folded[k].c.live_bytes);
			pp->folded_sites += u64(p->folded[k].sites);
		}
	}
	pp->has_gpu_peak = true;
	pp->gpu_peak = u64(p->peak_bytes);
	pp->has_oom = true;
	pp->oom_events = u64((int64_t)p->noom + p->oom_dropped);
	pp->has_limit = p->limit_bytes > 0;
	pp->limit = u64(p->limit_bytes);
	for (size_t i = 0; i < p->nsites; i++)
		growing += p->sites[i].growing;
	pp->has_growing = true;
	pp->growing_sites = u64(growing);
	pp->has_sample_time = s->time >= 0;
	pp->sample_time = s->time;

	/* the history's NVML and pool series may add entries */
	s->devices = calloc(p->ndevices + 1, sizeof(*s->devices));
	s->nvml = calloc(p->outside.ngpus + s->hist.nseries + 1, sizeof(*s->nvml));
	npools = (size_t)GS_FW_COUNT * GS_FW_DEVICES + p->torch.ndevices + s->hist.nseries + 1;
	s->pools = calloc(npools, sizeof(*s->pools));
	s->pool_view = calloc(npools, sizeof(*s->pool_view));
	s->sites = calloc(r->nsites + 1, sizeof(*s->sites));
	s->keys = calloc(r->nsites + 1, sizeof(*s->keys));
	s->names = calloc(r->nsites + 1, sizeof(*s->names));
	if (!s->devices || !s->nvml || !s->pools || !s->pool_view || !s->sites || !s->keys ||
	    !s->names)
		return -ENOMEM;
	for (size_t i = 0; i < p->ndevices; i++)
		s->devices[i] = (struct prom_device){ (int)p->devices[i].device,
						      u64(p->devices[i].live_bytes) };
	pp->devices = s->devices;
	pp->own_device = rd_wrong_own_device(p);
	pp->has_own_device = pp->own_device >= 0;
	pp->ndevices = p->ndevices;
	/* NVML's view names every process on the GPU: this one's by pid */
	for (size_t i = 0; p->outside.present && i < p->outside.ngpus; i++) {
		const struct rd_outside_gpu *g = &p->outside.gpus[i];
		struct prom_nvml *v = &s->nvml[n++];

		v->index = (int)g->index;
		v->has_device_used = g->used_bytes >= 0;
		v->device_used = u64(g->used_bytes);
		v->has_device_total = g->total_bytes >= 0;
		v->device_total = u64(g->total_bytes);
		for (size_t j = 0; j < g->nprocs; j++)
			if (g->procs[j].pid == p->pid) {
				v->has_used = true;
				v->used = u64(g->procs[j].used_bytes);
			}
	}
	pp->nvml = s->nvml;
	pp->nnvml = n;
	/* the frameworks' pools from their own counters ("frameworks"), per
	 * CUDA device (CuPy's pinned host pool has no device label); then
	 * PyTorch's from the PyTorch view where its counters have nothing */
	pp->pools = s->pools;
	pp->npools = 0;
	for (int f = 0; p->frameworks.present && f < GS_FW_COUNT; f++)
		for (int d = 0; d < GS_FW_DEVICES; d++) {
			const bool *has = p->frameworks.has[f][d];
			const int64_t *v = p->frameworks.v[f][d];
			struct prom_pool *pl;

			if (!has[GS_FWC_RESERVED] && !has[GS_FWC_ALLOCATED])
				continue;
			pl = pool_of(s, f, d, false);
			pl->has_reserved = has[GS_FWC_RESERVED];
			pl->reserved = u64(v[GS_FWC_RESERVED]);
			pl->has_allocated = has[GS_FWC_ALLOCATED];
			pl->allocated = u64(v[GS_FWC_ALLOCATED]);
		}
	for (size_t i = 0; p->torch.present && i < p->torch.ndevices; i++) {
		const struct rd_torch_device *d = &p->torch.devices[i];
		struct prom_pool *pl = pool_of(s, GS_FW_PYTORCH, d->device, true);

		if (!pl)
			continue;
		pl->has_reserved = pl->has_allocated = true;
		pl->reserved = u64(d->reserved_bytes);
		pl->allocated = u64(d->allocated_bytes);
	}
	apply_history(s);

	n = 0;
	for (size_t i = 0; i < r->nsites; i++) {
		const struct rd_report_site *rs = r->sites[i];

		if (rs->c.live_bytes <= 0)
			continue;
		s->names[s->nnames] = site_name(rs);
		if (!s->names[s->nnames])
			return -ENOMEM;
		merge_key_digest(rs->key, s->keys[n], sizeof(s->keys[n]));
		s->sites[n] = (struct prom_site){
			.key = s->keys[n],
			.name = s->names[s->nnames++],
			.kind = (int)rs->kind,
			.live = u64(rs->c.live_bytes),
			.growing = rs->growing,
		};
		n++;
	}
	pp->sites = s->sites;
	pp->nsites = n;
	return 0;
}

/*
 * The rank label of each process of S: its RANK (else LOCAL_RANK), or
 * "none" without one; a second process of that host with the same one
 * (a rank's data loader workers, which inherit RANK) gets ".1" after it,
 * a third ".2", by the order of their start.  Bounded by the processes of
 * the run directory, and stable while it grows (new processes start
 * later); never the pid, which would make a new series of every run.
 */
static int cmp_start(const void *pa, const void *pb)
{
	const struct served *a = *(struct served *const *)pa, *b = *(struct served *const *)pb;
	int c = strcmp(a->p->host, b->p->host);

	if (c)
		return c;
	if (a->p->rank != b->p->rank)
		return a->p->rank < b->p->rank ? -1 : 1;
	if (a->p->start_time != b->p->start_time)
		return a->p->start_time < b->p->start_time ? -1 : 1;
	return strverscmp(a->p->path, b->p->path);
}

static int label_ranks(struct served **s, size_t n)
{
	struct served **order = calloc(n + 1, sizeof(*order));
	size_t same = 0;

	if (!order)
		return -ENOMEM;
	memcpy(order, s, n * sizeof(*order));
	qsort(order, n, sizeof(*order), cmp_start);
	for (size_t i = 0; i < n; i++) {
		const struct rd_process *p = order[i]->p;
		int w;

		if (i && strcmp(order[i - 1]->p->host, p->host) == 0 &&
		    order[i - 1]->p->rank == p->rank)
			same++;
		else
			same = 0;
		if (p->rank >= 0)
			w = snprintf(order[i]->rank, sizeof(order[i]->rank), "%" PRId64, p->rank);
		else
			w = snprintf(order[i]->rank, sizeof(order[i]->rank), "none");
		if (same)
			snprintf(order[i]->rank + w, sizeof(order[i]->rank) - (size_t)w, ".%zu",
				 same);
	}
	free(order);
	return 0;
}

/* The process of directory PATH, when it is one that is still writing:
 * 1 with *OUT, 0 when it is not (or its report is refused: said), -ENOMEM. */
static int load_served(struct exporter *x, const char *path, double now, struct served **out)
{
	struct rd_error err = { .msg = "" };
	struct served *s = calloc(1, sizeof(*s));
	int r;

	*out = NULL;
	if (!s)
		return -ENOMEM;
	r = discover_process_dir(&s->list, path, &err);
	if (r > 0) {
		s->p = s->list.items[0];
		/* a process that exited has no history to read */
		if (rd_state_not_exited(s->p->state))
			r = load_history(s->p, &s->hist, &err);
		r = r < 0 ? r : 1;
	}
	if (r > 0) {
		last_sample(s);
		if (!still_writing(s, now))
			r = 0;
	}
	if (r > 0) {
		r = merge_build(&s->rep, &s->list, x->sym, &err);
		r = r < 0 ? r : 1;
	}
	if (r == -ENOMEM) {
		served_free(s);
		return r;
	}
	if (r < 0 && !err.msg[0])
		rd_error_set(&err, path, "%s", strerror(-r));
	if (r < 0)
		say(x, path, err.msg);
	if (r <= 0) {
		served_free(s);
		return 0;
	}
	*out = s;
	return 1;
}

/* The names in directory DIR, sorted as 'gpuspy report' reads them;
 * -errno. */
static int list_dir(const char *dir, char ***namesp, size_t *np)
{
	char **names = NULL, **nn;
	size_t n = 0;
	struct dirent *de;
	DIR *d = opendir(dir);
	int r = 0;

	*namesp = NULL;
	*np = 0;
	if (!d)
		return -errno;
	while ((errno = 0, de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		nn = reallocarray(names, n + 1, sizeof(*names));
		if (!nn || !(nn[n] = strdup(de->d_name))) {
			names = nn ? nn : names;
			r = -ENOMEM;
			break;
		}
		names = nn;
		n++;
	}
	if (!r && errno)
		r = -errno;
	closedir(d);
	if (r < 0) {
		for (size_t i = 0; i < n; i++)
			free(names[i]);
		free(names);
		return r;
	}
	if (n > 1)
		qsort(names, n, sizeof(*names), cmp_names);
	*namesp = names;
	*np = n;
	return 0;
}

/* What is wrong with the run directory itself, once while it stays so. */
static void say_dir(struct exporter *x, const char *msg)
{
	if (x->dir_msg && strcmp(x->dir_msg, msg) == 0)
		return;
	fputs("gpuspy exporter: ", stderr);
	cli_put_clean(stderr, x->dir);
	fprintf(stderr, ": %s\n", msg);
	free(x->dir_msg);
	x->dir_msg = strdup(msg);
}

/* Read the run directory again and write the page into B. */
static int refresh(struct exporter *x, struct prom_buf *b)
{
	struct served **s = NULL, *one;
	struct prom_process **pp = NULL;
	char **names = NULL;
	size_t nnames = 0, n = 0;
	double now = wall_s();
	int r;

	/* a process directory named itself is that one process */
	r = load_served(x, x->dir, now, &one);
	if (r < 0)
		return r;
	if (r > 0) {
		s = calloc(1, sizeof(*s));
		if (!s) {
			served_free(one);
			return -ENOMEM;
		}
		s[n++] = one;
	} else {
		r = list_dir(x->dir, &names, &nnames);
		if (r == -ENOMEM)
			return r;
		if (r < 0) {
			/* a run directory not made yet, or removed: an empty
			 * page until it is there */
			say_dir(x, r == -ENOENT ?
					   "not there (yet): serving no process until it is" :
					   strerror(-r));
			nnames = 0;
			r = 0;
		} else if (x->dir_msg) {
			free(x->dir_msg);
			x->dir_msg = NULL;
		}
		s = calloc(nnames + 1, sizeof(*s));
		if (!s)
			r = -ENOMEM;
		for (size_t i = 0; s && i < nnames; i++) {
			char *path = util_path_join(x->dir, names[i]);

			r = path ? load_served(x, path, now, &one) : -ENOMEM;
			free(path);
			if (r < 0)
				break;
			if (r == 0)
				continue;
			if (n == MAX_PROCESSES) {
				if (!x->said_cap)
					say_dir(x, "holds more than 4096 running processes: "
						   "the others are left out");
				x->said_cap = true;
				served_free(one);
				continue;
			}
			s[n++] = one;
		}
		for (size_t i = 0; i < nnames; i++)
			free(names[i]);
		free(names);
	}
	said_sweep(x);
	r = r < 0 ? r : label_ranks(s, n);
	pp = calloc(n + 1, sizeof(*pp));
	if (!pp && r >= 0)
		r = -ENOMEM;
	for (size_t i = 0; r >= 0 && i < n; i++) {
		r = fill(s[i]);
		pp[i] = &s[i]->pp;
	}
	if (r >= 0)
		r = prom_write(b, pp, n, x->top);
	for (size_t i = 0; i < n; i++)
		served_free(s[i]);
	free(s);
	free(pp);
	return r < 0 ? r : 0;
}

/* The server's thread: the page, fresh within REFRESH_S (waited for at
 * most WAIT_S), else the last one. */
static void handler(void *ctx, const char *path, struct http_reply *reply)
{
	struct exporter *x = ctx;
	struct timespec until;
	unsigned long gen;
	char *body;
	size_t len;

	if (strcmp(path, "/metrics") != 0)
		return;
	pthread_mutex_lock(&x->lock);
	if (now_s() - x->page_time >= REFRESH_S && !x->stopping) {
		gen = x->gen;
		if (!x->asked) {
			x->asked = true;
			/* a full pipe already holds a wake-up */
			(void)!write(x->wake[1], "", 1);
		}
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += (time_t)WAIT_S;
		while (x->gen == gen && !x->stopping &&
		       pthread_cond_timedwait(&x->fresh, &x->lock, &until) != ETIMEDOUT)
			;
	}
	len = x->len;
	body = malloc(len + 1);
	if (body)
		memcpy(body, x->page, len);
	pthread_mutex_unlock(&x->lock);
	if (!body) {
		reply->status = 503;
		return;
	}
	reply->status = 200;
	reply->type = PROM_CONTENT_TYPE;
	reply->body = body;
	reply->len = len;
}

/* A new page, in place of the last one; on failure the last one stays
 * (said once), and waiters are woken either way. */
static void publish(struct exporter *x)
{
	struct prom_buf b = { 0 };
	int e = refresh(x, &b);

	if (e == 0 && !b.p)
		prom_buf_append(&b, "", 0);
	if (e == 0 && b.err)
		e = b.err;
	if (e < 0)
		say_dir(x, strerror(-e));
	pthread_mutex_lock(&x->lock);
	if (e == 0) {
		free(x->page);
		x->page = b.p;
		x->len = b.len;
		b.p = NULL;
	}
	x->page_time = now_s();
	x->gen++;
	x->asked = false;
	pthread_cond_broadcast(&x->fresh);
	pthread_mutex_unlock(&x->lock);
	prom_buf_free(&b);
}

static int usage_error(const char *what, const char *arg)
{
	return cli_usage_error("exporter", what, arg);
}

int cmd_exporter(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct exporter x = { .top = PROM_TOP_DEFAULT, .wake = { -1, -1 } };
	struct sigaction sa = { .sa_handler = on_signal };
	struct http_opts ho = { .handler = handler, .ctx = &x };
	struct http_server *srv = NULL;
	const char *listen = EXPORTER_LISTEN_DEFAULT;
	struct sockaddr_storage ss;
	pthread_condattr_t ca;
	sigset_t block, unblocked;
	socklen_t sl;
	bool explicit;
	char err[256], *run = NULL, *dir;
	const char *top_env;
	int c, e, status = EXIT_OK;

	/* each process is served or said apart (load_served): a bad history
	 * is its process's refusal, as it always was */
	rd_read_setup(NULL, true);
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":l:h", opts, NULL)) != -1) {
		switch (c) {
		case 'l':
			listen = optarg;
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
	if (optind == argc)
		return usage_error("a RUN_DIR is needed", NULL);
	if (optind + 1 < argc)
		return usage_error("one RUN_DIR only, not also", argv[optind + 1]);
	if (http_parse_addr(listen, &ss, &sl, &explicit) < 0)
		return usage_error("--listen needs PORT, IPV4:PORT or [IPV6]:PORT, not", listen);
	/* the report.txt the library names stands for its directory; an
	 * output directory for its latest run, taken now */
	dir = cli_text_report_dir(argv[optind]);
	e = cli_run_path("exporter", dir ? dir : argv[optind], 0, &run);
	free(dir);
	if (e != EXIT_OK)
		return e;
	x.dir = run;
	/* as many sites by name as the processes serve themselves */
	top_env = getenv("GPUSPY_PROMETHEUS_TOP");
	if (top_env && *top_env && env_uint(top_env, PROM_TOP_MAX, &x.top) < 0)
		fprintf(stderr,
			"gpuspy exporter: GPUSPY_PROMETHEUS_TOP=%.40s is not a number from 0 to %d: "
			"%d sites\n",
			top_env, PROM_TOP_MAX, PROM_TOP_DEFAULT);

	e = symbolizer_new(&x.sym);
	if (e < 0) {
		cli_error(NULL, "out of memory");
		free(run);
		return EXIT_FAILURE_OTHER;
	}
	pthread_mutex_init(&x.lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&x.fresh, &ca);
	pthread_condattr_destroy(&ca);

	/* SIGINT and SIGTERM are taken only while waiting (ppoll), and the
	 * server's thread starts with them blocked; a client that goes away
	 * is its write error, not our death */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	pthread_sigmask(SIG_BLOCK, &block, &unblocked);

	if (pipe2(x.wake, O_CLOEXEC | O_NONBLOCK) < 0) {
		cli_error(NULL, "cannot make a pipe: %s", strerror(errno));
		status = EXIT_FAILURE_OTHER;
		goto out;
	}
	ho.addr = listen;
	e = http_start(&ho, &srv, err, sizeof(err));
	if (e < 0) {
		cli_error(NULL, "%s", err);
		status = e == -EINVAL ? EXIT_USAGE : EXIT_FAILURE_OTHER;
		goto out;
	}
	fputs("gpuspy exporter: serving ", stderr);
	cli_put_clean(stderr, x.dir);
	fprintf(stderr, " on http://%s/metrics", http_bound(srv));
	if (!http_is_loopback(&ss))
		fputs(" (not a loopback address: other hosts can read it)", stderr);
	fputc('\n', stderr);
	/* the first page at once: a scrape before it waits for it */
	publish(&x);

	while (!quit_signal) {
		struct pollfd pfd = { .fd = x.wake[0], .events = POLLIN };
		char drain[64];

		if (ppoll(&pfd, 1, NULL, &unblocked) <= 0)
			continue; /* a signal: the loop's test */
		while (read(x.wake[0], drain, sizeof(drain)) > 0)
			;
		publish(&x);
	}

out:
	pthread_mutex_lock(&x.lock);
	x.stopping = true;
	pthread_cond_broadcast(&x.fresh);
	pthread_mutex_unlock(&x.lock);
	http_stop(srv);
	pthread_sigmask(SIG_SETMASK, &unblocked, NULL);
	if (x.wake[0] >= 0) {
		close(x.wake[0]);
		close(x.wake[1]);
	}
	pthread_cond_destroy(&x.fresh);
	pthread_mutex_destroy(&x.lock);
	for (size_t i = 0; i < x.nsaid; i++) {
		free(x.said[i].path);
		free(x.said[i].msg);
	}
	free(x.said);
	free(x.dir_msg);
	free(x.page);
	symbolizer_free(x.sym);
	free(run);
	return status;
}
