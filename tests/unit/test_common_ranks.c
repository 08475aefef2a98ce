/* SPDX-License-Identifier: MIT */
/*
 * The device a rank owns (src/common/ranks.c): a table of environments and
 * device counts, each with the device the rule gives, and the parsing and
 * context figures beside it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "ranks.h"

static void test_own_device(void **state)
{
	static const struct {
		int64_t rank, local_rank, ndevices;
		int own;
	} cases[] = {
		/* torchrun on one node of two GPUs */
		{ 0, 0, 2, 0 },
		{ 1, 1, 2, 1 },
		/* the second node of two: LOCAL_RANK decides, not RANK */
		{ 2, 0, 2, 0 },
		{ 3, 1, 2, 1 },
		{ 5, 1, 8, 1 },
		/* no LOCAL_RANK: RANK mod the devices */
		{ 3, -1, 2, 1 },
		{ 6, -1, 4, 2 },
		/* more ranks per node than devices: RANK mod the devices */
		{ 5, 5, 4, 1 },
		{ 4, 4, 4, 0 },
		/* one device (CUDA_VISIBLE_DEVICES per rank), none: no verdict */
		{ 1, 1, 1, -1 },
		{ 0, 0, 1, -1 },
		{ 1, 1, 0, -1 },
		/* no rank at all */
		{ -1, -1, 2, -1 },
		/* LOCAL_RANK alone */
		{ -1, 1, 2, 1 },
		{ -1, 3, 2, -1 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int got = ranks_own_device(cases[i].rank, cases[i].local_rank, cases[i].ndevices);

		if (got != cases[i].own)
			fail_msg("RANK %lld LOCAL_RANK %lld of %lld devices: device %d, not %d",
				 (long long)cases[i].rank, (long long)cases[i].local_rank,
				 (long long)cases[i].ndevices, got, cases[i].own);
	}
}

static void test_parse(void **state)
{
	(void)state;
	assert_int_equal(ranks_parse("0"), 0);
	assert_int_equal(ranks_parse("17"), 17);
	assert_int_equal(ranks_parse("999999999"), 999999999);
	assert_int_equal(ranks_parse("1000000000"), -1);
	assert_int_equal(ranks_parse(""), -1);
	assert_int_equal(ranks_parse(NULL), -1);
	assert_int_equal(ranks_parse("-1"), -1);
	assert_int_equal(ranks_parse("1 "), -1);
	assert_int_equal(ranks_parse("0x1"), -1);
}

static void test_context(void **state)
{
	(void)state;
	/* NVML's figure beyond the tracked allocations */
	assert_int_equal(ranks_context_bytes(512LL << 20, 1024LL << 20), 512LL << 20);
	assert_int_equal(ranks_context_bytes(0, 300LL << 20), 300LL << 20);
	/* NVML unknown, or saying less than gpuspy tracked (sampled apart) */
	assert_int_equal(ranks_context_bytes(512LL << 20, -1), 0);
	assert_int_equal(ranks_context_bytes(512LL << 20, 500LL << 20), 0);
	assert_int_equal(ranks_context_bytes(7, 7), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_own_device),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_context),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
