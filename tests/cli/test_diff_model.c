/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of gpuspy_read, diff.c: two runs matched site by site on the
 * stable key, their status (same, changed, new, vanished), deltas and
 * order, and the --fail-on-growth count; the PyTorch views matched without
 * their lines.
 */
#include "read_test.h"

/* A merged site of KEY with these counters. */
static struct rd_report_site mk(const char *key, int64_t live, int64_t peak, int64_t allocs)
{
	struct rd_report_site s = { .key = (char *)key };

	s.c.live_bytes = live;
	s.c.peak_bytes = peak;
	s.c.allocations = allocs;
	return s;
}

static const struct diff_row *row_of(const struct diff *d, const char *key)
{
	for (size_t i = 0; i < d->nrows; i++)
		if (strcmp(d->rows[i].key, key) == 0)
			return &d->rows[i];
	fail_msg("no row %s", key);
	return NULL;
}

/* OLD and NEW sites, in the order given (a merged report's order is not
 * the key's). */
struct two {
	struct rd_report_site o[4], n[4];
	struct rd_report_site *op[4], *np[4];
};

static void sides(struct diff *d, struct two *t, size_t no, size_t nn)
{
	for (size_t i = 0; i < no; i++)
		t->op[i] = &t->o[i];
	for (size_t i = 0; i < nn; i++)
		t->np[i] = &t->n[i];
	d->side[0].rep.sites = t->op;
	d->side[0].rep.nsites = no;
	d->side[1].rep.sites = t->np;
	d->side[1].rep.nsites = nn;
}

static void test_diff_match_status(void **state)
{
	struct diff d = { .fail_limit = -1 };
	struct two t = {
		.o = { mk("cuMemAlloc_v2|a!f", 100, 200, 3), mk("cuMemAlloc_v2|a!gone", 0, 50, 1),
		       mk("cuMemAlloc_v2|a!same", 10, 10, 1) },
		.n = { mk("cuMemAlloc_v2|a!same", 10, 10, 1), mk("cuMemAlloc_v2|a!new", 7, 9, 2),
		       mk("cuMemAlloc_v2|a!f", 40, 500, 5) },
	};
	const struct diff_row *w;

	sides(&d, &t, 3, 3);
	assert_int_equal(diff_match(&d), 0);
	/* one row per key on either side */
	assert_int_equal(d.nrows, 4);

	w = row_of(&d, "cuMemAlloc_v2|a!f");
	assert_int_equal(w->status, DIFF_CHANGED);
	assert_ptr_equal(w->site[0], &t.o[0]);
	assert_ptr_equal(w->site[1], &t.n[2]);
	assert_int_equal(w->d_leaked, -60);
	assert_int_equal(w->d_peak, 300);
	assert_int_equal(w->d_allocs, 2);
	/* how much it changed: the larger of |leaked| and |peak| */
	assert_int_equal(w->size, 300);
	assert_ptr_equal(diff_row_site(w), &t.n[2]);

	w = row_of(&d, "cuMemAlloc_v2|a!gone");
	assert_int_equal(w->status, DIFF_VANISHED);
	assert_null(w->site[1]);
	assert_int_equal(w->d_peak, -50);
	assert_int_equal(w->size, 50);
	assert_ptr_equal(diff_row_site(w), &t.o[1]);

	w = row_of(&d, "cuMemAlloc_v2|a!new");
	assert_int_equal(w->status, DIFF_NEW);
	assert_null(w->site[0]);
	assert_int_equal(w->d_leaked, 7);
	assert_int_equal(w->d_peak, 9);
	assert_int_equal(w->d_allocs, 2);

	w = row_of(&d, "cuMemAlloc_v2|a!same");
	assert_int_equal(w->status, DIFF_SAME);
	assert_int_equal(w->size, 0);

	/* most changed first, ties by key */
	assert_string_equal(d.rows[0].key, "cuMemAlloc_v2|a!f");
	assert_string_equal(d.rows[1].key, "cuMemAlloc_v2|a!gone");
	assert_string_equal(d.rows[2].key, "cuMemAlloc_v2|a!new");
	assert_string_equal(d.rows[3].key, "cuMemAlloc_v2|a!same");
	assert_int_equal(d.failed, 0);
	free(d.rows);

	assert_string_equal(diff_status_name(DIFF_SAME), "same");
	assert_string_equal(diff_status_name(DIFF_CHANGED), "changed");
	assert_string_equal(diff_status_name(DIFF_NEW), "new");
	assert_string_equal(diff_status_name(DIFF_VANISHED), "vanished");
}

