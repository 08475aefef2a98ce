/* SPDX-License-Identifier: MIT */
/*
 * The growth rule: the floor of a series, and how often it rose.
 *
 * The floor at sample i is the lowest sample from i to now (the suffix
 * minimum).  It never falls as i moves right, and it is kept as a stack of
 * bands: a new sample pops every band above it, then joins the band it
 * lands in, or is pushed as a new one.  A band is [lo, lo + rise(lo)): two
 * levels closer than a significant rise are one, so each step between
 * bands is significant, and rises too small to count accumulate until they
 * make one.
 *
 * Counting every step would flag noise: the suffix minima of random
 * samples are their records read from the right, about ln(n) of them.  A
 * step counts only when the floor has shown it holds there: the series
 * came back down to it from above (a staircase under an allocate/free
 * cycle), or fell or stayed onto it within half a rise of its lowest (a
 * level, not a ramp passing through), or it was a new high, above every
 * sample before it, when pushed.  A new high that the series passed
 * through in a sample or two counts only in a run of TREND_RISES of them,
 * one after the other (a leak at every sample): alone, it is the record
 * of a jittering level.  Five held rises are out of reach of any jitter
 * narrower than five rises: the ratio between the lowest band and the
 * fifth above it is at least (33/32)^5 = 1.166.
 *
 * An allocate/free cycle whose ramp holds or dips makes bands that are
 * held and then left when it frees: the highest of them is the roof, and
 * only new highs count below it, so the next cycles count nothing.  The
 * roof goes when the series falls to a new low, more than a rise below
 * every band.
 *
 * Beside the floor, the steady climb of the first rule (a new high in 3/4
 * of the last W samples) still fires, for growth in rises too small to
 * count one by one.
 *
 * Grew, then stopped: the sample index at which the floor first stood at
 * the highest band that counts (held, or a new high, alone or in a run)
 * is the latest rise; the gap between two such
 * rises, one after the other as they come, is a level held during the
 * growth.  A per-epoch leak holds each level one epoch, however long, so
 * a level that has lasted several times the longest one before it (and a
 * few samples at least) is not one more epoch: the growth stopped.  The
 * rises are noted as they come, not read off the bands, whose merging
 * would join levels into longer ones.
 */
#include <stdio.h>
#include <string.h>

#include "schema.h"
#include "trend.h"

_Static_assert(sizeof(struct gs_trend) <= TREND_STATE_MAX, "TREND_STATE_MAX is a promise");

#define BAND_NEWHIGH 1u /* above every sample before it, when pushed */
#define BAND_FLOOR   2u /* some sample landed in it falling or flat */

#define WINDOW_MIN 16
#define SINGLE_RUN TREND_RISES /* one-sample levels in a row that count */

static long long rise_min(long long lo)
{
	long long r = lo > 0 ? lo >> TREND_FRAC_LOG2 : 0;

	return r > TREND_MIN_RISE ? r : TREND_MIN_RISE;
}

/* The series stood at this level: it fell or stayed onto it, always
 * within half a counted rise of its lowest - a ramp only passes through. */
static bool band_flat(const struct trend_band *b)
{
	return (b->flags & BAND_FLOOR) && (b->fhi - b->lo) * 2 < rise_min(b->lo);
}

static bool band_held(const struct trend_band *b)
{
	return b->back > 0 || band_flat(b);
}

static bool band_counted(const struct gs_trend *t, const struct trend_band *b)
{
	return (b->flags & BAND_NEWHIGH) || (band_held(b) && b->lo > t->roof);
}

/* A band popped: a level held and then left raises the roof. */
static void band_left(struct gs_trend *t, const struct trend_band *b)
{
	if (band_held(b) && b->lo > t->roof)
		t->roof = b->lo;
}

/* x, the latest sample, landed in b. */
static void band_hit(struct gs_trend *t, struct trend_band *b, long long x, bool returned)
{
	if (b->hits < UINT32_MAX)
		b->hits++;
	if (returned && b->back < UINT8_MAX)
		b->back++;
	if (x <= t->last) {
		b->flags |= BAND_FLOOR;
		if (x > b->fhi)
			b->fhi = x;
	}
}

