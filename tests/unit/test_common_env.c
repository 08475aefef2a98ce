/* SPDX-License-Identifier: MIT */
/*
 * The GPUSPY_* parsers both sides use (src/common/env.c): every syntax
 * GPUSPY_INTERVAL and GPUSPY_SIGNAL accept, and some they refuse.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "env.h"

static void test_output_dir(void **state)
{
	assert_string_equal(env_output_dir(NULL), "gpuspy-out");
	assert_string_equal(env_output_dir(""), "gpuspy-out");
	assert_string_equal(env_output_dir("runs/a"), "runs/a");
	assert_string_equal(env_output_dir("/abs"), "/abs");
}

static const struct {
	const char *v;
	int ret;
	unsigned long long us;
} intervals[] = {
	{ NULL, 0, 1000000 },
	{ "", 0, 1000000 },
	{ "0", 0, 0 },
	{ "0s", 0, 0 },
	{ "0ms", 0, 0 },
	{ "-0", 0, 0 }, /* strtod's -0.0 is not below 0 */
	{ "1", 0, 1000000 },
	{ "1s", 0, 1000000 },
	{ "2.5", 0, 2500000 },
	{ ".5s", 0, 500000 },
	{ "100ms", 0, 100000 },
	{ "1.5ms", 0, 1500 },
	{ "500us", 0, 500 },
	{ "100us", 0, 100 },
	{ "99us", 0, 100 }, /* a positive interval below 100 us is 100 us */
	{ "1us", 0, 100 },
	{ "0.5us", 0, 100 },
	{ "0.00001", 0, 100 },
	{ "150.9us", 0, 150 }, /* truncated to whole microseconds */
	{ "1e3ms", 0, 1000000 },
	{ "1E-3", 0, 1000 },
	{ "0x10", 0, 16000000 }, /* strtod reads hexadecimal too */
	{ " 1s", 0, 1000000 },	 /* and skips leading space */
	{ "+2s", 0, 2000000 },
	{ "3600", 0, 3600000000ULL },
	/* refused: the value is then the default */
	{ "s", -EINVAL, 1000000 },
	{ "ms", -EINVAL, 1000000 },
	{ "-1", -EINVAL, 1000000 },
	{ "-1ms", -EINVAL, 1000000 },
	{ "1m", -EINVAL, 1000000 },
	{ "1min", -EINVAL, 1000000 },
	{ "1h", -EINVAL, 1000000 },
	{ "1S", -EINVAL, 1000000 },
	{ "1MS", -EINVAL, 1000000 },
	{ "1ns", -EINVAL, 1000000 },
	{ "1 s", -EINVAL, 1000000 },
	{ "1s ", -EINVAL, 1000000 },
	{ "1ss", -EINVAL, 1000000 },
	{ "1,5s", -EINVAL, 1000000 },
	{ "off", -EINVAL, 1000000 },
	{ "fast", -EINVAL, 1000000 },
	{ " ", -EINVAL, 1000000 },
};

static void test_interval(void **state)
{
	for (size_t i = 0; i < sizeof(intervals) / sizeof(intervals[0]); i++) {
		unsigned long long us = 42;
		int r = env_interval(intervals[i].v, &us);

		if (r != intervals[i].ret || us != intervals[i].us)
			fail_msg("GPUSPY_INTERVAL=%s: %d, %llu us; expected %d, %llu us",
				 intervals[i].v ? intervals[i].v : "(unset)", r, us,
				 intervals[i].ret, intervals[i].us);
	}
}

/* Accepted as strtod reads them, although no duration: kept as they are
 * until the parser is made strict. */
static void test_interval_lenient(void **state)
{
	unsigned long long us;

	assert_int_equal(env_interval("inf", &us), 0);
	assert_int_equal(env_interval("nan", &us), 0);
	assert_int_equal(env_interval("infinity ms", &us), -EINVAL);
}

static const struct {
	const char *v;
	int sig;
} signals[] = {
	{ NULL, SIGUSR2 },
	{ "", SIGUSR2 },
	{ "off", 0 },
	{ "0", 0 },
	{ "SIGUSR1", SIGUSR1 },
	{ "USR1", SIGUSR1 },
	{ "SIGUSR2", SIGUSR2 },
	{ "USR2", SIGUSR2 },
	{ "10", 10 },
	{ "1", 1 },
	{ "64", 64 },
	{ "012", 12 }, /* decimal, leading zeros and all */
	{ "+12", 12 },
	{ " 12", 12 },
	/* refused */
	{ "OFF", -EINVAL },
	{ "Off", -EINVAL },
	{ "no", -EINVAL },
	{ "00", -EINVAL },
	{ "-0", -EINVAL },
	{ "usr1", -EINVAL },
	{ "sigusr2", -EINVAL },
	{ "SIG", -EINVAL },
	{ "SIGUSR3", -EINVAL },
	{ "SIGINT", -EINVAL },
	{ "INT", -EINVAL },
	{ "SIGUSR1 ", -EINVAL },
	{ "-1", -EINVAL },
	{ "65", -EINVAL },
	{ "1000", -EINVAL },
	{ "99999999999999999999", -EINVAL },
	{ "0x10", -EINVAL },
	{ "12 ", -EINVAL },
	{ "12abc", -EINVAL },
	{ "abc", -EINVAL },
};

static void test_signal(void **state)
{
	/* glibc's NSIG; the vectors above assume it */
	assert_int_equal(NSIG, 65);
	for (size_t i = 0; i < sizeof(signals) / sizeof(signals[0]); i++) {
		int sig = env_signal(signals[i].v);

		if (sig != signals[i].sig)
			fail_msg("GPUSPY_SIGNAL=%s: %d, expected %d",
				 signals[i].v ? signals[i].v : "(unset)", sig, signals[i].sig);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_output_dir),
		cmocka_unit_test(test_interval),
		cmocka_unit_test(test_interval_lenient),
		cmocka_unit_test(test_signal),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
