/* SPDX-License-Identifier: MIT */
/*
 * The history of live bytes, history.jsonl (gpuspy-history/1,
 * docs/format.md): per device, per call site for the top sites by peak
 * with the rest summed as "other", NVML's view of the process, and in a
 * PyTorch process the PyTorch view's (its pool's totals, its largest
 * lines, the rest as "torch_other"), one sample per interval; marks, on-demand snapshots and out-of-memory
 * events are points on it.
 *
 * Durable: each line is appended with one write(2) on an O_APPEND fd, so
 * a SIGKILL leaves every line of the intervals before it (a reader drops
 * a last line without its newline).  Bounded: the file is rewritten from
 * memory (a temporary name, then rename, as files.c does) once it holds
 * twice what its last rewrite held, and at least FILE_MIN.  Memory holds
 * the newest RECENT samples whole and the older ones in at most BUCKETS
 * buckets of WIDTH samples each, keeping per series its min, max and
 * last, so a peak never disappears by downsampling; when the buckets are
 * full, neighbours merge and WIDTH doubles.  A run of any length so holds
 * at most RECENT + BUCKETS + EVENTS + MAX_SITES + MAX_TORCH + 1 lines
 * after a rewrite.
 *
 * Why these choices rather than, say, one file per resolution: one file,
 * one reader, and a line appended per interval is what makes SIGKILL cost
 * at most that interval; rewriting only when the file has doubled makes
 * the rewrite's cost, O(what memory holds), at most the bytes appended
 * since the last one, so the cost per interval stays O(series): O(sites)
 * to sample, O(series) to format and append, amortised O(series) to
 * compact and to merge buckets (tests/unit/test_history.c measures it).
 *
 * Series: a site becomes one the first interval it ranks among the
 * TOP_SITES largest by peak, and keeps it; at most MAX_SITES do.  A
 * device's series starts at its first live byte, NVML's per GPU where
 * NVML lists the process.  The store's arrays grow by whole columns as
 * series appear (at most MAX_SLOTS, a dozen times per run), its map of
 * site ids doubles as sites do; nothing is allocated per sample, and
 * nothing on an event without a label.  Everything runs on the
 * snapshot thread except history_event_at() and the PyTorch view's
 * history_torch*() (the program's main thread), and whatever they share
 * (the fd, the line buffer, the events, the view's latest sample) is
 * under gs_events_lock.  The view's values wait in fixed storage for the
 * next sample rather than making lines of their own: one line per
 * interval, their time the sample's, and the same buckets bound them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"
#include "fw_counters.h"
#include "history.h"
#include "json_out.h"
#include "locks.h"
#include "log.h"
#include "names.h"

#define TOP_SITES   32
#define MAX_SITES   64
#define MAX_DEVICES 65 /* ordinals -1 (unknown) to 63 */
#define MAX_OUTSIDE 64
#define MAX_POOL    16 /* PyTorch's devices 0 to 15 */
#define MAX_TORCH   16 /* PyTorch-view lines with a series */
#define MAX_FW	    64 /* the frameworks' counters with a series (fw_counters.h) */
#define MAX_SLOTS                                                                                  \
	(MAX_DEVICES + MAX_SITES + 1 + MAX_OUTSIDE + 2 * MAX_POOL + MAX_TORCH + 1 + MAX_FW)
/* A PyTorch-view line's frames, as JSON (torch_view.py keeps it shorter) */
#define TORCH_KEY_SIZE 2048
#define RECENT	       256
#define BUCKETS	       256 /* even: neighbours merge in pairs */
#define EVENTS	       1024
#define LABEL_MAX      128
#define FILE_MIN       (1ULL << 20)
/* The longest line: MAX_SLOTS series of three 20-digit values. */
#define LINE_SIZE 32768
#define OUT_SIZE  65536

/* In the order of a line's members; from SLOT_OUTSIDE on a series may
 * have no value in a sample (-1). */
enum {
	SLOT_DEVICE,
	SLOT_SITE,
	SLOT_OTHER,
	SLOT_OUTSIDE,
	SLOT_POOL_RESERVED,
	SLOT_POOL_ALLOCATED,
	SLOT_TORCH,
	SLOT_TORCH_OTHER,
	SLOT_FW, /* key: FW_KEY(framework, place, counter) */
	SLOT_TYPES
};
/* site_slot[] holds 1 + slot in 16 bits */
_Static_assert(MAX_SLOTS < 65535, "site slots fit 16 bits");
/* Keys in the order the "fw" member nests them. */
#define FW_KEY(f, p, c) ((long long)(f)*10000 + (long long)(p)*100 + (c))

struct slot {
	uint8_t type;
	long long key;	  /* device ordinal, site id, NVML index */
	const char *kind; /* a site's kind of memory */
};
struct bucket {
	double t0, t1;
	unsigned long long n;
};
struct event {
	double t;
	uint8_t what;
	unsigned n;
	char label[LABEL_MAX];
};
struct top_site {
	long long peak, live;
	uint32_t id;
	const char *kind;
};

