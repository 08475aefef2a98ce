/* SPDX-License-Identifier: MIT */
/*
 * The GPUSPY_* parsers both sides use (src/common/env.c): every syntax
 * GPUSPY_INTERVAL and GPUSPY_SIGNAL accept, their ranges, and what they
 * refuse: what strtod and strtol would have read (hexadecimal, exponents,
 * infinities, NaN, signs, spaces) included.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

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
	{ "0us", 0, 0 },
	{ "0.0", 0, 0 },
	{ "00", 0, 0 },
	{ ".0ms", 0, 0 },
	{ "1", 0, 1000000 },
	{ "1s", 0, 1000000 },
	{ "01s", 0, 1000000 }, /* no octal in a duration: leading zeros are zeros */
	{ "2.5", 0, 2500000 },
	{ ".5s", 0, 500000 },
	{ "0.5", 0, 500000 },
	{ "100ms", 0, 100000 },
	{ "1.5ms", 0, 1500 },
	{ "500us", 0, 500 },
	{ "100us", 0, 100 },
	{ "0.1ms", 0, 100 },
	{ "0.0001", 0, 100 },
	{ "150.9us", 0, 150 }, /* truncated to whole microseconds */
	{ "100.999999999999us", 0, 100 },
	{ "0.0001234567891s", 0, 123 },
	{ "1000ms", 0, 1000000 },
	{ "3600", 0, 3600000000ULL }, /* the longest: an hour */
	{ "3600s", 0, 3600000000ULL },
	{ "3600000ms", 0, 3600000000ULL },
	{ "3600000000us", 0, 3600000000ULL },
	{ "3600.0000009", 0, 3600000000ULL },
	{ "20ms", 0, 20000 },
	{ "10ms", 0, 10000 },
	/* out of range: the value is then the default */
	{ "99us", -ERANGE, 1000000 },
	{ "99.999us", -ERANGE, 1000000 },
	{ "1us", -ERANGE, 1000000 },
	{ "0.5us", -ERANGE, 1000000 },
	{ "0.00001", -ERANGE, 1000000 },
	{ "0.0000000001", -ERANGE, 1000000 }, /* below a microsecond, yet not 0 */
	{ "3600.000001", -ERANGE, 1000000 },
	{ "3601", -ERANGE, 1000000 },
	{ "3600001ms", -ERANGE, 1000000 },
	{ "86400", -ERANGE, 1000000 },
	{ "1e20us", -EINVAL, 1000000 },
	{ "99999999999999999999", -ERANGE, 1000000 },
	{ "99999999999999999999999999999999999999999999999999us", -ERANGE, 1000000 },
	/* not a decimal duration */
	{ "nan", -EINVAL, 1000000 },
	{ "NaN", -EINVAL, 1000000 },
	{ "inf", -EINVAL, 1000000 },
	{ "infinity", -EINVAL, 1000000 },
	{ "1e99", -EINVAL, 1000000 },
	{ "1e3ms", -EINVAL, 1000000 },
	{ "1E-3", -EINVAL, 1000000 },
	{ "0x10", -EINVAL, 1000000 },
	{ "0X10", -EINVAL, 1000000 },
	{ "-0", -EINVAL, 1000000 },
	{ "-1", -EINVAL, 1000000 },
	{ "-1ms", -EINVAL, 1000000 },
	{ "+2s", -EINVAL, 1000000 },
	{ " 1s", -EINVAL, 1000000 },
	{ "1s ", -EINVAL, 1000000 },
	{ "1 s", -EINVAL, 1000000 },
	{ "s", -EINVAL, 1000000 },
	{ "ms", -EINVAL, 1000000 },
	{ ".", -EINVAL, 1000000 },
	{ ".s", -EINVAL, 1000000 },
	{ "1.", -EINVAL, 1000000 },
	{ "1.s", -EINVAL, 1000000 },
	{ "1..5", -EINVAL, 1000000 },
	{ "1.5.", -EINVAL, 1000000 },
	{ "1m", -EINVAL, 1000000 },
	{ "1min", -EINVAL, 1000000 },
	{ "1h", -EINVAL, 1000000 },
	{ "1S", -EINVAL, 1000000 },
	{ "1MS", -EINVAL, 1000000 },
	{ "1ns", -EINVAL, 1000000 },
	{ "1ss", -EINVAL, 1000000 },
	{ "1,5s", -EINVAL, 1000000 },
	{ "off", -EINVAL, 1000000 },
	{ "fast", -EINVAL, 1000000 },
	{ " ", -EINVAL, 1000000 },
	{ "1\n", -EINVAL, 1000000 },
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

