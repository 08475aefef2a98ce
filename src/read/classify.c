/* SPDX-License-Identifier: MIT */
/*
 * Which library a site's memory belongs to, which framework's pool it is a
 * segment of, and which Python files are the user's own code: the
 * reader's judgements over a merged site's frames.  The rules that judge
 * one native frame are both sides': noise and libraries in
 * src/common/frame_rules.c, pools in src/common/pools.c.
 */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "classify.h"
#include "pools.h"
#include "sitename.h"

/* The hints of the framework pools whose segments the text report lists
 * (src/common/pools.c has the rules that tell a pool's segment): a site of
 * such a segment is the request that found the pool too small (often in
 * the backward pass, on the autograd thread), not the tensors that hold
 * the memory later: the report says so, and how to get one site per
 * tensor where the framework can. */
static const char *const pool_hints[GS_POOL_COUNT] = {
	[GS_POOL_TORCH] = "sites are the requests that grew the pool, not the tensors holding it "
			  "now; run with PYTORCH_NO_CUDA_MEMORY_CACHING=1 for one site per tensor.",
	[GS_POOL_CUPY] = "sites are the requests that grew CuPy's pool, not the arrays holding it "
			 "now.",
	[GS_POOL_XLA] = "sites are the requests that grew XLA's BFC pool, not the buffers holding "
			"it now; with JAX, XLA_PYTHON_CLIENT_ALLOCATOR=platform gives one site per "
			"buffer.",
};

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

const char *classify_pool(const char *api, const char *path, const char *function)
{
	return pools_label(pools_frame(api, path, function));
}

const char *classify_pool_label(size_t i)
{
	return i < GS_POOL_COUNT ? pools_label((int)i) : NULL;
}

const char *classify_pool_hint(const char *label)
{
	for (int i = 0; label && i < GS_POOL_COUNT; i++)
		if (strcmp(pools_label(i), label) == 0)
			return pool_hints[i];
	return NULL;
}

bool classify_user_file(const char *file)
{
	return sitename_user_file(file);
}
