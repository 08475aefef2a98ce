/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of gpuspy_read: loading the fixtures, merging them into the
 * numbers worked out by hand in fixtures/README.md, site keys, sizes,
 * demangling, symbolizing an address of this very program, and what
 * frames mean: Python frame placement, noise, headlines, library labels,
 * framework pools; processes side by side: spreads and outliers.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "classify.h"
#include "discover.h"
#include "load.h"
#include "merge.h"
#include "symbolize.h"
#include "util.h"
#include "validate.h"

#define MiB (1024 * 1024)

static char fixtures[PATH_MAX];

static char *fixture(const char *rel)
{
	static char buf[PATH_MAX + 64];

	snprintf(buf, sizeof(buf), "%s/%s", fixtures, rel);
	return buf;
}

static void test_load_process(void **state)
{
	struct rd_process_list list = { 0 };
	struct rd_error err = { "" };
	struct rd_process *p;

	assert_int_equal(discover_path(&list, fixture("process/node7-4242"), &err), 0);
	assert_int_equal(list.n, 1);
	p = list.items[0];
	assert_string_equal(p->host, "node7");
	assert_int_equal(p->pid, 4242);
	assert_int_equal(p->ncommand, 3);
	assert_string_equal(p->command[0], "./leaky");
	assert_true(p->complete);
	assert_int_equal(p->leaked_bytes, 3 * MiB + 1024);
	assert_int_equal(p->leaked_allocations, 3);
	assert_int_equal(p->peak_bytes, 11 * MiB);
	assert_int_equal(p->kinds[RD_KIND_PINNED].live_bytes, MiB);
	assert_int_equal(p->kinds[RD_KIND_DEVICE].frees, 4);
	assert_int_equal(p->untracked_frees, 1);
	assert_int_equal(p->nmodules, 2);
	assert_string_equal(p->modules[0].build_id, "5f0c9a11d00dfeed");
	assert_string_equal(p->modules[1].build_id, "");
	assert_int_equal(p->nsites, 4);
	assert_int_equal(p->sites[0].kind, RD_KIND_DEVICE);
	assert_string_equal(p->sites[0].api, "cuMemAlloc_v2");
	assert_int_equal(p->sites[0].nframes, 3);
	assert_int_equal(p->sites[0].frames[0].offset, 4660);
	assert_string_equal(p->sites[0].frames[0].symbol, "leak_driver");
	assert_int_equal(p->sites[2].kind, RD_KIND_PINNED);
	assert_int_equal(p->sites[3].frames[0].module, -1);
	assert_null(p->sites[3].frames[1].symbol);
	rd_process_list_clear(&list);
}

static void test_load_run_dir(void **state)
{
	struct rd_process_list list = { 0 };
	struct rd_error err = { "" };

	assert_int_equal(discover_path(&list, fixture("run"), &err), 0);
	/* node7-102 has no report.json: skipped, not an error */
	assert_int_equal(list.n, 2);
	assert_int_equal(list.items[0]->pid, 100);
	assert_int_equal(list.items[1]->pid, 101);
	assert_false(list.items[1]->complete);
	assert_non_null(strstr(list.items[0]->path, "run/node7-100"));
	/* at_peak: the sites by id, resolved to their index */
	assert_true(list.items[1]->at_peak.present);
	assert_int_equal(list.items[1]->at_peak.bytes, 3 * MiB - 16 * 1024);
	assert_true(list.items[1]->at_peak.time == 1764510020.5);
	assert_int_equal(list.items[1]->at_peak.ndevices, 1);
	assert_int_equal(list.items[1]->at_peak.devices[0].device, 1);
	assert_int_equal(list.items[1]->at_peak.nsites, 2);
	assert_int_equal(list.items[1]->at_peak.sites[0].site, 8);
	assert_int_equal(list.items[1]->at_peak.sites[0].index, 1);
	assert_int_equal(list.items[1]->at_peak.sites[0].live_bytes, MiB - 16 * 1024);
	assert_int_equal(list.items[1]->at_peak.sites[1].index, 0);

	/* the same report named again, as a process directory and as a
	 * file, is counted once */
	assert_int_equal(discover_path(&list, fixture("run/node7-101"), &err), 0);
	assert_int_equal(discover_path(&list, fixture("run/node7-100/report.json"), &err), 0);
	assert_int_equal(list.n, 2);
	rd_process_list_clear(&list);
}

static void test_merge_run(void **state)
{
	struct rd_process_list list = { 0 };
	struct rd_error err = { "" };
	struct symbolizer *sym;
	struct rd_report r;
	const struct rd_report_site *x, *z, *y;

	assert_int_equal(discover_path(&list, fixture("run"), &err), 0);
	assert_int_equal(symbolizer_new(&sym), 0);
	assert_int_equal(merge_build(&r, &list, sym, &err), 0);

	assert_int_equal(r.nprocs, 2);
	assert_int_equal(r.incomplete, 1);
	assert_int_equal(r.leaked_bytes, 3 * MiB + 512 * 1024);
	assert_int_equal(r.leaked_allocations, 4);
	assert_int_equal(r.peak_bytes, 6 * MiB);
	assert_int_equal(r.untracked_frees, 2);
	assert_int_equal(r.pinned_leaked_bytes, 0);

	/* the leak_driver site of both processes is one site, although its
	 * return addresses differ: keys hold names, not addresses */
	assert_int_equal(r.nsites, 3);
	x = r.sites[0];
	z = r.sites[1];
	y = r.sites[2];
	assert_string_equal(x->key, "cuMemAlloc_v2|leaky!leak_driver;leaky!main");
	assert_int_equal(x->processes, 2);
	assert_int_equal(x->c.live_bytes, 3 * MiB);
	assert_int_equal(x->c.live_allocations, 3);
	assert_int_equal(x->c.peak_bytes, 3 * MiB);
	assert_int_equal(x->c.allocations, 3);
	assert_string_equal(z->key, "cudaMallocAsync|leaky!other_fn;leaky!main");
	assert_int_equal(z->processes, 1);
	assert_int_equal(z->c.live_bytes, 512 * 1024);
	assert_int_equal(z->c.peak_bytes, MiB);
	assert_int_equal(z->c.frees, 1);
	assert_string_equal(y->key, "cudaMalloc|leaky!worker;leaky!main");
	assert_int_equal(y->c.live_bytes, 0);
	assert_int_equal(y->c.peak_bytes, 2 * MiB);
	assert_int_equal(y->c.freed_bytes, 4 * MiB);
	assert_string_equal(x->frames[0].module, "leaky");
	assert_string_equal(x->frames[0].function, "leak_driver");
	assert_string_equal(x->frames[0].build_id, "5f0c9a11d00dfeed");
	assert_null(x->frames[0].file);

	/* what was live at each process's peak, summed: per site (the
	 * leak_driver site from both), per device ordinal */
	assert_true(r.at_peak);
	assert_int_equal(r.at_peak_bytes, 6 * MiB - 16 * 1024);
	assert_int_equal(r.at_peak_ndevices, 2);
	assert_int_equal(r.at_peak_devices[0].device, 0);
	assert_int_equal(r.at_peak_devices[0].live_bytes, 3 * MiB);
	assert_int_equal(r.at_peak_devices[1].device, 1);
	assert_int_equal(r.at_peak_devices[1].live_bytes, 3 * MiB - 16 * 1024);
	assert_int_equal(x->at_peak_bytes, 3 * MiB);
	assert_int_equal(y->at_peak_bytes, 2 * MiB);
	assert_int_equal(z->at_peak_bytes, MiB - 16 * 1024);

	merge_clear(&r);
	symbolizer_free(sym);
	rd_process_list_clear(&list);
}

