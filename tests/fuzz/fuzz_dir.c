/* SPDX-License-Identifier: MIT */
/*
 * What a process directory holds, together: the input is up to six files
 * separated by lines "--gpuspy-fuzz--", in the order of NAMES (an empty
 * part: that file is absent).  'gpuspy report' chooses the report among
 * them (report.json, else the newer of snapshot.json and the highest
 * oom-N.json), reads the post-mortems it names, torch.json and (with
 * --format csv) history.jsonl; 'gpuspy merge' and 'gpuspy diff' (with
 * and without --at) read the directory too.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const names[] = {
	"run/node-1/report.json",   "run/node-1/oom-1.json", "run/node-1/oom-2.json",
	"run/node-1/snapshot.json", "run/node-1/torch.json", "run/node-1/history.jsonl",
};
#define NNAMES (sizeof(names) / sizeof(names[0]))

static const char sep[] = "\n--gpuspy-fuzz--\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size;
	const char *run, *proc;

	for (size_t i = 0; i < NNAMES; i++) {
		const uint8_t *next =
			p < end ? memmem(p, (size_t)(end - p), sep, strlen(sep)) : NULL;
		size_t n = next ? (size_t)(next - p) : (size_t)(end - p);

		fuzz_write(names[i], n ? p : NULL, n);
		p = next ? next + strlen(sep) : end;
	}
	run = strdup(fuzz_path("run"));
	proc = fuzz_path("run/node-1");
	fuzz_run((const char *const[]){ "report", run, NULL });
	fuzz_run((const char *const[]){ "report", "--format", "json", proc, NULL });
	fuzz_run((const char *const[]){ "report", "--format", "csv", run, NULL });
	fuzz_run((const char *const[]){ "merge", run, NULL });
	fuzz_run((const char *const[]){ "diff", run, proc, NULL });
	fuzz_run((const char *const[]){ "diff", "--at", "epoch 1", "--format", "json", run, run,
					NULL });
	free((void *)run);
	return 0;
}
