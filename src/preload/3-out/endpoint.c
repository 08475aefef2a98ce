/* SPDX-License-Identifier: MIT */
/*
 * The Prometheus endpoint (GPUSPY_PROMETHEUS, libgpuspy(7), PROMETHEUS):
 * /metrics in the text format of src/common/prom.c, served by
 * src/common/http.c from a thread of its own.
 *
 * A scrape never costs the program or the snapshots anything but a copy:
 * the snapshot thread, which has every figure at hand after its sample,
 * builds the page once per interval and swaps it in under gs_metrics_lock;
 * the server's thread only copies the latest page under the same lock.
 * A client, however slow or hostile, meets the server's limits and never
 * a gpuspy lock held for longer than a memcpy.
 *
 * Started by the snapshot thread, so at the first allocation: a launcher
 * that never touches CUDA (torchrun, a shell) never takes the port.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "config.h"
#include "counters.h"
#include "driver.h"
#include "endpoint.h"
#include "env.h"
#include "files.h"
#include "fw_counters.h"
#include "history.h"
#include "http.h"
#include "locks.h"
#include "log.h"
#include "names.h"
#include "nvml.h"
#include "peak.h"
#include "prom.h"
#include "ranks.h"
#include "real.h"
#include "site_names.h"
#include "site_walk.h"
#include "sites.h"
#include "state.h"
#include "summary.h"
#include "symbols.h"

/* The snapshot thread's (and the exit's, once it is joined). */
static struct http_server *server;
static struct site_walk walk;
static bool device_seen[GS_MAX_DEVICES];
/* set once before `served`, read by any thread after it; the exit report,
 * written before the server stops, names it */
static char bound[HTTP_ADDR_MAX];
static atomic_bool served;

/* Under gs_metrics_lock. */
static char *page;
static size_t page_len;

/* A site's labels, made the first time it ranks among the top. */
struct site_labels {
	char key[17];
	char *name;
};
static struct site_labels **labels; /* by site id */
static unsigned n_labels;

/* What gpuspy_info says, read once at start. */
static char host[GS_HOST_SIZE], rank[24], command[256];
/* RANK and LOCAL_RANK (-1: not set), for the device the rank owns */
static int64_t rank_value = -1, local_rank_value = -1;
/* pod, namespace, container, MIG device: on every series (prom.h) */
static struct prom_place place;

static const char *env_get(const char *name, void *arg)
{
	(void)arg;
	return getenv(name);
}

const char *endpoint_address(void)
{
	return atomic_load_explicit(&served, memory_order_acquire) ? bound : NULL;
}

/* In the server's thread: a copy of the latest page, nothing else. */
static void handler(void *ctx, const char *path, struct http_reply *r)
{
	(void)ctx;
	if (strcmp(path, "/metrics") != 0)
		return;
	gs_lock(&gs_metrics_lock);
	if (page) {
		r->body = malloc(page_len ? page_len : 1);
		if (r->body) {
			memcpy(r->body, page, page_len);
			r->len = page_len;
		}
	}
	gs_unlock(&gs_metrics_lock);
	r->status = r->body ? 200 : 503;
	r->type = r->body ? PROM_CONTENT_TYPE : NULL;
}

static void read_identity(void)
{
	const char *r = getenv("RANK");
	unsigned v;
	size_t n = 0;
	ssize_t k;
	int fd;

	names_host(host, sizeof(host));
	prom_place_from_env(&place, env_get, NULL);
	rank_value = ranks_parse(getenv(RANKS_ENV_RANK));
	local_rank_value = ranks_parse(getenv(RANKS_ENV_LOCAL_RANK));
	/* as the reader takes a report's rank: RANK, else LOCAL_RANK */
	if (!r || env_uint(r, 1u << 30, &v) < 0)
		r = getenv("LOCAL_RANK");
	if (r && env_uint(r, 1u << 30, &v) == 0)
		snprintf(rank, sizeof(rank), "%u", v);
	else
		snprintf(rank, sizeof(rank), "none"); /* as `gpuspy exporter` spells it */
	fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		k = read(fd, command, sizeof(command) - 1);
		close(fd);
		n = k > 0 ? (size_t)k : 0;
	}
	command[n] = '\0';
	while (n > 0 && command[n - 1] == '\0')
		n--;
	for (size_t i = 0; i < n; i++)
		if (command[i] == '\0')
			command[i] = ' ';
}

static int write_address(FILE *f, const struct gs_view *v)
{
	(void)v;
	return fprintf(f, "%s\n", bound) < 0 ? -EIO : 0;
}

/*
 * The address asked for, with the rule for several ranks on one node:
 * when LOCAL_RANK is set, the port is the one given plus LOCAL_RANK
 * (port 0 stays 0: the kernel picks each rank's).  0, or -EINVAL with one
 * line said.
 */
