/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of gpuspy_read, merge.c: merging the fixtures into the
 * numbers worked out by hand in fixtures/README.md, site keys, Python
 * frame placement, headlines, library labels, framework pools,
 * out-of-memory events, and processes side by side: spreads, outliers and
 * ranks.
 */
#include "read_test.h"

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

static const struct rd_report_site *oom_top(const struct rd_report_oom *ro, size_t i)
{
	assert_true(i < ro->ntop);
	return ro->top[i];
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
	assert_non_null(strstr(r.sites[0]->frames[0].file, "test_merge.c"));
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
		cmocka_unit_test(test_merge_run),	cmocka_unit_test(test_merge_process),
		cmocka_unit_test(test_merge_overflow),	cmocka_unit_test(test_site_key),
		cmocka_unit_test(test_site_key_python), cmocka_unit_test(test_merge_python),
		cmocka_unit_test(test_merge_pools),	cmocka_unit_test(test_library_no_frames),
		cmocka_unit_test(test_merge_oom),	cmocka_unit_test(test_merge_lines),
		cmocka_unit_test(test_spread),		cmocka_unit_test(test_merge_spread),
		cmocka_unit_test(test_merge_ranks),
	};

	if (read_test_init() < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