/* An allocation count alone changes a site too. */
static void test_diff_match_allocs_only(void **state)
{
	struct diff d = { .fail_limit = 0 };
	struct two t = { .o = { mk("k", 5, 5, 1) }, .n = { mk("k", 5, 5, 9) } };

	sides(&d, &t, 1, 1);
	assert_int_equal(diff_match(&d), 0);
	assert_int_equal(d.nrows, 1);
	assert_int_equal(d.rows[0].status, DIFF_CHANGED);
	assert_int_equal(d.rows[0].d_allocs, 8);
	assert_int_equal(d.rows[0].size, 0);
	/* no byte grew: --fail-on-growth 0 is not tripped */
	assert_int_equal(d.failed, 0);
	free(d.rows);
}

/* --fail-on-growth SIZE: a site whose leaked or peak bytes grew by more
 * than SIZE; exactly SIZE, a shrink, or a new site below it do not. */
static void test_diff_fail_on_growth(void **state)
{
	struct two t = {
		.o = { mk("a", 0, 1000, 1), mk("b", 1000, 1000, 1), mk("c", 5000, 5000, 1) },
		.n = { mk("a", 0, 2000, 1), mk("b", 2001, 2001, 1), mk("c", 0, 0, 1),
		       mk("d", 999, 999, 1) },
	};
	struct diff d = { .fail_limit = 1000 };

	sides(&d, &t, 3, 4);
	assert_int_equal(diff_match(&d), 0);
	/* a: +1000, not more; b: +1001; c: shrank; d: new, +999 */
	assert_int_equal(d.failed, 1);
	free(d.rows);

	d = (struct diff){ .fail_limit = 998 };
	sides(&d, &t, 3, 4);
	assert_int_equal(diff_match(&d), 0);
	/* a, b and d */
	assert_int_equal(d.failed, 3);
	free(d.rows);

	d = (struct diff){ .fail_limit = -1 };
	sides(&d, &t, 3, 4);
	assert_int_equal(diff_match(&d), 0);
	assert_int_equal(d.failed, 0);
	free(d.rows);
}

static void test_diff_saturate(void **state)
{
	assert_int_equal(diff_sub_sat(5, 7), -2);
	assert_true(diff_sub_sat(INT64_MAX, -1) == INT64_MAX);
	assert_true(diff_sub_sat(INT64_MIN, 1) == INT64_MIN);
	assert_int_equal(diff_abs_sat(-3), 3);
	assert_true(diff_abs_sat(INT64_MIN) == INT64_MAX);
}

/* PyTorch views: matched on file basenames and functions, not lines. */
static void test_diff_match_torch(void **state)
{
	struct rd_report_tsite o1 = { .key = "a.py!f:12;a.py!<module>:30",
				      .live_bytes = 100,
				      .peak_bytes = 100 };
	struct rd_report_tsite n1 = { .key = "a.py!f:14;a.py!<module>:31",
				      .live_bytes = 4196,
				      .peak_bytes = 5000 };
	struct rd_report_tsite n2 = { .key = "b.py!g:1", .live_bytes = 10, .peak_bytes = 10 };
	struct rd_report_tsite *os[] = { &o1 }, *ns[] = { &n1, &n2 };
	struct diff d = { .fail_limit = 4000 };

	d.side[0].rep.torch = (struct rd_report_torch){ .present = true, .sites = os, .nsites = 1 };
	d.side[1].rep.torch = (struct rd_report_torch){ .present = true, .sites = ns, .nsites = 2 };
	assert_int_equal(diff_match_torch(&d), 0);
	assert_true(d.torch);
	assert_int_equal(d.ntrows, 2);
	/* by how much the live bytes changed */
	assert_string_equal(d.trows[0].key, "a.py!f;a.py!<module>");
	assert_int_equal(d.trows[0].status, DIFF_CHANGED);
	assert_int_equal(d.trows[0].live[0], 100);
	assert_int_equal(d.trows[0].live[1], 4196);
	assert_string_equal(d.trows[1].key, "b.py!g");
	assert_int_equal(d.trows[1].status, DIFF_NEW);
	/* +4096 live bytes > 4000 */
	assert_int_equal(d.failed, 1);
	for (size_t i = 0; i < d.ntrows; i++)
		free(d.trows[i].key);
	free(d.trows);
}

