/* SPDX-License-Identifier: MIT */
/*
 * A site's one name (src/common/sitename.c): the short form of a frame,
 * the headline, the line that leads a merged site, the names of a set of
 * sites told apart, and which Python files are the user's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
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
	/* bytes that are not UTF-8, one '?' each: a lone continuation byte,
	 * a cut sequence, an overlong form, a surrogate, past U+10FFFF */
	check(&(struct sitename_frame){ .function = "x\x80y\xe2\x82", .module = "m" }, "x?y?? (m)");
	check(&(struct sitename_frame){ .function = "\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80" },
	      "?????????");
	check(&(struct sitename_frame){ .function = "\xe2\x82\xac\xf0\x9f\x98\x80" },
	      "\xe2\x82\xac\xf0\x9f\x98\x80");
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

static void test_headline(void **state)
{
	const struct sitename_frame user[] = {
		{ .function = "cudaMalloc", .module = "libcudart.so.13", .noise = true },
		{ .function = "alloc", .module = "libx.so" },
		{ .function = "f", .file = "/usr/lib/python3.12/json.py", .python = true },
		{ .function = "step", .file = "train.py", .python = true, .user = true },
	};
	const struct sitename_frame native[] = {
		{ .function = "cudaMalloc", .module = "libcudart.so.13", .noise = true },
		{ .offset = 0x1000 },
		{ .function = "alloc", .module = "libx.so" },
	};
	const struct sitename_frame nomod[] = {
		{ .function = "cuMemAlloc", .module = "libcuda.so.1", .noise = true },
		{ .offset = 0x1000 },
	};
	const struct sitename_frame allnoise[] = {
		{ .function = "cuMemAlloc", .module = "libcuda.so.1", .noise = true },
	};

	(void)state;
	/* the user's Python line, before any native frame */
	assert_int_equal(sitename_headline(user, 4), 3);
	/* native: in a module first, an address outside any module next */
	assert_int_equal(sitename_headline(native, 3), 2);
	assert_int_equal(sitename_headline(nomod, 2), 1);
	assert_int_equal(sitename_headline(allnoise, 1), 0);
	assert_int_equal(sitename_headline(NULL, 0), -1);
}

static void test_lead_line(void **state)
{
	const struct sitename_line lines[] = {
		{ .line = 31, .live_bytes = 0, .peak_bytes = 8 << 20 },
		{ .line = 32, .live_bytes = 1 << 20, .peak_bytes = 1 << 20 },
		{ .line = 37, .growing = true, .live_bytes = 512, .peak_bytes = 512 },
	};
	const struct sitename_line tied[] = {
		{ .line = 5, .peak_bytes = 4 },
		{ .line = 9, .peak_bytes = 4 },
	};

	(void)state;
	/* growing first, then what is live, then the peak, then the first */
	assert_int_equal(sitename_lead_line(lines, 3), 2);
	assert_int_equal(sitename_lead_line(lines, 2), 1);
	assert_int_equal(sitename_lead_line(lines, 1), 0);
	assert_int_equal(sitename_lead_line(tied, 2), 0);
	assert_int_equal(sitename_lead_line(NULL, 0), 0);
}

static void check_name(const struct sitename_site *s, const char *want)
{
	char buf[256];

	assert_int_equal(sitename_name(buf, sizeof(buf), s), strlen(want));
	assert_string_equal(buf, want);
}

static void test_name(void **state)
{
	const struct sitename_frame fr[] = {
		{ .function = "cudaMalloc", .module = "libcudart.so.13", .noise = true },
		{ .function = "train_step",
		  .file = "/src/patterns.c",
		  .line = 31,
		  .module = "patterns" },
		{ .function = "main", .file = "/src/patterns.c", .line = 60, .module = "patterns" },
	};
	const struct sitename_line three[] = {
		{ .line = 31, .peak_bytes = 8 << 20 },
		{ .line = 32, .peak_bytes = 1 << 20 },
		{ .line = 37, .growing = true, .live_bytes = 512 },
	};
	const struct sitename_line two[] = {
		{ .line = 31, .peak_bytes = 1 },
		{ .line = 32, .peak_bytes = 2 },
	};
	const struct sitename_frame bare[] = { { .module = "patterns", .offset = 0x1240 } };

	(void)state;
	check_name(&(struct sitename_site){ .frames = fr, .nframes = 3 },
		   "train_step (patterns.c:31)");
	/* the growing line leads the lines of a merged site */
	check_name(
		&(struct sitename_site){ .frames = fr, .nframes = 3, .lines = three, .nlines = 3 },
		"train_step (patterns.c:37 +2 lines)");
	check_name(&(struct sitename_site){ .frames = fr, .nframes = 3, .lines = two, .nlines = 2 },
		   "train_step (patterns.c:32 +1 line)");
	check_name(&(struct sitename_site){ .frames = bare, .nframes = 1 }, "patterns+0x1240");
	check_name(&(struct sitename_site){ .nframes = 0 }, "(no stack)");
}

