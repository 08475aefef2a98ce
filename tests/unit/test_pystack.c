/* SPDX-License-Identifier: MIT */
/*
 * pystack.c's line-table decoders, on tables written by hand from PEP 657
 * (3.11+) and PEP 626 (3.10).  Reading frames needs a live interpreter;
 * turning a byte offset into a line does not.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "pystack.h"

/*
 * Entry byte: 1, code (4 bits), code units - 1 (3 bits); each unit is two
 * bytes of bytecode.  Line deltas are zigzag varints in 6-bit chunks.
 */
static const unsigned char locations[] = {
	0xe8, 0x04,		      /* [0,2)   13 no columns, +2 -> 12 */
	0xd1, 0x01, 0x05,	      /* [2,6)   10 one line, +0, columns -> 12 */
	0xd8, 0x00, 0x03,	      /* [6,8)   11 one line, +1 -> 13 */
	0xf8,			      /* [8,10)  15 no location -> -1 */
	0xf0, 0x07, 0x00, 0x01, 0x02, /* [10,12) 14 long form, -3 -> 10 */
	0x80, 0x12,		      /* [12,14) 0 short form, same line -> 10 */
	0xe8, 0x48, 0x03,	      /* [14,16) 13, +100 in two chunks -> 110 */
};

static void test_locations_table(void **state)
{
	static const struct {
		long addr;
		int line;
	} want[] = {
		{ 0, 12 },   { 1, 12 },	  { 2, 12 },  { 5, 12 },    { 6, 13 },
		{ 8, -1 },   { 9, -1 },	  { 10, 10 }, { 11, 10 },   { 12, 10 },
		{ 14, 110 }, { 15, 110 }, { 16, -1 }, { 1000, -1 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		int line = pystack_line_locations(locations, sizeof(locations), 10, want[i].addr);

		if (line != want[i].line)
			fail_msg("offset %ld: line %d, want %d", want[i].addr, line, want[i].line);
	}
}

/* A table cut short inside an entry never reads past its end. */
static void test_locations_truncated(void **state)
{
	static const unsigned char cut[] = { 0xe8, 0x48 }; /* varint's second chunk missing */

	(void)state;
	assert_int_equal(pystack_line_locations(cut, sizeof(cut), 1, 0), 1 + 4);
	assert_int_equal(pystack_line_locations(cut, 0, 1, 0), -1);
}

/* (byte delta, signed line delta); -128: no line. */
static const unsigned char pairs[] = { 4, 0, 2, 3, 2, 0x80, 6, (unsigned char)-2 };

static void test_pairs_table(void **state)
{
	(void)state;
	assert_int_equal(pystack_line_pairs(pairs, sizeof(pairs), 5, 0), 5);
	assert_int_equal(pystack_line_pairs(pairs, sizeof(pairs), 5, 3), 5);
	assert_int_equal(pystack_line_pairs(pairs, sizeof(pairs), 5, 4), 8);
	assert_int_equal(pystack_line_pairs(pairs, sizeof(pairs), 5, 6), -1);
	assert_int_equal(pystack_line_pairs(pairs, sizeof(pairs), 5, 8), 6);
	assert_int_equal(pystack_line_pairs(pairs, sizeof(pairs), 5, 13), 6);
	assert_int_equal(pystack_line_pairs(pairs, sizeof(pairs), 5, 14), -1);
	/* an odd trailing byte is no pair */
	assert_int_equal(pystack_line_pairs(pairs, 3, 5, 4), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_locations_table),
		cmocka_unit_test(test_locations_truncated),
		cmocka_unit_test(test_pairs_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
