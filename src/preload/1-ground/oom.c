/* SPDX-License-Identifier: MIT */
/* An out-of-memory event as the verdict rule takes it (oom.h). */
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "oom.h"
#include "oom_rule.h"

void oom_as_facts(const struct gs_oom *e, struct oom_facts *f)
{
	const struct gs_oom_torch *t = e->torch;

	memset(f, 0, sizeof(*f));
	f->requested = (int64_t)e->requested;
	f->pinned = e->kind == GS_KIND_PINNED;
	f->device_total = e->total_bytes;
	f->device_free = e->free_bytes;
	f->limit = e->limit;
	f->capped = e->capped;
	f->tracked = e->device_live;
	f->pool = e->pool;
	f->pool_bytes = e->pool_bytes;
	f->from_pool = e->from_pool;
	f->library = e->library;
	f->library_bytes = e->library_bytes;
	f->library_top = e->library_top;
	f->graph_bytes = e->graph_bytes;
	f->others_bytes = e->others_bytes;
	f->other_pid = e->n_others ? (int64_t)e->others[0].pid : -1;
	f->other_bytes = e->n_others ? e->others[0].used : -1;
	f->other_name = e->n_others && e->others[0].name[0] ? e->others[0].name : NULL;
	f->pool_request = t ? t->request : -1;
	f->pool_allocated = t ? t->allocated : -1;
	f->pool_reserved = t ? t->reserved : -1;
	f->pool_largest_free = t ? t->largest_free : -1;
	f->expandable = oom_expandable(getenv("PYTORCH_CUDA_ALLOC_CONF")) ||
			oom_expandable(getenv("PYTORCH_ALLOC_CONF"));
	if (t && t->pinner[0]) {
		f->pinner = t->pinner;
		f->pinner_bytes = t->pinner_bytes;
	}
	if (t && t->holder[0]) {
		f->holder = t->holder;
		f->holder_bytes = t->holder_bytes;
	} else if (e->holder[0]) {
		f->holder = e->holder;
		f->holder_bytes = e->holder_bytes;
		f->holder_is_pool = e->holder_is_pool;
	}
}
