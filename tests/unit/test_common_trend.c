/* SPDX-License-Identifier: MIT */
/*
 * The growth rule against a table of synthetic series: what must be
 * flagged, by which sample at the latest, and what must never be; what
 * grew and then stayed is called stopped by the end, and what keeps rising
 * never is.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "trend.h"

#define MiB (1024LL * 1024)

enum gen {
	STAIR,	    /* base + step per epoch, + a sawtooth */
	DRIFT,	    /* base + step per sample, + a sawtooth */
	RANDOM,	    /* base + uniform [0, amp): a cycle sampled at random phase */
	JITTER,	    /* base x (1 + uniform [-frac, +frac]) */
	STEPS,	    /* base + step per `epoch` samples, `rises` times, then flat */
	LATE,	    /* base for `epoch` samples, then + step per sample */
	FREED,	    /* base for `epoch` samples, then nothing */
	DOUBLE,	    /* base x (2^(k+1) - 1) from sample 2^k - 1, k < `rises`: a pool
		 * that doubles its segments each time it fills, then stays */
	TWO_EPOCHS, /* base + step per epoch, epochs of `epoch` and `period`
		     * samples in turn */
};

struct vec {
	const char *name;
	enum gen gen;
	uint64_t n;
	long long base, step;
	uint64_t epoch, phase;	 /* STAIR: epoch length, samples already past */
	long long amp;		 /* sawtooth or random amplitude */
	uint64_t period, sphase; /* sawtooth */
	double frac;		 /* JITTER; others: x (1 + uniform [-frac, +frac]) */
	long long noise;	 /* + uniform [0, noise) */
	unsigned rises;		 /* STEPS */
	bool rising0;		 /* STAIR: the first epoch seen is a rising one */
	long long deadline;	 /* growing: fired by this sample index; -1: never;
				  * ANY: either (while it rises it cannot be told) */
	long long earliest;	 /* and not before this one: five rises seen */
	uint64_t quiet;		 /* never growing from this sample on (0: not checked) */
	enum trend_shape shape;	 /* expected, TREND_NONE: not checked */
	/* stopped (grew, then stopped) from this sample to the end; 0: a
	 * series that fires is never called stopped, from its first growing
	 * verdict to the end (one that keeps rising must not be) */
	long long stopped_by;
};

#define ANY (-2)

static uint64_t rng;

static uint64_t rng_next(void)
{
	/* xorshift64*: enough for noise, and the same on every machine */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545F4914F6CDD1DULL;
}

static double rng_unit(void)
{
	return (double)(rng_next() >> 11) / 9007199254740992.0;
}

static long long saw(const struct vec *v, uint64_t i)
{
	if (!v->period)
		return 0;
	return v->amp * (long long)((i + v->sphase) % v->period) / (long long)v->period;
}

static long long shape_at(const struct vec *v, uint64_t i)
{
	switch (v->gen) {
	case STAIR:
		return v->base + v->step * (long long)((i + v->phase) / v->epoch + v->rising0) +
		       saw(v, i);
	case DRIFT:
		return v->base + v->step * (long long)i + saw(v, i);
	case RANDOM:
		return v->base + (long long)(rng_unit() * (double)v->amp);
	case JITTER:
		return (long long)((double)v->base * (1 + v->frac * (2 * rng_unit() - 1)));
	case STEPS: {
		uint64_t k = i / v->epoch;

		return v->base + v->step * (long long)(k < v->rises ? k : v->rises);
	}
	case LATE:
		return v->base + (i < v->epoch ? 0 : v->step * (long long)(i - v->epoch + 1));
	case FREED:
		return i < v->epoch ? v->base : 0;
	case DOUBLE: {
		unsigned k = 0;

		while (k + 1 < v->rises && (2ull << k) - 1 <= i)
			k++;
		return v->base * (long long)((2ull << k) - 1);
	}
	case TWO_EPOCHS: {
		uint64_t pair = v->epoch + v->period, k = i / pair * 2 + (i % pair >= v->epoch);

		return v->base + v->step * (long long)k;
	}
	}
	return 0;
}