static uint32_t add32(uint32_t a, uint32_t b)
{
	return a > UINT32_MAX - b ? UINT32_MAX : a + b;
}

/*
 * The stack is full: merge the two neighbours with the smallest rise
 * between them, relative to the rise that counts there.  Among equals the
 * highest pair goes.  The lowest band is never merged, so that the first
 * counted rise (since) is kept; a merged band counts the rises it took in.
 */
static void bands_merge_closest(struct gs_trend *t)
{
	unsigned best = 1;
	double best_r = 0;

	for (unsigned j = 1; j + 1 < t->nb; j++) {
		double r = (double)(t->band[j + 1].lo - t->band[j].lo) /
			   (double)rise_min(t->band[j].lo);

		if (j == 1 || r <= best_r) {
			best = j;
			best_r = r;
		}
	}

	struct trend_band *a = &t->band[best], *b = &t->band[best + 1];
	bool flat = band_flat(a) && band_flat(b);

	/* two held levels stay one held level; anything else spans its range */
	if (!flat && b->fhi > a->fhi)
		a->fhi = b->fhi > b->lo ? b->fhi : b->lo;
	a->hits = add32(a->hits, b->hits);
	a->rises = a->rises > UINT16_MAX - b->rises ? UINT16_MAX : (uint16_t)(a->rises + b->rises);
	a->back = a->back > UINT8_MAX - b->back ? UINT8_MAX : (uint8_t)(a->back + b->back);
	a->flags |= b->flags;
	memmove(b, b + 1, (t->nb - best - 2) * sizeof(*b));
	t->nb--;
}

static void floor_push(struct gs_trend *t, double time_s, long long x)
{
	struct trend_band p, *top;
	unsigned pops = 0;

	while (t->nb && t->band[t->nb - 1].lo > x) {
		if (pops)
			band_left(t, &p);
		p = t->band[--t->nb];
		pops++;
	}
	top = t->nb ? &t->band[t->nb - 1] : NULL;
	if (top && x - top->lo < rise_min(top->lo)) {
		/* in the band below: a return to it when bands were popped */
		band_hit(t, top, x, pops > 0);
		if (pops)
			band_left(t, &p);
		return;
	}
	if (pops && p.lo - x < rise_min(x)) {
		/* the level p, a little lower: a return if p was left upward */
		p.lo = x;
		band_hit(t, &p, x, pops > 1);
		t->band[t->nb++] = p;
		return;
	}
	if (pops)
		band_left(t, &p);
	if (!t->nb && t->n) {
		/* a new low: what the series held before no longer bounds it */
		t->roof = -1;
	}
	if (t->nb == TREND_BANDS)
		bands_merge_closest(t);
	t->band[t->nb++] = (struct trend_band){
		.lo = x,
		.fhi = x,
		.first = pops ? p.first : t->n,
		.t = pops ? p.t : time_s,
		.hits = 1,
		.rises = 1,
		.flags = t->n && x > t->max ? BAND_NEWHIGH : 0,
	};
}

/* Index in band[] of the floor at sample i. */
static unsigned floor_band_at(const struct gs_trend *t, uint64_t i)
{
	unsigned j = 0;

	while (j + 1 < t->nb && t->band[j + 1].first <= i)
		j++;
	return j;
}

static unsigned highs_in_last(const struct gs_trend *t, unsigned w)
{
	unsigned c = 0;

	for (unsigned k = 0; k < w; k++) {
		uint64_t i = (t->n - 1 - k) % TREND_WINDOW;

		c += (unsigned)(t->highs[i / 64] >> (i % 64)) & 1;
	}
	return c;
}

/* A growing verdict: since when, how fast, in what shape. */
struct verdict {
	double since, rate;
	int shape;
};

/*
 * The first rule: a new high in 3/4 of the last W samples (W half the
 * samples, within 16..256), the latest sample within a counted rise of the
 * high and a counted rise above the window's floor (the first rule asked
 * for more at the end than at the start; this needs no stored samples).
 */