/* The same run on both sides, loaded from the fixtures: every site the
 * same, nothing grew; settings and totals are the same on both sides. */
static void test_diff_same_run(void **state)
{
	struct diff d = { .fail_limit = 0 };
	struct rd_error err = { "" };
	struct diff_setting_row *set = NULL;
	struct diff_total *tot = NULL;
	size_t nset = 0, ntot = 0;

	d.side[0].name = "OLD";
	d.side[1].name = "NEW";
	assert_int_equal(diff_add_path(&d.side[0], fixture("run")), 0);
	assert_int_equal(diff_add_path(&d.side[1], fixture("run")), 0);
	for (int k = 0; k < 2; k++)
		assert_int_equal(diff_side_load(&d.side[k], NULL, &err), 0);
	assert_int_equal(diff_match(&d), 0);
	assert_int_equal(d.nrows, d.side[0].rep.nsites);
	assert_true(d.nrows > 0);
	for (size_t i = 0; i < d.nrows; i++) {
		assert_int_equal(d.rows[i].status, DIFF_SAME);
		assert_non_null(d.rows[i].site[0]);
		assert_non_null(d.rows[i].site[1]);
	}
	assert_int_equal(d.failed, 0);
	assert_int_equal(diff_settings(&d, &set, &nset), 0);
	/* both sides say the same; a setting that differs between the
	 * processes of one run (their command) is still shown as differing */
	for (size_t i = 0; i < nset; i++) {
		assert_int_equal(set[i].v[0].distinct, set[i].v[1].distinct);
		assert_true((!set[i].v[0].value && !set[i].v[1].value) ||
			    strcmp(set[i].v[0].value, set[i].v[1].value) == 0);
		assert_true(set[i].differs == (set[i].v[0].distinct > 1 || !set[i].v[0].value));
	}
	assert_int_equal(diff_totals(&d, &tot, &ntot), 0);
	for (size_t i = 0; i < ntot; i++) {
		assert_true(tot[i].v[0] == tot[i].v[1]);
		assert_true(i == 0 || tot[i - 1].device <= tot[i].device);
	}
	diff_settings_free(set, nset);
	free(tot);
	diff_clear(&d);
}

/* --at LABEL on a run without marks: one line naming the run. */
static void test_diff_at_missing(void **state)
{
	struct diff_side s = { .name = "OLD" };
	struct rd_error err = { "" };

	assert_int_equal(diff_add_path(&s, fixture("run")), 0);
	assert_int_equal(diff_side_load(&s, "warmup", &err), -EINVAL);
	assert_non_null(strstr(err.msg, "OLD run: no process has a mark \"warmup\""));
	assert_non_null(strstr(err.msg, "it has no marks"));
	diff_side_clear(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_diff_match_status),
		cmocka_unit_test(test_diff_match_allocs_only),
		cmocka_unit_test(test_diff_fail_on_growth),
		cmocka_unit_test(test_diff_saturate),
		cmocka_unit_test(test_diff_match_torch),
		cmocka_unit_test(test_diff_same_run),
		cmocka_unit_test(test_diff_at_missing),
	};

	if (read_test_init() < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