static struct {
	bool set, off, open;
	/* the file lacks lines memory holds (a write failed for now): it is
	 * rewritten from memory at the next sample, appends wait until then */
	bool rewrite;
	pid_t pid;
	char dir[4400];
	double start, interval_s;
	int fd;
	double last_t;
	/* the series: column I of every row is slot[I] */
	struct slot slot[MAX_SLOTS];
	unsigned nslots, nsites;
	size_t stride; /* values per row: columns allocated */
	int dev_slot[MAX_DEVICES], out_slot[MAX_OUTSIDE], other_slot; /* 1 + slot */
	uint16_t *site_slot;					      /* 1 + slot, by id */
	size_t site_cap;
	/* the sample being taken */
	bool taking;
	double t;
	long long *cur;
	long long other;
	struct top_site top[TOP_SITES]; /* a min-heap by peak */
	unsigned ntop;
	unsigned fresh[TOP_SITES]; /* slots chosen this sample */
	unsigned nfresh;
	/* the newest samples, a ring; -1: no value */
	double *rt;
	long long *rv;
	unsigned rhead, rn;
	/* older ones, oldest first: [min, max, last] per column */
	struct bucket *bk;
	long long *bv;
	unsigned nbk;
	unsigned long long width;
	/* events, a ring */
	struct event ev[EVENTS];
	unsigned ev_head, nev;
	/* a line, built under gs_events_lock: static, so that an event on
	 * an allocating thread (out of memory) never allocates for it */
	char line[LINE_SIZE];
	unsigned long long bytes, compacted, max_bytes, samples, compactions;
	/* The PyTorch view's latest sample, from the program's main thread
	 * (history_torch*), under gs_events_lock; history_end() takes it
	 * into the sample.  Fixed size: the view's calls never allocate. */
	struct {
		bool seen;
		bool pool_has[MAX_POOL], line_has[MAX_TORCH];
		long long pool[MAX_POOL][2], line[MAX_TORCH], other;
		char key[MAX_TORCH][TORCH_KEY_SIZE];			      /* "": not defined */
		int pool_slot[MAX_POOL][2], line_slot[MAX_TORCH], other_slot; /* 1 + slot */
		unsigned fresh[MAX_TORCH], nfresh;
	} tv;
	/* The frameworks' counters: 1 + slot of each, and their slots in
	 * the order of their keys, as the lines write them. */
	struct {
		int slot[GS_FW_COUNT][GS_FW_PLACES][GS_FWC_COUNT];
		unsigned order[MAX_FW], n;
	} fw;
} h;

static void history_off(const char *what, int err)
{
	if (h.off)
		return;
	h.off = true;
	gs_warn("no history: %s %s/%s: %s", what, h.dir, GS_FILE_HISTORY, strerror(err));
	if (h.open)
		close(h.fd);
	h.open = false;
}

void history_setup(const char *dir, double start, double interval_s)
{
	if (h.set)
		return;
	h.set = true;
	h.pid = getpid();
	snprintf(h.dir, sizeof(h.dir), "%s", dir);
	h.start = start;
	h.interval_s = interval_s;
	h.width = 1;
}

/* Appending, with gs_events_lock held. */

struct out {
	char *p, *end;
	bool full;
};

__attribute__((format(printf, 2, 3))) static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->full)
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->p, (size_t)(o->end - o->p), fmt, ap);
	va_end(ap);
	if (n < 0 || n >= o->end - o->p)
		o->full = true;
	else
		o->p += n;
}

static void put_header(struct out *o)
{
	put(o,
	    "{\"format\":\"%s\",\"pid\":%d,\"start\":%.6f,\"interval_s\":%.6f,\"recent\":%d,"
	    "\"buckets\":%d,\"top\":%d,\"max_sites\":%d}\n",
	    GS_FORMAT_HISTORY, (int)h.pid, h.start, h.interval_s, RECENT, BUCKETS, TOP_SITES,
	    MAX_SITES);
}

static void put_site(struct out *o, const struct slot *s)
{
	put(o, "{\"site\":%lld,\"kind\":\"%s\"}\n", s->key, s->kind);
}

static void put_torch_line(struct out *o, const struct slot *s)
{
	put(o, "{\"torch\":%lld,\"frames\":%s}\n", s->key, h.tv.key[s->key]);
}

static const char *const event_names[] = { "mark", "snapshot", "oom" };

static void put_event(struct out *o, const struct event *e)
{
	put(o, "{\"t\":%.3f,\"event\":\"%s\"", e->t, event_names[e->what]);
	if (e->n)
		put(o, ",\"n\":%u", e->n);
	if (e->label[0] && !o->full) {
		/* json_str replaces what is not UTF-8: the line stays JSON */
		FILE *f = fmemopen(o->p, (size_t)(o->end - o->p), "w");
		long n;

		if (f) {
			fputs(",\"label\":", f);
			json_str(f, e->label);
			n = ftell(f);
			if (fclose(f) != 0 || n < 0 || n >= o->end - o->p)
				o->full = true;
			else
				o->p += n;
		}
	}
	put(o, "}\n");
}