static long long sample(const struct vec *v, uint64_t i)
{
	long long x = shape_at(v, i);

	if (v->frac && v->gen != JITTER)
		x = (long long)((double)x * (1 + v->frac * (2 * rng_unit() - 1)));
	if (v->noise)
		x += (long long)(rng_unit() * (double)v->noise);
	return x;
}

/* First sample of the fifth rising epoch seen, last of the sixth rising
 * epoch, of a STAIR vector. */
#define FIFTH_SEEN(ep, ph)	    ((long long)(5 * (ep) - (ph)))
#define SIXTH_EPOCH_END(ep, ph, r0) ((long long)(((r0) ? 6 : 7) * (ep) - (ph)-1))

#define STAIRV(nm, ep, ph, st, bs, r0, sa, sp, ssp, shp)                                           \
	{                                                                                          \
		.name = nm, .gen = STAIR, .n = 10 * (ep) + 100, .base = bs, .step = st,            \
		.epoch = ep, .phase = ph, .amp = sa, .period = sp, .sphase = ssp, .rising0 = r0,   \
		.deadline = SIXTH_EPOCH_END(ep, ph, r0), .shape = shp                              \
	}

static const struct vec table[] = {
	/* must be flagged, by the end of the sixth rising epoch */
	STAIRV("per-sample leak", 1, 0, 8 * MiB, 0, true, 0, 0, 0, TREND_PER_SAMPLE),
	STAIRV("per-sample leak on a base", 1, 0, 8 * MiB, 100 * MiB, false, 0, 0, 0,
	       TREND_PER_SAMPLE),
	STAIRV("staircase, 10-sample epochs", 10, 0, 8 * MiB, 0, true, 0, 0, 0, TREND_STAIRCASE),
	STAIRV("staircase, 10-sample epochs, phase 7", 10, 7, 8 * MiB, 100 * MiB, false, 0, 0, 0,
	       TREND_STAIRCASE),
	STAIRV("staircase, 10, under a sawtooth", 10, 0, 16 * MiB, 256 * MiB, false, 32 * MiB, 5, 0,
	       TREND_NONE),
	STAIRV("staircase, 10, phase 3, under a sawtooth", 10, 3, 16 * MiB, 256 * MiB, true,
	       32 * MiB, 5, 2, TREND_NONE),
	STAIRV("staircase, 600-sample epochs", 600, 0, 8 * MiB, 0, true, 0, 0, 0, TREND_STAIRCASE),
	STAIRV("staircase, 600, phase 599", 600, 599, 8 * MiB, 64 * MiB, false, 0, 0, 0,
	       TREND_STAIRCASE),
	STAIRV("staircase, 600, under a sawtooth", 600, 0, 8 * MiB, 64 * MiB, false, 64 * MiB, 4, 0,
	       TREND_STAIRCASE),
	STAIRV("staircase, 600, phase 250, under a sawtooth", 600, 250, 8 * MiB, 64 * MiB, true,
	       64 * MiB, 4, 3, TREND_STAIRCASE),
	STAIRV("staircase, 2-sample epochs", 2, 1, 8 * MiB, 100 * MiB, false, 0, 0, 0,
	       TREND_STAIRCASE),
	{ .name = "per-sample leak under noise",
	  .gen = STAIR,
	  .n = 200,
	  .base = 256 * MiB,
	  .step = 16 * MiB,
	  .epoch = 1,
	  .noise = 8 * MiB,
	  .deadline = SIXTH_EPOCH_END(1, 0, 0) },
	{ .name = "staircase, 25-sample epochs, under noise",
	  .gen = STAIR,
	  .n = 1000,
	  .base = 256 * MiB,
	  .step = 16 * MiB,
	  .epoch = 25,
	  .phase = 12,
	  .noise = 8 * MiB,
	  .deadline = SIXTH_EPOCH_END(25, 12, 0) },
	{ .name = "staircase, 10-sample epochs, +-0.5% jitter",
	  .gen = STAIR,
	  .n = 200,
	  .base = 100 * MiB,
	  .step = 8 * MiB,
	  .epoch = 10,
	  .frac = 0.005,
	  .deadline = SIXTH_EPOCH_END(10, 0, 0),
	  .shape = TREND_STAIRCASE },
	{ .name = "drift under a sawtooth",
	  .gen = DRIFT,
	  .n = 20000,
	  .base = 256 * MiB,
	  .step = MiB / 8,
	  .amp = 32 * MiB,
	  .period = 8,
	  .deadline = 600,
	  .shape = TREND_DRIFT },
	{ .name = "slow drift under a sawtooth",
	  .gen = DRIFT,
	  .n = 20000,
	  .base = 256 * MiB,
	  .step = MiB / 64,
	  .amp = 32 * MiB,
	  .period = 8,
	  .deadline = 4000,
	  .shape = TREND_DRIFT },
	{ .name = "leak after 1000 flat samples",
	  .gen = LATE,
	  .n = 2000,
	  .base = 100 * MiB,
	  .step = 4 * MiB,
	  .epoch = 1000,
	  .deadline = 1005,
	  .shape = TREND_PER_SAMPLE },
	{ .name = "small leak after 1000 flat samples",
	  .gen = LATE,
	  .n = 3000,
	  .base = 1024 * MiB,
	  .step = MiB,
	  .epoch = 1000,
	  .deadline = 1400 },

	{ .name = "appears at sample 100, then grows",
	  .gen = LATE,
	  .n = 300,
	  .base = 0,
	  .step = 4 * MiB,
	  .epoch = 99,
	  .deadline = 104,
	  .shape = TREND_PER_SAMPLE },
	/* +1 MiB, -0.3 MiB, +1 MiB...: a leak with frees between, half the
	 * samples new highs (the first rule never flagged it) */
	{ .name = "leak with frees between",
	  .gen = STAIR,
	  .n = 300,
	  .base = 16 * MiB,
	  .step = MiB,
	  .epoch = 2,
	  .amp = -6 * MiB / 10,
	  .period = 2,
	  .deadline = 40 },

	/* epochs of unequal length, however long: never called stopped */
	{ .name = "staircase, epochs of 100 and 300 samples in turn",
	  .gen = TWO_EPOCHS,
	  .n = 4000,
	  .base = 64 * MiB,
	  .step = 8 * MiB,
	  .epoch = 100,
	  .period = 300,
	  .deadline = 1000,
	  .shape = TREND_STAIRCASE },
	/* JAX leaking 4 MiB a step for 60 steps, sampled every 4 steps: its
	 * own allocated counter climbs 16 MiB a sample (its pool's segments,
	 * below, do not tell) */
	{ .name = "framework counter, 8 MiB + 16 MiB a sample",
	  .gen = DRIFT,
	  .n = 15,
	  .base = 8 * MiB,
	  .step = 16 * MiB,
	  .deadline = 5,
	  .shape = TREND_PER_SAMPLE },

	/* grew, then stopped: flagged while they rise (which cannot be told
	 * from a leak), called stopped once flat, to the end */
	{ .name = "warm-up, 8 x 512 KiB, then flat for 90 samples",
	  .gen = STEPS,
	  .n = 98,
	  .base = 512 * 1024,
	  .step = 512 * 1024,
	  .epoch = 1,
	  .rises = 7,
	  .deadline = ANY,
	  .stopped_by = 16 },
	{ .name = "cache filling over 16 samples, then flat for 9",
	  .gen = STEPS,
	  .n = 25,
	  .base = 32 * MiB,
	  .step = 32 * MiB,
	  .epoch = 1,
	  .rises = 15,
	  .deadline = ANY,
	  .stopped_by = 24 },
	{ .name = "cache filling over 16 samples, then flat for 5000",
	  .gen = STEPS,
	  .n = 5016,
	  .base = 32 * MiB,
	  .step = 32 * MiB,
	  .epoch = 1,
	  .rises = 15,
	  .deadline = ANY,
	  .stopped_by = 24 },
	{ .name = "cache filling in 8 steps of 10 samples, then flat",
	  .gen = STEPS,
	  .n = 500,
	  .base = 64 * MiB,
	  .step = 64 * MiB,
	  .epoch = 10,
	  .rises = 7,
	  .deadline = ANY,
	  .stopped_by = 120 },
	{ .name = "pool doubling 8 times, then flat",
	  .gen = DOUBLE,
	  .n = 700,
	  .base = 16 * MiB,
	  .rises = 8,
	  .deadline = ANY,
	  .stopped_by = 127 + 4 * 64 },
	{ .name = "warm-up, 8 x 512 KiB, under a random cycle, then flat",
	  .gen = STEPS,
	  .n = 400,
	  .base = 4 * MiB,
	  .step = 4 * MiB,
	  .epoch = 1,
	  .rises = 7,
	  .noise = MiB,
	  .deadline = ANY,
	  .stopped_by = 40 },

	/* must never be flagged */
	{ .name = "pool doubling its segments, 16 to 240 MiB (JAX, 60 steps)",
	  .gen = DOUBLE,
	  .n = 15,
	  .base = 16 * MiB,
	  .rises = 4,
	  .deadline = -1 },
	{ .name = "never allocates",
	  .gen = STEPS,
	  .n = 5000,
	  .base = 0,
	  .epoch = 1,
	  .deadline = -1 },
	{ .name = "flat", .gen = STEPS, .n = 86400, .base = 100 * MiB, .epoch = 1, .deadline = -1 },
	{ .name = "sawtooth",
	  .gen = DRIFT,
	  .n = 86400,
	  .base = 0,
	  .amp = 512 * MiB,
	  .period = 5,
	  .deadline = -1 },
	{ .name = "sawtooth on a base",
	  .gen = DRIFT,
	  .n = 86400,
	  .base = 256 * MiB,
	  .amp = 256 * MiB,
	  .period = 4,
	  .deadline = -1 },
	{ .name = "cycle sampled at random phase",
	  .gen = RANDOM,
	  .n = 86400,
	  .base = 0,
	  .amp = 512 * MiB,
	  .deadline = -1 },
	{ .name = "cycle at random phase on a base",
	  .gen = RANDOM,
	  .n = 86400,
	  .base = 512 * MiB,
	  .amp = 512 * MiB,
	  .deadline = -1 },
	{ .name = "warm-up, 1 rise",
	  .gen = STEPS,
	  .n = 5010,
	  .base = 0,
	  .step = 256 * MiB,
	  .epoch = 10,
	  .rises = 1,
	  .deadline = -1 },
	{ .name = "warm-up, 2 rises",
	  .gen = STEPS,
	  .n = 5020,
	  .base = 0,
	  .step = 256 * MiB,
	  .epoch = 10,
	  .rises = 2,
	  .deadline = -1 },
	{ .name = "warm-up, 3 rises",
	  .gen = STEPS,
	  .n = 5030,
	  .base = 64 * MiB,
	  .step = 256 * MiB,
	  .epoch = 10,
	  .rises = 3,
	  .deadline = -1 },
	{ .name = "warm-up, 3 rises, +-1% jitter",
	  .gen = STEPS,
	  .n = 5030,
	  .base = 256 * MiB,
	  .step = 256 * MiB,
	  .epoch = 10,
	  .rises = 3,
	  .frac = 0.01,
	  .deadline = -1 },
	{ .name = "warm-up, 3 rises, under a random cycle",
	  .gen = STEPS,
	  .n = 5300,
	  .base = 256 * MiB,
	  .step = 256 * MiB,
	  .epoch = 100,
	  .rises = 3,
	  .noise = 256 * MiB,
	  .deadline = -1 },
	{ .name = "warm-up, 3 one-sample rises",
	  .gen = STEPS,
	  .n = 5003,
	  .base = 64 * MiB,
	  .step = 64 * MiB,
	  .epoch = 1,
	  .rises = 3,
	  .deadline = -1 },
	{ .name = "bounded cache, 3 steps",
	  .gen = STEPS,
	  .n = 86400,
	  .base = 8 * MiB,
	  .step = 128 * MiB,
	  .epoch = 600,
	  .rises = 3,
	  .deadline = -1 },
	{ .name = "one big allocation",
	  .gen = STEPS,
	  .n = 86400,
	  .base = 16 * MiB,
	  .step = 40960 * MiB,
	  .epoch = 100,
	  .rises = 1,
	  .deadline = -1 },
	{ .name = "jitter +-5%",
	  .gen = JITTER,
	  .n = 86400,
	  .base = 1024 * MiB,
	  .frac = 0.05,
	  .deadline = -1 },
	{ .name = "jitter +-5%, small",
	  .gen = JITTER,
	  .n = 86400,
	  .base = 4 * MiB,
	  .frac = 0.05,
	  .deadline = -1 },
	{ .name = "jitter +-0.5%, large",
	  .gen = JITTER,
	  .n = 86400,
	  .base = 65536 * MiB,
	  .frac = 0.005,
	  .deadline = -1 },
	{ .name = "freed",
	  .gen = FREED,
	  .n = 5000,
	  .base = 512 * MiB,
	  .epoch = 100,
	  .deadline = -1 },

	/*
	 * A ramp that rises at six samples in a row cannot be told from a
	 * leak while it lasts: the first ramp of a slow cycle is flagged, then
	 * the verdict falls back when it frees, and the next ramps, below the
	 * first one's high, are not.
	 */
	{ .name = "slow sawtooth, 50-sample ramps",
	  .gen = DRIFT,
	  .n = 86400,
	  .base = 64 * MiB,
	  .amp = 1024 * MiB,
	  .period = 50,
	  .deadline = 49,
	  .quiet = 50,
	  .stopped_by = 100 },
};