static int choose_address(struct sockaddr_storage *ss, char *addr, size_t n)
{
	const char *lr = getenv("LOCAL_RANK");
	socklen_t len;
	unsigned off;
	bool explicit;
	int port;

	if (http_parse_addr(gs_config.prometheus, ss, &len, &explicit) < 0) {
		gs_warn("GPUSPY_PROMETHEUS=%.64s is not PORT, IPV4:PORT or [IPV6]:PORT; no metrics "
			"endpoint",
			gs_config.prometheus);
		return -EINVAL;
	}
	http_format_addr(ss, addr, n, &port);
	if (port && lr && env_uint(lr, 65535, &off) == 0 && off) {
		if (port + (int)off > 65535) {
			gs_warn("GPUSPY_PROMETHEUS=%.64s with LOCAL_RANK=%u is past port 65535; no "
				"metrics endpoint",
				gs_config.prometheus, off);
			return -EINVAL;
		}
		port += (int)off;
		if (ss->ss_family == AF_INET6)
			((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)port);
		else
			((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)port);
		http_format_addr(ss, addr, n, &port);
	}
	return 0;
}

void endpoint_start(void)
{
	struct http_opts o = {
		.handler = handler,
		.lib = gs_config.libmicrohttpd,
		.sym = real_dlsym,
	};
	struct sockaddr_storage ss;
	char addr[HTTP_ADDR_MAX], err[256], dir[GS_PROCESS_PATH_SIZE];
	int rc;

	if (!gs_config.prometheus || server || gs_config.interval_us == 0)
		return;
	if (choose_address(&ss, addr, sizeof(addr)) < 0)
		return;
	o.addr = addr;
	read_identity();
	/* the first page before the first client can ask */
	endpoint_publish();
	rc = http_start(&o, &server, err, sizeof(err));
	if (rc < 0) {
		gs_warn("GPUSPY_PROMETHEUS: %s; no metrics endpoint", err);
		return;
	}
	snprintf(bound, sizeof(bound), "%s", http_bound(server));
	atomic_store_explicit(&served, true, memory_order_release);
	if (!http_is_loopback(&ss))
		gs_warn("metrics served on %s, beyond this machine (GPUSPY_PROMETHEUS=%.64s)",
			bound, gs_config.prometheus);
	/* port 0 and the LOCAL_RANK offset: where a scraper finds it */
	if (files_process_dir(dir, sizeof(dir)) == 0) {
		rc = files_write(dir, GS_FILE_PROMETHEUS, write_address, NULL);
		if (rc < 0)
			gs_warn("cannot write %s/" GS_FILE_PROMETHEUS ": %s", dir, strerror(-rc));
	}
}

/* The labels of sites not named yet, made for one page only (at most
 * one per site it names), freed once it is made. */
static struct site_labels *once[PROM_TOP_MAX];
static unsigned n_once;

static struct site_labels *site_labels(const struct gs_site *s)
{
	struct site_labels *l;

	if (s->id >= n_labels) {
		unsigned n = s->id + 64;
		struct site_labels **p = realloc(labels, n * sizeof(*p));

		if (!p)
			return NULL;
		memset(p + n_labels, 0, (n - n_labels) * sizeof(*p));
		labels = p;
		n_labels = n;
	}
	if (labels[s->id])
		return labels[s->id];
	l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	char where[512];

	summary_site_name(where, sizeof(where), s);
	l->name = strdup(where);
	summary_site_key(l->key, sizeof(l->key), s);
	if (!l->name) {
		free(l);
		return NULL;
	}
	/* a site newer than this interval's naming (symbols.c) gets its
	 * labels again at the next page, named then */
	if (symbols_site_named(s))
		labels[s->id] = l;
	else
		once[n_once++] = l;
	return l;
}

/* A series of the page: the sites of one group (one key, one site of the
 * report, named by site_names.c), or a site not named yet on its own. */
struct ranked {
	long long live;
	const struct gs_site *s; /* the group's first, or the site */
	int group;		 /* -1: S alone */
	bool growing;
};

/* Per group, the series being summed this page (index + 1; 0: none yet). */
static unsigned *series_of;
static unsigned n_series_of;
static struct ranked *entries;
static unsigned cap_entries;

/* The series of this page, one per group with live bytes or a verdict, one
 * per site not named yet, into ENTRIES; how many, or -ENOMEM. */