/* The frameworks' counters of a row: {FRAMEWORK: {PLACE: {COUNTER: N}}},
 * each N a [min,max,last] in a bucket (PER 3). */
static void put_fw(struct out *o, const long long *v, size_t per)
{
	int fw = -1, place = -1;

	for (unsigned i = 0; i < h.fw.n; i++) {
		unsigned s = h.fw.order[i];
		const long long *x = v + s * per;
		long long key = h.slot[s].key;
		int f = (int)(key / 10000), p = (int)(key / 100 % 100), c = (int)(key % 100);
		char where[16];

		if (x[0] < 0)
			continue;
		if (f != fw) {
			put(o, "%s\"%s\":{", fw < 0 ? ",\"fw\":{" : "}},", names_fw[f]);
			fw = f;
			place = -1;
		}
		if (p != place) {
			if (p == GS_FW_HOST)
				snprintf(where, sizeof(where), "host");
			else
				snprintf(where, sizeof(where), "%d", p);
			put(o, "%s\"%s\":{", place < 0 ? "" : "},", where);
			place = p;
		} else {
			put(o, ",");
		}
		if (per == 1)
			put(o, "\"%s\":%lld", names_fw_counter[c], x[0]);
		else
			put(o, "\"%s\":[%lld,%lld,%lld]", names_fw_counter[c], x[0], x[1], x[2]);
	}
	if (fw >= 0)
		put(o, "}}}");
}

/* A row's values, grouped as the format has them: N (a sample) or
 * [min,max,last] (a bucket: V holds three per column). */
static void put_values(struct out *o, const long long *v, size_t per)
{
	static const char *const group[SLOT_TYPES] = {
		"dev",	 "sites",	"other", "outside", "pool_reserved", "pool_allocated",
		"torch", "torch_other", "fw",
	};

	for (int type = SLOT_DEVICE; type < SLOT_TYPES; type++) {
		bool first = true;

		if (type == SLOT_FW) {
			put_fw(o, v, per);
			continue;
		}

		if (type == SLOT_OTHER || type == SLOT_TORCH_OTHER) {
			int s = type == SLOT_OTHER ? h.other_slot : h.tv.other_slot;
			const long long *x;

			if (s == 0)
				continue;
			x = v + (size_t)(s - 1) * per;
			if (x[0] < 0)
				continue;
			if (per == 1)
				put(o, ",\"%s\":%lld", group[type], x[0]);
			else
				put(o, ",\"%s\":[%lld,%lld,%lld]", group[type], x[0], x[1], x[2]);
			continue;
		}
		for (unsigned i = 0; i < h.nslots; i++) {
			const long long *x = v + i * per;

			if (h.slot[i].type != type || x[0] < 0)
				continue;
			if (first)
				put(o, ",\"%s\":{", group[type]);
			if (per == 1)
				put(o, "%s\"%lld\":%lld", first ? "" : ",", h.slot[i].key, x[0]);
			else
				put(o, "%s\"%lld\":[%lld,%lld,%lld]", first ? "" : ",",
				    h.slot[i].key, x[0], x[1], x[2]);
			first = false;
		}
		if (!first)
			put(o, "}");
		else if (type == SLOT_DEVICE || type == SLOT_SITE)
			put(o, ",\"%s\":{}", group[type]);
	}
}

static void put_sample(struct out *o, double t, const long long *v)
{
	put(o, "{\"t\":%.3f", t);
	put_values(o, v, 1);
	put(o, "}\n");
}

static void put_bucket(struct out *o, const struct bucket *b, const long long *v)
{
	put(o, "{\"t0\":%.3f,\"t1\":%.3f,\"n\":%llu", b->t0, b->t1, b->n);
	put_values(o, v, 3);
	put(o, "}\n");
}

/*
 * One line, one write(2) (a short one is finished, files_write_all).  A
 * write that fails for now (a full disk, a file size limit) is said once
 * with its own errno, the part of the line it wrote is cut back off, and
 * the file waits for a rewrite from memory (h.rewrite, at the next
 * sample), which gives back the lines lost meanwhile: memory holds them.
 * A lasting failure ends history.
 */
