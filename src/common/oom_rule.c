/* SPDX-License-Identifier: MIT */
/*
 * The out-of-memory verdict (oom_rule.h).  The rule, in the order it is
 * tried, each step over figures recorded at the failure:
 *
 *   card       the limit when GPUSPY_LIMIT is set, else the device's total
 *   available  the limit less what gpuspy tracked on the device when the
 *              limit refused the request, else the device's free memory
 *   missing    requested - available
 *
 *   pinned-host    a request of pinned host memory: the host's memory and
 *                  its locked-memory limit, none of the device's figures
 *   fragmentation  the pool's figures at the failure are known, it held at
 *                  least the block it looked for free (reserved - allocated),
 *                  and its largest free block was smaller than that block
 *   other-process  not the limit's refusal; other processes hold at least
 *                  what was missing
 *   outside        the request is the pool's; the program's tracked memory
 *                  outside the pool (libraries, graphs, raw CUDA) is at
 *                  least what was missing
 *   cap            the limit refused it
 *   shortage       the device had less free than the request
 *   unexplained    anything else: the device said it had room, or its free
 *                  memory is unknown
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "oom_rule.h"

static const char *const class_names[OOM_CLASS_COUNT] = {
	[OOM_FRAGMENTATION] = "fragmentation", [OOM_OTHER_PROCESS] = "other-process",
	[OOM_OUTSIDE] = "outside-framework",   [OOM_CAP] = "cap",
	[OOM_SHORTAGE] = "shortage",	       [OOM_UNEXPLAINED] = "unexplained",
	[OOM_PINNED_HOST] = "pinned-host",
};

const char *oom_class_name(int cls)
{
	return cls >= 0 && cls < OOM_CLASS_COUNT ? class_names[cls] : "?";
}

static bool known(int64_t x)
{
	return x >= 0;
}

/* Whether the pool's figures at the failure are all there. */
static bool pool_exact(const struct oom_facts *f)
{
	return known(f->pool_request) && known(f->pool_allocated) && known(f->pool_reserved) &&
	       f->pool_reserved >= f->pool_allocated;
}

void oom_judge(const struct oom_facts *f, struct oom_verdict *v)
{
	bool exact = pool_exact(f), pool = f->pool && (f->pool_bytes > 0 || exact);
	int64_t own = known(f->tracked) ? f->tracked : -1;

	memset(v, 0, sizeof(*v));
	v->card = v->available = v->missing = v->held = v->fits = v->slack = v->outside = -1;
	if (f->limit > 0)
		v->card = known(f->device_total) && f->device_total < f->limit ? f->device_total :
										 f->limit;
	else if (known(f->device_total))
		v->card = f->device_total;
	if (f->capped && f->limit > 0 && known(own))
		v->available = f->limit > own ? f->limit - own : 0;
	else if (known(f->device_free))
		v->available = f->device_free;
	if (known(v->available) && f->requested > v->available)
		v->missing = f->requested - v->available;
	if (exact)
		v->slack = f->pool_reserved - f->pool_allocated;
	/* the pool's segments as tracked; at the failure, what it reserved */
	if (pool && known(own)) {
		int64_t in_pool = exact ? f->pool_reserved : f->pool_bytes;

		v->outside = own > in_pool ? own - in_pool : 0;
	}
	/* its tensors, not its free blocks, where that is known */
	if (known(own))
		v->held = exact && own > v->slack ? own - v->slack : exact ? 0 : own;
	/* a new segment of the free memory, or the pool's largest free block */
	if (known(v->available))
		v->fits = exact && f->pool_largest_free > v->available ? f->pool_largest_free :
									 v->available;
	v->pool_may_retry = f->from_pool && !exact && f->pool_bytes > 0;

	if (f->pinned) {
		/* the device's figures say nothing of the host's memory */
		v->card = v->available = v->missing = v->held = v->fits = v->outside = -1;
		v->pool_may_retry = false;
		v->cls = OOM_PINNED_HOST;
	} else if (exact && v->slack >= f->pool_request &&
		   (!known(f->pool_largest_free) || f->pool_largest_free < f->pool_request))
		v->cls = OOM_FRAGMENTATION;
	else if (!f->capped && known(v->missing) && known(f->others_bytes) && f->others_bytes > 0 &&
		 f->others_bytes >= v->missing)
		v->cls = OOM_OTHER_PROCESS;
	else if (pool && f->from_pool && known(v->missing) && v->outside > 0 &&
		 v->outside >= v->missing)
		v->cls = OOM_OUTSIDE;
	else if (f->capped)
		v->cls = OOM_CAP;
	else if (known(v->missing))
		v->cls = OOM_SHORTAGE;
	else
		v->cls = OOM_UNEXPLAINED;
}

