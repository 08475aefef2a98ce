/* SPDX-License-Identifier: MIT */
/*
 * A site's name for people (src/common/sitename.c): the short form both
 * the reports' lists and libgpuspy's /metrics give a frame, and which
 * Python files are the user's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sitename.h"

static void check(const struct sitename_frame *f, const char *want)
{
	char buf[128];

	assert_int_equal(sitename_short(buf, sizeof(buf), f), strlen(want));
	assert_string_equal(buf, want);
}

static void test_short(void **state)
{
	static const int64_t lines[] = { 12, 14 };

	(void)state;
	/* Python: the file's base name, whatever checkout it runs from */
	check(&(struct sitename_frame){ .function = "leak_buffers",
					.file = "/work/a/b/prom_job.py",
					.line = 17 },
	      "leak_buffers (prom_job.py:17)");
	/* a merged site's lines; no line at all */
	check(
		&(struct sitename_frame){
			.function = "step", .file = "train.py", .lines = lines, .nlines = 2 },
		"step (train.py:12,14)");
	check(&(struct sitename_frame){ .function = "step", .file = "/x/train.py" },
	      "step (train.py)");
	/* native: the module without a file, the offset without a name */
	check(&(struct sitename_frame){ .function = "ns::alloc(int)",
					.module = "libfoo.so",
					.offset = 0x40 },
	      "ns::alloc(int) (libfoo.so)");
	check(&(struct sitename_frame){ .module = "libfoo.so", .offset = 0x1a2b },
	      "libfoo.so+0x1a2b");
	check(&(struct sitename_frame){ .offset = 0x7f00 }, "0x7f00");
	/* one line whatever a name holds: C0, DEL and UTF-8's C1 controls */
	check(&(struct sitename_frame){ .function = "a\nb\x7f\xc2\x85"
						    "c\xc3\xa9",
					.module = "m\tx" },
	      "a?b??c\xc3\xa9 (m?x)");
}

static void test_truncated(void **state)
{
	const struct sitename_frame f = { .function = "leak_buffers",
					  .file = "prom_job.py",
					  .line = 17 };
	char buf[8];

	(void)state;
	/* the length it needs, as snprintf says it, and a terminated prefix */
	assert_int_equal(sitename_short(buf, sizeof(buf), &f), 29);
	assert_string_equal(buf, "leak_bu");
	assert_int_equal(sitename_short(NULL, 0, &f), 29);
}

static void test_user_file(void **state)
{
	(void)state;
	assert_true(sitename_user_file("/home/me/train.py"));
	assert_true(sitename_user_file("train.py"));
	assert_true(sitename_user_file("/home/me/lib/python3.x/mine.py"));
	assert_false(sitename_user_file("/usr/lib/python3.12/threading.py"));
	assert_false(sitename_user_file("/usr/lib64/python3.11/runpy.py"));
	assert_false(sitename_user_file("/opt/py/lib/python3.13t/json/__init__.py"));
	assert_false(sitename_user_file("/venv/lib/python3.12/site-packages/torch/nn.py"));
	assert_false(sitename_user_file("/usr/lib/python3/dist-packages/numpy/core.py"));
	assert_false(sitename_user_file("<frozen runpy>"));
	assert_false(sitename_user_file("?"));
	assert_false(sitename_user_file(""));
	assert_false(sitename_user_file(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_short),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_user_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