static void append(const char *line, size_t len)
{
	struct files_guard g;
	size_t done;
	int err;

	if (!h.open || h.rewrite)
		return;
	files_guard_begin(&g);
	err = files_write_all(h.fd, line, len, &done);
	/* a torn line would be in the middle of the file once appends
	 * resume; if it cannot be cut, it stays the last until the rewrite
	 * replaces the file, and a reader drops a torn last line */
	if (err && done && ftruncate(h.fd, (off_t)h.bytes) < 0)
		done = 0; /* the rewrite will do */
	files_guard_end(&g);
	if (err && files_lasting(err)) {
		history_off("cannot append to", err);
		return;
	}
	if (err) {
		gs_problem(GS_PROBLEM_HISTORY, err,
			   "history: cannot append to %s/%s: %s; kept in memory, written again "
			   "when it can be",
			   h.dir, GS_FILE_HISTORY, strerror(err));
		h.rewrite = true;
		return;
	}
	h.bytes += len;
	if (h.bytes > h.max_bytes)
		h.max_bytes = h.bytes;
}

static void open_file(void)
{
	int dfd, err;
	struct out o = { h.line, h.line + LINE_SIZE, false };

	if (h.open || h.off)
		return;
	dfd = files_dir_open(h.dir);
	if (dfd < 0) {
		/* a descriptor, later, may be there again */
		if (files_lasting(dfd))
			history_off("cannot create the directory of", -dfd);
		else
			gs_problem(GS_PROBLEM_HISTORY, dfd, "history: cannot open %s: %s", h.dir,
				   strerror(-dfd));
		return;
	}
	h.fd = openat(dfd, GS_FILE_HISTORY,
		      O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
	err = errno;
	close(dfd);
	if (h.fd < 0) {
		if (files_lasting(err))
			history_off("cannot open", err);
		else
			gs_problem(GS_PROBLEM_HISTORY, err, "history: cannot open %s/%s: %s", h.dir,
				   GS_FILE_HISTORY, strerror(err));
		return;
	}
	fchmod(h.fd, 0600);
	h.open = true;
	put_header(&o);
	append(h.line, (size_t)(o.p - h.line));
}

/* The store's columns: a row of STRIDE values per sample, three per
 * bucket; new room holds -1, no value. */

static void fill(long long *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		v[i] = -1;
}

static int grow(size_t stride)
{
	long long *cur = malloc(stride * sizeof(*cur)), *rv = malloc(RECENT * stride * sizeof(*rv)),
		  *bv = malloc(BUCKETS * stride * 3 * sizeof(*bv));

	if (!cur || !rv || !bv) {
		free(cur);
		free(rv);
		free(bv);
		return -ENOMEM;
	}
	fill(cur, stride);
	fill(rv, (size_t)RECENT * stride);
	fill(bv, (size_t)BUCKETS * stride * 3);
	for (unsigned i = 0; h.cur && i < h.stride; i++)
		cur[i] = h.cur[i];
	for (size_t r = 0; h.rv && r < RECENT; r++)
		memcpy(rv + r * stride, h.rv + r * h.stride, h.stride * sizeof(*rv));
	for (size_t b = 0; h.bv && b < BUCKETS; b++)
		memcpy(bv + b * stride * 3, h.bv + b * h.stride * 3, h.stride * 3 * sizeof(*bv));
	free(h.cur);
	free(h.rv);
	free(h.bv);
	h.cur = cur;
	h.rv = rv;
	h.bv = bv;
	h.stride = stride;
	return 0;
}

/* A new series; its slot, or -1 when there is no room for it. */
static int add_slot(uint8_t type, long long key, const char *kind)
{
	unsigned s = h.nslots;

	if (s == MAX_SLOTS)
		return -1;
	if (s == h.stride && grow(h.stride + 16 < MAX_SLOTS ? h.stride + 16 : MAX_SLOTS) < 0) {
		history_off("out of memory for", ENOMEM);
		return -1;
	}
	h.slot[s] = (struct slot){ type, key, kind };
	h.nslots++;
	h.cur[s] = type >= SLOT_OUTSIDE ? -1 : 0;
	return (int)s;
}

void history_begin(double t)
{
	h.taking = false;
	if (!h.set || h.off)
		return;
	if (!h.cur) {
		h.rt = malloc(RECENT * sizeof(*h.rt));
		h.bk = malloc(BUCKETS * sizeof(*h.bk));
		if (!h.rt || !h.bk || grow(8) < 0) {
			history_off("out of memory for", ENOMEM);
			return;
		}
		h.other_slot = add_slot(SLOT_OTHER, 0, NULL) + 1;
	}
	h.t = t;
	for (unsigned i = 0; i < h.nslots; i++)
		h.cur[i] = h.slot[i].type >= SLOT_OUTSIDE ? -1 : 0;
	h.other = 0;
	h.ntop = 0;
	h.nfresh = 0;
	h.taking = true;
}

void history_device(int device, long long bytes)
{
	int s;

	if (!h.taking || device < -1 || device >= MAX_DEVICES - 1)
		return;
	s = h.dev_slot[device + 1] - 1;
	if (s < 0) {
		if (bytes <= 0)
			return;
		s = add_slot(SLOT_DEVICE, device, NULL);
		if (s < 0)
			return;
		h.dev_slot[device + 1] = s + 1;
	}
	h.cur[s] = bytes > 0 ? bytes : 0;
}

static void top_down(unsigned i)
{
	for (;;) {
		unsigned l = 2 * i + 1, m = i;
		struct top_site x;

		if (l < h.ntop && h.top[l].peak < h.top[m].peak)
			m = l;
		if (l + 1 < h.ntop && h.top[l + 1].peak < h.top[m].peak)
			m = l + 1;
		if (m == i)
			return;
		x = h.top[i];
		h.top[i] = h.top[m];
		h.top[m] = x;
		i = m;
	}
}

static void top_offer(const struct top_site *t)
{
	unsigned i;

	if (h.ntop == TOP_SITES) {
		if (t->peak <= h.top[0].peak)
			return;
		h.top[0] = *t;
		top_down(0);
		return;
	}
	i = h.ntop++;
	h.top[i] = *t;
	while (i > 0 && h.top[(i - 1) / 2].peak > h.top[i].peak) {
		struct top_site x = h.top[i];

		h.top[i] = h.top[(i - 1) / 2];
		h.top[(i - 1) / 2] = x;
		i = (i - 1) / 2;
	}
}

void history_site(uint32_t id, const char *kind, long long live, long long peak)
{
	int s;

	if (!h.taking)
		return;
	if (live < 0)
		live = 0;
	s = id < h.site_cap ? h.site_slot[id] - 1 : -1;
	if (s >= 0)
		h.cur[s] = live;
	else
		h.other += live;
	/* chosen sites rank too: the top is of all sites */
	if (h.nsites < MAX_SITES && peak > 0)
		top_offer(&(struct top_site){ peak, live, id, kind });
}

void history_outside(unsigned index, long long bytes)
{
	int s;

	if (!h.taking || index >= MAX_OUTSIDE || bytes < 0)
		return;
	s = h.out_slot[index] - 1;
	if (s < 0) {
		s = add_slot(SLOT_OUTSIDE, index, NULL);
		if (s < 0)
			return;
		h.out_slot[index] = s + 1;
	}
	h.cur[s] = bytes;
}

static void choose(const struct top_site *t)
{
	int s;

	if (t->id < h.site_cap && h.site_slot[t->id])
		return;
	if (t->id >= h.site_cap) {
		size_t cap = h.site_cap ? h.site_cap : 1024;
		uint16_t *m;

		while (cap <= t->id)
			cap *= 2;
		m = realloc(h.site_slot, cap * sizeof(*m));
		if (!m) {
			history_off("out of memory for", ENOMEM);
			return;
		}
		memset(m + h.site_cap, 0, (cap - h.site_cap) * sizeof(*m));
		h.site_slot = m;
		h.site_cap = cap;
	}
	s = add_slot(SLOT_SITE, t->id, t->kind ? t->kind : "device");
	if (s < 0)
		return;
	h.site_slot[t->id] = (uint16_t)(s + 1);
	h.nsites++;
	h.cur[s] = t->live;
	h.other -= t->live;
	h.fresh[h.nfresh++] = (unsigned)s;
}

static void bucket_merge(long long *a, const long long *b)
{
	for (unsigned i = 0; i < h.nslots; i++, a += 3, b += 3) {
		if (b[0] < 0)
			continue;
		if (a[0] < 0) {
			memcpy(a, b, 3 * sizeof(*a));
			continue;
		}
		if (b[0] < a[0])
			a[0] = b[0];
		if (b[1] > a[1])
			a[1] = b[1];
		a[2] = b[2];
	}
}

/* The oldest sample at full resolution goes into the buckets. */
static void to_bucket(double t, const long long *v)
{
	long long *b;

	if (h.nbk == 0 || h.bk[h.nbk - 1].n >= h.width) {
		if (h.nbk == BUCKETS) {
			/* Neighbours merge, WIDTH doubles: once per
			 * BUCKETS / 2 * WIDTH samples, O(BUCKETS * series). */
			for (size_t j = 0; j < BUCKETS / 2; j++) {
				long long *dst = h.bv + j * h.stride * 3;

				if (j > 0)
					memcpy(dst, h.bv + 2 * j * h.stride * 3,
					       h.stride * 3 * sizeof(*dst));
				bucket_merge(dst, h.bv + (2 * j + 1) * h.stride * 3);
				h.bk[j] = (struct bucket){ h.bk[2 * j].t0, h.bk[2 * j + 1].t1,
							   h.bk[2 * j].n + h.bk[2 * j + 1].n };
			}
			fill(h.bv + BUCKETS / 2 * h.stride * 3, (size_t)BUCKETS / 2 * h.stride * 3);
			h.nbk = BUCKETS / 2;
			h.width *= 2;
		}
		h.bk[h.nbk++] = (struct bucket){ t, t, 0 };
	}
	b = h.bv + (h.nbk - 1) * h.stride * 3;
	for (unsigned i = 0; i < h.nslots; i++, b += 3) {
		if (v[i] < 0)
			continue;
		if (b[0] < 0) {
			b[0] = b[1] = b[2] = v[i];
			continue;
		}
		if (v[i] < b[0])
			b[0] = v[i];
		if (v[i] > b[1])
			b[1] = v[i];
		b[2] = v[i];
	}
	h.bk[h.nbk - 1].t1 = t;
	h.bk[h.nbk - 1].n++;
}

static void to_recent(double t, const long long *v)
{
	long long *row = h.rv + h.rhead * h.stride;

	if (h.rn == RECENT)
		to_bucket(h.rt[h.rhead], row);
	else
		h.rn++;
	h.rt[h.rhead] = t;
	memcpy(row, v, h.stride * sizeof(*row));
	h.rhead = (h.rhead + 1) % RECENT;
}

/* The rewrite's output: whole lines through a buffer, flushed by write. */
struct sink {
	int fd;
	char buf[OUT_SIZE];
	size_t len;
	unsigned long long bytes;
	int err;
};

static void sink_line(struct sink *k, const struct out *o, const char *line)
{
	size_t n = (size_t)(o->p - line);

	if (o->full && !k->err)
		k->err = EOVERFLOW;
	if (k->err)
		return;
	if (k->len + n > sizeof(k->buf)) {
		size_t done;

		k->err = files_write_all(k->fd, k->buf, k->len, &done);
		if (k->err)
			return;
		k->len = 0;
	}
	memcpy(k->buf + k->len, line, n);
	k->len += n;
	k->bytes += n;
}

static void sink_event(struct sink *k, unsigned i)
{
	struct out o = { h.line, h.line + LINE_SIZE, false };

	put_event(&o, &h.ev[(h.ev_head + EVENTS - h.nev + i) % EVENTS]);
	sink_line(k, &o, h.line);
}

/*
 * The file again, from memory: header, site lines, then buckets, samples
 * and events in order of time (an event before the first row that ends
 * after it).  O(what memory holds); called once the file doubled.
 */
static void compact(void)
{
	static struct sink k;
	static const char tmp[] = "." GS_FILE_HISTORY ".tmp";
	struct files_guard g;
	unsigned e = 0;
	struct out o;
	int dfd;

	/* the directory is ours (files_dir_open), so a temporary file left
	 * there is ours too: replaced, never followed */
	dfd = files_dir_open(h.dir);
	if (dfd < 0)
		return; /* tried again at the next interval */
	unlinkat(dfd, tmp, 0);
	k.fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW | O_CLOEXEC,
		      0600);
	if (k.fd < 0) {
		close(dfd);
		return;
	}
	fchmod(k.fd, 0600);
	files_guard_begin(&g);
	k.len = 0;
	k.bytes = 0;
	k.err = 0;
	o = (struct out){ h.line, h.line + LINE_SIZE, false };
	put_header(&o);
	sink_line(&k, &o, h.line);
	for (unsigned i = 0; i < h.nslots; i++) {
		if (h.slot[i].type != SLOT_SITE)
			continue;
		o = (struct out){ h.line, h.line + LINE_SIZE, false };
		put_site(&o, &h.slot[i]);
		sink_line(&k, &o, h.line);
	}
	for (unsigned i = 0; i < h.nslots; i++) {
		if (h.slot[i].type != SLOT_TORCH)
			continue;
		o = (struct out){ h.line, h.line + LINE_SIZE, false };
		put_torch_line(&o, &h.slot[i]);
		sink_line(&k, &o, h.line);
	}
	for (size_t b = 0; b < h.nbk; b++) {
		while (e < h.nev && h.ev[(h.ev_head + EVENTS - h.nev + e) % EVENTS].t <= h.bk[b].t1)
			sink_event(&k, e++);
		o = (struct out){ h.line, h.line + LINE_SIZE, false };
		put_bucket(&o, &h.bk[b], h.bv + b * h.stride * 3);
		sink_line(&k, &o, h.line);
	}
	for (unsigned r = 0; r < h.rn; r++) {
		size_t at = (h.rhead + RECENT - h.rn + r) % RECENT;

		while (e < h.nev && h.ev[(h.ev_head + EVENTS - h.nev + e) % EVENTS].t <= h.rt[at])
			sink_event(&k, e++);
		o = (struct out){ h.line, h.line + LINE_SIZE, false };
		put_sample(&o, h.rt[at], h.rv + at * h.stride);
		sink_line(&k, &o, h.line);
	}
	while (e < h.nev)
		sink_event(&k, e++);
	if (!k.err && k.len) {
		size_t done;

		k.err = files_write_all(k.fd, k.buf, k.len, &done);
	}
	/* No fsync: the appends are not synced either, and a process's
	 * death, unlike the machine's, loses nothing the kernel holds. */
	if (!k.err && renameat(dfd, tmp, dfd, GS_FILE_HISTORY) < 0)
		k.err = errno;
	files_guard_end(&g);
	if (k.err) {
		close(k.fd);
		unlinkat(dfd, tmp, 0);
		close(dfd);
		/* the appended file is still whole: the rewrite waits */
		if (files_lasting(k.err))
			history_off("cannot rewrite", k.err);
		else
			gs_problem(GS_PROBLEM_HISTORY, k.err, "history: cannot rewrite %s/%s: %s",
				   h.dir, GS_FILE_HISTORY, strerror(k.err));
		return;
	}
	close(dfd);
	close(h.fd);
	h.fd = k.fd;
	h.bytes = h.compacted = k.bytes;
	h.compactions++;
	if (h.rewrite)
		gs_warn("history: %s/%s is whole again, rewritten from memory", h.dir,
			GS_FILE_HISTORY);
	h.rewrite = false;
}

