/* SPDX-License-Identifier: MIT */
/*
 * The gpuspy-allocations/1 loader: the input is the allocations.json
 * beside a valid report of pid 66 (the seeds' pid and host), which
 * 'gpuspy export --memory-viz' reads with it, replays against its trace
 * and writes as a pickle.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *out;

	if (!out) {
		fuzz_write("node6-66/report.json", (const uint8_t *)fuzz_report66,
			   strlen(fuzz_report66));
		out = strdup(fuzz_path("snapshot.pickle"));
	}
	fuzz_write("node6-66/allocations.json", data, size);
	fuzz_run((const char *const[]){ "export", "--memory-viz", out, fuzz_path("node6-66"),
					NULL });
	return 0;
}
