/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of gpuspy_read: loading the fixtures, merging them into the
 * numbers worked out by hand in fixtures/README.md, site keys, sizes,
 * demangling, and symbolizing an address of this very program.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "read.h"

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
	struct gs_process_list list = { 0 };
	struct gs_error err = { "" };
	struct gs_process *p;

	assert_int_equal(load_path(&list, fixture("process/node7-4242"), &err), 0);
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
	assert_int_equal(p->kinds[GS_KIND_PINNED].live_bytes, MiB);
	assert_int_equal(p->kinds[GS_KIND_DEVICE].frees, 4);
	assert_int_equal(p->untracked_frees, 1);
	assert_int_equal(p->nmodules, 2);
	assert_string_equal(p->modules[0].build_id, "5f0c9a11d00dfeed");
	assert_string_equal(p->modules[1].build_id, "");
	assert_int_equal(p->nsites, 4);
	assert_int_equal(p->sites[0].kind, GS_KIND_DEVICE);
	assert_string_equal(p->sites[0].api, "cuMemAlloc_v2");
	assert_int_equal(p->sites[0].nframes, 3);
	assert_int_equal(p->sites[0].frames[0].offset, 4660);
	assert_string_equal(p->sites[0].frames[0].symbol, "leak_driver");
	assert_int_equal(p->sites[2].kind, GS_KIND_PINNED);
	assert_int_equal(p->sites[3].frames[0].module, -1);
	assert_null(p->sites[3].frames[1].symbol);
	process_list_clear(&list);
}

static void test_load_run_dir(void **state)
{
	struct gs_process_list list = { 0 };
	struct gs_error err = { "" };

	assert_int_equal(load_path(&list, fixture("run"), &err), 0);
	/* node7-102 has no report.json: skipped, not an error */
	assert_int_equal(list.n, 2);
	assert_int_equal(list.items[0]->pid, 100);
	assert_int_equal(list.items[1]->pid, 101);
	assert_false(list.items[1]->complete);
	assert_non_null(strstr(list.items[0]->path, "run/node7-100"));

	/* the same report named again, as a process directory and as a
	 * file, is counted once */
	assert_int_equal(load_path(&list, fixture("run/node7-101"), &err), 0);
	assert_int_equal(load_path(&list, fixture("run/node7-100/report.json"), &err), 0);
	assert_int_equal(list.n, 2);
	process_list_clear(&list);
}

static void test_merge_run(void **state)
{
	struct gs_process_list list = { 0 };
	struct gs_error err = { "" };
	struct symbolizer *sym;
	struct report r;
	const struct report_site *x, *z, *y;

	assert_int_equal(load_path(&list, fixture("run"), &err), 0);
	assert_int_equal(symbolizer_new(&sym), 0);
	assert_int_equal(report_build(&r, &list, sym, &err), 0);

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

	report_clear(&r);
	symbolizer_free(sym);
	process_list_clear(&list);
}

static void test_merge_process(void **state)
{
	struct gs_process_list list = { 0 };
	struct gs_error err = { "" };
	struct report r;
	const struct report_site *pinned = NULL, *managed = NULL;

	assert_int_equal(load_path(&list, fixture("process"), &err), 0);
	assert_int_equal(list.n, 1);
	/* no symbolizer: names come from the report alone */
	assert_int_equal(report_build(&r, &list, NULL, &err), 0);
	assert_int_equal(r.pinned_leaked_bytes, MiB);
	assert_int_equal(r.pinned_leaked_allocations, 1);
	assert_int_equal(r.pinned_peak_bytes, MiB);
	assert_int_equal(r.nsites, 4);
	for (size_t i = 0; i < r.nsites; i++) {
		if (r.sites[i]->kind == GS_KIND_PINNED)
			pinned = r.sites[i];
		if (r.sites[i]->kind == GS_KIND_MANAGED)
			managed = r.sites[i];
	}
	assert_non_null(pinned);
	assert_non_null(managed);
	/* the process's own symbol is mangled; the report's is not */
	assert_string_equal(pinned->frames[0].function, "leaky::alloc_pinned(unsigned long)");
	/* outside any module: no address in the key; unnamed: module+offset */
	assert_string_equal(managed->key, "cudaMallocManaged|?;leaky+0x1450");
	assert_null(managed->frames[0].module);
	report_clear(&r);
	process_list_clear(&list);
}