/* A series of the PyTorch view's: its slot (1 + slot in *AT), made
 * when first needed; -1 when there is no room. */
static int torch_slot(int *at, uint8_t type, long long key)
{
	int s = *at - 1;

	if (s < 0) {
		s = add_slot(type, key, NULL);
		if (s < 0)
			return -1;
		*at = s + 1;
		if (type == SLOT_TORCH)
			h.tv.fresh[h.tv.nfresh++] = (unsigned)s;
	}
	return s;
}

/* The view's latest sample into this one; gs_events_lock held. */
static void torch_take(void)
{
	int s;

	h.tv.nfresh = 0;
	if (!h.tv.seen)
		return;
	for (unsigned d = 0; d < MAX_POOL && !h.off; d++)
		for (unsigned k = 0; k < 2 && h.tv.pool_has[d]; k++)
			if ((s = torch_slot(&h.tv.pool_slot[d][k],
					    k ? SLOT_POOL_ALLOCATED : SLOT_POOL_RESERVED, d)) >= 0)
				h.cur[s] = h.tv.pool[d][k];
	for (unsigned id = 0; id < MAX_TORCH && !h.off; id++)
		if (h.tv.line_has[id] && h.tv.key[id][0] &&
		    (s = torch_slot(&h.tv.line_slot[id], SLOT_TORCH, id)) >= 0)
			h.cur[s] = h.tv.line[id];
	if (!h.off && (s = torch_slot(&h.tv.other_slot, SLOT_TORCH_OTHER, 0)) >= 0)
		h.cur[s] = h.tv.other;
}