static void test_merge_process(void **state)
{
	struct rd_process_list list = { 0 };
	struct rd_error err = { "" };
	struct rd_report r;
	const struct rd_report_site *pinned = NULL, *managed = NULL;

	assert_int_equal(discover_path(&list, fixture("process"), &err), 0);
	assert_int_equal(list.n, 1);
	/* no symbolizer: names come from the report alone */
	assert_int_equal(merge_build(&r, &list, NULL, &err), 0);
	/* no at_peak in this report: none in the merged one */
	assert_false(list.items[0]->at_peak.present);
	assert_false(r.at_peak);
	assert_int_equal(r.at_peak_ndevices, 0);
	assert_int_equal(r.pinned_leaked_bytes, MiB);
	assert_int_equal(r.pinned_leaked_allocations, 1);
	assert_int_equal(r.pinned_peak_bytes, MiB);
	assert_int_equal(r.nsites, 4);
	for (size_t i = 0; i < r.nsites; i++) {
		if (r.sites[i]->kind == RD_KIND_PINNED)
			pinned = r.sites[i];
		if (r.sites[i]->kind == RD_KIND_MANAGED)
			managed = r.sites[i];
	}
	assert_non_null(pinned);
	assert_non_null(managed);
	/* the process's own symbol is mangled; the report's is not */
	assert_string_equal(pinned->frames[0].function, "leaky::alloc_pinned(unsigned long)");
	/* outside any module: no address in the key; unnamed: module+offset */
	assert_string_equal(managed->key, "cudaMallocManaged|?;leaky+0x1450");
	assert_null(managed->frames[0].module);
	merge_clear(&r);
	rd_process_list_clear(&list);
}

static struct rd_process *fake_process(int64_t untracked)
{
	struct rd_process *p = calloc(1, sizeof(*p));

	assert_non_null(p);
	p->path = strdup("fake");
	p->file = strdup("fake/report.json");
	p->host = strdup("h");
	p->pid = 1;
	p->complete = true;
	p->untracked_frees = untracked;
	return p;
}

static void test_merge_overflow(void **state)
{
	struct rd_process *items[2] = { fake_process(INT64_MAX), fake_process(1) };
	struct rd_process_list list = { .items = items, .n = 2, .cap = 2 };
	struct rd_error err = { "" };
	struct rd_report r;

	assert_int_equal(merge_build(&r, &list, NULL, &err), -EOVERFLOW);
	assert_non_null(strstr(err.msg, "fake/report.json"));
	rd_process_free(items[0]);
	rd_process_free(items[1]);
}

static void test_bad_file(void **state)
{
	static const struct {
		const char *content;
		const char *want;
	} cases[] = {
		{ "", "empty file" },
		{ "{\"format\": \"gpuspy-process/1\"", "invalid JSON" },
		{ "{\"format\": \"gpuspy-process/2\"}", "unsupported format" },
		{ "[1, 2]", "top level is an array" },
		{ "{\"format\": \"gpuspy-process/1\", \"host\": 7}", "host: expected a string" },
		{ "{\"a\": 1, \"a\": 2}", "invalid JSON" },
	};
	char path[] = "/tmp/gpuspy-test-read-XXXXXX";
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rd_error err = { "" };
		struct rd_process *p = NULL;
		FILE *f = fopen(path, "w");

		assert_non_null(f);
		fputs(cases[i].content, f);
		fclose(f);
		assert_int_equal(load_process_file(path, NULL, &p, &err), -EINVAL);
		assert_null(p);
		assert_non_null(strstr(err.msg, path));
		if (!strstr(err.msg, cases[i].want))
			fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err.msg, cases[i].want);
		assert_null(strchr(err.msg, '\n'));
	}
	unlink(path);
}

static void test_site_key(void **state)
{
	struct rd_report_frame frames[3] = {
		{ .function = "f", .module = "liba.so", .offset = 0x10 },
		{ .module = "b", .offset = 0x1234 },
		{ .offset = 0x7fff0000 },
	};
	char *key = merge_site_key("cudaMalloc", frames, 3);

	assert_string_equal(key, "cudaMalloc|liba.so!f;b+0x1234;?");
	free(key);
	key = merge_site_key("cudaMalloc", frames, 0);
	assert_string_equal(key, "cudaMalloc|");
	free(key);
}

/* Noise frames and Python frames in a key: noise is left out, a Python
 * frame is its file's basename and its function, without the line. */
static void test_site_key_python(void **state)
{
	struct rd_report_frame frames[] = {
		{ .function = "malloc", .module = "libc10_cuda.so", .noise = NOISE_ALLOCATOR },
		{ .function = "at::empty", .module = "libtorch.so" },
		{ .function = "step", .file = "/home/u/train.py", .line = 17, .python = true },
		{ .function = "_PyEval_EvalFrameDefault",
		  .module = "libpython3.12.so",
		  .noise = NOISE_PYTHON },
		{ .function = "main", .module = "app" },
	};
	char *key = merge_site_key("cudaMalloc", frames, 5);

	assert_string_equal(key, "cudaMalloc|libtorch.so!at::empty;train.py!step;app!main");
	free(key);
	/* only noise: nothing after the api */
	key = merge_site_key("cudaMalloc", frames, 1);
	assert_string_equal(key, "cudaMalloc|");
	free(key);
}

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

#define TORCH_POOL "PyTorch caching allocator"
#define CUPY_POOL  "CuPy memory pool"
#define XLA_POOL   "XLA allocator"

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

static void test_load_python(void **state)
{
	struct rd_process_list list = { 0 };
	struct rd_error err = { "" };
	struct rd_process *p;

	assert_int_equal(discover_path(&list, fixture("python/node3-77"), &err), 0);
	p = list.items[0];
	assert_true(p->python.present);
	assert_true(p->python.supported);
	assert_string_equal(p->python.version, "3.12.3");
	assert_null(p->python.note);
	assert_string_equal(p->exe, "/nonexistent/py/bin/python3.12");
	assert_int_equal(p->sites[0].npython, 4);
	assert_string_equal(p->sites[0].python[1].file, "/nonexistent/home/u/proj/model.py");
	assert_string_equal(p->sites[0].python[1].function, "Model.forward");
	assert_int_equal(p->sites[0].python[1].line, 42);
	/* the runtime's thread ran no Python */
	assert_int_equal(p->sites[3].npython, 0);
	assert_null(p->sites[3].python);
	assert_int_equal(discover_path(&list, fixture("python/node3-79"), &err), 0);
	p = list.items[1];
	assert_true(p->python.present);
	assert_false(p->python.supported);
	assert_string_equal(p->python.note, "CPython 3.14 is not supported yet");
	rd_process_list_clear(&list);
}

static const struct rd_report_site *site_with_key(const struct rd_report *r, const char *key)
{
	for (size_t i = 0; i < r->nsites; i++)
		if (strcmp(r->sites[i]->key, key) == 0)
			return r->sites[i];
	fail_msg("no site with key %s", key);
	return NULL;
}

/* Frame I of S is FUNCTION, Python or native, noise or not. */
static void expect_frame(const struct rd_report_site *s, size_t i, const char *function,
			 bool python, bool noise)
{
	const struct rd_report_frame *f;

	if (i >= s->nframes)
		fail_msg("%s: no frame %zu", s->key, i);
	f = &s->frames[i];
	if (function ? !f->function || strcmp(f->function, function) != 0 : f->function != NULL)
		fail_msg("%s: frame %zu is %s, expected %s", s->key, i,
			 f->function ? f->function : "unnamed", function ? function : "unnamed");
	if (f->python != python || (f->noise != NOISE_NONE) != noise)
		fail_msg("%s: frame %zu (%s): python %d noise %d, expected %d %d", s->key, i,
			 function ? function : "unnamed", f->python, f->noise != NOISE_NONE, python,
			 noise);
}

#define TORCH_KEY                                                                                  \
	"cudaMalloc|"                                                                              \
	"libtorch_python.so!torch::autograd::THPVariable_randn;linear.py!Linear.forward;"          \
	"model.py!Model.forward;train.py!step;train.py!<module>"