const char *oom_size(int64_t bytes, char *buf, size_t size)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double x = (double)bytes;
	int u = -1;

	if (bytes < 1024 && bytes > -1024) {
		snprintf(buf, size, "%lld B", (long long)bytes);
		return buf;
	}
	while (u < 5 && (x >= 1024.0 || x <= -1024.0)) {
		x /= 1024.0;
		u++;
	}
	/* 1023.96 KiB would print as "1024.0 KiB" */
	if (u < 5 && (x >= 1023.95 || x <= -1023.95)) {
		x /= 1024.0;
		u++;
	}
	/* u >= 0: |bytes| >= 1024, so the loop divided at least once
	 * NOLINTNEXTLINE(clang-analyzer-core.CallAndMessage) */
	snprintf(buf, size, "%.1f %s", x, units[u < 0 ? 0 : u]);
	return buf;
}

/* Appends to BUF as snprintf would, keeping the length the whole needs. */
struct line {
	char *buf;
	size_t size;
	int len;
	char sizes[6][32]; /* for the sizes of one put(): each its own */
	unsigned next;
};

/* X as sz() writes it, into the next of L's buffers. */
static const char *sz(struct line *l, int64_t x)
{
	char *b = l->sizes[l->next++ % 6];

	return oom_size(x, b, sizeof(l->sizes[0]));
}