/* Index of the first sample found growing, or -1; the shape then; the
 * latest sample found growing; the first sample from which it is stopped
 * to the end (-1: not stopped at the end), and whether it was ever called
 * stopped after the first growing verdict. */
static long long run(const struct vec *v, double interval, struct gs_trend *t, int *shape,
		     long long *latest, long long *stopped_from, bool *ever_stopped)
{
	long long fired = -1, last = -1, from = -1;
	bool stopped = false;

	trend_init(t);
	for (uint64_t i = 0; i < v->n; i++) {
		int state;

		trend_push(t, (double)i * interval, sample(v, i));
		state = trend_state(t, NULL);
		if (state == TREND_STOPPED) {
			stopped = true;
			if (from < 0)
				from = (long long)i;
		} else {
			from = -1;
		}
		if (!trend_growing(t))
			continue;
		last = (long long)i;
		if (fired < 0) {
			fired = (long long)i;
			if (shape)
				trend_query(t, NULL, NULL, shape);
		}
	}
	if (latest)
		*latest = last;
	if (stopped_from)
		*stopped_from = from;
	if (ever_stopped)
		*ever_stopped = stopped;
	return fired;
}

static void test_table(void **state)
{
	static const double intervals[] = { 1.0, 0.05 };
	unsigned bad = 0;

	for (size_t k = 0; k < sizeof(table) / sizeof(table[0]); k++) {
		const struct vec *v = &table[k];

		for (size_t m = 0; m < sizeof(intervals) / sizeof(intervals[0]); m++) {
			struct gs_trend t;
			long long fired, latest, from;
			int shape = TREND_NONE, end;
			bool ok, stopped;

			rng = 0x9E3779B97F4A7C15ULL + k;
			fired = run(v, intervals[m], &t, &shape, &latest, &from, &stopped);
			end = trend_state(&t, NULL);
			if (v->deadline == ANY)
				ok = true;
			else
				ok = v->deadline < 0 ? fired < 0 :
						       fired >= 0 && fired <= v->deadline;
			if (v->shape != TREND_NONE && shape != (int)v->shape)
				ok = false;
			if (fired >= 0 && fired < v->earliest)
				ok = false;
			if (v->quiet && latest >= (long long)v->quiet)
				ok = false;
			/* never growing: never stopped either */
			if (fired < 0 && end != TREND_NEVER)
				ok = false;
			if (v->stopped_by) {
				if (fired >= 0 && (from < 0 || from > v->stopped_by))
					ok = false;
			} else if (stopped || (fired >= 0 && end != TREND_GROWING)) {
				ok = false;
			}
			print_message("%-4s %-58s %5.2fs  fired at %5lld (by %5lld)  %-10s  "
				      "end %s, stopped from %lld\n",
				      ok ? "ok" : "FAIL", v->name, intervals[m], fired, v->deadline,
				      trend_shape_name(shape),
				      end == TREND_STOPPED ? "stopped" :
				      end == TREND_GROWING ? "growing" :
							     "never",
				      from);
			bad += !ok;
		}
	}
	assert_int_equal(bad, 0);
}