static bool climb_judge(const struct gs_trend *t, struct verdict *v)
{
	uint64_t w = t->n / 2;
	unsigned j;
	double dt;

	if (w < WINDOW_MIN)
		w = WINDOW_MIN;
	if (w > TREND_WINDOW)
		w = TREND_WINDOW;
	if (t->n < w || (uint64_t)highs_in_last(t, (unsigned)w) * 4 < w * 3)
		return false;
	/* still near its high, and a counted rise above the window's floor */
	if (t->max - t->last >= rise_min(t->max))
		return false;
	j = floor_band_at(t, t->n - w);
	if (j + 1 >= t->nb)
		return false;
	dt = t->n > 1 ? (t->t_last - t->t0) / (double)(t->n - 1) * (double)(w - 1) : 0;
	v->since = t->t_last - dt;
	v->rate = dt > 0 ? (double)(t->band[t->nb - 1].lo - t->band[j].lo) / dt : 0;
	v->shape = TREND_PER_SAMPLE;
	return true;
}

/* A new high that the series passed through in a sample or two. */
static bool band_single(const struct gs_trend *t, unsigned j)
{
	const struct trend_band *b = &t->band[j];

	return (b->flags & BAND_NEWHIGH) && !band_held(b) && b->hits <= 2;
}

/* band[j] begins the sample after band[j - 1]'s last, both passed through. */
static bool singles_adjacent(const struct gs_trend *t, unsigned j)
{
	return j > 1 && band_single(t, j - 1) && band_single(t, j) &&
	       t->band[j].first == t->band[j - 1].first + t->band[j - 1].hits;
}

/* The floor stood at B first at its sample: a rise, if later than the
 * latest one noted; the level before it lasted from that one to this. */
static void rise_note(struct gs_trend *t, const struct trend_band *b)
{
	if (!t->risen) {
		t->risen = 1;
		t->rise_at = b->first;
		t->rise_t = b->t;
		return;
	}
	if (b->first <= t->rise_at)
		return; /* the same rise, or an older one a merge moved down */
	if (b->first - t->rise_at > t->hold)
		t->hold = b->first - t->rise_at;
	t->rise_at = b->first;
	t->rise_t = b->t;
}

static bool floor_judge(struct gs_trend *t, struct verdict *v)
{
	unsigned count = 0, flat = 0, bands = 0, first = 0, last = 0, top = 0;
	uint8_t run[TREND_BANDS] = { 0 };
	uint64_t hits = 0;
	const struct trend_band *a, *b;
	double dt;

	/* run[j]: how many passed-through new highs, one after the other,
	 * band[j] is one of (0: it is not one) */
	for (unsigned j = 1; j < t->nb; j++)
		run[j] = band_single(t, j) ? (singles_adjacent(t, j) ? run[j - 1] + 1 : 1) : 0;
	for (unsigned j = t->nb - 1; j > 1; j--)
		if (run[j] && singles_adjacent(t, j))
			run[j - 1] = run[j];

	for (unsigned j = 1; j < t->nb; j++) {
		b = &t->band[j];
		if (!band_counted(t, b))
			continue;
		/* still rising: a new high by a rise, in a run or not (a run
		 * that a merge cut short is still the same climb) */
		top = j;
		if (run[j] && run[j] < SINGLE_RUN)
			continue;
		if (!bands)
			first = j;
		last = j;
		bands++;
		count += b->rises;
		hits += b->hits;
		flat += band_flat(b);
	}
	if (top)
		rise_note(t, &t->band[top]);
	if (count < TREND_RISES)
		return false;
	a = &t->band[first];
	b = &t->band[last];
	dt = b->t - a->t;
	v->since = a->t;
	v->rate = dt > 0 ? (double)(b->lo - a->lo) / dt : 0;
	if (hits == count)
		v->shape = TREND_PER_SAMPLE; /* one sample at each level */
	else if (flat * 2 >= bands)
		v->shape = TREND_STAIRCASE;
	else
		v->shape = TREND_DRIFT;
	return true;
}

