/* SPDX-License-Identifier: MIT */
/*
 * history.c, driven with a clock of its own: a simulated 24-hour run at
 * one sample a second with 1,000 call sites must leave a history.jsonl
 * within the bound libgpuspy(7) states, that gpuspy_read reads back with
 * every peak still in it; and the writer's cost per interval, printed,
 * grows with the sites, not with the samples taken.  The frameworks'
 * counters' series keep their peaks through the buckets too.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <cmocka.h>

#include "fw_counters.h"
#include "history.h"
#include "load_history.h"

#define MiB (1LL << 20)
/* libgpuspy(7), HISTORY: a day at 1 s with 1,000 sites. */
#define DAY_BOUND (3 * MiB)
/* docs/format.md: with the PyTorch view's series on one GPU */
#define DAY_BOUND_TORCH (4 * MiB)
#define SPIKE		(100LL << 30)
/* a mark at the middle of every hour */
#define MARKS_A_DAY 24

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *out_dir(const char *name)
{
	const char *base = getenv("GPUSPY_OUTPUT_DIR");
	char *dir = NULL;

	assert_non_null(base);
	mkdir(base, 0777);
	assert_true(asprintf(&dir, "%s/%s", base, name) > 0);
	return dir;
}

/*
 * SITES sites for SAMPLES seconds: site S holds (S + 1) * 16 MiB (values
 * of up to 11 digits, as on a large GPU), sites below 100 also leak S *
 * 4 KiB a second (so that, as the day goes on, they overtake the others
 * and become series too), and site SITES - 1 holds SPIKE for the one
 * second at SPIKE_AT.  With TORCH, the PyTorch view's 16 lines of the
 * longest keys and the pool of one GPU too, each of 11 digits.  The mean
 * and the worst cost of a sample, in microseconds, in COST.
 */
static void simulate_with(const char *dir, unsigned sites, unsigned samples, unsigned spike_at,
			  bool torch, double cost[2])
{
	long long *peak = calloc(sites, sizeof(*peak));
	double total = 0, worst = 0;

	assert_non_null(peak);
	history_reset();
	history_setup(dir, 1764500000.0, 1.0);
	for (unsigned id = 0; torch && id < 16; id++) {
		/* the longest key the store takes: 2,047 bytes */
		static const char tail[] = "\",\"line\":1}]";
		char key[2048];
		int n = snprintf(key, sizeof(key), "[{\"file\":\"/src/f%u.py\",\"function\":\"",
				 id);

		memset(key + n, 'x', sizeof(key) - (size_t)n - sizeof(tail));
		memcpy(key + sizeof(key) - sizeof(tail), tail, sizeof(tail));
		assert_int_equal(history_torch_line(id, key), 0);
	}
	for (unsigned i = 0; i < samples; i++) {
		double t0 = now_s(), dt;
		long long device = 0;

		if (torch) {
			long long pool[] = { 0, 99999999999LL - i, 88888888888LL - i }, lines[32];

			for (unsigned id = 0; id < 16; id++) {
				lines[2 * id] = id;
				lines[2 * id + 1] = 77777777777LL - i - id;
			}
			assert_int_equal(history_torch(pool, 1, lines, 16, 66666666666LL - i), 0);
		}

		history_begin((double)i);
		for (unsigned s = 0; s < sites; s++) {
			long long live = (long long)(s + 1) << 24;

			if (s < 100)
				live += (long long)s * i * 4096;
			if (s == sites - 1 && i == spike_at)
				live = SPIKE;
			if (live > peak[s])
				peak[s] = live;
			device += live;
			history_site(s, "device", live, peak[s]);
		}
		history_device(0, device);
		history_end();
		if (i % 3600 == 1800)
			history_event_at(i + 0.5, HISTORY_MARK, "hour", 0);
		dt = now_s() - t0;
		total += dt;
		if (dt > worst)
			worst = dt;
	}
	cost[0] = total / samples * 1e6;
	cost[1] = worst * 1e6;
	free(peak);
}

static void simulate(const char *dir, unsigned sites, unsigned samples, unsigned spike_at,
		     double cost[2])
{
	simulate_with(dir, sites, samples, spike_at, false, cost);
}

