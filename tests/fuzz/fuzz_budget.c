/* SPDX-License-Identifier: MIT */
/*
 * The budget file of 'gpuspy diff --budget FILE' (src/read/budget.c):
 * the input is the file, each site of two valid reports of pid 66
 * (sites "step" and "forward") judged against it, with the verdicts as
 * JUnit XML too.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *budget, *junit, *old, *new;

	if (!budget) {
		fuzz_write("old/node6-66/report.json", (const uint8_t *)fuzz_report66,
			   strlen(fuzz_report66));
		fuzz_write("new/node6-66/report.json", (const uint8_t *)fuzz_report66,
			   strlen(fuzz_report66));
		budget = strdup(fuzz_path("budget.txt"));
		junit = strdup(fuzz_path("junit.xml"));
		old = strdup(fuzz_path("old"));
		new = strdup(fuzz_path("new"));
	}
	fuzz_write("budget.txt", data, size);
	fuzz_run((const char *const[]){ "diff", "--budget", budget, old, new, NULL });
	fuzz_run((const char *const[]){ "diff", "--budget", budget, "--junit", junit, "--format",
					"json", old, new, NULL });
	return 0;
}