static void test_merge_python(void **state)
{
	struct rd_process_list list = { 0 };
	struct rd_error err = { "" };
	struct rd_report r;
	const struct rd_report_site *s;
	ssize_t h;

	assert_int_equal(discover_path(&list, fixture("python"), &err), 0);
	assert_int_equal(list.n, 4);
	assert_int_equal(merge_build(&r, &list, NULL, &err), 0);
	assert_int_equal(r.nsites, 9);

	/* PyTorch: two lines of train.py in one process and the same code in
	 * another (Python 3.13, torch elsewhere, one more allocator frame)
	 * are one site */
	s = site_with_key(&r, TORCH_KEY);
	assert_int_equal(s->processes, 2);
	assert_int_equal(s->c.live_bytes, 112 * MiB);
	assert_int_equal(s->c.live_allocations, 4);
	assert_null(s->library);
	/* a segment of PyTorch's pool (DeviceCachingAllocator::malloc, a
	 * noise frame): labelled, with the key and headline unchanged */
	assert_string_equal(s->pool, TORCH_POOL);
	expect_frame(s, 0,
		     "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc",
		     false, true);
	expect_frame(s, 1, NULL, false, true);
	expect_frame(s, 2, "at::native::empty_cuda", false, true);
	expect_frame(s, 3, "torch::autograd::THPVariable_randn", false, false);
	expect_frame(s, 4, "_PyObject_MakeTpCall", false, true);
	/* the Python frames sit where the evaluation loop ran them */
	expect_frame(s, 5, "Linear.forward", true, false);
	expect_frame(s, 6, "Model.forward", true, false);
	expect_frame(s, 7, "step", true, false);
	expect_frame(s, 8, "<module>", true, false);
	expect_frame(s, 9, "_PyEval_EvalFrameDefault", false, true);
	expect_frame(s, 12, "main", false, true);
	expect_frame(s, 15, "_start", false, true);
	assert_int_equal(s->nframes, 16);
	/* the line of step() differs between the merged sites, and so does
	 * the path of linear.py between the processes: both dropped */
	assert_int_equal(s->frames[7].line, 0);
	assert_non_null(s->frames[7].file);
	assert_null(s->frames[5].file);
	assert_int_equal(s->frames[6].line, 42);
	/* the headline: the user's model.py, not torch's linear.py */
	h = merge_site_headline(s);
	assert_int_equal(h, 6);

	/* cuBLASLt, the innermost library, called from the user's model.py */
	s = site_with_key(&r,
			  "cudaMalloc|libcublasLt.so.12+0x99000;libcublas.so.12!cublasCreate_v2;"
			  "libtorch_cuda.so!at::cuda::getCurrentCUDABlasHandle();"
			  "libtorch_python.so!THPVariable_matmul;model.py!Model.forward");
	assert_string_equal(s->library, "cuBLASLt");
	assert_null(s->pool);
	expect_frame(s, 4, "Model.forward", true, false);
	assert_int_equal(merge_site_headline(s), 4);

	/* NCCL, from installed and standard-library Python only: the
	 * headline is the innermost native frame that is not noise */
	s = site_with_key(&r, "cudaMalloc|libnccl.so.2!ncclCommInitRank;"
			      "libtorch_cuda.so!c10d::ProcessGroupNCCL::getNCCLComm;"
			      "libtorch_python.so+0x500000;distributed_c10d.py!barrier;"
			      "threading.py!Thread.run;<frozen runpy>!_run_code");
	assert_string_equal(s->library, "NCCL");
	assert_int_equal(merge_site_headline(s), 0);
	expect_frame(s, 3, "barrier", true, false);
	assert_false(s->frames[3].user);
	assert_false(s->frames[4].user);
	assert_false(s->frames[5].user);

	/* the runtime's own thread: nothing but the driver, the runtime and
	 * the thread's start */
	s = site_with_key(&r, "cuMemAlloc_v2|");
	assert_string_equal(s->library, CLASSIFY_CUDA_CONTEXT);
	assert_null(s->pool);
	assert_int_equal(merge_site_headline(s), 0);
	for (size_t i = 0; i < s->nframes; i++)
		assert_true(s->frames[i].noise != NOISE_NONE);

	/* ctypes from a stripped interpreter: no evaluation loop by name,
	 * so before the interpreter's innermost frame */
	s = site_with_key(&r, "cudaMalloc|thread.py!_WorkItem.run;alloc.py!grab");
	expect_frame(s, 3, "PyCFuncPtr_call", false, true);
	expect_frame(s, 4, "_WorkItem.run", true, false);
	expect_frame(s, 5, "grab", true, false);
	expect_frame(s, 6, NULL, false, true);
	assert_string_equal(s->frames[6].module, "python3.12");
	assert_int_equal(merge_site_headline(s), 5);
	assert_null(s->library);

	/* no interpreter frame at all (a stack cut short): after the native */
	s = site_with_key(&r, "cudaMalloc|libmyext.so!myext_alloc;libmyext.so!myext_call;"
			      "ext.py!run_ext");
	expect_frame(s, 2, "run_ext", true, false);
	assert_int_equal(merge_site_headline(s), 2);

	/* CuPy's pool and bindings are noise */
	s = site_with_key(&r, "cudaMalloc|basic.py!empty;cp.py!make");
	for (size_t i = 0; i < 3; i++)
		assert_true(s->frames[i].noise == NOISE_ALLOCATOR);
	assert_int_equal(merge_site_headline(s), 4);
	assert_string_equal(s->pool, CUPY_POOL);

	/* an interpreter gpuspy cannot read: native frames only */
	s = site_with_key(&r, "cudaMalloc|libmyext.so!myext_alloc");
	assert_int_equal(merge_site_headline(s), 0);

	/* cudart linked into the program */
	s = site_with_key(&r, "cuMemAlloc_v2|static_app!leak_static;static_app!main");
	assert_true(s->frames[0].noise == NOISE_CUDA);
	assert_true(s->frames[1].noise == NOISE_CUDA);
	assert_int_equal(merge_site_headline(s), 2);
	assert_null(s->library);

	merge_clear(&r);
	rd_process_list_clear(&list);
}

/* fixtures/pools: which sites are a framework pool's segments, and that a
 * label changes neither a key nor a headline. */
static void test_merge_pools(void **state)
{
	struct rd_process_list list = { 0 };
	struct rd_error err = { "" };
	struct rd_report r;
	const struct rd_report_site *s;
	size_t npools = 0;

	assert_int_equal(discover_path(&list, fixture("pools"), &err), 0);
	assert_int_equal(list.n, 6);
	assert_int_equal(merge_build(&r, &list, NULL, &err), 0);
	assert_int_equal(r.nsites, 10);

	/* the same code without the cache (node5-10, first) and with it
	 * (node5-11): one key, and a pool segment in at least one of them */
	s = site_with_key(&r, "cudaMalloc|libtorch_python.so!torch::autograd::THPVariable_randn;"
			      "train.py!step;train.py!<module>");
	assert_int_equal(s->processes, 2);
	assert_string_equal(s->pool, TORCH_POOL);
	assert_int_equal(merge_site_headline(s), 3);
	/* without the cache alone: no pool */
	s = site_with_key(&r, "cudaMalloc|libtorch_python.so!torch::autograd::THPVariable_randn;"
			      "eval.py!evaluate");
	assert_null(s->pool);
	/* expandable segments, grown on the autograd thread */
	s = site_with_key(&r,
			  "cuMemCreate|libtorch_cuda.so!at::native::structured_mm_out_cuda::impl;"
			  "libtorch_cpu.so!torch::autograd::generated::MmBackward0::apply;"
			  "libtorch_cpu.so!torch::autograd::Engine::thread_main");
	assert_string_equal(s->pool, TORCH_POOL);
	assert_int_equal(s->kind, RD_KIND_VMM);
	expect_frame(s, 4, "at::native::structured_mm_out_cuda::impl", false, false);
	assert_int_equal(merge_site_headline(s), 4);
	/* backend:cudaMallocAsync: per tensor */
	s = site_with_key(&r,
			  "cudaMallocAsync|libtorch_python.so!torch::autograd::THPVariable_zeros;"
			  "async_train.py!step");
	assert_null(s->pool);

	/* XLA: BFC, the plugin without symbols; not the platform allocator,
	 * not pinned host memory */
	s = site_with_key(&r,
			  "cuMemAlloc_v2|"
			  "xla_cuda_plugin.so!stream_executor::gpu::CudaExecutor::Allocate;"
			  "xla_cuda_plugin.so!stream_executor::DeviceMemAllocator::Alloc;"
			  "xla_cuda_plugin.so!tsl::BFCAllocator::Extend;"
			  "xla_cuda_plugin.so!tsl::BFCAllocator::AllocateRawInternal;"
			  "xla_cuda_plugin.so!xla::PjRtStreamExecutorClient::BufferFromHostBuffer;"
			  "array.py!_array_from_host;jtrain.py!load_batch");
	assert_string_equal(s->pool, XLA_POOL);
	assert_int_equal(merge_site_headline(s), 6);
	s = site_with_key(&r, "cuMemAlloc_v2|xla_cuda_plugin.so+0x1000;xla_cuda_plugin.so+0x2000;"
			      "xla_cuda_plugin.so+0x3000;jinfer.py!infer");
	assert_string_equal(s->pool, XLA_POOL);
	s = site_with_key(
		&r, "cuMemAlloc_v2|"
		    "xla_cuda_plugin.so!stream_executor::gpu::CudaExecutor::Allocate;"
		    "xla_cuda_plugin.so!stream_executor::StreamExecutorMemoryAllocator::Allocate;"
		    "xla_cuda_plugin.so!xla::PjRtStreamExecutorClient::BufferFromHostBuffer;"
		    "array.py!_array_from_host;jtrain.py!load_batch");
	assert_null(s->pool);
	for (size_t i = 0; i < r.nsites; i++) {
		if (r.sites[i]->kind == RD_KIND_PINNED)
			assert_null(r.sites[i]->pool);
		npools += r.sites[i]->pool != NULL;
	}

	/* CuPy without its pool: MemoryAsyncPool, set_allocator(None) */
	s = site_with_key(&r, "cudaMallocAsync|cp_async.py!make");
	assert_null(s->pool);
	s = site_with_key(&r, "cudaMalloc|cp_nopool.py!make");
	assert_null(s->pool);
	assert_int_equal(npools, 4);

	merge_clear(&r);
	rd_process_list_clear(&list);
}