static struct gs_process *fake_process(int64_t untracked)
{
	struct gs_process *p = calloc(1, sizeof(*p));

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
	struct gs_process *items[2] = { fake_process(INT64_MAX), fake_process(1) };
	struct gs_process_list list = { .items = items, .n = 2, .cap = 2 };
	struct gs_error err = { "" };
	struct report r;

	assert_int_equal(report_build(&r, &list, NULL, &err), -EOVERFLOW);
	assert_non_null(strstr(err.msg, "fake/report.json"));
	process_free(items[0]);
	process_free(items[1]);
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
		struct gs_error err = { "" };
		struct gs_process *p = NULL;
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
	struct report_frame frames[3] = {
		{ .function = "f", .module = "liba.so", .offset = 0x10 },
		{ .module = "b", .offset = 0x1234 },
		{ .offset = 0x7fff0000 },
	};
	char *key = report_site_key("cudaMalloc", frames, 3);

	assert_string_equal(key, "cudaMalloc|liba.so!f;b+0x1234;?");
	free(key);
	key = report_site_key("cudaMalloc", frames, 0);
	assert_string_equal(key, "cudaMalloc|");
	free(key);
}

static void test_human_size(void **state)
{
	char buf[32];

	assert_string_equal(report_human_size(0, buf, sizeof(buf)), "0 B");
	assert_string_equal(report_human_size(1023, buf, sizeof(buf)), "1023 B");
	assert_string_equal(report_human_size(1024, buf, sizeof(buf)), "1.0 KiB");
	assert_string_equal(report_human_size(3 * MiB / 2, buf, sizeof(buf)), "1.5 MiB");
	assert_string_equal(report_human_size(MiB - 1, buf, sizeof(buf)), "1.0 MiB");
	assert_string_equal(report_human_size(5LL << 30, buf, sizeof(buf)), "5.0 GiB");
	assert_string_equal(report_human_size(INT64_MAX, buf, sizeof(buf)), "8.0 EiB");
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
	char s[] = "a\nb\x1b[1m\xc2\x9b" "c\xc3\xa9";

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
	void *ra = return_address(); int line = __LINE__;
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
	struct gs_process *p = fake_process(0);
	struct gs_process_list list = { .items = &p, .n = 1, .cap = 1 };
	struct gs_error err = { "" };
	struct symbolizer *sym;
	struct link_map *lm;
	struct report r;
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
		struct gs_site *s = &p->sites[i];

		s->kind = GS_KIND_DEVICE;
		s->api = strdup("cudaMalloc");
		s->c.allocations = s->c.allocated_bytes = 1;
		s->frames = calloc(1, sizeof(*s->frames));
		s->nframes = 1;
		s->frames[0].offset = (uintptr_t)(i ? ra2 : ra1) - lm->l_addr;
	}
	assert_int_equal(symbolizer_new(&sym), 0);
	assert_int_equal(report_build(&r, &list, sym, &err), 0);
	assert_int_equal(r.nsites, 1);
	assert_int_equal(r.sites[0]->c.allocations, 2);
	assert_int_equal(r.sites[0]->processes, 1);
	assert_string_equal(r.sites[0]->frames[0].function, "test_merge_lines");
	assert_non_null(strstr(r.sites[0]->frames[0].file, "test_read.c"));
	assert_int_equal(r.sites[0]->frames[0].line, 0);
	report_clear(&r);
	symbolizer_free(sym);
	process_free(p);
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
		cmocka_unit_test(test_human_size),
		cmocka_unit_test(test_demangle),
		cmocka_unit_test(test_normalize),
		cmocka_unit_test(test_sanitize),
		cmocka_unit_test(test_symbolize_self),
		cmocka_unit_test(test_merge_lines),
	};
	const char *dir = getenv("GPUSPY_FIXTURES");

	if (!dir) {
		fprintf(stderr, "GPUSPY_FIXTURES is not set\n");
		return 1;
	}
	snprintf(fixtures, sizeof(fixtures), "%s", dir);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
