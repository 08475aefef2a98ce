/* SPDX-License-Identifier: MIT */
/*
 * Framework allocators that keep a pool: which framework's pool an
 * allocation is a segment of, judged on the frames of its stack.  A
 * framework takes memory from CUDA in segments and cuts the tensors,
 * arrays or buffers the program asks for out of them; what its pool
 * still holds when the process ends is the framework's, not a leak of the
 * program's code (libgpuspy(7), "What leaked means").
 *
 * Both sides compile this: `gpuspy report` labels a merged site from its
 * symbolized frames (src/read/classify.c, demangled names), libgpuspy
 * its own sites from the dynamic symbols the process knows (mangled C++
 * names): a row's names match either spelling.  No allocation, no state,
 * no lock.
 */
#ifndef GPUSPY_POOLS_H
#define GPUSPY_POOLS_H

#include <stdbool.h>

/* The pools, in the order of the reports' hints. */
enum gs_pool { GS_POOL_NONE = -1, GS_POOL_TORCH, GS_POOL_CUPY, GS_POOL_XLA, GS_POOL_COUNT };

/*
 * The pool whose segment an allocation by API (an entry point's name,
 * "cuMemAlloc_v2") is, judged on one native frame of its stack: PATH, the
 * module's path (NULL when the frame lies in no module), and FUNCTION,
 * its name demangled or as the dynamic symbol table spells it (NULL when
 * unknown).  GS_POOL_NONE when the frame tells nothing.  The innermost
 * frame that names a pool decides for the site.
 */
int pools_frame(const char *api, const char *path, const char *function);

/* "PyTorch caching allocator", "CuPy memory pool", "XLA allocator"; NULL
 * for another value.  The pool's short name, "PyTorch", "CuPy", "JAX/XLA".
 * The framework (enum gs_fw of names.h) whose own counters speak of it. */
const char *pools_label(int pool);
const char *pools_title(int pool);
int pools_framework(int pool);
/* The pool enum gs_fw FW keeps, or GS_POOL_NONE. */
int pools_of_framework(int fw);

#endif /* GPUSPY_POOLS_H */
