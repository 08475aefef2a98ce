/* SPDX-License-Identifier: MIT */
/*
 * The out-of-memory verdict (src/common/oom_rule.c): each class from the
 * figures that make it, the figures next to each boundary that do not,
 * the order the rule tries them in, and the line both sides print, with
 * its numbers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "oom_rule.h"

#define MiB (1LL << 20)
#define GiB (1LL << 30)

/* Nothing known but the request. */
static struct oom_facts blank(int64_t requested)
{
	struct oom_facts f = {
		.requested = requested,
		.device_total = -1,
		.device_free = -1,
		.tracked = -1,
		.others_bytes = -1,
		.other_pid = -1,
		.other_bytes = -1,
		.pool_request = -1,
		.pool_allocated = -1,
		.pool_reserved = -1,
		.pool_largest_free = -1,
	};

	return f;
}

static void judged(const struct oom_facts *f, enum oom_class want, const char *const *phrases)
{
	struct oom_verdict v;
	char line[1024];
	int n;

	oom_judge(f, &v);
	n = oom_verdict_line(line, sizeof(line), f, &v);
	if (v.cls != want)
		fail_msg("class %s, expected %s: %s", oom_class_name(v.cls), oom_class_name(want),
			 line);
	assert_int_equal(n, (int)strlen(line));
	for (; phrases && *phrases; phrases++)
		if (!strstr(line, *phrases))
			fail_msg("'%s' not in: %s", *phrases, line);
}

/* PyTorch's pool at its OutOfMemoryError: 9.4 GiB free of 78.4 GiB, but
 * no free block of 546 MiB (the message). */
static struct oom_facts fragmented(void)
{
	struct oom_facts f = blank(546 * MiB);

	f.device_total = 80 * GiB;
	f.device_free = 100 * MiB;
	f.tracked = 78 * GiB + 400 * MiB;
	f.pool = "PyTorch caching allocator";
	f.pool_bytes = f.tracked;
	f.from_pool = true;
	f.pool_request = 546 * MiB;
	f.pool_reserved = 78 * GiB + 400 * MiB;
	f.pool_allocated = 69 * GiB;
	f.pool_largest_free = 120 * MiB;
	f.pinner = "step (train.py:41)";
	f.pinner_bytes = 2 * GiB;
	f.holder = "build (model.py:12) [weights]";
	f.holder_bytes = 6 * GiB;
	return f;
}

static void test_fragmentation(void **state)
{
	struct oom_facts f = fragmented();
	struct oom_verdict v;

	judged(&f, OOM_FRAGMENTATION,
	       (const char *const[]){ "fragmentation: the PyTorch caching allocator held 9.4 GiB "
				      "free of 78.4 GiB reserved, but no free block of 546.0 MiB "
				      "(the largest: 120.0 MiB)",
				      "pinned most by step (train.py:41) (2.0 GiB)",
				      "try PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
				      NULL });
	oom_judge(&f, &v);
	assert_int_equal(v.slack, 9 * GiB + 400 * MiB);
	assert_int_equal(v.held, 69 * GiB);
	assert_int_equal(v.available, 100 * MiB);
	assert_int_equal(v.fits, 120 * MiB); /* the largest free block, above the free memory */
	assert_false(v.pool_may_retry);

	f.expandable = true;
	judged(&f, OOM_FRAGMENTATION,
	       (const char *const[]){ "expandable_segments is on already", NULL });

	/* a free block as large as the block asked for: not fragmentation */
	f = fragmented();
	f.pool_largest_free = 546 * MiB;
	judged(&f, OOM_SHORTAGE, NULL);
	/* the largest block unknown: the slack alone decides */
	f.pool_largest_free = -1;
	judged(&f, OOM_FRAGMENTATION, NULL);
	/* free memory in the pool, but less than the block */
	f = fragmented();
	f.pool_allocated = f.pool_reserved - 545 * MiB;
	judged(&f, OOM_SHORTAGE, NULL);
	f.pool_allocated = f.pool_reserved - 546 * MiB;
	judged(&f, OOM_FRAGMENTATION, NULL);
	/* the same counters from an earlier sample are never judged */
	f = fragmented();
	f.pool_request = f.pool_allocated = f.pool_reserved = f.pool_largest_free = -1;
	judged(&f, OOM_SHORTAGE,
	       (const char *const[]){
		       "the PyTorch caching allocator's segments hold 78.4 GiB of it, "
		       "part possibly free: it may empty its cache and retry",
		       NULL });
}

static struct oom_facts neighbour(void)
{
	struct oom_facts f = blank(4 * GiB);

