/* SPDX-License-Identifier: MIT */
/* vmm.c: physical handles, their mappings, reserved address space */
#ifndef GPUSPY_VMM_H
#define GPUSPY_VMM_H

#include <stdbool.h>
#include <stdint.h>

struct gs_alloc;

void vmm_on_map(uint64_t va, uint64_t size, uint64_t handle);
void vmm_on_unmap(uint64_t va, uint64_t size);
/* Before the real cuMemRelease: returns what record_free_end needs. */
struct gs_alloc *vmm_release_begin(uint64_t handle, bool *deferred, uint64_t *orphan_key);
void vmm_release_end(uint64_t handle, struct gs_alloc *a, bool deferred, uint64_t orphan_key,
		     bool ok);

#endif /* GPUSPY_VMM_H */
