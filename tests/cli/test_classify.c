/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of gpuspy_read, classify.c: what frames mean: noise,
 * framework pools, the user's own code.
 */
#include "read_test.h"

static void test_classify_noise(void **state)
{
	static const struct {
		const char *path;
		bool main_exe;
		const char *function;
		enum rd_noise want;
	} cases[] = {
		{ "/x/libgpuspy.so", false, "gs_hook", NOISE_GPUSPY },
		{ "/usr/lib/libcuda.so.1", false, NULL, NOISE_CUDA },
		{ "/usr/lib/libcuda.so.580.65", false, "cuMemAlloc_v2", NOISE_CUDA },
		{ "/cuda/lib64/libcudart.so.12", false, "cudaMalloc", NOISE_CUDA },
		/* libcudnn is not libcuda */
		{ "/cuda/lib64/libcudnn.so.9", false, "cudnnCreate", NOISE_NONE },
		/* static cudart: only in the executable */
		{ "/app/a.out", true, "cudaMalloc", NOISE_CUDA },
		{ "/app/a.out", true, "__cudart512", NOISE_CUDA },
		{ "/app/a.out", true, "leak", NOISE_NONE },
		{ "/app/libmine.so", false, "cudaMallocWrapper", NOISE_NONE },
		{ "/lib/libc.so.6", false, "__libc_start_call_main", NOISE_START },
		{ "/lib/libc.so.6", false, "__libc_start_main", NOISE_START },
		{ "/lib/libc.so.6", false, "start_thread", NOISE_START },
		{ "/lib/libc.so.6", false, "malloc", NOISE_NONE },
		{ "/lib/libc.so.6", false, NULL, NOISE_NONE },
		{ "/app/a.out", false, "_start", NOISE_START },
		{ "/app/a.out", false, "_start_worker", NOISE_NONE },
		{ "/py/lib/libpython3.12.so.1.0", false, "_PyEval_EvalFrameDefault", NOISE_PYTHON },
		{ "/py/lib/libpython3.12.so.1.0", false, "PyObject_Call", NOISE_PYTHON },
		{ "/py/lib/libpython3.12.so.1.0", false, "cfunction_vectorcall_O", NOISE_PYTHON },
		{ "/py/lib/libpython3.12.so.1.0", false, "slot_tp_call", NOISE_PYTHON },
		{ "/py/lib/libpython3.12.so.1.0", false, "method_vectorcall_FASTCALL",
		  NOISE_PYTHON },
		{ "/py/lib/libpython3.12.so.1.0", false, NULL, NOISE_PYTHON },
		{ "/usr/bin/python3.11", true, "main", NOISE_PYTHON },
		{ "/usr/bin/python3.11", true, "_PyObject_MakeTpCall", NOISE_PYTHON },
		/* a Py* name outside the interpreter is someone's own code */
		{ "/x/libmine.so", false, "PyInit_mine", NOISE_NONE },
		{ "/x/libmine.so", false, "main", NOISE_NONE },
		{ "/usr/lib/libffi.so.8", false, "ffi_call_unix64", NOISE_FFI },
		{ "/py/lib-dynload/_ctypes.cpython-312-x86_64-linux-gnu.so", false,
		  "PyCFuncPtr_call", NOISE_FFI },
		{ "/sp/torch/lib/libc10_cuda.so", false, NULL, NOISE_ALLOCATOR },
		{ "/sp/torch/lib/libtorch_cuda.so", false,
		  "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc",
		  NOISE_ALLOCATOR },
		/* ATen's tensor factory: every op's output comes through it */
		{ "/sp/torch/lib/libtorch_cuda.so", false, "at::native::empty_cuda",
		  NOISE_ALLOCATOR },
		/* the op itself is what the user recognises */
		{ "/sp/torch/lib/libtorch_cpu.so", false, "at::native::clone", NOISE_NONE },
		{ "/sp/cupy_backends/cuda/api/runtime.cpython-312-x86_64-linux-gnu.so", false, NULL,
		  NOISE_ALLOCATOR },
		{ "/sp/cupy/cuda/memory.cpython-312-x86_64-linux-gnu.so", false, "x",
		  NOISE_ALLOCATOR },
		/* another package's memory module is not CuPy's */
		{ "/sp/other/memory.cpython-312-x86_64-linux-gnu.so", false, "x", NOISE_NONE },
		{ NULL, false, "__pyx_f_13cupy_backends_4cuda_3api_7runtime_malloc",
		  NOISE_ALLOCATOR },
		{ NULL, false, "_start", NOISE_START },
		{ NULL, false, NULL, NOISE_NONE },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum rd_noise got =
			classify_noise(cases[i].path, cases[i].main_exe, cases[i].function);

		if (got != cases[i].want)
			fail_msg("case %zu (%s, %s): noise %d, expected %d", i,
				 cases[i].path ? cases[i].path : "no module",
				 cases[i].function ? cases[i].function : "no function", got,
				 cases[i].want);
	}
}

