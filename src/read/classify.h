/* SPDX-License-Identifier: MIT */
#ifndef GPUSPY_READ_CLASSIFY_H
#define GPUSPY_READ_CLASSIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The frame rules both sides apply (src/common/frame_rules.h), and what the
 * reader judges over a merged site's frames (classify.c here). */
#include "frame_rules.h"

/* A frame of a merged site as people read it: symbolized, with its noise. */
struct rd_report_frame {
	char *function;
	char *module; /* basename; NULL when the frame lies in no module */
	char *file;
	int64_t line;
	uint64_t offset;
	char *build_id;	     /* NULL when unknown */
	bool python;	     /* a Python frame: function, file and line only */
	bool user;	     /* Python: a file of the user's code */
	enum rd_noise noise; /* native only */
	/* Of a merged site whose calls came from several lines of this
	 * frame's function (LINE is then 0): those lines, ascending. */
	int64_t *lines;
	size_t nlines;
};

/* The label of memory a library holds rather than its caller (docs/format.md,
 * "library"): "cuBLAS", ..., CLASSIFY_CUDA_CONTEXT, or NULL for user code.
 * FRAMES must carry their noise already. */
const char *classify_site_library(const struct rd_report_frame *frames, size_t nframes);

/* The framework allocator whose pool segment an allocation by API is
 * (docs/format.md, "pool"), judged on one native frame of its stack, noise
 * or not (PATH and FUNCTION as classify_noise takes them): "PyTorch caching
 * allocator", "CuPy memory pool", "XLA allocator", or NULL.  The innermost
 * frame with a label decides for the site (src/common/pools.c). */
const char *classify_pool(const char *api, const char *path, const char *function);

/* The I-th pool label in a fixed order, NULL past the last; the one-line
 * hint for a label's sites (without the label), NULL for another string. */
const char *classify_pool_label(size_t i);
const char *classify_pool_hint(const char *label);

/* Whether a Python source file is the user's own code: not the standard
 * library, not an installed package. */
bool classify_user_file(const char *file);

/* The label of a site whose every frame is the CUDA driver or runtime. */
#define CLASSIFY_CUDA_CONTEXT "CUDA runtime/context"

#endif