static int gather(void)
{
	unsigned groups = site_names_groups(), n = 0;

	if (groups > n_series_of) {
		unsigned *m = realloc(series_of, groups * sizeof(*m));

		if (!m)
			return -ENOMEM;
		series_of = m;
		n_series_of = groups;
	}
	if (groups)
		memset(series_of, 0, groups * sizeof(*series_of));
	if (walk.n > cap_entries) {
		struct ranked *m = realloc(entries, walk.n * sizeof(*m));

		if (!m)
			return -ENOMEM;
		entries = m;
		cap_entries = walk.n;
	}
	for (unsigned i = 0; i < walk.n; i++) {
		const struct gs_site *s = site_walk_at(&walk, i);
		long long live;
		bool growing;
		int g;

		if (!s)
			continue;
		live = counters_live_bytes(&s->c);
		growing = atomic_load_explicit(&s->growing, memory_order_relaxed);
		if (live <= 0 && !growing)
			continue;
		g = site_names_group(s);
		if (g >= 0 && series_of[g]) {
			struct ranked *r = &entries[series_of[g] - 1];

			r->live += live > 0 ? live : 0;
			r->growing |= growing;
			continue;
		}
		entries[n] = (struct ranked){ live > 0 ? live : 0, s, g, growing };
		if (g >= 0)
			series_of[g] = n + 1;
		n++;
	}
	return (int)n;
}

/*
 * The TOP series by live bytes in TOP_[0..*N), most first, the others
 * summed into P's folded figures: one pass, an insertion into a list of
 * at most PROM_TOP_MAX, so O(sites) for the usual program.  A site's
 * lines are one series, as they are one site of the report.
 */
static void rank_sites(struct prom_process *p, struct ranked *top, unsigned *n)
{
	unsigned want = gs_config.prometheus_top;
	int count;

	*n = 0;
	site_walk_refresh(&walk); /* a failed refresh ranks the sites known so far */
	count = gather();
	for (int i = 0; i < count; i++) {
		struct ranked r = entries[i];
		unsigned j;

		if (r.growing)
			p->growing_sites++;
		if (r.live <= 0)
			continue;
		if (*n == want && (!want || top[want - 1].live >= r.live)) {
			p->folded_live[r.s->kind] += (uint64_t)r.live;
			p->folded_sites++;
			continue;
		}
		if (*n == want) { /* the smallest leaves the list */
			p->folded_live[top[want - 1].s->kind] += (uint64_t)top[want - 1].live;
			p->folded_sites++;
			(*n)--;
		}
		for (j = *n; j > 0 && top[j - 1].live < r.live; j--)
			top[j] = top[j - 1];
		top[j] = r;
		(*n)++;
	}
}

/* Each framework's pool per device: its own counters (fw_counters.h)
 * where it has them, PyTorch's else from the PyTorch view (its counters
 * off, GPUSPY_FRAMEWORKS=0).  CuPy's pinned host pool has no device and
 * is left out.  Snapshot thread only: LATEST is static for its size. */
static size_t pools_fill(struct prom_pool *out, size_t max)
{
	static struct fw_latest latest;
	long long view[GS_FW_DEVICES][3];
	unsigned nview;
	size_t n = 0;

	gs_lock(&gs_events_lock);
	fw_counters_copy(&latest);
	gs_unlock(&gs_events_lock);
	for (unsigned f = 0; f < GS_FW_COUNT; f++)
		for (unsigned d = 0; d < GS_FW_DEVICES && n < max; d++) {
			const bool *has = latest.has[f][d];
			const long long *v = latest.v[f][d];

			if (!has[GS_FWC_RESERVED] && !has[GS_FWC_ALLOCATED])
				continue;
			out[n++] = (struct prom_pool){
				.device = (int)d,
				.framework = names_fw[f],
				.has_reserved = has[GS_FWC_RESERVED],
				.has_allocated = has[GS_FWC_ALLOCATED],
				.reserved = (uint64_t)v[GS_FWC_RESERVED],
				.allocated = (uint64_t)v[GS_FWC_ALLOCATED],
			};
		}
	nview = history_torch_pool(view, GS_FW_DEVICES);
	for (unsigned i = 0; i < nview && n < max; i++) {
		unsigned d = (unsigned)view[i][0];

		if (d < GS_FW_DEVICES && (latest.has[GS_FW_PYTORCH][d][GS_FWC_RESERVED] ||
					  latest.has[GS_FW_PYTORCH][d][GS_FWC_ALLOCATED]))
			continue;
		out[n++] = (struct prom_pool){
			(int)d, "pytorch", true, true, (uint64_t)view[i][1], (uint64_t)view[i][2]
		};
	}
	return n;
}