/* The frameworks' latest figures into this sample; gs_events_lock
 * held.  A counter's series is made the first sample it has a value, at
 * most MAX_FW of them; its key keeps its place in the order. */
static void fw_take(void)
{
	static struct fw_latest l;

	fw_counters_copy(&l);
	if (!l.any)
		return;
	for (unsigned f = 0; f < GS_FW_COUNT; f++)
		for (unsigned p = 0; p < GS_FW_PLACES; p++)
			for (unsigned c = 0; c < GS_FWC_COUNT; c++) {
				int *at = &h.fw.slot[f][p][c], s = *at - 1;
				long long key = FW_KEY(f, p, c);
				unsigned i;

				if (!l.has[f][p][c] || h.off)
					continue;
				if (s < 0) {
					if (h.fw.n == MAX_FW ||
					    (s = add_slot(SLOT_FW, key, NULL)) < 0)
						continue;
					*at = s + 1;
					for (i = h.fw.n++;
					     i > 0 && h.slot[h.fw.order[i - 1]].key > key; i--)
						h.fw.order[i] = h.fw.order[i - 1];
					h.fw.order[i] = (unsigned)s;
				}
				h.cur[s] = l.v[f][p][c];
			}
}

int history_torch_line(unsigned id, const char *frames)
{
	size_t n;

	if (id >= MAX_TORCH || !frames)
		return -EINVAL;
	n = strlen(frames);
	/* written into the line as it is: one JSON array on one line */
	if (n < 2 || n >= TORCH_KEY_SIZE || frames[0] != '[' || frames[n - 1] != ']')
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (frames[i] < 0x20 || frames[i] > 0x7e)
			return -EINVAL;
	gs_lock(&gs_events_lock);
	/* a line's series keeps its key */
	if (!h.tv.key[id][0])
		memcpy(h.tv.key[id], frames, n + 1);
	gs_unlock(&gs_events_lock);
	return 0;
}