static void test_day(void **state)
{
	char *dir = out_dir("history-day"), *file = NULL;
	struct rd_error err = { .msg = "" };
	struct history_stats st;
	struct rd_history h;
	double cost[2];
	int64_t spike = 0, leak_last = 0;
	size_t site_series = 0, marks = 0;

	(void)state;
	simulate(dir, 1000, 86400, 5000, cost);
	history_get_stats(&st);
	printf("# 24 h at 1 s, 1,000 sites: history.jsonl at most %llu bytes (now %llu), "
	       "%u series, %llu rewrites, buckets of %llu s\n",
	       st.max_bytes, st.file_bytes, st.series, st.compactions, st.width);
	printf("# cost per interval: %.1f us mean, %.0f us worst (a rewrite)\n", cost[0], cost[1]);
	assert_int_equal(st.off, 0);
	assert_int_equal(st.samples, 86400);
	assert_true(st.compactions > 0);
	assert_true(st.max_bytes <= DAY_BOUND);
	history_reset();

	/* what is left reads back, and the one-second spike is in it */
	assert_true(asprintf(&file, "%s/history.jsonl", dir) > 0);
	if (load_history_file(file, 0, &h, &err) < 0)
		fail_msg("%s", err.msg);
	for (size_t i = 0; i < h.nseries; i++)
		site_series += h.series[i].kind == RD_HIST_SITE;
	/* the 32 largest at the start, then every leaking site that ranked
	 * among the 32 largest some time later (site 999 always does) */
	assert_true(site_series >= 60 && site_series <= 64);
	for (size_t r = 0; r < h.nrows; r++) {
		marks += h.rows[r].type == RD_HIST_EVENT;
		for (size_t k = 0; k < h.rows[r].count; k++) {
			const struct rd_hist_value *v = &h.values[h.rows[r].first + k];
			const struct rd_hist_series *s = &h.series[v->series];

			if (s->kind == RD_HIST_SITE && s->key == 999 && v->max > spike)
				spike = v->max;
			if (s->kind == RD_HIST_SITE && s->key == 99)
				leak_last = v->last;
		}
	}
	/* every mark outlives the rewrites */
	assert_int_equal(marks, MARKS_A_DAY);
	assert_int_equal(spike, SPIKE);
	assert_int_equal(leak_last, (100LL << 24) + 99LL * 86399 * 4096);
	assert_true(h.nrows <= 256 + 256 + 4096);
	rd_history_clear(&h);
	free(file);
	free(dir);
}

/* The same day in a PyTorch process: within its bound, and read back. */
static void test_day_torch(void **state)
{
	char *dir = out_dir("history-day-torch"), *file = NULL;
	struct rd_error err = { .msg = "" };
	struct history_stats st;
	struct rd_history h;
	size_t torch_series = 0;
	double cost[2];

	(void)state;
	simulate_with(dir, 1000, 86400, 5000, true, cost);
	history_get_stats(&st);
	printf("# 24 h at 1 s, 1,000 sites, PyTorch's view: history.jsonl at most %llu bytes "
	       "(now %llu), %u series\n",
	       st.max_bytes, st.file_bytes, st.series);
	assert_int_equal(st.off, 0);
	assert_true(st.max_bytes <= DAY_BOUND_TORCH);
	history_reset();
	assert_true(asprintf(&file, "%s/history.jsonl", dir) > 0);
	if (load_history_file(file, 0, &h, &err) < 0)
		fail_msg("%s", err.msg);
	for (size_t i = 0; i < h.nseries; i++)
		torch_series += h.series[i].kind == RD_HIST_TORCH;
	assert_int_equal(torch_series, 16);
	rd_history_clear(&h);
	free(file);
	free(dir);
}

/* O(sites): the mean cost of an interval at 1,000 and at 10,000 sites. */
static void test_cost(void **state)
{
	char *dir = out_dir("history-cost");
	double small[2], large[2];

	(void)state;
	simulate(dir, 1000, 3000, 0, small);
	simulate(dir, 10000, 3000, 0, large);
	history_reset();
	printf("# cost per interval: %.1f us at 1,000 sites, %.1f us at 10,000\n", small[0],
	       large[0]);
	free(dir);
}

