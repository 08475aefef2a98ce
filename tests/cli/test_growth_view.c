/* SPDX-License-Identifier: MIT */
/*
 * growth_view: the verdicts the processes recorded, and where none was
 * (older files) a history joined to the merged sites of a report, replayed
 * through the growth rule of src/common; cut into sparkline columns.
 * The report and the history are built here, as the loaders would leave
 * them, so that each case states its series.
 */
#include "read_test.h"

#include "growth_view.h"
#include "load_history.h"
#include "trend.h"

/* One process with sites 7 (merged into A, growing) and 9 (into B, not
 * growing), and a history with a series of each. */
struct fixture_state {
	struct rd_process proc;
	struct rd_process *procs[1];
	struct rd_site psites[2];
	struct rd_report_site a, b;
	struct rd_report_site *sites[2];
	struct rd_report_site *site_of0[2];
	struct rd_report_site **site_of[1];
	struct rd_report r;
	struct rd_hist_series series[2];
	struct rd_hist_row rows[128];
	struct rd_hist_value values[256];
	struct rd_history h;
};

static void setup_report(struct fixture_state *f)
{
	memset(f, 0, sizeof(*f));
	f->psites[0].id = 7;
	f->psites[1].id = 9;
	f->proc.sites = f->psites;
	f->proc.nsites = 2;
	f->procs[0] = &f->proc;
	f->a.key = "a";
	f->a.growing = true;
	f->b.key = "b";
	f->sites[0] = &f->a;
	f->sites[1] = &f->b;
	f->site_of0[0] = &f->a;
	f->site_of0[1] = &f->b;
	f->site_of[0] = f->site_of0;
	f->r.procs = f->procs;
	f->r.nprocs = 1;
	f->r.sites = f->sites;
	f->r.nsites = 2;
	f->r.site_of = f->site_of;
	f->series[0] = (struct rd_hist_series){ .kind = RD_HIST_SITE, .key = 7 };
	f->series[1] = (struct rd_hist_series){ .kind = RD_HIST_SITE, .key = 9 };
	f->h.present = true;
	f->h.series = f->series;
	f->h.nseries = 2;
	f->h.rows = f->rows;
	f->h.values = f->values;
}

/* A row from T0 to T1 of N samples: site 7 at MIN/MAX/LAST, site 9 at 0. */
static void add_row(struct fixture_state *f, double t0, double t1, int64_t n, int64_t min,
		    int64_t max, int64_t last)
{
	struct rd_hist_row *row = &f->rows[f->h.nrows++];

	*row = (struct rd_hist_row){ .type = n > 1 ? RD_HIST_BUCKET : RD_HIST_SAMPLE,
				     .t0 = t0,
				     .t1 = t1,
				     .n = n,
				     .first = f->h.nvalues,
				     .count = 2 };
	f->values[f->h.nvalues++] = (struct rd_hist_value){ 0, min, max, last };
	f->values[f->h.nvalues++] = (struct rd_hist_value){ 1, 0, 0, 0 };
}

static void per_sample_leak(void **state)
{
	struct fixture_state f;
	struct rd_growth_view v;
	const struct rd_growth *g;
	double rate;

	(void)state;
	setup_report(&f);
	for (int i = 0; i < 40; i++)
		add_row(&f, i, i, 1, (int64_t)i * MiB, (int64_t)i * MiB, (int64_t)i * MiB);
	/* an event between samples counts for nothing */
	f.rows[f.h.nrows++] = (struct rd_hist_row){ .type = RD_HIST_EVENT, .t0 = 40, .t1 = 40 };
	assert_int_equal(growth_view_build(&f.r, &f.h, &v), 0);
	assert_true(v.history);
	assert_int_equal(v.nsites, 1);
	g = growth_view_find(&v, &f.a);
	assert_non_null(g);
	assert_null(growth_view_find(&v, &f.b));
	assert_true(g->fired);
	/* which shape is the rule's to say (its own tests): growing is enough */
	assert_int_not_equal(g->shape, TREND_NONE);
	assert_int_equal(g->nrows, 40);
	assert_true(g->rate_bps > 0.8 * MiB && g->rate_bps < 1.2 * MiB);
	assert_true(g->since_s >= 0 && g->since_s < 10);

	f.r.growth = &v;
	assert_true(growth_rate_of(&f.r, &f.a, &rate));
	assert_true(rate == g->rate_bps);
	/* a site that does not grow has a known rate of 0 */
	assert_true(growth_rate_of(&f.r, &f.b, &rate));
	assert_true(rate == 0);
	assert_false(growth_rate_of(&f.r, NULL, &rate));
	f.r.growth = NULL;
	assert_false(growth_rate_of(&f.r, &f.a, &rate));
	growth_view_clear(&v);
}

/* Buckets whose max rises but whose min stays at 0 (allocate and free
 * within each bucket): their floor does not rise, so the replay does not
 * find them growing, though drawn by max the sparkline rises. */
static void buckets_count_by_min(void **state)
{
	struct fixture_state f;
	struct rd_growth_view v;
	const struct rd_growth *g;
	int64_t col[24];

	(void)state;
	setup_report(&f);
	for (int i = 0; i < 40; i++)
		add_row(&f, i * 8, i * 8 + 7, 8, 0, (int64_t)(i + 1) * MiB, 0);
	assert_int_equal(growth_view_build(&f.r, &f.h, &v), 0);
	g = growth_view_find(&v, &f.a);
	assert_non_null(g);
	assert_false(g->fired);
	assert_true(g->rate_bps == 0);
	assert_int_equal(growth_columns(g->rows, g->nrows, 24, GROWTH_PICK_MAX, NULL, col), 24);
	assert_true(col[0] < col[23]);
	assert_int_equal(col[23], 40 * MiB);
	growth_view_clear(&v);
}

