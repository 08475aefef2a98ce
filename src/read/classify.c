/* SPDX-License-Identifier: MIT */
/*
 * Which library a site's memory belongs to, and which Python files are the
 * user's own code: the reader's judgements over a merged site's frames.
 * The rules that judge one native frame (noise, pools, libraries) are both
 * sides', in src/common/frame_rules.c.
 */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "classify.h"
#include "sitename.h"

const char *classify_site_library(const struct rd_report_frame *frames, size_t nframes)
{
	bool cuda = false;

	/* the innermost library frame decides: a cuBLAS call that NCCL
	 * made is cuBLAS's memory */
	for (size_t i = 0; i < nframes; i++) {
		const struct rd_report_frame *f = &frames[i];
		const char *label;

		if (f->python || f->noise != NOISE_NONE || !f->module)
			continue;
		label = classify_library_module(f->module);
		if (label)
			return label;
	}
	/* No frame outside the driver and the runtime (start-up frames
	 * aside): memory they took for themselves, a context or the
	 * runtime's own state, which no line of the program asked for. */
	for (size_t i = 0; i < nframes; i++) {
		const struct rd_report_frame *f = &frames[i];

		if (f->python)
			return NULL;
		if (f->noise == NOISE_CUDA)
			cuda = true;
		else if (f->noise != NOISE_START && f->noise != NOISE_GPUSPY)
			return NULL;
	}
	return nframes == 0 || cuda ? CLASSIFY_CUDA_CONTEXT : NULL;
}

bool classify_user_file(const char *file)
{
	return sitename_user_file(file);
}