/* sitename_names() of SITES[0..N-1] against WANT[0..N-1]. */
static void check_names(const struct sitename_site *sites, size_t n, const char *const *want)
{
	char *names[8];

	assert_true(n <= 8);
	assert_int_equal(sitename_names(sites, n, names), 0);
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(names[i], want[i]);
		free(names[i]);
	}
}

static void test_names_apart(void **state)
{
	/* grab() called from three cells: the callers tell them apart */
	const struct sitename_frame c1[] = {
		{ .function = "grab",
		  .file = "/tmp/ipykernel/2075902560.py",
		  .line = 5,
		  .python = true,
		  .user = true },
		{ .function = "<module>",
		  .file = "/tmp/ipykernel/111.py",
		  .line = 2,
		  .python = true,
		  .user = true },
	};
	const struct sitename_frame c2[] = {
		c1[0],
		{ .function = "<module>",
		  .file = "/tmp/ipykernel/222.py",
		  .line = 1,
		  .python = true,
		  .user = true },
	};
	/* the same first caller, another second one */
	const struct sitename_frame c3[] = {
		c1[0],
		{ .function = "run", .file = "/x/r.py", .line = 7, .python = true, .user = true },
		{ .function = "<module>",
		  .file = "/x/a.py",
		  .line = 3,
		  .python = true,
		  .user = true },
	};
	const struct sitename_frame c4[] = {
		c1[0],
		{ .function = "run", .file = "/x/r.py", .line = 7, .python = true, .user = true },
		{ .function = "<module>",
		  .file = "/x/b.py",
		  .line = 4,
		  .python = true,
		  .user = true },
	};
	const struct sitename_frame other[] = {
		{ .function = "solo", .file = "s.py", .line = 1, .python = true, .user = true },
	};
	const struct sitename_site sites[] = {
		{ .frames = c1, .nframes = 2 }, { .frames = other, .nframes = 1 },
		{ .frames = c2, .nframes = 2 }, { .frames = c3, .nframes = 3 },
		{ .frames = c4, .nframes = 3 },
	};
	const char *const want[] = {
		"grab (2075902560.py:5) from <module> (111.py:2)",
		"solo (s.py:1)",
		"grab (2075902560.py:5) from <module> (222.py:1)",
		"grab (2075902560.py:5) from run (r.py:7) from <module> (a.py:3)",
		"grab (2075902560.py:5) from run (r.py:7) from <module> (b.py:4)",
	};

	(void)state;
	check_names(sites, 5, want);
}

static void test_names_fallbacks(void **state)
{
	/* one Python line reaching two libraries: the frame under it */
	const struct sitename_frame a[] = {
		{ .function = "cudaMalloc", .module = "libcudart.so.13", .noise = true },
		{ .function = "cupy_alloc", .module = "libcupy.so" },
		{ .function = "step", .file = "t.py", .line = 3, .python = true, .user = true },
	};
	const struct sitename_frame b[] = {
		a[0],
		{ .function = "jax_alloc", .module = "libxla.so" },
		a[2],
	};
	/* frames alike, APIs not */
	const struct sitename_frame c[] = {
		{ .function = "pin", .file = "p.c", .line = 3, .module = "p" },
	};
	const struct sitename_site sites[] = {
		{ .frames = a, .nframes = 3 },
		{ .frames = b, .nframes = 3 },
		{ .frames = c, .nframes = 1, .api = "cudaMalloc" },
		{ .frames = c, .nframes = 1, .api = "cudaMallocHost" },
		{ .frames = c, .nframes = 1, .api = "cudaMalloc" },
	};
	const char *const want[] = {
		"step (t.py:3) via cupy_alloc (libcupy.so)",
		"step (t.py:3) via jax_alloc (libxla.so)",
		"pin (p.c:3) by cudaMalloc",
		"pin (p.c:3) by cudaMallocHost",
		"pin (p.c:3) by cudaMalloc #2",
	};

	(void)state;
	check_names(sites, 5, want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_short),	    cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_user_file),   cmocka_unit_test(test_headline),
		cmocka_unit_test(test_lead_line),   cmocka_unit_test(test_name),
		cmocka_unit_test(test_names_apart), cmocka_unit_test(test_names_fallbacks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