/* A directory that cannot be made: one warning, then the history is off
 * and every later call returns at once. */
static void test_failure(void **state)
{
	struct history_stats st;

	(void)state;
	history_reset();
	history_setup("/proc/self/no/such/dir", 1764500000.0, 1.0);
	for (unsigned i = 0; i < 10; i++) {
		history_begin((double)i);
		history_site(1, "device", 1 << 20, 1 << 20);
		history_device(0, 1 << 20);
		history_end();
		history_event_at(i + 0.5, HISTORY_MARK, "m", 0);
	}
	history_get_stats(&st);
	assert_int_equal(st.off, 1);
	assert_int_equal(st.file_bytes, 0);
	history_reset();
}

/*
 * The PyTorch view's series: what it hands over out of range is refused
 * whole; a line keeps its first key; a one-sample spike of a line and
 * of the pool outlives the rewrites, and the reader labels the line by
 * its innermost frame.
 */
static void test_torch(void **state)
{
	static const char frames[] = "[{\"file\":\"/src/train.py\",\"function\":\"step\","
				     "\"line\":41},{\"file\":\"/src/train.py\",\"function\":"
				     "\"<module>\",\"line\":60}]";
	char *dir = out_dir("history-torch"), *file = NULL;
	struct rd_error err = { .msg = "" };
	long long bad_pool[] = { 16, 1, 1 }, bad_line[] = { 0, -1 };
	int64_t line_max = 0, line_last = 0, reserved_max = 0, other_last = -1;
	struct history_stats st;
	struct rd_history h;
	const char *label = NULL;

	(void)state;
	history_reset();
	history_setup(dir, 1764500000.0, 1.0);
	assert_int_equal(history_torch_line(16, frames), -EINVAL);
	assert_int_equal(history_torch_line(0, "[{\"file\":\"a\n\"}]"), -EINVAL);
	assert_int_equal(history_torch_line(0, "{}"), -EINVAL);
	assert_int_equal(history_torch(bad_pool, 1, NULL, 0, 0), -EINVAL);
	assert_int_equal(history_torch(NULL, 0, bad_line, 1, 0), -EINVAL);
	assert_int_equal(history_torch(NULL, 0, NULL, 0, -1), -EINVAL);
	assert_int_equal(history_torch_line(5, frames), 0);
	assert_int_equal(history_torch_line(5, "[]"), 0); /* the first key stays */
	for (unsigned i = 0; i < 20000; i++) {
		long long live = i == 3000 ? SPIKE : (long long)i * 4096;
		long long pool[] = { 0, live + MiB, live }, lines[] = { 5, live };

		history_begin((double)i);
		history_site(1, "device", MiB, MiB);
		history_device(0, MiB);
		if (i >= 10)
			assert_int_equal(history_torch(pool, 1, lines, 1, 7), 0);
		history_end();
	}
	history_get_stats(&st);
	assert_int_equal(st.off, 0);
	assert_true(st.compactions > 0);
	history_reset();

	assert_true(asprintf(&file, "%s/history.jsonl", dir) > 0);
	if (load_history_file(file, 0, &h, &err) < 0)
		fail_msg("%s", err.msg);
	for (size_t r = 0; r < h.nrows; r++) {
		for (size_t k = 0; k < h.rows[r].count; k++) {
			const struct rd_hist_value *v = &h.values[h.rows[r].first + k];
			const struct rd_hist_series *s = &h.series[v->series];

			if (s->kind == RD_HIST_TORCH) {
				assert_int_equal(s->key, 5);
				label = s->label;
				if (v->max > line_max)
					line_max = v->max;
				line_last = v->last;
			}
			if (s->kind == RD_HIST_POOL_RESERVED && v->max > reserved_max)
				reserved_max = v->max;
			if (s->kind == RD_HIST_TORCH_OTHER)
				other_last = v->last;
		}
	}
	assert_non_null(label);
	assert_string_equal(label, "/src/train.py:41");
	assert_int_equal(line_max, SPIKE);
	assert_int_equal(line_last, 19999LL * 4096);
	assert_int_equal(reserved_max, SPIKE + MiB);
	assert_int_equal(other_last, 7);
	rd_history_clear(&h);
	free(file);
	free(dir);
}

