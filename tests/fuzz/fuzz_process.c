/* SPDX-License-Identifier: MIT */
/*
 * The gpuspy-process/1 loader (report.json, snapshot.json, snapshot-N.json,
 * oom-N.json): the input is a report.json, which 'gpuspy report' reads,
 * merges and prints as text, as JSON and in each export format.
 */
#include <stddef.h>
#include <stdint.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *file;

	fuzz_write("node-1/report.json", data, size);
	file = fuzz_path("node-1/report.json");
	fuzz_run((const char *const[]){ "report", file, NULL });
	fuzz_run((const char *const[]){ "report", "--format", "json", file, NULL });
	fuzz_run((const char *const[]){ "report", "--format", "pprof", "--peak", file, NULL });
	fuzz_run((const char *const[]){ "report", "--format", "collapsed", file, NULL });
	fuzz_run((const char *const[]){ "report", "--format", "perfetto", file, NULL });
	fuzz_run((const char *const[]){ "report", "--format", "html", file, NULL });
	return 0;
}
