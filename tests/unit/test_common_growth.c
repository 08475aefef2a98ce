/* SPDX-License-Identifier: MIT */
/*
 * The growth rule (src/common/growth.c) on a table of series: at which
 * sample each is first found growing (the flag the library then keeps),
 * whether the rule still holds at the last sample, and that the
 * incremental state and the array form agree at every sample.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "growth.h"

#define MIB (1LL << 20)

/* The series: live bytes at sample I (from 0). */
static long long steady(size_t i)
{
	return 1000 * (long long)(i + 1);
}

static long long appears_at_100(size_t i)
{
	return i < 99 ? 0 : 4096 * (long long)(i - 98);
}

static long long flat(size_t i)
{
	return MIB;
}

static long long never_allocates(size_t i)
{
	return 0;
}

static long long sawtooth(size_t i)
{
	return (long long)(i % 10 + 1) * 100;
}

static long long warmup_12_plateau(size_t i)
{
	return (long long)(i < 12 ? i + 1 : 12) * 1000;
}

static long long warmup_40_plateau(size_t i)
{
	return (long long)(i < 40 ? i + 1 : 40) * 1000;
}

static long long one_big(size_t i)
{
	return i < 3 ? 0 : 1LL << 30;
}

/* grows a MiB every 8 samples up to 8 MiB, then stays */
static long long pool_bound(size_t i)
{
	return (long long)(i / 8 + 1 < 8 ? i / 8 + 1 : 8) * MIB;
}

/* a byte more in 3 samples of 4: exactly three quarters of new highs */
static long long drift_3_of_4(size_t i)
{
	return 1000 + (long long)(i - i / 4);
}

/* a byte more in 2 samples of 3: too few new highs */
static long long drift_2_of_3(size_t i)
{
	return 1000 + (long long)(i - i / 3);
}

/* flat, then growing every sample: the window has widened meanwhile */
static long long late_growth_200(size_t i)
{
	return i < 200 ? 5000 : 5000 + (long long)(i - 199);
}

/* the same after 1000 samples: the window is at its widest, 256 */
static long long late_growth_1000(size_t i)
{
	return i < 1000 ? 5000 : 5000 + (long long)(i - 999);
}

/* grows, drops to 0 at the 16th sample (ends lower than it began), grows on */
static long long drop_at_16(size_t i)
{
	return i < 15 ? (long long)i + 1 : i == 15 ? 0 : (long long)i;
}

/* +10, -3, +10, -3...: a leak with frees between, half the samples new highs */
static long long jitter_leak(size_t i)
{
	return 1000 + 10 * (long long)(i / 2 + 1) - (i % 2 ? 3 : 0);
}

static const struct vector {
	const char *name;
	long long (*live)(size_t i);
	size_t n;
	size_t first; /* sample (from 1) first found growing, 0: never */
	bool last;    /* the rule at the last sample */
} vectors[] = {
	{ "steady per-sample growth", steady, 64, 16, true },
	{ "appears at sample 100, then grows", appears_at_100, 299, 115, true },
	{ "flat", flat, 300, 0, false },
	{ "never allocates", never_allocates, 300, 0, false },
	{ "sawtooth alloc/free", sawtooth, 300, 0, false },
	{ "warm-up of 12 samples, then plateau", warmup_12_plateau, 300, 0, false },
	{ "warm-up of 40 samples, then plateau", warmup_40_plateau, 300, 16, false },
	{ "one big allocation", one_big, 300, 0, false },
	{ "pool grows to a bound and stays", pool_bound, 300, 0, false },
	{ "slow drift, 3 samples of 4", drift_3_of_4, 300, 16, true },
	{ "slow drift, 2 samples of 3", drift_2_of_3, 300, 0, false },
	{ "flat for 200 samples, then grows", late_growth_200, 500, 320, true },
	{ "flat for 1000 samples, then grows", late_growth_1000, 1300, 1192, true },
	{ "drop at the end of the first window", drop_at_16, 36, 17, true },
	{ "leak with frees between", jitter_leak, 300, 0, false },
};

/* Both forms, at every sample of LIVE; the first sample found growing. */
static size_t judge_all(const long long *live, size_t n, const char *name)
{
	struct gs_growth *g = malloc(sizeof(*g));
	size_t first = 0;

	assert_non_null(g);
	growth_init(g);
	for (size_t i = 0; i < n; i++) {
		bool inc, arr;

		growth_push(g, live[i]);
		inc = growth_judge(g);
		arr = growth_series(live, i + 1);
		if (inc != arr)
			fail_msg("%s: sample %zu: incremental %d, array %d", name, i + 1, inc, arr);
		if (inc && !first)
			first = i + 1;
	}
	free(g);
	return first;
}

static void test_vectors(void **state)
{
	for (size_t v = 0; v < sizeof(vectors) / sizeof(vectors[0]); v++) {
		const struct vector *t = &vectors[v];
		long long *live = malloc(t->n * sizeof(*live));
		size_t first;

		assert_non_null(live);
		for (size_t i = 0; i < t->n; i++)
			live[i] = t->live(i);
		first = judge_all(live, t->n, t->name);
		if (first != t->first)
			fail_msg("%s: first found growing at sample %zu, expected %zu", t->name,
				 first, t->first);
		if (growth_series(live, t->n) != t->last)
			fail_msg("%s: at the last sample %d, expected %d", t->name, !t->last,
				 t->last);
		free(live);
	}
}

/* A fresh state, zeroed as calloc leaves it, judges like growth_init's. */
static void test_zero_state(void **state)
{
	struct gs_growth *a = calloc(1, sizeof(*a)), *b = malloc(sizeof(*b));

	assert_non_null(a);
	assert_non_null(b);
	growth_init(b);
	assert_false(growth_judge(a));
	assert_false(growth_judge(b));
	for (long long i = 1; i <= 16; i++) {
		growth_push(a, i);
		growth_push(b, i);
	}
	assert_true(growth_judge(a));
	assert_true(growth_judge(b));
	assert_false(growth_series(NULL, 0));
	free(a);
	free(b);
}

/* Random walks, some with negative samples: the two forms never differ. */
static void test_random_agree(void **state)
{
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	long long live[700];

	for (int s = 0; s < 60; s++) {
		long long x = 0;
		int up = 40 + s; /* per cent of steps that grow */

		for (size_t i = 0; i < sizeof(live) / sizeof(live[0]); i++) {
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			x += (int)(seed >> 33) % 100 < up ? (long long)(seed >> 50) % 4096 :
							    -(long long)((seed >> 40) % 4096);
			live[i] = x;
		}
		judge_all(live, sizeof(live) / sizeof(live[0]), "random walk");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors),
		cmocka_unit_test(test_zero_state),
		cmocka_unit_test(test_random_agree),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