static void test_classify_pool(void **state)
{
	static const char c10[] = "/sp/torch/lib/libc10_cuda.so";
	static const char cupy_mem[] = "/sp/cupy/cuda/memory.cpython-312-x86_64-linux-gnu.so";
	static const char xla[] = "/sp/jax_plugins/xla_cuda12/xla_cuda_plugin.so";
	static const char dca[] =
		"c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc";
	static const struct {
		const char *api, *path, *function, *want;
	} cases[] = {
		/* PyTorch's caching allocator: a segment, through cudaMalloc
		 * or, with expandable segments, cuMemCreate */
		{ "cudaMalloc", c10, dca, TORCH_POOL },
		{ "cuMemCreate", c10,
		  "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::map_block",
		  TORCH_POOL },
		/* the name decides wherever the allocator was linked */
		{ "cudaMalloc", "/x/libtorch_cuda.so", dca, TORCH_POOL },
		/* a libc10_cuda.so without symbols: taken for the default */
		{ "cudaMalloc", c10, NULL, TORCH_POOL },
		/* PYTORCH_NO_CUDA_MEMORY_CACHING=1: one cudaMalloc per tensor */
		{ "cudaMalloc", c10,
		  "c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::allocate",
		  NULL },
		{ "cudaMalloc", c10, "c10::cuda::CUDACachingAllocator::Native::uncached_allocate",
		  NULL },
		/* backend:cudaMallocAsync: per tensor, from the driver's pool */
		{ "cudaMallocAsync", c10,
		  "c10::cuda::CUDACachingAllocator::CudaMallocAsync::CudaMallocAsyncAllocator::malloc",
		  NULL },
		{ "cudaMallocAsync", c10, NULL, NULL },
		{ "cuMemAllocAsync", c10, dca, NULL },
		{ "cudaMallocFromPoolAsync", c10, NULL, NULL },
		{ "cuMemAllocFromPoolAsync", c10, dca, NULL },
		/* not the allocator */
		{ "cudaMalloc", "/x/libtorch_cuda.so", "at::native::empty_cuda", NULL },
		{ "cudaMalloc", "/x/libc10.so", NULL, NULL },
		{ "cudaMalloc", NULL, NULL, NULL },
		/* CuPy's MemoryPool, its module without symbols; not
		 * set_allocator(None), not MemoryAsyncPool, not another
		 * package's memory module */
		{ "cudaMalloc", cupy_mem,
		  "__pyx_f_4cupy_4cuda_6memory_22SingleDeviceMemoryPool__malloc", CUPY_POOL },
		{ "cudaMallocManaged", cupy_mem, "__pyx_f_4cupy_4cuda_6memory_10MemoryPool_malloc",
		  CUPY_POOL },
		{ "cudaMalloc", cupy_mem, NULL, CUPY_POOL },
		{ "cudaMalloc", cupy_mem, "__pyx_f_4cupy_4cuda_6memory__malloc", NULL },
		{ "cudaMallocAsync", cupy_mem,
		  "__pyx_f_4cupy_4cuda_6memory_15MemoryAsyncPool_malloc", NULL },
		{ "cudaMallocAsync", cupy_mem, NULL, NULL },
		{ "cudaMalloc", "/sp/other/memory.cpython-312-x86_64-linux-gnu.so", NULL, NULL },
		{ "cudaMalloc",
		  "/sp/cupy_backends/cuda/api/runtime.cpython-312-x86_64-linux-gnu.so", NULL,
		  NULL },
		/* XLA's BFC allocator and its sub-allocators, on the apis it
		 * grows by; the plugin without symbols */
		{ "cuMemAlloc_v2", xla, "tsl::BFCAllocator::Extend", XLA_POOL },
		{ "cuMemAlloc_v2", xla, "stream_executor::DeviceMemAllocator::Alloc", XLA_POOL },
		{ "cuMemCreate", xla, "stream_executor::gpu::GpuVirtualMemAllocator::Alloc",
		  XLA_POOL },
		{ "cuMemAlloc_v2", "/x/libtensorflow_framework.so.2",
		  "tensorflow::GPUBFCAllocator::GPUBFCAllocator", XLA_POOL },
		{ "cuMemAlloc_v2", xla, NULL, XLA_POOL },
		{ "cuMemCreate", xla, NULL, XLA_POOL },
		/* the platform allocator: per buffer */
		{ "cuMemAlloc_v2", xla, "stream_executor::StreamExecutorMemoryAllocator::Allocate",
		  NULL },
		{ "cuMemAlloc_v2", xla, "stream_executor::gpu::CudaExecutor::Allocate", NULL },
		/* neither pinned host memory nor the cuda_async allocator */
		{ "cuMemHostAlloc", xla, "tsl::BFCAllocator::Extend", NULL },
		{ "cuMemAllocFromPoolAsync", xla, NULL, NULL },
		{ "cudaMalloc", xla, "tsl::BFCAllocator::Extend", NULL },
		/* the same rules on the names the process itself knows, its
		 * dynamic symbols, mangled (src/common/pools.c; libgpuspy's
		 * exit summary tells pools by them) */
		{ "cudaMalloc", c10,
		  "_ZN3c104cuda20CUDACachingAllocator6Native22DeviceCachingAllocator6mallocEimP11CUstream_st",
		  TORCH_POOL },
		{ "cudaMalloc", c10,
		  "_ZN3c104cuda20CUDACachingAllocator6Native22NativeCachingAllocator8allocateEm",
		  NULL },
		{ "cuMemAlloc_v2", xla, "_ZN3tsl12BFCAllocator6ExtendEmm", XLA_POOL },
		{ "cuMemAlloc_v2", xla, "_ZN15stream_executor18DeviceMemAllocator5AllocEbmml",
		  XLA_POOL },
		{ "cuMemCreate", xla, "_ZN15stream_executor3gpu22GpuVirtualMemAllocator5AllocEbmml",
		  XLA_POOL },
		/* Alloc of another class */
		{ "cuMemAlloc_v2", "/x/libfoo.so", "_ZN15stream_executor10OtherAlloc5AllocEbm",
		  NULL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *got = classify_pool(cases[i].api, cases[i].path, cases[i].function);

		if (got ? !cases[i].want || strcmp(got, cases[i].want) != 0 : cases[i].want != NULL)
			fail_msg("case %zu (%s, %s, %s): pool %s, expected %s", i, cases[i].api,
				 cases[i].path ? cases[i].path : "no module",
				 cases[i].function ? cases[i].function : "no function",
				 got ? got : "none", cases[i].want ? cases[i].want : "none");
	}
	/* every label has a hint, and the labels are the ones above */
	assert_string_equal(classify_pool_label(0), TORCH_POOL);
	assert_string_equal(classify_pool_label(1), CUPY_POOL);
	assert_string_equal(classify_pool_label(2), XLA_POOL);
	assert_null(classify_pool_label(3));
	for (size_t i = 0; classify_pool_label(i); i++)
		assert_non_null(classify_pool_hint(classify_pool_label(i)));
	assert_non_null(strstr(classify_pool_hint(TORCH_POOL), "PYTORCH_NO_CUDA_MEMORY_CACHING=1"));
	assert_non_null(
		strstr(classify_pool_hint(XLA_POOL), "XLA_PYTHON_CLIENT_ALLOCATOR=platform"));
	assert_null(classify_pool_hint("cuBLAS"));
	assert_null(classify_pool_hint(NULL));
}

static void test_classify_user_file(void **state)
{
	static const struct {
		const char *file;
		bool user;
	} cases[] = {
		{ "/home/u/proj/train.py", true },
		{ "train.py", true },
		{ "<string>", true },
		{ "/home/u/venv/lib/python3.12/site-packages/torch/nn/modules/module.py", false },
		{ "/usr/lib/python3/dist-packages/numpy/core/numeric.py", false },
		{ "/usr/lib/python3.12/threading.py", false },
		{ "/usr/lib64/python3.11/concurrent/futures/thread.py", false },
		{ "/opt/py/lib/python3.13t/runpy.py", false },
		{ "<frozen runpy>", false },
		{ "<frozen importlib._bootstrap>", false },
		/* not the standard library's directory */
		{ "/home/u/lib/python3/tools.py", true },
		{ "/home/u/lib/python3.x/tools.py", true },
		{ "?", false },
		{ "", false },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (classify_user_file(cases[i].file) != cases[i].user)
			fail_msg("\"%s\" should %sbe user code", cases[i].file,
				 cases[i].user ? "" : "not ");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classify_noise),
		cmocka_unit_test(test_classify_pool),
		cmocka_unit_test(test_classify_user_file),
	};

	if (read_test_init() < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
