/* SPDX-License-Identifier: MIT */
/*
 * config.c: every GPUSPY_* read strictly, a refused value being the
 * default with one warning; the warnings kept until config_warnings()
 * (the first allocation), then printed once; and the environment read
 * before the C library has set environ (a .preinit_array allocating).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "conf.h"
#include "log.h"

extern char **environ;

static const char *const names[] = {
	"GPUSPY_OUTPUT_DIR", "GPUSPY_DEPTH",  "GPUSPY_PYTHON_DEPTH", "GPUSPY_INTERVAL",
	"GPUSPY_SIGNAL",     "GPUSPY_UNWIND", "GPUSPY_LIBUNWIND",    "GPUSPY_NVML",
	"GPUSPY_TORCH",	     "GPUSPY_QUIET",  "GPUSPY_DISABLE",	     "GPUSPY_FRAMEWORKS",
};

static int unset_all(void **state)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		unsetenv(names[i]);
	return 0;
}

/* As activation says them (lifecycle.c): one warning line each. */
static void say(const char *line)
{
	gs_warn("%s", line);
}

/* What config_warnings() prints, read back from stderr. */
static char *warnings_printed(void)
{
	static char buf[8192];
	char path[] = "/tmp/gpuspy-test-config-XXXXXX";
	int fd = mkstemp(path), saved = dup(STDERR_FILENO);
	ssize_t n;

	assert_true(fd >= 0 && saved >= 0);
	unlink(path);
	dup2(fd, STDERR_FILENO);
	config_warnings(say);
	dup2(saved, STDERR_FILENO);
	close(saved);
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static void test_defaults(void **state)
{
	config_load();
	assert_string_equal(gs_config.output_dir, "gpuspy-out");
	assert_int_equal(gs_config.depth, 16);
	assert_int_equal(gs_config.py_depth, 32);
	assert_int_equal(gs_config.interval_us, 1000000);
	assert_int_equal(gs_config.signal, SIGUSR2);
	assert_null(gs_config.unwind);
	assert_null(gs_config.libunwind);
	assert_true(gs_config.nvml);
	assert_true(gs_config.torch);
	assert_false(gs_config.quiet);
	assert_false(gs_config.disabled);
	assert_string_equal(warnings_printed(), "");
}

static void test_good(void **state)
{
	setenv("GPUSPY_OUTPUT_DIR", "/runs/a", 1);
	setenv("GPUSPY_DEPTH", "64", 1);
	setenv("GPUSPY_PYTHON_DEPTH", "0", 1);
	setenv("GPUSPY_INTERVAL", "20ms", 1);
	setenv("GPUSPY_SIGNAL", "SIGRTMIN+2", 1);
	setenv("GPUSPY_UNWIND", "fp", 1);
	setenv("GPUSPY_LIBUNWIND", "/opt/libunwind.so.8", 1);
	setenv("GPUSPY_NVML", "0", 1);
	setenv("GPUSPY_TORCH", "off", 1);
	setenv("GPUSPY_QUIET", "yes", 1);
	setenv("GPUSPY_DISABLE", "FALSE", 1);
	config_load();
	assert_string_equal(gs_config.output_dir, "/runs/a");
	assert_int_equal(gs_config.depth, 64);
	assert_int_equal(gs_config.py_depth, 0);
	assert_int_equal(gs_config.interval_us, 20000);
	assert_int_equal(gs_config.signal, SIGRTMIN + 2);
	assert_string_equal(gs_config.unwind, "fp");
	assert_string_equal(gs_config.libunwind, "/opt/libunwind.so.8");
	assert_false(gs_config.nvml);
	assert_false(gs_config.torch);
	assert_true(gs_config.quiet);
	assert_false(gs_config.disabled);
	assert_string_equal(warnings_printed(), "");
}

static void test_interval_off(void **state)
{
	setenv("GPUSPY_INTERVAL", "0", 1);
	setenv("GPUSPY_SIGNAL", "off", 1);
	config_load();
	assert_int_equal(gs_config.interval_us, 0);
	assert_int_equal(gs_config.signal, 0);
	assert_string_equal(warnings_printed(), "");
}

/* Each refused value: the default, and one line that names it. */
static const struct {
	const char *name, *value, *warning;
} bad[] = {
	{ "GPUSPY_DEPTH", "x", "gpuspy: GPUSPY_DEPTH=x is not a number from 0 to 64; using 16\n" },
	{ "GPUSPY_DEPTH", "65",
	  "gpuspy: GPUSPY_DEPTH=65 is not a number from 0 to 64; using 16\n" },
	{ "GPUSPY_DEPTH", "-0",
	  "gpuspy: GPUSPY_DEPTH=-0 is not a number from 0 to 64; using 16\n" },
	{ "GPUSPY_DEPTH", "0x10",
	  "gpuspy: GPUSPY_DEPTH=0x10 is not a number from 0 to 64; using 16\n" },
	{ "GPUSPY_DEPTH", " 8",
	  "gpuspy: GPUSPY_DEPTH= 8 is not a number from 0 to 64; using 16\n" },
	{ "GPUSPY_PYTHON_DEPTH", "-1",
	  "gpuspy: GPUSPY_PYTHON_DEPTH=-1 is not a number from 0 to 64; using 32\n" },
	{ "GPUSPY_PYTHON_DEPTH", "18446744073709551617",
	  "gpuspy: GPUSPY_PYTHON_DEPTH=18446744073709551617 is not a number from 0 to 64; "
	  "using 32\n" },
	{ "GPUSPY_INTERVAL", "nan",
	  "gpuspy: GPUSPY_INTERVAL=nan is not a duration such as 1s, 100ms or 0; using 1s\n" },
	{ "GPUSPY_INTERVAL", "inf",
	  "gpuspy: GPUSPY_INTERVAL=inf is not a duration such as 1s, 100ms or 0; using 1s\n" },
	{ "GPUSPY_INTERVAL", "1e99",
	  "gpuspy: GPUSPY_INTERVAL=1e99 is not a duration such as 1s, 100ms or 0; using 1s\n" },
	{ "GPUSPY_INTERVAL", "1e20us",
	  "gpuspy: GPUSPY_INTERVAL=1e20us is not a duration such as 1s, 100ms or 0; using 1s\n" },
	{ "GPUSPY_INTERVAL", "-0",
	  "gpuspy: GPUSPY_INTERVAL=-0 is not a duration such as 1s, 100ms or 0; using 1s\n" },
	{ "GPUSPY_INTERVAL", "0x10",
	  "gpuspy: GPUSPY_INTERVAL=0x10 is not a duration such as 1s, 100ms or 0; using 1s\n" },
	{ "GPUSPY_INTERVAL", "10us",
	  "gpuspy: GPUSPY_INTERVAL=10us is out of range (100us to 1h, or 0 for off); using 1s\n" },
	{ "GPUSPY_INTERVAL", "2h",
	  "gpuspy: GPUSPY_INTERVAL=2h is not a duration such as 1s, 100ms or 0; using 1s\n" },
	{ "GPUSPY_INTERVAL", "7200",
	  "gpuspy: GPUSPY_INTERVAL=7200 is out of range (100us to 1h, or 0 for off); using 1s\n" },
	{ "GPUSPY_SIGNAL", "15",
	  "gpuspy: GPUSPY_SIGNAL=15 (SIGTERM) is refused: only SIGUSR1, SIGUSR2 and the real-time "
	  "signals can be taken; using SIGUSR2\n" },
	{ "GPUSPY_SIGNAL", "33",
	  "gpuspy: GPUSPY_SIGNAL=33 is refused: only SIGUSR1, SIGUSR2 and the real-time signals "
	  "can be taken; using SIGUSR2\n" },
	{ "GPUSPY_SIGNAL", "10x",
	  "gpuspy: GPUSPY_SIGNAL=10x is not SIGUSR1, SIGUSR2, a number or off; using SIGUSR2\n" },
	{ "GPUSPY_SIGNAL", "SIGTERM",
	  "gpuspy: GPUSPY_SIGNAL=SIGTERM is not SIGUSR1, SIGUSR2, a number or off; using "
	  "SIGUSR2\n" },
	{ "GPUSPY_UNWIND", "bogus",
	  "gpuspy: GPUSPY_UNWIND=bogus is not backtrace, libunwind or fp; using the default "
	  "(libunwind when it can be loaded, else backtrace)\n" },
	{ "GPUSPY_NVML", "maybe",
	  "gpuspy: GPUSPY_NVML=maybe is not 1, 0, yes, no, true, false, on or off; using 1\n" },
	{ "GPUSPY_TORCH", "2",
	  "gpuspy: GPUSPY_TORCH=2 is not 1, 0, yes, no, true, false, on or off; using 1\n" },
	{ "GPUSPY_QUIET", "y",
	  "gpuspy: GPUSPY_QUIET=y is not 1, 0, yes, no, true, false, on or off; using 0\n" },
	{ "GPUSPY_DISABLE", "please",
	  "gpuspy: GPUSPY_DISABLE=please is not 1, 0, yes, no, true, false, on or off; using 0\n" },
	{ "GPUSPY_INTERVAL", "1\033[2J",
	  "gpuspy: GPUSPY_INTERVAL=1?[2J is not a duration such as 1s, 100ms or 0; using 1s\n" },
	{ "GPUSPY_UNWIND",
	  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	  "gpuspy: GPUSPY_UNWIND=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	  "aaaaaa... is not backtrace, libunwind or fp; using the default (libunwind when it can "
	  "be loaded, else backtrace)\n" },
};

static void test_bad(void **state)
{
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *got;

		unset_all(state);
		setenv(bad[i].name, bad[i].value, 1);
		config_load();
		assert_int_equal(gs_config.depth, 16);
		assert_int_equal(gs_config.py_depth, 32);
		assert_int_equal(gs_config.interval_us, 1000000);
		assert_int_equal(gs_config.signal, SIGUSR2);
		assert_null(gs_config.unwind);
		assert_true(gs_config.nvml);
		assert_true(gs_config.torch);
		assert_false(gs_config.quiet);
		assert_false(gs_config.disabled);
		got = warnings_printed();
		if (strcmp(got, bad[i].warning) != 0)
			fail_msg("%s=%s: printed\n%s, expected\n%s", bad[i].name, bad[i].value, got,
				 bad[i].warning);
		/* once: a second call prints nothing */
		assert_string_equal(warnings_printed(), "");
	}
}

/* Nothing printed at load: only config_warnings() prints. */
static void test_warnings_wait(void **state)
{
	char path[] = "/tmp/gpuspy-test-config-XXXXXX";
	int fd = mkstemp(path), saved = dup(STDERR_FILENO);

	assert_true(fd >= 0 && saved >= 0);
	unlink(path);
	setenv("GPUSPY_INTERVAL", "nan", 1);
	setenv("GPUSPY_SIGNAL", "9", 1);
	setenv("GPUSPY_DEPTH", "deep", 1);
	dup2(fd, STDERR_FILENO);
	config_load();
	dup2(saved, STDERR_FILENO);
	close(saved);
	assert_int_equal(lseek(fd, 0, SEEK_END), 0);
	close(fd);
	assert_string_equal(
		warnings_printed(),
		"gpuspy: GPUSPY_DEPTH=deep is not a number from 0 to 64; using 16\n"
		"gpuspy: GPUSPY_INTERVAL=nan is not a duration such as 1s, 100ms or 0; using 1s\n"
		"gpuspy: GPUSPY_SIGNAL=9 (SIGKILL) is refused: only SIGUSR1, SIGUSR2 and the "
		"real-time signals can be taken; using SIGUSR2\n");
	assert_string_equal(warnings_printed(), "");
}

/*
 * Before the C library's initialization environ is NULL: the settings
 * then come from /proc/self/environ, the environment this test started
 * with (meson.build sets GPUSPY_OUTPUT_DIR and GPUSPY_QUIET=1), not from
 * what setenv() changed since.
 */
static void test_before_environ(void **state)
{
	const char *dir = getenv("GPUSPY_TEST_START_OUTPUT_DIR");
	char **saved = environ;

	assert_non_null(dir);
	setenv("GPUSPY_OUTPUT_DIR", "/changed/since", 1);
	setenv("GPUSPY_QUIET", "0", 1);
	environ = NULL;
	config_load();
	environ = saved;
	assert_string_equal(gs_config.output_dir, dir);
	assert_true(gs_config.quiet);
	assert_int_equal(gs_config.depth, 16);
	assert_string_equal(warnings_printed(), "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_before_environ, NULL),
		cmocka_unit_test_setup(test_defaults, unset_all),
		cmocka_unit_test_setup(test_good, unset_all),
		cmocka_unit_test_setup(test_interval_off, unset_all),
		cmocka_unit_test_setup(test_bad, unset_all),
		cmocka_unit_test_setup(test_warnings_wait, unset_all),
	};

	/* environ is not NULL here: the copy of GPUSPY_OUTPUT_DIR that
	 * test_before_environ compares with */
	if (getenv("GPUSPY_OUTPUT_DIR"))
		setenv("GPUSPY_TEST_START_OUTPUT_DIR", getenv("GPUSPY_OUTPUT_DIR"), 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