/* 8 MiB per 10-sample epoch at 1 s: 0.8 MiB/s, since the first rising epoch. */
static void test_rate_since(void **state)
{
	const struct vec v = STAIRV("", 10, 0, 8 * MiB, 100 * MiB, false, 0, 0, 0, TREND_NONE);
	struct gs_trend t;
	double since, rate;
	int shape;

	run(&v, 1.0, &t, NULL, NULL, NULL, NULL);
	assert_true(trend_query(&t, &since, &rate, &shape));
	assert_true(fabs(since - 10.0) < 1e-9);
	assert_true(fabs(rate - 0.8 * MiB) < 1e-3 * MiB);
	assert_int_equal(shape, TREND_STAIRCASE);
	assert_string_equal(trend_shape_name(shape), "staircase");
}

/* A leak flagged, then freed by the program's teardown: the verdict falls
 * back, what it said is kept. */
static void test_teardown(void **state)
{
	struct gs_trend t;
	double since, rate;

	trend_init(&t);
	assert_false(trend_ever(&t));
	assert_int_equal(trend_query(&t, &since, &rate, NULL), 0);
	assert_true(since == 0 && rate == 0);
	for (int i = 0; i < 20; i++)
		trend_push(&t, i, (i + 1) * 4 * MiB);
	assert_true(trend_growing(&t));
	trend_push(&t, 20, 0);
	assert_false(trend_growing(&t));
	assert_true(trend_ever(&t));
	trend_query(&t, &since, &rate, NULL);
	assert_true(since > 0 && fabs(rate - 4.0 * MiB) < 1e-3 * MiB);
	/* a fall is not a stop: it was still growing when it was freed */
	assert_int_equal(trend_state(&t, NULL), TREND_GROWING);
}

