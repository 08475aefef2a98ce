/* SPDX-License-Identifier: MIT */
/*
 * The verdict of an out-of-memory event (oom_verdict.h): the event's
 * recorded figures as the rule takes them, and the names the report uses
 * for its holders.  The figures are the process's own, judged by the same
 * rule libgpuspy applied on the spot: the line on stderr and the report's
 * say the same, but for the names (the report's are symbolized).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "merge_site.h"
#include "model.h"
#include "oom_verdict.h"
#include "sitename.h"

/* The environment of the moment (the event's oom-N.json), else the
 * process's report's. */
static const char *env_of(const struct rd_report_oom *ro, const char *name)
{
	const struct rd_process *src = ro->ev->snapshot ? ro->ev->snapshot : ro->proc;

	for (size_t i = 0; i < src->nenv; i++)
		if (strcmp(src->env[i].name, name) == 0)
			return src->env[i].value;
	return NULL;
}

/* PyTorch's lines L[0..N-1] of an event, each by its one name among
 * them into *NAMES, its role after it when WITH_ROLE. */
static int name_lines(const struct rd_oom_torch_line *l, size_t n, bool with_role, char ***names,
		      size_t *nnames)
{
	struct sitename_site *sites;
	int e = 0;

	if (!n)
		return 0;
	sites = calloc(n, sizeof(*sites));
	*names = calloc(n, sizeof(**names));
	if (!sites || !*names) {
		free(sites);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n && e == 0; i++) {
		struct sitename_frame *f = calloc(l[i].nframes + 1, sizeof(*f));

		if (!f) {
			e = -ENOMEM;
			break;
		}
		for (size_t k = 0; k < l[i].nframes; k++) {
			const struct rd_pyframe *p = &l[i].frames[k];

			f[k].function = p->function;
			f[k].file = p->file;
			f[k].line = p->line;
			f[k].python = true;
			f[k].user = sitename_user_file(p->file);
		}
		sites[i].frames = f;
		sites[i].nframes = l[i].nframes;
	}
	if (e == 0)
		e = sitename_names(sites, n, *names);
	if (e == 0)
		*nnames = n;
	for (size_t i = 0; i < n; i++)
		free((void *)sites[i].frames);
	free(sites);
	/* "step (train.py:41) [activations]" */
	for (size_t i = 0; e == 0 && with_role && i < n; i++) {
		char *named;

		if (!l[i].role)
			continue;
		named = malloc(strlen((*names)[i]) + strlen(l[i].role) + 4);
		if (!named)
			return -ENOMEM;
		sprintf(named, "%s [%s]", (*names)[i], l[i].role);
		free((*names)[i]);
		(*names)[i] = named;
	}
	return e;
}

int oom_verdict_build(struct rd_report_oom *ro)
{
	const struct rd_oom *ev = ro->ev;
	const struct rd_oom_torch *t = ev->torch;
	struct rd_oom_verdict *out = &ro->verdict;
	struct oom_facts *f = &out->facts;
	int n, e;

	memset(out, 0, sizeof(*out));
	f->requested = ev->requested_bytes;
	f->pinned = ev->kind == GS_KIND_PINNED;
	f->device_total = ev->total_bytes;
	f->device_free = ev->free_bytes;
	f->limit = ev->limit_bytes;
	f->capped = ev->capped;
	f->tracked = ev->device_live_bytes;
	f->pool = ev->pool;
	f->pool_bytes = ev->pool_bytes;
	f->from_pool = ev->pool_requested;
	f->library = ev->library;
	f->library_bytes = ev->library_bytes;
	f->library_top = ev->library_top_bytes;
	f->graph_bytes = ev->graph_bytes;
	f->others_bytes = ev->others_bytes;
	f->other_pid = ev->nothers ? ev->others[0].pid : -1;
	f->other_bytes = ev->nothers ? ev->others[0].used_bytes : -1;
	f->other_name = ev->nothers ? ev->others[0].name : NULL;
	f->pool_request = t ? t->requested_bytes : -1;
	f->pool_allocated = t ? t->allocated_bytes : -1;
	f->pool_reserved = t ? t->reserved_bytes : -1;
	f->pool_largest_free = t ? t->largest_free_bytes : -1;
	f->expandable = oom_expandable(env_of(ro, "PYTORCH_CUDA_ALLOC_CONF")) ||
			oom_expandable(env_of(ro, "PYTORCH_ALLOC_CONF"));
	if (t && ((e = name_lines(t->lines, t->nlines, false, &out->pin_names, &out->npins)) < 0 ||
		  (e = name_lines(t->holders, t->nholders, true, &out->holder_names,
				  &out->nholders)) < 0))
		return e;
	if (out->npins && t) {
		f->pinner = out->pin_names[0];
		f->pinner_bytes = t->lines[0].bytes;
	}
	/* the largest holder, as libgpuspy picks it: PyTorch's first line
	 * holding most, else the site holding most then, a pool segment named
	 * as the pool's (the request that grew it, not what holds it) */
	if (out->nholders && t) {
		out->holder = strdup(out->holder_names[0]);
		f->holder_bytes = t->holders[0].bytes;
	} else if (ro->ntop && ro->top[0]->pool) {
		size_t len = strlen(ro->top[0]->pool) + 16;

		out->holder = malloc(len);
		if (out->holder)
			snprintf(out->holder, len, "the %s's segments", ro->top[0]->pool);
		f->holder_bytes = ro->top[0]->c.live_bytes;
		f->holder_is_pool = true;
	} else if (ro->ntop) {
		out->holder = strdup(merge_site_name(ro->top[0]));
		f->holder_bytes = ro->top[0]->c.live_bytes;
	}
	if ((out->nholders || ro->ntop) && !out->holder)
		return -ENOMEM;
	f->holder = out->holder;
	oom_judge(f, &out->v);
	n = oom_verdict_line(NULL, 0, f, &out->v);
	out->line = malloc((size_t)n + 1);
	if (!out->line)
		return -ENOMEM;
	oom_verdict_line(out->line, (size_t)n + 1, f, &out->v);
	return 0;
}

void oom_verdict_clear(struct rd_oom_verdict *v)
{
	free(v->line);
	free(v->holder);
	for (size_t i = 0; i < v->npins; i++)
		free(v->pin_names[i]);
	free(v->pin_names);
	for (size_t i = 0; i < v->nholders; i++)
		free(v->holder_names[i]);
	free(v->holder_names);
	memset(v, 0, sizeof(*v));
}