int history_torch(const long long *pool, unsigned npool, const long long *lines, unsigned nlines,
		  long long other)
{
	if ((npool && !pool) || (nlines && !lines) || other < 0)
		return -EINVAL;
	for (size_t i = 0; i < npool; i++)
		if (pool[3 * i] < 0 || pool[3 * i] >= MAX_POOL || pool[3 * i + 1] < 0 ||
		    pool[3 * i + 2] < 0)
			return -EINVAL;
	for (size_t i = 0; i < nlines; i++)
		if (lines[2 * i] < 0 || lines[2 * i] >= MAX_TORCH || lines[2 * i + 1] < 0)
			return -EINVAL;
	gs_lock(&gs_events_lock);
	memset(h.tv.pool_has, 0, sizeof(h.tv.pool_has));
	memset(h.tv.line_has, 0, sizeof(h.tv.line_has));
	for (size_t i = 0; i < npool; i++) {
		long long d = pool[3 * i];

		h.tv.pool_has[d] = true;
		h.tv.pool[d][0] = pool[3 * i + 1];
		h.tv.pool[d][1] = pool[3 * i + 2];
	}
	for (size_t i = 0; i < nlines; i++) {
		h.tv.line_has[lines[2 * i]] = true;
		h.tv.line[lines[2 * i]] = lines[2 * i + 1];
	}
	h.tv.other = other;
	h.tv.seen = true;
	gs_unlock(&gs_events_lock);
	return 0;
}