/*
 * A per-epoch leak, epochs of E samples (however long): never called
 * stopped while it steps, however many epochs; stopped once it has stayed
 * flat for TREND_STOP_HOLDS epochs (and TREND_STOP_MIN samples), with the
 * time of its last rise; growing again at its next rise, in the shape it
 * was first named with.
 */
static void test_stop(void **state)
{
	static const uint64_t epochs[] = { 1, 2, 3, 10, 50, 600, 3000 };

	(void)state;
	for (size_t k = 0; k < sizeof(epochs) / sizeof(epochs[0]); k++) {
		uint64_t e = epochs[k], i = 0, flat = e * TREND_STOP_HOLDS, stopped_at = 0;
		struct gs_trend t;
		int shape0 = TREND_NONE, shape;
		double until;

		if (flat < TREND_STOP_MIN)
			flat = TREND_STOP_MIN;
		trend_init(&t);
		/* 12 rising epochs */
		for (; i < 12 * e; i++) {
			trend_push(&t, (double)i, 64 * MiB + 8 * MiB * (long long)(i / e));
			assert_int_not_equal(trend_state(&t, NULL), TREND_STOPPED);
			if (shape0 == TREND_NONE && trend_ever(&t))
				trend_query(&t, NULL, NULL, &shape0);
		}
		assert_int_equal(trend_state(&t, NULL), TREND_GROWING);
		assert_true(trend_growing(&t));
		/* then flat at the last level, the 12th epoch's */
		for (; i < 11 * e + flat + 2 * e + 100; i++) {
			trend_push(&t, (double)i, 64 * MiB + 8 * MiB * 11);
			if (!stopped_at && trend_state(&t, NULL) == TREND_STOPPED)
				stopped_at = i;
		}
		print_message("epochs of %llu: stopped at %llu, %llu samples into the level\n",
			      (unsigned long long)e, (unsigned long long)stopped_at,
			      (unsigned long long)(stopped_at - 11 * e + 1));
		assert_int_equal(trend_state(&t, &until), TREND_STOPPED);
		assert_false(trend_growing(&t));
		assert_true(until == (double)(11 * e));
		/* the level of the last rise lasted E TREND_STOP_HOLDS times */
		assert_int_equal(stopped_at - 11 * e + 1, flat);
		/* one more step: growing again */
		trend_push(&t, (double)i, 64 * MiB + 8 * MiB * 12);
		assert_int_equal(trend_state(&t, &until), TREND_GROWING);
		assert_true(until == (double)i);
		trend_query(&t, NULL, NULL, &shape);
		assert_int_equal(shape, shape0);
	}
}