/* glibc's values: the vectors below assume them */
#define RTMIN 34
#define RTMAX 64

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
	{ "10", SIGUSR1 },
	{ "12", SIGUSR2 },
	{ "34", RTMIN },
	{ "40", 40 },
	{ "64", RTMAX },
	{ "SIGRTMIN", RTMIN },
	{ "RTMIN", RTMIN },
	{ "SIGRTMIN+0", RTMIN },
	{ "SIGRTMIN+3", RTMIN + 3 },
	{ "RTMIN+30", RTMAX },
	{ "SIGRTMAX", RTMAX },
	{ "RTMAX", RTMAX },
	{ "SIGRTMAX-2", RTMAX - 2 },
	{ "SIGRTMAX-30", RTMIN },
	/* signals that end, stop or crash a program, or that it relies on */
	{ "1", -EPERM },  /* SIGHUP */
	{ "2", -EPERM },  /* SIGINT */
	{ "3", -EPERM },  /* SIGQUIT */
	{ "4", -EPERM },  /* SIGILL */
	{ "5", -EPERM },  /* SIGTRAP */
	{ "6", -EPERM },  /* SIGABRT */
	{ "7", -EPERM },  /* SIGBUS */
	{ "8", -EPERM },  /* SIGFPE */
	{ "9", -EPERM },  /* SIGKILL */
	{ "11", -EPERM }, /* SIGSEGV */
	{ "13", -EPERM }, /* SIGPIPE */
	{ "14", -EPERM }, /* SIGALRM */
	{ "15", -EPERM }, /* SIGTERM */
	{ "16", -EPERM }, /* SIGSTKFLT */
	{ "17", -EPERM }, /* SIGCHLD */
	{ "18", -EPERM }, /* SIGCONT */
	{ "19", -EPERM }, /* SIGSTOP */
	{ "20", -EPERM }, /* SIGTSTP */
	{ "21", -EPERM }, /* SIGTTIN */
	{ "22", -EPERM }, /* SIGTTOU */
	{ "23", -EPERM }, /* SIGURG */
	{ "24", -EPERM }, /* SIGXCPU */
	{ "25", -EPERM }, /* SIGXFSZ */
	{ "26", -EPERM }, /* SIGVTALRM */
	{ "27", -EPERM }, /* SIGPROF */
	{ "28", -EPERM }, /* SIGWINCH */
	{ "29", -EPERM }, /* SIGIO */
	{ "30", -EPERM }, /* SIGPWR */
	{ "31", -EPERM }, /* SIGSYS */
	{ "32", -EPERM }, /* glibc's own (thread cancellation) */
	{ "33", -EPERM }, /* glibc's own (setuid across threads) */
	/* not a signal gpuspy can take */
	{ "OFF", -EINVAL },
	{ "Off", -EINVAL },
	{ "no", -EINVAL },
	{ "00", -EINVAL },
	{ "-0", -EINVAL },
	{ "012", -EINVAL }, /* octal or decimal? neither */
	{ "+12", -EINVAL },
	{ " 12", -EINVAL },
	{ "usr1", -EINVAL },
	{ "sigusr2", -EINVAL },
	{ "SIG", -EINVAL },
	{ "SIGUSR3", -EINVAL },
	{ "SIGINT", -EINVAL },
	{ "INT", -EINVAL },
	{ "SIGTERM", -EINVAL },
	{ "SIGUSR1 ", -EINVAL },
	{ "SIGRTMIN+", -EINVAL },
	{ "SIGRTMIN-1", -EINVAL },
	{ "SIGRTMIN+31", -EINVAL },
	{ "SIGRTMIN+01", -EINVAL },
	{ "SIGRTMIN+-1", -EINVAL },
	{ "SIGRTMAX+1", -EINVAL },
	{ "SIGRTMAX-31", -EINVAL },
	{ "SIGRTMIN1", -EINVAL },
	{ "rtmin", -EINVAL },
	{ "-1", -EINVAL },
	{ "65", -EINVAL },
	{ "1000", -EINVAL },
	{ "99999", -EINVAL },
	{ "99999999999999999999", -EINVAL },
	{ "0x10", -EINVAL },
	{ "0xc", -EINVAL },
	{ "12 ", -EINVAL },
	{ "12abc", -EINVAL },
	{ "10x", -EINVAL },
	{ "abc", -EINVAL },
};

