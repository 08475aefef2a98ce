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

#endif
