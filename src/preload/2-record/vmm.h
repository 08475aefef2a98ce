/* SPDX-License-Identifier: MIT */
/* vmm.c: physical handles, their mappings, reserved address space */
#ifndef GPUSPY_VMM_H
#define GPUSPY_VMM_H

#include <stdbool.h>
#include <stdint.h>

#include "core.h"

struct gs_alloc;

void vmm_on_map(uint64_t va, uint64_t size, uint64_t handle);
void vmm_on_unmap(uint64_t va, uint64_t size);
/* Before the real cuMemRelease: returns what record_free_end needs. */
struct gs_alloc *vmm_release_begin(uint64_t handle, bool *deferred, uint64_t *orphan_key);
void vmm_release_end(uint64_t handle, struct gs_alloc *a, bool deferred, uint64_t orphan_key,
		     bool ok);
/* Each mapping of physical memory gpuspy follows, under gs_vmm_lock:
 * FN(VA, SIZE, SPACE, KEY, ARG), (SPACE, KEY) the live table's key of
 * the memory mapped (its handle, or a released handle's orphan key).
 * FN takes no gpuspy lock. */
void vmm_each_mapping(void (*fn)(uint64_t va, uint64_t size, enum gs_space space, uint64_t key,
				 void *arg),
		      void *arg);

#endif /* GPUSPY_VMM_H */
