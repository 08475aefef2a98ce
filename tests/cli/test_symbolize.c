/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of gpuspy_read, symbolize.c: demangling, and symbolizing an
 * address of this very program.
 */
#include "read_test.h"

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

static void test_symbolize_self(void **state)
{
	struct symbolizer *s;
	struct sym_module *m;
	struct sym_info info;
	struct link_map *lm;
	Dl_info dli;
	char exe[PATH_MAX];
	void *ra = return_address();
	int line = __LINE__ - 1; /* the line of the call above */
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
	assert_non_null(strstr(info.file, "test_symbolize.c"));
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_demangle),
		cmocka_unit_test(test_symbolize_self),
	};

	if (read_test_init() < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