/* Grew, then stopped: the level of the latest rise has lasted, to this
 * sample, STOP_HOLDS times the longest level before it, and STOP_MIN
 * samples. */
static bool stop_judge(const struct gs_trend *t)
{
	uint64_t level, need;

	if (!t->ever || !t->risen)
		return false;
	level = t->n - t->rise_at;
	need = t->hold * TREND_STOP_HOLDS;
	return level >= need && level >= TREND_STOP_MIN;
}

size_t trend_state_size(void)
{
	return sizeof(struct gs_trend);
}

void trend_init(struct gs_trend *t)
{
	memset(t, 0, sizeof(*t));
	t->roof = -1;
}

void trend_push(struct gs_trend *t, double time_s, long long live)
{
	long long x = live > 0 ? live : 0;
	uint64_t bit = t->n % TREND_WINDOW;
	bool high = t->n && x > t->max;
	struct verdict v = { 0 };
	bool fired;

	if (!t->n)
		t->t0 = time_s;
	t->t_last = time_s;
	floor_push(t, time_s, x);
	t->last = x;
	if (!t->n || x > t->max)
		t->max = x;
	if (high)
		t->highs[bit / 64] |= 1ull << (bit % 64);
	else
		t->highs[bit / 64] &= ~(1ull << (bit % 64));
	t->n++;

	fired = floor_judge(t, &v) || climb_judge(t, &v);
	if (fired) {
		t->since = v.since;
		t->rate = v.rate;
		if (!t->ever) {
			t->ever = 1;
			t->fired = time_s;
			t->shape = (uint8_t)v.shape;
		}
	}
	t->stopped = stop_judge(t);
	t->growing = fired && !t->stopped;
}

bool trend_growing(const struct gs_trend *t)
{
	return t->growing;
}

bool trend_ever(const struct gs_trend *t)
{
	return t->ever;
}

int trend_state(const struct gs_trend *t, double *until_s)
{
	if (until_s)
		*until_s = t->ever ? t->rise_t : 0;
	if (!t->ever)
		return TREND_NEVER;
	return t->stopped ? TREND_STOPPED : TREND_GROWING;
}

int trend_query(const struct gs_trend *t, double *since_s, double *rate_bps, int *shape)
{
	if (since_s)
		*since_s = t->ever ? t->since : 0;
	if (rate_bps)
		*rate_bps = t->ever ? t->rate : 0;
	if (shape)
		*shape = t->ever ? t->shape : TREND_NONE;
	return t->growing;
}

const char *trend_shape_name(int shape)
{
	switch (shape) {
	case TREND_PER_SAMPLE:
		return "per-sample";
	case TREND_STAIRCASE:
		return "staircase";
	case TREND_DRIFT:
		return "drift";
	default:
		return "none";
	}
}

int trend_shape_parse(const char *name)
{
	for (int k = TREND_NONE; k <= TREND_DRIFT; k++)
		if (strcmp(name, trend_shape_name(k)) == 0)
			return k;
	return -1;
}

void trend_verdict(const struct gs_trend *t, struct trend_verdict *v)
{
	v->state = trend_state(t, &v->until);
	trend_query(t, &v->since, &v->rate, &v->shape);
}

int trend_verdict_json(char *buf, size_t size, const struct trend_verdict *v)
{
	const char *const *k = schema_growth_key;

	return snprintf(buf, size,
			"\"%s\": \"%s\", \"%s\": %.3f, \"%s\": %.1f, \"%s\": %s, \"%s\": %.3f",
			k[SG_SHAPE], trend_shape_name(v->shape), k[SG_SINCE_S], v->since,
			k[SG_RATE_BYTES_PER_S], v->rate, k[SG_STOPPED],
			v->state == TREND_STOPPED ? "true" : "false", k[SG_UNTIL_S], v->until);
}

const char *trend_state_words(int state)
{
	switch (state) {
	case TREND_GROWING:
		return "growing";
	case TREND_STOPPED:
		return "grew, then stopped";
	default:
		return "";
	}
}