static void test_signal(void **state)
{
	assert_int_equal(NSIG, 65);
	assert_int_equal(SIGRTMIN, RTMIN);
	assert_int_equal(SIGRTMAX, RTMAX);
	for (size_t i = 0; i < sizeof(signals) / sizeof(signals[0]); i++) {
		int sig = env_signal(signals[i].v);

		if (sig != signals[i].sig)
			fail_msg("GPUSPY_SIGNAL=%s: %d, expected %d",
				 signals[i].v ? signals[i].v : "(unset)", sig, signals[i].sig);
	}
}

/* Every signal below SIGRTMIN is refused but SIGUSR1 and SIGUSR2, and
 * every one refused that has a name has it. */
static void test_signal_refused(void **state)
{
	static const int must_refuse[] = {
		SIGKILL, SIGSTOP, SIGTERM,   SIGINT,  SIGQUIT, SIGHUP,	SIGSEGV,  SIGBUS,  SIGFPE,
		SIGILL,	 SIGABRT, SIGTRAP,   SIGSYS,  SIGPIPE, SIGCHLD, SIGCONT,  SIGTSTP, SIGTTIN,
		SIGTTOU, SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU, SIGXFSZ, SIGWINCH, SIGURG,  SIGIO,
	};
	char v[16];

	for (size_t i = 0; i < sizeof(must_refuse) / sizeof(must_refuse[0]); i++) {
		snprintf(v, sizeof(v), "%d", must_refuse[i]);
		if (env_signal(v) != -EPERM)
			fail_msg("GPUSPY_SIGNAL=%s (%s) taken", v, env_signal_name(must_refuse[i]));
		assert_non_null(env_signal_name(must_refuse[i]));
	}
	for (int sig = 1; sig < SIGRTMIN; sig++) {
		snprintf(v, sizeof(v), "%d", sig);
		assert_int_equal(env_signal(v), sig == SIGUSR1 || sig == SIGUSR2 ? sig : -EPERM);
	}
	assert_string_equal(env_signal_name(SIGTERM), "SIGTERM");
	assert_string_equal(env_signal_name(SIGKILL), "SIGKILL");
	assert_null(env_signal_name(40));
}

static const struct {
	const char *v;
	unsigned max;
	int ret;
	unsigned n;
} uints[] = {
	{ "0", 64, 0, 0 },
	{ "1", 64, 0, 1 },
	{ "16", 64, 0, 16 },
	{ "64", 64, 0, 64 },
	{ "65", 64, -ERANGE, 7 },
	{ "4294967295", 4294967295U, 0, 4294967295U },
	{ "4294967296", 4294967295U, -ERANGE, 7 },
	{ "99999999999999999999999", 64, -ERANGE, 7 },
	{ NULL, 64, -EINVAL, 7 },
	{ "", 64, -EINVAL, 7 },
	{ "00", 64, -EINVAL, 7 },
	{ "016", 64, -EINVAL, 7 },
	{ "0x10", 64, -EINVAL, 7 },
	{ "-0", 64, -EINVAL, 7 },
	{ "-1", 64, -EINVAL, 7 },
	{ "+1", 64, -EINVAL, 7 },
	{ " 1", 64, -EINVAL, 7 },
	{ "1 ", 64, -EINVAL, 7 },
	{ "1.0", 64, -EINVAL, 7 },
	{ "1e1", 64, -EINVAL, 7 },
	{ "nan", 64, -EINVAL, 7 },
	{ "inf", 64, -EINVAL, 7 },
	{ "deep", 64, -EINVAL, 7 },
};

static void test_uint(void **state)
{
	for (size_t i = 0; i < sizeof(uints) / sizeof(uints[0]); i++) {
		unsigned n = 7;
		int r = env_uint(uints[i].v, uints[i].max, &n);

		if (r != uints[i].ret || n != uints[i].n)
			fail_msg("'%s' up to %u: %d, %u; expected %d, %u",
				 uints[i].v ? uints[i].v : "(unset)", uints[i].max, r, n,
				 uints[i].ret, uints[i].n);
	}
}

static const struct {
	const char *v;
	int ret;
	int b; /* -1: left alone */
} bools[] = {
	{ "1", 0, 1 },		{ "yes", 0, 1 },	 { "true", 0, 1 },
	{ "on", 0, 1 },		{ "YES", 0, 1 },	 { "True", 0, 1 },
	{ "ON", 0, 1 },		{ "0", 0, 0 },		 { "no", 0, 0 },
	{ "false", 0, 0 },	{ "off", 0, 0 },	 { "NO", 0, 0 },
	{ "False", 0, 0 },	{ "OFF", 0, 0 },	 { NULL, -EINVAL, -1 },
	{ "", -EINVAL, -1 },	{ "2", -EINVAL, -1 },	 { "00", -EINVAL, -1 },
	{ "-1", -EINVAL, -1 },	{ " 1", -EINVAL, -1 },	 { "1 ", -EINVAL, -1 },
	{ "y", -EINVAL, -1 },	{ "n", -EINVAL, -1 },	 { "maybe", -EINVAL, -1 },
	{ "0x1", -EINVAL, -1 }, { "yes!", -EINVAL, -1 },
};

