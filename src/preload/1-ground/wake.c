/* SPDX-License-Identifier: MIT */
/* The snapshot thread's wake-up (wake.h). */
#include "wake.h"

sem_t gs_wake_sem;
atomic_bool gs_wake_ready, gs_wake_torch_asked, gs_torch_wake;

void wake_torch(void)
{
	if (!atomic_load(&gs_wake_ready))
		return;
	atomic_store(&gs_wake_torch_asked, true);
	sem_post(&gs_wake_sem);
}
