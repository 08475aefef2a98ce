/* SPDX-License-Identifier: MIT */
/*
 * The figures of an out-of-memory event that its verdict is judged on
 * (docs/format.md, "event"): gathered once, at the failure, written into
 * oom-N.json, and given to the rule (src/common/oom_rule.c) for the line
 * on stderr; `gpuspy report` gives the rule the same figures read back.
 *
 * A site's memory is a framework pool's when one of its frames is the
 * pool's (pools.c, on the frame's module and symbol: the reader's rule
 * on what the process knows), a library's when the
 * innermost frame in a library module is (classify_library_module).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "core.h"
#include "counters.h"
#include "frame_rules.h"
#include "graph.h"
#include "nvml.h"
#include "oom_facts.h"
#include "oom_rule.h"
#include "peak.h"
#include "pools.h"
#include "sites.h"
#include "summary.h"
#include "unwind.h"
#include "view.h"

static const char *module_path(const struct gs_frame *fr)
{
	return fr->module >= 0 ? unwind_module((unsigned)fr->module)->path : NULL;
}

static const char *site_pool(const struct gs_site *s)
{
	/* the pool rule both sides apply (src/common/pools.c), as the exit
	 * summary takes it */
	return pools_label(summary_site_pool(s));
}

static const char *site_library(const struct gs_site *s)
{
	for (unsigned i = 0; i < s->depth; i++) {
		const char *path = module_path(&s->frames[i]), *base;

		if (!path)
			continue;
		base = strrchr(path, '/');
		base = classify_library_module(base ? base + 1 : path);
		if (base)
			return base;
	}
	return NULL;
}

/* Per label, the bytes of its sites: the few labels there are. */
#define LABELS 8
struct tally {
	const char *label[LABELS];
	long long bytes[LABELS];
	unsigned n;
};

static void tally_add(struct tally *t, const char *label, long long b)
{
	unsigned i;

	for (i = 0; i < t->n && t->label[i] != label; i++)
		;
	if (i == t->n) {
		if (t->n == LABELS)
			return;
		t->label[t->n] = label;
		t->bytes[t->n++] = 0;
	}
	t->bytes[i] += b;
}

/* The label with most bytes, and the sum of all, into *LABEL, *TOP, *ALL. */
static void tally_top(const struct tally *t, const char **label, long long *top, long long *all)
{
	*label = NULL;
	*top = *all = 0;
	for (unsigned i = 0; i < t->n; i++) {
		*all += t->bytes[i];
		if (t->bytes[i] > *top) {
			*top = t->bytes[i];
			*label = t->label[i];
		}
	}
}

void oom_facts_sites(struct gs_oom *e)
{
	struct tally pools = { 0 }, libs = { 0 };
	const struct gs_site *holder = NULL;
	const char *holder_pool = NULL;
	long long holder_bytes = 0, all;

	e->device_live = e->device >= 0 ? totals_device_live(gs_device_index(e->device)) : -1;
	e->limit = (long long)gs_config.limit;
	e->graph_bytes = graph_resident_bytes();
	e->others_bytes = -1;
	/* the sites list only grows, newest first: a walk without a lock
	 * sees every site made before it began */
	for (struct gs_site *s = site_list(); s; s = s->next_all) {
		long long b = counters_live_bytes(&s->c);
		const char *pool, *lib = NULL;

		if (s->id == e->site)
			e->from_pool = site_pool(s) != NULL;
		if (b <= 0 || s->kind == GS_KIND_PINNED)
			continue;
		pool = site_pool(s);
		if (pool)
			tally_add(&pools, pool, b);
		else if ((lib = site_library(s)) != NULL)
			tally_add(&libs, lib, b);
		if (b > holder_bytes) {
			holder = s;
			holder_pool = pool;
			holder_bytes = b;
		}
	}
	/* the pool of the process: the one holding most */
	tally_top(&pools, &e->pool, &e->pool_bytes, &all);
	tally_top(&libs, &e->library, &e->library_top, &e->library_bytes);
	e->holder[0] = '\0';
	e->holder_bytes = holder_bytes;
	/* a pool segment is the request that grew the pool, not what holds
	 * it now: named as the pool's, as the report names it */
	e->holder_is_pool = holder_pool != NULL;
	if (holder_pool)
		snprintf(e->holder, sizeof(e->holder), "the %s's segments", holder_pool);
	else if (holder)
		summary_site_name(e->holder, sizeof(e->holder), holder);
}

void oom_facts_nvml(struct gs_oom *e)
{
	e->others_bytes = nvml_others(e->device, e->others, GS_OOM_OTHERS, &e->n_others);
}