/* Without a history there is nothing, and no rate is known. */
static void no_history(void **state)
{
	struct fixture_state f;
	struct rd_growth_view v;
	double rate;

	(void)state;
	setup_report(&f);
	f.h.present = false;
	assert_int_equal(growth_view_build(&f.r, &f.h, &v), 0);
	assert_false(v.history);
	assert_null(growth_view_find(&v, &f.a) ? growth_view_find(&v, &f.a)->rows : NULL);
	f.r.growth = &v;
	assert_false(growth_rate_of(&f.r, &f.b, &rate));
	growth_view_clear(&v);
}

/*
 * The process's verdict is the verdict: a site that recorded one
 * (sites[].growth) is said as recorded - shape, since, rate, stopped,
 * until - whatever its replayed history would say, and without a history
 * too; the history still gives its sparkline.  A site that grew, then
 * stopped has a known growth rate of 0.
 */
static void recorded_verdict(void **state)
{
	struct fixture_state f;
	struct rd_growth_view v;
	const struct rd_growth *g;
	double rate;

	(void)state;
	for (int with_history = 0; with_history <= 1; with_history++) {
		setup_report(&f);
		f.a.flagged = true;
		f.psites[0].growth = (struct rd_verdict){ .present = true,
							  .state = TREND_GROWING,
							  .shape = TREND_STAIRCASE,
							  .since_s = 12,
							  .rate_bps = 3 * MiB,
							  .until_s = 30 };
		/* a per-sample leak in the history, which a replay would say */
		for (int i = 0; i < 40; i++)
			add_row(&f, i, i, 1, (int64_t)i * MiB, (int64_t)i * MiB, (int64_t)i * MiB);
		f.h.present = with_history;
		assert_int_equal(growth_view_build(&f.r, &f.h, &v), 0);
		g = growth_view_find(&v, &f.a);
		assert_non_null(g);
		assert_true(g->recorded && g->fired);
		assert_int_equal(g->state, TREND_GROWING);
		assert_int_equal(g->shape, TREND_STAIRCASE);
		assert_true(g->since_s == 12 && g->rate_bps == 3 * MiB && g->until_s == 30);
		assert_int_equal(g->nrows, with_history ? 40 : 0);
		f.r.growth = &v;
		assert_true(growth_rate_of(&f.r, &f.a, &rate));
		assert_true(rate == 3 * MiB);
		growth_view_clear(&v);
	}

	/* grew, then stopped: said so, and its rate is 0 */
	setup_report(&f);
	f.a.growing = false;
	f.a.flagged = f.a.stopped = true;
	f.psites[0].growth = (struct rd_verdict){ .present = true,
						  .state = TREND_STOPPED,
						  .shape = TREND_PER_SAMPLE,
						  .since_s = 0.1,
						  .rate_bps = 10 * MiB,
						  .until_s = 0.4 };
	f.h.present = false;
	assert_int_equal(growth_view_build(&f.r, &f.h, &v), 0);
	g = growth_view_find(&v, &f.a);
	assert_non_null(g);
	assert_int_equal(g->state, TREND_STOPPED);
	assert_true(g->until_s == 0.4);
	f.r.growth = &v;
	assert_true(growth_rate_of(&f.r, &f.a, &rate));
	assert_true(rate == 0);
	growth_view_clear(&v);
}

static void columns(void **state)
{
	struct rd_growth_row rows[100];
	double t[10];
	int64_t v[10];

	(void)state;
	for (int i = 0; i < 100; i++)
		rows[i] = (struct rd_growth_row){ i, i, i, i % 10 == 3 ? 1000 + i : i, i };
	/* fewer rows than columns: one point each */
	assert_int_equal(growth_columns(rows, 3, 10, GROWTH_PICK_LAST, t, v), 3);
	assert_true(v[0] == 0 && v[2] == 2 && t[2] == 2);
	/* spans of equal time: the highest in each, or the latest */
	assert_int_equal(growth_columns(rows, 100, 10, GROWTH_PICK_MAX, t, v), 10);
	for (int k = 0; k < 9; k++)
		assert_int_equal(v[k], 1000 + 10 * k + 3);
	assert_int_equal(growth_columns(rows, 100, 10, GROWTH_PICK_LAST, t, v), 10);
	assert_int_equal(v[9], 99);
	assert_true(t[9] == 99);
	for (int k = 1; k < 10; k++)
		assert_true(v[k] > v[k - 1] && t[k] > t[k - 1]);
	/* a gap in time: the spans it covers repeat the value before it */
	rows[0] = (struct rd_growth_row){ 0, 0, 5, 5, 5 };
	rows[1] = (struct rd_growth_row){ 0, 1, 6, 6, 6 };
	for (int i = 2; i < 12; i++)
		rows[i] = (struct rd_growth_row){ 100 + i, 100 + i, 7, 7, 7 };
	assert_int_equal(growth_columns(rows, 12, 10, GROWTH_PICK_LAST, t, v), 10);
	assert_int_equal(v[0], 6);
	assert_int_equal(v[5], 6);
	assert_int_equal(v[9], 7);
	/* every row at one time: one point */
	for (int i = 0; i < 12; i++)
		rows[i].t1 = 3;
	assert_int_equal(growth_columns(rows, 12, 10, GROWTH_PICK_MAX, NULL, v), 1);
	assert_int_equal(v[0], 7);
	assert_int_equal(growth_columns(rows, 0, 10, GROWTH_PICK_MAX, NULL, v), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(per_sample_leak), cmocka_unit_test(buckets_count_by_min),
		cmocka_unit_test(no_history),	   cmocka_unit_test(recorded_verdict),
		cmocka_unit_test(columns),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
