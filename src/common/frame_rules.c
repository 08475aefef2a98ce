/* SPDX-License-Identifier: MIT */
/*
 * What a native frame means to the person reading a report: whether it is
 * noise (folded away in the text report, left out of a site's key, never a
 * headline).  Which framework's pool a site is a segment of is pools.c's.
 * Every rule is a row of a table below, with the reason it is there;
 * docs/format.md and gpuspy-report(1) describe the same rules.  Both sides
 * compile it: the reader judges symbolized frames, libgpuspy the frames it
 * names in the process, so that both choose the same headline.
 *
 * A frame is judged on its module and its symbolized function only, never
 * on an address, so that the same code is judged the same way in every
 * process and every build.
 */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "alts.h"
#include "frame_rules.h"
#include "sitename.h"

/* A frame is noise when it matches a row: its module's basename starts
 * with one of MODULE (NULL: any module, or none), its path contains one of
 * DIR (NULL: any), it lies in the process's executable when MAIN_EXE, and
 * its function matches NAMES as FN says.  Alternatives are separated by
 * '|'. */
struct noise_rule {
	enum rd_noise why;
	const char *module;
	const char *dir;
	bool main_exe;
	enum alts_how fn;
	const char *names;
};

static const struct noise_rule noise_rules[] = {
	/* gpuspy's own frames: stacks start outside it, but one that
	 * enters it twice (a hook reached from a driver callback) would
	 * show it */
	{ NOISE_GPUSPY, "libgpuspy.so", NULL, false, ALTS_ANY, NULL },
	/* the driver and the runtime: how they reach the allocation is the
	 * same whoever asked for it, and their insides are not the user's
	 * to change */
	{ NOISE_CUDA, "libcuda.so", NULL, false, ALTS_ANY, NULL },
	{ NOISE_CUDA, "libcudart.so", NULL, false, ALTS_ANY, NULL },
	/* nvcc links cudart into the program by default: the runtime's
	 * functions then lie in the executable itself */
	{ NOISE_CUDA, NULL, NULL, true, ALTS_PREFIX, "cuda|__cudart|libcudart_static_" },
	/* the C library's start of the program and of a thread: the same
	 * under every main and every thread function */
	{ NOISE_START, "libc.so", NULL, false, ALTS_EXACT,
	  "__libc_start_main|__libc_start_call_main|_start|start_thread|clone|clone3" },
	/* the ELF entry point, wherever it lies (the program, ld.so) */
	{ NOISE_START, NULL, NULL, false, ALTS_EXACT, "_start" },
	/* the interpreter itself: its evaluation loop, calling conventions,
	 * built-ins (map, list.extend), main.  The Python frames placed
	 * there say where the user is, and the module's name carries the
	 * version, which would make keys differ between Pythons */
	{ NOISE_PYTHON, "libpython|python3", NULL, false, ALTS_ANY, NULL },
	/* ctypes: the foreign-function call between a Python line and the C
	 * function it calls */
	{ NOISE_FFI, "libffi.so|_ctypes.", NULL, false, ALTS_ANY, NULL },
	/* PyTorch's CUDACachingAllocator: every tensor's memory comes
	 * through it, so it tells nothing about which tensor */
	{ NOISE_ALLOCATOR, "libc10_cuda.so", NULL, false, ALTS_ANY, NULL },
	{ NOISE_ALLOCATOR, NULL, NULL, false, ALTS_CONTAINS, "CUDACachingAllocator|c10::cuda::" },
	/* ATen's tensor factories and the output allocation of its
	 * TensorIterator: every op's result comes through them, and the op
	 * itself (at::native::clone, a *_backward) is the next frame out */
	{ NOISE_ALLOCATOR, NULL, NULL, false, ALTS_PREFIX,
	  "at::detail::empty|at::native::empty_|at::empty|at::_ops::empty|at::TensorIteratorBase::" },
	/* CuPy's memory pool and its CUDA bindings, the same for every
	 * array; Cython names carry the module ("__pyx_f_13cupy_backends_") */
	{ NOISE_ALLOCATOR, "memory.cpython-|runtime.cpython-", "/cupy/|/cupy_backends/", false,
	  ALTS_ANY, NULL },
	{ NOISE_ALLOCATOR, NULL, "/cupy_backends/", false, ALTS_ANY, NULL },
	{ NOISE_ALLOCATOR, NULL, NULL, false, ALTS_CONTAINS, "cupy_backends" },
};

/* Whether S matches one of the '|'-separated ALTS as HOW says. */
/* Whether a frame (PATH, MAIN_EXE, FUNCTION as classify_noise takes them)
 * matches the MODULE, DIR, WANT_MAIN, FN and NAMES of a table's row. */
static bool frame_matches(const char *module, const char *dir, bool want_main, enum alts_how fn,
			  const char *names, const char *path, bool main_exe, const char *function)
{
	if ((module || dir || want_main) && !path)
		return false;
	if (module && !alts_match(sitename_basename(path), module, ALTS_PREFIX))
		return false;
	if (dir && !alts_match(path, dir, ALTS_CONTAINS))
		return false;
	if (want_main && !main_exe)
		return false;
	switch (fn) {
	case ALTS_ANY:
		return true;
	case ALTS_UNKNOWN:
		return !function;
	default:
		return function && alts_match(function, names, fn);
	}
}

static bool rule_matches(const struct noise_rule *r, const char *path, bool main_exe,
			 const char *function)
{
	return frame_matches(r->module, r->dir, r->main_exe, r->fn, r->names, path, main_exe,
			     function);
}

enum rd_noise classify_noise(const char *path, bool main_exe, const char *function)
{
	for (size_t i = 0; i < sizeof(noise_rules) / sizeof(noise_rules[0]); i++)
		if (rule_matches(&noise_rules[i], path, main_exe, function))
			return noise_rules[i].why;
	return NOISE_NONE;
}

bool classify_python_module(const char *module)
{
	return module && alts_match(module, "libpython|python3", ALTS_PREFIX);
}

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

const char *classify_library_module(const char *module)
{
	for (size_t k = 0; module && k < sizeof(libraries) / sizeof(libraries[0]); k++)
		if (strncmp(module, libraries[k].prefix, strlen(libraries[k].prefix)) == 0)
			return libraries[k].label;
	return NULL;
}