	f.device_total = 80 * GiB;
	f.device_free = 1 * GiB;
	f.tracked = 40 * GiB;
	f.others_bytes = 30 * GiB;
	f.other_pid = 4242;
	f.other_name = "python3";
	f.other_bytes = 25 * GiB;
	return f;
}

static void test_other_process(void **state)
{
	struct oom_facts f = neighbour();
	struct oom_verdict v;

	judged(&f, OOM_OTHER_PROCESS,
	       (const char *const[]){
		       "other-process: other processes hold 30.0 GiB of this device, "
		       "the most pid 4242 (python3) with 25.0 GiB; 3.0 GiB more "
		       "was needed for 4.0 GiB",
		       NULL });
	oom_judge(&f, &v);
	assert_int_equal(v.missing, 3 * GiB);
	/* exactly what was missing is enough; a byte less is not */
	f.others_bytes = 3 * GiB;
	judged(&f, OOM_OTHER_PROCESS, NULL);
	f.others_bytes = 3 * GiB - 1;
	judged(&f, OOM_SHORTAGE, (const char *const[]){ "other processes hold 3.0 GiB", NULL });
	/* unknown (no NVML): never blamed */
	f = neighbour();
	f.others_bytes = -1;
	judged(&f, OOM_SHORTAGE, NULL);
	/* the limit refused it: the others hold nothing of the smaller card */
	f = neighbour();
	f.limit = 41 * GiB;
	f.capped = true;
	judged(&f, OOM_CAP, NULL);
}

static struct oom_facts outside(void)
{
	struct oom_facts f = blank(4 * GiB);

	f.device_total = 80 * GiB;
	f.device_free = 1 * GiB;
	f.tracked = 70 * GiB;
	f.pool = "PyTorch caching allocator";
	f.pool_bytes = 60 * GiB;
	f.from_pool = true;
	f.library_bytes = 8 * GiB;
	f.library = "cuBLAS";
	f.library_top = 8 * GiB;
	f.graph_bytes = 1 * GiB;
	return f;
}

static void test_outside(void **state)
{
	struct oom_facts f = outside();
	struct oom_verdict v;

	judged(&f, OOM_OUTSIDE,
	       (const char *const[]){ "outside-framework: 10.0 GiB of the program's memory is "
				      "outside the PyTorch caching allocator (cuBLAS 8.0 GiB, CUDA "
				      "graphs 1.0 GiB, other CUDA calls 1.0 GiB), where the pool "
				      "cannot reuse it; 3.0 GiB more was needed for 4.0 GiB",
				      NULL });
	oom_judge(&f, &v);
	assert_int_equal(v.outside, 10 * GiB);
	/* what lies outside must cover what was missing */
	f.tracked = 60 * GiB + 3 * GiB - 1;
	judged(&f, OOM_SHORTAGE, NULL);
	f.tracked = 63 * GiB;
	judged(&f, OOM_OUTSIDE, NULL);
	/* a request that is not the pool's: its memory is the outside one */
	f = outside();
	f.from_pool = false;
	judged(&f, OOM_SHORTAGE, NULL);
	/* no pool in the process: nothing is "outside" */
	f = outside();
	f.pool = NULL;
	judged(&f, OOM_SHORTAGE, NULL);
	/* other processes come first */
	f = outside();
	f.others_bytes = 5 * GiB;
	judged(&f, OOM_OTHER_PROCESS, NULL);
}

static void test_cap(void **state)
{
	struct oom_facts f = blank(1 * GiB);
	struct oom_verdict v;

	f.device_total = 80 * GiB;
	f.device_free = 70 * GiB;
	f.limit = 8 * GiB;
	f.capped = true;
	f.tracked = 7 * GiB + 512 * MiB;
	f.holder = "build (model.py:12)";
	f.holder_bytes = 6 * GiB;
	judged(&f, OOM_CAP,
	       (const char *const[]){ "cap: GPUSPY_LIMIT 8.0 GiB per device reached: the program "
				      "holds 7.5 GiB and asked 1.0 GiB more, 512.0 MiB left under "
				      "the limit: at most 512.0 MiB would have fit; "
				      "the largest holder: build (model.py:12) (6.0 GiB)",
				      NULL });
	oom_judge(&f, &v);
	assert_int_equal(v.card, 8 * GiB);
	assert_int_equal(v.available, 512 * MiB);
	assert_int_equal(v.missing, 512 * MiB);
	/* the limit set, but the device itself refused: a smaller device */
	f.capped = false;
	f.device_free = 100 * MiB;
	judged(&f, OOM_SHORTAGE, (const char *const[]){ "100.0 MiB free of 8.0 GiB", NULL });
	/* a limit above the device: the device is the card */
	f.limit = 100 * GiB;
	oom_judge(&f, &v);
	assert_int_equal(v.card, 80 * GiB);
	/* a fragmented pool under the limit: fragmentation first */
	f = fragmented();
	f.limit = 80 * GiB;
	f.capped = true;
	judged(&f, OOM_FRAGMENTATION, NULL);
}