/* A site without frames is the runtime's own memory, unless the process
 * took no stacks at all (GPUSPY_DEPTH=0). */
static void test_library_no_frames(void **state)
{
	static const int64_t depths[] = { -1, 0, 16 }; /* not said, none, some */

	for (size_t i = 0; i < sizeof(depths) / sizeof(depths[0]); i++) {
		struct rd_process *p = fake_process(0);
		struct rd_process_list list = { .items = &p, .n = 1, .cap = 1 };
		struct rd_error err = { "" };
		struct rd_report r;

		p->depth = depths[i];
		p->sites = calloc(1, sizeof(*p->sites));
		p->nsites = 1;
		p->sites[0].kind = RD_KIND_DEVICE;
		p->sites[0].api = strdup("cudaMalloc");
		assert_int_equal(merge_build(&r, &list, NULL, &err), 0);
		assert_int_equal(r.nsites, 1);
		assert_string_equal(r.sites[0]->key, "cudaMalloc|");
		assert_int_equal(merge_site_headline(r.sites[0]), -1);
		if (p->depth == 0)
			assert_null(r.sites[0]->library);
		else
			assert_string_equal(r.sites[0]->library, CLASSIFY_CUDA_CONTEXT);
		merge_clear(&r);
		rd_process_free(p);
	}
}

#define GiB (1024LL * MiB)

/* fixtures/oom: a process with report.json and two post-mortems, and one
 * killed after its first out-of-memory event (fixtures/README.md). */
static void test_load_oom(void **state)
{
	struct rd_process_list list = { 0 };
	struct rd_error err = { "" };
	struct rd_process *p, *q;

	assert_int_equal(discover_path(&list, fixture("oom"), &err), 0);
	assert_int_equal(list.n, 2);
	p = list.items[0];
	assert_int_equal(p->pid, 500);
	assert_false(p->partial);
	assert_non_null(strstr(p->file, "node9-500/report.json"));
	assert_true(p->start_time == 1764510000.0);
	assert_int_equal(p->noom, 3);
	assert_int_equal(p->oom_dropped, 2);
	assert_int_equal(p->oom[0].number, 1);
	assert_true(p->oom[0].time == 1764510040.5);
	assert_string_equal(p->oom[0].api, "cudaMalloc");
	assert_int_equal(p->oom[0].kind, RD_KIND_DEVICE);
	assert_int_equal(p->oom[0].requested_bytes, 80 * GiB);
	assert_int_equal(p->oom[0].site, 4);
	assert_string_equal(p->oom[0].file, "oom-1.json");
	/* each post-mortem read from the process's directory */
	assert_non_null(p->oom[0].snapshot);
	assert_true(p->oom[0].snapshot->partial);
	assert_int_equal(p->oom[0].snapshot->event.number, 1);
	assert_int_equal(p->oom[0].snapshot->noom, 1);
	assert_non_null(p->oom[1].snapshot);
	assert_int_equal(p->oom[1].snapshot->event.number, 2);
	assert_int_equal(p->oom[1].kind, RD_KIND_PINNED);
	/* no file was written for the third */
	assert_null(p->oom[2].file);
	assert_null(p->oom[2].snapshot);
	assert_int_equal(p->oom[2].free_bytes, -1);
	assert_int_equal(p->oom[2].total_bytes, -1);
	assert_int_equal(p->sites[3].id, 4);

	/* no report.json: its only post-mortem is its report, and the
	 * snapshot of its event is the process itself */
	q = list.items[1];
	assert_int_equal(q->pid, 501);
	assert_true(q->partial);
	assert_non_null(strstr(q->file, "node9-501/oom-1.json"));
	assert_non_null(strstr(q->path, "oom/node9-501"));
	assert_int_equal(q->event.number, 1);
	assert_int_equal(q->event.kind, RD_KIND_VMM);
	assert_null(q->event.file);
	assert_int_equal(q->noom, 1);
	assert_ptr_equal(q->oom[0].snapshot, q);
	assert_int_equal(q->oom[0].device, 1);

	/* named again, as its directory: counted once */
	assert_int_equal(discover_path(&list, fixture("oom/node9-501"), &err), 0);
	assert_int_equal(list.n, 2);
	rd_process_list_clear(&list);

	/* a post-mortem named by itself: partial; the earlier one is read
	 * from its directory */
	assert_int_equal(discover_path(&list, fixture("oom/node9-500/oom-2.json"), &err), 0);
	assert_int_equal(list.n, 1);
	p = list.items[0];
	assert_true(p->partial);
	assert_int_equal(p->noom, 2);
	assert_non_null(p->oom[0].snapshot);
	assert_int_equal(p->oom[0].snapshot->event.number, 1);
	assert_ptr_equal(p->oom[1].snapshot, p);
	rd_process_list_clear(&list);
}

static const struct rd_report_site *oom_top(const struct rd_report_oom *ro, size_t i)
{
	assert_true(i < ro->ntop);
	return ro->top[i];
}

static const struct rd_report_frame *oom_requested_by(const struct rd_report_oom *ro)
{
	ssize_t h;

	assert_non_null(ro->requested);
	h = merge_site_headline(ro->requested);
	assert_true(h >= 0);
	return &ro->requested->frames[h];
}

static void test_merge_oom(void **state)
{
	struct rd_process_list list = { 0 };
	struct rd_error err = { "" };
	const struct rd_report_oom *ro;
	const struct rd_report_frame *f;
	struct rd_report r;
	int64_t live;

	assert_int_equal(discover_path(&list, fixture("oom"), &err), 0);
	assert_int_equal(merge_build(&r, &list, NULL, &err), 0);
	assert_int_equal(r.partial, 1);
	assert_int_equal(r.oom_dropped, 2);
	/* by time, over the processes */
	assert_int_equal(r.nooms, 4);
	assert_int_equal(r.ooms[0].proc->pid, 500);
	assert_int_equal(r.ooms[0].ev->number, 1);
	assert_int_equal(r.ooms[1].proc->pid, 501);
	assert_int_equal(r.ooms[2].proc->pid, 500);
	assert_int_equal(r.ooms[2].ev->number, 2);
	assert_int_equal(r.ooms[3].ev->number, 3);

	/* node9-500, event 1: what was live in oom-1.json, site 6 merged
	 * into site 2 (one key), the two smallest left out */
	ro = &r.ooms[0];
	live = 9 * GiB + 449 * MiB;
	assert_int_equal(ro->ev->live_bytes, live);
	assert_int_equal(ro->untracked_bytes, 140 * GiB - MiB - live);
	f = oom_requested_by(ro);
	assert_string_equal(f->function, "grow_buffer");
	assert_int_equal(ro->ntop, REPORT_OOM_TOP);
	assert_string_equal(oom_top(ro, 0)->key,
			    "cudaMalloc|trainer!alloc_activations;trainer!train_step;trainer!main");
	assert_int_equal(oom_top(ro, 0)->c.live_bytes, 6 * GiB);
	assert_string_equal(oom_top(ro, 1)->key, "cudaMalloc|trainer!load_weights;trainer!main");
	assert_int_equal(oom_top(ro, 2)->c.live_bytes, GiB);
	assert_int_equal(oom_top(ro, 3)->kind, RD_KIND_MANAGED);
	assert_int_equal(oom_top(ro, 4)->c.live_bytes, 128 * MiB);
	assert_string_equal(oom_top(ro, 4)->library, "cuBLASLt");
	/* at exit, the activations were freed: the moment is the file's */
	for (size_t i = 0; i < r.nsites; i++)
		if (strstr(r.sites[i]->key, "alloc_activations"))
			assert_int_equal(r.sites[i]->c.live_bytes, 0);

	/* node9-501: the requesting site shares its key with the biggest
	 * one, but keeps its own line; tracked live exceeds what the driver
	 * saw used: nothing untracked */
	ro = &r.ooms[1];
	assert_int_equal(ro->untracked_bytes, 0);
	f = oom_requested_by(ro);
	assert_true(f->python);
	assert_string_equal(f->function, "Model.forward");
	assert_int_equal(f->line, 57);
	assert_int_equal(ro->ntop, 2);
	assert_string_equal(oom_top(ro, 0)->pool, "PyTorch caching allocator");
	assert_int_equal(oom_top(ro, 0)->c.live_bytes, 12 * GiB);
	f = &oom_top(ro, 0)->frames[merge_site_headline(oom_top(ro, 0))];
	assert_int_equal(f->line, 42);

	/* node9-500, event 2: a pinned request, pinned sites only */
	ro = &r.ooms[2];
	assert_string_equal(oom_requested_by(ro)->function, "pin_dataset");
	assert_int_equal(ro->ntop, 1);
	assert_int_equal(oom_top(ro, 0)->kind, RD_KIND_PINNED);
	assert_int_equal(oom_top(ro, 0)->c.live_bytes, 512 * MiB);

	/* event 3: no file, the driver not asked; the site from report.json */
	ro = &r.ooms[3];
	assert_int_equal(ro->untracked_bytes, -1);
	assert_int_equal(ro->ntop, 0);
	assert_string_equal(oom_requested_by(ro)->function, "expand_pool");

	merge_clear(&r);
	rd_process_list_clear(&list);
}

