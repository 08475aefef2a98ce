/* SPDX-License-Identifier: MIT */
/*
 * frame_rules.c: what a native frame means to the person reading a report,
 * judged on its module and symbolized function only, the same on both
 * sides (the reader and libgpuspy).  The rules live in tables there, each
 * with its reason.  No allocation, no state.
 */
#ifndef GPUSPY_COMMON_FRAME_RULES_H
#define GPUSPY_COMMON_FRAME_RULES_H

#include <stdbool.h>
#include <stddef.h>

/* Why a native frame is noise: the same for every call site of its kind,
 * so it tells nothing about which of them to look at. */
enum rd_noise {
	NOISE_NONE,
	NOISE_GPUSPY,	 /* gpuspy itself */
	NOISE_CUDA,	 /* libcuda, libcudart (shared or linked in) */
	NOISE_START,	 /* what runs main or a thread */
	NOISE_PYTHON,	 /* the CPython interpreter's own machinery */
	NOISE_FFI,	 /* ctypes and libffi */
	NOISE_ALLOCATOR, /* a framework's caching allocator */
};

/* PATH: the module's path (NULL when the frame lies in no module);
 * MAIN_EXE: whether that module is the process's executable; FUNCTION:
 * the symbolized (demangled) name, NULL when unknown. */
enum rd_noise classify_noise(const char *path, bool main_exe, const char *function);

/* Whether the module (a basename) is CPython's: libpython*, python3*. */
bool classify_python_module(const char *module);

/* The library whose memory a frame of module MODULE (a basename) holds
 * rather than its caller: "cuBLAS", "cuDNN", "NCCL", ...; NULL for another
 * module (docs/format.md, "library"). */
const char *classify_library_module(const char *module);

/* The framework allocator whose pool segment an allocation by API is
 * (docs/format.md, "pool"), judged on one native frame of its stack, noise
 * or not (PATH and FUNCTION as classify_noise takes them): "PyTorch caching
 * allocator", "CuPy memory pool", "XLA allocator", or NULL.  The innermost
 * frame with a label decides for the site. */
const char *classify_pool(const char *api, const char *path, const char *function);

/* The I-th pool label in a fixed order, NULL past the last; the one-line
 * hint for a label's sites (without the label), NULL for another string. */
const char *classify_pool_label(size_t i);
const char *classify_pool_hint(const char *label);

#endif