/*
 * Marks: a training loop whose live bytes cycle at random phase every
 * sample keeps 16 MiB per epoch of 600 samples; the program marks each
 * epoch.  The marks' own state sees a staircase with one-sample epochs
 * under noise, and is flagged by the sixth mark; without the leak, never.
 */
static void test_marks(void **state)
{
	for (int leak = 0; leak <= 1; leak++) {
		struct gs_trend per_sample, marks;
		long long fired = -1;

		rng = 42;
		trend_init(&per_sample);
		trend_init(&marks);
		for (uint64_t i = 0; i < 600 * 100; i++) {
			long long live = 256 * MiB + (long long)(rng_unit() * 4 * MiB) +
					 leak * 16 * MiB * (long long)(i / 600);

			trend_push(&per_sample, (double)i, live);
			if (i % 600 == 599) {
				trend_push(&marks, (double)i, live);
				if (fired < 0 && trend_growing(&marks))
					fired = (long long)(i / 600);
			}
		}
		if (leak)
			assert_in_range(fired, 0, 5);
		else
			assert_int_equal(fired, -1);
	}
}

/* A million samples: the state does not grow, and still tells. */
static void test_cap(void **state)
{
	struct gs_trend t;
	double since;

	assert_int_equal(trend_state_size(), sizeof(struct gs_trend));
	assert_true(trend_state_size() <= TREND_STATE_MAX);

	trend_init(&t);
	for (uint64_t i = 0; i < 1000000; i++) {
		trend_push(&t, (double)i, 100 * MiB + (long long)i * 4 * MiB);
		assert_true(t.nb <= TREND_BANDS);
	}
	assert_true(trend_growing(&t));
	assert_int_equal(trend_query(&t, &since, NULL, NULL), 1);
	assert_true(since == 1.0);

	rng = 7;
	trend_init(&t);
	for (uint64_t i = 0; i < 1000000; i++) {
		trend_push(&t, (double)i, (long long)(rng_unit() * 1024 * MiB));
		assert_true(t.nb <= TREND_BANDS);
		assert_false(trend_growing(&t));
	}
}