static void test_shortage_and_unexplained(void **state)
{
	struct oom_facts f = blank(4 * GiB);
	struct oom_verdict v;

	f.device_total = 80 * GiB;
	f.device_free = 2 * GiB;
	f.tracked = 77 * GiB;
	judged(&f, OOM_SHORTAGE,
	       (const char *const[]){
		       "shortage: the program holds 77.0 GiB and asked 4.0 GiB more, "
		       "2.0 GiB free of 80.0 GiB: at most 2.0 GiB would have fit",
		       NULL });
	oom_judge(&f, &v);
	assert_int_equal(v.fits, 2 * GiB);
	assert_int_equal(v.held, 77 * GiB);
	/* the device said it had room: not a shortage */
	f.device_free = 4 * GiB;
	judged(&f, OOM_UNEXPLAINED,
	       (const char *const[]){ "unexplained: 4.0 GiB was free for a request of 4.0 GiB",
				      NULL });
	f.device_free = -1;
	judged(&f, OOM_UNEXPLAINED, (const char *const[]){ "free memory is unknown", NULL });
}

static void test_pinned_host(void **state)
{
	struct oom_facts f = blank(64 * GiB);
	struct oom_verdict v;

	f.pinned = true;
	f.device_total = 140 * GiB;
	f.device_free = 3 * GiB;
	f.tracked = 8 * GiB;
	f.limit = 8 * GiB;
	judged(&f, OOM_PINNED_HOST,
	       (const char *const[]){ "pinned-host: 64.0 GiB of pinned host memory asked",
				      "ulimit -l", NULL });
	oom_judge(&f, &v);
	assert_int_equal(v.available, -1);
	assert_int_equal(v.fits, -1);
}

static void test_line_size(void **state)
{
	struct oom_facts f = fragmented();
	struct oom_verdict v;
	char whole[1024], cut[16];
	int n;

	oom_judge(&f, &v);
	n = oom_verdict_line(whole, sizeof(whole), &f, &v);
	/* as snprintf: the length the whole needs, the buffer cut and ended */
	assert_int_equal(oom_verdict_line(cut, sizeof(cut), &f, &v), n);
	assert_int_equal(strlen(cut), sizeof(cut) - 1);
	assert_memory_equal(cut, whole, sizeof(cut) - 1);
	assert_int_equal(oom_verdict_line(NULL, 0, &f, &v), n);
	assert_string_equal(oom_class_name(OOM_OUTSIDE), "outside-framework");
	assert_string_equal(oom_class_name(OOM_CLASS_COUNT), "?");
	assert_string_equal(oom_class_name(-1), "?");
}

static void test_expandable(void **state)
{
	assert_true(oom_expandable("expandable_segments:True"));
	assert_true(oom_expandable("backend:native,expandable_segments:True"));
	assert_true(oom_expandable("max_split_size_mb:128, expandable_segments : True "));
	assert_false(oom_expandable(NULL));
	assert_false(oom_expandable(""));
	assert_false(oom_expandable("expandable_segments:False"));
	assert_false(oom_expandable("expandable_segments:true")); /* PyTorch refuses it */
	assert_false(oom_expandable("expandable_segments:Truex"));
	assert_false(oom_expandable("xexpandable_segments:True"));
	assert_false(oom_expandable("expandable_segments"));
}

static void test_size(void **state)
{
	char b[32];

	assert_string_equal(oom_size(0, b, sizeof(b)), "0 B");
	assert_string_equal(oom_size(1023, b, sizeof(b)), "1023 B");
	assert_string_equal(oom_size(1024, b, sizeof(b)), "1.0 KiB");
	assert_string_equal(oom_size(546 * MiB, b, sizeof(b)), "546.0 MiB");
	assert_string_equal(oom_size(8 * GiB, b, sizeof(b)), "8.0 GiB");
	assert_string_equal(oom_size(1024 * 1024 - 1, b, sizeof(b)), "1.0 MiB");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fragmentation),
		cmocka_unit_test(test_other_process),
		cmocka_unit_test(test_outside),
		cmocka_unit_test(test_cap),
		cmocka_unit_test(test_shortage_and_unexplained),
		cmocka_unit_test(test_pinned_host),
		cmocka_unit_test(test_line_size),
		cmocka_unit_test(test_expandable),
		cmocka_unit_test(test_size),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