void endpoint_publish(void)
{
	static struct ranked top[PROM_TOP_MAX];
	static struct prom_site sites[PROM_TOP_MAX];
	struct prom_device devices[GS_MAX_DEVICES];
	long long used[GS_MAX_DEVICES], dused[GS_MAX_DEVICES], dtotal[GS_MAX_DEVICES];
	struct prom_nvml nv[GS_MAX_DEVICES];
	struct prom_pool pools[GS_FW_COUNT * GS_FW_DEVICES + GS_FW_DEVICES];
	struct prom_process p = { 0 }, *procs[] = { &p };
	struct prom_buf b = { 0 };
	unsigned n, nu, nd;
	char *old;
	int rc;

	if (!gs_config.prometheus || !atomic_load(&gs_state.tracking))
		return;
	p.pid = getpid();
	p.host = host;
	p.rank = rank;
	p.command = command;
	p.version = GPUSPY_VERSION;
	p.labels = place.labels;
	p.nlabels = place.nlabels;
	for (int k = 0; k < GS_KIND_COUNT; k++) {
		struct gs_count_snap c;

		counters_read(&gs_totals.kind[k], &c);
		p.kinds[k] = (struct prom_kind_counts){
			.has = true,
			.live = (uint64_t)(c.live_bytes > 0 ? c.live_bytes : 0),
			.peak = (uint64_t)c.peak_bytes,
			.allocs = (uint64_t)c.allocs,
			.frees = (uint64_t)c.frees,
			.alloc_bytes = (uint64_t)c.alloc_bytes,
			.freed_bytes = (uint64_t)c.freed_bytes,
		};
	}
	p.has_gpu_peak = p.has_oom = p.has_growing = p.has_sample_time = true;
	p.gpu_peak = (uint64_t)atomic_load(&gs_totals.gpu_peak_bytes);
	p.oom_events = atomic_load(&gs_totals.oom_events);
	p.has_limit = gs_config.limit != 0;
	p.limit = gs_config.limit;
	p.sample_time = gs_now();
	/* a device once used stays listed, at 0 when all is freed */
	for (int d = 0; d < GS_MAX_DEVICES; d++) {
		long long live = totals_device_live(gs_device_index(d));

		if (totals_device_allocs(gs_device_index(d)) > 0)
			device_seen[d] = true;
		if (device_seen[d])
			devices[p.ndevices++] =
				(struct prom_device){ d, (uint64_t)(live > 0 ? live : 0) };
	}
	p.devices = devices;
	p.own_device = ranks_own_device(rank_value, local_rank_value, driver_info()->ndevices);
	p.has_own_device = p.own_device >= 0;
	nu = nvml_process_used(used, GS_MAX_DEVICES);
	nd = nvml_device_memory(dused, dtotal, GS_MAX_DEVICES);
	for (unsigned i = 0; i < (nu > nd ? nu : nd); i++) {
		struct prom_nvml *v = &nv[p.nnvml];

		*v = (struct prom_nvml){ .index = (int)i };
		v->has_used = i < nu && used[i] >= 0;
		v->used = v->has_used ? (uint64_t)used[i] : 0;
		v->has_device_used = v->has_device_total = i < nd && dused[i] >= 0;
		v->device_used = v->has_device_used ? (uint64_t)dused[i] : 0;
		v->device_total = v->has_device_total ? (uint64_t)dtotal[i] : 0;
		if (v->has_used || v->has_device_used)
			p.nnvml++;
	}
	p.nvml = nv;
	p.pools = pools;
	p.npools = pools_fill(pools, sizeof(pools) / sizeof(pools[0]));

	rank_sites(&p, top, &n);
	for (unsigned i = 0; i < n; i++) {
		const struct site_labels *l;

		/* a named group: its name and the report's key digest */
		if (top[i].group >= 0) {
			sites[p.nsites++] =
				(struct prom_site){ site_names_group_digest((unsigned)top[i].group),
						    site_names_group_name((unsigned)top[i].group),
						    top[i].s->kind, (uint64_t)top[i].live,
						    top[i].growing };
			continue;
		}
		l = site_labels(top[i].s);
		if (!l) { /* out of memory: summed, not named */
			p.folded_live[top[i].s->kind] += (uint64_t)top[i].live;
			p.folded_sites++;
			continue;
		}
		sites[p.nsites++] = (struct prom_site){ l->key, l->name, top[i].s->kind,
							(uint64_t)top[i].live, top[i].growing };
	}
	p.sites = sites;

	rc = prom_write(&b, procs, 1, gs_config.prometheus_top);
	for (; n_once; n_once--) {
		free(once[n_once - 1]->name);
		free(once[n_once - 1]);
	}
	if (rc < 0) {
		prom_buf_free(&b); /* the last page stays */
		return;
	}
	gs_lock(&gs_metrics_lock);
	old = page;
	page = b.p;
	page_len = b.len;
	gs_unlock(&gs_metrics_lock);
	free(old);
}

void endpoint_stop(void)
{
	if (!server)
		return;
	http_stop(server);
	server = NULL;
}

void endpoint_forget(void)
{
	http_abandon(server);
	server = NULL;
	atomic_store(&served, false); /* the parent's, not this child's */
	/* single-threaded here: the page is ours to drop */
	free(page);
	page = NULL;
	page_len = 0;
}