static void copy_file(const char *from, const char *to)
{
	char buf[65536];
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
	size_t n;

	assert_non_null(in);
	assert_non_null(out);
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		assert_int_equal(fwrite(buf, 1, n, out), n);
	fclose(in);
	assert_int_equal(fclose(out), 0);
}

/* A post-mortem removed since: the event stays, without what was live
 * then.  Without report.json, the highest number is the report: 10 after
 * 9, not "oom-9.json" after "oom-10.json". */
static void test_oom_files(void **state)
{
	char dir[] = "/tmp/gpuspy-test-oom-XXXXXX";
	char a[PATH_MAX], b[PATH_MAX];
	struct rd_process_list list = { 0 };
	struct rd_error err = { "" };
	struct rd_report r;

	assert_non_null(mkdtemp(dir));
	snprintf(b, sizeof(b), "%s/report.json", dir);
	copy_file(fixture("oom/node9-500/report.json"), b);
	snprintf(b, sizeof(b), "%s/oom-2.json", dir);
	copy_file(fixture("oom/node9-500/oom-2.json"), b);
	assert_int_equal(discover_path(&list, dir, &err), 0);
	assert_int_equal(list.n, 1);
	assert_null(list.items[0]->oom[0].snapshot);
	assert_non_null(list.items[0]->oom[1].snapshot);
	assert_int_equal(merge_build(&r, &list, NULL, &err), 0);
	assert_int_equal(r.nooms, 3);
	assert_int_equal(r.ooms[0].ntop, 0);
	/* the site is then the one of report.json */
	assert_string_equal(oom_requested_by(&r.ooms[0])->function, "grow_buffer");
	assert_int_equal(r.ooms[1].ntop, 1);
	merge_clear(&r);
	rd_process_list_clear(&list);

	/* no report.json; oom-9.json and oom-10.json (a copy of the
	 * crashed process's only one, whose entries name oom-1.json) */
	unlink(b);
	snprintf(b, sizeof(b), "%s/report.json", dir);
	unlink(b);
	snprintf(a, sizeof(a), "%s/oom-9.json", dir);
	copy_file(fixture("oom/node9-500/oom-1.json"), a);
	snprintf(b, sizeof(b), "%s/oom-10.json", dir);
	copy_file(fixture("oom/node9-501/oom-1.json"), b);
	assert_int_equal(discover_path(&list, dir, &err), 0);
	assert_int_equal(list.n, 1);
	assert_int_equal(list.items[0]->pid, 501);
	assert_true(list.items[0]->partial);
	assert_non_null(strstr(list.items[0]->file, "/oom-10.json"));
	/* oom-1.json is not there */
	assert_null(list.items[0]->oom[0].snapshot);
	rd_process_list_clear(&list);
	unlink(a);
	unlink(b);
	assert_int_equal(rmdir(dir), 0);
}

/* Memory over time (fixtures/README.md, growth/): sites[].growing, read
 * and merged ("growing in any process"); killed processes read from
 * snapshot.json, or from an oom-N.json newer than it. */
static bool near(double a, double b)
{
	return a > b - 0.001 && a < b + 0.001;
}

static const struct rd_report_site *site_by_key(const struct rd_report *r, const char *key)
{
	for (size_t i = 0; i < r->nsites; i++)
		if (strcmp(r->sites[i]->key, key) == 0)
			return r->sites[i];
	fail_msg("no site %s", key);
	return NULL;
}

static void test_load_growth(void **state)
{
	struct rd_process_list list = { 0 };
	struct rd_error err = { "" };
	struct rd_process *p;
	struct rd_report r;

	assert_int_equal(discover_path(&list, fixture("growth"), &err), 0);
	assert_int_equal(list.n, 3);

	/* ran to the end: report.json, the final state */
	p = list.items[0];
	assert_int_equal(p->pid, 300);
	assert_false(p->partial);
	assert_false(p->snapshot.present);
	assert_non_null(strstr(p->file, "node4-300/report.json"));
	assert_true(p->sites[0].growing);  /* leak_step */
	assert_true(p->sites[1].growing);  /* cache_grow */
	assert_false(p->sites[2].growing); /* churn_step */
	assert_false(p->sites[3].growing); /* warm_pool */

	/* killed: its last periodic snapshot */
	p = list.items[1];
	assert_int_equal(p->pid, 301);
	assert_true(p->partial);
	assert_non_null(strstr(p->file, "node4-301/snapshot.json"));
	assert_non_null(strstr(p->path, "growth/node4-301"));
	assert_true(p->snapshot.present);
	assert_true(p->snapshot.periodic);
	assert_int_equal(p->snapshot.samples, 69);
	assert_int_equal(p->snapshot.interval_us, 100000);
	assert_true(near(p->start_time, 1764510001.0));
	assert_true(near(p->end_time, 1764510007.9));
	assert_int_equal(p->event.number, 0);

	/* killed after two events: oom-2.json is newer than snapshot.json */
	p = list.items[2];
	assert_int_equal(p->pid, 302);
	assert_true(p->partial);
	assert_non_null(strstr(p->file, "node4-302/oom-2.json"));
	assert_false(p->snapshot.present);
	assert_int_equal(p->event.number, 2);
	assert_int_equal(p->sites[0].c.live_bytes, 14 * MiB);

	/* growing in any process makes the merged site growing */
	assert_int_equal(merge_build(&r, &list, NULL, &err), 0);
	assert_int_equal(r.partial, 2);
	assert_int_equal(r.nsites, 5);
	assert_true(site_by_key(&r, "cudaMalloc|trainer!leak_step;trainer!train_loop;trainer!main")
			    ->growing);
	assert_int_equal(
		site_by_key(&r, "cudaMalloc|trainer!leak_step;trainer!train_loop;trainer!main")
			->processes,
		3);
	/* only in node4-301's snapshot */
	assert_true(
		site_by_key(&r, "cudaMalloc|trainer!alloc_batch;trainer!train_loop;trainer!main")
			->growing);
	assert_true(site_by_key(&r, "cudaMallocManaged|trainer!cache_grow;trainer!main")->growing);
	assert_false(site_by_key(&r, "cudaMalloc|trainer!warm_pool;trainer!main")->growing);
	assert_false(
		site_by_key(&r, "cudaMalloc|trainer!churn_step;trainer!train_loop;trainer!main")
			->growing);
	merge_clear(&r);
	rd_process_list_clear(&list);

	/* a snapshot.json named directly, though older than oom-2.json; the
	 * post-mortem it names is read from its directory */
	assert_int_equal(discover_path(&list, fixture("growth/node4-302/snapshot.json"), &err), 0);
	assert_int_equal(list.n, 1);
	p = list.items[0];
	assert_true(p->partial);
	assert_true(p->snapshot.periodic);
	assert_int_equal(p->snapshot.samples, 40);
	assert_int_equal(p->sites[0].c.live_bytes, 12 * MiB);
	assert_int_equal(p->noom, 1);
	assert_non_null(p->oom[0].snapshot);
	assert_int_equal(p->oom[0].snapshot->event.number, 1);
	rd_process_list_clear(&list);
}

