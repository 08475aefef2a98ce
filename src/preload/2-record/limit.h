/* SPDX-License-Identifier: MIT */
/*
 * GPUSPY_LIMIT (limit.c): a smaller card on purpose.  An allocation that
 * would take a device's tracked memory past the limit fails as CUDA fails
 * it on a full device, before the real allocator is called, and
 * cuMemGetInfo and cuDeviceTotalMem say what the smaller card would.
 *
 * The driver's allocating hooks decide (limit_admit), where the current
 * device is known: the outermost one for a driver call, or the one nested
 * in a runtime call, which its runtime hook asks to (limit_nested_begin):
 * refused there, the nested call fails without reaching the driver, and
 * the runtime fails its call as it does on a full device, its error state
 * set, its code translated.  What is admitted is held (struct limit_hold)
 * until the allocation was counted by the outermost hook, so that two
 * threads never both take the last bytes.
 *
 * Unset, a hook pays one predictable branch on gs_config.limit
 * (limit_on): everything else is behind it.
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

/* What an admitted request holds of its device (index 0: nothing). */
struct limit_hold {
	unsigned index;
	long long bytes;
};
#define LIMIT_HOLD_NONE ((struct limit_hold){ 0, 0 })

/*
 * Whether SIZE bytes of KIND on DEVICE (an ordinal, GS_DEVICE_CURRENT or
 * -1) fit under the limit: true, with H holding them, or false to refuse
 * (the next record_oom of this thread is then the limit's).  Pinned host
 * memory and an unknown device always fit, holding nothing; so does
 * anything while gpuspy does not track (GPUSPY_DISABLE, gpuspy off after
 * a failure of its own).
 */
bool limit_admit(struct limit_hold *h, enum gs_kind kind, int device, uint64_t size);
/* H's allocation was counted, or failed: what it held goes. */
void limit_release(struct limit_hold *h);
/* Whether this thread's last out-of-memory was the limit's refusal;
 * asking forgets it (record_oom). */
bool limit_refused_here(void);
/*
 * A runtime hook's call of the real runtime, between begin and end: the
 * driver hooks nested in it decide (limit_nested_admit), holding what
 * they admit for this thread until end, after the runtime hook counted
 * the allocation.
 */
void limit_nested_begin(void);
void limit_nested_end(void);
/* In a nested driver hook: as limit_admit, into this thread's hold; true
 * outside a runtime hook's call (no decision there). */
bool limit_nested_admit(enum gs_kind kind, int device, uint64_t size);
/* cuMemGetInfo's figures of the current device as the smaller card has
 * them: the total no more than the limit, the free memory no more than
 * the limit less what is tracked there.  Called with the real ones. */
void limit_mem_info(size_t *free_bytes, size_t *total_bytes);
/* cuDeviceTotalMem's. */
void limit_total(size_t *bytes);

#endif /* GPUSPY_LIMIT_H */
