/* SPDX-License-Identifier: MIT */
/* The device a rank owns (ranks.h). */
#include <stddef.h>

#include "ranks.h"

int64_t ranks_parse(const char *s)
{
	int64_t x = 0;
	size_t n = 0;

	if (!s || !*s)
		return -1;
	for (; *s; s++, n++) {
		if (*s < '0' || *s > '9' || n == 9)
			return -1;
		x = x * 10 + (*s - '0');
	}
	return x;
}

int ranks_own_device(int64_t rank, int64_t local_rank, int64_t ndevices)
{
	if (ndevices < 2)
		return -1;
	if (local_rank >= 0 && local_rank < ndevices)
		return (int)local_rank;
	if (rank >= 0)
		return (int)(rank % ndevices);
	return -1;
}

int64_t ranks_context_bytes(int64_t tracked, int64_t nvml)
{
	if (nvml < 0 || tracked < 0 || nvml <= tracked)
		return 0;
	return nvml - tracked;
}