/*
 * The frameworks' counters (fw_counters.h) through 20,000 samples: a
 * spike of one sample survives the buckets as its counter's max, a
 * counter keeps its last, the places and counters are read back as
 * written, values out of range are refused, and at most 64 series are
 * made (the 16 places of 6 counters of one framework: 102 offered).
 */
static void test_fw(void **state)
{
	char *dir = out_dir("history-fw"), *file = NULL;
	struct rd_error err = { .msg = "" };
	long long bad_place[] = { GS_FW_PLACES, 0, 1 }, bad_counter[] = { 0, GS_FWC_COUNT, 1 },
		  bad_value[] = { 0, 0, -1 };
	int64_t alloc_max = 0, alloc_last = -1, host_last = -1;
	size_t nfw = 0;
	struct history_stats st;
	struct rd_history h;

	(void)state;
	history_reset();
	fw_counters_reset();
	history_setup(dir, 1764500000.0, 1.0);
	assert_int_equal(fw_counters_put(GS_FW_COUNT, NULL, 0), -EINVAL);
	assert_int_equal(fw_counters_put(GS_FW_CUPY, bad_place, 1), -EINVAL);
	assert_int_equal(fw_counters_put(GS_FW_CUPY, bad_counter, 1), -EINVAL);
	assert_int_equal(fw_counters_put(GS_FW_CUPY, bad_value, 1), -EINVAL);
	for (unsigned i = 0; i < 20000; i++) {
		long long a = i == 3000 ? SPIKE : (long long)i * 4096;
		long long cupy[] = { 0,		 GS_FWC_ALLOCATED,   a,
				     0,		 GS_FWC_RESERVED,    a + MiB,
				     GS_FW_HOST, GS_FWC_FREE_BLOCKS, i % 7 };
		long long many[GS_FW_DEVICES * GS_FWC_COUNT * 3];
		unsigned n = 0;

		for (int d = 0; d < GS_FW_DEVICES; d++)
			for (int c = 0; c < GS_FWC_COUNT; c++) {
				many[3 * n] = d;
				many[3 * n + 1] = c;
				many[3 * n + 2] = 1;
				n++;
			}
		history_begin((double)i);
		history_device(0, MiB);
		if (i >= 10)
			assert_int_equal(fw_counters_put(GS_FW_CUPY, cupy, 3), 0);
		if (i >= 20)
			assert_int_equal(fw_counters_put(GS_FW_JAX, many, n), 0);
		history_end();
	}
	history_get_stats(&st);
	assert_int_equal(st.off, 0);
	assert_true(st.compactions > 0);
	history_reset();
	fw_counters_reset();

	assert_true(asprintf(&file, "%s/history.jsonl", dir) > 0);
	if (load_history_file(file, 0, &h, &err) < 0)
		fail_msg("%s", err.msg);
	for (size_t i = 0; i < h.nseries; i++)
		nfw += h.series[i].kind == RD_HIST_FW;
	for (size_t r = 0; r < h.nrows; r++) {
		for (size_t k = 0; k < h.rows[r].count; k++) {
			const struct rd_hist_value *v = &h.values[h.rows[r].first + k];
			const struct rd_hist_series *s = &h.series[v->series];
			int fw, place, c;

			if (s->kind != RD_HIST_FW)
				continue;
			rd_hist_fw_split(s->key, &fw, &place, &c);
			if (fw == GS_FW_CUPY && place == 0 && c == GS_FWC_ALLOCATED) {
				if (v->max > alloc_max)
					alloc_max = v->max;
				alloc_last = v->last;
			}
			if (fw == GS_FW_CUPY && place == GS_FW_HOST)
				host_last = v->last;
		}
	}
	assert_int_equal(nfw, 64);
	assert_int_equal(alloc_max, SPIKE);
	assert_int_equal(alloc_last, 19999LL * 4096);
	assert_int_equal(host_last, 19999 % 7);
	rd_history_clear(&h);
	free(file);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_day),   cmocka_unit_test(test_day_torch),
		cmocka_unit_test(test_cost),  cmocka_unit_test(test_failure),
		cmocka_unit_test(test_torch), cmocka_unit_test(test_fw),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
