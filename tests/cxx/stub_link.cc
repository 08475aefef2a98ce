/* SPDX-License-Identifier: MIT */
/*
 * A C++ program that calls the public API of <gpuspy.h> and links
 * libgpuspy_stub.so, as include/gpuspy.h tells users to do.  Without
 * extern "C" in the header it does not link: the calls name mangled
 * symbols that neither library defines.
 *
 *   stub_link                          the stub answers: mark 0, snapshot -1
 *   stub_link --preload LIB --fake-dir DIR
 *       runs itself again with LD_PRELOAD=LIB and the fake driver of DIR
 *       on LD_LIBRARY_PATH, in a fresh GPUSPY_OUTPUT_DIR: the preloaded
 *       library answers, and after an allocation its snapshot is written
 *       (0), which the stub never does.
 */
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gpuspy.h>

namespace
{

constexpr int fail = 99;

/* The few driver calls needed for one allocation, reached as JAX does
 * (dlopen + dlsym), so that this program needs no CUDA header. */
using cu_init_fn = int (*)(unsigned int);
using cu_device_get_fn = int (*)(int *, int);
using cu_ctx_retain_fn = int (*)(void **, int);
using cu_ctx_set_fn = int (*)(void *);
using cu_mem_alloc_fn = int (*)(unsigned long long *, size_t);
using cu_mem_free_fn = int (*)(unsigned long long);

template <typename F> F driver_sym(void *h, const char *name)
{
	void *p = dlsym(h, name);

	if (!p) {
		std::fprintf(stderr, "stub_link: dlsym %s: %s\n", name, dlerror());
		std::exit(fail);
	}
	return reinterpret_cast<F>(p);
}

void cu_ok(int r, const char *what)
{
	if (r != 0) {
		std::fprintf(stderr, "stub_link: %s failed: %d\n", what, r);
		std::exit(fail);
	}
}

int expect(const char *what, int got, int want)
{
	std::printf("stub_link: %s returned %d\n", what, got);
	if (got == want)
		return 0;
	std::fprintf(stderr, "stub_link: %s returned %d, expected %d\n", what, got, want);
	return 1;
}

/* With the stub only: nothing is recorded, nothing is written. */
int run_stub()
{
	int bad = 0;

	bad += expect("gpuspy_mark", gpuspy_mark("c++ phase"), 0);
	bad += expect("gpuspy_snapshot", gpuspy_snapshot("c++ snapshot"), -1);
	return bad ? 1 : 0;
}

/* Under LD_PRELOAD=libgpuspy.so, with one live allocation. */
int run_preloaded()
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	unsigned long long dptr;
	void *ctx;
	int dev, bad = 0;

	if (!h) {
		std::fprintf(stderr, "stub_link: dlopen libcuda.so.1: %s\n", dlerror());
		return fail;
	}
	cu_ok(driver_sym<cu_init_fn>(h, "cuInit")(0), "cuInit");
	cu_ok(driver_sym<cu_device_get_fn>(h, "cuDeviceGet")(&dev, 0), "cuDeviceGet");
	cu_ok(driver_sym<cu_ctx_retain_fn>(h, "cuDevicePrimaryCtxRetain")(&ctx, dev),
	      "cuDevicePrimaryCtxRetain");
	cu_ok(driver_sym<cu_ctx_set_fn>(h, "cuCtxSetCurrent")(ctx), "cuCtxSetCurrent");
	cu_ok(driver_sym<cu_mem_alloc_fn>(h, "cuMemAlloc_v2")(&dptr, 1 << 20), "cuMemAlloc_v2");

	bad += expect("gpuspy_mark", gpuspy_mark("c++ phase"), 0);
	bad += expect("gpuspy_snapshot", gpuspy_snapshot("c++ snapshot"), 0);

	cu_ok(driver_sym<cu_mem_free_fn>(h, "cuMemFree_v2")(dptr), "cuMemFree_v2");
	return bad ? 1 : 0;
}

/* Runs this program again under gpuspy and checks that a snapshot file
 * was written; the output directory is removed afterwards. */
int run_parent(const char *lib, const char *fake_dir)
{
	char tmpl[] = "/tmp/gpuspy-cxx-XXXXXX";
	const char *out = mkdtemp(tmpl);
	int status, bad = 0;
	bool snapshot = false;
	pid_t pid;

	if (!out) {
		std::fprintf(stderr, "stub_link: mkdtemp: %s\n", std::strerror(errno));
		return fail;
	}
	pid = fork();
	if (pid < 0) {
		std::fprintf(stderr, "stub_link: fork: %s\n", std::strerror(errno));
		return fail;
	}
	if (pid == 0) {
		/* A sanitizer's runtime must come first (scripts/sanitize). */
		const char *first = std::getenv("SANITIZER_PRELOAD");
		std::string preload = first && *first ? std::string(first) + ":" + lib : lib;

		setenv("LD_PRELOAD", preload.c_str(), 1);
		setenv("LD_LIBRARY_PATH", fake_dir, 1);
		setenv("GPUSPY_OUTPUT_DIR", out, 1);
		execl("/proc/self/exe", "stub_link", "--child", static_cast<char *>(nullptr));
		std::fprintf(stderr, "stub_link: exec: %s\n", std::strerror(errno));
		_exit(fail);
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		std::fprintf(stderr, "stub_link: the preloaded run failed (status %#x)\n", status);
		bad = 1;
	}

	std::error_code ec;
	for (const auto &e : std::filesystem::recursive_directory_iterator(out, ec)) {
		if (e.path().filename().string().rfind("snapshot-", 0) == 0)
			snapshot = true;
	}
	if (!snapshot) {
		std::fprintf(stderr, "stub_link: no snapshot file under %s\n", out);
		bad = 1;
	} else {
		std::filesystem::remove_all(out, ec);
	}
	return bad;
}

} // namespace

int main(int argc, char **argv)
{
	if (argc == 1)
		return run_stub();
	if (argc == 2 && std::strcmp(argv[1], "--child") == 0)
		return run_preloaded();
	if (argc == 5 && std::strcmp(argv[1], "--preload") == 0 &&
	    std::strcmp(argv[3], "--fake-dir") == 0)
		return run_parent(argv[2], argv[4]);
	std::fprintf(stderr, "usage: %s [--preload LIB --fake-dir DIR]\n", argv[0]);
	return 2;
}
