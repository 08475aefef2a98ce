/* SPDX-License-Identifier: MIT */
/*
 * What a native frame means to the person reading a report: whether it is
 * noise (folded away in the text report, left out of a site's key, never a
 * headline), and whether a site is a segment of a framework's memory pool.
 * Every rule is a row of a table below, with the reason it is there;
 * docs/format.md and gpuspy(1) describe the same rules.  Both sides
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

#include "frame_rules.h"
#include "sitename.h"

enum fn_match {
	FN_ANY,	    /* whatever the function, named or not */
	FN_UNKNOWN, /* only a frame whose function has no name */
	FN_EXACT,
	FN_PREFIX,
	FN_CONTAINS,
};

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
	enum fn_match fn;
	const char *names;
};

static const struct noise_rule noise_rules[] = {
	/* gpuspy's own frames: stacks start outside it, but one that
	 * enters it twice (a hook reached from a driver callback) would
	 * show it */
	{ NOISE_GPUSPY, "libgpuspy.so", NULL, false, FN_ANY, NULL },
	/* the driver and the runtime: how they reach the allocation is the
	 * same whoever asked for it, and their insides are not the user's
	 * to change */
	{ NOISE_CUDA, "libcuda.so", NULL, false, FN_ANY, NULL },
	{ NOISE_CUDA, "libcudart.so", NULL, false, FN_ANY, NULL },
	/* nvcc links cudart into the program by default: the runtime's
	 * functions then lie in the executable itself */
	{ NOISE_CUDA, NULL, NULL, true, FN_PREFIX, "cuda|__cudart|libcudart_static_" },
	/* the C library's start of the program and of a thread: the same
	 * under every main and every thread function */
	{ NOISE_START, "libc.so", NULL, false, FN_EXACT,
	  "__libc_start_main|__libc_start_call_main|_start|start_thread|clone|clone3" },
	/* the ELF entry point, wherever it lies (the program, ld.so) */
	{ NOISE_START, NULL, NULL, false, FN_EXACT, "_start" },
	/* the interpreter itself: its evaluation loop, calling conventions,
	 * built-ins (map, list.extend), main.  The Python frames placed
	 * there say where the user is, and the module's name carries the
	 * version, which would make keys differ between Pythons */
	{ NOISE_PYTHON, "libpython|python3", NULL, false, FN_ANY, NULL },
	/* ctypes: the foreign-function call between a Python line and the C
	 * function it calls */
	{ NOISE_FFI, "libffi.so|_ctypes.", NULL, false, FN_ANY, NULL },
	/* PyTorch's CUDACachingAllocator: every tensor's memory comes
	 * through it, so it tells nothing about which tensor */
	{ NOISE_ALLOCATOR, "libc10_cuda.so", NULL, false, FN_ANY, NULL },
	{ NOISE_ALLOCATOR, NULL, NULL, false, FN_CONTAINS, "CUDACachingAllocator|c10::cuda::" },
	/* ATen's tensor factories and the output allocation of its
	 * TensorIterator: every op's result comes through them, and the op
	 * itself (at::native::clone, a *_backward) is the next frame out */
	{ NOISE_ALLOCATOR, NULL, NULL, false, FN_PREFIX,
	  "at::detail::empty|at::native::empty_|at::empty|at::_ops::empty|at::TensorIteratorBase::" },
	/* CuPy's memory pool and its CUDA bindings, the same for every
	 * array; Cython names carry the module ("__pyx_f_13cupy_backends_") */
	{ NOISE_ALLOCATOR, "memory.cpython-|runtime.cpython-", "/cupy/|/cupy_backends/", false,
	  FN_ANY, NULL },
	{ NOISE_ALLOCATOR, NULL, "/cupy_backends/", false, FN_ANY, NULL },
	{ NOISE_ALLOCATOR, NULL, NULL, false, FN_CONTAINS, "cupy_backends" },
};

/* Framework allocators that keep a pool: they take memory from CUDA in
 * segments and cut the tensors, arrays or buffers the program asks for out
 * of them.  A site of such a segment is the request that found the pool
 * too small (often in the backward pass, on the autograd thread), not the
 * tensors that hold the memory later: the report says so, and how to get
 * one site per tensor where the framework can.  The order is the order of
 * the text report's hints. */
enum pool { POOL_TORCH, POOL_CUPY, POOL_XLA, POOL_COUNT };

static const struct {
	const char *label;
	const char *hint;
} pools[POOL_COUNT] = {
	[POOL_TORCH] = { "PyTorch caching allocator",
			 "sites are the requests that grew the pool, not the tensors holding it "
			 "now; run with PYTORCH_NO_CUDA_MEMORY_CACHING=1 for one site per tensor." },
	[POOL_CUPY] = { "CuPy memory pool",
			"sites are the requests that grew CuPy's pool, not the arrays holding it "
			"now." },
	[POOL_XLA] = { "XLA allocator",
		       "sites are the requests that grew XLA's BFC pool, not the buffers holding "
		       "it now; with JAX, XLA_PYTHON_CLIENT_ALLOCATOR=platform gives one site per "
		       "buffer." },
};

/* The stream-ordered entry points: a framework that allocates through
 * them (PyTorch's backend:cudaMallocAsync, CuPy's MemoryAsyncPool) asks
 * the driver's pool for every tensor, so each site is a tensor's. */
#define STREAM_ORDERED                                                                             \
	"cudaMallocAsync|cudaMallocFromPoolAsync|cuMemAllocAsync|cuMemAllocFromPoolAsync"