/*
 * The snapshot thread keeps a site whose samples are all equal as that
 * value, its count and its first and latest times, and pushes them when
 * the value first changes: the first at its time, the others at the first
 * time, the latest at its own (writer.c).  The rule must then judge
 * everything after exactly as if it had had every sample at its time.
 */
static void test_flat_replay(void **state)
{
	static const unsigned long long counts[] = { 1, 2, 3, 17, 300, 5000 };
	static const long long values[] = { 1, 4096, 3 * MiB };

	(void)state;
	for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
		for (size_t v = 0; v < sizeof(values) / sizeof(values[0]); v++) {
			unsigned long long k = counts[c];
			double t0 = 10.0, dt = 0.5, ta, ra, tb, rb;
			struct gs_trend a, b;
			int sa, sb;

			trend_init(&a);
			trend_init(&b);
			for (unsigned long long i = 0; i < k; i++) {
				trend_push(&a, t0 + (double)i * dt, values[v]);
				trend_push(&b, i + 1 < k ? t0 : t0 + (double)(k - 1) * dt,
					   values[v]);
			}
			assert_false(trend_ever(&a));
			/* then a leak at every sample, and a cycle after it */
			for (unsigned long long i = 1; i <= 600; i++) {
				double t = t0 + (double)(k - 1 + i) * dt;
				long long x = values[v] + (long long)(i < 300 ? i : 300) * MiB +
					      (i % 7) * 1000;

				trend_push(&a, t, x);
				trend_push(&b, t, x);
				assert_int_equal(trend_growing(&a), trend_growing(&b));
				assert_int_equal(trend_ever(&a), trend_ever(&b));
			}
			assert_true(trend_ever(&a));
			trend_query(&a, &ta, &ra, &sa);
			trend_query(&b, &tb, &rb, &sb);
			assert_true(ta == tb && ra == rb);
			assert_int_equal(sa, sb);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),	    cmocka_unit_test(test_rate_since),
		cmocka_unit_test(test_teardown),    cmocka_unit_test(test_stop),
		cmocka_unit_test(test_marks),	    cmocka_unit_test(test_cap),
		cmocka_unit_test(test_flat_replay),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