static void test_bool(void **state)
{
	for (size_t i = 0; i < sizeof(bools) / sizeof(bools[0]); i++) {
		for (int start = 0; start < 2; start++) {
			bool b = start;
			int r = env_bool(bools[i].v, &b);
			int want = bools[i].b < 0 ? start : bools[i].b;

			if (r != bools[i].ret || (int)b != want)
				fail_msg("'%s': %d, %d; expected %d, %d",
					 bools[i].v ? bools[i].v : "(unset)", r, b, bools[i].ret,
					 want);
		}
	}
}

static const struct {
	const char *v;
	int ret;
	unsigned long long bytes;
} sizes[] = {
	{ NULL, 0, 0 },
	{ "", 0, 0 },
	{ "0", 0, 0 },
	{ "0G", 0, 0 },
	{ "0.0", 0, 0 },
	{ "1", 0, 1 },
	{ "4096", 0, 4096 },
	{ "8589934592", 0, 8ULL << 30 },
	{ "1K", 0, 1024 },
	{ "1k", 0, 1024 },
	{ "1KiB", 0, 1024 },
	{ "1KB", 0, 1024 },
	{ "1kb", 0, 1024 },
	{ "512M", 0, 512ULL << 20 },
	{ "512m", 0, 512ULL << 20 },
	{ "8G", 0, 8ULL << 30 },
	{ "8g", 0, 8ULL << 30 },
	{ "8GiB", 0, 8ULL << 30 },
	{ "8GB", 0, 8ULL << 30 },
	{ "24G", 0, 24ULL << 30 },
	{ "1.5G", 0, 3ULL << 29 },
	{ ".5G", 0, 1ULL << 29 },
	{ "0.1K", 0, 102 }, /* whole bytes: 102.4 */
	{ "1.5T", 0, 3ULL << 39 },
	{ "1B", 0, 1 },
	{ "4095T", 0, 4095ULL << 40 },
	{ "4096T", 0, 1ULL << 52 },
	{ "4194304T", -ERANGE, 0 }, /* 2^62 */
	{ "4194303.99T", 0,
	  (1ULL << 62) - (1ULL << 40) + (unsigned long long)(0.99 * (1ULL << 40)) },
	{ "4611686018427387904", -ERANGE, 0 }, /* 2^62 */
	{ "4611686018427387903", 0, (1ULL << 62) - 1 },
	{ "99999999999999999999999", -ERANGE, 0 },
	{ "8 G", -EINVAL, 0 },
	{ " 8G", -EINVAL, 0 },
	{ "8G ", -EINVAL, 0 },
	{ "8 ", -EINVAL, 0 }, /* a blank is no unit (it folds to NUL) */
	{ "8 B", -EINVAL, 0 },
	{ "8 iB", -EINVAL, 0 },
	{ "-8G", -EINVAL, 0 },
	{ "+8G", -EINVAL, 0 },
	{ "G", -EINVAL, 0 },
	{ ".G", -EINVAL, 0 },
	{ "8.G", -EINVAL, 0 },
	{ "8P", -EINVAL, 0 },
	{ "8X", -EINVAL, 0 },
	{ "8GG", -EINVAL, 0 },
	{ "8Gi", 0, 8ULL << 30 },
	{ "8iB", -EINVAL, 0 },
	{ "0x10", -EINVAL, 0 },
	{ "1e9", -EINVAL, 0 },
	{ "inf", -EINVAL, 0 },
};

static void test_size(void **state)
{
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		unsigned long long b = 7;
		int r = env_size(sizes[i].v, &b);

		if (r != sizes[i].ret || b != sizes[i].bytes)
			fail_msg("'%s': %d, %llu; expected %d, %llu",
				 sizes[i].v ? sizes[i].v : "(unset)", r, b, sizes[i].ret,
				 sizes[i].bytes);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_output_dir), cmocka_unit_test(test_interval),
		cmocka_unit_test(test_signal),	   cmocka_unit_test(test_signal_refused),
		cmocka_unit_test(test_uint),	   cmocka_unit_test(test_bool),
		cmocka_unit_test(test_size),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