/* A site is a segment of POOL when one of its native frames, noise or not,
 * matches a row as noise_rules do (MODULE, DIR, FN, NAMES) and its api is
 * one of APIS (NULL: any) and none of NOT_APIS.  The innermost frame that
 * matches a row decides.  A named function says which path the framework
 * took; a frame in the framework's module without a name (a library
 * without symbols) cannot, and is taken for its default, the pool. */
static const struct {
	enum pool pool;
	const char *module;
	const char *dir;
	enum fn_match fn;
	const char *names;
	const char *apis;
	const char *not_apis;
} pool_rules[] = {
	/* PyTorch's caching allocator takes every segment (cudaMalloc, or
	 * cuMemCreate with expandable_segments) under its per-device
	 * c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator.
	 * With PYTORCH_NO_CUDA_MEMORY_CACHING=1, NativeCachingAllocator
	 * calls cudaMalloc itself, once per tensor: no pool, although in
	 * the same namespace and library.  Neither is the cudaMallocAsync
	 * backend (CudaMallocAsyncAllocator, there too): the api tells */
	{ POOL_TORCH, NULL, NULL, FN_CONTAINS, "DeviceCachingAllocator", NULL, STREAM_ORDERED },
	{ POOL_TORCH, "libc10_cuda.so", NULL, FN_UNKNOWN, NULL, NULL, STREAM_ORDERED },
	/* CuPy's default MemoryPool grows in cupy/cuda/memory.cpython-*
	 * (the allocator noise rule's module) under SingleDeviceMemoryPool;
	 * after cupy.cuda.set_allocator(None) the same module allocates
	 * once per array under no *MemoryPool* name, and MemoryAsyncPool
	 * goes through the driver's pool (the api tells) */
	{ POOL_CUPY, "memory.cpython-", "/cupy/", FN_CONTAINS, "MemoryPool", NULL, STREAM_ORDERED },
	{ POOL_CUPY, "memory.cpython-", "/cupy/", FN_UNKNOWN, NULL, NULL, STREAM_ORDERED },
	/* XLA's BFC allocator (tsl::BFCAllocator, JAX's default, which
	 * TensorFlow shares) grows by regions through its sub-allocators:
	 * stream_executor's DeviceMemAllocator (cuMemAlloc_v2) or
	 * GpuVirtualMemAllocator (cuMemCreate).  The platform allocator
	 * (XLA_PYTHON_CLIENT_ALLOCATOR=platform) reaches cuMemAlloc_v2 from
	 * the same module, through none of them, once per buffer; its
	 * cuda_async allocator is stream-ordered, which APIS leaves out.
	 * JAX's CUDA plugin is xla_cuda_plugin.so */
	{ POOL_XLA, NULL, NULL, FN_CONTAINS,
	  "BFCAllocator|DeviceMemAllocator::Alloc|GpuVirtualMemAllocator::Alloc",
	  "cuMemAlloc_v2|cuMemCreate", NULL },
	{ POOL_XLA, "xla_cuda_plugin.so", NULL, FN_UNKNOWN, NULL, "cuMemAlloc_v2|cuMemCreate",
	  NULL },
};

/* Whether S matches one of the '|'-separated ALTS as HOW says. */
static bool match_alts(const char *s, const char *alts, enum fn_match how)
{
	size_t slen = strlen(s);

	while (*alts) {
		size_t n = strcspn(alts, "|");

		switch (how) {
		case FN_EXACT:
			if (n == slen && strncmp(s, alts, n) == 0)
				return true;
			break;
		case FN_PREFIX:
			if (n <= slen && strncmp(s, alts, n) == 0)
				return true;
			break;
		case FN_CONTAINS:
			for (const char *p = s; (size_t)(p - s) + n <= slen; p++)
				if (strncmp(p, alts, n) == 0)
					return true;
			break;
		default:
			break;
		}
		alts += n;
		if (*alts == '|')
			alts++;
	}
	return false;
}

/* Whether a frame (PATH, MAIN_EXE, FUNCTION as classify_noise takes them)
 * matches the MODULE, DIR, WANT_MAIN, FN and NAMES of a table's row. */
static bool frame_matches(const char *module, const char *dir, bool want_main, enum fn_match fn,
			  const char *names, const char *path, bool main_exe, const char *function)
{
	if ((module || dir || want_main) && !path)
		return false;
	if (module && !match_alts(sitename_basename(path), module, FN_PREFIX))
		return false;
	if (dir && !match_alts(path, dir, FN_CONTAINS))
		return false;
	if (want_main && !main_exe)
		return false;
	switch (fn) {
	case FN_ANY:
		return true;
	case FN_UNKNOWN:
		return !function;
	default:
		return function && match_alts(function, names, fn);
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
	return module && match_alts(module, "libpython|python3", FN_PREFIX);
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

const char *classify_pool(const char *api, const char *path, const char *function)
{
	for (size_t i = 0; i < sizeof(pool_rules) / sizeof(pool_rules[0]); i++) {
		if (pool_rules[i].apis && !match_alts(api, pool_rules[i].apis, FN_EXACT))
			continue;
		if (pool_rules[i].not_apis && match_alts(api, pool_rules[i].not_apis, FN_EXACT))
			continue;
		if (frame_matches(pool_rules[i].module, pool_rules[i].dir, false, pool_rules[i].fn,
				  pool_rules[i].names, path, false, function))
			return pools[pool_rules[i].pool].label;
	}
	return NULL;
}

const char *classify_pool_label(size_t i)
{
	return i < POOL_COUNT ? pools[i].label : NULL;
}

const char *classify_pool_hint(const char *label)
{
	for (size_t i = 0; label && i < POOL_COUNT; i++)
		if (strcmp(pools[i].label, label) == 0)
			return pools[i].hint;
	return NULL;
}
