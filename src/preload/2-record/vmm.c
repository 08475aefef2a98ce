/* SPDX-License-Identifier: MIT */
/*
 * Virtual memory management (cuMemCreate / cuMemMap / cuMemUnmap /
 * cuMemRelease).  Physical memory is counted when created.  The driver
 * frees it only when its handle is released *and* its last mapping is
 * gone, so releases of still-mapped handles are deferred here: the live
 * entry is moved to a private key (the handle number may be reused by
 * the next cuMemCreate) and freed at the last unmap.
 *
 * VMM calls are few (PyTorch's expandable segments map 20 MiB pages), so
 * one mutex, gs_vmm_lock, guards this state; table shards nest under it.
 */
#include <errno.h>
#include <stdlib.h>

#include "core.h"
#include "counters.h"
#include "locks.h"
#include "log.h"
#include "record.h"
#include "table.h"
#include "vmm.h"

struct phys {
	uint64_t handle;
	unsigned maps;
	bool released; /* handle gone, memory alive until the last unmap */
	uint64_t orphan_key;
	UT_hash_handle hh;
};

struct mapping {
	uint64_t va;
	uint64_t size;
	struct phys *phys; /* by pointer: a released handle's number is reused */
	UT_hash_handle hh;
};

static struct phys *phys_by_handle;
static struct mapping *maps_by_va;
static uint64_t next_orphan = 1;

static struct phys *phys_get(uint64_t handle, bool create)
{
	struct phys *p;

	HASH_FIND(hh, phys_by_handle, &handle, sizeof(handle), p);
	if (p || !create)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->handle = handle;
	gs_hash_oom = 0;
	HASH_ADD(hh, phys_by_handle, handle, sizeof(p->handle), p);
	if (gs_hash_oom) {
		gs_hash_oom = 0;
		free(p);
		return NULL;
	}
	return p;
}

void vmm_on_map(uint64_t va, uint64_t size, uint64_t handle)
{
	struct mapping *m = calloc(1, sizeof(*m));
	struct phys *p;

	atomic_fetch_add(&gs_totals.vmm_mapped_bytes, (long long)size);
	if (!m) {
		gs_fail("out of memory while following a mapping");
		return;
	}
	m->va = va;
	m->size = size;
	gs_lock(&gs_vmm_lock);
	p = phys_get(handle, true);
	if (p) {
		m->phys = p;
		gs_hash_oom = 0;
		HASH_ADD(hh, maps_by_va, va, sizeof(m->va), m);
		if (gs_hash_oom) {
			gs_hash_oom = 0;
			p = NULL;
		} else {
			p->maps++;
		}
	}
	gs_unlock(&gs_vmm_lock);
	if (!p) {
		free(m);
		gs_fail("out of memory while following a mapping");
	}
}

/* With the lock held: one mapping goes; its memory may go with it. */
static void unmap_one(struct mapping *m)
{
	struct phys *p = m->phys;

	atomic_fetch_sub(&gs_totals.vmm_mapped_bytes, (long long)m->size);
	HASH_DELETE(hh, maps_by_va, m);
	if (p->maps > 0 && --p->maps == 0 && p->released) {
		/* Released earlier and no longer in phys_by_handle. */
		struct gs_alloc *a = record_free_begin(GS_SPACE_ORPHAN, p->orphan_key);

		free(p);
		record_free_end(a, 0, true);
	} else if (p->maps == 0) {
		/*
		 * Nothing to remember about an unmapped, unreleased handle.  It
		 * is in phys_by_handle, which is therefore not empty (the
		 * analyzer takes maps == 0 on entry, but a mapping holds a count).
		 * NOLINTNEXTLINE(clang-analyzer-core.NullDereference) */
		HASH_DELETE(hh, phys_by_handle, p);
		free(p);
	}
	free(m);
}

void vmm_on_unmap(uint64_t va, uint64_t size)
{
	uint64_t end = va + size, cur = va;
	struct mapping *m, *tmp;

	gs_lock(&gs_vmm_lock);
	/* Usually the range is one mapping, or a few laid end to end. */
	while (cur < end) {
		HASH_FIND(hh, maps_by_va, &cur, sizeof(cur), m);
		if (!m)
			break;
		cur += m->size;
		unmap_one(m);
	}
	if (cur < end) {
		HASH_ITER(hh, maps_by_va, m, tmp)
			if (m->va >= va && m->va < end)
				unmap_one(m);
	}
	gs_unlock(&gs_vmm_lock);
}

static struct phys *orphan_of(uint64_t handle, uint64_t orphan_key)
{
	struct mapping *m, *tmp;

	HASH_ITER(hh, maps_by_va, m, tmp)
		if (m->phys->released && m->phys->handle == handle &&
		    m->phys->orphan_key == orphan_key)
			return m->phys;
	return NULL;
}

struct gs_alloc *vmm_release_begin(uint64_t handle, bool *deferred, uint64_t *orphan_key)
{
	struct phys *p;
	int err;

	gs_lock(&gs_vmm_lock);
	p = phys_get(handle, false);
	*deferred = p && p->maps > 0;
	if (*deferred) {
		/* Keep the memory live under a private key until its last
		 * unmap; the handle number itself is free for reuse. */
		p->orphan_key = next_orphan++;
		*orphan_key = p->orphan_key;
		err = table_rekey(GS_SPACE_HANDLE, handle, GS_SPACE_ORPHAN, p->orphan_key);
		if (err == 0 || err == -ENOENT) {
			/* -ENOENT: created before gpuspy; follow it all the same. */
			p->released = true;
			HASH_DELETE(hh, phys_by_handle, p);
		}
		gs_unlock(&gs_vmm_lock);
		return NULL;
	}
	gs_unlock(&gs_vmm_lock);
	return record_free_begin(GS_SPACE_HANDLE, handle);
}

void vmm_release_end(uint64_t handle, struct gs_alloc *a, bool deferred, uint64_t orphan_key,
		     bool ok)
{
	struct phys *p;

	if (!deferred) {
		record_free_end(a, handle, ok);
		return;
	}
	if (ok)
		return;
	/* The release failed (rare): the handle still owns the memory. */
	gs_lock(&gs_vmm_lock);
	p = orphan_of(handle, orphan_key);
	if (p) {
		table_rekey(GS_SPACE_ORPHAN, orphan_key, GS_SPACE_HANDLE, handle);
		p->released = false;
		gs_hash_oom = 0;
		HASH_ADD(hh, phys_by_handle, handle, sizeof(p->handle), p);
		gs_hash_oom = 0;
	}
	gs_unlock(&gs_vmm_lock);
}

void vmm_each_mapping(void (*fn)(uint64_t va, uint64_t size, enum gs_space space, uint64_t key,
				 void *arg),
		      void *arg)
{
	struct mapping *m, *tmp;

	gs_lock(&gs_vmm_lock);
	HASH_ITER(hh, maps_by_va, m, tmp) {
		const struct phys *p = m->phys;

		fn(m->va, m->size, p->released ? GS_SPACE_ORPHAN : GS_SPACE_HANDLE,
		   p->released ? p->orphan_key : p->handle, arg);
	}
	gs_unlock(&gs_vmm_lock);
}
