/* SPDX-License-Identifier: MIT */
/*
 * The gpuspy-history/1 loader: the input is the history.jsonl beside a valid
 * report of pid 66 (the seeds' pid), which 'gpuspy report --format csv',
 * perfetto and html read with it.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;

	if (!ready) {
		fuzz_write("node6-66/report.json", (const uint8_t *)fuzz_report66,
			   strlen(fuzz_report66));
		ready = 1;
	}
	fuzz_write("node6-66/history.jsonl", data, size);
	fuzz_run((const char *const[]){ "report", "--format", "csv", fuzz_path("node6-66"), NULL });
	fuzz_run((const char *const[]){ "report", "--format", "perfetto", fuzz_path("node6-66"),
					NULL });
	fuzz_run(
		(const char *const[]){ "report", "--format", "html", fuzz_path("node6-66"), NULL });
	return 0;
}
