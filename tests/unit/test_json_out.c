/* SPDX-License-Identifier: MIT */
/*
 * json_out.c's strings: command lines, paths and symbols are bytes, not
 * always UTF-8, and every file must stay valid JSON.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "json_out.h"

static void check(const char *in, const char *want)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	json_str(f, in);
	assert_int_equal(fclose(f), 0);
	if (strcmp(buf, want) != 0)
		fail_msg("got %s, want %s", buf, want);
	free(buf);
}

static void test_plain(void **state)
{
	(void)state;
	check("", "\"\"");
	check(NULL, "\"\"");
	check("/usr/bin/python3 train.py", "\"/usr/bin/python3 train.py\"");
}

static void test_quotes_and_backslashes(void **state)
{
	(void)state;
	check("say \"hi\"", "\"say \\\"hi\\\"\"");
	check("C:\\dir\\", "\"C:\\\\dir\\\\\"");
	check("/", "\"/\""); /* solidus needs no escape */
}

static void test_control_characters(void **state)
{
	(void)state;
	check("a\nb\tc\r", "\"a\\u000ab\\u0009c\\u000d\"");
	check("\x01\x1f", "\"\\u0001\\u001f\"");
	check("\x7f", "\"\x7f\""); /* DEL is not a control character in JSON */
}

static void test_valid_utf8_passes(void **state)
{
	(void)state;
	check("caf\xc3\xa9", "\"caf\xc3\xa9\"");	   /* U+00E9 */
	check("\xe2\x82\xac", "\"\xe2\x82\xac\"");	   /* U+20AC */
	check("\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\""); /* U+1F600 */
	check("\xf4\x8f\xbf\xbf", "\"\xf4\x8f\xbf\xbf\""); /* U+10FFFF, the last */
	check("\xed\x9f\xbf", "\"\xed\x9f\xbf\"");	   /* U+D7FF, before the surrogates */
}

/* Each byte that starts no valid sequence becomes one U+FFFD. */
static void test_invalid_utf8_replaced(void **state)
{
	(void)state;
	check("\x80", "\"\\ufffd\"");			    /* a lone continuation byte */
	check("a\xffz", "\"a\\ufffdz\"");		    /* never valid */
	check("\xc0\x80", "\"\\ufffd\\ufffd\"");	    /* overlong NUL */
	check("\xc1\xbf", "\"\\ufffd\\ufffd\"");	    /* overlong */
	check("\xe0\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\""); /* overlong '/' */
	check("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\""); /* a surrogate, U+D800 */
	check("\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\""); /* past U+10FFFF */
	check("\xf5\x80\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
	check("\xe2\x82", "\"\\ufffd\\ufffd\"");      /* cut short at the end */
	check("\xe2\x82z", "\"\\ufffd\\ufffdz\"");    /* cut short by ASCII */
	check("\xc3\xa9\xc3", "\"\xc3\xa9\\ufffd\""); /* valid, then cut short */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain),
		cmocka_unit_test(test_quotes_and_backslashes),
		cmocka_unit_test(test_control_characters),
		cmocka_unit_test(test_valid_utf8_passes),
		cmocka_unit_test(test_invalid_utf8_replaced),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
