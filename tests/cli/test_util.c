/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of gpuspy_read, util.c: sizes for people, path
 * normalization, control characters.
 */
#include "read_test.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_human_size),
		cmocka_unit_test(test_normalize),
		cmocka_unit_test(test_sanitize),
	};

	if (read_test_init() < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
