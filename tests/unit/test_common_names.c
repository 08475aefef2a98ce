/* SPDX-License-Identifier: MIT */
/*
 * The names both sides spell (src/common/names.c): file names and format
 * ids as docs/format.md gives them, kind names in their order, and the
 * process directory <host>-<pid>.  gethostname is wrapped (-Wl,--wrap),
 * so that the host name and its failures are the test's.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <gpuspy.h>

#include "names.h"

int __wrap_gethostname(char *name, size_t len);

/* What gethostname gives: the name, or failure with errno. */
static const char *host = "node7";
static int host_errno;

/* glibc's: a name that does not fit is copied truncated, unterminated,
 * with ENAMETOOLONG */
int __wrap_gethostname(char *name, size_t len)
{
	size_t n = strlen(host) + 1;

	if (host_errno) {
		errno = host_errno;
		return -1;
	}
	memcpy(name, host, n < len ? n : len);
	if (n > len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

static int reset(void **state)
{
	host = "node7";
	host_errno = 0;
	return 0;
}

static void test_files(void **state)
{
	char name[64];

	assert_string_equal(GS_FILE_REPORT_JSON, "report.json");
	assert_string_equal(GS_FILE_REPORT_TEXT, "report.txt");
	assert_string_equal(GS_FILE_SNAPSHOT, "snapshot.json");
	assert_string_equal(GS_FILE_TORCH, "torch.json");
	assert_string_equal(GS_FILE_REQUEST, ".request");
	assert_string_equal(GS_FILE_HISTORY, "history.jsonl");
	assert_string_equal(GS_FILE_ALLOCATIONS, "allocations.json");
	snprintf(name, sizeof(name), GS_FILE_SNAPSHOT_N, 3u);
	assert_string_equal(name, "snapshot-3.json");
	assert_int_equal(
		strncmp(name, GS_FILE_SNAPSHOT_N_PREFIX, strlen(GS_FILE_SNAPSHOT_N_PREFIX)), 0);
	snprintf(name, sizeof(name), GS_FILE_OOM_N, 16u);
	assert_string_equal(name, "oom-16.json");
	assert_int_equal(strncmp(name, GS_FILE_OOM_N_PREFIX, strlen(GS_FILE_OOM_N_PREFIX)), 0);

	assert_string_equal(GS_FORMAT_PROCESS, "gpuspy-process/1");
	assert_string_equal(GS_FORMAT_TORCH, "gpuspy-torch/1");
	assert_string_equal(GS_FORMAT_HISTORY, "gpuspy-history/1");
	assert_string_equal(GS_FORMAT_ALLOCATIONS, "gpuspy-allocations/1");
	assert_string_equal(GS_FORMAT_REPORT, "gpuspy-report/1");
	assert_string_equal(GS_FORMAT_MERGE, "gpuspy-merge/1");
	assert_string_equal(GS_FORMAT_DIFF, "gpuspy-diff/1");

	/* the public header names some of them too: the same */
#ifdef GPUSPY_PROCESS_FORMAT
	assert_string_equal(GPUSPY_PROCESS_FORMAT, GS_FORMAT_PROCESS);
#endif
#ifdef GPUSPY_REPORT_FORMAT
	assert_string_equal(GPUSPY_REPORT_FORMAT, GS_FORMAT_REPORT);
#endif
#ifdef GPUSPY_REPORT_JSON
	assert_string_equal(GPUSPY_REPORT_JSON, GS_FILE_REPORT_JSON);
#endif
#ifdef GPUSPY_REPORT_TEXT
	assert_string_equal(GPUSPY_REPORT_TEXT, GS_FILE_REPORT_TEXT);
#endif
}

static void test_kinds(void **state)
{
	static const char *const order[] = { "device", "managed", "vmm", "pinned" };

	assert_int_equal(GS_KIND_COUNT, 4);
	for (int k = 0; k < GS_KIND_COUNT; k++) {
		assert_string_equal(names_kinds[k], order[k]);
		assert_string_equal(names_kind(k), order[k]);
		assert_int_equal(names_kind_parse(order[k]), k);
	}
	assert_int_equal(GS_KIND_DEVICE, 0);
	assert_int_equal(GS_KIND_PINNED, 3);
	assert_string_equal(names_kind(-1), "?");
	assert_string_equal(names_kind(GS_KIND_COUNT), "?");
	assert_int_equal(names_kind_parse("Device"), -EINVAL);
	assert_int_equal(names_kind_parse(""), -EINVAL);
	assert_int_equal(names_kind_parse("pinned "), -EINVAL);
}

static void test_host(void **state)
{
	char buf[GS_HOST_SIZE], small[6];

	names_host(buf, sizeof(buf));
	assert_string_equal(buf, "node7");

	/* fits exactly, terminator included */
	names_host(small, sizeof(small));
	assert_string_equal(small, "node7");

	/* does not fit: gethostname fails, and the name is "unknown",
	 * itself truncated to the buffer */
	host = "node77";
	names_host(small, sizeof(small));
	assert_string_equal(small, "unkno");
	names_host(buf, sizeof(buf));
	assert_string_equal(buf, "node77");

	host_errno = EFAULT;
	names_host(buf, sizeof(buf));
	assert_string_equal(buf, "unknown");
}

/* A name of HOST_NAME_MAX (64) bytes, the longest Linux has, fits. */
static void test_host_longest(void **state)
{
	char name[65], buf[GS_HOST_SIZE], dir[GS_PROCESS_DIR_SIZE];

	memset(name, 'h', 64);
	name[64] = '\0';
	host = name;
	names_host(buf, sizeof(buf));
	assert_string_equal(buf, name);
	assert_int_equal(names_process_dir(dir, sizeof(dir), INT_MAX), 0);
	assert_int_equal(strlen(dir), 64 + 1 + 10);

	/* and one that fills GS_HOST_SIZE, with the most negative pid:
	 * GS_PROCESS_DIR_SIZE holds it */
	{
		char longest[GS_HOST_SIZE];

		memset(longest, 'h', sizeof(longest) - 1);
		longest[sizeof(longest) - 1] = '\0';
		host = longest;
		assert_int_equal(names_process_dir(dir, sizeof(dir), INT_MIN), 0);
		assert_int_equal(strlen(dir), GS_HOST_SIZE - 1 + 1 + 11);
	}
}

static void test_process_dir(void **state)
{
	char buf[GS_PROCESS_DIR_SIZE], tiny[11];

	assert_int_equal(names_process_dir(buf, sizeof(buf), 4242), 0);
	assert_string_equal(buf, "node7-4242");
	assert_int_equal(names_process_dir(buf, sizeof(buf), 1), 0);
	assert_string_equal(buf, "node7-1");
	assert_int_equal(names_process_dir(buf, sizeof(buf), INT_MAX), 0);
	assert_string_equal(buf, "node7-2147483647");

	/* "node7-4242" and its NUL: 11 bytes fit, 10 do not */
	assert_int_equal(names_process_dir(tiny, 11, 4242), 0);
	assert_string_equal(tiny, "node7-4242");
	assert_int_equal(names_process_dir(tiny, 10, 4242), -ENAMETOOLONG);
	assert_string_equal(tiny, "node7-424");
	assert_int_equal(names_process_dir(tiny, 1, 4242), -ENAMETOOLONG);
	assert_string_equal(tiny, "");
	assert_int_equal(names_process_dir(NULL, 0, 4242), -ENAMETOOLONG);

	host_errno = EPERM;
	assert_int_equal(names_process_dir(buf, sizeof(buf), 77), 0);
	assert_string_equal(buf, "unknown-77");
}

static void test_paths(void **state)
{
	char buf[128], tiny[16];

	assert_int_equal(names_process_path(buf, sizeof(buf), "/run/out", 99), 0);
	assert_string_equal(buf, "/run/out/node7-99");
	assert_int_equal(names_process_path(tiny, sizeof(tiny), "/run/out", 99), -ENAMETOOLONG);
	assert_string_equal(tiny, "/run/out/node7-");

	assert_int_equal(names_join(buf, sizeof(buf), "/run/out/node7-99", GS_FILE_REQUEST), 0);
	assert_string_equal(buf, "/run/out/node7-99/.request");
	assert_int_equal(names_join(tiny, sizeof(tiny), "/run/out", "report.json"), -ENAMETOOLONG);
	assert_int_equal(names_join(tiny, sizeof(tiny), "/d", "report.json"), 0);
	assert_string_equal(tiny, "/d/report.json");

	assert_int_equal(names_tmp(buf, sizeof(buf), "/d", GS_FILE_SNAPSHOT), 0);
	assert_string_equal(buf, "/d/.snapshot.json.tmp");
	assert_int_equal(names_tmp(tiny, sizeof(tiny), "/d", GS_FILE_SNAPSHOT), -ENAMETOOLONG);
}

static void test_parse_process_dir(void **state)
{
	static const struct {
		const char *name;
		int ret;
		pid_t pid;
		size_t host_len;
		unsigned image;
	} v[] = {
		{ "node7-4242", 0, 4242, 5, 0 },
		/* an earlier program of the process, replaced by an exec */
		{ "node7-4242.image1", 0, 4242, 5, 1 },
		{ "node7-4242.image12", 0, 4242, 5, 12 },
		{ "a-1.image2-5", 0, 5, 10, 0 }, /* a host that looks like one */
		{ "a.b-7.image999999999", 0, 7, 3, 999999999 },
		{ "node7-4242.image0", -EINVAL, 0, 0, 0 },
		{ "node7-4242.image01", -EINVAL, 0, 0, 0 },
		{ "node7-4242.image", -EINVAL, 0, 0, 0 },
		{ "node7-4242.image1000000000", -EINVAL, 0, 0, 0 },
		{ "node7-4242.image1x", -EINVAL, 0, 0, 0 },
		{ "node7-4242.imagex1", -EINVAL, 0, 0, 0 },
		{ "node7-4242.exec1", -EINVAL, 0, 0, 0 },
		{ "node7-4242.", -EINVAL, 0, 0, 0 },
		{ "a-1", 0, 1, 1, 0 },
		{ "gpu-node-3-2147483647", 0, INT_MAX, 10, 0 }, /* the last '-' */
		{ "unknown-77", 0, 77, 7, 0 },
		{ "node7-2147483648", -EINVAL, 0, 0, 0 },
		{ "node7-99999999999999999999", -EINVAL, 0, 0, 0 },
		{ "node7-0", -EINVAL, 0, 0, 0 },
		{ "node7-042", -EINVAL, 0, 0, 0 },
		{ "node7-", -EINVAL, 0, 0, 0 },
		{ "-42", -EINVAL, 0, 0, 0 },
		{ "node7", -EINVAL, 0, 0, 0 },
		{ "node7-42x", -EINVAL, 0, 0, 0 },
		{ "node7-+42", -EINVAL, 0, 0, 0 },
		{ "node7- 42", -EINVAL, 0, 0, 0 },
		{ "node7-4-", -EINVAL, 0, 0, 0 },
		{ "", -EINVAL, 0, 0, 0 },
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		pid_t pid = -1, pid2 = -1;
		size_t len = 12345;
		unsigned image = 12345;
		int r = names_parse_process_image(v[i].name, &pid, &len, &image);

		if (r != v[i].ret ||
		    (r == 0 && (pid != v[i].pid || len != v[i].host_len || image != v[i].image)))
			fail_msg("\"%s\": %d, pid %d, host of %zu, image %u", v[i].name, r,
				 (int)pid, len, image);
		/* the same names are process directories */
		if (names_parse_process_dir(v[i].name, &pid2, NULL) != r || (r == 0 && pid2 != pid))
			fail_msg("\"%s\": names_parse_process_dir differs", v[i].name);
	}
	{
		pid_t pid;

		assert_int_equal(names_parse_process_dir("h-5", &pid, NULL), 0);
		assert_int_equal(pid, 5);
	}
}

/* The name built is the name parsed. */
static void test_round_trip(void **state)
{
	char buf[GS_PROCESS_DIR_SIZE];
	pid_t pid;
	size_t len;

	host = "gpu-node-12";
	assert_int_equal(names_process_dir(buf, sizeof(buf), 31337), 0);
	assert_int_equal(names_parse_process_dir(buf, &pid, &len), 0);
	assert_int_equal(pid, 31337);
	assert_int_equal(len, strlen("gpu-node-12"));
	{
		char img[GS_PROCESS_DIR_SIZE + 32];
		unsigned k;

		assert_int_equal(names_image_path(img, sizeof(img), buf, 3), 0);
		assert_string_equal(img, "gpu-node-12-31337.image3");
		assert_int_equal(names_parse_process_image(img, &pid, &len, &k), 0);
		assert_int_equal(pid, 31337);
		assert_int_equal(len, strlen("gpu-node-12"));
		assert_int_equal(k, 3);
		assert_int_equal(names_image_path(img, 10, buf, 3), -ENAMETOOLONG);
	}
}

static void test_parse_numbered(void **state)
{
	static const struct {
		const char *name, *prefix;
		int ret;
		unsigned n;
	} v[] = {
		{ "oom-1.json", GS_FILE_OOM_N_PREFIX, 0, 1 },
		{ "oom-16.json", GS_FILE_OOM_N_PREFIX, 0, 16 },
		{ "oom-0.json", GS_FILE_OOM_N_PREFIX, 0, 0 },
		{ "oom-007.json", GS_FILE_OOM_N_PREFIX, 0, 7 },
		{ "oom-999999999.json", GS_FILE_OOM_N_PREFIX, 0, 999999999 },
		{ "snapshot-64.json", GS_FILE_SNAPSHOT_N_PREFIX, 0, 64 },
		{ "oom-1000000000.json", GS_FILE_OOM_N_PREFIX, -EINVAL, 0 },
		{ "oom-.json", GS_FILE_OOM_N_PREFIX, -EINVAL, 0 },
		{ "oom-1.json.tmp", GS_FILE_OOM_N_PREFIX, -EINVAL, 0 },
		{ ".oom-1.json.tmp", GS_FILE_OOM_N_PREFIX, -EINVAL, 0 },
		{ "oom-1.JSON", GS_FILE_OOM_N_PREFIX, -EINVAL, 0 },
		{ "oom-1", GS_FILE_OOM_N_PREFIX, -EINVAL, 0 },
		{ "oom--1.json", GS_FILE_OOM_N_PREFIX, -EINVAL, 0 },
		{ "oom-+1.json", GS_FILE_OOM_N_PREFIX, -EINVAL, 0 },
		{ "oom-1x.json", GS_FILE_OOM_N_PREFIX, -EINVAL, 0 },
		{ "snapshot.json", GS_FILE_SNAPSHOT_N_PREFIX, -EINVAL, 0 },
		{ "snapshot-1.json", GS_FILE_OOM_N_PREFIX, -EINVAL, 0 },
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		unsigned n = 12345;
		int r = names_parse_numbered(v[i].name, v[i].prefix, &n);

		if (r != v[i].ret || (r == 0 && n != v[i].n))
			fail_msg("\"%s\": %d, %u", v[i].name, r, n);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_files, reset),
		cmocka_unit_test_setup(test_kinds, reset),
		cmocka_unit_test_setup(test_host, reset),
		cmocka_unit_test_setup(test_host_longest, reset),
		cmocka_unit_test_setup(test_process_dir, reset),
		cmocka_unit_test_setup(test_paths, reset),
		cmocka_unit_test_setup(test_parse_process_dir, reset),
		cmocka_unit_test_setup(test_round_trip, reset),
		cmocka_unit_test_setup(test_parse_numbered, reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
