/* SPDX-License-Identifier: MIT */
/*
 * GPUSPY_LIMIT (limit.c): a smaller card on purpose.  An allocation that
 * would take a device's tracked memory past the limit fails as CUDA fails
 * it on a full device, before the real allocator is called, and
 * cuMemGetInfo and cuDeviceTotalMem say what the smaller card would.
 *
 * The driver's allocating hooks ask limit_refuse() at any depth (a
 * runtime call reaches them nested, and its runtime then fails the call
 * as it would for a full device: its own error state set, its error code
 * translated).  What limit_refuse() lets through is held for the calling
 * thread until record_alloc() counts it (limit_counted) or the real call
 * fails (limit_drop), so that two threads never both take the last bytes.
 * Unset, the hooks pay one predictable branch on gs_config.limit.
 */
#ifndef GPUSPY_LIMIT_H
#define GPUSPY_LIMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf.h"
#include "core.h"

static inline bool limit_on(void)
{
	return GS_UNLIKELY(gs_config.limit != 0);
}

/*
 * Whether SIZE bytes of KIND on DEVICE (an ordinal, GS_DEVICE_CURRENT or
 * -1) would take the device past the limit: true to refuse (the next
 * record_oom of this thread is then the limit's).  Pinned host memory and
 * an unknown device are never refused; nor anything while gpuspy does
 * not track (GPUSPY_DISABLE, gpuspy off after a failure of its own).
 */
bool limit_refuse(enum gs_kind kind, int device, uint64_t size);
/* What this thread holds was counted (record_alloc), or never will be
 * (the real call failed). */
void limit_counted(void);
void limit_drop(void);
/* Whether this thread's last out-of-memory was the limit's refusal;
 * asking forgets it (record_oom). */
bool limit_refused_here(void);
/* cuMemGetInfo's figures of the current device as the smaller card has
 * them: the total no more than the limit, the free memory no more than
 * the limit less what is tracked there.  Called with the real ones. */
void limit_mem_info(size_t *free_bytes, size_t *total_bytes);
/* cuDeviceTotalMem's. */
void limit_total(size_t *bytes);

#endif /* GPUSPY_LIMIT_H */
