/* SPDX-License-Identifier: MIT */
/*
 * Which library a site's memory belongs to, and which Python files are the
 * user's own code: the reader's judgements over a merged site's frames.
 * The rules that judge one native frame (noise, pools) are both sides',
 * in src/common/frame_rules.c.
 */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "classify.h"
#include "sitename.h"

/* Libraries whose memory is theirs, not their caller's: workspaces,
 * handles, communicators.  The first prefix that matches wins, so
 * libcublasLt comes before libcublas. */
static const struct {
	const char *prefix;
	const char *label;
} libraries[] = {
	{ "libcublasLt", "cuBLASLt" }, { "libcublas", "cuBLAS" },     { "libcudnn", "cuDNN" },
	{ "libnccl", "NCCL" },	       { "libcufft", "cuFFT" },	      { "libcurand", "cuRAND" },
	{ "libcusparse", "cuSPARSE" }, { "libcusolver", "cuSOLVER" },
};

const char *classify_site_library(const struct rd_report_frame *frames, size_t nframes)
{
	bool cuda = false;

	/* the innermost library frame decides: a cuBLAS call that NCCL
	 * made is cuBLAS's memory */
	for (size_t i = 0; i < nframes; i++) {
		const struct rd_report_frame *f = &frames[i];

		if (f->python || f->noise != NOISE_NONE || !f->module)
			continue;
		for (size_t k = 0; k < sizeof(libraries) / sizeof(libraries[0]); k++)
			if (strncmp(f->module, libraries[k].prefix, strlen(libraries[k].prefix)) ==
			    0)
				return libraries[k].label;
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
