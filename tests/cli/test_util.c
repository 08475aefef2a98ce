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

/* Bytes that start no UTF-8 character become '?', characters stay; a cut
 * never splits one. */
static void test_utf8(void **state)
{
	static const struct {
		const char *in, *out;
	} fix[] = {
		{ "plain", "plain" },
		{ "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80" },
		{ "bad\xff\xfe", "bad??" },
		{ "cut\xe2\x82", "cut??" },	   /* a character cut short */
		{ "cut\xe2\x82x", "cut??x" },	   /* ... and ASCII after it */
		{ "over\xc0\xaf", "over??" },	   /* an overlong '/' */
		{ "over\xe0\x80\xaf", "over???" }, /* another */
		{ "sur\xed\xa0\x80", "sur???" },   /* a surrogate */
		{ "big\xf4\x90\x80\x80", "big????" },
		{ "\x80lead", "?lead" },
		{ "c1\xc2\x9b", "c1\xc2\x9b" }, /* valid: a control, util_sanitize's */
	};
	char buf[64];

	(void)state;
	for (size_t i = 0; i < sizeof(fix) / sizeof(fix[0]); i++) {
		snprintf(buf, sizeof(buf), "%s", fix[i].in);
		util_utf8_fix(buf);
		assert_string_equal(buf, fix[i].out);
	}
	/* 2-, 3- and 4-byte characters: every limit ends on a character */
	const char *mixed = "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80z";
	static const int want[] = { 0, 1, 1, 3, 3, 3, 6, 6, 6, 6, 10, 11, 11 };

	for (size_t max = 0; max < sizeof(want) / sizeof(want[0]); max++)
		assert_int_equal(util_utf8_prefix(mixed, max), want[max]);
	/* a byte that starts no character is one */
	assert_int_equal(util_utf8_prefix("\xff\xfe"
					  "ab",
					  3),
			 3);
	assert_int_equal(util_utf8_len((const unsigned char *)"\xf4\x8f\xbf\xbf"), 4);
	assert_int_equal(util_utf8_len((const unsigned char *)""), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_human_size),
		cmocka_unit_test(test_normalize),
		cmocka_unit_test(test_sanitize),
		cmocka_unit_test(test_utf8),
	};

	if (read_test_init() < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