unsigned history_torch_pool(long long (*out)[3], unsigned max)
{
	unsigned n = 0;

	gs_lock(&gs_events_lock);
	for (unsigned d = 0; d < MAX_POOL && n < max; d++) {
		if (!h.tv.seen || !h.tv.pool_has[d])
			continue;
		out[n][0] = d;
		out[n][1] = h.tv.pool[d][0];
		out[n][2] = h.tv.pool[d][1];
		n++;
	}
	gs_unlock(&gs_events_lock);
	return n;
}

void history_end(void)
{
	struct out o;

	if (!h.taking)
		return;
	h.taking = false;
	for (unsigned i = 0; i < h.ntop && h.nsites < MAX_SITES && !h.off; i++)
		choose(&h.top[i]);
	if (h.off)
		return;
	h.cur[h.other_slot - 1] = h.other > 0 ? h.other : 0;

	gs_lock(&gs_events_lock);
	open_file();
	if (h.t < h.last_t)
		h.t = h.last_t;
	h.last_t = h.t;
	for (unsigned i = 0; i < h.nfresh && h.open; i++) {
		o = (struct out){ h.line, h.line + LINE_SIZE, false };
		put_site(&o, &h.slot[h.fresh[i]]);
		if (!o.full)
			append(h.line, (size_t)(o.p - h.line));
	}
	torch_take();
	fw_take();
	for (unsigned i = 0; i < h.tv.nfresh && h.open; i++) {
		o = (struct out){ h.line, h.line + LINE_SIZE, false };
		put_torch_line(&o, &h.slot[h.tv.fresh[i]]);
		if (!o.full)
			append(h.line, (size_t)(o.p - h.line));
	}
	o = (struct out){ h.line, h.line + LINE_SIZE, false };
	put_sample(&o, h.t, h.cur);
	if (h.open && !o.full)
		append(h.line, (size_t)(o.p - h.line));
	to_recent(h.t, h.cur);
	h.samples++;
	if (h.open && (h.rewrite || (h.bytes > FILE_MIN && h.bytes > 2 * h.compacted)))
		compact();
	gs_unlock(&gs_events_lock);
}

void history_event_at(double t, enum history_event what, const char *label, unsigned n)
{
	struct event *e;
	struct out o;

	if (!h.set || h.off || (unsigned)what > HISTORY_OOM)
		return;
	open_file();
	if (!h.open)
		return;
	if (t < h.last_t)
		t = h.last_t;
	h.last_t = t;
	e = &h.ev[h.ev_head];
	e->t = t;
	e->what = (uint8_t)what;
	e->n = n;
	snprintf(e->label, sizeof(e->label), "%s", label ? label : "");
	h.ev_head = (h.ev_head + 1) % EVENTS;
	if (h.nev < EVENTS)
		h.nev++;
	o = (struct out){ h.line, h.line + LINE_SIZE, false };
	put_event(&o, e);
	if (!o.full)
		append(h.line, (size_t)(o.p - h.line));
}

void history_close(void)
{
	if (!h.open || h.pid != getpid())
		return;
	close(h.fd);
	h.open = false;
	h.off = true;
}

void history_reset(void)
{
	if (h.open)
		close(h.fd);
	free(h.cur);
	free(h.rv);
	free(h.rt);
	free(h.bv);
	free(h.bk);
	free(h.site_slot);
	memset(&h, 0, sizeof(h));
}

void history_get_stats(struct history_stats *out)
{
	*out = (struct history_stats){
		.samples = h.samples,
		.file_bytes = h.bytes,
		.max_bytes = h.max_bytes,
		.compactions = h.compactions,
		.width = h.width,
		.series = h.nslots,
		.buckets = h.nbk,
		.recent = h.rn,
		.off = h.off,
	};
}

bool history_is_set(void)
{
	return h.set;
}

bool history_owned(void)
{
	return !h.set || h.pid == getpid();
}