static __attribute__((format(printf, 2, 3))) void put(struct line *l, const char *fmt, ...)
{
	size_t at = l->len >= 0 && (size_t)l->len < l->size ? (size_t)l->len : l->size;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(l->buf ? l->buf + at : NULL, l->buf ? l->size - at : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		l->len += n;
}

#define SZ(x) sz(&l, (x))

int oom_verdict_line(char *buf, size_t size, const struct oom_facts *f, const struct oom_verdict *v)
{
	struct line l = { .buf = buf, .size = size };
	const char *pool = f->pool ? f->pool : "framework's pool";

	if (buf && size)
		buf[0] = '\0';
	put(&l, "%s: ", oom_class_name(v->cls));
	switch (v->cls) {
	case OOM_FRAGMENTATION:
		put(&l, "the %s held %s free of %s reserved, but no free block of %s", pool,
		    SZ(v->slack), SZ(f->pool_reserved), SZ(f->pool_request));
		if (known(f->pool_largest_free))
			put(&l, " (the largest: %s)", SZ(f->pool_largest_free));
		if (f->pinner)
			put(&l, "; pinned most by %s (%s)", f->pinner, SZ(f->pinner_bytes));
		if (f->expandable)
			put(&l, "; expandable_segments is on already: free or reuse the blocks "
				"that pin the segments");
		else
			put(&l, "; try PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True");
		break;
	case OOM_OTHER_PROCESS:
		put(&l, "other processes hold %s of this device", SZ(f->others_bytes));
		if (f->other_pid > 0) {
			put(&l, ", the most pid %lld", (long long)f->other_pid);
			if (f->other_name)
				put(&l, " (%s)", f->other_name);
			put(&l, " with %s", SZ(f->other_bytes));
		}
		put(&l, "; %s more was needed for %s: free them or use another device",
		    SZ(v->missing), SZ(f->requested));
		break;
	case OOM_OUTSIDE: {
		int64_t libs = f->library_bytes > 0 ? f->library_bytes : 0,
			graphs = f->graph_bytes > 0 ? f->graph_bytes : 0,
			raw = v->outside - libs - graphs;

		put(&l, "%s of the program's memory is outside the %s", SZ(v->outside), pool);
		if (f->library && f->library_top > 0) {
			put(&l, " (%s %s", f->library, SZ(f->library_top));
			if (libs > f->library_top)
				put(&l, ", other libraries %s", SZ(libs - f->library_top));
		} else {
			put(&l, " (libraries %s", SZ(libs));
		}
		put(&l, ", CUDA graphs %s, other CUDA calls %s)", SZ(graphs),
		    SZ(raw > 0 ? raw : 0));
		put(&l, ", where the pool cannot reuse it; %s more was needed for %s",
		    SZ(v->missing), SZ(f->requested));
		break;
	}
	case OOM_CAP:
	case OOM_SHORTAGE:
		if (v->cls == OOM_CAP)
			put(&l, "GPUSPY_LIMIT %s per device reached: ", SZ(f->limit));
		if (known(v->held))
			put(&l, "the program holds %s and asked %s more", SZ(v->held),
			    SZ(f->requested));
		else
			put(&l, "%s asked", SZ(f->requested));
		if (known(v->available) && v->cls == OOM_CAP)
			put(&l, ", %s left under the limit", SZ(v->available));
		else if (known(v->available) && known(v->card))
			put(&l, ", %s free of %s", SZ(v->available), SZ(v->card));
		else if (known(v->available))
			put(&l, ", %s free", SZ(v->available));
		if (known(v->fits))
			put(&l, ": at most %s would have fit", SZ(v->fits));
		/* the pool's segments are said below, with what they may hold */
		if (f->holder && !(f->holder_is_pool && v->pool_may_retry))
			put(&l, "; the largest holder: %s (%s)", f->holder, SZ(f->holder_bytes));
		if (v->cls == OOM_SHORTAGE && known(f->others_bytes) && f->others_bytes > 0)
			put(&l, "; other processes hold %s", SZ(f->others_bytes));
		break;
	case OOM_PINNED_HOST:
		put(&l,
		    "%s of pinned host memory asked: page-locked memory is the host's, limited by "
		    "its RAM and the locked-memory limit (ulimit -l), not the device's",
		    SZ(f->requested));
		break;
	default:
		if (known(v->available))
			put(&l,
			    "%s was free for a request of %s: refused for another reason "
			    "than the memory in use",
			    SZ(v->available), SZ(f->requested));
		else
			put(&l, "the device's free memory is unknown (no current context)");
		break;
	}
	if (v->pool_may_retry)
		put(&l,
		    "; the %s's segments hold %s of it, part possibly free: it may "
		    "empty its cache and retry",
		    pool, SZ(f->pool_bytes));
	return l.len;
}

/* Whether the comma-separated CONF has KEY:VALUE (spaces around either
 * ignored), VALUE compared as WANT exactly. */
static bool conf_has(const char *conf, const char *key, const char *want)
{
	size_t klen = strlen(key), wlen = strlen(want);

	while (conf && *conf) {
		const char *end = strchr(conf, ','), *colon;
		size_t n = end ? (size_t)(end - conf) : strlen(conf);

		while (n && *conf == ' ') {
			conf++;
			n--;
		}
		colon = memchr(conf, ':', n);
		if (colon) {
			const char *k = conf, *ke = colon, *val = colon + 1, *ve = conf + n;

			while (ke > k && ke[-1] == ' ')
				ke--;
			while (val < ve && *val == ' ')
				val++;
			while (ve > val && ve[-1] == ' ')
				ve--;
			if ((size_t)(ke - k) == klen && strncmp(k, key, klen) == 0 &&
			    (size_t)(ve - val) == wlen && strncmp(val, want, wlen) == 0)
				return true;
		}
		conf = end ? end + 1 : NULL;
	}
	return false;
}

bool oom_expandable(const char *conf)
{
	/* PyTorch takes "True" and "False" only */
	return conf_has(conf, "expandable_segments", "True");
}