/* FROM copied to TO with the first OLD replaced by NEW. */
static void copy_replace(const char *from, const char *to, const char *old, const char *new)
{
	char buf[65536], *at;
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
	size_t n;

	assert_non_null(in);
	assert_non_null(out);
	n = fread(buf, 1, sizeof(buf) - 1, in);
	assert_true(n < sizeof(buf) - 1);
	buf[n] = '\0';
	at = strstr(buf, old);
	assert_non_null(at);
	fwrite(buf, 1, at - buf, out);
	fputs(new, out);
	fputs(at + strlen(old), out);
	fclose(in);
	assert_int_equal(fclose(out), 0);
}

/* Which file of DIR load_path reads, as a static basename. */
static const char *fallback_of(const char *dir)
{
	static char name[64];
	struct rd_process_list list = { 0 };
	struct rd_error err = { "" };
	const char *slash;
	int r = discover_path(&list, dir, &err);

	if (r != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(list.n, 1);
	assert_true(list.items[0]->partial);
	slash = strrchr(list.items[0]->file, '/');
	snprintf(name, sizeof(name), "%s", slash ? slash + 1 : list.items[0]->file);
	rd_process_list_clear(&list);
	return name;
}

/* The newer by end_time, not by the files' times; snapshot.json on a tie
 * or an unknown time; report.json whenever it is there. */
static void test_snapshot_fallback(void **state)
{
	char dir[] = "/tmp/gpuspy-test-snap-XXXXXX";
	char snap[PATH_MAX], oom1[PATH_MAX], oom2[PATH_MAX], rep[PATH_MAX];
	char src[PATH_MAX + 64];
	/* snapshot.json written last, as far as the file system knows */
	struct timespec old[2] = { { 1000, 0 }, { 1000, 0 } };
	struct timespec now[2] = { { 0, UTIME_NOW }, { 0, UTIME_NOW } };

	assert_non_null(mkdtemp(dir));
	/* fixture() returns one static buffer */
	snprintf(src, sizeof(src), "%s", fixture("growth/node4-302/snapshot.json"));
	snprintf(snap, sizeof(snap), "%s/snapshot.json", dir);
	snprintf(oom1, sizeof(oom1), "%s/oom-1.json", dir);
	snprintf(oom2, sizeof(oom2), "%s/oom-2.json", dir);
	snprintf(rep, sizeof(rep), "%s/report.json", dir);
	copy_file(fixture("growth/node4-302/oom-1.json"), oom1);
	copy_file(fixture("growth/node4-302/oom-2.json"), oom2);

	/* end_time 6.0 < 9.0, whatever the modification times say */
	copy_file(src, snap);
	assert_int_equal(utimensat(AT_FDCWD, oom2, old, 0), 0);
	assert_int_equal(utimensat(AT_FDCWD, snap, now, 0), 0);
	assert_string_equal(fallback_of(dir), "oom-2.json");

	/* a tie: snapshot.json */
	copy_replace(src, snap, "\"end_time\": 1764510006.0", "\"end_time\": 1764510009.0");
	assert_string_equal(fallback_of(dir), "snapshot.json");
	/* newer */
	copy_replace(src, snap, "\"end_time\": 1764510006.0", "\"end_time\": 1764510009.5");
	assert_int_equal(utimensat(AT_FDCWD, snap, old, 0), 0);
	assert_int_equal(utimensat(AT_FDCWD, oom2, now, 0), 0);
	assert_string_equal(fallback_of(dir), "snapshot.json");
	/* snapshot.json's time unknown */
	copy_replace(src, snap, "\"end_time\": 1764510006.0,", "");
	assert_string_equal(fallback_of(dir), "snapshot.json");
	/* oom-2.json's time unknown */
	copy_file(src, snap);
	copy_replace(fixture("growth/node4-302/oom-2.json"), oom2, "\"end_time\": 1764510009.0,",
		     "");
	assert_string_equal(fallback_of(dir), "snapshot.json");

	/* snapshot.json alone */
	unlink(oom1);
	unlink(oom2);
	assert_string_equal(fallback_of(dir), "snapshot.json");

	/* report.json, the final state, is always read */
	copy_file(fixture("growth/node4-300/report.json"), rep);
	{
		struct rd_process_list list = { 0 };
		struct rd_error err = { "" };

		assert_int_equal(discover_path(&list, dir, &err), 0);
		assert_int_equal(list.n, 1);
		assert_false(list.items[0]->partial);
		assert_non_null(strstr(list.items[0]->file, "/report.json"));
		rd_process_list_clear(&list);
	}
	unlink(rep);

	/* a snapshot.json without "snapshot" is refused, naming it */
	copy_replace(src, snap, "\"snapshot\": {", "\"not_a_snapshot\": {");
	{
		struct rd_process_list list = { 0 };
		struct rd_error err = { "" };

		assert_int_equal(discover_path(&list, dir, &err), -EINVAL);
		assert_non_null(strstr(err.msg, "snapshot.json"));
		assert_non_null(strstr(err.msg, "snapshot: missing"));
		rd_process_list_clear(&list);
	}
	unlink(snap);
	assert_int_equal(rmdir(dir), 0);
}

static void test_human_size(void **state)
{
	char buf[32];

	assert_string_equal(util_human_size(0, buf, sizeof(buf)), "0 B");
	assert_string_equal(util_human_size(1023, buf, sizeof(buf)), "1023 B");
	assert_string_equal(util_human_size(1024, buf, sizeof(buf)), "1.0 KiB");
	assert_string_equal(util_human_size(3 * MiB / 2, buf, sizeof(buf)), "1.5 MiB");
	assert_string_equal(util_human_size(MiB - 1, buf, sizeof(buf)), "1.0 MiB");
	assert_string_equal(util_human_size(5LL << 30, buf, sizeof(buf)), "5.0 GiB");
	assert_string_equal(util_human_size(INT64_MAX, buf, sizeof(buf)), "8.0 EiB");
}

static void test_demangle(void **state)
{
	char *s = symbolize_demangle("_ZN2gs3fooEv");

#ifdef GPUSPY_HAVE_CXA_DEMANGLE
	assert_string_equal(s, "gs::foo()");
#else
	assert_string_equal(s, "_ZN2gs3fooEv");
#endif
	free(s);
	s = symbolize_demangle("main");
	assert_string_equal(s, "main");
	free(s);
	/* not a valid mangling: kept as it is */
	s = symbolize_demangle("_Z");
	assert_string_equal(s, "_Z");
	free(s);
}

static void test_normalize(void **state)
{
	static const struct {
		const char *in, *dotdot, *plain;
	} cases[] = {
		{ "/work/build/../src/x.c", "/work/src/x.c", "/work/build/../src/x.c" },
		{ "/a/./b//c/", "/a/b/c", "/a/b/c" },
		{ "../a/../../b", "../../b", "../a/../../b" },
		{ "/..", "/", "/.." },
		{ "./", ".", "." },
		{ "a/..", ".", "a/.." },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char a[64], b[64];

		strcpy(a, cases[i].in);
		strcpy(b, cases[i].in);
		util_path_normalize(a, true);
		util_path_normalize(b, false);
		assert_string_equal(a, cases[i].dotdot);
		assert_string_equal(b, cases[i].plain);
	}
}

static void test_sanitize(void **state)
{
	char s[] = "a\nb\x1b[1m\xc2\x9b"
		   "c\xc3\xa9";

	util_sanitize(s);
	assert_string_equal(s, "a?b?[1m??c\xc3\xa9");
}

/* A known function of this program, called so that its return address is
 * ours: the symbolizer must name test_symbolize_self. */
__attribute__((noinline)) static void *return_address(void)
{
	return __builtin_return_address(0);
}

static void test_symbolize_self(void **state)
{
	struct symbolizer *s;
	struct sym_module *m;
	struct sym_info info;
	struct link_map *lm;
	Dl_info dli;
	char exe[PATH_MAX];
	void *ra = return_address();
	int line = __LINE__;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	assert_true(n > 0);
	exe[n] = '\0';
	assert_true(dladdr1(ra, &dli, (void **)&lm, RTLD_DL_LINKMAP) != 0);
	assert_int_equal(symbolizer_new(&s), 0);
	m = symbolizer_module(s, exe, "");
	assert_non_null(m);
	/* the same path again: the cached module */
	assert_ptr_equal(symbolizer_module(s, exe, ""), m);
	assert_int_equal(symbolize_frame(m, (uintptr_t)ra - lm->l_addr, "fallback", &info), 0);
	assert_string_equal(info.function, "test_symbolize_self");
	assert_non_null(info.file);
	assert_non_null(strstr(info.file, "test_read.c"));
	assert_int_equal(info.line, line);
	sym_info_clear(&info);

	/* another build-id: not this file, so not symbolized at all */
	assert_null(symbolizer_module(s, exe, "00112233445566778899aabbccddeeff00112233"));
	assert_int_equal(symbolize_frame(NULL, 1234, "fallback", &info), 0);
	assert_string_equal(info.function, "fallback");
	assert_null(info.file);
	sym_info_clear(&info);

	/* missing or unusable files: no module, no error */
	assert_null(symbolizer_module(s, "/nonexistent/gpuspy/lib.so", ""));
	assert_null(symbolizer_module(s, "/dev/null", ""));
	assert_null(symbolizer_module(s, "/", ""));
	assert_null(symbolizer_module(s, fixture("process/node7-4242/report.json"), ""));
	symbolizer_free(s);
}

/* Two calls from one function, on two lines: one site (the key holds
 * names), whose frame keeps the file but not a line that only one of the
 * calls has. */
static void test_merge_lines(void **state)
{
	void *ra1 = return_address();
	void *ra2 = return_address();
	struct rd_process *p = fake_process(0);
	struct rd_process_list list = { .items = &p, .n = 1, .cap = 1 };
	struct rd_error err = { "" };
	struct symbolizer *sym;
	struct link_map *lm;
	struct rd_report r;
	Dl_info dli;
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	assert_true(n > 0);
	exe[n] = '\0';
	assert_true(dladdr1(ra1, &dli, (void **)&lm, RTLD_DL_LINKMAP) != 0);
	p->modules = calloc(1, sizeof(*p->modules));
	p->nmodules = 1;
	p->modules[0].path = strdup(exe);
	p->modules[0].build_id = strdup("");
	p->sites = calloc(2, sizeof(*p->sites));
	p->nsites = 2;
	for (int i = 0; i < 2; i++) {
		struct rd_site *s = &p->sites[i];

		s->kind = RD_KIND_DEVICE;
		s->api = strdup("cudaMalloc");
		s->c.allocations = s->c.allocated_bytes = 1;
		s->frames = calloc(1, sizeof(*s->frames));
		s->nframes = 1;
		s->frames[0].offset = (uintptr_t)(i ? ra2 : ra1) - lm->l_addr;
	}
	assert_int_equal(symbolizer_new(&sym), 0);
	assert_int_equal(merge_build(&r, &list, sym, &err), 0);
	assert_int_equal(r.nsites, 1);
	assert_int_equal(r.sites[0]->c.allocations, 2);
	assert_int_equal(r.sites[0]->processes, 1);
	assert_string_equal(r.sites[0]->frames[0].function, "test_merge_lines");
	assert_non_null(strstr(r.sites[0]->frames[0].file, "test_read.c"));
	assert_int_equal(r.sites[0]->frames[0].line, 0);
	merge_clear(&r);
	symbolizer_free(sym);
	rd_process_free(p);
}

/* The spread of VALUES as report_spread computes it. */
static struct rd_report_spread spread_of(const int64_t *values, size_t n,
					 enum rd_report_metric metric)
{
	struct rd_report_spread sp;

	assert_int_equal(merge_spread(values, n, metric, &sp), 0);
	return sp;
}

static void test_spread(void **state)
{
	struct rd_report_spread sp;

	/* an odd count: the middle value; nothing 1 MiB away */
	sp = spread_of((int64_t[]){ 3, 1, 2 }, 3, REPORT_LEAKED);
	assert_int_equal(sp.min, 1);
	assert_int_equal(sp.median, 2);
	assert_int_equal(sp.max, 3);
	assert_int_equal(sp.outlier, -1);
	/* an even count: the mean of the middle two, rounded down */
	sp = spread_of((int64_t[]){ 4, 1, 3, 2 }, 4, REPORT_LEAKED);
	assert_int_equal(sp.median, 2);
	sp = spread_of((int64_t[]){ 3, 0 }, 2, REPORT_ALLOCATIONS);
	assert_int_equal(sp.median, 1);
	sp = spread_of((int64_t[]){ INT64_MAX, INT64_MAX - 1 }, 2, REPORT_PEAK);
	assert_int_equal(sp.median, INT64_MAX - 1);
	/* one, none */
	sp = spread_of((int64_t[]){ 5 }, 1, REPORT_LEAKED);
	assert_int_equal(sp.min, 5);
	assert_int_equal(sp.median, 5);
	assert_int_equal(sp.max, 5);
	assert_int_equal(sp.outlier, -1);
	sp = spread_of(NULL, 0, REPORT_LEAKED);
	assert_int_equal(sp.max, 0);
	assert_int_equal(sp.outlier, -1);

	/* the example of the documentation: 1, 1, 1, 9 MiB */
	sp = spread_of((int64_t[]){ MiB, MiB, 9 * MiB, MiB }, 4, REPORT_LEAKED);
	assert_int_equal(sp.median, MiB);
	assert_int_equal(sp.outlier, 2);
	/* under 3 processes there is no outlier, however far apart */
	sp = spread_of((int64_t[]){ 0, 100 * MiB }, 2, REPORT_LEAKED);
	assert_int_equal(sp.outlier, -1);
	/* below the median counts as well */
	sp = spread_of((int64_t[]){ 10 * MiB, 10 * MiB, 0, 10 * MiB }, 4, REPORT_PEAK);
	assert_int_equal(sp.outlier, 2);

	/* 1 MiB away: just under, at */
	sp = spread_of((int64_t[]){ 0, 0, 0, MiB - 1 }, 4, REPORT_LEAKED);
	assert_int_equal(sp.outlier, -1);
	sp = spread_of((int64_t[]){ 0, 0, 0, MiB }, 4, REPORT_LEAKED);
	assert_int_equal(sp.outlier, 3);
	/* half the median away: just under, at */
	sp = spread_of((int64_t[]){ 10 * MiB, 10 * MiB, 15 * MiB - 1, 10 * MiB }, 4, REPORT_LEAKED);
	assert_int_equal(sp.outlier, -1);
	sp = spread_of((int64_t[]){ 10 * MiB, 10 * MiB, 15 * MiB, 10 * MiB }, 4, REPORT_LEAKED);
	assert_int_equal(sp.outlier, 2);
	/* an odd median: half of 2 MiB + 1 is not rounded down to 1 MiB */
	sp = spread_of((int64_t[]){ 2 * MiB + 1, 2 * MiB + 1, 3 * MiB + 1 }, 3, REPORT_PEAK);
	assert_int_equal(sp.median, 2 * MiB + 1);
	assert_int_equal(sp.outlier, -1);
	sp = spread_of((int64_t[]){ 2 * MiB + 1, 2 * MiB + 1, 3 * MiB + 2 }, 3, REPORT_PEAK);
	assert_int_equal(sp.outlier, 2);

	/* allocation counts: at least 2 away, and half the median */
	sp = spread_of((int64_t[]){ 1, 1, 1, 2 }, 4, REPORT_ALLOCATIONS);
	assert_int_equal(sp.outlier, -1);
	sp = spread_of((int64_t[]){ 1, 1, 1, 3 }, 4, REPORT_ALLOCATIONS);
	assert_int_equal(sp.outlier, 3);
	sp = spread_of((int64_t[]){ 10, 14, 10, 10 }, 4, REPORT_ALLOCATIONS);
	assert_int_equal(sp.outlier, -1);
	sp = spread_of((int64_t[]){ 10, 15, 10, 10 }, 4, REPORT_ALLOCATIONS);
	assert_int_equal(sp.outlier, 1);
	/* a byte threshold would not name it */
	sp = spread_of((int64_t[]){ 0, 0, 0, 3 }, 4, REPORT_LEAKED);
	assert_int_equal(sp.outlier, -1);

	/* two equally far: the first is named */
	sp = spread_of((int64_t[]){ 5 * MiB, 0, 10 * MiB }, 3, REPORT_LEAKED);
	assert_int_equal(sp.median, 5 * MiB);
	assert_int_equal(sp.outlier, 1);
}

/* A site of PROC with LIVE bytes live, no frames: every such site of one
 * api has one key. */
static void add_site(struct rd_process *p, int64_t live, int64_t allocations)
{
	struct rd_site *s;

	p->sites = realloc(p->sites, (p->nsites + 1) * sizeof(*p->sites));
	assert_non_null(p->sites);
	s = &p->sites[p->nsites++];
	memset(s, 0, sizeof(*s));
	s->id = (int64_t)p->nsites;
	s->kind = RD_KIND_DEVICE;
	s->api = strdup("cudaMalloc");
	s->c.live_bytes = s->c.peak_bytes = s->c.allocated_bytes = live;
	s->c.live_allocations = s->c.allocations = allocations;
}

/* What each process gave a merged site: a process with two sites of the
 * key gives their sum, one without it 0, which counts in the spread. */
static void test_merge_spread(void **state)
{
	struct rd_process *items[3] = { fake_process(0), fake_process(0), fake_process(0) };
	struct rd_process_list list = { .items = items, .n = 3, .cap = 3 };
	struct rd_error err = { "" };
	const struct rd_report_site *s;
	struct rd_report_spread sp;
	struct rd_report r;
	char name[REPORT_NAME_SIZE];

	items[0]->rank = 0;
	items[1]->rank = 5;
	items[2]->rank = -1;
	items[2]->pid = 3;
	add_site(items[0], 3 * MiB, 3);
	add_site(items[1], MiB, 1);
	add_site(items[1], MiB, 2);
	items[0]->leaked_bytes = items[0]->peak_bytes = 3 * MiB;
	items[1]->leaked_bytes = items[1]->peak_bytes = 2 * MiB;
	assert_int_equal(merge_build(&r, &list, NULL, &err), 0);
	assert_int_equal(r.nsites, 1);
	s = r.sites[0];
	assert_int_equal(s->processes, 2);
	assert_int_equal(s->per_proc[REPORT_LEAKED][0], 3 * MiB);
	assert_int_equal(s->per_proc[REPORT_LEAKED][1], 2 * MiB);
	assert_int_equal(s->per_proc[REPORT_LEAKED][2], 0);
	assert_int_equal(s->per_proc[REPORT_ALLOCATIONS][1], 3);
	assert_int_equal(s->per_proc[REPORT_ALLOCATIONS][2], 0);
	/* 3, 2, 0 MiB: the process without the site is 2 MiB from the
	 * median, at least 1 MiB and half of it */
	assert_int_equal(merge_site_spread(&r, s, REPORT_LEAKED, &sp), 0);
	assert_int_equal(sp.min, 0);
	assert_int_equal(sp.median, 2 * MiB);
	assert_int_equal(sp.max, 3 * MiB);
	assert_int_equal(sp.outlier, 2);
	assert_memory_equal(&sp, &s->spread[REPORT_LEAKED], sizeof(sp));
	/* 3, 3, 0 allocations */
	assert_int_equal(s->spread[REPORT_ALLOCATIONS].median, 3);
	assert_int_equal(s->spread[REPORT_ALLOCATIONS].outlier, 2);
	/* the processes' own totals */
	assert_int_equal(r.totals[REPORT_LEAKED][2], 0);
	assert_int_equal(r.spread[REPORT_LEAKED].outlier, 2);
	/* named by rank, else by pid; one host */
	assert_false(r.several_hosts);
	assert_string_equal(merge_process_name(&r, 1, name, sizeof(name)), "rank 5");
	assert_string_equal(merge_process_name(&r, 2, name, sizeof(name)), "pid 3");
	merge_clear(&r);

	/* on two hosts the host is said, made printable */
	free(items[2]->host);
	items[2]->host = strdup("n\033"
				"2");
	assert_int_equal(merge_build(&r, &list, NULL, &err), 0);
	assert_true(r.several_hosts);
	assert_string_equal(merge_process_name(&r, 0, name, sizeof(name)), "rank 0 on h");
	assert_string_equal(merge_process_name(&r, 2, name, sizeof(name)), "pid 3 on n?2");
	merge_clear(&r);
	for (int i = 0; i < 3; i++)
		rd_process_free(items[i]);
}

/* fixtures/README.md, ranks/: rank 2 is the outlier of site A and of the
 * leaked total; site B, the same in every rank, has none. */
static void test_merge_ranks(void **state)
{
	struct rd_process_list list = { 0 };
	struct rd_error err = { "" };
	const struct rd_report_site *a, *b;
	struct rd_report r;

	assert_int_equal(discover_path(&list, fixture("ranks"), &err), 0);
	assert_int_equal(list.n, 4);
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(list.items[i]->rank, (int64_t)i);
	assert_int_equal(merge_build(&r, &list, NULL, &err), 0);
	assert_int_equal(r.nsites, 2);
	a = r.sites[0];
	b = r.sites[1];
	assert_string_equal(a->key, "cudaMalloc|ddp_train!cache_batch;ddp_train!train_step;"
				    "ddp_train!main");
	assert_string_equal(b->key, "cudaMalloc|ddp_train!bucket_alloc;ddp_train!all_reduce;"
				    "ddp_train!main");
	assert_int_equal(a->per_proc[REPORT_LEAKED][2], 9 * MiB);
	assert_int_equal(a->spread[REPORT_LEAKED].min, MiB);
	assert_int_equal(a->spread[REPORT_LEAKED].median, MiB);
	assert_int_equal(a->spread[REPORT_LEAKED].max, 9 * MiB);
	assert_int_equal(a->spread[REPORT_LEAKED].outlier, 2);
	assert_int_equal(r.procs[a->spread[REPORT_LEAKED].outlier]->rank, 2);
	assert_int_equal(a->spread[REPORT_PEAK].outlier, 2);
	/* one allocation each */
	assert_int_equal(a->spread[REPORT_ALLOCATIONS].outlier, -1);
	assert_int_equal(r.spread[REPORT_LEAKED].outlier, 2);
	assert_int_equal(r.spread[REPORT_LEAKED].median, MiB);
	assert_int_equal(r.spread[REPORT_PEAK].outlier, 2);
	assert_int_equal(r.spread[REPORT_PEAK].median, 5 * MiB);
	for (int m = 0; m < REPORT_METRICS; m++)
		assert_int_equal(b->spread[m].outlier, -1);
	assert_int_equal(b->spread[REPORT_PEAK].median, 4 * MiB);
	assert_int_equal(b->spread[REPORT_LEAKED].max, 0);
	merge_clear(&r);
	rd_process_list_clear(&list);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_load_process),
		cmocka_unit_test(test_load_run_dir),
		cmocka_unit_test(test_merge_run),
		cmocka_unit_test(test_merge_process),
		cmocka_unit_test(test_merge_overflow),
		cmocka_unit_test(test_bad_file),
		cmocka_unit_test(test_site_key),
		cmocka_unit_test(test_site_key_python),
		cmocka_unit_test(test_classify_noise),
		cmocka_unit_test(test_classify_pool),
		cmocka_unit_test(test_classify_user_file),
		cmocka_unit_test(test_load_python),
		cmocka_unit_test(test_merge_python),
		cmocka_unit_test(test_merge_pools),
		cmocka_unit_test(test_library_no_frames),
		cmocka_unit_test(test_load_oom),
		cmocka_unit_test(test_merge_oom),
		cmocka_unit_test(test_oom_files),
		cmocka_unit_test(test_load_growth),
		cmocka_unit_test(test_snapshot_fallback),
		cmocka_unit_test(test_human_size),
		cmocka_unit_test(test_demangle),
		cmocka_unit_test(test_normalize),
		cmocka_unit_test(test_sanitize),
		cmocka_unit_test(test_symbolize_self),
		cmocka_unit_test(test_merge_lines),
		cmocka_unit_test(test_spread),
		cmocka_unit_test(test_merge_spread),
		cmocka_unit_test(test_merge_ranks),
	};
	const char *dir = getenv("GPUSPY_FIXTURES");

	if (!dir) {
		fprintf(stderr, "GPUSPY_FIXTURES is not set\n");
		return 1;
	}
	snprintf(fixtures, sizeof(fixtures), "%s", dir);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
