/* SPDX-License-Identifier: MIT */
/*
 * The gpuspy-torch/1 loader: the input is the torch.json beside a valid
 * report of pid 66 (the seeds' pid), which 'gpuspy report' reads with it.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char report[] =
	"{\"format\": \"gpuspy-process/1\", \"host\": \"node6\", \"pid\": 66,"
	" \"command\": [\"./train\"], \"complete\": true,"
	" \"leaked\": {\"bytes\": 0, \"allocations\": 0}, \"peak\": {\"bytes\": 0},"
	" \"kinds\": {"
#define ZERO                                                                                       \
	"{\"live_bytes\": 0, \"live_allocations\": 0, \"peak_bytes\": 0, \"allocated_bytes\": 0,"  \
	" \"allocations\": 0, \"freed_bytes\": 0, \"frees\": 0}"
	"\"device\": " ZERO ", \"managed\": " ZERO ", \"vmm\": " ZERO ", \"pinned\": " ZERO "},"
	" \"untracked_frees\": 0, \"modules\": [], \"sites\": []}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;

	if (!ready) {
		fuzz_write("node6-66/report.json", (const uint8_t *)report, strlen(report));
		ready = 1;
	}
	fuzz_write("node6-66/torch.json", data, size);
	fuzz_run((const char *const[]){ "report", fuzz_path("node6-66"), NULL });
	fuzz_run(
		(const char *const[]){ "report", "--format", "json", fuzz_path("node6-66"), NULL });
	return 0;
}
